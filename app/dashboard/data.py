"""What the dashboard pages show, computed from the same rows and functions as the REST API, so a
number on a page always equals the one the API returns.

Savings are over the real pods of each workload (app.store.savings, app.core.savings): per
container the sum over its live pods of request - recommendation, added up per workload and over
everything; a shortfall (negative) is a risk, listed apart from the waste. Only what rightsizer
would change counts (app.core.scope): what it leaves alone (an HPA's resource, a namespace never
sized, a container policy Off or not controlling it) counts 0 and is listed with the reason; a
shortfall only because the recommendation is the pod minimum (250Mi a pod) is not a risk and is
counted apart.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from itertools import groupby
from typing import Any

from app.core.history import History, history
from app.core.savings import Prices, Savings, total
from app.core.scope import BASIS_LABELS, DEFAULT, shortfalls
from app.settings import settings
from app.store.extensions import db
from app.store.models import Recommendation
from app.store.policies import InvalidPolicyLog
from app.store.recommendations import find_recommendations, recommended_namespaces
from app.store.savings import Scoper, over_pods
from app.store.session import to_unix

RESOURCES = ("cpu", "memory")


@dataclass
class ContainerView:
    name: str
    target: tuple[int, int]
    lower: tuple[int, int]
    upper: tuple[int, int]
    current: tuple[int | None, int | None]  # a pod's request (the most common)
    sample_count: int
    conflicts: dict[str, str]
    replicas: int | None = None  # live pods running it, when seen
    requested: tuple[int, int] | None = None  # the sum of those pods' requests
    savings: Savings | None = None  # over those pods, of what rightsizer would change
    excluded: dict[str, str] = field(default_factory=dict)  # resource -> why it is left alone
    history: History = field(default_factory=lambda: History(0.0, 0.0))  # vs what is needed

    @property
    def recommended(self) -> tuple[int, int] | None:
        """What all its pods would request with the recommendation: the target where rightsizer
        would set it, their requests as they are where it leaves them alone."""
        if self.replicas is None:
            return None
        out = [t * self.replicas for t in self.target]
        if self.requested is not None:
            for i, r in enumerate(RESOURCES):
                if r in self.excluded:
                    out[i] = self.requested[i]
        return out[0], out[1]

    def left_alone_notes(self) -> list[tuple[str, str]]:
        """(resources, why) of what rightsizer leaves alone, one per reason: "cpu and memory"."""
        by_reason: dict[str, list[str]] = {}
        for r, why in self.excluded.items():
            by_reason.setdefault(why, []).append(r)
        return [(" and ".join(rs), why) for why, rs in by_reason.items()]

    @property
    def pods_differ(self) -> bool:
        """Its pods do not all ask for the same (one resized, a rollout half done)."""
        if self.requested is None or self.replicas is None:
            return False
        return any(
            (cur or 0) * self.replicas != req
            for cur, req in zip(self.current, self.requested, strict=True)
        )


@dataclass(frozen=True)
class Shortfall:
    """A container asking for less than its recommendation: what its pods lack together."""

    workload: WorkloadView
    container: ContainerView
    resource: str
    lacking: int  # millicores or bytes, over its pods (positive)
    at_pod_minimum: bool = False  # the recommendation is the pod minimum: not a shortage


@dataclass
class WorkloadView:
    namespace: str
    kind: str
    name: str
    mode: str  # the governing policy's updateMode, "Off" without one
    policy: str | None
    containers: list[ContainerView] = field(default_factory=list)
    basis: str = DEFAULT  # what its savings assume (app.core.scope)
    pod_minimum: tuple[int, int] = (0, 0)  # a container's share of the pod minimum

    @property
    def basis_label(self) -> str:
        return BASIS_LABELS[self.basis]

    @property
    def all_left_alone(self) -> bool:
        """rightsizer changes nothing of it (a namespace never sized, every container Off...)."""
        return all(set(c.excluded) == set(RESOURCES) for c in self.containers)

    @property
    def target_cpu(self) -> int:
        return sum(c.target[0] for c in self.containers)

    @property
    def target_memory(self) -> int:
        return sum(c.target[1] for c in self.containers)

    @property
    def pods(self) -> int | None:
        known = [c.replicas for c in self.containers if c.replicas is not None]
        return max(known) if known else None

    def _seen(self) -> list[ContainerView]:
        return [c for c in self.containers if c.savings is not None]

    @property
    def requested(self) -> tuple[int, int] | None:
        """All its pods' requests, over the containers whose pods were seen."""
        seen = self._seen()
        return _summed([c.requested for c in seen]) if seen else None

    @property
    def recommended(self) -> tuple[int, int] | None:
        seen = self._seen()
        return _summed([c.recommended for c in seen]) if seen else None

    @property
    def savings(self) -> Savings | None:
        seen = self._seen()
        return total(c.savings for c in seen if c.savings) if seen else None

    @property
    def savings_cpu(self) -> int | None:
        return self.savings.cpu if self.savings else None

    @property
    def savings_memory(self) -> int | None:
        return self.savings.memory if self.savings else None

    def shortfalls(self) -> list[Shortfall]:
        out = []
        for c in self._seen():
            assert c.savings is not None
            for s in shortfalls(c.savings, c.target, self.pod_minimum):
                out.append(Shortfall(self, c, s.resource, s.lacking, s.at_pod_minimum))
        return out

    def left_alone(self) -> list[tuple[str, str, str]]:
        """(reason, resources, containers) of what rightsizer leaves alone, one per reason."""
        by_reason: dict[str, tuple[list[str], list[str]]] = {}
        for c in self.containers:
            for r, why in c.excluded.items():
                resources, containers = by_reason.setdefault(why, ([], []))
                if r not in resources:
                    resources.append(r)
                if c.name not in containers:
                    containers.append(c.name)
        return [(why, " and ".join(rs), ", ".join(cs)) for why, (rs, cs) in by_reason.items()]


