"""The pod `resize` subresource, with the rules of the Kubernetes release the simulator serves.

Re-derived from kubernetes/kubernetes, per release:
- pkg/registry/core/pod/strategy.go (podResizeStrategy, dropNonResizeUpdates): from the body only
  `resources` and `resizePolicy` of existing containers and of restartable (sidecar) init
  containers are kept; every other change is dropped, not refused.
- Pod-level resources (`spec.resources`), KEP-5419 (InPlacePodLevelResourcesVerticalScaling:
  alpha, off, in 1.35; beta, on, from 1.36; pkg/features/kube_features.go). Before 1.35 any
  resize of a pod that sets them is refused ("pods with pod-level resources cannot be resized");
  in 1.35, with the gate off, too ("resize of pods with pod-level resources is forbidden when
  InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"), and
  dropNonResizeUpdates drops a sent `spec.resources`. From 1.36 the sent `spec.resources` is kept
  and validatePodLevelResourcesResize refuses removing it or one of its requests or limits, and
  changing a resource other than cpu and memory; the pod-level rules of every pod
  (validatePodResourceConsistency: the containers within the pod-level values) apply to the new
  pod. NodeDeclaredFeatureValidator (plugin/pkg/admission/nodedeclaredfeatures, on with
  NodeDeclaredFeatures from 1.36) then answers 403 when `spec.resources` changes on a node whose
  status.declaredFeatures lacks InPlacePodLevelResourcesVerticalScaling. The kubelet, once the
  resize is applied, reports the pod-level values in force in status.resources and the pod's
  requests in status.allocatedResources (pkg/kubelet/kubelet_pods.go,
  convertToAPIPodLevelResourcesStatus).
- pkg/apis/core/validation/validation.go (ValidatePodResize, validateContainerResize): 422 when
  the pod is static or Windows, its QoS class would change, a request or
  limit is removed, a resource other than cpu/memory changes, a non-sidecar init container's
  resources change; and in 1.33 when a memory limit is lowered or added unless that
  container's memory resizePolicy is RestartContainer (1.34 allows it: the kubelet checks usage
  instead, kubernetes/kubernetes PR 133012 "Support reducing memory limits", KEP-1287 "Memory
  Limit Decreases"). A QoS class change is refused with "Pod QOS Class may not change as a
  result of resizing" beside the other errors (its value the pod's status.qosClass).
- plugin/pkg/admission/podresize (PodResizeValidator, on by default from 1.36): 403 Forbidden,
  with a cause of type NodeCapacity, when the pod's new requests exceed its node's allocatable
  (VPA's updater falls back to eviction on it); also 403 on nodes not labelled linux.
- The body is decoded into a Pod, so its quantities are kept as kube-apiserver stores them
  (`cpu: 0.5` as "500m": apiserver/fieldvalidation.py), and defaulted as every v1.Pod is
  (SetDefaults_Pod: a request missing where a limit is set defaults to the limit).
- LimitRanger (plugin/pkg/admission/limitranger, `SupportsAttributes` admits the `resize`
  subresource of a Pod update): its defaults before validation, its min/max/ratio after it (403).
- The kubelet (not the API server) then marks a resize the node cannot take now
  PodResizePending/Infeasible; that stays a condition, as on a real cluster.
"""

from __future__ import annotations

import copy
import json
from decimal import Decimal
from typing import Any

from app.simulator.apiserver import (
    errors,
    kinds,
    limitranger,
    patches,
    podutil,
    qos,
    quantity,
    schema,
    validation,
)
from app.simulator.apiserver import fieldvalidation as fv
from app.simulator.apiserver.errors import ApiError, FieldError, bad_request, invalid
from app.simulator.apiserver.jsonnumbers import Literal
from app.simulator.apiserver.resources import LIMITRANGE, NODE, POD
from app.simulator.control.scheduler import allocatable
from app.simulator.endpoints.messages import ApiContext, Request, Response

MUTABLE = ("cpu", "memory")
NOT_MUTABLE = "only cpu and memory resources are mutable"
POD_LEVEL_GATE_OFF = (
    "resize of pods with pod-level resources is forbidden when "
    "InPlacePodLevelResourcesVerticalScalingEnabled feature gate is disabled"
)
POD_LEVEL_FEATURE = "InPlacePodLevelResourcesVerticalScaling"


