"""Per-kind defaulting and validation on create and update, as the API server's registry does."""

from __future__ import annotations

from typing import Any

from app.simulator.apiserver import (
    crd,
    deploymentvalidation,
    limitranger,
    limitrangevalidation,
    selectors,
    validation,
)
from app.simulator.apiserver.errors import FieldError, invalid
from app.simulator.apiserver.resources import ResourceType

_WORKLOADS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet")
Schema = dict[str, Any]


def default_pod_template(template: dict[str, Any]) -> None:
    """What kube-apiserver defaults in every PodTemplateSpec (a Deployment's, ReplicaSet's,
    StatefulSet's, DaemonSet's template, and a pod's own spec): SetDefaults_PodSpec and
    SetDefaults_Container (pkg/apis/core/v1/defaults.go). Nothing pod-only: that is
    `default_pod`'s."""
    spec = template.setdefault("spec", {})
    spec.setdefault("restartPolicy", "Always")
    spec.setdefault("dnsPolicy", "ClusterFirst")
    spec.setdefault("schedulerName", "default-scheduler")
    spec.setdefault("terminationGracePeriodSeconds", 30)
    spec.setdefault("securityContext", {})
    for c in spec.get("containers") or []:
        if not isinstance(c, dict):
            continue
        image = str(c.get("image", ""))
        latest = ":" not in image.rsplit("/", 1)[-1] or image.endswith(":latest")
        c.setdefault("imagePullPolicy", "Always" if latest else "IfNotPresent")
        c.setdefault("terminationMessagePath", "/dev/termination-log")
        c.setdefault("terminationMessagePolicy", "File")
        c.setdefault("resources", {})  # a struct, never omitted from Go's JSON


# The status counts k8s.io/api/apps/v1/types.go tags without omitempty: Go's JSON always has
# them, 0 in a new object's empty status (the official Python client requires them).
_STATUS_COUNTS = {
    "ReplicaSet": ("replicas",),
    "StatefulSet": ("replicas", "availableReplicas"),
    "DaemonSet": (
        "currentNumberScheduled",
        "numberMisscheduled",
        "desiredNumberScheduled",
        "numberReady",
    ),
}
_NO_EXECUTE_DEFAULTS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def default_pod(pod: dict[str, Any]) -> None:
    """A new pod's defaults, applied at decode time so admission webhooks already see them:
    the template's (`default_pod_template`), SetDefaults_Pod's enableServiceLinks
    (pkg/apis/core/v1/defaults.go; requests from limits are `podutil.default_resource_requests`)
    and what kube-apiserver's built-in admission plugins set on pods only, which run before the
    webhooks: ServiceAccount (plugin/pkg/admission/serviceaccount: serviceAccountName
    "default"), Priority (plugin/pkg/admission/priority: priority 0 and PreemptLowerPriority
    without a PriorityClass) and DefaultTolerationSeconds (`_default_toleration_seconds`)."""
    default_pod_template(pod)
    spec = pod["spec"]
    spec.setdefault("enableServiceLinks", True)
    spec.setdefault("serviceAccountName", "default")
    spec.setdefault("preemptionPolicy", "PreemptLowerPriority")
    spec.setdefault("priority", 0)
    _default_toleration_seconds(spec)


