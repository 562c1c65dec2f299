"""VerticalPodAutoscaler objects <-> rightsizer policy documents (`rightsizer policy import` and
`rightsizer policy export`).

The fields map one to one (a policy is the database twin of a VPA object, docs/policies.md), as
vertical-pod-autoscaler 1.7's pkg/apis/autoscaling.k8s.io/v1/types.go lays them out:
`spec.targetRef`, `spec.updatePolicy` (updateMode, minReplicas, evictionRequirements,
evictAfterOOMSeconds), `spec.resourcePolicy.containerPolicies` (startupBoost included),
`spec.startupBoost` and `spec.recommenders`; a container's integerCPU is VPA's
`vpa-post-processor.kubernetes.io/{container}_integerCPU` annotation. What VPA has no field for
(inPlaceSkipDisruptionBudget, recommenderParams, nodeGroupLabel, placement, clusters, integerCPU
of the `*` entry) travels in the object's `rightsizer.io/policy-fields` annotation, which VPA
ignores, so that exporting a policy and importing it back gives the same policy. What a policy
cannot express is reported, not silently dropped; a policy VPA cannot express (no target, or a
cluster default) is not exported.
"""

from __future__ import annotations

import json
from typing import Any

from app.core.policy import CLUSTER_WIDE, TARGET_KINDS
from app.core.recommend.strategies import NAMES as STRATEGIES
from app.documents.fields import FieldError
from app.documents.policy import CONTAINER_FIELDS, PolicyInvalid, parse_policy
from app.documents.stored import without_read_only
from app.documents.vpa_params import PER_VPA_FIELDS, per_vpa_params

CONTAINER_KEYS = tuple(sorted(CONTAINER_FIELDS - {"integerCPU"}))  # integerCPU: an annotation
UPDATE_POLICY_KEYS = ("updateMode", "minReplicas", "evictionRequirements", "evictAfterOOMSeconds")
SPEC_KEYS = ("targetRef", "updatePolicy", "resourcePolicy", "recommenders", "startupBoost")
# What VPA has no field for, as JSON: {"inPlaceSkipDisruptionBudget": ..., "recommenderParams":
# ..., "integerCPU": ["*"]}.
EXTRAS_ANNOTATION = "rightsizer.io/policy-fields"
EXTRA_FIELDS = (
    "inPlaceSkipDisruptionBudget",
    "recommenderParams",
    "nodeGroupLabel",
    "observationWindow",
    "placement",
    "clusters",  # a fleet's policy: the clusters it targets (app.documents.cluster_target)
)
API_VERSIONS = {"Job": "batch/v1", "CronJob": "batch/v1"}  # the others are apps/v1
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


def _target(ref: dict[str, Any]) -> dict[str, Any]:
    """A targetRef as a policy's target: apiVersion kept for a kind beyond the six (any kind with
    a /scale subresource, an Argo Rollout)."""
    target = {"kind": ref.get("kind"), "name": ref.get("name")}
    if ref.get("kind") not in TARGET_KINDS and ref.get("apiVersion") is not None:
        target["apiVersion"] = ref["apiVersion"]
    return target


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
        doc["target"] = _target(ref)
    update = spec.get("updatePolicy") or {}
    doc["updateMode"] = update.get("updateMode", "Recreate")  # VPA's default is Auto (= Recreate)
    for key in UPDATE_POLICY_KEYS[1:]:
        if update.get(key) is not None:
            doc[key] = update[key]
    for extra in sorted(set(update) - set(UPDATE_POLICY_KEYS)):
        warnings.append(f"spec.updatePolicy.{extra} has no equivalent and was left out")
    if spec.get("startupBoost") is not None:
        doc["startupBoost"] = spec["startupBoost"]
    chosen: list[str] = []  # the recommender's warnings, reported after the containers'
    recommender = recommender_from_vpa(spec.get("recommenders"), chosen)
    policies, params = [], {}
    for i, cp in enumerate((spec.get("resourcePolicy") or {}).get("containerPolicies") or []):
        policies.append({k: cp[k] for k in CONTAINER_KEYS if k in cp})
        where = f"spec.resourcePolicy.containerPolicies[{i}]"
        params.update(per_vpa_params(cp, where, recommender, warnings))  # app.documents.vpa_params
        for extra in sorted(set(cp) - set(CONTAINER_KEYS) - set(PER_VPA_FIELDS)):
            warnings.append(f"{where}.{extra} was left out")
    _integer_cpu(policies, integer_cpu_containers(meta.get("annotations")))
    extras = _extras(meta.get("annotations"), warnings)
    _integer_cpu(policies, extras.pop("integerCPU", None) or [])
    if policies:
        doc["containerPolicies"] = policies
    warnings += chosen
    if recommender is not None:
        doc["recommender"] = recommender
    if params:  # what the extras annotation (policy export) says wins
        doc["recommenderParams"] = {**params, **(extras.pop("recommenderParams", None) or {})}
    doc.update(extras)
    for extra in sorted(set(spec) - set(SPEC_KEYS)):
        warnings.append(f"spec.{extra} has no equivalent and was left out")
    parse_policy(doc)  # the same validation the API applies
    return doc, warnings


