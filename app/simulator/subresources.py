"""The `scale`, `eviction` and `resize` subresources."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from app.simulator import errors, patches, podutil, quantity, selectors, validation
from app.simulator.controllers import pdb_status
from app.simulator.errors import ApiError, FieldError, bad_request, invalid
from app.simulator.resources import NODE, PDB, POD, ResourceType
from app.simulator.scheduler import allocatable
from app.simulator.store import dumps

if TYPE_CHECKING:
    from app.simulator.api import Api, Request, Response


def handle(api: Api, rt: ResourceType, ns: str, name: str, sub: str, req: Request) -> Response:
    if sub == "scale":
        return _scale(api, rt, ns, name, req)
    if sub == "eviction":
        if req.method != "POST":
            raise ApiError(
                405,
                f"the server does not allow this method on the requested resource ({req.method})",
            )
        return _evict(api, ns, name, req)
    return _resize(api, ns, name, req)


# --- scale ------------------------------------------------------------------------------------


def _scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    meta = obj["metadata"]
    return {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            "name": meta["name"],
            "namespace": meta["namespace"],
            "uid": meta["uid"],
            "resourceVersion": meta["resourceVersion"],
            "creationTimestamp": meta["creationTimestamp"],
        },
        "spec": {"replicas": obj["spec"].get("replicas", 1)},
        "status": {
            "replicas": (obj.get("status") or {}).get("replicas", 0),
            "selector": selectors.selector_string(obj["spec"].get("selector") or {}),
        },
    }


def _scale(api: Api, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
    from app.simulator.api import Response, json_response

    entry = api.store.require(rt, ns, name)
    current = _scale_of(rt, entry.obj)
    if req.method == "GET":
        return json_response(200, current)
    if req.method == "PUT":
        try:
            scale = json.loads(req.body)
        except ValueError as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
        if not isinstance(scale, dict) or scale.get("kind") not in (None, "Scale"):
            raise bad_request("the body must be an autoscaling/v1 Scale")
    elif req.method == "PATCH":
        scale = patches.apply_patch(req.headers.get("content-type", ""), current, req.body)
    else:
        raise ApiError(
            405, f"the server does not allow this method on the requested resource ({req.method})"
        )
    replicas = (scale.get("spec") or {}).get("replicas", 0)
    if not isinstance(replicas, int) or isinstance(replicas, bool) or replicas < 0:
        raise invalid(
            "Scale",
            "autoscaling",
            name,
            [
                FieldError(
                    "spec.replicas",
                    "FieldValueInvalid",
                    "must be greater than or equal to 0",
                    replicas,
                )
            ],
        )
    expected = (scale.get("metadata") or {}).get("resourceVersion") or None

    with api.store.lock:
        latest = api.store.require(rt, ns, name)
        if expected and expected != str(latest.rv):
            raise errors.conflict(rt, name)
        obj = latest.copy()
        if obj["spec"].get("replicas") != replicas:
            obj["spec"]["replicas"] = replicas
            obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
            latest = api.store.replace(rt, obj)
    return Response(200, dumps(_scale_of(rt, latest.obj)))


# --- eviction ---------------------------------------------------------------------------------


def _evict(api: Api, ns: str, name: str, req: Request) -> Response:
    from app.simulator.api import json_response

    try:
        body = json.loads(req.body)
    except ValueError as e:
        raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
    if (
        not isinstance(body, dict)
        or body.get("kind", "Eviction") != "Eviction"
        or body.get("apiVersion", "policy/v1") not in ("policy/v1", "policy/v1beta1")
    ):
        raise bad_request("the body of an eviction must be a policy/v1 Eviction")
    if (body.get("metadata") or {}).get("name") != name:
        raise bad_request(f"name in URL does not match name in Eviction object: {name}")
    store = api.store
    with store.lock:
        pod = store.require(POD, ns, name).obj
        _check_preconditions(pod, body.get("deleteOptions"))
        labels = pod["metadata"].get("labels") or {}
        budgets = [
            e.obj
            for _, e in store.scan(PDB, ns)[0]
            if selectors.matches(
                selectors.from_label_selector_object(e.obj["spec"].get("selector")), labels
            )
        ]
        if len(budgets) > 1:
            raise ApiError(
                500,
                "This pod has more than one PodDisruptionBudget, which the "
                "eviction subresource does not support.",
                "InternalError",
            )
        if budgets and not podutil.is_terminal(pod):
            status = pdb_status(api.cluster, budgets[0])
            healthy = podutil.is_ready(pod)
            # A healthy pod needs an allowed disruption; an unhealthy one may go while the
            # budget is met (unhealthyPodEvictionPolicy IfHealthyBudget, the default).
            blocked = (
                status["disruptionsAllowed"] <= 0
                if healthy
                else status["currentHealthy"] < status["desiredHealthy"]
            )
            if blocked:
                pdb_name = budgets[0]["metadata"]["name"]
                raise ApiError(
                    429,
                    "Cannot evict pod as it would violate the pod's disruption budget.",
                    "TooManyRequests",
                    {
                        "causes": [
                            {
                                "reason": "DisruptionBudget",
                                "message": f"The disruption budget {pdb_name} needs "
                                f"{status['desiredHealthy']} healthy pods and has "
                                f"{status['currentHealthy']} currently",
                            }
                        ]
                    },
                )
        if req.query.get("dryRun") != "All":  # a dry run checks the budget and changes nothing
            store.delete(POD, ns, name)
    return json_response(
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )


def _check_preconditions(pod: dict[str, Any], options: Any) -> None:
    """DeleteOptions.preconditions: evict only the pod with this uid (and resourceVersion), not
    another that took its name since; 409 Conflict otherwise, as kube-apiserver answers."""
    pre = (options or {}).get("preconditions") if isinstance(options, dict) else None
    if not isinstance(pre, dict):
        return
    meta = pod["metadata"]
    for field, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
        want = pre.get(field)
        if want and want != meta.get(field):
            raise ApiError(
                409,
                f'Operation cannot be fulfilled on pods "{meta["name"]}": Precondition failed: '
                f"{label} in precondition: {want}, {label} in object meta: {meta.get(field)}",
                "Conflict",
            )


# --- in-place resize --------------------------------------------------------------------------


def _resize(api: Api, ns: str, name: str, req: Request) -> Response:
    from app.simulator.api import Response

    store = api.store
    entry = store.require(POD, ns, name)
    if req.method == "GET":
        return Response(200, entry.raw)
    if req.method == "PATCH":
        new = patches.apply_patch(req.headers.get("content-type", ""), entry.copy(), req.body)
    elif req.method == "PUT":
        try:
            new = json.loads(req.body)
        except ValueError as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
    else:
        raise ApiError(
            405, f"the server does not allow this method on the requested resource ({req.method})"
        )
    old = entry.obj
    errs = _resize_errors(old, new)
    if errs:
        raise invalid("Pod", "", name, errs)
    with store.lock:
        latest = store.require(POD, ns, name)
        sent = (new.get("metadata") or {}).get("resourceVersion")
        if (sent and sent != str(latest.rv)) or (latest.rv != entry.rv and req.method == "PUT"):
            raise errors.conflict(POD, name)
        pod = latest.copy()
        for c, nc in zip(pod["spec"]["containers"], new["spec"]["containers"], strict=True):
            c["resources"] = nc.get("resources") or {}
        message = _infeasible(api, latest.obj, pod)
        pod["status"]["conditions"] = [
            c
            for c in pod["status"].get("conditions") or []
            if not c["type"].startswith("PodResize")
        ]
        if message:
            pod["status"]["conditions"].append(
                {
                    "type": "PodResizePending",
                    "status": "True",
                    "reason": "Infeasible",
                    "message": message,
                    "lastProbeTime": None,
                    "lastTransitionTime": api.cluster.now_str(),
                }
            )
        else:
            by_name = {c["name"]: c for c in pod["spec"]["containers"]}
            for cs in pod["status"].get("containerStatuses") or []:
                cs["resources"] = by_name[cs["name"]].get("resources") or {}
            _apply_limits(api, pod)
        return Response(200, store.replace(POD, pod).raw)


def _resize_errors(old: dict[str, Any], new: dict[str, Any]) -> list[FieldError]:
    old_c = old["spec"]["containers"]
    new_c = (new.get("spec") or {}).get("containers") or []
    if (
        len(old_c) != len(new_c)
        or any(
            {k: v for k, v in a.items() if k != "resources"}
            != {k: v for k, v in b.items() if k != "resources"}
            for a, b in zip(old_c, new_c, strict=True)
        )
        or {k: v for k, v in (new.get("spec") or {}).items() if k != "containers"}
        != {k: v for k, v in old["spec"].items() if k != "containers"}
    ):
        return [
            FieldError("spec", "FieldValueForbidden", "only cpu and memory resources are mutable")
        ]
    errs: list[FieldError] = []
    for i, c in enumerate(new_c):
        errs += validation.validate_resources(
            c.get("resources") or {}, f"spec.containers[{i}].resources"
        )
    if not errs and podutil.qos_class(new) != podutil.qos_class(old):
        errs.append(
            FieldError("spec", "FieldValueInvalid", "Pod QoS is immutable", podutil.qos_class(new))
        )
    return errs


def _infeasible(api: Api, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """Why the node cannot take the new requests, or None if it can."""
    node_name = new["spec"].get("nodeName")
    if not node_name:
        return None
    node = api.store.get(NODE, "", node_name)
    if node is None:
        return None
    cap = allocatable(node.obj)
    use = api.cluster.node_usage.get(node_name)
    old_cpu, old_mem = podutil.requests(old)
    new_cpu, new_mem = podutil.requests(new)
    if use.cpu - old_cpu + new_cpu > cap.cpu:
        return (
            f"Node didn't have enough capacity: cpu, requested: {new_cpu}, capacity: "
            f"{cap.cpu - (use.cpu - old_cpu)}"
        )
    if use.memory - old_mem + new_mem > cap.memory:
        return (
            f"Node didn't have enough capacity: memory, requested: {new_mem}, capacity: "
            f"{cap.memory - (use.memory - old_mem)}"
        )
    return None


def _apply_limits(api: Api, pod: dict[str, Any]) -> None:
    """The kubelet applies new limits to the running containers (CPU cap, OOM threshold)."""
    with api.cluster.runtime_lock:
        prt = api.cluster.runtime.get(pod["metadata"]["uid"])
    if prt is None:
        return
    by_name = {c["name"]: c for c in pod["spec"]["containers"]}
    for c in prt.containers:
        lim = (by_name[c.name].get("resources") or {}).get("limits") or {}
        c.cpu_limit = quantity.cores(lim["cpu"]) if "cpu" in lim else None
        c.memory_limit = float(quantity.bytes_(lim["memory"])) if "memory" in lim else None
