"""The usage model: what each container uses at simulated time t. Pure and deterministic.

Usage is a function of (profile, container key, t) and the container's life (when it started,
when it was OOM-killed), never of how often it is sampled, so metrics-server answers, the
Prometheus history and OOM kills all agree with each other and with any replay of the same seed.

    cpu(t)    = base * (1 + daily*d(t)) * (1 + noise*u) * (spike factor, in a spike bucket)
    memory(t) = base * (1 + daily*d(t)) * (1 + noise*u) + growthPerDay * (t - start) / 1 day

d(t) = -cos(2pi*t/1 day) peaks at 12:00 UTC; u in [-1, 1) is hashed noise, constant over each
15 s sample; spikes last 5 min. CPU is capped at the limit; memory above the limit is an OOM kill,
restarted after the kubelet's crash back-off (10 s doubling to 5 min, reset after 10 min up).
A profile may scale with the node a pod runs on (`NodeFactors`: the value of one node label
picks CPU and memory factors), so a DaemonSet's pods use more on larger nodes.
"""

from __future__ import annotations

import bisect
import hashlib
import math
from collections.abc import Mapping
from dataclasses import dataclass, replace

DAY = 86_400.0
SAMPLE = 15.0  # seconds: metrics-server resolution and the noise bucket
SPIKE = 300.0  # seconds a CPU spike lasts
_MASK = (1 << 64) - 1


@dataclass(frozen=True, slots=True)
class CpuProfile:
    base: float  # cores
    daily: float = 0.0  # relative amplitude of the daily cycle
    noise: float = 0.0  # relative amplitude of per-sample noise
    spike_probability: float = 0.0  # chance that a 5-minute bucket is a spike
    spike_factor: float = 1.0


@dataclass(frozen=True, slots=True)
class MemoryProfile:
    base: float  # bytes
    daily: float = 0.0
    noise: float = 0.0
    growth_per_day: float = 0.0  # bytes per day of uptime (a leak); reset by a restart


@dataclass(frozen=True, slots=True)
class NodeFactor:
    """Usage on nodes whose label has `value`: CPU and memory multiplied by these."""

    value: str
    cpu: float = 1.0
    memory: float = 1.0


@dataclass(frozen=True, slots=True)
class NodeFactors:
    """Per node group usage: the value of `label` on the pod's node picks a factor (none: 1)."""

    label: str
    factors: tuple[NodeFactor, ...] = ()

    def factor(self, labels: Mapping[str, str]) -> NodeFactor | None:
        value = labels.get(self.label)
        return next((f for f in self.factors if f.value == value), None)


@dataclass(frozen=True, slots=True)
class UsageProfile:
    cpu: CpuProfile
    memory: MemoryProfile
    node_factors: NodeFactors | None = None  # scenario `usage.nodeFactors`


def on_node(profile: UsageProfile, labels: Mapping[str, str]) -> UsageProfile:
    """The profile of a container on a node with `labels`: CPU base, memory base and memory
    growth scaled by the factor of the node's group (unchanged when none applies). Fixed when
    the pod starts: a pod never moves."""
    f = profile.node_factors.factor(labels) if profile.node_factors is not None else None
    if f is None:
        return profile
    return replace(
        profile,
        cpu=replace(profile.cpu, base=profile.cpu.base * f.cpu),
        memory=replace(
            profile.memory,
            base=profile.memory.base * f.memory,
            growth_per_day=profile.memory.growth_per_day * f.memory,
        ),
    )