def handle(api: ApiContext, ns: str, name: str, req: Request) -> Response:
    # A patch is applied to the version read, and again to a newer one when the kubelet or a
    # controller wrote the pod meanwhile, as kube-apiserver applies it inside the storage's
    # GuaranteedUpdate (apiserver handlers/patch.go, registry/generic/registry/store.go Update).
    for _ in range(5):
        resp = _attempt(api, ns, name, req)
        if resp is not None:
            return resp
    raise errors.conflict(POD, name)


def _attempt(api: ApiContext, ns: str, name: str, req: Request) -> Response | None:
    """The resize on the pod as read now; None when a patch must be applied again to a newer
    version of it."""
    store = api.store
    entry = store.require(POD, ns, name)
    if req.method == "GET":
        return Response(200, entry.raw)
    if req.method == "PATCH":
        sent = patches.apply_patch(req.headers.get("content-type", ""), entry.copy(), req.body)
    elif req.method == "PUT":
        try:
            sent = json.loads(req.body, parse_float=Literal)
        except ValueError as e:
            raise bad_request(f"couldn't get version/kind; json parse error: {e}") from None
    else:
        raise ApiError(
            405, f"the server does not allow this method on the requested resource ({req.method})"
        )
    old = entry.obj
    if isinstance(sent, dict):
        podutil.default_resource_requests(sent)
    defs = schema.definitions(api.version.minor)
    pod_level = api.version.pod_level_resize
    new = fv.check(defs, "io.k8s.api.core.v1.Pod", keep_resize_fields(sent, old, pod_level))[0]
    limit_ranges = [e.obj for _, e in store.scan(LIMITRANGE, ns)[0]]
    limitranger.apply_defaults(new, limit_ranges)
    errs = resize_errors(new, old, api.version.minor)
    if errs:
        raise invalid("Pod", "", name, errs)
    limitranger.validate(new, limit_ranges)
    if api.version.at_least(36):
        _admit(api, new, old)
    with store.lock:
        latest = store.require(POD, ns, name)
        rv = (sent.get("metadata") or {}).get("resourceVersion")
        if rv and rv != str(latest.rv) and req.method == "PATCH" and rv == str(entry.rv):
            return None  # the version read, not one the patch names: apply it to the newer one
        if (rv and rv != str(latest.rv)) or (latest.rv != entry.rv and req.method == "PUT"):
            raise errors.conflict(POD, name)
        pod = latest.copy()
        pod["spec"]["containers"] = new["spec"]["containers"]
        if "initContainers" in new["spec"]:
            pod["spec"]["initContainers"] = new["spec"]["initContainers"]
        if pod_level and "resources" in new["spec"]:
            pod["spec"]["resources"] = new["spec"]["resources"]
        kinds.bump_pod_generation(latest.obj, pod)
        _kubelet_status(api, latest.obj, pod, pod_level)
        return Response(200, store.replace(POD, pod).raw)


