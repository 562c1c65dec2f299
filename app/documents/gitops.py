"""`rightsizer export`'s files: the recommended requests as the REST API reports them
(GET /api/v1/recommendations), rendered for manifests kept in git. Pure: API documents in, file
texts out; app/cli/gitops.py reads the API, writes the files and commits them.

Three formats (docs/cli.md, "GitOps output"):

- `patch`: a strategic-merge patch per workload, `<namespace>/<kind>-<name>.yaml`, setting each
  container's `resources.requests` in the pod template (`spec.template`, a CronJob's
  `spec.jobTemplate.spec.template`);
- `kustomize`: the same patches and a `kustomization.yaml`, a kustomize Component listing them
  (each targeted by kind and name: `kustomization`), for an overlay's `components:`;
- `helm-values`: one `values.yaml`, `rightsizer.<namespace>.<kind>.<name>.<container>` holding the
  container's `resources` (`requests`).

Only what rightsizer itself would set goes in: a resource in a container's `excluded` (an HPA
scales it, its policy leaves it alone, the namespace is never sized) and a container with less
history than the updater needs (`history.enough` false) are left out, each named in `left_out`.
Limits are not written: the API does not report them (the webhook keeps each limit's ratio to its
request at admission, which a static patch cannot). Every file starts with `HEADER`, keys are
sorted and nothing depends on the time, so an unchanged recommendation gives the same bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import yaml

from app.core.job_families import FAMILY_KIND

FORMATS = ("kustomize", "helm-values", "patch")
HEADER = "# Written by `rightsizer export`: recommended requests. Rerun it rather than edit this.\n"
KUSTOMIZATION = "kustomization.yaml"
VALUES = "values.yaml"
# The kinds whose pod template rightsizer knows where to find, with their apiVersion.
API_VERSIONS = {
    "CronJob": "batch/v1",
    "DaemonSet": "apps/v1",
    "Deployment": "apps/v1",
    "Job": "batch/v1",
    "ReplicaSet": "apps/v1",
    "StatefulSet": "apps/v1",
}
RESOURCES = ("cpu", "memory")


@dataclass(frozen=True)
class Workload:
    """One workload's recommended requests (container -> resource -> quantity) and the API's
    evidence for them, as lines of a commit message."""

    namespace: str
    kind: str
    name: str
    requests: dict[str, dict[str, str]]
    evidence: list[str]

    @property
    def ref(self) -> str:
        return f"{self.namespace}/{self.kind}/{self.name}"


@dataclass
class Export:
    files: dict[str, str] = field(default_factory=dict)  # path under DIR ("/"-separated) -> text
    workloads: list[Workload] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # what was not written, and why


def _dump(data: Any) -> str:
    text: str = yaml.safe_dump(data, sort_keys=True, default_flow_style=False)
    return HEADER + text


def patch_path(w: Workload) -> str:
    """`<namespace>/<kind>-<name>.yaml`: a kind has no `-`, so no two workloads share a path."""
    return f"{w.namespace}/{w.kind.lower()}-{w.name}.yaml"


def strategic_merge_patch(w: Workload) -> dict[str, Any]:
    """The workload's object with only its containers' `resources.requests`: containers merge by
    name (their patchMergeKey), so the rest of each container, and the other containers, stay."""
    pod_spec = {
        "containers": [
            {"name": c, "resources": {"requests": dict(sorted(r.items()))}}
            for c, r in sorted(w.requests.items())
        ]
    }
    template: dict[str, Any] = {"template": {"spec": pod_spec}}
    spec = {"jobTemplate": {"spec": template}} if w.kind == "CronJob" else template
    return {
        "apiVersion": API_VERSIONS[w.kind],
        "kind": w.kind,
        "metadata": {"name": w.name, "namespace": w.namespace},
        "spec": spec,
    }


def _number(value: Any) -> str:
    return f"{value:g}" if isinstance(value, int | float) else str(value)


def _evidence(doc: Mapping[str, Any], kept: Sequence[Mapping[str, Any]]) -> list[str]:
    """What the API says of the workload, numbers only as it gives them."""
    said = []
    total = doc.get("estimatedSavings")
    if isinstance(total, Mapping):
        pods = f" ({_number(doc['replicas'])})" if doc.get("replicas") is not None else ""
        said.append(
            f"estimated savings {_number(total.get('cpuCores'))} cores, "
            f"{_number(total.get('memoryGiB'))} GiB over its live pods{pods}"
        )
    if doc.get("savingsBasis"):
        said.append(f"savings basis {doc['savingsBasis']}")
    head = f"{doc['namespace']}/{doc['kind']}/{doc['name']}: {'; '.join(said) or '-'}"
    lines = [head]
    held = [
        str(c.get("type"))
        for c in doc.get("conditions") or []
        if c.get("status") == "True" and c.get("type") != "RecommendationProvided"
    ]
    if held:
        lines.append(f"  conditions: {', '.join(held)}")
    for c in kept:
        target, lower = c.get("target") or {}, c.get("lowerBound") or {}
        upper, current = c.get("upperBound") or {}, c.get("currentRequests") or {}
        parts = []
        for r in RESOURCES:
            if r not in target:
                continue
            now = f"{current[r]} -> " if r in current else ""
            parts.append(
                f"{r} {now}{target[r]} (lower bound {lower.get(r, '?')}, "
                f"upper bound {upper.get(r, '?')})"
            )
        lines.append(f"  {c['name']}: {'; '.join(parts)}")
        h = c.get("history")
        if isinstance(h, Mapping):
            lines.append(
                f"    history {_number(h.get('hours'))} h ({_number(h.get('neededHours'))} h "
                f"needed), {_number(c.get('sampleCount'))} samples"
            )
        for r, why in sorted((c.get("excluded") or {}).items()):
            lines.append(f"    {r} left as it is: {why}")
        if c.get("reason"):
            lines.append(f"    {c['reason']}")
    return lines


def _sized(doc: Mapping[str, Any], left_out: list[str]) -> Workload | None:
    ref = f"{doc['namespace']}/{doc['kind']}/{doc['name']}"
    if not doc.get("containers"):
        return None  # known only by its conditions: nothing recommended
    if doc["kind"] == FAMILY_KIND:
        left_out.append(
            f"{ref}: a Job family has no manifest of its own; its Jobs are sized by the webhook"
        )
        return None
    if doc["kind"] not in API_VERSIONS:
        left_out.append(f"{ref}: kind {doc['kind']}: rightsizer does not know its pod template")
        return None
    requests: dict[str, dict[str, str]] = {}
    kept = []
    for c in doc["containers"]:
        where = f"{ref} container {c['name']}"
        h = c.get("history")
        if isinstance(h, Mapping) and h.get("enough") is False:
            left_out.append(
                f"{where}: not enough history ({_number(h.get('hours'))} hours of "
                f"{_number(h.get('neededHours'))})"
            )
            continue
        excluded = c.get("excluded") or {}
        target = c.get("target") or {}
        chosen = {r: str(target[r]) for r in RESOURCES if r in target and r not in excluded}
        for r, why in sorted(excluded.items()):
            left_out.append(f"{where}: {r}: {why}")
        if chosen:
            requests[c["name"]] = chosen
            kept.append(c)
    if not requests:
        return None
    return Workload(doc["namespace"], doc["kind"], doc["name"], requests, _evidence(doc, kept))


def render(items: Sequence[Mapping[str, Any]], fmt: str) -> Export:
    """The files of format `fmt` for the API's workload documents."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown format {fmt!r}; formats are {', '.join(FORMATS)}")
    out = Export()
    for doc in sorted(items, key=lambda d: (d["namespace"], d["kind"], d["name"])):
        w = _sized(doc, out.left_out)
        if w is not None:
            out.workloads.append(w)
    if fmt == "helm-values":
        values: dict[str, Any] = {}
        for w in out.workloads:
            by_name = values.setdefault(w.namespace, {}).setdefault(w.kind, {})
            by_name[w.name] = {c: {"requests": r} for c, r in w.requests.items()}
        if out.workloads:
            out.files[VALUES] = _dump({"rightsizer": values})
        return out
    for w in out.workloads:
        out.files[patch_path(w)] = _dump(strategic_merge_patch(w))
    if fmt == "kustomize" and out.workloads:
        out.files[KUSTOMIZATION] = _dump(kustomization(out.workloads))
    return out


