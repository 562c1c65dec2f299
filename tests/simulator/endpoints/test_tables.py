"""Server-side printing against a running simulator: the real `kubectl get` (plain, `-o wide`,
`-w`, `--sort-by`, events, every served kind) and the official Python client asking for a
meta.k8s.io Table, with the columns and cells kube-apiserver prints."""

from __future__ import annotations

import json
import queue
import re
import subprocess
import threading
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.printers.duration import human_duration, timestamp
from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import run_kubectl
from tests.support.simulators import SMALL, pod_body

TABLE_V1 = "application/json;as=Table;v=v1;g=meta.k8s.io"
TABLE_V1BETA1 = "application/json;as=Table;v=v1beta1;g=meta.k8s.io"

# SMALL plus a container that leaks past its memory limit: OOM kills, restarts, back-off.
LEAKY = {
    "kind": "Deployment",
    "namespace": "other",
    "name": "leaky",
    "replicas": 1,
    "containers": [
        {
            "name": "app",
            "image": "example.com/leaky:1",
            "requests": {"cpu": "100m", "memory": "64Mi"},
            "limits": {"memory": "128Mi"},
            "usage": {"memory": {"base": "100Mi", "growthPerDay": "2Gi"}},
        }
    ],
}


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {**SMALL, "workloads": [*SMALL["workloads"], LEAKY]}


def kubectl(sim: Simulator, *args: str) -> list[list[str]]:
    """`kubectl ARGS`, its output split into rows of cells (two or more spaces apart)."""
    out = run_kubectl(sim, *args).stdout
    return [re.split(r"\s{2,}", line.strip()) for line in out.splitlines() if line.strip()]


def by_name(rows: list[list[str]], column: str = "NAME") -> dict[str, list[str]]:
    i = rows[0].index(column)
    return {row[i]: row for row in rows[1:]}


def call(
    api: client.ApiClient,
    method: str,
    path: str,
    accept: str = TABLE_V1,
    body: Any = None,
    **query: str,
) -> Any:
    """A request through the official client's ApiClient with `Accept: accept`: the parsed body
    of a 2xx answer (a watch's events, one per line), ApiException otherwise."""
    headers = {"Accept": accept, **({"Content-Type": "application/json"} if body else {})}
    verb, url, headers, payload, _ = api.param_serialize(
        method,
        path,
        query_params=list(query.items()),
        header_params=headers,
        body=body,
        auth_settings=["BearerToken"],
    )
    resp = api.call_api(verb, url, headers, payload)
    resp.read()
    if "watch" in query:
        assert 200 <= resp.status < 300, resp.data
        return [json.loads(line) for line in resp.read().splitlines() if line.strip()]
    return api.response_deserialize(resp, {"2XX": "object"}).data


def get_table(api: client.ApiClient, path: str, accept: str = TABLE_V1, **query: str) -> Any:
    return call(api, "GET", path, accept, **query)


# --- kubectl get --------------------------------------------------------------------------------


def test_kubectl_get_pods_prints_ready_status_restarts_and_age(sim):
    rows = kubectl(sim, "get", "pods", "-n", "shop")
    assert rows[0] == ["NAME", "READY", "STATUS", "RESTARTS", "AGE"]
    assert len(rows) == 4
    for row in rows[1:]:
        assert row[0].startswith("web-") and row[1:4] == ["1/1", "Running", "0"]
        assert re.fullmatch(r"\d+s", row[4])


def test_kubectl_get_pods_wide_shows_ip_node_and_the_priority_columns(sim):
    rows = kubectl(sim, "get", "pods", "-n", "shop", "-o", "wide")
    assert rows[0] == [
        "NAME",
        "READY",
        "STATUS",
        "RESTARTS",
        "AGE",
        "IP",
        "NODE",
        "NOMINATED NODE",
        "READINESS GATES",
    ]
    pods = client.CoreV1Api(sim.api_client()).list_namespaced_pod("shop").items
    for p in pods:
        row = by_name(rows)[p.metadata.name]
        assert row[5:] == [p.status.pod_ip, p.spec.node_name, "<none>", "<none>"]


