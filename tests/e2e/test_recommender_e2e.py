"""End to end: the simulated cluster and `rightsizer serve` as separate processes, real HTTP.

The simulator's clock is frozen and moved by the test, so the test can read exactly the PodMetrics
and pod statuses the recommender read, feed them to the engine itself, and compare.
"""

from __future__ import annotations

import json
import re
import signal
import time
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.core.owners import workload_of_pod
from app.core.pods import PodView
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.histogram import HistogramCheckpoint
from app.core.recommend.samples import new_oom_kills, usage_from_metrics
from app.core.workload_key import WorkloadKey
from app.simulator.simulator import Simulator
from tests.support.json_bodies import raw_body
from tests.support.processes import AppProcess, recommendations, wait_for

pytestmark = pytest.mark.e2e


@pytest.fixture(scope="module")
def sim_namespaces() -> tuple[str, ...]:
    return ("rightsizer",)


class Engine:
    """The recommender engine fed by the test from the same API the app reads."""

    def __init__(self, sim: Simulator) -> None:
        self.api = sim.api_client()
        self.model = ArrayModel()
        self.restarts: dict[tuple[str, str, str], int] = {}

    def observe(self) -> None:
        core, apps = client.CoreV1Api(self.api), client.AppsV1Api(self.api)
        custom = client.CustomObjectsApi(self.api)
        pods = json.loads(raw_body(core.list_pod_for_all_namespaces(_preload_content=False)))[
            "items"
        ]
        rs = json.loads(raw_body(apps.list_replica_set_for_all_namespaces(_preload_content=False)))[
            "items"
        ]
        owners = {(r["metadata"]["namespace"], "ReplicaSet", r["metadata"]["name"]): r for r in rs}

        def lookup(ns: str, kind: str, name: str) -> Any:
            return owners.get((ns, kind, name))

        by_name = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        metrics = custom.list_cluster_custom_object(
            "metrics.k8s.io", "v1beta1", "pods", _preload_content=False
        )
        for item in json.loads(raw_body(metrics))["items"]:
            pod = by_name.get((item["metadata"]["namespace"], item["metadata"]["name"]))
            w = pod and workload_of_pod(pod, lookup=lookup)
            if not w:
                continue
            res = PodView.parse(pod).resources()
            for u in usage_from_metrics(item):
                if u.container not in res:
                    continue
                if u.cpu_cores is not None:
                    self.model.add_cpu(
                        w,
                        u.pod,
                        u.container,
                        u.time,
                        u.cpu_cores,
                        (res[u.container].cpu_request or 0) / 1000,
                    )
                if u.memory_bytes is not None:
                    self.model.add_memory(w, u.pod, u.container, u.time, u.memory_bytes)
        for pod in pods:
            kills = new_oom_kills(PodView.parse(pod), self.restarts)
            w = workload_of_pod(pod, lookup=lookup) if kills else None
            for k in kills if w else []:
                self.model.record_oom(w, k.pod, k.container, k.time, k.memory_bytes)

    def samples(self) -> int:
        m = self.model
        return sum(int(m.count[row]) for c in m.rows.values() for row in c.values())

    def expected(self) -> dict[tuple[str, str, str, str], dict[str, dict[str, str]]]:
        return self._recommendations(self.model)

    def expected_after_checkpoint_round_trip(
        self,
    ) -> dict[tuple[str, str, str, str], dict[str, dict[str, str]]]:
        """What a restarted app must serve: every aggregate saved and loaded as a checkpoint.

        Checkpoints round bucket weights (heaviest = 10000), so percentiles may move by up to one
        bucket from `expected()`; this computes exactly where they land.
        """
        restored = ArrayModel(self.model.settings)
        for w, containers in self.model.rows.items():
            for name in containers:
                cp = self.model.save(w, name)
                cp.cpu = HistogramCheckpoint.from_json(cp.cpu.to_json())
                cp.memory = HistogramCheckpoint.from_json(cp.memory.to_json())
                restored.restore(w, name, cp)
        return self._recommendations(restored)

    @staticmethod
    def _recommendations(
        model: ArrayModel,
    ) -> dict[tuple[str, str, str, str], dict[str, dict[str, str]]]:
        out = {}
        for w in model.workloads():
            for name, rec in model.recommend(w).items():
                out[(w.namespace, w.kind, w.name, name)] = {
                    "target": rec.target.as_quantities(),
                    "lowerBound": rec.lower_bound.as_quantities(),
                    "upperBound": rec.upper_bound.as_quantities(),
                }
        return out


RUN_AFTER_RESTORE = re.compile(
    r"restored (?P<restored>\d+) checkpoints.*?"
    r"recommender run: \d+ pod metrics, (?P<samples>\d+) samples, (?P<ooms>\d+) OOM kills, "
    r".*?; saved \d+, failed (?P<failed>\d+),",
    re.S,
)


def run_after_restore(log: str) -> dict[str, str] | None:
    """What the run that restored the checkpoints did, once it has saved (its summary line):
    the number restored, samples and OOM kills fed, recommendations that failed to save."""
    m = RUN_AFTER_RESTORE.search(log)
    return m.groupdict() if m else None


def served_samples(app: AppProcess) -> int:
    return sum(c["sampleCount"] for c in recommendations(app).values())


