"""Builders for the objects the simulated kubelets and controllers write: nodes, pods, statuses."""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from app.simulator.apiserver import podutil, quantity
from app.simulator.control.ownership import controller_ref
from app.simulator.workload.clock import rfc3339
from app.simulator.workload.usage import ContainerLife, backoff_delay

_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # apimachinery's rand.SafeEncodeString alphabet
KUBELET_VERSION = "v1.33.1"


def safe_encode(data: bytes, length: int) -> str:
    n = int.from_bytes(hashlib.blake2b(data, digest_size=8).digest(), "big")
    out = []
    for _ in range(length):
        n, r = divmod(n, len(_SAFE))
        out.append(_SAFE[r])
    return "".join(out)


def semantic(value: Any) -> Any:
    """What apimachinery's Semantic.DeepEqual (and a hash of the Go struct) sees of a JSON
    value: null, an empty list and an empty map are all a Go zero value, so they are dropped
    (kubectl sends a template's `creationTimestamp: null`; it equals no timestamp)."""
    if isinstance(value, dict):
        out = {k: semantic(v) for k, v in value.items()}
        return {k: v for k, v in out.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [semantic(v) for v in value]
    return value


def template_hash(template: dict[str, Any]) -> str:
    """Like pod-template-hash (controller.ComputeHash): stable for semantically equal
    templates, different when they change."""
    return safe_encode(json.dumps(semantic(template), sort_keys=True).encode(), 10)


def make_node(
    name: str,
    *,
    cpu: str,
    memory: str,
    pods: int = 110,
    labels: dict[str, str] | None = None,
    created: float,
    declared_features: list[str] | None = None,
) -> dict[str, Any]:
    """A Ready node with the labels, capacity and status a kubelet registers (and the features
    it declares, status.declaredFeatures, when given)."""
    cpu_m, mem_b = quantity.millicores(cpu), quantity.bytes_(memory)
    # Allocatable = capacity minus kube/system reserved, roughly as kubeadm clusters have it.
    alloc_cpu = max(cpu_m - 100 - cpu_m // 50, 0)
    alloc_mem = max(mem_b - (256 << 20) - mem_b // 25, 0)
    ts = rfc3339(created)
    digest = hashlib.sha256(name.encode()).hexdigest()
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {
                "kubernetes.io/hostname": name,
                "kubernetes.io/os": "linux",
                "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux",
                "beta.kubernetes.io/arch": "amd64",
                **(labels or {}),
            },
            "annotations": {"node.alpha.kubernetes.io/ttl": "0"},
            "creationTimestamp": ts,
        },
        "spec": {"podCIDR": "", "providerID": f"sim://{name}"},
        "status": {
            "capacity": {
                "cpu": quantity.format_millicores(cpu_m),
                "memory": f"{mem_b // 1024}Ki",
                "pods": str(pods),
                "ephemeral-storage": "104845292Ki",
            },
            "allocatable": {
                "cpu": quantity.format_millicores(alloc_cpu),
                "memory": f"{alloc_mem // 1024}Ki",
                "pods": str(pods),
                "ephemeral-storage": "96625420948",
            },
            "conditions": [
                _node_condition("MemoryPressure", "False", "KubeletHasSufficientMemory", ts),
                _node_condition("DiskPressure", "False", "KubeletHasNoDiskPressure", ts),
                _node_condition("PIDPressure", "False", "KubeletHasSufficientPID", ts),
                _node_condition("Ready", "True", "KubeletReady", ts),
            ],
            "addresses": [
                {"type": "InternalIP", "address": _node_ip(name)},
                {"type": "Hostname", "address": name},
            ],
            "daemonEndpoints": {"kubeletEndpoint": {"Port": 10250}},
            "nodeInfo": {
                "architecture": "amd64",
                "bootID": digest[:36],
                "containerRuntimeVersion": "containerd://1.7.24",
                "kernelVersion": "6.1.0-sim",
                "kubeProxyVersion": KUBELET_VERSION,
                "kubeletVersion": KUBELET_VERSION,
                "machineID": digest[:32],
                "operatingSystem": "linux",
                "osImage": "Simulated Linux",
                "systemUUID": digest[32:64],
            },
            **({"declaredFeatures": list(declared_features)} if declared_features else {}),
        },
    }


def _node_condition(type_: str, status: str, reason: str, ts: str) -> dict[str, Any]:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": reason,
        "lastHeartbeatTime": ts,
        "lastTransitionTime": ts,
    }


def _node_ip(name: str) -> str:
    n = int(hashlib.sha256(name.encode()).hexdigest()[:6], 16)
    return f"10.{(n >> 16) % 200 + 10}.{(n >> 8) & 255}.{n & 255}"


