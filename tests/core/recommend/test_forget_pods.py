"""ArrayModel.forget_pods: the pod containers of pods no longer live, by namespace and name."""

from __future__ import annotations

from app.core.recommend.array_model import ArrayModel
from app.core.workload_key import WorkloadKey

A = WorkloadKey("a", "Deployment", "web")
B = WorkloadKey("b", "Deployment", "web")
T = 1_719_792_000.0


def test_pods_gone_from_the_live_ones_lose_their_windows_not_their_history() -> None:
    m = ArrayModel()
    for w in (A, B):
        for pod in ("web-1", "web-2"):
            for container in ("app", "proxy"):
                m.add_usage(w, pod, container, T, 0.1, 0.1, 1e8)
    live = {("a", "web-1"): object(), ("b", "web-2"): object()}  # a pod map, keyed as the cache
    m.forget_pods(live)
    assert sorted((k[0].namespace, k[1], k[2]) for k in m.pods) == [
        ("a", "web-1", "app"),
        ("a", "web-1", "proxy"),
        ("b", "web-2", "app"),
        ("b", "web-2", "proxy"),
    ]  # web-2 of `a` and web-1 of `b` went, though a pod of that name lives elsewhere
    assert len(m.pod_keys) == 4 and sum(map(len, m.row_pods.values())) == 4
    assert {c: m.span(r)[0] for c, r in m.rows[A].items()} == {"app": 2, "proxy": 2}
