"""YAML to copy from a workload's page, as Goldilocks offers: per container the `resources:`
block with its recommended requests (exact Kubernetes quantities, for a pod template), and a
policy that makes rightsizer apply them (docs/policies.md), quoted where YAML would misread it."""

from __future__ import annotations

import json

import yaml

from app.core.quantity import format_quantity


def scalar(text: str) -> str:
    """`text` as a YAML scalar that reads back as this string: plain when YAML would read it so
    (web, shop), double-quoted otherwise (a workload named "on", "null" or "123")."""
    try:
        plain = yaml.safe_load(text) == text and "#" not in text and ": " not in text
    except yaml.YAMLError:
        plain = False
    return text if plain else json.dumps(text)


def resources_block(target: tuple[int, int]) -> str:
    """The container's `resources:` with the recommended requests."""
    return (
        "resources:\n"
        "  requests:\n"
        f"    cpu: {format_quantity('cpu', target[0])}\n"
        f"    memory: {format_quantity('memory', target[1])}\n"
    )


def policy_document(
    namespace: str,
    kind: str,
    name: str,
    container: str,
    mode: str,
    controlled: tuple[str, ...] = ("cpu", "memory"),
) -> str:
    """A policy for this workload that sizes `container` in `mode` (quoted: an unquoted Off is a
    YAML boolean), only its `controlled` resources (not one a HorizontalPodAutoscaler scales
    on); without any, the container is left alone. `rightsizer policy apply -f FILE` takes it."""
    head = (
        f"name: {scalar(name)}\n"
        f"namespace: {scalar(namespace)}\n"
        f"target: {{kind: {kind}, name: {scalar(name)}}}\n"
        f"updateMode: {json.dumps(mode)}\n"
        "containerPolicies:\n"
        f"  - containerName: {scalar(container)}\n"
    )
    if not controlled:
        return head + '    mode: "Off"\n'
    return (
        head
        + f"    controlledResources: [{', '.join(controlled)}]\n"
        + "    controlledValues: RequestsAndLimits\n"
    )