def test_kubectl_get_pods_shows_oom_restarts_with_how_long_ago(sim):
    sim.advance(2 * 3600)
    sim.settle()
    rows = kubectl(sim, "get", "pods", "-n", "other")
    [row] = [r for r in rows[1:] if r[0].startswith("leaky-")]
    pod = client.CoreV1Api(sim.api_client()).read_namespaced_pod(row[0], "other").to_dict()
    [cs] = pod["status"]["container_statuses"]
    assert cs["restart_count"] > 0
    finished = cs["last_state"]["terminated"]["finished_at"].timestamp()
    assert row[3] == f"{cs['restart_count']} ({human_duration(sim.now() - finished)} ago)"
    assert row[2] == ("Running" if cs["state"]["running"] else "CrashLoopBackOff")


def test_kubectl_get_pending_pod_and_custom_printing_from_partial_metadata(sim):
    core = client.CoreV1Api(sim.api_client())
    core.create_namespaced_pod("other", plain(pod_body("huge", cpu="64")))
    sim.settle()
    rows = kubectl(sim, "get", "pods", "-A", "--show-labels")
    assert rows[0] == ["NAMESPACE", "NAME", "READY", "STATUS", "RESTARTS", "AGE", "LABELS"]
    row = by_name(rows)["huge"]
    assert row[0] == "other" and row[2:5] == ["0/1", "Pending", "0"] and row[6] == "app=test"


def test_kubectl_get_nodes_shows_status_roles_version_and_cordons(sim):
    sim.cordon("node-1")
    rows = kubectl(sim, "get", "nodes", "-o", "wide")
    assert rows[0] == [
        "NAME",
        "STATUS",
        "ROLES",
        "AGE",
        "VERSION",
        "INTERNAL-IP",
        "EXTERNAL-IP",
        "OS-IMAGE",
        "KERNEL-VERSION",
        "CONTAINER-RUNTIME",
    ]
    nodes = by_name(rows)
    assert nodes["node-0"][1:3] == ["Ready", "<none>"]
    assert nodes["node-1"][1] == "Ready,SchedulingDisabled"
    node = client.CoreV1Api(sim.api_client()).read_node("node-0")
    assert nodes["node-0"][4] == node.status.node_info.kubelet_version
    assert nodes["node-0"][5] == node.status.addresses[0].address
    assert nodes["node-0"][6] == "<none>"


def test_kubectl_get_workloads(sim):
    rows = kubectl(sim, "get", "deployments", "-n", "shop", "-o", "wide")
    assert rows[0] == [
        "NAME",
        "READY",
        "UP-TO-DATE",
        "AVAILABLE",
        "AGE",
        "CONTAINERS",
        "IMAGES",
        "SELECTOR",
    ]
    assert by_name(rows)["web"][1:4] == ["3/3", "3", "3"]
    assert by_name(rows)["web"][5:] == ["app", "nginx:1.27", "app=web"]
    rows = kubectl(sim, "get", "replicasets", "-n", "shop")
    assert rows[0] == ["NAME", "DESIRED", "CURRENT", "READY", "AGE"]
    assert rows[1][1:4] == ["3", "3", "3"]


def test_kubectl_get_all_lists_the_kinds_of_the_all_category(sim):
    out = run_kubectl(sim, "get", "all", "-n", "shop").stdout
    blocks = [b.splitlines() for b in out.strip().split("\n\n")]
    assert [b[0].split()[:2] for b in blocks] == [["NAME", "READY"]] * 2 + [["NAME", "DESIRED"]]
    assert [len(b) for b in blocks] == [4, 2, 2]
    assert blocks[1][1].split()[:2] == ["deployment.apps/web", "3/3"]
    assert all(line.startswith("pod/web-") for line in blocks[0][1:])


def test_kubectl_get_events_prints_last_seen_type_reason_object_message(sim):
    core = client.CoreV1Api(sim.api_client())
    stamp = sim.cluster.now_str()
    core.create_namespaced_event(
        "shop",
        plain(
            {
                "metadata": {"name": "web.1"},
                "involvedObject": {"kind": "Pod", "name": "web-x", "namespace": "shop"},
                "reason": "BackOff",
                "message": "Back-off restarting failed container app",
                "type": "Warning",
                "source": {"component": "kubelet", "host": "node-0"},
                "firstTimestamp": stamp,
                "lastTimestamp": stamp,
                "count": 3,
            }
        ),
    )
    sim.advance(300)
    message = "Back-off restarting failed container app"
    rows = kubectl(sim, "get", "events", "-n", "shop")
    assert rows[0] == ["LAST SEEN", "TYPE", "REASON", "OBJECT", "MESSAGE"]
    # The cluster writes Events of its own (Scheduled, ...): pick ours by its object.
    [ours] = [r for r in rows[1:] if r[3] == "pod/web-x"]
    assert ours == ["5m", "Warning", "BackOff", "pod/web-x", message]
    wide = kubectl(sim, "get", "events", "-n", "shop", "-o", "wide")
    assert wide[0][4:] == ["SUBOBJECT", "SOURCE", "MESSAGE", "FIRST SEEN", "COUNT", "NAME"]
    # An empty SUBOBJECT cell merges two gaps, so read the wide row from its end.
    [ours] = [r for r in wide[1:] if r[-1] == "web.1"]
    assert ours[-5:] == ["kubelet, node-0", message, "5m", "3", "web.1"]


