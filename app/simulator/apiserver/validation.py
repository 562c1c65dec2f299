"""The part of kube-apiserver's validation that matters here, with its field paths and messages.

Admission webhooks can return any JSON Patch; a real API server validates the patched pod and
answers 422 Invalid when it is wrong, and so must the simulator, or a broken patch would pass.
"""

from __future__ import annotations

import re
from typing import Any

from app.simulator.apiserver import deletion, limitranger, quantity
from app.simulator.apiserver.errors import FieldError, invalid

_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_STANDARD_RESOURCES = {"cpu", "memory", "ephemeral-storage"}
# apimachinery's pkg/util/validation (IsDNS1123Subdomain, IsDNS1123Label): the message, then
# an example and the regular expression (RegexError).
_DNS_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric "
    "characters, '-' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_DNS_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters "
    "or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  "
    "or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)


def is_dns_subdomain(name: str) -> bool:
    return len(name) <= 253 and bool(_DNS_SUBDOMAIN.match(name))


def validate_object_meta(meta: dict[str, Any], *, label_names: bool = False) -> list[FieldError]:
    errs: list[FieldError] = []
    name = meta.get("name")
    if not name:
        errs.append(
            FieldError("metadata.name", "FieldValueRequired", "name or generateName is required")
        )
    elif label_names and not (len(name) <= 63 and _DNS_LABEL.match(name)):
        errs.append(FieldError("metadata.name", "FieldValueInvalid", _DNS_LABEL_MSG, name))
    elif not is_dns_subdomain(name):
        errs.append(FieldError("metadata.name", "FieldValueInvalid", _DNS_SUBDOMAIN_MSG, name))
    for field in ("labels", "annotations"):
        values = meta.get(field)
        if values is not None and (
            not isinstance(values, dict) or not all(isinstance(v, str) for v in values.values())
        ):
            errs.append(
                FieldError(
                    f"metadata.{field}",
                    "FieldValueInvalid",
                    "must be a map of strings",
                    str(values),
                )
            )
    return errs + deletion.validate_finalizers(meta.get("finalizers"))


def validate_pod(pod: dict[str, Any]) -> None:
    """Raise 422 Invalid, like kube-apiserver, for a pod it would refuse to store."""
    meta = pod.get("metadata") or {}
    errs = validate_object_meta(meta) + pod_spec_errors(pod.get("spec"), "spec")
    if errs:
        raise invalid("Pod", "", meta.get("name") or meta.get("generateName") or "", errs)


def pod_spec_errors(spec: Any, path: str) -> list[FieldError]:
    """ValidatePodSpec's checks kept here, for a pod's `spec` or a workload's
    `spec.template.spec` (ValidatePodTemplateSpec validates a template as a pod's spec)."""
    if not isinstance(spec, dict):
        return [FieldError(path, "FieldValueRequired", "")]
    errs: list[FieldError] = []
    containers = spec.get("containers")
    if not isinstance(containers, list) or not containers:
        errs.append(FieldError(f"{path}.containers", "FieldValueRequired", ""))
    else:
        errs += _validate_containers(containers, f"{path}.containers")
    errs += _validate_containers(spec.get("initContainers") or [], f"{path}.initContainers")
    if spec.get("resources") is not None:
        errs += validate_pod_resources(spec, f"{path}.resources")
    return errs