# A row edited by hand into nonsense governs nothing here either: logged once per version.
_INVALID_POLICIES = InvalidPolicyLog("dashboard")


def prices() -> Prices:
    s = settings().dashboard
    return Prices(s.price_per_core_hour, s.price_per_gib_hour, s.currency)


def _container(r: Recommendation, excluded: dict[str, str], needed: float) -> ContainerView:
    requested = (
        (r.requested_cpu_total, r.requested_memory_total)
        if r.requested_cpu_total is not None and r.requested_memory_total is not None
        else None
    )
    return ContainerView(
        r.container,
        (r.target_cpu, r.target_memory),
        (r.lower_bound_cpu, r.lower_bound_memory),
        (r.upper_bound_cpu, r.upper_bound_memory),
        (r.current_cpu_request, r.current_memory_request),
        r.sample_count,
        dict(r.conflicts or {}),
        r.replicas,
        requested,
        over_pods(r, excluded),
        excluded,
        history(to_unix(r.first_sample_at), to_unix(r.last_sample_at), needed),
    )


def scoper(namespace: str | None = None) -> Scoper:
    """Scoper.as_configured, with this module's log of invalid policies."""
    return Scoper.as_configured(db.session, _INVALID_POLICIES, settings(), namespace)


def workloads(namespace: str | None = None) -> list[WorkloadView]:
    scope_of = scoper(namespace)
    needed = settings().updater.min_history_seconds  # the history the updater wants
    out = []
    rows = find_recommendations(db.session, namespace=namespace)
    for (ns, kind, name), group in groupby(rows, key=lambda r: (r.namespace, r.kind, r.name)):
        members = list(group)
        scope = scope_of(members)
        p = scope.policy
        w = WorkloadView(
            ns,
            kind,
            name,
            mode=p.update_mode if p else "Off",
            policy=f"{p.namespace}/{p.name}" if p else None,
            basis=scope.basis,
            pod_minimum=scope.pod_minimum,
        )
        w.containers = [_container(r, scope.of(r.container), needed) for r in members]
        out.append(w)
    return out


def namespaces() -> list[str]:
    return recommended_namespaces(db.session)


def _summed(pairs: list[tuple[int, int] | None]) -> tuple[int, int]:
    """(CPU, memory) added up over the containers that have them."""
    present = [p for p in pairs if p]
    return sum(p[0] for p in present), sum(p[1] for p in present)


@dataclass
class Totals:
    workloads: int
    containers: int
    target_cpu: int  # one pod of each workload: what a pod of each is recommended
    target_memory: int
    # Over the workloads whose pods were seen, all their pods:
    seen_workloads: int = 0
    pods: int = 0
    requested_cpu: int = 0
    requested_memory: int = 0
    recommended_cpu: int = 0
    recommended_memory: int = 0
    savings: Savings = field(default_factory=Savings)

    @property
    def savings_cpu(self) -> int:
        return self.savings.cpu

    @property
    def savings_memory(self) -> int:
        return self.savings.memory


