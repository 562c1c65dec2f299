"""What the simulated kubelets tell through Events: image pulls, container starts, OOM restarts'
back-off, kills of deleted pods' containers, and the node's schedulability.

Reasons and messages are the kubelet's (the nodes report kubelet v1.33, `objects.py`):
- `pkg/kubelet/images/image_manager.go` EnsureImageExists: `Pulled` "Container image %q already
  present on machine" when the policy lets a present image be used, else `Pulling` "Pulling
  image %q" then `Pulled` "Successfully pulled image %q in %v (%v including waiting). Image size:
  %v bytes." (a pull takes no simulated time; the size is made up from the image name);
- `pkg/kubelet/kuberuntime/kuberuntime_container.go` startContainer/killContainer: `Created`
  "Created container: %s", `Started` "Started container %s", `Killing` "Stopping container %s",
  on the container's reference (`spec.containers{name}` fieldPath);
- `pkg/kubelet/kuberuntime/kuberuntime_manager.go` doBackOff: `BackOff` (Warning) "Back-off
  restarting failed container %s in pod %s", the pod as `format.Pod` writes it (name_ns(uid));
- `pkg/kubelet/kubelet_node_status.go` recordNodeSchedulableEvent: `NodeNotSchedulable` /
  `NodeSchedulable` "Node %s status is now: %s" on the node reference, when spec.unschedulable
  changes from what the kubelet saw last (initially false).

An OOM kill itself writes no Event from the kubelet (its SystemOOM is for node-level OOMs only,
`pkg/kubelet/oom/oom_watcher_linux.go`; `OOMKilling` is node-problem-detector's): it shows as the
container's restart, `lastState.terminated.reason: OOMKilled`, then BackOff and the restart's
Pulled/Created/Started. A kubelet v1.33 writes no Event for in-place resizes (`ResizeCompleted`
came with 1.34).
"""

from __future__ import annotations

import hashlib
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from app.simulator.control.events import Source, container_field_path, node_reference
from app.simulator.control.recorder import NORMAL, WARNING, EventRecorder


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One kubelet Event: about a container of a pod (container set) or the pod itself."""

    at: float
    type: str
    reason: str
    message: str
    container: str = ""


def image_size(image: str) -> int:
    """A stable, plausible image size in bytes (20-250 MB) for the Pulled message."""
    digest = int.from_bytes(hashlib.sha256(image.encode()).digest()[:4], "big")
    return 20_000_000 + digest % 230_000_000


def pull_occurrences(
    container: Mapping[str, Any], present: bool, at: float
) -> tuple[list[Occurrence], bool]:
    """The image manager's Events for the container, and whether the image is on the node after."""
    image = str(container.get("image", ""))
    name = str(container.get("name", ""))
    policy = container.get("imagePullPolicy") or "IfNotPresent"
    if policy == "Never" or (policy == "IfNotPresent" and present):
        msg = f'Container image "{image}" already present on machine'
        return [Occurrence(at, NORMAL, "Pulled", msg, name)], present
    pulled = (
        f'Successfully pulled image "{image}" in 0s (0s including waiting). '
        f"Image size: {image_size(image)} bytes."
    )
    return [
        Occurrence(at, NORMAL, "Pulling", f'Pulling image "{image}"', name),
        Occurrence(at, NORMAL, "Pulled", pulled, name),
    ], True


def start_occurrences(container: Mapping[str, Any], at: float) -> list[Occurrence]:
    name = str(container.get("name", ""))
    return [
        Occurrence(at, NORMAL, "Created", f"Created container: {name}", name),
        Occurrence(at, NORMAL, "Started", f"Started container {name}", name),
    ]


def format_pod(pod: Mapping[str, Any]) -> str:
    """pkg/kubelet/util/format.Pod: name_namespace(uid)."""
    meta = pod.get("metadata") or {}
    return f"{meta.get('name', '')}_{meta.get('namespace', '')}({meta.get('uid', '')})"


def backoff_occurrence(pod: Mapping[str, Any], container: str, at: float) -> Occurrence:
    msg = f"Back-off restarting failed container {container} in pod {format_pod(pod)}"
    return Occurrence(at, WARNING, "BackOff", msg, container)


def kill_occurrence(container: str, at: float) -> Occurrence:
    return Occurrence(at, NORMAL, "Killing", f"Stopping container {container}", container)


def schedulable_reason(unschedulable: bool) -> str:
    return "NodeNotSchedulable" if unschedulable else "NodeSchedulable"


class KubeletEvents:
    """The kubelets' recorders and what they remember: which images each node has pulled."""

    def __init__(self, recorder: EventRecorder, *, enabled: bool = True) -> None:
        self.recorder = recorder
        # Scale mode turns container chatter off (thousands of pods restarting would fill the
        # store); node schedulability Events stay.
        self.enabled = enabled
        self._images: set[tuple[str, str]] = set()
        self._lock = threading.Lock()

    def pod_started(
        self, pod: Mapping[str, Any], node: str, containers: Iterable[Mapping[str, Any]], at: float
    ) -> None:
        """A pod bound to the node starts: its images are pulled, its containers created."""
        if not self.enabled:
            return
        out: list[Occurrence] = []
        for c in containers:
            out += self._pull(node, c, at) + start_occurrences(c, at)
        self.record(pod, node, out)

    def container_restarted(
        self,
        pod: Mapping[str, Any],
        node: str,
        container: Mapping[str, Any],
        killed: float,
        restart: float | None,
    ) -> None:
        """An OOM-killed container: back-off, then (if it came by `restart`) pull and start."""
        if not self.enabled:
            return
        out = [backoff_occurrence(pod, str(container.get("name", "")), killed)]
        if restart is not None:
            out += self._pull(node, container, restart) + start_occurrences(container, restart)
        self.record(pod, node, out)

    def pod_killed(
        self, pod: Mapping[str, Any], node: str, running: Iterable[str], at: float
    ) -> None:
        """A deleted pod's running containers are stopped."""
        if self.enabled:
            self.record(pod, node, [kill_occurrence(c, at) for c in running])

    def node_schedulable(self, node: str, unschedulable: bool, at: float) -> None:
        reason = schedulable_reason(unschedulable)
        self.recorder.event_ref(
            node_reference(node),
            NORMAL,
            reason,
            f"Node {node} status is now: {reason}",
            Source("kubelet", node),
            at=at,
        )

    def record(self, pod: Mapping[str, Any], node: str, occurrences: list[Occurrence]) -> None:
        source = Source("kubelet", node)
        for o in sorted(occurrences, key=lambda o: o.at):  # stable: same-time ones keep order
            path = container_field_path(pod, o.container) if o.container else ""
            self.recorder.event(pod, o.type, o.reason, o.message, source, at=o.at, field_path=path)

    def _pull(self, node: str, container: Mapping[str, Any], at: float) -> list[Occurrence]:
        key = (node, str(container.get("image", "")))
        with self._lock:
            out, present = pull_occurrences(container, key in self._images, at)
            if present:
                self._images.add(key)
        return out