def _validate_containers(containers: list[Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, c in enumerate(containers):
        p = f"{path}[{i}]"
        if not isinstance(c, dict):
            errs.append(FieldError(p, "FieldValueInvalid", "must be an object", str(c)))
            continue
        name = c.get("name")
        if not name:
            errs.append(FieldError(f"{p}.name", "FieldValueRequired", ""))
        elif not isinstance(name, str) or len(name) > 63 or not _DNS_LABEL.match(name):
            errs.append(FieldError(f"{p}.name", "FieldValueInvalid", _DNS_LABEL_MSG, name))
        elif name in seen:
            errs.append(FieldError(f"{p}.name", "FieldValueDuplicate", "", name))
        else:
            seen.add(name)
        if not c.get("image"):
            errs.append(FieldError(f"{p}.image", "FieldValueRequired", ""))
        errs += validate_resources(c.get("resources") or {}, f"{p}.resources")
    return errs


def _amount(path: str, raw: Any, errs: list[FieldError]) -> Any:
    """The quantity at `path`, or None with the error kube-apiserver gives appended to `errs`
    (ValidateResourceQuantityValue: parseable and not negative)."""
    try:
        q = quantity.parse(raw)
    except ValueError as e:
        errs.append(FieldError(path, "FieldValueInvalid", str(e), raw))
        return None
    if q < 0:
        errs.append(
            FieldError(path, "FieldValueInvalid", "must be greater than or equal to 0", raw)
        )
        return None
    return q


def validate_resources(resources: Any, path: str) -> list[FieldError]:
    if not isinstance(resources, dict):
        return [FieldError(path, "FieldValueInvalid", "must be an object", str(resources))]
    errs: list[FieldError] = []
    parsed = _parse_sections(resources, path, errs)
    errs += _requests_within_limits(parsed, path)
    return errs


def _parse_sections(
    resources: dict[str, Any], path: str, errs: list[FieldError], *, pod_level: bool = False
) -> dict[str, dict[str, Any]]:
    """{"limits"|"requests": {resource: (Decimal, text)}} of a ResourceRequirements, with
    kube-apiserver's errors for the rest appended to `errs`: a section that is not a map, a
    resource name neither standard nor fully qualified (validateResourceName), and a quantity that
    does not parse or is negative. `pod_level`: only the resources pod-level `spec.resources`
    supports (validatePodResources), visited in name order."""
    parsed: dict[str, dict[str, Any]] = {}
    for kind in ("limits", "requests"):
        values = resources.get(kind) or {}
        if not isinstance(values, dict):
            errs.append(
                FieldError(f"{path}.{kind}", "FieldValueInvalid", "must be a map", str(values))
            )
            continue
        for res, raw in sorted(values.items()) if pod_level else values.items():
            fp = f"{path}.{kind}[{res}]"
            if (
                res not in _STANDARD_RESOURCES
                and "/" not in res
                and not res.startswith("hugepages-")
            ):
                errs.append(
                    FieldError(
                        fp,
                        "FieldValueInvalid",
                        "must be a standard resource type or fully qualified",
                        res,
                    )
                )
                if not pod_level and "/" not in res:  # ValidateContainerResourceName
                    errs.append(
                        FieldError(
                            fp,
                            "FieldValueInvalid",
                            "must be a standard resource for containers",
                            res,
                        )
                    )
                continue
            if pod_level and not limitranger.is_pod_level_resource(res):
                errs.append(
                    FieldError(
                        fp,
                        "FieldValueNotSupported",
                        'supported values: "cpu", "hugepages-", "memory"',
                        res,
                    )
                )
                continue
            q = _amount(fp, raw, errs)
            if q is not None:
                parsed.setdefault(kind, {})[res] = (q, raw)
    return parsed


def _requests_within_limits(parsed: dict[str, dict[str, Any]], path: str) -> list[FieldError]:
    """A request above its limit (validateResourceRequirements / validatePodResourceRequirements
    in pkg/apis/core/validation/validation.go): values printed as Quantity.String() prints."""
    errs: list[FieldError] = []
    for res, (req, raw) in sorted(parsed.get("requests", {}).items()):
        lim = parsed.get("limits", {}).get(res)
        if lim is not None and req > lim[0]:
            errs.append(
                FieldError(
                    f"{path}.requests",
                    "FieldValueInvalid",
                    f"must be less than or equal to {res} limit of {quantity.canonical(lim[1])}",
                    quantity.canonical(raw),
                )
            )
    return errs


def validate_pod_resources(spec: dict[str, Any], path: str = "spec.resources") -> list[FieldError]:
    """Pod-level `spec.resources` (PodLevelResources on), after `validatePodResources` and
    `validatePodResourceConsistency` in pkg/apis/core/validation/validation.go: only cpu,
    memory and hugepages-*; quantities >= 0; requests <= limits; pod requests >= the aggregate
    container requests (init containers and sidecars as the scheduler counts them); each
    container's limit <= the pod limit."""
    resources = spec["resources"]
    if not isinstance(resources, dict):
        return [FieldError(path, "FieldValueInvalid", "must be an object", str(resources))]
    errs: list[FieldError] = []
    if resources.get("claims"):
        errs.append(
            FieldError(
                f"{path}.claims",
                "FieldValueForbidden",
                "claims cannot be set for Resources at pod-level",
            )
        )
    parsed = _parse_sections(resources, path, errs, pod_level=True)
    errs += _requests_within_limits(parsed, path)
    try:
        aggregate = limitranger.aggregate_container_resources({"spec": spec}, "requests")
        containers = [
            (i, limitranger.resource_list((c.get("resources") or {}).get("limits")))
            for i, c in enumerate(spec.get("containers") or [])
            if isinstance(c, dict)
        ]
    except ValueError:  # container quantities are reported by the container checks
        return errs
    pod_requests = parsed.get("requests", {})
    pod_limits = parsed.get("limits", {})
    for res, agg in sorted(aggregate.items()):
        if res in pod_requests and agg.value > pod_requests[res][0]:
            errs.append(
                FieldError(
                    f"{path}.requests[{res}]",
                    "FieldValueInvalid",
                    f"must be greater than or equal to aggregate container requests of {agg}",
                    quantity.canonical(pod_requests[res][1]),
                )
            )
    for i, limits in containers:
        for res, lim in sorted(limits.items()):
            if res in pod_limits and lim.value > pod_limits[res][0]:
                errs.append(
                    FieldError(
                        f"{path}.containers[{i}][{res}].limits",
                        "FieldValueInvalid",
                        "must be less than or equal to pod limits of "
                        f"{quantity.canonical(pod_limits[res][1])}",
                        str(lim),
                    )
                )
    return errs


def validate_mutating_webhook_configuration(obj: dict[str, Any]) -> None:
    meta = obj.get("metadata") or {}
    errs = validate_object_meta(meta)
    names: set[str] = set()
    for i, hook in enumerate(obj.get("webhooks") or []):
        p = f"webhooks[{i}]"
        name = hook.get("name") or ""
        if not name:
            errs.append(FieldError(f"{p}.name", "FieldValueRequired", ""))
        elif not is_dns_subdomain(name) or name.count(".") < 2:
            errs.append(
                FieldError(
                    f"{p}.name",
                    "FieldValueInvalid",
                    "should be a domain with at least three segments separated by dots",
                    name,
                )
            )
        elif name in names:
            errs.append(FieldError(f"{p}.name", "FieldValueDuplicate", "", name))
        names.add(name)
        versions = hook.get("admissionReviewVersions") or []
        if not any(v in ("v1", "v1beta1") for v in versions):
            errs.append(
                FieldError(
                    f"{p}.admissionReviewVersions",
                    "FieldValueRequired",
                    "must specify one of v1, v1beta1",
                )
            )
        if hook.get("sideEffects") not in ("None", "NoneOnDryRun"):
            errs.append(
                FieldError(
                    f"{p}.sideEffects",
                    "FieldValueNotSupported",
                    'supported values: "None", "NoneOnDryRun"',
                    hook.get("sideEffects"),
                )
            )
        cc = hook.get("clientConfig") or {}
        if ("url" in cc) == ("service" in cc):
            errs.append(
                FieldError(
                    f"{p}.clientConfig",
                    "FieldValueRequired",
                    "exactly one of url or service is required",
                )
            )
        timeout = hook.get("timeoutSeconds", 10)
        if not isinstance(timeout, int) or not 1 <= timeout <= 30:
            errs.append(
                FieldError(
                    f"{p}.timeoutSeconds",
                    "FieldValueInvalid",
                    "the timeout value must be between 1 and 30 seconds",
                    timeout,
                )
            )
        for field, allowed in (
            ("failurePolicy", ("Fail", "Ignore")),
            ("reinvocationPolicy", ("Never", "IfNeeded")),
            ("matchPolicy", ("Exact", "Equivalent")),
        ):
            if hook.get(field) not in (None, *allowed):
                errs.append(
                    FieldError(
                        f"{p}.{field}",
                        "FieldValueNotSupported",
                        "supported values: " + ", ".join(f'"{a}"' for a in allowed),
                        hook.get(field),
                    )
                )
    if errs:
        raise invalid(
            "MutatingWebhookConfiguration",
            "admissionregistration.k8s.io",
            meta.get("name", ""),
            errs,
        )


def default_mutating_webhook_configuration(obj: dict[str, Any]) -> None:
    """The API server's defaults, so that clients read back what a real cluster stores."""
    for hook in obj.get("webhooks") or []:
        hook.setdefault("failurePolicy", "Fail")
        hook.setdefault("matchPolicy", "Equivalent")
        hook.setdefault("namespaceSelector", {})
        hook.setdefault("objectSelector", {})
        hook.setdefault("timeoutSeconds", 10)
        hook.setdefault("reinvocationPolicy", "Never")
        svc = (hook.get("clientConfig") or {}).get("service")
        if svc is not None:
            svc.setdefault("port", 443)
        for rule in hook.get("rules") or []:
            rule.setdefault("scope", "*")
