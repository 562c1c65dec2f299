"""Scale mode: a procedurally generated cluster (e.g. 5,000 nodes, 150,000 pods) for benchmarks.

Objects are built in their steady state and bulk-loaded, bypassing controllers and admission
(they existed before anyone watched), so startup costs one serialisation per object.
"""

from __future__ import annotations

import uuid
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.apiserver.kinds import default_pod_template
from app.simulator.apiserver.resources import DEPLOYMENT, NAMESPACE, NODE, POD, REPLICASET
from app.simulator.control.cluster import ContainerRuntime, PodRuntime, SimCluster
from app.simulator.control.objects import make_node, running_status, template_hash
from app.simulator.workload.clock import rfc3339
from app.simulator.workload.usage import (
    ContainerLife,
    CpuProfile,
    MemoryProfile,
    UsageProfile,
    container_key,
)

PODS_PER_NAMESPACE = 1500
REPLICA_CYCLE = (1, 2, 3, 5, 8, 10, 12, 15, 20, 24)  # averages 10 pods per deployment
# (requests cpu, requests memory, limits memory, usage profile): a few shapes, most oversized.
SHAPES = (
    (
        "250m",
        "256Mi",
        "512Mi",
        UsageProfile(CpuProfile(0.05, 0.5, 0.2), MemoryProfile(90e6, 0.05, 0.02)),
    ),
    (
        "500m",
        "512Mi",
        "1Gi",
        UsageProfile(CpuProfile(0.3, 0.4, 0.1), MemoryProfile(400e6, 0.1, 0.03)),
    ),
    (
        "100m",
        "128Mi",
        "256Mi",
        UsageProfile(CpuProfile(0.02, 0.3, 0.3), MemoryProfile(60e6, 0.0, 0.02)),
    ),
    ("1", "1Gi", "2Gi", UsageProfile(CpuProfile(0.2, 0.8, 0.2), MemoryProfile(500e6, 0.2, 0.05))),
)


