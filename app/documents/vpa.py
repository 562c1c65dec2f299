"""VerticalPodAutoscaler objects -> rightsizer policy documents (for `rightsizer policy import`).

The fields map one to one (a policy is the database twin of a VPA object, docs/policies.md); what a
policy cannot express is reported, not silently dropped.
"""

from __future__ import annotations

from typing import Any

from app.core.recommend.strategies import NAMES as STRATEGIES
from app.documents.fields import FieldError
from app.documents.policy import CONTAINER_FIELDS, PolicyInvalid, parse_policy

CONTAINER_KEYS = tuple(sorted(CONTAINER_FIELDS - {"integerCPU"}))  # integerCPU: an annotation
# VPA's IntegerCPUPostProcessor opt-in (vertical-pod-autoscaler pkg/recommender/routines/
# cpu_integer_post_processor.go): vpa-post-processor.kubernetes.io/{containerName}_integerCPU=true
INTEGER_CPU_PREFIX, INTEGER_CPU_SUFFIX = "vpa-post-processor.kubernetes.io/", "_integerCPU"


def integer_cpu_containers(annotations: Any) -> list[str]:
    """The containers a VPA object opts in to whole-core CPU, as VPA reads its annotations."""
    if not isinstance(annotations, dict):
        return []
    out = []
    for key, value in sorted(annotations.items()):
        if not isinstance(key, str) or value != "true":
            continue
        if key.startswith(INTEGER_CPU_PREFIX) and key.endswith(INTEGER_CPU_SUFFIX):
            name = key[len(INTEGER_CPU_PREFIX) : len(key) - len(INTEGER_CPU_SUFFIX)]
            if name:
                out.append(name)
    return out


def recommender_from_vpa(selectors: Any, warnings: list[str]) -> str | None:
    """VPA's `spec.recommenders` -> the policy's `recommender` (None: the default, vpa).

    VPA (pkg/admission-controller/resource/vpa/validation.go) allows at most one selector; no
    selector, or one naming VPA's own recommender ("default", input.DefaultRecommenderName in
    pkg/recommender/input/cluster_feeder.go), means VPA's recommender: here `vpa`. A selector
    naming one of rightsizer's strategies picks it; any other name is reported and left out."""
    if not selectors:
        return None
    if not isinstance(selectors, list) or not all(isinstance(s, dict) for s in selectors):
        raise PolicyInvalid([FieldError("spec.recommenders", "must be a list of {name: ...}")])
    if len(selectors) > 1:
        raise PolicyInvalid(
            [
                FieldError(
                    "spec.recommenders", f"Too many: {len(selectors)}: must have at most 1 item"
                )
            ]
        )
    name = selectors[0].get("name")
    if name == "default":
        return None
    if name in STRATEGIES:
        return str(name)
    warnings.append(
        f"spec.recommenders[0].name {name!r} is not a rightsizer recommender "
        f"({', '.join(STRATEGIES)}); left out, so the policy uses vpa"
    )
    return None


def policy_from_vpa(vpa: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """The policy document and warnings for what was left out. Raises PolicyInvalid."""
    meta, spec = vpa.get("metadata") or {}, vpa.get("spec") or {}
    warnings: list[str] = []
    ref = spec.get("targetRef") or {}
    doc: dict[str, Any] = {
        "name": meta.get("name"),
        "namespace": meta.get("namespace") or "default",
    }
    if ref:
        doc["target"] = {"kind": ref.get("kind"), "name": ref.get("name")}
    update = spec.get("updatePolicy") or {}
    doc["updateMode"] = update.get("updateMode", "Recreate")  # VPA's default is Auto (= Recreate)
    if update.get("minReplicas") is not None:
        doc["minReplicas"] = update["minReplicas"]
    for extra in sorted(set(update) - {"updateMode", "minReplicas"}):
        warnings.append(f"spec.updatePolicy.{extra} has no equivalent and was left out")
    policies = []
    for i, cp in enumerate((spec.get("resourcePolicy") or {}).get("containerPolicies") or []):
        policies.append({k: cp[k] for k in CONTAINER_KEYS if k in cp})
        for extra in sorted(set(cp) - set(CONTAINER_KEYS)):
            warnings.append(f"spec.resourcePolicy.containerPolicies[{i}].{extra} was left out")
    for name in integer_cpu_containers(meta.get("annotations")):
        entry = next((p for p in policies if p.get("containerName", "*") == name), None)
        if entry is None:
            entry = {"containerName": name}
            policies.append(entry)
        entry["integerCPU"] = True
    if policies:
        doc["containerPolicies"] = policies
    recommender = recommender_from_vpa(spec.get("recommenders"), warnings)
    if recommender is not None:
        doc["recommender"] = recommender
    for extra in sorted(
        set(spec) - {"targetRef", "updatePolicy", "resourcePolicy", "recommenders"}
    ):
        warnings.append(f"spec.{extra} (e.g. a custom recommender) was left out")
    parse_policy(doc)  # the same validation the API applies
    return doc, warnings


__all__ = ["PolicyInvalid", "policy_from_vpa"]