def container_key(seed: int, *parts: str) -> int:
    """A stable 64-bit stream id for a container (Python's hash() is salted per process)."""
    digest = hashlib.blake2b("\0".join((str(seed), *parts)).encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big")


def _unit(key: int, bucket: int, salt: int) -> float:
    """splitmix64 of (key, bucket, salt) mapped to [0, 1)."""
    z = (key + (bucket * 0x9E3779B97F4A7C15) + salt * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & _MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & _MASK
    return ((z ^ (z >> 31)) >> 11) / float(1 << 53)


def daily(t: float) -> float:
    return -math.cos(2 * math.pi * (t % DAY) / DAY)


def cpu_cores(p: CpuProfile, key: int, t: float) -> float:
    value = (
        p.base
        * (1 + p.daily * daily(t))
        * (1 + p.noise * (2 * _unit(key, int(t // SAMPLE), 1) - 1))
    )
    if p.spike_probability and _unit(key, int(t // SPIKE), 2) < p.spike_probability:
        value *= p.spike_factor
    return max(value, 0.0)


def memory_bytes(p: MemoryProfile, key: int, t: float, started_at: float) -> float:
    value = (
        p.base
        * (1 + p.daily * daily(t))
        * (1 + p.noise * (2 * _unit(key, int(t // SAMPLE), 3) - 1))
    )
    return max(value + p.growth_per_day * max(t - started_at, 0.0) / DAY, 0.0)


def memory_upper_bound(p: MemoryProfile, started_at: float, t: float) -> float:
    """No sample in [started_at, t] exceeds this: lets OOM checks skip quiet containers."""
    return (
        p.base * (1 + abs(p.daily)) * (1 + abs(p.noise))
        + max(p.growth_per_day, 0.0) * max(t - started_at, 0.0) / DAY
    )


def first_oom(
    p: MemoryProfile, key: int, limit: float, started_at: float, t0: float, t1: float
) -> float | None:
    """The first sample time in (t0, t1], not before the start, where memory exceeds `limit`."""
    if memory_upper_bound(p, started_at, t1) <= limit:
        return None
    t = (math.floor(max(t0, started_at) / SAMPLE) + 1) * SAMPLE
    while t <= t1:
        if memory_bytes(p, key, t, started_at) > limit:
            return t
        t += SAMPLE
    return None


@dataclass(frozen=True, slots=True)
class Kill:
    at: float  # when the kernel OOM-killed it
    used: float  # working set at the kill (the limit it hit)
    restart_at: float


@dataclass(frozen=True, slots=True)
class ContainerLife:
    """When a container (re)started and every OOM kill so far; restartCount = len(kills)."""

    started_at: float
    kills: tuple[Kill, ...] = ()
    backoff: int = 0  # consecutive quick crashes: the kubelet's back-off exponent
    checked_until: float = 0.0
    kill_times: tuple[float, ...] = ()  # kills[i].at, kept for bisecting

    @property
    def restart_count(self) -> int:
        return len(self.kills)

    def current_start(self) -> float:
        return self.kills[-1].restart_at if self.kills else self.started_at

    def start_for(self, t: float) -> float | None:
        """The start of the run that covers t, or None if the container was down (or unborn)."""
        if t < self.started_at:
            return None
        i = bisect.bisect_right(self.kill_times, t)
        if i == 0:
            return self.started_at
        prev = self.kills[i - 1]
        return prev.restart_at if t >= prev.restart_at else None


def backoff_delay(step: int) -> float:
    return min(10.0 * 2.0**step, 300.0)


def advance_life(
    p: MemoryProfile, key: int, limit: float | None, life: ContainerLife, t1: float
) -> tuple[ContainerLife, list[Kill]]:
    """Run a container's life forward to t1, returning the OOM kills that happened on the way."""
    new: list[Kill] = []
    if limit is None:
        return replace(life, checked_until=max(life.checked_until, t1)), new
    while True:
        start = life.current_start()
        t = first_oom(p, key, limit, start, max(life.checked_until, start), t1)
        if t is None:
            return replace(life, checked_until=max(life.checked_until, t1)), new
        step = 0 if t - start >= 600 else life.backoff
        kill = Kill(t, limit, t + backoff_delay(step))
        new.append(kill)
        life = replace(
            life,
            kills=(*life.kills, kill),
            kill_times=(*life.kill_times, t),
            backoff=step + 1,
            checked_until=t,
        )


def observed(
    profile: UsageProfile,
    key: int,
    life: ContainerLife,
    t: float,
    cpu_limit: float | None,
    memory_limit: float | None,
) -> tuple[float, float] | None:
    """(cores, bytes) as cAdvisor would see them at t; None while the container is not running."""
    start = life.start_for(t)
    if start is None:
        return None
    cpu = cpu_cores(profile.cpu, key, t)
    mem = memory_bytes(profile.memory, key, t, start)
    if cpu_limit is not None:
        cpu = min(cpu, cpu_limit)
    if memory_limit is not None:
        mem = min(mem, memory_limit)
    return cpu, mem