WEBHOOK = {
    "metadata": {"name": "sizer"},
    "webhooks": [
        {
            "name": "sizer.example.com",
            "clientConfig": {"url": "https://127.0.0.1:1/mutate"},
            "admissionReviewVersions": ["v1"],
            "sideEffects": "None",
            "failurePolicy": "Ignore",
            "rules": [
                {
                    "operations": ["CREATE"],
                    "apiGroups": [""],
                    "apiVersions": ["v1"],
                    "resources": ["pods"],
                }
            ],
        }
    ],
}
HPA = {
    "metadata": {"name": "web"},
    "spec": {
        "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
        "minReplicas": 2,
        "maxReplicas": 6,
        "metrics": [
            {
                "type": "Resource",
                "resource": {
                    "name": "cpu",
                    "target": {"type": "Utilization", "averageUtilization": 60},
                },
            }
        ],
    },
}
CRONJOB = {
    "metadata": {"name": "nightly"},
    "spec": {
        "schedule": "0 3 * * *",
        "jobTemplate": {
            "spec": {
                "template": {
                    "spec": {
                        "restartPolicy": "Never",
                        "containers": [{"name": "run", "image": "busybox"}],
                    }
                }
            }
        },
    },
}


def test_kubectl_get_every_other_served_kind(sim):
    api = sim.api_client()
    core, ns = client.CoreV1Api(api), "other"
    core.create_namespaced_config_map(
        ns, plain({"metadata": {"name": "cfg"}, "data": {"a": "1", "b": "2"}})
    )
    secret = {"metadata": {"name": "tok"}, "type": "Opaque", "data": {"k": "dg=="}}
    core.create_namespaced_secret(ns, plain(secret))
    limits = {"limits": [{"type": "Container", "max": {"cpu": "2"}}]}
    core.create_namespaced_limit_range(
        ns, plain({"metadata": {"name": "defaults"}, "spec": limits})
    )
    pdb = {"maxUnavailable": "50%", "selector": {"matchLabels": {"app": "web"}}}
    client.PolicyV1Api(api).create_namespaced_pod_disruption_budget(
        ns, plain({"metadata": {"name": "web"}, "spec": pdb})
    )
    client.AutoscalingV2Api(api).create_namespaced_horizontal_pod_autoscaler(ns, plain(HPA))
    client.CoordinationV1Api(api).create_namespaced_lease(
        ns, plain({"metadata": {"name": "leader"}, "spec": {"holderIdentity": "pod-a"}})
    )
    client.BatchV1Api(api).create_namespaced_cron_job(ns, plain(CRONJOB))
    client.AdmissionregistrationV1Api(api).create_mutating_webhook_configuration(plain(WEBHOOK))
    expected = {
        "configmaps": (["NAME", "DATA", "AGE"], ["cfg", "2"]),
        "secrets": (["NAME", "TYPE", "DATA", "AGE"], ["tok", "Opaque", "1"]),
        "limitranges": (["NAME", "CREATED AT"], ["defaults"]),
        "pdb": (
            ["NAME", "MIN AVAILABLE", "MAX UNAVAILABLE", "ALLOWED DISRUPTIONS", "AGE"],
            ["web", "N/A", "50%", "0"],
        ),
        "hpa": (
            ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"],
            ["web", "Deployment/web", "cpu: <unknown>/60%", "2", "6"],
        ),
        "leases": (["NAME", "HOLDER", "AGE"], ["leader", "pod-a"]),
        "cronjobs": (
            ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST SCHEDULE", "AGE"],
            ["nightly", "0 3 * * *", "<none>"],
        ),
        "mutatingwebhookconfigurations": (["NAME", "WEBHOOKS", "AGE"], ["sizer", "1"]),
    }
    for resource, (header, cells) in expected.items():
        rows = kubectl(sim, "get", resource, "-n", ns)
        assert rows[0] == header, resource
        assert rows[1][: len(cells)] == cells, resource
    # The default table's date column: creationTimestamp in RFC 3339, not an age.
    created = core.read_namespaced_limit_range("defaults", ns).metadata.creation_timestamp
    assert kubectl(sim, "get", "limits", "-n", ns)[1][1] == created.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_namespaces_and_the_columns_of_kinds_without_objects(sim):
    assert by_name(kubectl(sim, "get", "namespaces"))["shop"][1] == "Active"
    done = run_kubectl(sim, "get", "statefulsets", "-A")
    assert done.stdout == "" and "No resources found" in done.stderr
    for path, header in {
        "/apis/apps/v1/statefulsets": ["NAME", "READY", "AGE"],
        "/apis/apps/v1/daemonsets": [
            "NAME",
            "DESIRED",
            "CURRENT",
            "READY",
            "UP-TO-DATE",
            "AVAILABLE",
            "NODE SELECTOR",
            "AGE",
        ],
        "/apis/batch/v1/jobs": ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"],
    }.items():
        table = get_table(sim.api_client(), path)
        assert table["rows"] == []
        shown = [c["name"].upper() for c in table["columnDefinitions"] if c["priority"] == 0]
        assert shown == header, path


