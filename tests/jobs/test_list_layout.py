"""The recommender's feed taken from the last LIST's layout (app.jobs.list_layout) leaves the job
as the feed item by item does: two jobs read the same LISTs, one keeping its layout, the other
made to forget it before each, through random changes between LISTs (pods added, deleted and
changed, owners moved, containers added or reordered, values that are not quantities, the LIST
in another order, workloads dropped, idle gaps), and every state the feed builds is compared."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

from flask import Flask
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.pods import PodView
from app.core.recommend.podmetrics import decode_pod_metrics_list
from app.core.recommend.samples import item_time
from app.core.workload_key import WorkloadKey
from app.jobs.list_layout import item_times
from app.jobs.recommender import RecommenderJob, WorkloadInfo
from tests.support.fixed_cluster import FixedCluster
from tests.support.recommender_runs import recommender_job

START = 1767225600.0
WORKLOADS = [WorkloadKey("shop", "Deployment", n) for n in ("web", "api", "db")]


def view(name: str, containers: list[str], cpu_m: int) -> PodView:
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}-{cpu_m}"},
            "spec": {
                "nodeName": "n1",
                "containers": [
                    {"name": c, "resources": {"requests": {"cpu": f"{cpu_m}m", "memory": "64Mi"}}}
                    for c in containers
                ],
            },
            "status": {"phase": "Running"},
        }
    )


class World:
    """The pods (name -> view, workload) and what the next LIST sends."""

    def __init__(self) -> None:
        self.views: dict[str, PodView] = {}
        self.owner: dict[str, WorkloadKey] = {}
        self.version = 0
        self.t = START
        self.extra: set[str] = set()  # pods whose items carry a container not in their spec
        self.swapped: set[str] = set()  # pods whose items list their containers in reverse
        self.bad: set[str] = set()  # pods whose CPU value is not a quantity
        self.shuffled = False

    def workload_of(self, pod: PodView) -> WorkloadKey | None:
        return self.owner.get(pod.name)

    def pods(self) -> dict[tuple[str, str], PodView]:
        return {(v.namespace, v.name): v for v in self.views.values()}

    def metrics(self, usage: int) -> Any:
        items = []
        for i, (name, v) in enumerate(sorted(self.views.items())):
            names = [c.name for c in v.containers]
            if name in self.swapped:
                names.reverse()
            if name in self.extra:
                names.append("sidecar")
            containers = [
                {
                    "name": c,
                    "usage": {
                        "cpu": "abc" if name in self.bad else f"{(usage + i + j) * 1000000}n",
                        "memory": f"{(usage + i) * 1024 + j}Ki",
                    },
                }
                for j, c in enumerate(names)
            ]
            meta = {"name": name, "namespace": "shop"}
            items.append({"metadata": meta, "timestamp": _stamp(self.t), "containers": containers})
        if self.shuffled:
            items.reverse()
        return decode_pod_metrics_list(json.dumps({"items": items}).encode())


def _stamp(t: float) -> str:
    return datetime.fromtimestamp(t, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def feed(job: RecommenderJob, world: World, metrics: Any) -> tuple[int, dict[Any, Any]]:
    """One run's feed, deleted pods and idle rows as the job's run does them."""
    job.workload_of = world.workload_of
    info: dict[WorkloadKey, WorkloadInfo] = {}
    pods = world.pods()
    named_since = job.model.tables + 1
    taken = job._feed_metrics(metrics, pods, info, (world.version,))
    newest = job.model.newest_sample()
    if newest is not None:
        job.model.expire_idle(newest)
    job._forget_deleted_pods(pods, named_since)
    return taken, {w: dict(i.seen.pods) for w, i in info.items()}


def state(job: RecommenderJob) -> dict[str, Any]:
    model = job.model
    rows = {
        (w, c): (model.save(w, c), int(model.count[row]))
        for w, cs in model.rows.items()
        for c, row in cs.items()
    }
    windows = {k: w.percentiles() for k, w in job.windows.windows.items()}
    return {"pods": set(model.pods), "rows": rows, "windows": windows, "labels": job.labels}


CHANGES = ["scrape", "scrape", "scrape", "add", "delete", "change", "move", "extra", "swap"]
CHANGES += ["bad", "shuffle", "drop", "idle"]
steps = st.lists(
    st.tuples(st.sampled_from(CHANGES), st.integers(0, 7), st.integers(1, 50)),
    min_size=1,
    max_size=14,
)
FIXTURES = [HealthCheck.function_scoped_fixture]


@settings(max_examples=60, deadline=None, suppress_health_check=FIXTURES)
@given(steps=steps)
def test_the_layout_feeds_as_item_by_item(app: Flask, steps: list[tuple[str, int, int]]) -> None:
    cluster = FixedCluster(WORKLOADS[0], "app", {}, "")
    kept = recommender_job(app, cluster, lambda: START)
    plain = recommender_job(app, cluster, lambda: START)
    world = World()
    for i in range(6):
        name = f"p{i}"
        world.views[name] = view(name, ["app", "log"] if i % 3 == 0 else ["app"], 100 + 10 * i)
        world.owner[name] = WORKLOADS[i % 3]
    for step, (what, k, usage) in enumerate([("scrape", 0, 1), ("scrape", 0, 2), *steps]):
        names = sorted(world.views)
        name = names[k % len(names)] if names else None
        world.t += 60
        world.bad, world.shuffled = set(), False  # an extra or swapped container stays
        if what == "add":
            new = f"q{k}-{usage}"
            world.views[new] = view(new, ["app"], 100 + usage)
            world.owner[new] = WORKLOADS[usage % 3]
        elif name is not None and what == "delete" and len(names) > 1:
            del world.views[name]
        elif name is not None and what == "change":
            old = world.views[name]
            world.views[name] = view(name, [c.name for c in old.containers], 100 + usage)
        elif name is not None and what == "move":
            world.owner[name] = WORKLOADS[(WORKLOADS.index(world.owner[name]) + 1) % 3]
            world.version += 1
        elif name is not None and what == "extra":
            world.extra ^= {name}
        elif name is not None and what == "swap":
            world.swapped ^= {name}
        elif name is not None and what == "bad":
            world.bad.add(name)
        elif what == "shuffle":
            world.shuffled = True
        elif name is not None and what == "drop":
            for job in (kept, plain):
                job.model.drop_workload(world.owner[name])
        elif what == "idle":
            world.t += 9 * 86400
        metrics = world.metrics(usage)
        plain.layout = None  # fed item by item, every time
        assert feed(kept, world, metrics) == feed(plain, world, metrics)
        assert state(kept) == state(plain)
        if step == 1:  # the second LIST, as the first: every item taken from the layout
            assert kept.reused_items == len(world.views) and plain.reused_items == 0


def test_a_pod_fed_in_part_then_gone_leaves_its_workloads_pods_seen(app: Flask) -> None:
    """A pod whose item also sends a container its spec lacks is fed in part, so the layout
    does not hold it; once it is gone its workload's pods seen are made again, not kept."""
    cluster = FixedCluster(WORKLOADS[0], "app", {}, "")
    job = recommender_job(app, cluster, lambda: START)
    world = World()
    for name in ("a", "b"):
        world.views[name] = view(name, ["app"], 100)
        world.owner[name] = WORKLOADS[0]
    world.extra = {"b"}
    for _ in range(2):
        world.t += 60
        feed(job, world, world.metrics(1))
    del world.views["b"]
    world.t += 60
    _, seen = feed(job, world, world.metrics(2))
    assert job.reused_items == 1  # a, taken from the layout
    assert set(seen[WORKLOADS[0]]) == {"a"}


def test_timestamps_are_read_as_each_item_sends_it() -> None:
    """The LIST's timestamps, read once per distinct value, are item_time's of each, also
    when one is not text or cannot be a set's member (read one by one then)."""
    stamps: list[Any] = ["2026-01-01T00:00:00Z", "2026-01-01T00:00:00Z", "garbage"]
    assert item_times(stamps) == [item_time(s) for s in stamps]
    odd: list[Any] = [1, True, 1.0, None, {"a": 1}, "2026-01-01T00:00:00Z"]
    assert item_times(odd) == [item_time(s) for s in odd]
