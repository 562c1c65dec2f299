"""A deliberately naive re-computation of the VPA recommendation, for checking the real code.

It shares no code with app/: buckets, windows and weights are recomputed from their definitions
over the whole trace at once (no incremental histogram, no subtract-and-replace of peaks).

`flags` are the VPA recommender's own command-line flags by name, with VPA 1.7's defaults
(pkg/recommender/config/config.go) except --round-memory-bytes, whose default here is rightsizer's
1Mi (VPA's is 1); durations in seconds. After the estimate and the rounding come VPA's
post-processors in their order (routines/recommender_controller.go): the cpu-integer one for the
containers in `integer_cpu` (the vpa-post-processor annotation), then capping to `max_allowed`.
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from collections.abc import Mapping
from pathlib import Path

DAY = 86400.0
MIB = 1024 * 1024
INT64 = 2**63 - 1

DEFAULT_FLAGS: dict[str, float] = {
    "target-cpu-percentile": 0.9,
    "target-memory-percentile": 0.9,
    "recommendation-lower-bound-cpu-percentile": 0.5,
    "recommendation-lower-bound-memory-percentile": 0.5,
    "recommendation-upper-bound-cpu-percentile": 0.95,
    "recommendation-upper-bound-memory-percentile": 0.95,
    "recommendation-margin-fraction": 0.15,
    "pod-recommendation-min-cpu-millicores": 25,
    "pod-recommendation-min-memory-mb": 250,
    "oom-bump-up-ratio": 1.2,
    "oom-min-bump-up-bytes": 100 * MIB,
    "memory-aggregation-interval": DAY,
    "cpu-histogram-decay-half-life": DAY,
    "memory-histogram-decay-half-life": DAY,
    "round-cpu-millicores": 1,
    "round-memory-bytes": MIB,
}


def bucket(value: float, first: float) -> int:
    if value < first:
        return 0
    return min(int(math.log(value * 0.05 / first + 1) / math.log(1.05)), 175)


def bucket_end(b: int, first: float) -> float:
    b = min(b + 1, 175) if b < 175 else 175
    return first * (1.05**b - 1) / 0.05


def percentile(
    samples: list[tuple[float, float, float]], p: float, first: float, half_life: float = DAY
) -> float:
    """samples: (time, value, weight); weights decay from a reference rounded to a half-life."""
    if not samples:
        return 0.0
    ref = math.floor(min(t for t, _, _ in samples) / half_life + 0.5) * half_life
    weights: dict[int, float] = defaultdict(float)
    for t, v, w in samples:
        weights[bucket(v, first)] += w * 2 ** ((t - ref) / half_life)
    total = sum(weights.values())
    running = 0.0
    ordered = sorted(weights)
    for b in ordered:
        running += weights[b]
        if running >= p * total or b == ordered[-1]:
            return bucket_end(b, first)
    raise AssertionError


def trunc(x: float) -> int:
    if math.isnan(x) or x <= 0:
        return 0
    return INT64 if x >= INT64 else int(x)


def round_up(value: int, scale: int) -> int:
    """RoundUpToScale, on amounts (an int64 amount means unbounded and stays so)."""
    return value if value >= INT64 else math.ceil(value / scale) * scale


def cpu_text(millicores: int) -> str:
    """Kubernetes' canonical DecimalSI text of a milli-quantity: 587m, 2, 1500m."""
    n, suffixes = millicores, ["m", "", "k", "M", "G", "T", "P", "E"]
    while n and n % 1000 == 0 and len(suffixes) > 1:
        n, suffixes = n // 1000, suffixes[1:]
    return f"{n}{suffixes[0]}"


def memory_text(b: int) -> str:
    """Kubernetes' canonical BinarySI text: 1115Mi, 1Gi, or plain bytes when not whole Ki."""
    n, suffixes = b, ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    while n >= 1024 and n % 1024 == 0 and len(suffixes) > 1:
        n, suffixes = n // 1024, suffixes[1:]
    return f"{n}{suffixes[0]}"


def _read(path: Path) -> dict[tuple[str, str], list[dict[str, str]]]:
    series: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            series[(row.get("pod") or "pod-0", row["container"])].append(row)
    return series