def totals(ws: list[WorkloadView]) -> Totals:
    seen = [w for w in ws if w.savings is not None]
    t = Totals(
        workloads=len(ws),
        containers=sum(len(w.containers) for w in ws),
        target_cpu=sum(w.target_cpu for w in ws),
        target_memory=sum(w.target_memory for w in ws),
        seen_workloads=len(seen),
        pods=sum(w.pods or 0 for w in seen),
    )
    for w in seen:
        req, rec = w.requested, w.recommended
        assert req is not None and rec is not None and w.savings is not None
        t.requested_cpu += req[0]
        t.requested_memory += req[1]
        t.recommended_cpu += rec[0]
        t.recommended_memory += rec[1]
        t.savings += w.savings
    return t


def waste(ws: list[WorkloadView], p: Prices, limit: int = 10) -> list[WorkloadView]:
    """Over-provisioned workloads: the recommendation would free money, most first."""
    over = [w for w in ws if w.savings is not None and p.per_hour(w.savings) > 0]
    return sorted(over, key=lambda w: -p.per_hour(w.savings or Savings()))[:limit]


def risk(ws: list[WorkloadView], p: Prices, limit: int = 10) -> list[Shortfall]:
    """Under-provisioned containers: their pods ask for less than recommended (they may be
    throttled, OOM-killed or evicted first), the largest shortfall in money first. Not those
    whose recommendation is only the pod minimum (`at_pod_minimum`)."""
    found = [s for w in ws for s in w.shortfalls() if not s.at_pod_minimum]

    def cost(s: Shortfall) -> float:
        lack = Savings(s.lacking, 0) if s.resource == "cpu" else Savings(0, s.lacking)
        return p.per_hour(lack)

    return sorted(found, key=lambda s: (-cost(s), s.resource))[:limit]


@dataclass(frozen=True)
class PodMinimumRaises:
    """Containers whose pods ask for less than the pod minimum they are recommended: raised to
    the floor, not short of what they use."""

    containers: int
    cpu: int  # added over all their pods, millicores
    memory: int  # bytes


def pod_minimum_raises(ws: list[WorkloadView]) -> PodMinimumRaises:
    found = [s for w in ws for s in w.shortfalls() if s.at_pod_minimum]
    return PodMinimumRaises(
        len(
            {
                (s.workload.namespace, s.workload.kind, s.workload.name, s.container.name)
                for s in found
            }
        ),
        sum(s.lacking for s in found if s.resource == "cpu"),
        sum(s.lacking for s in found if s.resource == "memory"),
    )


@dataclass(frozen=True)
class LeftAlone:
    """What the savings leave out: the first `limit` items, and how many there are in all."""

    items: list[tuple[WorkloadView, str, str, str]]  # workload, reason, resources, containers
    count: int

    @property
    def more(self) -> int:
        return self.count - len(self.items)


def left_alone(ws: list[WorkloadView], limit: int = 30) -> LeftAlone:
    """(workload, reason, resources, containers) of what the savings leave out, the first
    `limit` of them (a cluster's kube-system alone may hold hundreds)."""
    found = [(w, *item) for w in ws for item in w.left_alone()]
    return LeftAlone(found[:limit], len(found))


def bases(ws: list[WorkloadView]) -> dict[str, int]:
    """How many workloads (whose pods were seen) each basis counts."""
    out: dict[str, int] = {}
    for w in ws:
        if w.savings is not None:
            out[w.basis] = out.get(w.basis, 0) + 1
    return out


SORTS: dict[str, Any] = {
    "namespace": lambda w, p: (w.namespace, w.kind, w.name),
    "name": lambda w, p: (w.name, w.namespace),
    "cpu": lambda w, p: w.target_cpu,
    "memory": lambda w, p: w.target_memory,
    "pods": lambda w, p: (w.pods is None, -(w.pods or 0)),
    # the most money freed first; workloads whose pods were not seen last
    "savings": lambda w, p: (w.savings is None, -p.per_hour(w.savings) if w.savings else 0.0),
}


def sort_key(name: str, p: Prices) -> Any:
    by = SORTS[name]
    return lambda w: by(w, p)
