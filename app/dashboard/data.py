"""What the dashboard pages show, computed from the same rows and functions as the REST API, so a
number on a page always equals the one the API returns."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from app.core.policy import Policy, governing_policy
from app.core.recommend.model import WorkloadKey
from app.extensions import db
from app.models import Recommendation
from app.store.policies import InvalidPolicyLog, valid_policies
from app.store.recommendations import find_recommendations, recommended_namespaces


@dataclass
class ContainerView:
    name: str
    target: tuple[int, int]
    lower: tuple[int, int]
    upper: tuple[int, int]
    current: tuple[int | None, int | None]
    sample_count: int
    conflicts: dict[str, str]
    replicas: int | None = None  # live pods the recommender saw


@dataclass
class WorkloadView:
    namespace: str
    kind: str
    name: str
    mode: str  # the governing policy's updateMode, "Off" without one
    policy: str | None
    containers: list[ContainerView] = field(default_factory=list)

    @property
    def target_cpu(self) -> int:
        return sum(c.target[0] for c in self.containers)

    @property
    def target_memory(self) -> int:
        return sum(c.target[1] for c in self.containers)

    @property
    def current_cpu(self) -> int | None:
        known = [c.current[0] for c in self.containers if c.current[0] is not None]
        return sum(known) if known else None

    @property
    def current_memory(self) -> int | None:
        known = [c.current[1] for c in self.containers if c.current[1] is not None]
        return sum(known) if known else None

    @property
    def savings_cpu(self) -> int | None:
        """Millicores one replica would free, over the containers whose request is known."""
        pairs = [(c.current[0], c.target[0]) for c in self.containers if c.current[0] is not None]
        return sum(cur - t for cur, t in pairs) if pairs else None

    @property
    def savings_memory(self) -> int | None:
        pairs = [(c.current[1], c.target[1]) for c in self.containers if c.current[1] is not None]
        return sum(cur - t for cur, t in pairs) if pairs else None

    @property
    def replicas(self) -> int | None:
        known = [c.replicas for c in self.containers if c.replicas is not None]
        return max(known) if known else None


# A row edited by hand into nonsense governs nothing here either: logged once per version.
_INVALID_POLICIES = InvalidPolicyLog("dashboard")


def policies() -> list[Policy]:
    return valid_policies(db.session, _INVALID_POLICIES)


def _container(r: Recommendation) -> ContainerView:
    return ContainerView(
        r.container,
        (r.target_cpu, r.target_memory),
        (r.lower_bound_cpu, r.lower_bound_memory),
        (r.upper_bound_cpu, r.upper_bound_memory),
        (r.current_cpu_request, r.current_memory_request),
        r.sample_count,
        dict(r.conflicts or {}),
        r.replicas,
    )


def workloads(namespace: str | None = None) -> list[WorkloadView]:
    known = policies()
    out: dict[tuple[str, str, str], WorkloadView] = {}
    for r in find_recommendations(db.session, namespace=namespace):
        key = (r.namespace, r.kind, r.name)
        if key not in out:
            p = governing_policy(known, WorkloadKey(*key))
            out[key] = WorkloadView(
                *key,
                mode=p.update_mode if p else "Off",
                policy=f"{p.namespace}/{p.name}" if p else None,
            )
        out[key].containers.append(_container(r))
    return list(out.values())


def namespaces() -> list[str]:
    return recommended_namespaces(db.session)


@dataclass
class Totals:
    workloads: int
    containers: int
    target_cpu: int
    target_memory: int
    # Over the containers whose current requests are known (the only fair comparison):
    known_containers: int
    current_cpu: int
    current_memory: int
    known_target_cpu: int
    known_target_memory: int
    # Over all live replicas, of the containers whose requests and replicas are known (as the
    # API's estimatedSavings):
    replica_containers: int = 0
    all_current_cpu: int = 0
    all_current_memory: int = 0
    all_target_cpu: int = 0
    all_target_memory: int = 0

    @property
    def all_savings_cpu(self) -> int:
        return self.all_current_cpu - self.all_target_cpu

    @property
    def all_savings_memory(self) -> int:
        return self.all_current_memory - self.all_target_memory

    @property
    def savings_cpu(self) -> int:
        return self.current_cpu - self.known_target_cpu

    @property
    def savings_memory(self) -> int:
        return self.current_memory - self.known_target_memory


def totals(ws: list[WorkloadView]) -> Totals:
    cs = [c for w in ws for c in w.containers]
    known = [c for c in cs if c.current[0] is not None and c.current[1] is not None]
    scaled = [c for c in known if c.replicas is not None]
    return Totals(
        replica_containers=len(scaled),
        all_current_cpu=sum((c.current[0] or 0) * (c.replicas or 0) for c in scaled),
        all_current_memory=sum((c.current[1] or 0) * (c.replicas or 0) for c in scaled),
        all_target_cpu=sum(c.target[0] * (c.replicas or 0) for c in scaled),
        all_target_memory=sum(c.target[1] * (c.replicas or 0) for c in scaled),
        workloads=len(ws),
        containers=len(cs),
        target_cpu=sum(c.target[0] for c in cs),
        target_memory=sum(c.target[1] for c in cs),
        known_containers=len(known),
        current_cpu=sum(c.current[0] or 0 for c in known),
        current_memory=sum(c.current[1] or 0 for c in known),
        known_target_cpu=sum(c.target[0] for c in known),
        known_target_memory=sum(c.target[1] for c in known),
    )


SORTS: dict[str, Any] = {
    "namespace": lambda w: (w.namespace, w.kind, w.name),
    "name": lambda w: (w.name, w.namespace),
    "cpu": lambda w: w.target_cpu,
    "memory": lambda w: w.target_memory,
    "savings": lambda w: (w.savings_cpu is None, -(w.savings_cpu or 0)),
}
