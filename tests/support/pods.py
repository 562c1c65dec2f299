"""Pods for webhook tests, and the checks every patched pod must pass.

`apply_strictly` applies a patch with the `jsonpatch` library after checking each operation is
well-formed RFC 6902 (no unknown members, a value where one is needed); `assert_valid_pod`
validates against the Kubernetes Pod schema (kubernetes-validate, strict: unknown fields fail),
then checks what the schema does not: every cpu/memory quantity parses, and no request exceeds
its limit.
"""

from __future__ import annotations

import copy
from typing import Any

import jsonpatch
import kubernetes_validate

from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.limitrange import RESOURCES
from app.core.update_mode import UpdateMode

K8S_VERSION = "1.37.0"
OPS = {"add", "remove", "replace", "move", "copy", "test"}


def pod(
    *containers: dict[str, Any],
    init: list[dict[str, Any]] | None = None,
    annotations: dict[str, str] | None = None,
    namespace: str = "shop",
    deployment: str = "web",
) -> dict[str, Any]:
    """A pod as a Deployment's ReplicaSet creates it: generateName, no name yet."""
    meta: dict[str, Any] = {
        "generateName": f"{deployment}-5d9c7b8f4-",
        "namespace": namespace,
        "labels": {"app": deployment, "pod-template-hash": "5d9c7b8f4"},
        "ownerReferences": [
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "name": f"{deployment}-5d9c7b8f4",
                "uid": "6f1b7c9e-0000-4000-8000-000000000001",
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ],
    }
    if annotations is not None:
        meta["annotations"] = annotations
    spec: dict[str, Any] = {"containers": list(containers)}
    if init is not None:
        spec["initContainers"] = init
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def container(
    name: str,
    requests: dict[str, str] | None = None,
    limits: dict[str, str] | None = None,
    **extra: Any,
) -> dict[str, Any]:
    c: dict[str, Any] = {"name": name, "image": "registry.example/app:1", **extra}
    if requests is not None or limits is not None:
        c["resources"] = {}
        if requests is not None:
            c["resources"]["requests"] = requests
        if limits is not None:
            c["resources"]["limits"] = limits
    return c


def rec(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, r, r, r)


def policy(update_mode: str = "Recreate", *containers: Any, name: str = "web") -> Policy:
    return Policy(
        name=name,
        namespace="shop",
        update_mode=UpdateMode.of(update_mode),
        container_policies=containers,
    )


def apply_strictly(doc: dict[str, Any], ops: list[dict[str, Any]]) -> dict[str, Any]:
    for op in ops:
        assert set(op) <= {"op", "path", "value", "from"}, op
        assert op["op"] in OPS, op
        assert op["path"].startswith("/"), op
        if op["op"] in ("add", "replace", "test"):
            assert "value" in op, op
    return jsonpatch.JsonPatch(ops).apply(copy.deepcopy(doc))


def amounts(c: dict[str, Any], section: str) -> dict[str, int]:
    values = (c.get("resources") or {}).get(section) or {}
    return {r: quantity_amount(r, values[r]) for r in RESOURCES if values.get(r) is not None}


def sized_containers(p: dict[str, Any]) -> list[dict[str, Any]]:
    spec = p["spec"]
    sidecars = [c for c in spec.get("initContainers") or [] if c.get("restartPolicy") == "Always"]
    return list(spec["containers"]) + sidecars


def assert_valid_pod(p: dict[str, Any]) -> None:
    kubernetes_validate.validate(p, K8S_VERSION, strict=True)
    spec = p["spec"]
    for c in list(spec["containers"]) + list(spec.get("initContainers") or []):
        requests, limits = amounts(c, "requests"), amounts(c, "limits")
        for res in RESOURCES:
            if res in requests and res in limits:
                assert requests[res] <= limits[res], (c["name"], res, requests, limits)
