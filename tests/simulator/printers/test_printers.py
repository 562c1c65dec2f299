"""Server-side printing, pure: HumanDuration, each kind's cells as kube-apiserver's printers
(pkg/printers/internalversion/printers.go) compute them, the Accept negotiation and the
Table / PartialObjectMetadata conversions."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.simulator.printers import apps, autoscaling, batch, core, metrics, policy
from app.simulator.printers.common import format_label_selector, selector_string
from app.simulator.printers.duration import (
    HOUR,
    MINUTE,
    SECOND,
    human_duration,
    human_duration_ns,
    since,
)
from app.simulator.printers.negotiation import (
    InvalidTableOptions,
    NotAcceptable,
    Target,
    include_object,
    negotiate,
)
from app.simulator.printers.table import as_table, transform
from app.simulator.workload.clock import rfc3339

NOW = 1_800_000_000.0
DAY = 24 * HOUR
YEAR = 365 * DAY
TABLE = Target("Table", "v1")


def ago(seconds: float) -> str:
    return rfc3339(NOW - seconds)


# --- HumanDuration ------------------------------------------------------------------------------

_UNITS = {"y": YEAR, "d": DAY, "h": HOUR, "m": MINUTE, "s": SECOND}


def _value(text: str) -> int:
    """Nanoseconds a HumanDuration string stands for (`2d3h` -> 51 hours)."""
    parts = re.findall(r"(\d+)([ydhms])", text)
    assert "".join(n + u for n, u in parts) == text, text
    return sum(int(n) * _UNITS[u] for n, u in parts)


def _granularity(ns: int) -> int:
    """The smallest unit HumanDuration shows for a duration that long."""
    if ns < 10 * MINUTE:
        return SECOND
    if ns < 8 * HOUR:
        return MINUTE
    if ns < 8 * DAY:
        return HOUR
    if ns < 8 * YEAR:
        return DAY
    return YEAR


@given(st.integers(min_value=0, max_value=20 * YEAR))
def test_human_duration_truncates_to_the_unit_its_range_shows(ns):
    text = human_duration_ns(ns)
    shown = _value(text)
    assert shown <= ns < shown + _granularity(ns)
    assert len(re.findall(r"\d+", text)) <= 2  # about two significant figures
    assert text == "0s" or not text.startswith("0")


@given(st.integers(min_value=0, max_value=20 * YEAR), st.integers(min_value=0, max_value=YEAR))
def test_human_duration_never_shows_less_for_a_longer_duration(ns, more):
    assert _value(human_duration_ns(ns + more)) >= _value(human_duration_ns(ns))


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0, "0s"),
        (-0.5, "0s"),
        (-1.9, "0s"),  # up to two seconds ahead is clock skew, read as now
        (-2, "<invalid>"),
        (59, "59s"),
        (119, "119s"),
        (120, "2m"),
        (121, "2m1s"),
        (599, "9m59s"),
        (600, "10m"),
        (10799, "179m"),
        (3 * 3600, "3h"),
        (3 * 3600 + 300, "3h5m"),
        (8 * 3600, "8h"),
        (47 * 3600 + 3599, "47h"),
        (48 * 3600, "2d"),
        (2 * 86400 + 3 * 3600, "2d3h"),
        (8 * 86400 + 3600, "8d"),
        (729 * 86400, "729d"),
        (730 * 86400, "2y"),
        (731 * 86400, "2y1d"),
        (8 * 365 * 86400, "8y"),
    ],
)
def test_human_duration_examples(seconds, text):
    assert human_duration(seconds) == text


def test_since_an_unset_timestamp_is_unknown():
    assert since(None, NOW) == "<unknown>"
    assert since("", NOW) == "<unknown>"
    assert since(ago(300), NOW) == "5m"


# --- pods ---------------------------------------------------------------------------------------


def running(name: str, *, ready: bool = True, restarts: int = 0) -> dict[str, Any]:
    return {
        "name": name,
        "ready": ready,
        "started": True,
        "restartCount": restarts,
        "state": {"running": {"startedAt": ago(60)}},
    }


def pod(
    statuses: list[dict[str, Any]],
    *,
    containers: int | None = None,
    init: list[dict[str, Any]] | None = None,
    init_statuses: list[dict[str, Any]] | None = None,
    phase: str = "Running",
    conditions: list[dict[str, Any]] | None = None,
    **meta: Any,
) -> dict[str, Any]:
    n = len(statuses) if containers is None else containers
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "creationTimestamp": ago(3600), **meta},
        "spec": {
            "containers": [{"name": f"c{i}", "image": "busybox"} for i in range(n)],
            "initContainers": init or [],
        },
        "status": {
            "phase": phase,
            "conditions": conditions or [],
            "containerStatuses": statuses,
            "initContainerStatuses": init_statuses or [],
        },
    }


def cells(p: dict[str, Any]) -> list[Any]:
    return core.pod_cells(p, NOW)


def test_running_pod_is_ready_running_without_restarts():
    assert cells(pod([running("c0"), running("c1")]))[:5] == ["p", "2/2", "Running", "0", "60m"]


def test_crash_looping_container_shows_its_waiting_reason_and_the_last_restart():
    crashing = {
        "name": "c0",
        "ready": False,
        "restartCount": 4,
        "state": {"waiting": {"reason": "CrashLoopBackOff"}},
        "lastState": {
            "terminated": {"exitCode": 137, "reason": "OOMKilled", "finishedAt": ago(300)}
        },
    }
    assert cells(pod([crashing]))[1:4] == ["0/1", "CrashLoopBackOff", "4 (5m ago)"]


def test_the_first_container_with_a_reason_names_the_status():
    first = {"name": "c0", "restartCount": 0, "state": {"waiting": {"reason": "ImagePullBackOff"}}}
    second = {"name": "c1", "restartCount": 0, "state": {"terminated": {"exitCode": 2}}}
    assert cells(pod([first, second]))[2] == "ImagePullBackOff"
    assert cells(pod([second, first]))[2] == "ExitCode:2"
    signalled = {"name": "c0", "state": {"terminated": {"exitCode": 0, "signal": 9}}}
    assert cells(pod([signalled]))[2] == "Signal:9"


def test_completed_container_next_to_a_running_one_reads_running_or_not_ready():
    done = {"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    ready = [{"type": "Ready", "status": "True"}]
    assert cells(pod([running("c1"), done], conditions=ready))[2] == "Running"
    assert cells(pod([running("c1"), done]))[2] == "NotReady"


INITS = [{"name": "i0", "image": "x"}, {"name": "i1", "image": "x"}]


@pytest.mark.parametrize(
    ("second", "status"),
    [
        ({"state": {"running": {}}}, "Init:1/2"),
        ({"state": {"waiting": {"reason": "PodInitializing"}}}, "Init:1/2"),
        ({"state": {"waiting": {"reason": "CrashLoopBackOff"}}}, "Init:CrashLoopBackOff"),
        ({"state": {"terminated": {"exitCode": 1, "reason": "Error"}}}, "Init:Error"),
        ({"state": {"terminated": {"exitCode": 3}}}, "Init:ExitCode:3"),
        ({"state": {"terminated": {"exitCode": 1, "signal": 15}}}, "Init:Signal:15"),
    ],
)
def test_initializing_pod_shows_its_init_progress(second, status):
    done = {"name": "i0", "restartCount": 1, "state": {"terminated": {"exitCode": 0}}}
    p = pod(
        [],
        containers=1,
        init=INITS,
        init_statuses=[done, {"name": "i1", "restartCount": 2, **second}],
        phase="Pending",
    )
    assert cells(p)[1:4] == ["0/1", status, "3"]


def test_sidecars_count_as_containers_and_their_restarts_stay_counted():
    init = [
        {"name": "setup", "image": "x"},
        {"name": "proxy", "image": "x", "restartPolicy": "Always"},
    ]
    init_statuses = [
        {"name": "setup", "restartCount": 5, "state": {"terminated": {"exitCode": 0}}},
        {**running("proxy", restarts=2), "started": True},
    ]
    initialized = [{"type": "Initialized", "status": "True"}]
    p = pod(
        [running("c0", restarts=1)], init=init, init_statuses=init_statuses, conditions=initialized
    )
    # READY counts the started sidecar; RESTARTS drops the plain init container's once started.
    assert cells(p)[1:4] == ["2/2", "Running", "3"]


def test_deleting_pod_is_terminating_unless_finished_or_on_a_lost_node():
    deleting: dict[str, Any] = {"deletionTimestamp": ago(1)}
    assert cells(pod([running("c0")], **deleting))[2] == "Terminating"
    lost = pod([running("c0")], **deleting)
    lost["status"]["reason"] = "NodeLost"
    assert cells(lost)[2] == "Unknown"
    done = {"name": "c0", "state": {"terminated": {"exitCode": 0, "reason": "Completed"}}}
    finished = pod([done], phase="Succeeded", **deleting)
    assert cells(finished)[2] == "Completed"
    assert core.pod_conditions(finished) == [
        {
            "type": "Completed",
            "status": "True",
            "reason": "Succeeded",
            "message": "The pod has completed successfully.",
        }
    ]
    assert core.pod_conditions(pod([running("c0")])) == []


def test_pending_and_scheduling_gated_pods():
    pending = pod([], containers=1, phase="Pending")
    assert cells(pending)[1:4] == ["0/1", "Pending", "0"]
    gated = pod(
        [],
        containers=1,
        phase="Pending",
        conditions=[{"type": "PodScheduled", "status": "False", "reason": "SchedulingGated"}],
    )
    assert cells(gated)[2] == "SchedulingGated"


def test_wide_pod_cells_ip_node_nominated_node_and_readiness_gates():
    p = pod(
        [running("c0")],
        conditions=[
            {"type": "example.com/lb", "status": "True"},
            {"type": "example.com/dns", "status": "False"},
        ],
    )
    assert cells(p)[5:] == ["<none>", "<none>", "<none>", "<none>"]
    p["spec"]["nodeName"] = "node-1"
    p["spec"]["readinessGates"] = [
        {"conditionType": "example.com/lb"},
        {"conditionType": "example.com/dns"},
    ]
    p["status"]["podIPs"] = [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}]
    p["status"]["nominatedNodeName"] = "node-2"
    assert cells(p)[5:] == ["10.0.0.7", "node-1", "node-2", "1/2"]


# --- nodes, events, namespaces ------------------------------------------------------------------


def node(conditions: list[dict[str, Any]], *, labels: dict[str, str] | None = None, **spec: Any):
    return {
        "kind": "Node",
        "metadata": {"name": "n1", "creationTimestamp": ago(86400 * 3), "labels": labels or {}},
        "spec": spec,
        "status": {
            "conditions": conditions,
            "addresses": [{"type": "InternalIP", "address": "10.1.2.3"}],
            "nodeInfo": {"kubeletVersion": "v1.33.1"},
        },
    }


def test_node_status_roles_and_wide_cells():
    ready = [{"type": "MemoryPressure", "status": "False"}, {"type": "Ready", "status": "True"}]
    labels = {
        "node-role.kubernetes.io/worker": "",
        "node-role.kubernetes.io/control-plane": "",
        "kubernetes.io/role": "infra",
        "node-role.kubernetes.io/": "ignored",
    }
    assert core.node_cells(node(ready, labels=labels), NOW) == [
        "n1",
        "Ready",
        "control-plane,infra,worker",
        "3d",
        "v1.33.1",
        "10.1.2.3",
        "<none>",
        "<unknown>",
        "<unknown>",
        "<unknown>",
    ]
    cordoned = node(ready, unschedulable=True)
    assert core.node_cells(cordoned, NOW)[1:3] == ["Ready,SchedulingDisabled", "<none>"]
    assert core.node_cells(node([{"type": "Ready", "status": "Unknown"}]), NOW)[1] == "NotReady"
    assert core.node_cells(node([], unschedulable=True), NOW)[1] == "Unknown,SchedulingDisabled"


def event(**fields: Any) -> dict[str, Any]:
    return {
        "kind": "Event",
        "metadata": {"name": "web.17f", "namespace": "shop"},
        "involvedObject": {"kind": "Pod", "name": "web-1", "fieldPath": "spec.containers{app}"},
        "type": "Warning",
        "reason": "BackOff",
        "message": "  Back-off restarting failed container\n",
        **fields,
    }


def test_event_cells_wide():
    e = event(
        firstTimestamp=ago(3600),
        lastTimestamp=ago(120),
        count=7,
        source={"component": "kubelet", "host": "node-1"},
    )
    assert core.event_cells(e, NOW) == [
        "2m",
        "Warning",
        "BackOff",
        "pod/web-1",
        "spec.containers{app}",
        "kubelet, node-1",
        "Back-off restarting failed container",
        "60m",
        7,
        "web.17f",
    ]


def test_event_times_and_count_of_the_new_events_api():
    micro = rfc3339(NOW - 90).replace("Z", ".123456Z")  # 89.876544 s ago: "89s"
    e = event(
        eventTime=micro,
        reportingComponent="scheduler",
        reportingInstance="sched-1",
        involvedObject={"kind": "Node"},
    )
    c = core.event_cells(e, NOW)
    assert (c[0], c[3], c[5], c[7], c[8]) == ("89s", "node", "scheduler, sched-1", "89s", 1)
    series = event(
        firstTimestamp=ago(600), series={"count": 12, "lastObservedTime": micro}, count=1
    )
    c = core.event_cells(series, NOW)
    assert (c[0], c[7], c[8]) == ("89s", "10m", 12)
    assert core.event_cells(event(), NOW)[0] == "<unknown>"


def test_namespace_configmap_secret_cells():
    ns = {"metadata": {"name": "shop", "creationTimestamp": ago(10)}, "status": {"phase": "Active"}}
    assert core.namespace_cells(ns, NOW) == ["shop", "Active", "10s"]
    cm = {"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}, "binaryData": {"c": "AA=="}}
    assert core.configmap_cells(cm, NOW) == ["cfg", 3, "<unknown>"]
    secret = {"metadata": {"name": "s"}, "type": "Opaque", "data": {"k": "dg=="}}
    assert core.secret_cells(secret, NOW) == ["s", "Opaque", 1, "<unknown>"]


# --- selectors and workloads --------------------------------------------------------------------


def test_label_selectors_print_sorted_by_key_as_apimachinery_does():
    sel = {
        "matchLabels": {"tier": "web", "app": "shop"},
        "matchExpressions": [
            {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
            {"key": "canary", "operator": "DoesNotExist"},
            {"key": "env", "operator": "In", "values": ["prod"]},
            {"key": "gpu", "operator": "Exists"},
        ],
    }
    assert (
        format_label_selector(sel) == "app=shop,!canary,env in (prod),gpu,tier=web,zone notin (a,b)"
    )
    assert format_label_selector({}) == "<none>"
    assert format_label_selector(None) == "<none>"
    bad = {"matchExpressions": [{"key": "a", "operator": "Near", "values": ["x"]}]}
    assert format_label_selector(bad) == "<error>"
    assert selector_string({"matchExpressions": [{"key": "a", "operator": "In"}]}) is None


def template(*containers: tuple[str, str]) -> dict[str, Any]:
    return {"spec": {"containers": [{"name": n, "image": i} for n, i in containers]}}


def test_deployment_replicaset_statefulset_daemonset_cells():
    spec = {
        "replicas": 3,
        "selector": {"matchLabels": {"app": "web"}},
        "template": template(("app", "nginx:1.27"), ("envoy", "envoy:1.31")),
    }
    d = {"metadata": {"name": "web", "creationTimestamp": ago(7200)}, "spec": spec}
    d["status"] = {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}
    assert apps.deployment_cells(d, NOW) == [
        "web",
        "2/3",
        3,
        2,
        "120m",
        "app,envoy",
        "nginx:1.27,envoy:1.31",
        "app=web",
    ]
    broken = {**d, "spec": {**spec, "selector": {"matchExpressions": [{"operator": "In"}]}}}
    assert apps.deployment_cells(broken, NOW)[-1] == "<invalid>"
    rs = {**d, "status": {"replicas": 3, "readyReplicas": 1}}
    assert apps.replicaset_cells(rs, NOW)[1:4] == [3, 3, 1]
    assert apps.statefulset_cells(rs, NOW)[:3] == ["web", "1/3", "120m"]
    ds: dict[str, Any] = {
        "metadata": {"name": "agent"},
        "spec": {
            "selector": {"matchLabels": {"app": "agent"}},
            "template": {**template(("a", "img")), "spec": {**template(("a", "img"))["spec"]}},
        },
        "status": {
            "desiredNumberScheduled": 5,
            "currentNumberScheduled": 4,
            "numberReady": 3,
            "updatedNumberScheduled": 2,
            "numberAvailable": 1,
        },
    }
    ds["spec"]["template"]["spec"]["nodeSelector"] = {"zone": "a", "disk": "ssd"}
    assert apps.daemonset_cells(ds, NOW) == [
        "agent",
        5,
        4,
        3,
        2,
        1,
        "disk=ssd,zone=a",
        "<unknown>",
        "a",
        "img",
        "app=agent",
    ]


@pytest.mark.parametrize(
    ("spec", "status", "completions", "state"),
    [
        ({"completions": 3}, {"succeeded": 1}, "1/3", "Running"),
        ({"parallelism": 4}, {"succeeded": 2}, "2/1 of 4", "Running"),
        ({}, {"conditions": [{"type": "Complete", "status": "True"}]}, "0/1", "Complete"),
        ({}, {"conditions": [{"type": "Failed", "status": "True"}]}, "0/1", "Failed"),
        ({}, {"conditions": [{"type": "Suspended", "status": "True"}]}, "0/1", "Suspended"),
        ({}, {"conditions": [{"type": "FailureTarget", "status": "True"}]}, "0/1", "FailureTarget"),
        ({}, {"conditions": [{"type": "Complete", "status": "False"}]}, "0/1", "Running"),
    ],
)
def test_job_status_and_completions(spec, status, completions, state):
    job = {"metadata": {"name": "j"}, "spec": spec, "status": status}
    assert batch.job_cells(job, NOW)[1:4] == [state, completions, ""]


def test_job_duration_runs_until_completion():
    job = {"metadata": {"name": "j"}, "spec": {}, "status": {"startTime": ago(400)}}
    assert batch.job_cells(job, NOW)[3] == "6m40s"
    job["status"]["completionTime"] = ago(100)
    assert batch.job_cells(job, NOW)[3] == "5m"
    job["metadata"]["deletionTimestamp"] = ago(1)
    assert batch.job_cells(job, NOW)[1] == "Terminating"


def test_cronjob_cells():
    cj: dict[str, Any] = {
        "metadata": {"name": "nightly", "creationTimestamp": ago(86400)},
        "spec": {
            "schedule": "0 3 * * *",
            "jobTemplate": {"spec": {"template": template(("run", "busybox"))}},
        },
        "status": {"active": [{"name": "nightly-1"}]},
    }
    assert batch.cronjob_cells(cj, NOW) == [
        "nightly",
        "0 3 * * *",
        "<none>",
        "<unset>",
        1,
        "<none>",
        "24h",
        "run",
        "busybox",
        "<none>",
    ]
    cj["spec"].update(timeZone="Europe/Paris", suspend=False)
    cj["status"]["lastScheduleTime"] = ago(3600)
    assert batch.cronjob_cells(cj, NOW)[2:6] == ["Europe/Paris", "False", 1, "60m"]


def resource_metric(name: str, target: dict[str, Any]) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": name, "target": target}}


def test_hpa_targets():
    specs = [
        resource_metric("cpu", {"type": "Utilization", "averageUtilization": 70}),
        resource_metric("memory", {"type": "AverageValue", "averageValue": "0.5Gi"}),
    ]
    assert autoscaling.format_metrics(specs, []) == "cpu: <unknown>/70%, memory: <unknown>/512Mi"
    statuses = [
        {"type": "Resource", "resource": {"name": "cpu", "current": {"averageUtilization": 42}}},
        {"type": "Resource", "resource": {"name": "memory", "current": {"averageValue": "0.25Gi"}}},
    ]
    assert autoscaling.format_metrics(specs, statuses) == "cpu: 42%/70%, memory: 256Mi/512Mi"
    more = [
        *specs,
        {"type": "Pods", "pods": {"target": {"averageValue": "1k"}}},
    ]
    assert autoscaling.format_metrics(more, statuses).endswith(" + 1 more...")
    others = [
        {"type": "Pods", "pods": {"target": {"averageValue": "1000"}}},
        {"type": "External", "external": {"target": {"averageValue": "30"}}},
    ]
    assert autoscaling.format_metrics(others, []) == "<unknown>/1k, <unknown>/30 (avg)"
    obj = [{"type": "Object", "object": {"target": {"value": "2"}}}, {"type": "Nope"}]
    object_status = [{"type": "Object", "object": {"current": {"value": "1500m"}}}]
    assert autoscaling.format_metrics(obj, object_status) == "1500m/2, <unknown type>"
    auto = [{"type": "ContainerResource", "containerResource": {"name": "cpu", "target": {}}}]
    assert autoscaling.format_metrics(auto, []) == "cpu: <unknown>/<auto>"
    assert autoscaling.format_metrics([], []) == "<none>"


def test_hpa_and_pdb_cells():
    hpa = {
        "metadata": {"name": "web"},
        "spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"}, "maxReplicas": 10},
        "status": {"currentReplicas": 4},
    }
    assert autoscaling.hpa_cells(hpa, NOW) == [
        "web",
        "Deployment/web",
        "<none>",
        "<unset>",
        10,
        4,
        "<unknown>",
    ]
    pdb = {"metadata": {"name": "db"}, "spec": {"maxUnavailable": "50%"}, "status": {}}
    assert policy.pdb_cells(pdb, NOW) == ["db", "N/A", "50%", 0, "<unknown>"]


def test_metrics_tables_sum_containers_and_take_their_columns_from_the_first_item():
    pm = {
        "kind": "PodMetrics",
        "metadata": {"name": "web-1"},
        "window": "15s",
        "containers": [
            {"name": "a", "usage": {"memory": "1024Ki", "cpu": "250000000n"}},
            {"name": "b", "usage": {"memory": "1024Ki", "cpu": "5000000n"}},
        ],
    }
    columns, rows = metrics.metrics_table([pm], NOW)
    assert columns is not None
    assert [(c.name, c.format) for c in columns] == [
        ("Name", "name"),
        ("cpu", "quantity"),
        ("memory", "quantity"),
        ("Window", "duration"),
    ]
    assert rows == [["web-1", "255m", "2Mi", "15s"]]
    nm = {"kind": "NodeMetrics", "metadata": {"name": "n"}, "window": "15s"}
    nm["usage"] = {"cpu": "1", "memory": "3Gi"}
    assert metrics.metrics_table([nm], NOW)[1] == [["n", "1", "3Gi", "15s"]]
    assert metrics.metrics_table([], NOW) == (None, [])


# --- negotiation --------------------------------------------------------------------------------

KUBECTL_GET = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,"
    "application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


@pytest.mark.parametrize(
    ("accept", "target"),
    [
        (None, None),
        ("", None),
        ("application/json", None),
        ("*/*", None),
        ("application/vnd.kubernetes.protobuf,application/json", None),
        (KUBECTL_GET, TABLE),
        ("application/json;as=Table;v=v1beta1;g=meta.k8s.io", Target("Table", "v1beta1")),
        ("application/yaml;as=Table;v=v1;g=meta.k8s.io", TABLE),
        # Table is JSON or YAML only: a protobuf Table clause is skipped.
        ("application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io,application/json", None),
        ("application/json;q=0.5,application/json;as=Table;v=v1;g=meta.k8s.io", TABLE),
        ("application/json;as=Table;v=v1;g=meta.k8s.io;q=0,application/json", None),
        ("*/*;as=Table;v=v1;g=meta.k8s.io", TABLE),
        (
            "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io,application/json",
            Target("PartialObjectMetadataList", "v1"),
        ),
        ("application/json;stream=watch", None),
        ("application/json;as=Table;v=v1alpha1;g=meta.k8s.io,application/json", None),
    ],
)
def test_negotiation_picks_the_best_clause_the_server_can_answer(accept, target):
    assert negotiate(accept) == target


@pytest.mark.parametrize(
    "accept",
    [
        "application/json;as=Table;v=v1alpha1;g=meta.k8s.io",
        "application/json;as=Table",
        "application/json;as=Pod;v=v1;g=meta.k8s.io",
        "application/vnd.kubernetes.protobuf;as=Table;v=v1;g=meta.k8s.io",
        "application/yaml;stream=watch",
        "text/html",
        "application/json;q=0",
    ],
)
def test_nothing_acceptable_is_406(accept):
    with pytest.raises(NotAcceptable, match="only the following media types are accepted: "):
        negotiate(accept)


def test_include_object_is_validated():
    assert include_object({}) == ""
    assert include_object({"includeObject": "None"}) == "None"
    with pytest.raises(InvalidTableOptions) as e:
        include_object({"includeObject": "Everything"})
    assert str(e.value) == (
        'Unable to convert to Table as requested: includeObject: Invalid value: "Everything": '
        "must be 'Metadata', 'Object', 'None', or empty"
    )


# --- conversions --------------------------------------------------------------------------------


def pod_list(*pods: dict[str, Any], **meta: Any) -> dict[str, Any]:
    return {"kind": "PodList", "apiVersion": "v1", "metadata": meta, "items": list(pods)}


def test_table_of_a_list_keeps_its_metadata_and_embeds_partial_metadata():
    p = pod([running("c0")], namespace="shop", resourceVersion="7", labels={"app": "web"})
    t = as_table(
        pod_list(p, resourceVersion="9", remainingItemCount=2, **{"continue": "tok"}),
        TABLE,
        "",
        NOW,
    )
    assert (t["kind"], t["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert t["metadata"] == {"resourceVersion": "9", "continue": "tok", "remainingItemCount": 2}
    assert [c["name"] for c in t["columnDefinitions"]] == [
        "Name",
        "Ready",
        "Status",
        "Restarts",
        "Age",
        "IP",
        "Node",
        "Nominated Node",
        "Readiness Gates",
    ]
    assert [c["priority"] for c in t["columnDefinitions"]] == [0] * 5 + [1] * 4
    assert t["columnDefinitions"][0]["format"] == "name"
    [row] = t["rows"]
    assert row["cells"][:3] == ["p", "1/1", "Running"]
    assert row["object"] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": p["metadata"],
    }


def test_include_object_none_and_object():
    p = pod([running("c0")], resourceVersion="7")
    assert as_table(p, TABLE, "None", NOW)["rows"][0]["object"] is None
    whole = as_table(p, TABLE, "Object", NOW)["rows"][0]["object"]
    assert whole == p
    assert as_table(p, TABLE, "", NOW)["metadata"] == {"resourceVersion": "7"}


def test_headers_off_and_empty_lists():
    assert as_table(pod_list(), TABLE, "", NOW, no_headers=True)["columnDefinitions"] is None
    assert as_table(pod_list(), TABLE, "", NOW)["rows"] == []
    # apiserver's default convertor (LimitRange has no printer) appends to a nil slice.
    limits = {"kind": "LimitRangeList", "apiVersion": "v1", "metadata": {}, "items": []}
    empty = as_table(limits, TABLE, "", NOW)
    assert empty["rows"] is None
    assert [(c["name"], c["type"]) for c in empty["columnDefinitions"]] == [
        ("Name", "string"),
        ("Created At", "date"),
    ]
    lr = {
        "kind": "LimitRange",
        "apiVersion": "v1",
        "metadata": {"name": "d", "creationTimestamp": "2026-01-02T03:04:05Z"},
    }
    assert as_table(lr, TABLE, "", NOW)["rows"][0]["cells"] == ["d", "2026-01-02T03:04:05Z"]


def test_partial_object_metadata_conversions():
    p = pod([running("c0")], resourceVersion="7")
    target = Target("PartialObjectMetadata", "v1beta1")
    assert transform(p, target, "", NOW) == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1beta1",
        "metadata": p["metadata"],
    }
    with pytest.raises(NotAcceptable, match=r"is a list \(\*core\.PodList\)"):
        transform(pod_list(p), target, "", NOW)
    listed = transform(
        pod_list(p, resourceVersion="9"), Target("PartialObjectMetadataList", "v1"), "", NOW
    )
    assert listed["kind"] == "PartialObjectMetadataList"
    assert listed["metadata"] == {"resourceVersion": "9"}
    assert [i["metadata"]["name"] for i in listed["items"]] == ["p"]
    deploy = {"kind": "Deployment", "apiVersion": "apps/v1", "metadata": {"name": "d"}}
    with pytest.raises(NotAcceptable, match=r"is not a list \(\*apps\.Deployment\)"):
        transform(deploy, Target("PartialObjectMetadataList", "v1"), "", NOW)


def test_status_objects_pass_through():
    status = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": 410}
    assert transform(status, TABLE, "", NOW) is status
