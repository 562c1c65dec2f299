"""The `scale` and `eviction` subresources; `resize` is resize.py, `log` logs.py."""

from __future__ import annotations

import json
from typing import Any

from app.simulator.apiserver import crd, errors, patches, podutil, selectors
from app.simulator.apiserver.errors import ApiError, FieldError, bad_request, invalid
from app.simulator.apiserver.resources import PDB, POD, ResourceType
from app.simulator.apiserver.store import dumps
from app.simulator.control.controllers import pdb_status
from app.simulator.endpoints import apply, logs, resize
from app.simulator.endpoints.messages import ApiContext, Request, Response, json_response


def handle(
    api: ApiContext, rt: ResourceType, ns: str, name: str, sub: str, req: Request
) -> Response:
    if sub == "scale":
        return _scale(api, rt, ns, name, req)
    if sub == "eviction":
        if req.method != "POST":
            raise ApiError(
                405,
                f"the server does not allow this method on the requested resource ({req.method})",
            )
        return _evict(api, ns, name, req)
    if sub == "log":
        return logs.handle(api, ns, name, req)
    return resize.handle(api, ns, name, req)


# --- scale ------------------------------------------------------------------------------------


def _scale_of(rt: ResourceType, obj: dict[str, Any]) -> dict[str, Any]:
    if rt.scale_paths is not None:  # a custom resource's, where its definition says
        scale, found = crd.scale_of(rt.scale_paths, obj)
        if not found:
            raise ApiError(
                500,
                f'Internal error occurred: the spec replicas field "{rt.scale_paths.spec_replicas}"'
                " does not exist",
            )
        return scale
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