def _integer_cpu(policies: list[dict[str, Any]], names: list[str]) -> None:
    """Marks each named container's entry integerCPU (adding the entry when there is none)."""
    for name in names:
        entry = next((p for p in policies if p.get("containerName", "*") == name), None)
        if entry is None:
            entry = {"containerName": name}
            policies.append(entry)
        entry["integerCPU"] = True


def _extras(annotations: Any, warnings: list[str]) -> dict[str, Any]:
    """The fields of EXTRAS_ANNOTATION (written by `policy export`)."""
    text = annotations.get(EXTRAS_ANNOTATION) if isinstance(annotations, dict) else None
    if text is None:
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        doc = None
    if not isinstance(doc, dict):
        warnings.append(f"metadata.annotations[{EXTRAS_ANNOTATION}] is not a JSON object; ignored")
        return {}
    out = {k: doc[k] for k in (*EXTRA_FIELDS, "integerCPU") if k in doc}
    for extra in sorted(set(doc) - set(out)):
        warnings.append(f"metadata.annotations[{EXTRAS_ANNOTATION}].{extra} was left out")
    return out


class NotExportable(ValueError):
    """The policy has no VerticalPodAutoscaler equivalent (no target, or a cluster default)."""


def vpa_from_policy(doc: dict[str, Any]) -> dict[str, Any]:
    """The VerticalPodAutoscaler (autoscaling.k8s.io/v1) of a policy document (as the API serves
    it; read-only fields are left out). Raises PolicyInvalid, or NotExportable."""
    parse_policy(without_read_only(doc))
    target = doc.get("target")
    if doc["namespace"] == CLUSTER_WIDE or not target or "selector" in target:
        what = (
            "a cluster default"
            if doc["namespace"] == CLUSTER_WIDE
            else "a selector policy"
            if target
            else "namespace-wide"
        )
        raise NotExportable(
            f"policy {doc['namespace']}/{doc['name']} is {what}: a VerticalPodAutoscaler needs "
            "a targetRef (one workload)"
        )
    update = {"updateMode": doc.get("updateMode", "Off")}
    update.update({k: doc[k] for k in UPDATE_POLICY_KEYS[1:] if doc.get(k) is not None})
    spec: dict[str, Any] = {
        "targetRef": {
            "apiVersion": target.get("apiVersion") or API_VERSIONS.get(target["kind"], "apps/v1"),
            "kind": target["kind"],
            "name": target["name"],
        },
        "updatePolicy": update,
    }
    annotations: dict[str, str] = {}
    extras: dict[str, Any] = {k: doc[k] for k in EXTRA_FIELDS if doc.get(k) is not None}
    containers = []
    for cp in doc.get("containerPolicies") or []:
        name = cp.get("containerName", "*")
        entry = {"containerName": name, **{k: v for k, v in cp.items() if k in CONTAINER_KEYS}}
        containers.append(entry)
        if cp.get("integerCPU") is True:
            if name == "*":  # not an annotation key VPA's post-processor reads
                extras.setdefault("integerCPU", []).append(name)
            else:
                annotations[f"{INTEGER_CPU_PREFIX}{name}{INTEGER_CPU_SUFFIX}"] = "true"
    if containers:
        spec["resourcePolicy"] = {"containerPolicies": containers}
    if doc.get("startupBoost") is not None:
        spec["startupBoost"] = doc["startupBoost"]
    if doc.get("recommender") is not None:
        spec["recommenders"] = [{"name": doc["recommender"]}]
    if extras:
        annotations[EXTRAS_ANNOTATION] = json.dumps(extras, sort_keys=True, separators=(",", ":"))
    metadata: dict[str, Any] = {"name": doc["name"], "namespace": doc["namespace"]}
    if annotations:
        metadata["annotations"] = dict(sorted(annotations.items()))
    return {
        "apiVersion": "autoscaling.k8s.io/v1",
        "kind": "VerticalPodAutoscaler",
        "metadata": metadata,
        "spec": spec,
    }


__all__ = ["NotExportable", "PolicyInvalid", "policy_from_vpa", "vpa_from_policy"]