class SameNames(ValueError):
    """Workloads of one kind and name in several namespaces: a component cannot tell them apart."""


def kustomization(workloads: Sequence[Workload]) -> dict[str, Any]:
    """A kustomize Component listing the patches, each with a `target` of kind and name: a patch
    whose workload is not in the overlay is then skipped instead of failing the build, and it
    applies whether the manifests carry the namespace or the overlay sets it (`namespace:` runs
    after a component's patches). So one component cannot hold two namespaces' `web`."""
    seen: dict[tuple[str, str], str] = {}
    for w in workloads:
        other = seen.setdefault((w.kind, w.name), w.namespace)
        if other != w.namespace:
            raise SameNames(
                f"{w.kind}/{w.name} is in namespaces {other} and {w.namespace}: a kustomize "
                "component targets patches by kind and name; export one namespace at a time "
                "(-n NAMESPACE)"
            )
    return {
        "apiVersion": "kustomize.config.k8s.io/v1alpha1",
        "kind": "Component",
        "patches": [
            {"path": patch_path(w), "target": {"kind": w.kind, "name": w.name}}
            for w in sorted(workloads, key=patch_path)
        ],
    }


def commit_message(export: Export, fmt: str) -> str:
    """Subject, then each workload's evidence (the API's numbers), then what was left out."""
    n = len(export.workloads)
    lines = [
        f"rightsizer: recommended requests of {n} workload{'' if n == 1 else 's'} ({fmt})",
        "",
    ]
    for w in export.workloads:
        lines += w.evidence
    if export.left_out:
        lines += ["", "Left out:"] + [f"  {why}" for why in export.left_out]
    return "\n".join(lines) + "\n"
