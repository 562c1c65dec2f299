"""`balanced`: CPU as VPA; memory at the level balancing unused memory against time above it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from app.core.recommend.aggregate import oom_bump
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import MIB
from app.core.recommend.strategies import VPA, configure
from app.core.recommend.strategies.balanced import balanced_level
from app.core.recommendation import Recommendation
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "web")
T0 = 1_700_006_400.0


def model_of(memory: list[float], cpu: float = 0.3) -> ArrayModel:
    m = ArrayModel()
    for i, mem in enumerate(memory):
        m.add_cpu(W, "web-1", "app", T0 + i * 300, cpu + (i % 5) / 100, 0.5)
        m.add_memory(W, "web-1", "app", T0 + i * 300, mem)
    return m


def balanced(m: ArrayModel, **params: object) -> Recommendation:
    return m.recommend(W, None, configure("balanced", params))["app"]


def bursty(share: float, n: int = 2000) -> list[float]:
    """500 MiB, with bursts to 8 GiB `share` of the time, spread evenly."""
    every = round(1 / share)
    return [8192 * MIB if i % every == 0 else 500 * MIB for i in range(n)]


def test_short_bursts_are_not_reserved_all_day() -> None:
    m = model_of(bursty(0.01))
    rec, vpa = balanced(m), m.recommend(W, None, VPA)["app"]
    assert vpa.target.memory > 8192 * MIB  # VPA: p90 of daily peaks, every day has a burst
    mean = 0.99 * 500 + 0.01 * 8192
    assert rec.target.memory <= mean * MIB * 1.1 + MIB  # the level is the mean, +10%
    assert (
        "of 2000 samples in 7 days, a day's samples weighing half per half-life 48h" in rec.reason
    )
    undecayed = balanced(m, memoryHalfLife=0)
    assert "above it 1.0% of 2000 samples in 7 days, mean" in undecayed.reason
    assert rec.target.cpu == vpa.target.cpu  # CPU as VPA
    assert rec.reason.startswith("balanced: CPU as vpa (p90 + 15%); memory ")


def test_long_bursts_are_reserved() -> None:
    m = model_of(bursty(0.2))
    assert balanced(m).target.memory >= 8192 * MIB * 1.1


def test_a_steady_container_gets_its_peak_plus_the_margin() -> None:
    memory = [(400.0 + (i % 50)) * MIB for i in range(2000)]
    rec = balanced(model_of(memory))
    assert max(memory) * 1.1 <= rec.target.memory <= max(memory) * 1.05 * 1.1 + MIB


def test_with_few_samples_memory_is_vpas() -> None:
    m = model_of([600 * MIB] * 50)
    rec, vpa = balanced(m), m.recommend(W, None, VPA)["app"]
    assert rec.target == vpa.target
    assert "memory as vpa (50 of 100 samples in 14 days)" in rec.reason


def test_an_oom_kill_raises_memory_to_vpas_bump() -> None:
    m = model_of(bursty(0.01))
    m.record_oom(W, "web-1", "app", T0 + 2000 * 300, 2048 * MIB)
    rec = balanced(m)
    # as VPA: the memory used is the larger of that at the kill and the day's peak (8 GiB)
    assert rec.target.memory >= oom_bump(8192 * MIB, m.settings) > 8192 * MIB * 1.1
    assert "memory after an OOM kill at 8Gi" in rec.reason
    steady = model_of([500 * MIB] * 2000)
    steady.record_oom(W, "web-1", "app", T0 + 2000 * 300, 2048 * MIB)
    bump = oom_bump(2048 * MIB, m.settings)
    assert bump <= balanced(steady).target.memory < bump + MIB  # rounded up to whole MiB


@settings(max_examples=60, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=20_000), min_size=100, max_size=600),
    st.floats(min_value=0.5, max_value=50),
    st.floats(min_value=0.5, max_value=50),
)
def test_the_level_is_monotone_in_the_weight_and_bounded_by_it(
    mib: list[int], w1: float, w2: float
) -> None:
    m = model_of([v * MIB for v in mib])
    dist = m.daily[m.rows[W]["app"]].window(14).memory
    lo, hi = sorted((w1, w2))
    a, b = balanced_level(dist, lo, 0.0), balanced_level(dist, hi, 0.0)
    assert a.level <= b.level  # weighing time above more never lowers the level
    for chosen, w in ((a, lo), (b, hi)):
        assert chosen.level >= dist.mean
        # the highest level costs at most 1 (all unused): the chosen one costs no more
        assert chosen.above <= 1 / w + 1e-9


@settings(max_examples=30, deadline=None)
@given(
    st.lists(st.integers(min_value=1, max_value=20_000), min_size=100, max_size=400),
    st.floats(min_value=0, max_value=100),
    st.floats(min_value=0, max_value=100),
)
def test_a_bigger_margin_never_lowers_memory(mib: list[int], m1: float, m2: float) -> None:
    m = model_of([v * MIB for v in mib])
    lo, hi = sorted((m1, m2))
    a = balanced(m, memoryMarginPercentage=lo)
    b = balanced(m, memoryMarginPercentage=hi)
    assert a.target.memory <= b.target.memory
    assert b.lower_bound.memory <= b.target.memory <= b.upper_bound.memory


def test_with_a_half_life_memory_follows_a_container_that_shrank() -> None:
    """7 days at 4 GiB, then 7 at 500 MiB: undecayed, the old days hold half the samples and the
    level stays at 4 GiB; with a 24 h half-life they weigh under 1% and the level follows."""
    per_day = 288
    memory = [4096.0 * MIB] * (7 * per_day) + [500.0 * MIB] * (7 * per_day)
    m = model_of(memory)
    assert balanced(m).target.memory >= 4096 * MIB
    recent = balanced(m, memoryHalfLife=24)
    assert 500 * MIB * 1.1 <= recent.target.memory <= 600 * MIB  # old days: ~1% of the weight
    assert "half-life 24h" in recent.reason
    assert balanced(m, memoryHalfLife=1e9).target == balanced(m).target
