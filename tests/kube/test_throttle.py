"""The client-side rate limiter every API call waits for (app.kube.throttle), as client-go's
token bucket: paced with a fake clock, never timed."""

from __future__ import annotations

import threading

import pytest
from kubernetes import client

from app.kube.client import api_client
from app.kube.throttle import DEFAULT_BURST, DEFAULT_QPS, RateLimiter
from app.simulator.testing import EMPTY, running_simulator
from tests.support.json_bodies import raw_answer


class FakeTime:
    """A clock that moves only when the limiter sleeps (or the test says so)."""

    def __init__(self) -> None:
        self.now = 100.0
        self.sleeps: list[float] = []

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.sleeps.append(round(seconds, 9))
        self.now += seconds


def limiter(qps: float, burst: int, t: FakeTime) -> RateLimiter:
    return RateLimiter(qps, burst, clock=t.clock, sleep=t.sleep)


def test_the_defaults_are_client_go_s() -> None:
    assert (DEFAULT_QPS, DEFAULT_BURST) == (5.0, 10)


def test_a_full_bucket_lets_burst_requests_go_then_one_every_1_over_qps() -> None:
    t = FakeTime()
    rl = limiter(qps=2.0, burst=3, t=t)
    for _ in range(6):
        rl.wait()
    # 3 at once; then each waits for the next token, half a second apart.
    assert t.sleeps == [0.5, 0.5, 0.5]
    assert t.now == pytest.approx(101.5)


def test_tokens_saved_while_idle_never_exceed_the_burst() -> None:
    t = FakeTime()
    rl = limiter(qps=5.0, burst=2, t=t)
    rl.wait()
    rl.wait()
    t.now += 3600  # an hour idle: still only 2 saved
    for _ in range(3):
        rl.wait()
    assert t.sleeps == [0.2]


def test_callers_arriving_together_queue_one_token_apart() -> None:
    """Reservations are taken in order of arrival: the fourth caller of an empty bucket waits
    four intervals, not one (x/time/rate's Reserve)."""
    t = FakeTime()
    rl = limiter(qps=10.0, burst=1, t=t)
    assert [rl.reserve() for _ in range(5)] == pytest.approx([0.0, 0.1, 0.2, 0.3, 0.4])


def test_qps_zero_means_no_limit() -> None:
    t = FakeTime()
    rl = limiter(qps=0.0, burst=1, t=t)
    for _ in range(1000):
        rl.wait()
    assert t.sleeps == []


def test_threads_share_one_bucket() -> None:
    t = FakeTime()
    rl = limiter(qps=4.0, burst=4, t=t)
    lock = threading.Lock()
    waits: list[float] = []

    def take() -> None:
        d = rl.reserve()
        with lock:
            waits.append(d)

    threads = [threading.Thread(target=take) for _ in range(12)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    # The clock does not move: 4 tokens at once, then 8 reservations a quarter-second apart.
    assert sorted(waits) == pytest.approx([0.0] * 4 + [0.25 * i for i in range(1, 9)])


def test_every_request_of_rightsizer_s_client_waits_for_its_limiter() -> None:
    """GETs, LISTs and watches of the official client built by app.kube.client all take a
    token: with burst 3 and qps 2 on a frozen clock, the 4th to 6th request wait."""
    with running_simulator(EMPTY) as sim:
        api = api_client(sim.kubeconfig_path, qps=2.0, burst=3)
        t = FakeTime()
        rl = api.rest_client.limiter  # type: ignore[attr-defined]  # app.kube.client's REST layer
        rl.clock, rl.sleep = t.clock, t.sleep
        rl._at = t.now
        try:
            core = client.CoreV1Api(api)
            core.list_namespace()
            core.read_namespace("default")
            core.list_pod_for_all_namespaces(limit=1)
            assert t.sleeps == []
            core.list_node()
            resp = core.list_namespace(watch=True, timeout_seconds=1, _preload_content=False)
            raw_answer(resp).release_conn()
            client.VersionApi(api).get_code()
            assert t.sleeps == [0.5, 0.5, 0.5]
        finally:
            api.close()