def scenario_workloads(sim: Simulator) -> set[WorkloadKey]:
    api = sim.api_client()
    apps = client.AppsV1Api(api)
    out = set()
    for kind, items in (
        ("Deployment", apps.list_deployment_for_all_namespaces().items),
        ("StatefulSet", apps.list_stateful_set_for_all_namespaces().items),
        ("DaemonSet", apps.list_daemon_set_for_all_namespaces().items),
    ):
        out |= {WorkloadKey(i.metadata.namespace, kind, i.metadata.name) for i in items}
    api.close()
    return out


def test_recommendations_match_the_engine_and_survive_a_restart(
    sim: Simulator, tmp_path: Path
) -> None:
    db = f"sqlite:///{tmp_path}/rightsizer.db"
    # every checkpoint rewritten every run (an interval no longer than the runs'): the restart
    # below resumes from checkpoints as current as the model, so nothing is fed again
    every_run: dict[str, Any] = {"RIGHTSIZER_CHECKPOINT_INTERVAL_SECONDS": "1"}
    app = AppProcess(sim.kubeconfig_path, db, tmp_path / "app.log", **every_run)
    engine = Engine(sim)
    try:
        app.wait_ready()
        for step in range(6):
            if step:
                sim.advance(60)
                sim.settle()
            engine.observe()
            wait_for(
                lambda: served_samples(app) == engine.samples(), 60, f"the app to read step {step}"
            )
        served = recommendations(app)
        workloads = {WorkloadKey(ns, kind, name) for ns, kind, name, _ in served}
        assert workloads == scenario_workloads(sim)
        expected = engine.expected()
        assert {
            k: {f: v[f] for f in ("target", "lowerBound", "upperBound")} for k, v in served.items()
        } == expected
        assert "run:" in app.log() and "Traceback" not in app.log()
    finally:
        app.stop()

    # A new process restores the histograms from checkpoints: the same numbers within a bucket.
    again = AppProcess(sim.kubeconfig_path, db, tmp_path / "app2.log", **every_run)
    try:
        again.wait_ready()
        # The run that restored, once it saved: before, the API serves what the first process
        # wrote. Nothing after the checkpoints was fed (the clock has not moved).
        run = wait_for(lambda: run_after_restore(again.log()), 60, "a run after restart")
        assert run["restored"] == str(len(expected))
        assert (run["samples"], run["ooms"], run["failed"]) == ("0", "0", "0"), run
        after = recommendations(again)
        assert {
            k: {f: v[f] for f in ("target", "lowerBound", "upperBound")} for k, v in after.items()
        } == engine.expected_after_checkpoint_round_trip()
    finally:
        again.stop()


def leader_lines(app: AppProcess) -> list[str]:
    return [
        line
        for line in app.log().splitlines()
        if "became leader" in line or "stopped leading" in line
    ]


def test_one_leader_and_hand_over_within_the_lease(sim: Simulator, tmp_path: Path) -> None:
    lease: dict[str, Any] = {
        "RIGHTSIZER_LEASE_DURATION": 3,
        "RIGHTSIZER_LEASE_RENEW_DEADLINE": 2,
        "RIGHTSIZER_LEASE_RETRY_PERIOD": 0.5,
    }
    db = f"sqlite:///{tmp_path}/rightsizer.db"
    a = AppProcess(sim.kubeconfig_path, db, tmp_path / "a.log", **lease)
    a.wait_ready()
    b = AppProcess(sim.kubeconfig_path, db, tmp_path / "b.log", **lease)
    try:
        b.wait_ready()
        wait_for(lambda: leader_lines(a) or leader_lines(b), 30, "a leader")
        time.sleep(2)  # several renewals: the other must stay a follower
        leaders = [p for p in (a, b) if leader_lines(p)]
        assert len(leaders) == 1
        leader, follower = leaders[0], (b if leaders[0] is a else a)
        assert "recommender run:" in leader.log() and "recommender run:" not in follower.log()
        killed_at = time.monotonic()
        leader.stop(signal.SIGKILL)  # no hand-back: the lease must expire
        wait_for(lambda: leader_lines(follower), 15, "the follower to take over")
        assert time.monotonic() - killed_at <= 3 + 2 * 0.5 + 2  # lease duration + retries + slack
        wait_for(lambda: "recommender run:" in follower.log(), 15, "the new leader to run the jobs")
    finally:
        a.stop()
        b.stop()


def test_graceful_stop_hands_the_lease_back_at_once(sim: Simulator, tmp_path: Path) -> None:
    lease: dict[str, Any] = {
        "RIGHTSIZER_LEASE_DURATION": 15,
        "RIGHTSIZER_LEASE_RENEW_DEADLINE": 10,
        "RIGHTSIZER_LEASE_RETRY_PERIOD": 0.5,
    }
    db = f"sqlite:///{tmp_path}/rightsizer.db"
    a = AppProcess(sim.kubeconfig_path, db, tmp_path / "a.log", **lease)
    b: AppProcess | None = None
    try:
        a.wait_ready()
        wait_for(lambda: leader_lines(a), 30, "a to lead")
        b = AppProcess(sim.kubeconfig_path, db, tmp_path / "b.log", **lease)
        b.wait_ready()
        stopped_at = time.monotonic()
        a.stop()
        wait_for(lambda: leader_lines(b), 10, "b to lead well before the 15 s lease expires")
        assert time.monotonic() - stopped_at < 10
        assert "released lease" in a.log()
    finally:
        a.stop()
        if b is not None:
            b.stop()
