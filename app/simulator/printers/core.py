"""core/v1 printers: pods, nodes, events, namespaces, config maps, secrets, re-derived from
kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (printPod, printNode,
printEvent, printNamespace, printConfigMap, printSecret and their column definitions).
LimitRanges have no printer there: they get apiserver's default table (common.DEFAULT).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from app.simulator.printers.common import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    integer,
    items,
    meta,
    name,
    section,
)
from app.simulator.printers.duration import human_duration, since, timestamp

# --- pods ---------------------------------------------------------------------------------------

POD_COLUMNS = (
    NAME,
    Column("Ready", "string", "Ready containers out of all containers (sidecars included)."),
    Column("Status", "string", "A one-word summary of the pod and its containers."),
    Column("Restarts", "string", "Container restarts, and how long ago the last one was."),
    AGE,
    Column("IP", "string", "The pod's first IP address.", priority=1),
    Column("Node", "string", "The node the pod is bound to.", priority=1),
    Column("Nominated Node", "string", "The node preemption nominated.", priority=1),
    Column("Readiness Gates", "string", "Readiness gates that are True, of all.", priority=1),
)

_NODE_LOST = "NodeLost"  # pkg/util/node NodeUnreachablePodReason


@dataclass
class _PodTally:
    """What printPod accumulates over the container statuses."""

    reason: str
    total: int
    ready: int = 0
    restarts: int = 0
    last_restart: float | None = None
    sidecar_restarts: int = 0
    last_sidecar_restart: float | None = None
    init_specs: dict[str, Mapping[str, Any]] = field(default_factory=dict)


def _later(current: float | None, status: Mapping[str, Any]) -> float | None:
    """The later of `current` and the status's last termination (`lastState.terminated`)."""
    finished = section(status, "lastState", "terminated")
    at = timestamp(finished.get("finishedAt")) if finished else None
    if at is None or (current is not None and current >= at):
        return current
    return at


def _terminated(term: Mapping[str, Any], prefix: str) -> str:
    if term.get("reason"):
        return f"{prefix}{term['reason']}"
    if integer(term.get("signal")):
        return f"{prefix}Signal:{integer(term.get('signal'))}"
    return f"{prefix}ExitCode:{integer(term.get('exitCode'))}"


def _is_sidecar(container: Mapping[str, Any] | None) -> bool:
    """podutil.IsRestartableInitContainer: an init container with restartPolicy Always."""
    return container is not None and container.get("restartPolicy") == "Always"


def _has_condition(status: Mapping[str, Any], type_: str) -> bool:
    """Whether the pod's first condition of `type_` is True."""
    for cond in items(status.get("conditions")):
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond.get("status") == "True"
    return False


def _init_containers(t: _PodTally, statuses: list[Any], count: int) -> bool:
    """The init containers' part of printPod; True while the pod is still initializing."""
    for i, cs in enumerate(statuses):
        if not isinstance(cs, Mapping):
            continue
        t.restarts += integer(cs.get("restartCount"))
        t.last_restart = _later(t.last_restart, cs)
        sidecar = _is_sidecar(t.init_specs.get(str(cs.get("name"))))
        if sidecar:
            t.sidecar_restarts += integer(cs.get("restartCount"))
            t.last_sidecar_restart = _later(t.last_sidecar_restart, cs)
        state = section(cs, "state")
        term, waiting = section(state, "terminated"), section(state, "waiting")
        terminated = isinstance(state.get("terminated"), Mapping)
        if terminated and integer(term.get("exitCode")) == 0:
            continue
        if sidecar and cs.get("started") is True:
            t.ready += 1 if cs.get("ready") else 0
            continue
        if terminated:
            t.reason = _terminated(term, "Init:")
        elif waiting.get("reason") and waiting.get("reason") != "PodInitializing":
            t.reason = f"Init:{waiting['reason']}"
        else:
            t.reason = f"Init:{i}/{count}"
        return True
    return False


def _containers(t: _PodTally, statuses: list[Any], status: Mapping[str, Any]) -> None:
    """The regular containers' part of printPod (last container first, so the first one's
    reason wins), counted on top of the sidecars' restarts."""
    t.restarts, t.last_restart = t.sidecar_restarts, t.last_sidecar_restart
    has_running = False
    for cs in reversed([s for s in statuses if isinstance(s, Mapping)]):
        t.restarts += integer(cs.get("restartCount"))
        t.last_restart = _later(t.last_restart, cs)
        state = section(cs, "state")
        term, waiting = section(state, "terminated"), section(state, "waiting")
        if waiting.get("reason"):
            t.reason = str(waiting["reason"])
        elif isinstance(state.get("terminated"), Mapping):
            t.reason = _terminated(term, "")
        elif cs.get("ready") and isinstance(state.get("running"), Mapping):
            has_running = True
            t.ready += 1
    if t.reason == "Completed" and has_running:
        t.reason = "Running" if _has_condition(status, "Ready") else "NotReady"


