"""The part of the kubelet that kwok does not play: in-place resize, and the restart after an OOM
kill (`report_oom_kill`). The one place where the test harness writes pod status for a kubelet.

kwok's stages turn pods Running and Ready, but write no `containerStatuses[].resources`. Since
in-place resize went GA (1.35), kube-apiserver reads that field as the node's kubelet saying it
supports resize: `pods/resize` on a running pod whose container status lacks it is refused with
"Pod running on node without support for resize". A real kubelet (pkg/kubelet/kubelet_pods.go,
`convertToAPIContainerStatuses`, and the allocation manager of pkg/kubelet/allocation) reports, for
each running container:

- `allocatedResources`: the requests it admitted (the spec's, once a resize is accepted);
- `resources`: the requests and limits in force (what it applied to the container's cgroup);

and while a resize is under way the pod's `PodResizeInProgress` condition, or `PodResizePending`
with reason `Infeasible` when the new requests exceed what the node can ever give (its allocatable)
or `Deferred` when they do not fit beside the node's other pods now.

Pod-level resources (`spec.resources`), from the release where
InPlacePodLevelResourcesVerticalScaling (KEP-5419) is on by default (1.36): a kubelet with the
gate on declares it in its node's `status.declaredFeatures` (k8s.io/component-helpers
nodedeclaredfeatures; kube-apiserver's NodeDeclaredFeatureValidator refuses a change of
`spec.resources` on a node that does not), and reports for the pod (pkg/kubelet/kubelet_pods.go,
convertToAPIPodLevelResourcesStatus):

- `status.resources`: the pod-level requests and limits in force (its pod cgroup);
- `status.allocatedResources`: the pod's admitted requests (resource.PodRequests: a pod-level
  request in place of the containers' sum), the spec's once a resize is accepted.

Its resize verdict counts a pod by those requests too, as the kubelet's allocation manager does.

`ResizeKubelet` polls the pods of the kwok nodes and writes that status: a running container's
resources as soon as kwok has made it Running, and after a resize either the new resources at once
(the resize is applied as soon as it is seen: no `PodResizeInProgress` window) or `PodResizePending`
(`Infeasible`, `Deferred`) and the old resources, which a real kubelet keeps until it can apply the
resize. Only pods on nodes whose annotation says kwok plays them are touched. The release is read
from the API server's /version.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Mapping
from typing import Any

from kubernetes import client

from app.core.quantity import amount
from tests.support.json_bodies import raw_body

log = logging.getLogger(__name__)
RESOURCES = ("cpu", "memory")
POD_LEVEL_FEATURE = "InPlacePodLevelResourcesVerticalScaling"
POD_LEVEL_FROM = 36  # the release the gate is on by default from (beta)


def _amounts(values: Mapping[str, str] | None) -> dict[str, int]:
    return {r: amount(r, v) for r, v in (values or {}).items() if r in RESOURCES}


def _requests(pod: Mapping[str, Any]) -> dict[str, int]:
    """The pod's requests summed over its containers (init containers aside: kwok runs none),
    a pod-level request in place of the sum where the pod sets one (resource.PodRequests)."""
    total: dict[str, int] = {}
    for c in pod["spec"]["containers"]:
        for r, v in _amounts((c.get("resources") or {}).get("requests")).items():
            total[r] = total.get(r, 0) + v
    level = (pod["spec"].get("resources") or {}).get("requests")
    return {**total, **_amounts(level)}


def _pod_level(pod: Mapping[str, Any]) -> dict[str, Any] | None:
    """The pod's pod-level requests and limits, None when it sets none."""
    level = pod["spec"].get("resources") or {}
    wanted = {k: dict(v) for k, v in level.items() if k in ("requests", "limits") and v}
    return wanted or None


def resize_verdict(
    pod: Mapping[str, Any], allocatable: Mapping[str, int], others: Mapping[str, int]
) -> str | None:
    """None when the pod's spec fits the node; else the kubelet's reason (`Infeasible`: above
    the node's allocatable; `Deferred`: not beside the node's other pods now)."""
    wanted = _requests(pod)
    if any(v > allocatable.get(r, 0) for r, v in wanted.items()):
        return "Infeasible"
    if any(v + others.get(r, 0) > allocatable.get(r, 0) for r, v in wanted.items()):
        return "Deferred"
    return None