def test_kubectl_get_metrics(sim):
    sim.advance(60)  # a first scrape with usage in it
    rows = kubectl(sim, "get", "pods.metrics.k8s.io", "-n", "shop")
    assert rows[0] == ["NAME", "CPU", "MEMORY", "WINDOW"]
    assert len(rows) == 4
    for row in rows[1:]:
        assert re.fullmatch(r"\d+[num]?", row[1]) and re.fullmatch(r"\d+(Ki|Mi|Gi)?", row[2])
        assert row[3] == "15s"


def test_kubectl_sort_by_and_chunks_use_whole_objects_and_continue_tokens(sim):
    core = client.CoreV1Api(sim.api_client())
    for name, cpu in (("a", "300m"), ("b", "100m"), ("c", "200m")):
        core.create_namespaced_pod("other", plain(pod_body(name, cpu=cpu)))
    # --sort-by asks for includeObject=Object: the spec is not in the rows' metadata.
    by_cpu = "--sort-by=.spec.containers[0].resources.requests.cpu"
    rows = kubectl(sim, "get", "pods", "-n", "other", "-l", "app=test", by_cpu)
    assert [r[0] for r in rows] == ["NAME", "b", "c", "a"]
    chunked = kubectl(sim, "get", "pods", "-n", "other", "--chunk-size=1", "-l", "app=test")
    assert [r[0] for r in chunked] == ["NAME", "a", "b", "c"]