def build_scale(cluster: SimCluster, nodes: int, pods: int) -> None:
    now = cluster.now()
    ts = cluster.now_str()
    # Running for an hour already, so metrics-server has samples for every pod.
    started = now - 3600
    started_ts = rfc3339(started)
    store = cluster.store
    ns_count = max(1, -(-pods // PODS_PER_NAMESPACE))
    store.bulk_load(
        NAMESPACE,
        [_namespace(n) for n in ("default", "kube-system", "kube-public", "kube-node-lease")]
        + [_namespace(f"ns-{i:04d}") for i in range(ns_count)],
        ts,
    )
    node_names = [f"node-{i:05d}" for i in range(max(nodes, 1))]
    # Enough room on each node for its share of pods, as a cluster sized for its load would be.
    per_node = -(-pods // len(node_names))
    store.bulk_load(
        NODE,
        [
            make_node(
                n,
                cpu=str(max(16, per_node // 2)),
                memory=f"{max(64, per_node * 2)}Gi",
                pods=max(110, per_node),
                labels={"topology.kubernetes.io/zone": f"zone-{i % 3}"},
                created=now,
                declared_features=cluster.version.declared_features(),
            )
            for i, n in enumerate(node_names)
        ],
        ts,
    )
    deployments: list[dict[str, Any]] = []
    replicasets: list[dict[str, Any]] = []
    pod_objs: list[dict[str, Any]] = []
    runtimes: list[PodRuntime] = []
    made = d = 0
    while made < pods:
        replicas = min(REPLICA_CYCLE[d % len(REPLICA_CYCLE)], pods - made)
        ns = f"ns-{(made // PODS_PER_NAMESPACE) % ns_count:04d}"
        cpu, mem, mem_limit, profile = SHAPES[d % len(SHAPES)]
        mem_limit_bytes = float(quantity.bytes_(mem_limit))
        name = f"app-{d:05d}"
        labels = {"app": name}
        template: dict[str, Any] = {
            "metadata": {"labels": labels},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": f"example.com/app-{d % 50}:1.0",
                        "resources": {
                            "requests": {"cpu": cpu, "memory": mem},
                            "limits": {"memory": mem_limit},
                        },
                    }
                ]
            },
        }
        default_pod_template(template)
        h = template_hash(template)
        dep_uid, rs_uid = str(uuid.uuid4()), str(uuid.uuid4())
        status = {
            "observedGeneration": 1,
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": replicas,
            "availableReplicas": replicas,
        }
        deployments.append(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {
                    "name": name,
                    "namespace": ns,
                    "uid": dep_uid,
                    "labels": labels,
                    "generation": 1,
                    "creationTimestamp": started_ts,
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": labels},
                    "template": template,
                    "strategy": {
                        "type": "RollingUpdate",
                        "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"},
                    },
                    "revisionHistoryLimit": 10,
                    "progressDeadlineSeconds": 600,
                },
                "status": status,
            }
        )
        rs_labels = {**labels, "pod-template-hash": h}
        rs_template = {**template, "metadata": {"labels": rs_labels}}
        rs_spec: dict[str, Any] = template["spec"]
        rs_name = f"{name}-{h}"
        replicasets.append(
            {
                "apiVersion": "apps/v1",
                "kind": "ReplicaSet",
                "metadata": {
                    "name": rs_name,
                    "namespace": ns,
                    "uid": rs_uid,
                    "labels": rs_labels,
                    "generation": 1,
                    "creationTimestamp": started_ts,
                    "annotations": {"deployment.kubernetes.io/revision": "1"},
                    "ownerReferences": [
                        {
                            "apiVersion": "apps/v1",
                            "kind": "Deployment",
                            "name": name,
                            "uid": dep_uid,
                            "controller": True,
                            "blockOwnerDeletion": True,
                        }
                    ],
                },
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": rs_labels},
                    "template": rs_template,
                },
                "status": {
                    "replicas": replicas,
                    "fullyLabeledReplicas": replicas,
                    "readyReplicas": replicas,
                    "availableReplicas": replicas,
                    "observedGeneration": 1,
                },
            }
        )
        # One status per deployment, specialised per pod by shallow copies: stored objects are
        # never mutated in place, so pods may share the nested parts.
        life = ContainerLife(started_at=started, checked_until=now)
        base_status = running_status(
            {"metadata": {"uid": ""}, "spec": rs_template["spec"]},
            {"app": life},
            host_ip="",
            pod_ip="",
            started=started,
            now=now,
        )
        base_cs: dict[str, Any] = base_status["containerStatuses"][0]
        for r in range(replicas):
            n = made + r
            pod_name = f"{rs_name}-{r:05d}"
            node = node_names[n % len(node_names)]
            uid = str(uuid.uuid4())
            host_ip = f"10.{(n >> 16) & 255}.{(n >> 8) & 255}.1"
            pod_ip = f"10.{128 + ((n >> 16) & 127)}.{(n >> 8) & 255}.{n & 255}"
            pod_status: dict[str, Any] = {
                **base_status,
                "hostIP": host_ip,
                "hostIPs": [{"ip": host_ip}],
                "podIP": pod_ip,
                "podIPs": [{"ip": pod_ip}],
                "containerStatuses": [
                    {**base_cs, "containerID": f"containerd://{uid.replace('-', '') * 2}"}
                ],
            }
            pod_objs.append(
                {
                    "apiVersion": "v1",
                    "kind": "Pod",
                    "metadata": {
                        "name": pod_name,
                        "namespace": ns,
                        "uid": uid,
                        "labels": rs_labels,
                        "creationTimestamp": started_ts,
                        "ownerReferences": [
                            {
                                "apiVersion": "apps/v1",
                                "kind": "ReplicaSet",
                                "name": rs_name,
                                "uid": rs_uid,
                                "controller": True,
                                "blockOwnerDeletion": True,
                            }
                        ],
                    },
                    "spec": {**rs_spec, "nodeName": node},
                    "status": pod_status,
                }
            )
            key = container_key(cluster.seed, ns, pod_name, "app")
            runtimes.append(
                PodRuntime(
                    uid,
                    ns,
                    pod_name,
                    node,
                    started,
                    host_ip,
                    pod_ip,
                    [ContainerRuntime("app", profile, key, life, None, mem_limit_bytes)],
                    rs_labels,
                    ((0, True),),
                )
            )
        made += replicas
        d += 1
    store.bulk_load(DEPLOYMENT, deployments, ts)
    store.bulk_load(REPLICASET, replicasets, ts)
    store.bulk_load(POD, pod_objs, ts)
    cluster.node_usage.rebuild(store)
    with cluster.runtime_lock:
        cluster.runtime.update((r.uid, r) for r in runtimes)


def _namespace(name: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"kubernetes.io/metadata.name": name}},
        "spec": {"finalizers": ["kubernetes"]},
        "status": {"phase": "Active"},
    }