def _pod_tally(pod: Obj) -> _PodTally:
    spec, status = section(pod, "spec"), section(pod, "status")
    phase = str(status.get("phase") or "")
    reason = str(status.get("reason") or phase)
    for cond in items(status.get("conditions")):
        if isinstance(cond, Mapping) and (cond.get("type"), cond.get("reason")) == (
            "PodScheduled",
            "SchedulingGated",
        ):
            reason = "SchedulingGated"
    inits = [c for c in items(spec.get("initContainers")) if isinstance(c, Mapping)]
    t = _PodTally(reason, len(items(spec.get("containers"))))
    t.init_specs = {str(c.get("name")): c for c in inits}
    t.total += sum(1 for c in inits if _is_sidecar(c))
    initializing = _init_containers(t, items(status.get("initContainerStatuses")), len(inits))
    if not initializing or _has_condition(status, "Initialized"):
        _containers(t, items(status.get("containerStatuses")), status)
    deleting = meta(pod).get("deletionTimestamp") is not None
    if deleting and status.get("reason") == _NODE_LOST:
        t.reason = "Unknown"
    elif deleting and phase not in ("Succeeded", "Failed"):
        t.reason = "Terminating"
    return t


def _readiness_gates(spec: Mapping[str, Any], status: Mapping[str, Any]) -> str:
    gates = [g for g in items(spec.get("readinessGates")) if isinstance(g, Mapping)]
    if not gates:
        return "<none>"
    conditions = [c for c in items(status.get("conditions")) if isinstance(c, Mapping)]
    true = 0
    for gate in gates:
        found = next((c for c in conditions if c.get("type") == gate.get("conditionType")), None)
        true += 1 if found is not None and found.get("status") == "True" else 0
    return f"{true}/{len(gates)}"


def pod_cells(pod: Obj, now: float) -> Cells:
    t = _pod_tally(pod)
    restarts = str(t.restarts)
    if t.restarts and t.last_restart is not None:
        restarts = f"{t.restarts} ({human_duration(now - t.last_restart)} ago)"
    spec, status = section(pod, "spec"), section(pod, "status")
    ips = [ip for ip in items(status.get("podIPs")) if isinstance(ip, Mapping)]
    return [
        name(pod),
        f"{t.ready}/{t.total}",
        t.reason,
        restarts,
        age(pod, now),
        str(ips[0].get("ip") or "<none>") if ips else "<none>",
        str(spec.get("nodeName") or "<none>"),
        str(status.get("nominatedNodeName") or "<none>"),
        _readiness_gates(spec, status),
    ]


def pod_conditions(pod: Obj) -> list[dict[str, Any]]:
    """A finished pod's row carries a `Completed` condition (podSuccessConditions,
    podFailedConditions)."""
    phase = section(pod, "status").get("phase")
    if phase == "Succeeded":
        message = "The pod has completed successfully."
    elif phase == "Failed":
        message = "The pod failed."
    else:
        return []
    return [{"type": "Completed", "status": "True", "reason": phase, "message": message}]


PODS = Printer(POD_COLUMNS, pod_cells, pod_conditions)

# --- nodes --------------------------------------------------------------------------------------

_ROLE_PREFIX = "node-role.kubernetes.io/"
_ROLE_LABEL = "kubernetes.io/role"


def node_roles(labels: Any) -> list[str]:
    """findNodeRoles: `node-role.kubernetes.io/<role>` keys and `kubernetes.io/role` values."""
    roles: set[str] = set()
    for key, value in (labels or {}).items() if isinstance(labels, Mapping) else ():
        if key.startswith(_ROLE_PREFIX) and key[len(_ROLE_PREFIX) :]:
            roles.add(key[len(_ROLE_PREFIX) :])
        elif key == _ROLE_LABEL and value:
            roles.add(str(value))
    return sorted(roles)