def test_kubectl_get_watch_prints_rows_as_pods_change(sim):
    args = ["--kubeconfig", sim.kubeconfig_path, "get", "pods", "-n", "other", "-w"]
    run_kubectl(sim, "version", "--client")  # skips the test without kubectl
    proc = subprocess.Popen(["kubectl", *args], stdout=subprocess.PIPE, text=True)
    lines: queue.Queue[str] = queue.Queue()

    def read() -> None:
        for line in proc.stdout or ():
            lines.put(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        assert lines.get(timeout=30).split()[:3] == ["NAME", "READY", "STATUS"]
        assert lines.get(timeout=30).startswith("leaky-")
        client.CoreV1Api(sim.api_client()).create_namespaced_pod(
            "other", plain(pod_body("watched"))
        )
        sim.settle()
        seen: list[list[str]] = []
        while not any(s[:3] == ["watched", "1/1", "Running"] for s in seen):
            seen.append(lines.get(timeout=30).split())
        assert seen[0][:3] == ["watched", "0/1", "Pending"]
        assert all(s[0] == "watched" for s in seen)  # rows only: no header again
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# --- the official Python client -----------------------------------------------------------------


def test_python_client_gets_a_table_of_pods_with_partial_metadata(sim):
    api = sim.api_client()
    pods = client.CoreV1Api(api).list_namespaced_pod("shop")
    table = get_table(api, "/api/v1/namespaces/shop/pods")
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert table["metadata"]["resourceVersion"] == pods.metadata.resource_version
    assert [(c["name"], c["type"], c["priority"]) for c in table["columnDefinitions"]][:5] == [
        ("Name", "string", 0),
        ("Ready", "string", 0),
        ("Status", "string", 0),
        ("Restarts", "string", 0),
        ("Age", "string", 0),
    ]
    assert len(table["rows"]) == 3
    for row in table["rows"]:
        assert row["object"]["kind"] == "PartialObjectMetadata"
        assert row["object"]["metadata"]["namespace"] == "shop"
        assert row["cells"][0] == row["object"]["metadata"]["name"]
        assert row["cells"][1:4] == ["1/1", "Running", "0"]
        assert len(row["cells"]) == len(table["columnDefinitions"])  # wide cells, always


def test_python_client_table_options_versions_and_refusals(sim):
    api = sim.api_client()
    name = client.CoreV1Api(api).list_namespaced_pod("shop").items[0].metadata.name
    path = f"/api/v1/namespaces/shop/pods/{name}"
    one = get_table(api, path, TABLE_V1BETA1, includeObject="Object")
    assert one["apiVersion"] == "meta.k8s.io/v1beta1"
    [row] = one["rows"]
    assert (row["object"]["kind"], row["object"]["spec"]["containers"][0]["name"]) == ("Pod", "app")
    none = get_table(api, "/api/v1/nodes", includeObject="None")
    assert [r["object"] for r in none["rows"]] == [None, None, None]
    page = get_table(api, "/api/v1/namespaces/shop/pods", limit="2")
    assert len(page["rows"]) == 2 and page["metadata"]["continue"]
    assert page["metadata"]["remainingItemCount"] == 1
    with pytest.raises(ApiException) as bad:
        get_table(api, "/api/v1/nodes", includeObject="All")
    assert bad.value.status == 400 and "includeObject" in bad.value.body
    alpha = "application/json;as=Table;v=v1alpha1;g=meta.k8s.io"
    with pytest.raises(ApiException) as refused:
        get_table(api, "/api/v1/nodes", alpha)
    assert refused.value.status == 406
    assert get_table(api, "/api/v1/nodes", f"{alpha},application/json")["kind"] == "NodeList"


def test_python_client_metadata_only_list(sim):
    metadata_list = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
    listed = get_table(sim.api_client(), "/apis/apps/v1/deployments", metadata_list)
    assert listed["kind"] == "PartialObjectMetadataList"
    assert [i["metadata"]["name"] for i in listed["items"]] == ["leaky", "web"]
    assert all(set(i) == {"kind", "apiVersion", "metadata"} for i in listed["items"])


def test_created_and_watched_objects_come_back_as_tables(sim):
    url = "/api/v1/namespaces/other/pods"
    api = sim.api_client()
    before = client.CoreV1Api(api).list_namespaced_pod("other").metadata.resource_version
    created = call(api, "POST", url, body=pod_body("made"))
    assert created["kind"] == "Table"
    assert created["rows"][0]["cells"][:3] == ["made", "0/1", "Pending"]
    sim.settle()  # bound and started: more events for the watch below
    events = call(
        api,
        "GET",
        url,
        watch="true",
        resourceVersion=before,
        timeoutSeconds="1",
        fieldSelector="metadata.name=made",
    )
    assert [e["type"] for e in events][:2] == ["ADDED", "MODIFIED"]
    first, *later = (e["object"] for e in events)
    assert first["kind"] == "Table" and first["columnDefinitions"][0]["name"] == "Name"
    assert first["rows"][0]["cells"][:3] == ["made", "0/1", "Pending"]
    assert later and all(t["kind"] == "Table" and t["columnDefinitions"] is None for t in later)
    assert later[-1]["rows"][0]["cells"][:3] == ["made", "1/1", "Running"]
    assert timestamp(first["rows"][0]["object"]["metadata"]["creationTimestamp"])


def test_text_answers_are_not_converted(sim):
    api = sim.api_client()
    client.CoreV1Api(api).create_namespaced_pod("other", plain(pod_body("unbound", cpu="64")))
    verb, url, headers, _, _ = api.param_serialize(
        "GET",
        "/api/v1/namespaces/other/pods/unbound/log",
        header_params={"Accept": TABLE_V1},
        auth_settings=["BearerToken"],
    )
    resp = api.call_api(verb, url, headers)
    resp.read()
    # kube-apiserver's log of a pod bound to no node: an empty text body, whatever was accepted.
    assert (resp.status, resp.data) == (200, b"")