def _default_toleration_seconds(spec: dict[str, Any]) -> None:
    """plugin/pkg/admission/defaulttolerationseconds: a pod that does not already tolerate
    `<taint>:NoExecute` (a toleration with that key or none, and effect NoExecute or none)
    tolerates it for 300 s."""
    tolerations = spec.setdefault("tolerations", [])
    for key in _NO_EXECUTE_DEFAULTS:
        if not any(
            isinstance(t, dict)
            and t.get("key", "") in (key, "")
            and t.get("effect", "") in ("NoExecute", "")
            for t in tolerations
        ):
            tolerations.append(
                {"key": key, "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
            )


# A DaemonSet's spec.templateGeneration, which apps/v1 carries as this annotation
# (pkg/apis/apps/v1/conversion.go): 1 when created, one more for each template change
# (pkg/registry/apps/daemonset/strategy.go); whatever a client writes there is not kept.
_DS_TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def _carry_template_generation(old: dict[str, Any], new: dict[str, Any]) -> None:
    old_value = (old["metadata"].get("annotations") or {}).get(_DS_TEMPLATE_GENERATION)
    try:
        generation = int(old_value or 1)
    except ValueError:
        generation = 1
    old_template = (old.get("spec") or {}).get("template")
    if (new.get("spec") or {}).get("template") != old_template:
        generation += 1
    new["metadata"].setdefault("annotations", {})[_DS_TEMPLATE_GENERATION] = str(generation)


def _workload_errors(kind: str, obj: dict[str, Any]) -> list[FieldError]:
    spec = obj.get("spec") or {}
    errs: list[FieldError] = []
    replicas = spec.get("replicas", 1)
    if kind != "DaemonSet" and (not isinstance(replicas, int) or replicas < 0):
        errs.append(
            FieldError(
                "spec.replicas", "FieldValueInvalid", "must be greater than or equal to 0", replicas
            )
        )
    sel = spec.get("selector")
    if not sel:
        errs.append(FieldError("spec.selector", "FieldValueRequired", ""))
        return errs
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    try:
        ok = selectors.matches(selectors.from_label_selector_object(sel), labels)
    except Exception:
        ok = False
    if not ok:
        errs.append(
            FieldError(
                "spec.template.metadata.labels",
                "FieldValueInvalid",
                "`selector` does not match template `labels`",
                labels,
            )
        )
    errs += template_errors(spec)
    if kind == "Deployment":
        errs += deploymentvalidation.strategy_errors(spec)
    return errs


def template_errors(spec: dict[str, Any], job: bool = False) -> list[FieldError]:
    """A workload's pod template validated as a pod is (ValidatePodTemplateSpec, then the
    restartPolicy a controller supports: Always for apps/v1's ValidatePodTemplateSpecForReplicaSet
    and StatefulSet/DaemonSet, OnFailure or Never for a Job, pkg/apis/batch/validation)."""
    template = spec.get("template")
    if not isinstance(template, dict):
        return [FieldError("spec.template.spec.containers", "FieldValueRequired", "")]
    pod_spec = template.get("spec")
    errs = validation.pod_spec_errors(pod_spec, "spec.template.spec")
    policy = pod_spec.get("restartPolicy", "") if isinstance(pod_spec, dict) else ""
    path = "spec.template.spec.restartPolicy"
    if not job and policy not in ("Always", ""):
        errs.append(
            FieldError(path, "FieldValueNotSupported", 'supported values: "Always"', policy)
        )
    elif job and policy in ("Always", ""):
        errs.append(FieldError(path, "FieldValueRequired", 'valid values: "OnFailure", "Never"'))
    elif job and policy not in ("OnFailure", "Never"):
        errs.append(
            FieldError(
                path, "FieldValueNotSupported", 'supported values: "OnFailure", "Never"', policy
            )
        )
    return errs


def _job_errors(obj: dict[str, Any]) -> list[FieldError]:
    """What the simulator checks of a Job (stored only, no Job controller): its pod template."""
    spec = obj.get("spec")
    return template_errors(spec if isinstance(spec, dict) else {}, job=True)


def _default_rolling(spec: dict[str, Any], field: str, defaults: dict[str, Any]) -> None:
    """SetDefaults_Deployment / _DaemonSet (pkg/apis/apps/v1/defaults.go): a strategy without a
    type (`strategy: {}` too, as kubectl create sends it) is RollingUpdate, whose unset limits
    take their defaults."""
    strategy = spec.setdefault(field, {})
    if not isinstance(strategy, dict):
        return  # validation reports it
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        if isinstance(rolling, dict):
            for key, value in defaults.items():
                if rolling.get(key) is None:
                    rolling[key] = value


def _default_workload(kind: str, obj: dict[str, Any]) -> None:
    spec = obj.setdefault("spec", {})
    if kind != "DaemonSet":
        spec.setdefault("replicas", 1)
    spec.setdefault("revisionHistoryLimit", 10)
    if kind == "Deployment":
        spec.setdefault("progressDeadlineSeconds", 600)
        _default_rolling(spec, "strategy", {"maxUnavailable": "25%", "maxSurge": "25%"})
    elif kind == "StatefulSet":
        spec.setdefault("podManagementPolicy", "OrderedReady")
        strategy = spec.setdefault("updateStrategy", {})
        if isinstance(strategy, dict):
            if not strategy.get("type"):
                strategy["type"] = "RollingUpdate"
                strategy.setdefault("rollingUpdate", {})
            rolling = strategy.get("rollingUpdate")
            if strategy["type"] == "RollingUpdate" and isinstance(rolling, dict):
                rolling.setdefault("partition", 0)
        spec.setdefault("serviceName", obj["metadata"]["name"])
        # StatefulSetAutoDeletePVC, GA in 1.32 (pkg/apis/apps/v1/defaults.go)
        spec.setdefault(
            "persistentVolumeClaimRetentionPolicy",
            {"whenDeleted": "Retain", "whenScaled": "Retain"},
        )
    elif kind == "DaemonSet":
        _default_rolling(spec, "updateStrategy", {"maxUnavailable": 1, "maxSurge": 0})
    if kind == "ReplicaSet":
        spec.pop("revisionHistoryLimit")
    template = spec.get("template")
    if isinstance(template, dict):
        default_pod_template(template)
        template.setdefault("metadata", {})
    status = obj.setdefault("status", {})
    if isinstance(status, dict):
        for key in _STATUS_COUNTS.get(kind, ()):
            status.setdefault(key, 0)


def prepare_create(rt: ResourceType, obj: dict[str, Any], schema: Schema | None = None) -> None:
    """Defaults, then validation (422) for a new object of kind `rt` (`schema`: a custom
    resource's, apiserver/crd.py)."""
    meta = obj["metadata"]
    if rt.custom or rt.kind == "CustomResourceDefinition":
        _prepare_custom(rt, None, obj, schema or {})
        return
    if rt.kind == "Namespace":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta.get("name", "")
        obj["spec"] = {"finalizers": ["kubernetes"]}
        obj["status"] = {"phase": "Active"}
    elif rt.kind in _WORKLOADS:
        _default_workload(rt.kind, obj)
        meta["generation"] = 1
        if rt.kind == "DaemonSet":
            meta.setdefault("annotations", {})[_DS_TEMPLATE_GENERATION] = "1"
        errs = validation.validate_object_meta(
            meta, label_names=rt.kind == "StatefulSet"
        ) + _workload_errors(rt.kind, obj)
        if errs:
            raise invalid(rt.kind, rt.group, meta.get("name", ""), errs)
        return
    elif rt.kind == "Job":
        errs = validation.validate_object_meta(meta) + _job_errors(obj)
        if errs:
            raise invalid(rt.kind, rt.group, meta.get("name", ""), errs)
        return
    elif rt.kind == "Node":
        _default_node(obj)
    elif rt.kind == "MutatingWebhookConfiguration":
        validation.default_mutating_webhook_configuration(obj)
        validation.validate_mutating_webhook_configuration(obj)
        meta["generation"] = 1
        return
    elif rt.kind == "PodDisruptionBudget":
        meta["generation"] = 1
        spec = obj.get("spec") or {}
        if "minAvailable" in spec and "maxUnavailable" in spec:
            raise invalid(
                rt.kind,
                rt.group,
                meta.get("name", ""),
                [
                    FieldError(
                        "spec",
                        "FieldValueInvalid",
                        "minAvailable and maxUnavailable cannot be both set",
                        "",
                    )
                ],
            )
        obj["status"] = {
            "currentHealthy": 0,
            "desiredHealthy": 0,
            "disruptionsAllowed": 0,
            "expectedPods": 0,
            "observedGeneration": 0,
        }
    errs = validation.validate_object_meta(meta, label_names=rt.kind == "Namespace")
    errs += _spec_errors(rt, obj)
    if errs:
        raise invalid(rt.kind, rt.group, meta.get("name", ""), errs)


def _default_node(node: dict[str, Any]) -> None:
    """SetDefaults_NodeStatus (pkg/apis/core/v1/defaults.go): allocatable = capacity when unset."""
    status = node.get("status")
    if isinstance(status, dict) and status.get("capacity") and not status.get("allocatable"):
        status["allocatable"] = dict(status["capacity"])


def _event_errors(event: dict[str, Any]) -> list[FieldError]:
    """ValidateEventCreate (pkg/apis/core/validation/events.go), core/v1: the involved object's
    namespace is the event's (or, for cluster-scoped objects, empty in `default`)."""
    involved = event.get("involvedObject") or {}
    ns = event["metadata"].get("namespace", "")
    theirs = involved.get("namespace", "") if isinstance(involved, dict) else ""
    if (not theirs and ns not in ("", "default")) or (theirs and theirs != ns):
        return [
            FieldError(
                "involvedObject.namespace",
                "FieldValueInvalid",
                "does not match event.namespace",
                theirs,
            )
        ]
    return []


def _spec_errors(rt: ResourceType, obj: dict[str, Any]) -> list[FieldError]:
    if rt.kind == "Event":
        return _event_errors(obj)
    if rt.kind == "Job":
        return _job_errors(obj)
    if rt.kind == "LimitRange":
        # SetDefaults_LimitRangeItem at decoding: stored and validated with its defaults
        if isinstance(obj.get("spec"), dict):
            obj["spec"] = limitranger.default_limit_range(obj)["spec"]
        return limitrangevalidation.limit_range_errors(obj)
    if rt.kind == "Lease":
        return limitrangevalidation.lease_errors(obj)
    return []


def _default_and_bump(rt: ResourceType, old: dict[str, Any], new: dict[str, Any]) -> None:
    meta = new["metadata"]
    if rt.kind in _WORKLOADS:
        _default_workload(rt.kind, new)
    elif rt.kind == "MutatingWebhookConfiguration":
        validation.default_mutating_webhook_configuration(new)
    changed = new.get("spec") != old.get("spec") or new.get("webhooks") != old.get("webhooks")
    if rt.kind == "Deployment":
        # annotations are copied to the ReplicaSets: a change bumps the generation too
        # (pkg/registry/apps/deployment/strategy.go PrepareForUpdate)
        changed = changed or (meta.get("annotations") or {}) != (
            old["metadata"].get("annotations") or {}
        )
    meta["generation"] = old["metadata"].get("generation", 1) + (1 if changed else 0)


def prepare_update(
    rt: ResourceType, old: dict[str, Any], new: dict[str, Any], schema: Schema | None = None
) -> None:
    """Carry what an update may not change, bump generation on spec changes, validate."""
    meta = new["metadata"]
    if rt.custom or rt.kind == "CustomResourceDefinition":
        _prepare_custom(rt, old, new, schema or {})
        return
    if rt.kind in _WORKLOADS or rt.kind in ("MutatingWebhookConfiguration", "PodDisruptionBudget"):
        _default_and_bump(rt, old, new)
    if rt.kind == "DaemonSet":
        _carry_template_generation(old, new)
    if rt.kind == "Namespace":
        meta.setdefault("labels", {})["kubernetes.io/metadata.name"] = meta["name"]
    if rt.kind in _WORKLOADS:
        errs = validation.validate_object_meta(
            meta, label_names=rt.kind == "StatefulSet"
        ) + _workload_errors(rt.kind, new)
        old_sel = (old.get("spec") or {}).get("selector")
        if rt.kind != "ReplicaSet" and (new.get("spec") or {}).get("selector") != old_sel:
            errs.append(
                FieldError(
                    "spec.selector",
                    "FieldValueInvalid",
                    "field is immutable",
                    str(new["spec"].get("selector")),
                )
            )
        if errs:
            raise invalid(rt.kind, rt.group, meta["name"], errs)
    elif rt.kind == "MutatingWebhookConfiguration":
        validation.validate_mutating_webhook_configuration(new)
    elif rt.kind in ("Job", "LimitRange", "Lease"):
        errs = validation.validate_object_meta(meta) + _spec_errors(rt, new)
        if errs:
            raise invalid(rt.kind, rt.group, meta["name"], errs)
    elif rt.kind == "Pod":
        bump_pod_generation(old, new)
        validation.validate_pod(new)
        if _pod_spec_mutable_view(new) != _pod_spec_mutable_view(old):
            raise invalid(
                "Pod",
                "",
                meta["name"],
                [
                    FieldError(
                        "spec",
                        "FieldValueForbidden",
                        "pod updates may not change fields other than "
                        "`spec.containers[*].image`,`spec.initContainers[*].image`,"
                        "`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to "
                        "existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to "
                        "be set to 1 if it was previously negative)",
                    )
                ],
            )


def bump_pod_generation(old: dict[str, Any], new: dict[str, Any]) -> None:
    """A pod's metadata.generation (KEP-5067, pkg/registry/core/pod/strategy.go): 1 when
    created, one more for each write that changes its spec (an image, a resize)."""
    generation = old["metadata"].get("generation") or 1
    changed = new.get("spec") != old.get("spec")
    new["metadata"]["generation"] = generation + (1 if changed else 0)


def _pod_spec_mutable_view(pod: dict[str, Any]) -> dict[str, Any]:
    """The pod spec without the fields an update may change."""
    spec = dict(pod.get("spec") or {})
    for field in ("activeDeadlineSeconds", "tolerations", "terminationGracePeriodSeconds"):
        spec.pop(field, None)
    for field in ("containers", "initContainers"):
        spec[field] = [{k: v for k, v in c.items() if k != "image"} for c in spec.get(field) or []]
    return spec


def _prepare_custom(
    rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], schema: Schema
) -> None:
    """A CustomResourceDefinition, or a custom resource against its definition's schema
    (apiserver/crd.py): pruned, checked, its generation kept or bumped."""
    meta = new["metadata"]
    if rt.custom:
        if old is None and rt.has_status:
            new.pop("status", None)  # the status subresource's: never set by a create
        pruned = crd.prune(new, schema, root=True)
        new.clear()
        new.update(pruned)
        errs = validation.validate_object_meta(meta) + crd.type_errors(new, schema)
        changed = old is not None and crd.spec_changed(rt, old, new)
    else:
        crd.default(new)
        errs = validation.validate_object_meta(meta) + crd.validate(new, old)
        changed = old is not None and new.get("spec") != old.get("spec")
    if errs:
        raise invalid(rt.kind, rt.group, meta.get("name", ""), errs)
    previous = 0 if old is None else old["metadata"].get("generation", 1)
    meta["generation"] = 1 if old is None else previous + (1 if changed else 0)
