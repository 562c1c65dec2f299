"""Scenario files (YAML): the nodes, namespaces, workloads with usage profiles, and extra objects
a simulated cluster starts with, optionally with days of history behind them."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from app.simulator.apiserver import quantity
from app.simulator.apiserver.resources import NAMESPACE, POD, by_kind
from app.simulator.apiserver.version import KubeVersion
from app.simulator.control.cluster import SimCluster, generic_create
from app.simulator.control.extenders import HTTPExtender, parse_extenders
from app.simulator.workload.usage import (
    DAY,
    CpuProfile,
    MemoryProfile,
    NodeFactor,
    NodeFactors,
    UsageProfile,
)

DEFAULT_SCENARIO = Path(__file__).with_name("default.yaml")
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")
WORKLOAD_KINDS = ("Deployment", "StatefulSet", "DaemonSet")


class ScenarioError(ValueError):
    """A scenario file that cannot be loaded; the message names the offending field."""


@dataclass(frozen=True)
class NodeGroup:
    name_prefix: str
    count: int
    cpu: str
    memory: str
    pods: int
    labels: dict[str, str]


@dataclass(frozen=True)
class Container:
    name: str
    image: str
    requests: dict[str, str]
    limits: dict[str, str]
    usage: UsageProfile


@dataclass(frozen=True)
class Workload:
    kind: str
    namespace: str
    name: str
    replicas: int
    labels: dict[str, str]
    containers: tuple[Container, ...]
    node_selector: dict[str, str]
    tolerations: tuple[dict[str, Any], ...]


@dataclass(frozen=True)
class Scenario:
    seed: int = 0
    history_days: float = 0.0
    nodes: tuple[NodeGroup, ...] = ()
    namespaces: tuple[tuple[str, dict[str, str]], ...] = ()
    workloads: tuple[Workload, ...] = ()
    objects: tuple[dict[str, Any], ...] = ()
    webhook_services: dict[str, str] = field(default_factory=dict)
    kubernetes_version: str | None = None  # e.g. "1.34"; None: the simulator's default
    # the scheduler's extenders, as a KubeSchedulerConfiguration's `extenders` (extenders.py)
    scheduler_extenders: tuple[HTTPExtender, ...] = ()


# --- parsing ----------------------------------------------------------------------------------


def load(source: str | os.PathLike[str] | Mapping[str, Any] | None = None) -> Scenario:
    """A scenario from a YAML file, an already-parsed mapping, or (None) the bundled default."""
    if source is None:
        source = DEFAULT_SCENARIO
    if isinstance(source, Mapping):
        return parse(source)
    path = Path(source)
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except OSError as e:
        raise ScenarioError(f"{path}: {e.strerror}") from None
    except yaml.YAMLError as e:
        raise ScenarioError(f"{path}: not valid YAML: {e}") from None
    try:
        return parse(data)
    except ScenarioError as e:
        raise ScenarioError(f"{path}: {e}") from None


def _get(
    d: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...], default: Any = ...
) -> Any:
    if key not in d or d[key] is None:
        if default is ...:
            raise ScenarioError(f"{path}.{key}: required")
        return default
    value = d[key]
    kinds = kind if isinstance(kind, tuple) else (kind,)
    if not isinstance(value, kinds) or (isinstance(value, bool) and bool not in kinds):
        name = kind.__name__ if isinstance(kind, type) else " or ".join(k.__name__ for k in kind)
        raise ScenarioError(f"{path}.{key}: expected {name}, got {value!r}")
    return value


def _str_map(d: Mapping[str, Any], key: str, path: str) -> dict[str, str]:
    value = _get(d, key, path, dict, {})
    return {str(k): str(v) for k, v in value.items()}


def _quantity(value: Any, path: str, parse: Any) -> float:
    try:
        return float(parse(value))
    except ValueError as e:
        raise ScenarioError(f"{path}: {e}") from None


def _profile(d: Mapping[str, Any], path: str, requests: dict[str, str]) -> UsageProfile:
    cpu = _get(d, "cpu", path, dict, {})
    mem = _get(d, "memory", path, dict, {})
    num = (int, float)
    cpu_base = cpu.get("base", requests.get("cpu", "100m"))
    mem_base = mem.get("base", requests.get("memory", "128Mi"))
    return UsageProfile(
        CpuProfile(
            base=_quantity(cpu_base, f"{path}.cpu.base", quantity.cores),
            daily=float(_get(cpu, "daily", f"{path}.cpu", num, 0.0)),
            noise=float(_get(cpu, "noise", f"{path}.cpu", num, 0.0)),
            spike_probability=float(_get(cpu, "spikeProbability", f"{path}.cpu", num, 0.0)),
            spike_factor=float(_get(cpu, "spikeFactor", f"{path}.cpu", num, 1.0)),
        ),
        MemoryProfile(
            base=_quantity(mem_base, f"{path}.memory.base", quantity.bytes_),
            daily=float(_get(mem, "daily", f"{path}.memory", num, 0.0)),
            noise=float(_get(mem, "noise", f"{path}.memory", num, 0.0)),
            growth_per_day=_quantity(
                mem.get("growthPerDay", 0), f"{path}.memory.growthPerDay", quantity.bytes_
            ),
        ),
        _node_factors(d.get("nodeFactors"), f"{path}.nodeFactors"),
    )


def _node_factors(d: Any, path: str) -> NodeFactors | None:
    """`usage.nodeFactors: {label: <node label>, values: {<value>: {cpu: 4, memory: 2}}}`."""
    if d is None:
        return None
    if not isinstance(d, Mapping):
        raise ScenarioError(f"{path}: expected a mapping with label and values")
    unknown = sorted(set(d) - {"label", "values"})
    if unknown:
        raise ScenarioError(f"{path}.{unknown[0]}: unknown field")
    label = _get(d, "label", path, str)
    factors = []
    for value, f in _get(d, "values", path, dict).items():
        p = f"{path}.values.{value}"
        if not isinstance(f, Mapping):
            raise ScenarioError(f"{p}: expected a mapping such as {{cpu: 4, memory: 2}}")
        unknown = sorted(set(f) - {"cpu", "memory"})
        if unknown:
            raise ScenarioError(f"{p}.{unknown[0]}: unknown field")
        cpu, memory = (float(_get(f, k, p, (int, float), 1.0)) for k in ("cpu", "memory"))
        for k, v in (("cpu", cpu), ("memory", memory)):
            if v < 0:
                raise ScenarioError(f"{p}.{k}: must not be negative, got {v:g}")
        factors.append(NodeFactor(str(value), cpu, memory))
    return NodeFactors(label, tuple(factors))


def parse(data: Any) -> Scenario:
    if not isinstance(data, Mapping):
        raise ScenarioError("a scenario must be a mapping")
    known = {
        "seed",
        "historyDays",
        "nodes",
        "namespaces",
        "workloads",
        "objects",
        "webhookServices",
        "kubernetesVersion",
        "schedulerExtenders",
    }
    unknown = sorted(set(data) - known)
    if unknown:
        raise ScenarioError(f"unknown field(s): {', '.join(unknown)}")
    nodes = []
    for i, n in enumerate(_get(data, "nodes", "", list, [])):
        p = f"nodes[{i}]"
        if not isinstance(n, Mapping):
            raise ScenarioError(f"{p}: expected a mapping")
        group = NodeGroup(
            str(_get(n, "namePrefix", p, str, "node")),
            int(_get(n, "count", p, int, 1)),
            str(_get(n, "cpu", p, (str, int), "8")),
            str(_get(n, "memory", p, str, "32Gi")),
            int(_get(n, "pods", p, int, 110)),
            _str_map(n, "labels", p),
        )
        for field_, parser in (("cpu", quantity.cores), ("memory", quantity.bytes_)):
            _quantity(getattr(group, field_), f"{p}.{field_}", parser)
        nodes.append(group)
    namespaces: list[Any] = []
    for i, ns in enumerate(_get(data, "namespaces", "", list, [])):
        p = f"namespaces[{i}]"
        if isinstance(ns, str):
            namespaces.append((ns, {}))
        elif isinstance(ns, Mapping):
            namespaces.append((str(_get(ns, "name", p, str)), _str_map(ns, "labels", p)))
        else:
            raise ScenarioError(f"{p}: expected a name or a mapping")
    workloads = [
        _workload(w, f"workloads[{i}]") for i, w in enumerate(_get(data, "workloads", "", list, []))
    ]
    objects = _get(data, "objects", "", list, [])
    defined: set[tuple[str, str]] = set()  # (apiVersion, kind) of the CRDs listed so far
    for i, obj in enumerate(objects):
        if not isinstance(obj, Mapping):
            raise ScenarioError(f"objects[{i}]: not an object of a kind the simulator serves")
        defined |= _defines(obj)
        if not by_kind(str(obj.get("kind"))) and (obj.get("apiVersion"), obj.get("kind")) not in (
            defined
        ):
            raise ScenarioError(
                f"objects[{i}]: not an object of a kind the simulator serves "
                "(or a CustomResourceDefinition listed before it defines)"
            )
    return Scenario(
        seed=int(_get(data, "seed", "", int, 0)),
        history_days=float(_get(data, "historyDays", "", (int, float), 0)),
        nodes=tuple(nodes),
        namespaces=tuple(namespaces),
        workloads=tuple(workloads),
        objects=tuple(objects),
        webhook_services=_str_map(data, "webhookServices", ""),
        kubernetes_version=_version(data),
        scheduler_extenders=_extenders(data),
    )


def _extenders(data: Mapping[str, Any]) -> tuple[HTTPExtender, ...]:
    try:
        return tuple(parse_extenders(data.get("schedulerExtenders")))
    except ValueError as e:
        sep = "" if str(e).startswith("[") else ": "
        raise ScenarioError(f"schedulerExtenders{sep}{e}") from None


def _version(data: Mapping[str, Any]) -> str | None:
    value = data.get("kubernetesVersion")
    if value is None:
        return None
    try:
        KubeVersion.parse(str(value))
    except ValueError as e:
        raise ScenarioError(f"kubernetesVersion: {e}") from None
    return str(value)


def _workload(w: Any, p: str) -> Workload:
    if not isinstance(w, Mapping):
        raise ScenarioError(f"{p}: expected a mapping")
    kind = _get(w, "kind", p, str, "Deployment")
    if kind not in WORKLOAD_KINDS:
        raise ScenarioError(f"{p}.kind: must be one of {', '.join(WORKLOAD_KINDS)}")
    name = _get(w, "name", p, str)
    containers = []
    for j, c in enumerate(_get(w, "containers", p, list)):
        cp = f"{p}.containers[{j}]"
        if not isinstance(c, Mapping):
            raise ScenarioError(f"{cp}: expected a mapping")
        requests = _str_map(c, "requests", cp)
        limits = _str_map(c, "limits", cp)
        for field_, values in (("requests", requests), ("limits", limits)):
            for res, v in values.items():
                _quantity(v, f"{cp}.{field_}.{res}", quantity.parse)
                values[res] = quantity.stored(v)  # as kube-apiserver would store it: 0.5 -> 500m
        containers.append(
            Container(
                _get(c, "name", cp, str),
                _get(c, "image", cp, str, "registry.k8s.io/pause:3.10"),
                requests,
                limits,
                _profile(_get(c, "usage", cp, dict, {}), f"{cp}.usage", requests),
            )
        )
    if not containers:
        raise ScenarioError(f"{p}.containers: at least one container is required")
    return Workload(
        kind,
        _get(w, "namespace", p, str, "default"),
        name,
        int(_get(w, "replicas", p, int, 1)),
        _str_map(w, "labels", p) or {"app": name},
        tuple(containers),
        _str_map(w, "nodeSelector", p),
        tuple(_get(w, "tolerations", p, list, [])),
    )


# --- building a cluster -----------------------------------------------------------------------


def workload_object(w: Workload) -> dict[str, Any]:
    containers = []
    for c in w.containers:
        resources: dict[str, Any] = {}
        if c.requests:
            resources["requests"] = dict(c.requests)
        if c.limits:
            resources["limits"] = dict(c.limits)
        containers.append({"name": c.name, "image": c.image, "resources": resources})
    pod_spec: dict[str, Any] = {"containers": containers}
    if w.node_selector:
        pod_spec["nodeSelector"] = dict(w.node_selector)
    if w.tolerations:
        pod_spec["tolerations"] = [dict(t) for t in w.tolerations]
    spec: dict[str, Any] = {
        "selector": {"matchLabels": dict(w.labels)},
        "template": {"metadata": {"labels": dict(w.labels)}, "spec": pod_spec},
    }
    if w.kind != "DaemonSet":
        spec["replicas"] = w.replicas
    return {
        "apiVersion": "apps/v1",
        "kind": w.kind,
        "metadata": {"name": w.name, "namespace": w.namespace, "labels": dict(w.labels)},
        "spec": spec,
    }


def ensure_namespace(cluster: SimCluster, name: str, labels: dict[str, str] | None = None) -> None:
    if cluster.store.get(NAMESPACE, "", name) is None:
        generic_create(
            cluster, NAMESPACE, "", {"metadata": {"name": name, "labels": dict(labels or {})}}
        )


def build(cluster: SimCluster, scenario: Scenario) -> None:
    """Create the scenario's objects at the history start, then run the clock to now.

    The cluster clock must stand at (now - historyDays) when this is called: objects and pods
    are created then, and advancing to now replays their usage (and OOM kills) over the history.
    """
    cluster.service_urls.update(scenario.webhook_services)
    cluster.extenders = list(scenario.scheduler_extenders)
    for ns in SYSTEM_NAMESPACES:
        ensure_namespace(cluster, ns)
    for name, labels in scenario.namespaces:
        ensure_namespace(cluster, name, labels)
    for group in scenario.nodes:
        for i in range(group.count):
            cluster.add_node(
                f"{group.name_prefix}-{i}",
                cpu=group.cpu,
                memory=group.memory,
                pods=group.pods,
                labels=group.labels,
            )
    for w in scenario.workloads:
        ensure_namespace(cluster, w.namespace)
        cluster.profiles[(w.namespace, w.name)] = {c.name: c.usage for c in w.containers}
        obj = workload_object(w)
        generic_create(cluster, by_kind(w.kind), w.namespace, obj)  # type: ignore[arg-type]
    cluster.settle()
    for obj in scenario.objects:
        rt = by_kind(obj["kind"]) or cluster.resources.by_kind(obj["kind"], obj.get("apiVersion"))
        assert rt is not None
        body = _plain(obj)
        ns = body.get("metadata", {}).get("namespace", "default") if rt.namespaced else ""
        if rt.namespaced:
            ensure_namespace(cluster, ns)
        if rt is POD:
            cluster.create_pod(ns, body)
        else:
            generic_create(cluster, rt, ns, body)
    cluster.settle()
    if scenario.history_days:
        cluster.advance(scenario.history_days * DAY)


def _defines(obj: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (apiVersion, kind) pairs a CustomResourceDefinition serves (none for other kinds)."""
    spec = obj.get("spec")
    if obj.get("kind") != "CustomResourceDefinition" or not isinstance(spec, Mapping):
        return set()
    kind = str((spec.get("names") or {}).get("kind"))
    return {
        (f"{spec.get('group')}/{v.get('name')}", kind)
        for v in spec.get("versions") or []
        if isinstance(v, Mapping) and v.get("served")
    }


def _plain(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A deep, mutable copy of a YAML-loaded object."""
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_plain(v) for v in obj]
    return obj