def _scale(api: ApiContext, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
    # A patch is applied to the version read, and again to a newer one when a controller wrote
    # the object meanwhile, as kube-apiserver applies it inside the storage's GuaranteedUpdate
    # (apiserver handlers/patch.go, registry/generic/registry/store.go Update): its
    # resourceVersion is a precondition only when the patch or the PUT body names one.
    for _ in range(5):
        entry = api.store.require(rt, ns, name)
        current = _scale_of(rt, entry.obj)
        if req.method == "GET":
            return json_response(200, current)
        scale, replicas = _requested(name, req, current)
        expected = (scale.get("metadata") or {}).get("resourceVersion") or None
        with api.store.lock:
            latest = api.store.require(rt, ns, name)
            if expected and expected != str(latest.rv):
                if req.method == "PATCH" and expected == str(entry.rv):
                    continue  # the version read, not the patch's: apply it to the newer one
                raise errors.conflict(rt, name)
            obj = latest.copy()
            if rt.scale_paths is not None:
                if (
                    crd.scale_of(rt.scale_paths, obj)[0]["spec"]["replicas"] != replicas
                    or not (crd.scale_of(rt.scale_paths, obj)[1])
                ):
                    crd.set_replicas(rt.scale_paths, obj, replicas)
                    obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
                    latest = api.store.replace(rt, obj)
            elif obj["spec"].get("replicas") != replicas:
                obj["spec"]["replicas"] = replicas
                obj["metadata"]["generation"] = obj["metadata"].get("generation", 1) + 1
                apply.record_update(api, rt, req, "scale", latest.obj, obj)  # its managedFields
                latest = api.store.replace(rt, obj)
        return Response(200, dumps(_scale_of(rt, latest.obj)))
    raise errors.conflict(rt, name)


def _requested(name: str, req: Request, current: dict[str, Any]) -> tuple[dict[str, Any], int]:
    """The Scale a PUT sends or a PATCH makes of `current`, and its spec.replicas, checked."""
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
    return scale, replicas


# --- eviction ---------------------------------------------------------------------------------


def _evict(api: ApiContext, ns: str, name: str, req: Request) -> Response:
    try:
        body = json.loads(req.body)
    except ValueError as e:
        raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
    if isinstance(body, dict) and body.get("kind", "Eviction") != "Eviction":
        # the decoder's words for another kind (runtime's unknown conversion)
        kind, version = str(body["kind"]), str(body.get("apiVersion", "")).rsplit("/", 1)[-1]
        raise bad_request(
            f'{kind} in version "{version}" cannot be handled as a Eviction: converting '
            f"({version}.{kind}) to (policy.Eviction): unknown conversion"
        )
    if not isinstance(body, dict) or body.get("apiVersion", "policy/v1") not in (
        "policy/v1",
        "policy/v1beta1",
    ):
        raise bad_request("the body of an eviction must be a policy/v1 Eviction")
    if (body.get("metadata") or {}).get("name") != name:
        raise bad_request("name in URL does not match name in Eviction object")
    store = api.store
    with store.lock:
        pod = store.require(POD, ns, name).obj
        _check_preconditions(pod, body.get("deleteOptions"))
        if not _can_ignore_budget(pod):
            _check_budget(api, ns, pod)
        if req.query.get("dryRun") != "All":  # a dry run checks the budget and changes nothing
            store.delete(POD, ns, name)
    return json_response(
        201,
        {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201},
    )


def _can_ignore_budget(pod: dict[str, Any]) -> bool:
    """canIgnorePDB (pkg/registry/core/pod/storage/eviction.go): a terminal pod already caused
    its disruption, a Pending one serves nobody, one being deleted is going anyway: such pods are
    deleted without looking at PodDisruptionBudgets at all."""
    phase = (pod.get("status") or {}).get("phase")
    return phase in ("Succeeded", "Failed", "Pending") or bool(
        pod["metadata"].get("deletionTimestamp")
    )


def _check_budget(api: ApiContext, ns: str, pod: dict[str, Any]) -> None:
    """The pod's (single) PodDisruptionBudget must allow its eviction (eviction.go Create and
    checkAndDecrement): 500 for more than one budget, 429 when none is left."""
    labels = pod["metadata"].get("labels") or {}
    budgets = [
        e.obj
        for _, e in api.store.scan(PDB, ns)[0]
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
    if not budgets:
        return
    pdb = budgets[0]
    status = pdb_status(api.cluster, pdb)
    if not podutil.is_ready(pod):
        # An unready pod does not count as healthy: it may go without using up a disruption
        # when unhealthyPodEvictionPolicy is AlwaysAllow, or while the budget is met and asks
        # for at least one healthy pod (IfHealthyBudget, the default). Otherwise it needs an
        # allowed disruption like any other pod.
        if pdb["spec"].get("unhealthyPodEvictionPolicy") == "AlwaysAllow":
            return
        if status["currentHealthy"] >= status["desiredHealthy"] > 0:
            return
    if status["disruptionsAllowed"] <= 0:
        name = pdb["metadata"]["name"]
        raise ApiError(
            429,
            "Cannot evict pod as it would violate the pod's disruption budget.",
            "TooManyRequests",
            {
                "causes": [
                    {
                        "reason": "DisruptionBudget",
                        "message": _budget_message(name, status),
                    }
                ]
            },
        )


def _budget_message(name: str, status: dict[str, Any]) -> str:
    """Why a budget refuses (pkg/registry/core/pod/storage/eviction.go checkAndDecrement)."""
    if status["currentHealthy"] <= status["desiredHealthy"]:
        return (
            f"The disruption budget {name} needs {status['desiredHealthy']} healthy pods and "
            f"has {status['currentHealthy']} currently"
        )
    cond = next(
        (c for c in status.get("conditions") or [] if c.get("type") == "DisruptionAllowed"), None
    )
    if cond and cond.get("status") == "False" and cond.get("message"):
        return (
            f"The disruption budget {name} does not allow evicting pods currently "
            f"({cond.get('reason')}): {cond['message']}"
        )
    return f"The disruption budget {name} does not allow evicting pods currently"


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