def _node_status(node: Obj) -> str:
    ready = None
    for cond in items(section(node, "status").get("conditions")):
        if isinstance(cond, Mapping) and cond.get("type") == "Ready":
            ready = cond  # the last one of a type wins, as in the printer's map
    status = (
        ["Unknown"] if ready is None else ["Ready" if ready.get("status") == "True" else "NotReady"]
    )
    if section(node, "spec").get("unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def _address(node: Obj, type_: str) -> str:
    for addr in items(section(node, "status").get("addresses")):
        if isinstance(addr, Mapping) and addr.get("type") == type_:
            return str(addr.get("address", ""))
    return "<none>"


def node_cells(node: Obj, now: float) -> Cells:
    info = section(node, "status", "nodeInfo")
    return [
        name(node),
        _node_status(node),
        ",".join(node_roles(meta(node).get("labels"))) or "<none>",
        age(node, now),
        str(info.get("kubeletVersion") or ""),
        _address(node, "InternalIP"),
        _address(node, "ExternalIP"),
        str(info.get("osImage") or "<unknown>"),
        str(info.get("kernelVersion") or "<unknown>"),
        str(info.get("containerRuntimeVersion") or "<unknown>"),
    ]


NODES = Printer(
    (
        NAME,
        Column("Status", "string", "Ready or NotReady, and SchedulingDisabled when cordoned."),
        Column("Roles", "string", "The node's roles, from its node-role labels."),
        AGE,
        Column("Version", "string", "The kubelet's version."),
        Column("Internal-IP", "string", "The node's first InternalIP address.", priority=1),
        Column("External-IP", "string", "The node's first ExternalIP address.", priority=1),
        Column("OS-Image", "string", "The operating system image.", priority=1),
        Column("Kernel-Version", "string", "The kernel version.", priority=1),
        Column("Container-Runtime", "string", "The container runtime and version.", priority=1),
    ),
    node_cells,
)

# --- events -------------------------------------------------------------------------------------


def _event_source(event: Obj) -> str:
    """formatEventSource: component (else reportingComponent), then `, host` (else instance)."""
    source = section(event, "source")
    component = str(source.get("component") or event.get("reportingComponent") or "")
    instance = str(source.get("host") or event.get("reportingInstance") or "")
    return f"{component}, {instance}" if instance else component


def event_cells(event: Obj, now: float) -> Cells:
    first = since(event.get("firstTimestamp"), now)
    if timestamp(event.get("firstTimestamp")) is None:
        first = since(event.get("eventTime"), now)
    last = since(event.get("lastTimestamp"), now)
    if timestamp(event.get("lastTimestamp")) is None:
        last = first
    count = integer(event.get("count"))
    series = event.get("series")
    if isinstance(series, Mapping):
        last = since(series.get("lastObservedTime"), now)
        count = integer(series.get("count"))
    elif count == 0:
        count = 1  # singleton events of the events.k8s.io API carry no count
    involved = section(event, "involvedObject")
    kind = str(involved.get("kind") or "").lower()
    target = f"{kind}/{involved['name']}" if involved.get("name") else kind
    return [
        last,
        str(event.get("type") or ""),
        str(event.get("reason") or ""),
        target,
        str(involved.get("fieldPath") or ""),
        _event_source(event),
        str(event.get("message") or "").strip(),
        first,
        count,
        name(event),
    ]


EVENTS = Printer(
    (
        Column("Last Seen", "string", "How long ago the event was last seen."),
        Column("Type", "string", "Normal or Warning."),
        Column("Reason", "string", "A short machine-readable cause."),
        Column("Object", "string", "The object the event is about (kind/name)."),
        Column("Subobject", "string", "The part of the object, e.g. a container.", priority=1),
        Column("Source", "string", "The component (and host) that reported it.", priority=1),
        Column("Message", "string", "What happened, for humans."),
        Column("First Seen", "string", "How long ago the event was first seen.", priority=1),
        Column("Count", "string", "How many times it happened.", priority=1),
        Column("Name", "string", NAME.description, "name", 1),
    ),
    event_cells,
)

# --- namespaces, config maps, secrets -----------------------------------------------------------


def namespace_cells(ns: Obj, now: float) -> Cells:
    return [name(ns), str(section(ns, "status").get("phase") or ""), age(ns, now)]


NAMESPACES = Printer(
    (NAME, Column("Status", "string", "The namespace's phase: Active or Terminating."), AGE),
    namespace_cells,
)


def _count(value: Any) -> int:
    return len(value) if isinstance(value, Mapping) else 0


def configmap_cells(cm: Obj, now: float) -> Cells:
    return [name(cm), _count(cm.get("data")) + _count(cm.get("binaryData")), age(cm, now)]


CONFIGMAPS = Printer(
    (NAME, Column("Data", "string", "How many keys the config map holds."), AGE),
    configmap_cells,
)


def secret_cells(secret: Obj, now: float) -> Cells:
    return [
        name(secret),
        str(secret.get("type") or ""),
        _count(secret.get("data")),
        age(secret, now),
    ]


SECRETS = Printer(
    (
        NAME,
        Column("Type", "string", "The secret's type."),
        Column("Data", "string", "How many keys the secret holds."),
        AGE,
    ),
    secret_cells,
)

PRINTERS = {
    "Pod": PODS,
    "Node": NODES,
    "Event": EVENTS,
    "Namespace": NAMESPACES,
    "ConfigMap": CONFIGMAPS,
    "Secret": SECRETS,
}