def _kubelet_status(
    api: ApiContext, old: dict[str, Any], pod: dict[str, Any], pod_level: bool
) -> None:
    """What the kubelet writes of the resize: PodResizePending/Infeasible when the node cannot
    take it, else the resources in force (and, `pod_level`, the pod-level status)."""
    message = _infeasible(api, old, pod)
    pod["status"]["conditions"] = [
        c for c in pod["status"].get("conditions") or [] if not c["type"].startswith("PodResize")
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
        by_name = {c["name"]: c for c in _resizable(pod)}
        for key in ("containerStatuses", "initContainerStatuses"):
            for cs in pod["status"].get(key) or []:
                if cs.get("name") in by_name:
                    cs["resources"] = by_name[cs["name"]].get("resources") or {}
        if pod_level and _has_pod_level(pod):
            _report_pod_level(pod)
        _apply_limits(api, pod)


def is_sidecar(container: dict[str, Any]) -> bool:
    return container.get("restartPolicy") == "Always"


def _resizable(pod: dict[str, Any]) -> list[dict[str, Any]]:
    spec = pod.get("spec") or {}
    return [*(spec.get("containers") or []), *filter(is_sidecar, spec.get("initContainers") or [])]


def keep_resize_fields(
    sent: dict[str, Any], old: dict[str, Any], pod_level: bool = False
) -> dict[str, Any]:
    """dropNonResizeUpdates: the old pod with the sent `resources` and `resizePolicy` of its
    containers and sidecars, and with `pod_level` (the KEP-5419 gate on) the sent pod-level
    `spec.resources`. Containers added, removed or renamed are kept as sent, for validation to
    refuse."""
    new = copy.deepcopy(old)
    raw = sent.get("spec")
    spec: dict[str, Any] = raw if isinstance(raw, dict) else {}
    if pod_level:
        if spec.get("resources") is not None:
            new["spec"]["resources"] = spec["resources"]
        else:
            new["spec"].pop("resources", None)
    for key in ("containers", "initContainers"):
        old_list, sent_list = old["spec"].get(key) or [], spec.get(key) or []
        if not isinstance(sent_list, list) or len(sent_list) != len(old_list):
            new["spec"][key] = sent_list
            continue
        for i, (o, s) in enumerate(zip(old_list, sent_list, strict=True)):
            if not isinstance(s, dict) or s.get("name") != o.get("name"):
                new["spec"][key][i] = s
                continue
            c = new["spec"][key][i]
            if key == "initContainers" and not is_sidecar(o):
                c["resources"] = s.get("resources") or {}  # validation refuses any change
                continue
            for f in ("resources", "resizePolicy"):
                if s.get(f) is not None:
                    c[f] = s[f]
                else:
                    c.pop(f, None)
    return new


def _has_pod_level(pod: dict[str, Any]) -> bool:
    res = pod["spec"].get("resources") or {}
    return bool(res.get("requests") or res.get("limits"))


def resize_errors(new: dict[str, Any], old: dict[str, Any], minor: int) -> list[FieldError]:
    """ValidatePodResize of release 1.`minor`."""
    spec, old_spec = new["spec"], old["spec"]
    pod_level = _has_pod_level(old) or _has_pod_level(new)
    if pod_level and minor < 35:
        return [
            FieldError("", "FieldValueForbidden", "pods with pod-level resources cannot be resized")
        ]
    if "kubernetes.io/config.mirror" in (old["metadata"].get("annotations") or {}):
        return [FieldError("", "FieldValueForbidden", "static pods cannot be resized")]
    if (old_spec.get("os") or {}).get("name") == "windows":
        return [FieldError("", "FieldValueForbidden", "windows pods cannot be resized")]
    errs = _spec_errors(new, old)
    if pod_level:
        if minor < 36:  # the gate is off by default in 1.35
            return [*errs, FieldError("", "FieldValueForbidden", POD_LEVEL_GATE_OFF)]
        errs += _pod_level_errors(new, old)
    same_shape = all(
        len(spec.get(k) or []) == len(old_spec.get(k) or [])
        and [c.get("name") for c in spec.get(k) or []]
        == [c.get("name") for c in old_spec.get(k) or []]
        for k in ("containers", "initContainers")
    )
    if not same_shape:
        return [FieldError("spec", "FieldValueForbidden", NOT_MUTABLE)]
    for key in ("containers", "initContainers"):
        for i, (c, o) in enumerate(zip(spec.get(key) or [], old_spec.get(key) or [], strict=True)):
            path = f"spec.{key}[{i}].resources"
            res, old_res = c.get("resources") or {}, o.get("resources") or {}
            if key == "initContainers" and not is_sidecar(o):
                if res != old_res:
                    errs.append(
                        FieldError(
                            "spec",
                            "FieldValueForbidden",
                            "resources for non-sidecar init containers are immutable",
                        )
                    )
                continue
            errs += _container_errors(res, old_res, c.get("resizePolicy") or [], path, minor)
            if _non_mutable_changed(res, old_res):
                detail = NOT_MUTABLE
                if key == "initContainers":
                    detail = "only cpu and memory resources for sidecar containers are mutable"
                errs.append(FieldError("spec", "FieldValueForbidden", detail))
    return errs


def _pod_level_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """validatePodLevelResourcesResize, then the pod-level rules every pod is held to
    (validatePodMetadataAndSpec: validatePodResources, validatePodResourceConsistency)."""
    res, old_res = new["spec"].get("resources"), old["spec"].get("resources")
    if old_res is not None and res is None:
        return [
            FieldError(
                "spec.resources", "FieldValueForbidden", "pod-level resources cannot be removed"
            )
        ]
    errs: list[FieldError] = []
    res, old_res = res or {}, old_res or {}
    for part, what in (("requests", "resource requests"), ("limits", "resource limits")):
        if set(old_res.get(part) or {}) - set(res.get(part) or {}):
            errs.append(
                FieldError(
                    f"spec.resources.{part}",
                    "FieldValueForbidden",
                    f"pod-level {what} cannot be removed",
                )
            )
    if _non_mutable_changed(res, old_res):
        errs.append(
            FieldError(
                "spec",
                "FieldValueForbidden",
                "only cpu and memory resources are mutable at pod-level",
            )
        )
    if new["spec"].get("resources") is not None:
        errs += validation.validate_pod_resources(new["spec"], "spec.resources")
    return errs


def _report_pod_level(pod: dict[str, Any]) -> None:
    """The kubelet's pod-level status once it applied the resize (KEP-5419): the pod-level
    values in force (status.resources) and the pod's admitted requests, pod-level values in
    place of the containers' sum (status.allocatedResources, resource.PodRequests)."""
    level = pod["spec"]["resources"]
    in_force = {k: dict(level[k]) for k in ("requests", "limits") if level.get(k)}
    pod["status"]["resources"] = in_force
    cpu, memory = pod_requests(pod)
    pod["status"]["allocatedResources"] = {
        "cpu": quantity.format_millicores(cpu),
        "memory": str(memory),
    }


def _spec_errors(new: dict[str, Any], old: dict[str, Any]) -> list[FieldError]:
    """The new pod's quantities (validatePodMetadataAndSpec), then the QoS class rule, which
    ValidatePodResize reports beside every other error (its value: the pod's status.qosClass)."""
    errs: list[FieldError] = []
    for key in ("containers", "initContainers"):
        for i, c in enumerate(new["spec"].get(key) or []):
            if isinstance(c, dict) and (key == "containers" or is_sidecar(c)):
                errs += validation.validate_resources(
                    c.get("resources") or {}, f"spec.{key}[{i}].resources"
                )
    new_class = _qos(new)
    if new_class is not None and new_class != qos.of(old):
        errs.append(
            FieldError(
                "spec",
                "FieldValueInvalid",
                "Pod QOS Class may not change as a result of resizing",
                (new.get("status") or {}).get("qosClass", ""),
            )
        )
    return errs


def _qos(pod: dict[str, Any]) -> str | None:
    """The pod's QoS class, or None when a quantity does not parse (validation reports it)."""
    try:
        return qos.compute(pod)
    except ValueError:
        return None


def _container_errors(
    res: dict[str, Any], old: dict[str, Any], policies: list[Any], path: str, minor: int
) -> list[FieldError]:
    errs = []
    for part in ("requests", "limits"):
        if set(old.get(part) or {}) - set(res.get(part) or {}):
            errs.append(
                FieldError(
                    f"{path}.{part}", "FieldValueForbidden", f"resource {part} cannot be removed"
                )
            )
    memory_policy = next(
        (
            p.get("restartPolicy")
            for p in policies
            if isinstance(p, dict) and p.get("resourceName") == "memory"
        ),
        None,
    )
    if minor < 34 and memory_policy in (None, "", "NotRequired"):
        new_lim = (res.get("limits") or {}).get("memory")
        old_lim = (old.get("limits") or {}).get("memory")
        field = f"{path}.limits[memory]"
        if new_lim is not None and old_lim is None:
            # Adding a limit lowers it from "unlimited".
            errs.append(
                FieldError(
                    field,
                    "FieldValueForbidden",
                    "memory limits cannot be added unless resizePolicy is RestartContainer",
                )
            )
        elif (
            new_lim is not None
            and _parse(new_lim) is not None
            and _parse(old_lim) is not None
            and _parse(new_lim) < _parse(old_lim)  # type: ignore[operator]
        ):
            errs.append(
                FieldError(
                    field,
                    "FieldValueForbidden",
                    "memory limits cannot be decreased unless resizePolicy is RestartContainer",
                )
            )
    return errs


def _parse(value: Any) -> Decimal | None:
    try:
        return quantity.parse(value)
    except ValueError:
        return None


def _non_mutable_changed(res: dict[str, Any], old: dict[str, Any]) -> bool:
    for part in ("requests", "limits"):
        a = {k: v for k, v in (res.get(part) or {}).items() if k not in MUTABLE}
        b = {k: v for k, v in (old.get(part) or {}).items() if k not in MUTABLE}
        if a != b:
            return True
    return bool(set(res) - {"requests", "limits"}) or bool(set(old) - {"requests", "limits"})


def pod_requests(pod: dict[str, Any]) -> tuple[int, int]:
    """(millicores, bytes) a pod requests, sidecars included: the larger of the running set and
    of each init container with the sidecars started before it, or the pod-level request where
    the pod sets one (k8s.io/component-helpers resource.PodRequests, as PodResizeValidator
    uses it)."""

    def of(c: dict[str, Any]) -> tuple[int, int]:
        res = c.get("resources") or {}
        req = {**(res.get("limits") or {}), **(res.get("requests") or {})}
        return (
            quantity.millicores(req["cpu"]) if "cpu" in req else 0,
            quantity.bytes_(req["memory"]) if "memory" in req else 0,
        )

    cpu = mem = side_cpu = side_mem = init_cpu = init_mem = 0
    for c in (pod.get("spec") or {}).get("containers") or []:
        a, b = of(c)
        cpu, mem = cpu + a, mem + b
    for c in (pod.get("spec") or {}).get("initContainers") or []:
        a, b = of(c)
        if is_sidecar(c):
            side_cpu, side_mem = side_cpu + a, side_mem + b
            init_cpu, init_mem = max(init_cpu, side_cpu), max(init_mem, side_mem)
        else:
            init_cpu, init_mem = max(init_cpu, side_cpu + a), max(init_mem, side_mem + b)
    total = max(cpu + side_cpu, init_cpu), max(mem + side_mem, init_mem)
    return podutil.pod_level_requests(pod, *total)  # pod-level requests where set


def _admit(api: ApiContext, new: dict[str, Any], old: dict[str, Any]) -> None:
    """PodResizeValidator (1.36+): only for bound pods whose spec changes."""
    node_name = new["spec"].get("nodeName")
    if not node_name or new["spec"] == old["spec"]:
        return
    name = new["metadata"]["name"]
    node = api.store.get(NODE, "", node_name)
    if node is None:
        raise _forbidden(name, f'node "{node_name}" not found', None)
    # NodeDeclaredFeatureValidator: a change of spec.resources needs the node to declare it
    declared = (node.obj.get("status") or {}).get("declaredFeatures") or []
    if new["spec"].get("resources") != old["spec"].get("resources") and (
        POD_LEVEL_FEATURE not in declared
    ):
        raise _forbidden(
            name,
            f"pod update requires features {POD_LEVEL_FEATURE} which are not available on "
            f'node "{node_name}"',
            None,
        )
    cap = allocatable(node.obj)
    cpu, mem = pod_requests(new)
    over = []
    if cpu > cap.cpu:
        over.append(f"cpu, requested: {cpu}, allocatable: {cap.cpu}")
    if mem > cap.memory:
        over.append(f"memory, requested: {mem}, allocatable: {cap.memory}")
    if over:
        message = "Node didn't have enough allocatable resources: " + "; ".join(over)
        raise _forbidden(name, message, "NodeCapacity")
    os_label = (node.obj["metadata"].get("labels") or {}).get("kubernetes.io/os", "")
    if os_label != "linux":
        message = f'pod resize is only supported on linux nodes, node "{node_name}" is "{os_label}"'
        raise _forbidden(name, message, "UnsupportedPlatform")


def _forbidden(name: str, message: str, cause: str | None) -> ApiError:
    details: dict[str, Any] = {"name": name, "kind": "pods"}
    if cause:
        details["causes"] = [{"reason": cause}]
    return ApiError(403, f'pods "{name}" is forbidden: {message}', "Forbidden", details)


def _infeasible(api: ApiContext, old: dict[str, Any], new: dict[str, Any]) -> str | None:
    """The kubelet's verdict: why the node cannot take the new requests, or None if it can."""
    node_name = new["spec"].get("nodeName")
    if not node_name:
        return None
    node = api.store.get(NODE, "", node_name)
    if node is None:
        return None
    cap = allocatable(node.obj)
    use = api.cluster.node_usage.get(node_name)
    old_cpu, old_mem = pod_requests(old)
    new_cpu, new_mem = pod_requests(new)
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


def _apply_limits(api: ApiContext, pod: dict[str, Any]) -> None:
    """The kubelet applies new limits to the running containers (CPU cap, OOM threshold)."""
    with api.cluster.runtime_lock:
        prt = api.cluster.runtime.get(pod["metadata"]["uid"])
    if prt is None:
        return
    by_name = {c["name"]: c for c in _resizable(pod)}
    for c in prt.containers:
        if c.name not in by_name:
            continue
        lim = (by_name[c.name].get("resources") or {}).get("limits") or {}
        c.cpu_limit = quantity.cores(lim["cpu"]) if "cpu" in lim else None
        c.memory_limit = float(quantity.bytes_(lim["memory"])) if "memory" in lim else None