def _memory_peaks(
    rows: list[dict[str, str]], f: Mapping[str, float]
) -> list[tuple[float, float, float]]:
    """One value per aggregation interval (aligned to the series' first sample): the largest
    of its usages and OOM bumps; an OOM bump grows from max(memory at OOM, usage peak so far)."""
    interval = f["memory-aggregation-interval"]
    t0 = float(rows[0]["timestamp"])
    peaks: dict[int, float] = {}
    usage_peak: dict[int, float] = defaultdict(float)
    for r in rows:
        if not r["memory"]:
            continue
        t, m = float(r["timestamp"]), float(r["memory"])
        k = math.floor((t - t0) / interval)
        if r.get("event") == "oom":
            used = max(m, usage_peak[k])
            m = max(used + f["oom-min-bump-up-bytes"], int(used * f["oom-bump-up-ratio"]))
        else:
            usage_peak[k] = max(usage_peak[k], m)
        peaks[k] = max(peaks.get(k, 0.0), m)
    return [(t0 + (k + 1) * interval, v, 1.0) for k, v in peaks.items()]


def recommend(
    path: Path,
    flags: Mapping[str, float] | None = None,
    integer_cpu: frozenset[str] = frozenset(),
    max_allowed: Mapping[str, Mapping[str, int]] | None = None,
) -> dict[str, dict[str, dict[str, str]]]:
    unknown = set(flags or {}) - set(DEFAULT_FLAGS)
    assert not unknown, f"not a flag the oracle knows: {unknown}"
    f = {**DEFAULT_FLAGS, **(flags or {})}
    cpu: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    memory: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for (_, container), rows in _read(path).items():
        last_cpu = None
        for r in rows:
            t = float(r["timestamp"])
            if r["cpu"] and r.get("event") != "oom" and (last_cpu is None or t > last_cpu):
                cpu[container].append(
                    (t, float(r["cpu"]), max(float(r.get("cpu_request") or 0), 0.1))
                )
                last_cpu = t
        memory[container] += _memory_peaks(rows, f)
    containers = sorted(set(cpu) | set(memory))
    n = len(containers)
    out = {}
    for c in containers:
        times = [t for t, _, _ in cpu[c]]
        span = (max(times) - min(times)) / DAY if times else 0.0
        conf = min(span, len(times) / 1440)

        def est(cpu_p: str, memory_p: str, c: str = c) -> tuple[int, int]:
            cm = trunc(
                percentile(cpu[c], f[cpu_p], 0.01, f["cpu-histogram-decay-half-life"]) * 1000
            )
            mb = trunc(
                percentile(memory[c], f[memory_p], 1e7, f["memory-histogram-decay-half-life"])
            )
            margin = f["recommendation-margin-fraction"]
            return cm + trunc(cm * margin), mb + trunc(mb * margin)

        # the pod minimum, the same for every container
        floor = (
            trunc(f["pod-recommendation-min-cpu-millicores"] / n),
            trunc(f["pod-recommendation-min-memory-mb"] * MIB / n),
        )
        up_f = math.inf if conf == 0 else 1 + 1 / conf
        lo_f = 0.0 if conf == 0 else (1 + 0.001 / conf) ** -2
        target = est("target-cpu-percentile", "target-memory-percentile")
        lower = tuple(
            trunc(v * lo_f)
            for v in est(
                "recommendation-lower-bound-cpu-percentile",
                "recommendation-lower-bound-memory-percentile",
            )
        )
        upper = tuple(
            trunc(v * up_f)
            for v in est(
                "recommendation-upper-bound-cpu-percentile",
                "recommendation-upper-bound-memory-percentile",
            )
        )
        out[c] = {
            name: _post_processed(c, r, floor, f, integer_cpu, max_allowed or {})
            for name, r in (("target", target), ("lowerBound", lower), ("upperBound", upper))
        }
    return out


def _post_processed(
    container: str,
    r: tuple[int, ...],
    floor: tuple[int, int],
    f: Mapping[str, float],
    integer_cpu: frozenset[str],
    max_allowed: Mapping[str, Mapping[str, int]],
) -> dict[str, str]:
    """The pod minimum, the rounding flags, the cpu-integer post-processor, capping: in order."""
    cpu = round_up(max(r[0], floor[0]), int(f["round-cpu-millicores"]))
    memory = round_up(max(r[1], floor[1]), int(f["round-memory-bytes"]))
    if container in integer_cpu:
        cpu = round_up(cpu, 1000)
    caps = max_allowed.get(container, {})
    cpu = min(cpu, caps.get("cpu", cpu))
    memory = min(memory, caps.get("memory", memory))
    return {"cpu": cpu_text(cpu), "memory": memory_text(memory)}
