"""ArrayModel.forget_pods: the pod containers of pods no longer live, by namespace and name."""

from __future__ import annotations

from typing import Any

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


class Asked(dict[tuple[str, str], object]):
    """A pod map that records which pods were looked up in it."""

    def __init__(self, *args: object) -> None:
        super().__init__(*args)
        self.asked: list[tuple[str, str]] = []

    def __contains__(self, key: object) -> bool:
        self.asked.append(key)  # type: ignore[arg-type]
        return super().__contains__(key)


def table(*samples: tuple[WorkloadKey, str, str, float]) -> Any:
    """Samples as the columns add_usage_table takes (0.1 cores of a 0.1 request, 100 MB)."""
    n = len(samples)
    ws, pods, containers, times = zip(*samples, strict=True)
    return (ws, pods, containers, times, [0.1] * n, [0.1] * n, [1e8] * n)


def test_the_pods_of_the_batches_since_are_taken_as_live_without_a_lookup() -> None:
    """`named_since`: the pods the batches from that one on named are live (the recommender's
    run feeds the pods of its cache alone), so only the others are looked up: in a steady run,
    none. Those others go as they would without it."""
    m, plain = ArrayModel(), ArrayModel()
    first = table((A, "web-1", "app", T), (A, "web-2", "app", T), (B, "web-3", "app", T))
    second = table((A, "web-1", "app", T + 60), (A, "web-1", "proxy", T + 60))
    for model in (m, plain):
        model.add_usage_table(first)
    since = m.tables + 1
    for model in (m, plain):
        model.add_usage_table(second)
    live = Asked({("a", "web-1"): object(), ("b", "web-3"): object()})
    m.forget_pods(live, since)
    assert sorted(live.asked) == [("a", "web-2"), ("b", "web-3")]  # web-1: named since
    plain.forget_pods(dict(live))
    assert (
        set(m.pods)
        == set(plain.pods)
        == {
            (A, "web-1", "app"),
            (A, "web-1", "proxy"),
            (B, "web-3", "app"),
        }
    )
    assert set(m.pod_keys.values()) == set(m.pods)
