"""The differential test's corpus: requests generated from a seed, replayed in order against the
simulated cluster and against the real kube-apiserver (tests/realkube/test_differential.py).

Every step is one HTTP request (its id names it for the divergence list), except `settle`
steps, which wait until both clusters have done what their controllers do (pods Running,
budgets counted). Objects live in two namespaces of their own (`diff`, and `diff-lr` for
LimitRanger) and a few cluster-scoped objects named `diff-*`, so a real cluster shared with
other tests is not disturbed. Workloads are created without pods (replicas 0, a DaemonSet whose
nodeSelector matches no node, a suspended Job): the pods are the corpus's own.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

NS = "diff"
LR_NS = "diff-lr"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
JSON_PATCH = "application/json-patch+json"
MERGE_PATCH = "application/merge-patch+json"
STRATEGIC = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"


@dataclass
class Step:
    id: str
    method: str = "GET"
    path: str = ""
    body: Any = None
    content_type: str = "application/json"
    query: dict[str, str] = field(default_factory=dict)
    accept: str = "application/json"
    watch: bool = False  # the answer is a stream of events (bounded by timeoutSeconds)
    mark: str = ""  # remember the answer's metadata.resourceVersion under this name
    rv_from: str = ""  # query resourceVersion: the one remembered under this name
    rv_ahead: int = 0  # ... plus this many (a resourceVersion the server has not reached)
    stale_rv: bool = False  # body metadata.resourceVersion: one the object had before
    settle: bool = False  # not a request: wait for both clusters' controllers


WORKLOADS = {
    "Deployment": ("apps/v1", "deployments"),
    "ReplicaSet": ("apps/v1", "replicasets"),
    "StatefulSet": ("apps/v1", "statefulsets"),
    "DaemonSet": ("apps/v1", "daemonsets"),
    "Job": ("batch/v1", "jobs"),
}


def _base(api_version: str) -> str:
    return "/api/v1" if api_version == "v1" else f"/apis/{api_version}"


def collection(api_version: str, plural: str, namespace: str | None = NS) -> str:
    ns = f"/namespaces/{namespace}" if namespace else ""
    return f"{_base(api_version)}{ns}/{plural}"


def _quantities(rng: random.Random) -> tuple[dict[str, str], dict[str, str]]:
    """Requests and limits of one of the QoS shapes."""
    cpu = rng.choice(["50m", "100m", "250m", "500m", "1"])
    mem = rng.choice(["64Mi", "128Mi", "256Mi", "512Mi", "1Gi"])
    shape = rng.choice(["burstable", "guaranteed", "requests-only", "cpu-only"])
    if shape == "guaranteed":
        return {"cpu": cpu, "memory": mem}, {"cpu": cpu, "memory": mem}
    if shape == "requests-only":
        return {"cpu": cpu, "memory": mem}, {}
    if shape == "cpu-only":
        return {"cpu": cpu}, {}
    return {"cpu": cpu, "memory": mem}, {"memory": rng.choice(["1Gi", "2Gi"])}


def _container(rng: random.Random, name: str = "app", **resources: Any) -> dict[str, Any]:
    if not resources:
        requests, limits = _quantities(rng)
        resources = {"requests": requests}
        if limits:
            resources["limits"] = limits
    image = rng.choice(["nginx:1.27", "busybox:1.36", "registry.k8s.io/pause:3.10"])
    return {"name": name, "image": image, "resources": resources}


def _template(rng: random.Random, labels: dict[str, str], job: bool = False) -> dict[str, Any]:
    spec: dict[str, Any] = {"containers": [_container(rng)]}
    if job:
        spec["restartPolicy"] = rng.choice(["Never", "OnFailure"])
    return {"metadata": {"labels": labels}, "spec": spec}


def workload(rng: random.Random, kind: str, name: str, **over: Any) -> dict[str, Any]:
    api_version, _ = WORKLOADS[kind]
    labels = {"app": name, "tier": rng.choice(["web", "batch", "cache"])}
    spec: dict[str, Any] = {"template": _template(rng, labels, job=kind == "Job")}
    if kind == "Job":
        spec["suspend"] = True
        spec["completions"] = rng.randint(1, 3)
    else:
        spec["selector"] = {"matchLabels": {"app": name}}
    if kind in ("Deployment", "ReplicaSet", "StatefulSet"):
        spec["replicas"] = 0
    if kind == "DaemonSet":
        spec["template"]["spec"]["nodeSelector"] = {"diff.rightsizer.io/none": "true"}
    spec.update(over)
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": name, "labels": {"suite": "diff", "tier": labels["tier"]}},
        "spec": spec,
    }


def _workload_steps(rng: random.Random, kind: str) -> list[Step]:
    api_version, plural = WORKLOADS[kind]
    coll = collection(api_version, plural)
    k = kind.lower()
    names = [f"{k}-{i}" for i in range(2)]
    steps = [Step(f"{k}-create-{n}", "POST", coll, workload(rng, kind, n)) for n in names]
    steps.append(Step(f"settle-{k}", settle=True))
    one = f"{coll}/{names[0]}"
    bad_cpu = workload(rng, kind, f"{k}-bad-cpu")
    bad_cpu["spec"]["template"]["spec"]["containers"][0]["resources"] = {"requests": {"cpu": "-1"}}
    over = workload(rng, kind, f"{k}-over")
    over["spec"]["template"]["spec"]["containers"][0]["resources"] = {
        "requests": {"memory": "2Gi"},
        "limits": {"memory": "1Gi"},
    }
    no_containers = workload(rng, kind, f"{k}-empty")
    no_containers["spec"]["template"]["spec"]["containers"] = []
    steps += [
        Step(f"{k}-get", "GET", one),
        Step(f"{k}-list-selector", "GET", coll, query={"labelSelector": "suite=diff"}),
        Step(f"{k}-create-exists", "POST", coll, workload(rng, kind, names[0])),
        Step(f"{k}-get-missing", "GET", f"{coll}/{k}-missing"),
        Step(f"{k}-create-negative-cpu", "POST", coll, bad_cpu),
        Step(f"{k}-create-request-over-limit", "POST", coll, over),
        Step(f"{k}-create-no-containers", "POST", coll, no_containers),
        Step(
            f"{k}-create-bad-name",
            "POST",
            coll,
            workload(rng, kind, f"{k.upper()}_Bad"),
        ),
        Step(
            f"{k}-patch-strategic",
            "PATCH",
            one,
            {"metadata": {"labels": {"patched": "strategic"}}},
            STRATEGIC,
        ),
        Step(
            f"{k}-patch-merge",
            "PATCH",
            one,
            {"metadata": {"annotations": {"diff/merge": str(rng.randint(1, 99))}}},
            MERGE_PATCH,
        ),
        Step(
            f"{k}-patch-json",
            "PATCH",
            one,
            [{"op": "add", "path": "/metadata/labels/json", "value": "yes"}],
            JSON_PATCH,
        ),
        Step(
            f"{k}-patch-json-failed-test",
            "PATCH",
            one,
            [{"op": "test", "path": "/metadata/labels/json", "value": "no"}],
            JSON_PATCH,
        ),
        Step(
            f"{k}-patch-template-negative-cpu",
            "PATCH",
            one,
            [
                {
                    "op": "replace",
                    "path": "/spec/template/spec/containers/0/resources",
                    "value": {"requests": {"cpu": "-1"}},
                }
            ],
            JSON_PATCH,
        ),
        Step(
            f"{k}-apply",
            "PATCH",
            f"{coll}/{names[1]}",
            {
                "apiVersion": api_version,
                "kind": kind,
                "metadata": {"name": names[1], "labels": {"applied": "yes"}},
            },
            APPLY,
            query={"fieldManager": "diff-test"},
        ),
        Step(f"{k}-put-stale", "PUT", one, workload(rng, kind, names[0]), stale_rv=True),
        Step(f"{k}-table-list", "GET", coll, accept=TABLE),
        Step(f"{k}-table-get", "GET", one, accept=TABLE),
    ]
    return steps


def _namespace_steps() -> list[Step]:
    coll = "/api/v1/namespaces"
    ns = {"apiVersion": "v1", "kind": "Namespace"}
    return [
        Step("namespace-create", "POST", coll, {**ns, "metadata": {"name": NS}}),
        Step("namespace-create-lr", "POST", coll, {**ns, "metadata": {"name": LR_NS}}),
        Step("namespace-create-exists", "POST", coll, {**ns, "metadata": {"name": NS}}),
        Step("namespace-create-bad-name", "POST", coll, {**ns, "metadata": {"name": "Diff_NS"}}),
        Step("namespace-get", "GET", f"{coll}/{NS}"),
        Step("namespace-get-missing", "GET", f"{coll}/diff-missing"),
        Step("namespace-table-get", "GET", f"{coll}/{NS}", accept=TABLE),
        Step("settle-namespaces", settle=True),
    ]


def _pod(rng: random.Random, name: str, labels: dict[str, str], **resources: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "labels": labels},
        "spec": {"containers": [_container(rng, **resources)]},
    }


def _pod_steps(rng: random.Random) -> list[Step]:
    coll = collection("v1", "pods")
    steps: list[Step] = []
    shapes = {
        "guaranteed": {
            "requests": {"cpu": "500m", "memory": "256Mi"},
            "limits": {"cpu": "500m", "memory": "256Mi"},
        },
        "burstable": {
            "requests": {"cpu": "100m", "memory": "128Mi"},
            "limits": {"cpu": "1", "memory": "512Mi"},
        },
        "limits-only": {"limits": {"cpu": "200m", "memory": "256Mi"}},
        "besteffort": {},
    }
    for shape, resources in shapes.items():
        body = _pod(rng, f"pod-{shape}", {"app": "plain", "shape": shape})
        body["spec"]["containers"][0]["resources"] = resources
        steps.append(Step(f"pod-create-{shape}", "POST", coll, body))
    for i in range(6):
        steps.append(
            Step(f"pod-create-random-{i}", "POST", coll, _pod(rng, f"pod-r{i}", {"app": "random"}))
        )
    for group, count in (("guarded", 2), ("loose", 3)):
        for i in range(count):
            body = _pod(rng, f"{group}-{i}", {"app": group})
            steps.append(Step(f"pod-create-{group}-{i}", "POST", coll, body))
    invalid = {
        "negative-cpu": {"requests": {"cpu": "-1"}},
        "request-over-limit": {"requests": {"cpu": "2"}, "limits": {"cpu": "1"}},
        "bad-quantity": {"requests": {"memory": "12XB"}},
        "bad-resource-name": {"requests": {"gpu": "1"}},
    }
    for what, resources in invalid.items():
        body = _pod(rng, f"pod-{what}", {"app": "invalid"})
        body["spec"]["containers"][0]["resources"] = resources
        steps.append(Step(f"pod-create-{what}", "POST", coll, body))
    no_image = _pod(rng, "pod-no-image", {"app": "invalid"})
    del no_image["spec"]["containers"][0]["image"]
    steps += [
        Step("pod-create-no-image", "POST", coll, no_image),
        Step("pod-create-exists", "POST", coll, _pod(rng, "pod-guaranteed", {"app": "x"})),
        Step("pod-get", "GET", f"{coll}/pod-guaranteed"),
        Step("pod-get-missing", "GET", f"{coll}/pod-missing"),
        Step("pod-list-selector", "GET", coll, query={"labelSelector": "app=plain"}),
        Step(
            "pod-list-set-selector", "GET", coll, query={"labelSelector": "app in (guarded,loose)"}
        ),
        Step("pod-list-bad-selector", "GET", coll, query={"labelSelector": "app=="}),
        Step(
            "pod-list-field-selector", "GET", coll, query={"fieldSelector": "metadata.name=pod-r0"}
        ),
        Step("pod-list-bad-field", "GET", coll, query={"fieldSelector": "spec.bogus=x"}),
        Step(
            "pod-patch-labels",
            "PATCH",
            f"{coll}/pod-r0",
            {"metadata": {"labels": {"patched": "yes"}}},
            STRATEGIC,
        ),
        Step(
            "pod-patch-spec-forbidden",
            "PATCH",
            f"{coll}/pod-r0",
            {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "3"}}}]}},
            STRATEGIC,
        ),
        Step(
            "pod-patch-image",
            "PATCH",
            f"{coll}/pod-r1",
            [{"op": "replace", "path": "/spec/containers/0/image", "value": "nginx:1.28"}],
            JSON_PATCH,
        ),
        Step("pod-put-stale", "PUT", f"{coll}/pod-r1", _pod(rng, "pod-r1", {}), stale_rv=True),
        Step(
            "pod-apply-label",
            "PATCH",
            f"{coll}/pod-r3",
            {
                "apiVersion": "v1",
                "kind": "Pod",
                "metadata": {"name": "pod-r3", "labels": {"a": "b"}},
            },
            APPLY,
            query={"fieldManager": "diff-test"},
        ),
        Step("settle-pods", settle=True),
        Step("pod-table-list", "GET", coll, accept=TABLE, query={"labelSelector": "app=plain"}),
    ]
    return steps


def _resize(name: str, container: dict[str, Any]) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": "app", **container}]}}


def _resize_steps() -> list[Step]:
    coll = collection("v1", "pods")
    steps = []
    cases: list[tuple[str, str, Any, str]] = [
        ("cpu-up", "pod-burstable", {"resources": {"requests": {"cpu": "200m"}}}, STRATEGIC),
        ("cpu-limit-up", "pod-burstable", {"resources": {"limits": {"cpu": "2"}}}, STRATEGIC),
        (
            "memory-limit-down",
            "pod-burstable",
            {"resources": {"limits": {"memory": "256Mi"}}},
            STRATEGIC,
        ),
        (
            "guaranteed-both",
            "pod-guaranteed",
            {
                "resources": {
                    "requests": {"cpu": "600m", "memory": "256Mi"},
                    "limits": {"cpu": "600m", "memory": "256Mi"},
                }
            },
            STRATEGIC,
        ),
        (
            "qos-change",
            "pod-guaranteed",
            {"resources": {"requests": {"cpu": "100m"}}},
            STRATEGIC,
        ),
        (
            "besteffort-add",
            "pod-besteffort",
            {"resources": {"requests": {"cpu": "100m"}}},
            STRATEGIC,
        ),
        (
            "negative",
            "pod-burstable",
            {"resources": {"requests": {"cpu": "-1"}}},
            STRATEGIC,
        ),
        (
            "request-over-limit",
            "pod-burstable",
            {"resources": {"requests": {"cpu": "5"}}},
            STRATEGIC,
        ),
        (
            "ephemeral-storage",
            "pod-burstable",
            {"resources": {"requests": {"ephemeral-storage": "1Gi"}}},
            STRATEGIC,
        ),
        (
            "merge-cpu",
            "pod-limits-only",
            {"resources": {"requests": {"cpu": "200m"}, "limits": {"cpu": "200m"}}},
            MERGE_PATCH,
        ),
    ]
    for what, pod, container, ctype in cases:
        steps.append(
            Step(f"resize-{what}", "PATCH", f"{coll}/{pod}/resize", _resize(pod, container), ctype)
        )
    steps += [
        Step(
            "resize-json-remove-limit",
            "PATCH",
            f"{coll}/pod-guaranteed/resize",
            [{"op": "remove", "path": "/spec/containers/0/resources/limits/cpu"}],
            JSON_PATCH,
        ),
        Step(
            "resize-json-limits-only",
            "PATCH",
            f"{coll}/pod-limits-only/resize",
            [
                {
                    "op": "replace",
                    "path": "/spec/containers/0/resources",
                    "value": {"limits": {"cpu": "300m", "memory": "256Mi"}},
                }
            ],
            JSON_PATCH,
        ),
        Step(
            "resize-image-dropped",
            "PATCH",
            f"{coll}/pod-r4/resize",
            {"spec": {"containers": [{"name": "app", "image": "nginx:1.29"}]}},
            STRATEGIC,
        ),
        Step(
            "resize-missing-pod", "PATCH", f"{coll}/pod-missing/resize", _resize("x", {}), STRATEGIC
        ),
        Step("resize-get", "GET", f"{coll}/pod-burstable/resize"),
    ]
    return steps


def _eviction(name: str, namespace: str = NS) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": name, "namespace": namespace},
    }


def _pdb(name: str, app: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "policy/v1",
        "kind": "PodDisruptionBudget",
        "metadata": {"name": name},
        "spec": {"selector": {"matchLabels": {"app": app}}, **spec},
    }


def _pdb_steps() -> list[Step]:
    coll = collection("policy/v1", "poddisruptionbudgets")
    return [
        Step("pdb-create-guarded", "POST", coll, _pdb("guarded", "guarded", minAvailable=2)),
        Step("pdb-create-loose", "POST", coll, _pdb("loose", "loose", maxUnavailable=1)),
        Step(
            "pdb-create-both",
            "POST",
            coll,
            _pdb("both", "x", minAvailable=1, maxUnavailable=1),
        ),
        Step("pdb-create-exists", "POST", coll, _pdb("loose", "loose", maxUnavailable=1)),
        Step("pdb-get-missing", "GET", f"{coll}/missing"),
        Step("settle-budgets", settle=True),
        Step("pdb-get-guarded", "GET", f"{coll}/guarded"),
        Step("pdb-get-loose", "GET", f"{coll}/loose"),
        Step("pdb-list", "GET", coll),
        Step("pdb-table-list", "GET", coll, accept=TABLE),
        Step(
            "pdb-patch-merge",
            "PATCH",
            f"{coll}/guarded",
            {"metadata": {"labels": {"patched": "merge"}}},
            MERGE_PATCH,
        ),
    ]


def _eviction_steps() -> list[Step]:
    pods = collection("v1", "pods")
    return [
        Step("evict-guarded", "POST", f"{pods}/guarded-0/eviction", _eviction("guarded-0")),
        Step("evict-loose-first", "POST", f"{pods}/loose-0/eviction", _eviction("loose-0")),
        Step("evict-loose-second", "POST", f"{pods}/loose-1/eviction", _eviction("loose-1")),
        Step("evict-unguarded", "POST", f"{pods}/pod-r5/eviction", _eviction("pod-r5")),
        Step("evict-name-mismatch", "POST", f"{pods}/pod-r4/eviction", _eviction("other")),
        Step("evict-missing", "POST", f"{pods}/pod-missing/eviction", _eviction("pod-missing")),
        Step(
            "evict-wrong-kind",
            "POST",
            f"{pods}/pod-r4/eviction",
            {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "pod-r4"}},
        ),
    ]


def _lease(name: str, holder: str, renew: str) -> dict[str, Any]:
    return {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": name, "labels": {"suite": "diff"}},
        "spec": {
            "holderIdentity": holder,
            "leaseDurationSeconds": 15,
            "acquireTime": "2026-12-06T10:00:00.000000Z",
            "renewTime": renew,
        },
    }


def _lease_and_watch_steps() -> list[Step]:
    coll = collection("coordination.k8s.io/v1", "leases")
    return [
        Step("lease-list-mark", "GET", coll, mark="leases"),
        Step(
            "lease-create-a", "POST", coll, _lease("a", "one", "2026-12-06T10:00:01.500000+00:00")
        ),
        Step(
            "lease-create-b", "POST", coll, _lease("b", "two", "2026-12-06T12:00:01.000000+02:00")
        ),
        Step(
            "lease-create-exists", "POST", coll, _lease("a", "one", "2026-12-06T10:00:01.000000Z")
        ),
        Step("lease-create-bad-time", "POST", coll, _lease("c", "x", "yesterday")),
        Step(
            "lease-create-short-fraction",
            "POST",
            coll,
            _lease("c", "x", "2026-12-06T10:00:01.5+00:00"),
        ),
        Step("lease-create-no-fraction", "POST", coll, _lease("c", "x", "2026-12-06T10:00:01Z")),
        Step(
            "lease-create-negative-duration",
            "POST",
            coll,
            {
                **_lease("d", "x", "2026-12-06T10:00:01.000000Z"),
                "spec": {"holderIdentity": "x", "leaseDurationSeconds": -1},
            },
        ),
        Step(
            "lease-renew-merge",
            "PATCH",
            f"{coll}/a",
            {"spec": {"renewTime": "2026-12-06T10:00:16.250000+01:00"}},
            MERGE_PATCH,
        ),
        Step("lease-get", "GET", f"{coll}/a"),
        Step(
            "lease-put-stale",
            "PUT",
            f"{coll}/a",
            _lease("a", "three", "2026-12-06T10:00:09.000000Z"),
            stale_rv=True,
        ),
        Step("lease-delete-b", "DELETE", f"{coll}/b"),
        Step("lease-delete-missing", "DELETE", f"{coll}/b"),
        Step(
            "watch-leases-since-mark",
            "GET",
            coll,
            query={"watch": "true", "timeoutSeconds": "2"},
            rv_from="leases",
            watch=True,
        ),
        Step(
            "watch-leases-selector",
            "GET",
            coll,
            query={"watch": "true", "timeoutSeconds": "2", "labelSelector": "suite=diff"},
            rv_from="leases",
            watch=True,
        ),
        Step(
            "watch-leases-too-new",
            "GET",
            coll,
            query={"watch": "true", "timeoutSeconds": "5"},
            rv_from="leases",
            rv_ahead=1_000_000,
            watch=True,
        ),
        Step(
            "watch-list-leases-too-new",
            "GET",
            coll,
            query={
                "watch": "true",
                "timeoutSeconds": "5",
                "sendInitialEvents": "true",
                "resourceVersionMatch": "NotOlderThan",
                "allowWatchBookmarks": "true",
            },
            rv_from="leases",
            rv_ahead=1_000_000,
            watch=True,
        ),
        Step(
            "list-leases-too-new",
            "GET",
            coll,
            rv_from="leases",
            rv_ahead=1_000_000,
        ),
        Step(
            "watch-leases-bad-timeout",
            "GET",
            coll,
            query={"watch": "true", "timeoutSeconds": "x"},
        ),
        Step("lease-table-list", "GET", coll, accept=TABLE),
    ]


def _limit_range_steps(rng: random.Random) -> list[Step]:
    coll = collection("v1", "limitranges", LR_NS)
    pods = collection("v1", "pods", LR_NS)
    lr = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "limits"},
        "spec": {
            "limits": [
                {
                    "type": "Container",
                    "default": {"cpu": "500m", "memory": "512Mi"},
                    "defaultRequest": {"cpu": "100m", "memory": "128Mi"},
                    "max": {"cpu": "2", "memory": "2Gi"},
                    "min": {"cpu": "10m"},
                    "maxLimitRequestRatio": {"cpu": "10"},
                }
            ]
        },
    }
    bad = {
        "apiVersion": "v1",
        "kind": "LimitRange",
        "metadata": {"name": "bad"},
        "spec": {"limits": [{"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]},
    }
    steps = [
        Step("limitrange-create", "POST", coll, lr),
        Step("limitrange-create-min-over-max", "POST", coll, bad),
        Step("limitrange-get", "GET", f"{coll}/limits"),
        Step("limitrange-table-list", "GET", coll, accept=TABLE),
        Step("settle-limitranges", settle=True),
        Step("lr-pod-defaulted", "POST", pods, _pod(rng, "defaulted", {"app": "lr"}, **{})),
        Step(
            "lr-pod-over-max",
            "POST",
            pods,
            _pod(rng, "over", {"app": "lr"}, requests={"cpu": "1"}, limits={"cpu": "3"}),
        ),
        Step(
            "lr-pod-ratio",
            "POST",
            pods,
            _pod(rng, "ratio", {"app": "lr"}, requests={"cpu": "10m"}, limits={"cpu": "1"}),
        ),
        Step(
            "lr-pod-under-min",
            "POST",
            pods,
            _pod(rng, "under", {"app": "lr"}, requests={"cpu": "1m"}, limits={"cpu": "100m"}),
        ),
        Step(
            "lr-pod-ok",
            "POST",
            pods,
            _pod(rng, "ok", {"app": "lr"}, requests={"cpu": "200m"}, limits={"cpu": "1"}),
        ),
        Step("settle-lr-pods", settle=True),
        Step(
            "lr-resize-over-max",
            "PATCH",
            f"{pods}/ok/resize",
            _resize("ok", {"resources": {"limits": {"cpu": "3"}}}),
            STRATEGIC,
        ),
        Step(
            "lr-resize-ratio",
            "PATCH",
            f"{pods}/ok/resize",
            _resize("ok", {"resources": {"requests": {"cpu": "50m"}}}),
            STRATEGIC,
        ),
        Step(
            "lr-resize-ok",
            "PATCH",
            f"{pods}/ok/resize",
            _resize("ok", {"resources": {"requests": {"cpu": "300m"}}}),
            STRATEGIC,
        ),
    ]
    # The defaulted pod's container had no resources: rebuild it so (the helper drew some).
    steps[5].body["spec"]["containers"][0].pop("resources")
    return steps


def _event_steps() -> list[Step]:
    coll = collection("v1", "events")
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": "pod-r0.diff1"},
        "involvedObject": {"kind": "Pod", "namespace": NS, "name": "pod-r0", "apiVersion": "v1"},
        "reason": "Resized",
        "message": "resized by the differential test",
        "type": "Normal",
        "count": 1,
        "source": {"component": "diff-test"},
        "firstTimestamp": "2026-12-06T10:00:00Z",
        "lastTimestamp": "2026-12-06T10:00:00Z",
    }
    no_involved = {k: v for k, v in event.items() if k != "involvedObject"}
    no_involved["metadata"] = {"name": "orphan"}
    return [
        Step("event-create", "POST", coll, event),
        Step("event-create-exists", "POST", coll, event),
        Step("event-create-no-involved-object", "POST", coll, no_involved),
        Step("event-get", "GET", f"{coll}/pod-r0.diff1"),
        Step(
            "event-list-field-selector",
            "GET",
            coll,
            query={"fieldSelector": "involvedObject.name=pod-r0,reason=Resized"},
        ),
        Step(
            "event-patch-count",
            "PATCH",
            f"{coll}/pod-r0.diff1",
            {"count": 2, "lastTimestamp": "2026-12-06T10:05:00+00:00"},
            MERGE_PATCH,
        ),
    ]


def _node_steps(rng: random.Random) -> list[Step]:
    coll = "/api/v1/nodes"
    cpu = rng.choice(["2", "4", "8"])
    node = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": "diff-node-0", "labels": {"diff.rightsizer.io/pool": "a"}},
        "spec": {"unschedulable": True},
        "status": {"capacity": {"cpu": cpu, "memory": "8Gi", "pods": "10"}},
    }
    return [
        Step("node-create", "POST", coll, node),
        Step("node-create-exists", "POST", coll, node),
        Step("node-get", "GET", f"{coll}/diff-node-0"),
        Step("node-get-missing", "GET", f"{coll}/diff-node-missing"),
        Step(
            "node-list-selector",
            "GET",
            coll,
            query={"labelSelector": "diff.rightsizer.io/pool=a"},
        ),
        Step(
            "node-patch-label",
            "PATCH",
            f"{coll}/diff-node-0",
            {"metadata": {"labels": {"diff.rightsizer.io/patched": "yes"}}},
            STRATEGIC,
        ),
        Step("node-delete", "DELETE", f"{coll}/diff-node-0"),
    ]


def _webhook_steps() -> list[Step]:
    coll = "/apis/admissionregistration.k8s.io/v1/mutatingwebhookconfigurations"
    hook = {
        "name": "pods.diff.rightsizer.io",
        "admissionReviewVersions": ["v1"],
        "sideEffects": "None",
        "failurePolicy": "Ignore",
        "clientConfig": {"url": "https://127.0.0.1:9/mutate"},
        "objectSelector": {"matchLabels": {"diff.rightsizer.io/never": "true"}},
        "rules": [
            {
                "apiGroups": [""],
                "apiVersions": ["v1"],
                "operations": ["CREATE"],
                "resources": ["pods"],
            }
        ],
    }
    config = {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {"name": "diff-hooks"},
        "webhooks": [hook],
    }
    bad = {
        **config,
        "metadata": {"name": "diff-bad"},
        "webhooks": [{**hook, "sideEffects": "Some", "timeoutSeconds": 31}],
    }
    return [
        Step("webhook-create", "POST", coll, config),
        Step("webhook-create-invalid", "POST", coll, bad),
        Step("webhook-get", "GET", f"{coll}/diff-hooks"),
        Step(
            "webhook-patch-timeout",
            "PATCH",
            f"{coll}/diff-hooks",
            [{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 5}],
            JSON_PATCH,
        ),
        Step("webhook-delete", "DELETE", f"{coll}/diff-hooks"),
    ]


def _misc_steps() -> list[Step]:
    return [
        Step("unknown-resource", "GET", "/api/v1/namespaces/diff/bogus"),
        Step("unknown-group", "GET", "/apis/bogus.example.com/v1/things"),
        Step("malformed-json", "POST", collection("v1", "pods"), "{not json"),
        Step(
            "wrong-namespace-in-body",
            "POST",
            collection("coordination.k8s.io/v1", "leases"),
            {
                **_lease("x", "x", "2026-12-06T10:00:00.000000Z"),
                "metadata": {"name": "x", "namespace": "other"},
            },
        ),
        Step("pod-in-missing-namespace", "GET", collection("v1", "pods", "diff-missing") + "/p"),
        Step(
            "create-in-missing-namespace",
            "POST",
            collection("coordination.k8s.io/v1", "leases", "diff-missing"),
            _lease("x", "x", "2026-12-06T10:00:00.000000Z"),
        ),
    ]


def generate(seed: int = 20261206) -> list[Step]:
    """The corpus, the same for a seed: workloads of every kind rightsizer reads, pods of every
    QoS shape, their resizes and evictions (through budgets), Leases and watches, LimitRanger,
    Events, a Node and a MutatingWebhookConfiguration, Tables, and errors of each kind."""
    rng = random.Random(seed)
    steps = _namespace_steps()
    for kind in WORKLOADS:
        steps += _workload_steps(rng, kind)
    steps += _pod_steps(rng)
    steps += _pdb_steps()
    steps += _resize_steps()
    steps += _eviction_steps()
    steps += _lease_and_watch_steps()
    steps += _limit_range_steps(rng)
    steps += _event_steps()
    steps += _node_steps(rng)
    steps += _webhook_steps()
    steps += _misc_steps()
    ids = [s.id for s in steps]
    assert len(ids) == len(set(ids)), "step ids must be unique"
    return steps