def reported_status(
    pod: dict[str, Any], verdict: str | None, pod_level: bool = False
) -> dict[str, Any] | None:
    """The pod's status as the kubelet would write it, or None when it already says so.
    `pod_level`: the kubelet's release reports pod-level resources (KEP-5419 gate on)."""
    status = pod.setdefault("status", {})
    statuses = status.get("containerStatuses") or []
    if not statuses or not all("running" in (s.get("state") or {}) for s in statuses):
        return None  # not running yet: kwok's stages first
    spec = {c["name"]: c.get("resources") or {} for c in pod["spec"]["containers"]}
    changed = False
    for s in statuses:
        wanted = {
            k: dict(v) for k, v in spec.get(s["name"], {}).items() if k in ("requests", "limits")
        }
        have = s.get("resources")
        # the first report (a node that supports resize: what it started with is the spec), or
        # a resize applied; a pending one leaves what is in force
        if have is None or (verdict is None and have != wanted):
            s["resources"] = wanted
            s["allocatedResources"] = dict(wanted.get("requests") or {})
            changed = True
    level = _pod_level(pod) if pod_level else None
    if level is not None and (
        status.get("resources") is None or (verdict is None and status["resources"] != level)
    ):
        status["resources"] = level
        status["allocatedResources"] = {
            r: str(v) if r == "memory" else f"{v}m" for r, v in sorted(_requests(pod).items())
        }
        changed = True
    conditions = [
        c for c in status.get("conditions") or [] if c["type"] not in ("PodResizePending",)
    ]
    if verdict is not None:
        message = {
            "Infeasible": "Node didn't have enough capacity",
            "Deferred": "Node didn't have enough resource available now",
        }[verdict]
        conditions.append(
            {
                "type": "PodResizePending",
                "status": "True",
                "reason": verdict,
                "message": message,
                "lastTransitionTime": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
        )
    if [c["type"] for c in conditions] != [c["type"] for c in status.get("conditions") or []]:
        changed = True
    status["conditions"] = conditions
    return status if changed else None


class ResizeKubelet:
    """Writes, every `interval` seconds, the resize status of the pods on kwok's nodes."""

    def __init__(self, api: client.ApiClient, interval: float = 0.3) -> None:
        self.api = api
        self.core = client.CoreV1Api(api)
        self.minor: int | None = None  # the API server's release, read at the first pass
        self.interval = interval
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="resize-kubelet", daemon=True)

    def start(self) -> ResizeKubelet:
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)
        self.api.close()

    def _run(self) -> None:
        while not self._stop.wait(self.interval):
            try:
                self.sync()
            except Exception:  # a test harness thread: log, go on
                log.exception("resize kubelet: a pass failed")

    def sync(self) -> None:
        if self.minor is None:
            info = client.VersionApi(self.api).get_code()
            self.minor = int("".join(ch for ch in str(info.minor) if ch.isdigit()))
        pod_level = self.minor >= POD_LEVEL_FROM
        kwok = [
            n
            for n in self._items(self.core.list_node(_preload_content=False))
            if (n["metadata"].get("annotations") or {}).get("kwok.x-k8s.io/node") == "fake"
        ]
        nodes = {n["metadata"]["name"]: _amounts(n["status"].get("allocatable")) for n in kwok}
        for n in kwok:
            declared = n["status"].get("declaredFeatures") or []
            if pod_level and POD_LEVEL_FEATURE not in declared:
                self.core.patch_node_status(
                    n["metadata"]["name"],
                    {"status": {"declaredFeatures": sorted({*declared, POD_LEVEL_FEATURE})}},
                    _content_type="application/merge-patch+json",
                )
        pods = [
            p
            for p in self._items(self.core.list_pod_for_all_namespaces(_preload_content=False))
            if p["spec"].get("nodeName") in nodes and not p["metadata"].get("deletionTimestamp")
        ]
        for pod in pods:
            node = pod["spec"]["nodeName"]
            others: dict[str, int] = {}
            for o in pods:
                if o["spec"]["nodeName"] == node and o is not pod:
                    for r, v in _requests(o).items():
                        others[r] = others.get(r, 0) + v
            status = reported_status(pod, resize_verdict(pod, nodes[node], others), pod_level)
            if status is not None:
                self._write(pod, status)

    @staticmethod
    def _items(answer: Any) -> list[dict[str, Any]]:
        return list(json.loads(answer.data)["items"])

    def _write(self, pod: dict[str, Any], status: dict[str, Any]) -> None:
        meta = pod["metadata"]
        # a JSON merge patch replaces both lists whole (a strategic one would merge conditions by
        # type and never drop PodResizePending); the resourceVersion makes it fail on a change
        body = {"metadata": {"resourceVersion": meta["resourceVersion"]}, "status": status}
        try:
            self.core.patch_namespaced_pod_status(
                meta["name"],
                meta["namespace"],
                body,
                _content_type="application/merge-patch+json",
            )
        except client.ApiException as e:
            if e.status not in (404, 409):  # gone, or changed since: the next pass sees it
                raise


def report_oom_kill(api: client.ApiClient, namespace: str, pod: str, container: str) -> str:
    """Writes what a kubelet reports once it has restarted `container` of the pod after the kernel
    OOM-killed it: the restart count one up, the last state `terminated` with reason OOMKilled
    (exit code 137, finished now), a new `running` state. Returns the time of the kill. The
    resourceVersion makes a write that races another fail; it is then read and written again."""
    core = client.CoreV1Api(api)
    now = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    for _ in range(20):
        found = json.loads(
            raw_body(core.read_namespaced_pod(pod, namespace, _preload_content=False))
        )
        statuses = found["status"]["containerStatuses"]
        [status] = [s for s in statuses if s["name"] == container]
        started = (status.get("state") or {}).get("running", {}).get("startedAt", now)
        status["lastState"] = {
            "terminated": {
                "exitCode": 137,
                "reason": "OOMKilled",
                "startedAt": started,
                "finishedAt": now,
            }
        }
        status["state"] = {"running": {"startedAt": now}}
        status["restartCount"] = status.get("restartCount", 0) + 1
        body = {
            "metadata": {"resourceVersion": found["metadata"]["resourceVersion"]},
            "status": {"containerStatuses": statuses},
        }
        try:
            core.patch_namespaced_pod_status(
                pod, namespace, body, _content_type="application/merge-patch+json"
            )
            return now
        except client.ApiException as e:
            if e.status != 409:
                raise
            time.sleep(0.2)
    raise RuntimeError(f"could not report the OOM kill of {namespace}/{pod} {container}")