def pod_from_template(
    template: dict[str, Any],
    namespace: str,
    owner: dict[str, Any],
    *,
    name: str | None = None,
    extra_labels: dict[str, str] | None = None,
    node_name: str | None = None,
) -> dict[str, Any]:
    """What a controller POSTs: the template, its labels, and an ownerReference to the owner."""
    tmeta = template.get("metadata") or {}
    meta: dict[str, Any] = {
        "namespace": namespace,
        "labels": {**(tmeta.get("labels") or {}), **(extra_labels or {})},
        "ownerReferences": [controller_ref(owner)],
    }
    if tmeta.get("annotations"):
        meta["annotations"] = dict(tmeta["annotations"])
    if name:
        meta["name"] = name
    else:
        meta["generateName"] = f"{owner['metadata']['name']}-"
    spec = copy.deepcopy(template.get("spec") or {})
    if node_name:
        spec["nodeName"] = node_name
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


def pod_condition(
    type_: str, status: bool, ts: str, reason: str | None = None, message: str | None = None
) -> dict[str, Any]:
    cond: dict[str, Any] = {
        "type": type_,
        "status": "True" if status else "False",
        "lastProbeTime": None,
        "lastTransitionTime": ts,
    }
    if reason:
        cond["reason"] = reason
    if message:
        cond["message"] = message
    return cond


def container_status(
    container: dict[str, Any], life: ContainerLife, now: float, pod_uid: str
) -> dict[str, Any]:
    """A container's status as the kubelet reports it at `now`, OOM kills included."""
    name = container["name"]
    image = container.get("image", "")
    cid = hashlib.sha256(f"{pod_uid}/{name}/{life.restart_count}".encode()).hexdigest()
    running = life.start_for(now) is not None
    status: dict[str, Any] = {
        "name": name,
        "image": image,
        "imageID": f"{image.split(':')[0]}@sha256:{hashlib.sha256(image.encode()).hexdigest()}",
        "containerID": f"containerd://{cid}",
        "ready": running,
        "started": running,
        "restartCount": life.restart_count,
        "lastState": {},
        "resources": copy.deepcopy(container.get("resources") or {}),
    }
    if running:
        status["state"] = {"running": {"startedAt": rfc3339(life.current_start())}}
    else:
        delay = int(backoff_delay(max(life.backoff - 1, 0)))
        status["state"] = {
            "waiting": {
                "reason": "CrashLoopBackOff",
                "message": f"back-off {delay}s restarting failed container={name}",
            }
        }
    if life.kills:
        kill = life.kills[-1]
        prev_start = life.kills[-2].restart_at if len(life.kills) > 1 else life.started_at
        prev_id = hashlib.sha256(f"{pod_uid}/{name}/{life.restart_count - 1}".encode()).hexdigest()
        status["lastState"] = {
            "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": rfc3339(prev_start),
                "finishedAt": rfc3339(kill.at),
                "containerID": f"containerd://{prev_id}",
            }
        }
    return status


def running_status(
    pod: dict[str, Any],
    lives: dict[str, ContainerLife],
    *,
    host_ip: str,
    pod_ip: str,
    started: float,
    now: float,
) -> dict[str, Any]:
    """The status of a pod bound to a node, with containers as their lives say at `now`."""
    containers = [
        container_status(c, lives[c["name"]], now, pod["metadata"].get("uid", ""))
        for c in pod["spec"]["containers"]
    ]
    ready = all(c["ready"] for c in containers)
    ts = rfc3339(started)
    old = {c["type"]: c for c in (pod.get("status") or {}).get("conditions") or []}

    def cond(type_: str, value: bool, reason: str | None = None) -> dict[str, Any]:
        prev: dict[str, Any] | None = old.get(type_)
        if prev is not None and prev["status"] == ("True" if value else "False"):
            return prev
        at = ts if prev is None else rfc3339(now)
        return pod_condition(type_, value, at, reason)

    not_ready = None if ready else "ContainersNotReady"
    return {
        "phase": "Running",
        "conditions": [
            cond("PodReadyToStartContainers", True),
            cond("Initialized", True),
            cond("Ready", ready, not_ready),
            cond("ContainersReady", ready, not_ready),
            cond("PodScheduled", True),
        ],
        "hostIP": host_ip,
        "hostIPs": [{"ip": host_ip}],
        "podIP": pod_ip,
        "podIPs": [{"ip": pod_ip}],
        "startTime": ts,
        "qosClass": podutil.qos_class(pod),
        "containerStatuses": containers,
    }
