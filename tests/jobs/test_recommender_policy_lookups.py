"""A recommender run finds each workload's policy among that workload's candidates only
(app.core.policy.PolicyIndex): with one policy per workload, as VPA's one VerticalPodAutoscaler
per Deployment has it, scanning every policy for every workload in each pass of a run grew with
workloads x policies (15,000 of each: 14 s a pass)."""

from __future__ import annotations

from typing import Any

import pytest
from flask import Flask
from sqlalchemy import select

from app.core.policy import Policy
from app.core.workload_key import WorkloadKey
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.recommender_runs import add_policy, deployment, make_job, step

WORKLOADS = 24


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return {
        "nodes": [{"namePrefix": "node", "count": 2, "cpu": "16", "memory": "64Gi"}],
        "namespaces": [{"name": "shop"}],
        "workloads": [deployment("shop", f"w-{i}", replicas=1) for i in range(WORKLOADS)],
    }


def test_each_workload_is_matched_with_its_own_policy_once_per_pass(
    app: Flask, cluster: ClusterView, sim: Simulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    for i in range(WORKLOADS):  # each capped at its own CPU: the right policy reached it
        caps = [{"containerName": "*", "maxAllowed": {"cpu": f"{i + 1}m"}}]
        add_policy(app, f"w-{i}", "shop", "Deployment", f"w-{i}", container_policies=caps)
    reads: list[tuple[str, WorkloadKey]] = []
    specificity = Policy.specificity

    def counted(self: Policy, w: WorkloadKey, labels: Any = None) -> int | None:
        reads.append((self.name, w))
        return specificity(self, w, labels)

    monkeypatch.setattr(Policy, "specificity", counted)
    job = make_job(app, cluster, sim)
    step(sim, job)
    with app.app_context():
        targets = {r.name: r.target_cpu for r in db.session.scalars(select(Recommendation))}
    assert targets == {f"w-{i}": i + 1 for i in range(WORKLOADS)}
    # the run's passes over the workloads (strategies, results, conditions) read each policy
    # a few times in all, never each policy for each workload (24 x 24 a pass before)
    assert {name for name, w in reads if name != w.name} == set()
    assert len(reads) <= 5 * WORKLOADS
