"""YAML to copy from a workload's page, as Goldilocks offers: per container the `resources:`
block with its recommended requests (exact Kubernetes quantities, for a pod template), and one
policy for the workload, with all its containers, that makes rightsizer apply them
(docs/policies.md), quoted where YAML would misread it."""

from __future__ import annotations

import json
from collections.abc import Sequence

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
    containers: Sequence[tuple[str, tuple[str, ...]]],
    mode: str,
) -> str:
    """One policy for this workload in `mode` (quoted: an unquoted Off is a YAML boolean), with
    an entry for each of its `containers`: (name, the resources it controls), not one a
    HorizontalPodAutoscaler scales on; a container with none is left alone (`mode: "Off"`). One
    document for the workload, since two policies of one name replace each other.
    `rightsizer policy apply -f FILE` takes it."""
    lines = [
        f"name: {scalar(name)}",
        f"namespace: {scalar(namespace)}",
        f"target: {{kind: {kind}, name: {scalar(name)}}}",
        f"updateMode: {json.dumps(mode)}",
        "containerPolicies:",
    ]
    for container, controlled in containers:
        lines.append(f"  - containerName: {scalar(container)}")
        if not controlled:
            lines.append('    mode: "Off"')
            continue
        lines.append(f"    controlledResources: [{', '.join(controlled)}]")
        lines.append("    controlledValues: RequestsAndLimits")
    return "\n".join(lines) + "\n"
