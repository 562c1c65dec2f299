"""Facts about pods that several parts need: requests, QoS class, readiness, ownership."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver import limitranger, qos, quantity


def requests(pod: dict[str, Any]) -> tuple[int, int]:
    """(millicores, bytes) the scheduler reserves: requests, or limits where requests are unset;
    a pod-level request (`spec.resources`, KEP-2837) in place of the containers' sum where the
    pod sets one (k8s.io/component-helpers resource.PodRequests)."""
    cpu = mem = 0
    for c in pod.get("spec", {}).get("containers") or []:
        res = c.get("resources") or {}
        req = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        if "cpu" in req:
            cpu += quantity.millicores(req["cpu"])
        if "memory" in req:
            mem += quantity.bytes_(req["memory"])
    return pod_level_requests(pod, cpu, mem)


def pod_level_requests(pod: dict[str, Any], cpu: int, memory: int) -> tuple[int, int]:
    """(cpu, memory) with the pod-level requests the pod sets in their place."""
    level = ((pod.get("spec") or {}).get("resources") or {}).get("requests") or {}
    if "cpu" in level:
        cpu = quantity.millicores(level["cpu"])
    if "memory" in level:
        memory = quantity.bytes_(level["memory"])
    return cpu, memory


def qos_class(pod: dict[str, Any]) -> str:
    """ComputePodQOS, init containers and pod-level resources included (qos.py)."""
    return qos.compute(pod)


def is_ready(pod: dict[str, Any]) -> bool:
    status = pod.get("status") or {}
    return status.get("phase") == "Running" and any(
        c.get("type") == "Ready" and c.get("status") == "True"
        for c in status.get("conditions") or []
    )


def is_terminal(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Succeeded", "Failed")


def controller_of(obj: dict[str, Any]) -> dict[str, Any] | None:
    for ref in obj.get("metadata", {}).get("ownerReferences") or []:
        if isinstance(ref, dict) and ref.get("controller"):
            return ref
    return None


def owner_uids(obj: dict[str, Any]) -> list[str]:
    return [r["uid"] for r in obj.get("metadata", {}).get("ownerReferences") or [] if "uid" in r]


def tolerates(tolerations: list[dict[str, Any]], taint: dict[str, Any]) -> bool:
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("operator") == "Exists" and (not t.get("key") or t["key"] == taint.get("key")):
            return True
        if t.get("key") == taint.get("key") and t.get("value", "") == taint.get("value", ""):
            return True
    return False


def default_resource_requests(pod: dict[str, Any]) -> None:
    """API defaulting of a Pod's requests (`SetDefaults_Pod`, pkg/apis/core/v1/defaults.go).

    A container or init container's request for a resource it only has a limit for defaults
    to that limit. With pod-level limits (`defaultPodRequests`, PodLevelResources on), a
    missing pod-level request of a supported resource defaults to the aggregate container
    request for hugepages, and otherwise to the pod-level limit. Pods only, not templates; it
    runs at decode time, before admission, and again after each webhook patch.
    """
    spec = pod.get("spec")
    if not isinstance(spec, dict):
        return
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            res = c.get("resources") if isinstance(c, dict) else None
            if not isinstance(res, dict) or not isinstance(res.get("limits"), dict):
                continue
            requests: dict[str, Any] = (
                res["requests"] if isinstance(res.get("requests"), dict) else {}
            )
            missing = {k: v for k, v in res["limits"].items() if k not in requests}
            if missing:
                res["requests"] = {**requests, **missing}
    pod_res = spec.get("resources")
    if not isinstance(pod_res, dict) or not isinstance(pod_res.get("limits"), dict):
        return
    if not pod_res["limits"]:
        return

    requests = dict(pod_res.get("requests") or {})
    try:
        aggregate = limitranger.aggregate_container_resources(pod, "requests")
    except ValueError:  # an unparsable quantity: validation answers 422 for it
        aggregate = {}
    for name, q in aggregate.items():
        if name not in requests and name.startswith("hugepages-"):
            requests[name] = str(q)
    for name, value in pod_res["limits"].items():
        if name not in requests and limitranger.is_pod_level_resource(name):
            requests[name] = value
    if requests:
        pod_res["requests"] = requests
