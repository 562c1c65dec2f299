"""A deliberately naive re-computation of the VPA recommendation, for checking the real code.

It shares no code with app/: buckets, windows and weights are recomputed from their definitions
over the whole trace at once (no incremental histogram, no subtract-and-replace of peaks).
"""

from __future__ import annotations

import csv
import math
from collections import defaultdict
from pathlib import Path

DAY = 86400.0
MIB = 1024 * 1024
INT64 = 2**63 - 1


def bucket(value: float, first: float) -> int:
    if value < first:
        return 0
    return min(int(math.log(value * 0.05 / first + 1) / math.log(1.05)), 175)


def bucket_end(b: int, first: float) -> float:
    b = min(b + 1, 175) if b < 175 else 175
    return first * (1.05**b - 1) / 0.05


def percentile(samples: list[tuple[float, float, float]], p: float, first: float) -> float:
    """samples: (time, value, weight); weights decay from a reference rounded to a whole day."""
    if not samples:
        return 0.0
    ref = math.floor(min(t for t, _, _ in samples) / DAY + 0.5) * DAY
    weights: dict[int, float] = defaultdict(float)
    for t, v, w in samples:
        weights[bucket(v, first)] += w * 2 ** ((t - ref) / DAY)
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


def cpu_text(millicores: int) -> str:
    """Kubernetes' canonical DecimalSI text of a milli-quantity: 587m, 2, 1500m."""
    n, suffixes = millicores, ["m", "", "k", "M", "G", "T", "P", "E"]
    while n and n % 1000 == 0 and len(suffixes) > 1:
        n, suffixes = n // 1000, suffixes[1:]
    return f"{n}{suffixes[0]}"


def memory_text(b: int) -> str:
    """VPA with --round-memory-bytes=1Mi (rightsizer's default): up to whole MiB (int64 stays),
    then Kubernetes' canonical BinarySI text: 1115Mi, 1Gi, or plain bytes when not whole Ki."""
    if b < INT64:
        b = math.ceil(b / MIB) * MIB
    n, suffixes = b, ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"]
    while n >= 1024 and n % 1024 == 0 and len(suffixes) > 1:
        n, suffixes = n // 1024, suffixes[1:]
    return f"{n}{suffixes[0]}"


def quantities(r: tuple[int, ...], floor: tuple[int, int]) -> dict[str, str]:
    return {"cpu": cpu_text(max(r[0], floor[0])), "memory": memory_text(max(r[1], floor[1]))}


def recommend(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    cpu: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    series: dict[tuple[str, str], list[dict[str, str]]] = defaultdict(list)
    with path.open(newline="") as fh:
        for row in csv.DictReader(fh):
            series[(row.get("pod") or "pod-0", row["container"])].append(row)
    memory: dict[str, list[tuple[float, float, float]]] = defaultdict(list)
    for (_, container), rows in series.items():
        last_cpu = None
        for r in rows:
            t = float(r["timestamp"])
            if r["cpu"] and r.get("event") != "oom" and (last_cpu is None or t > last_cpu):
                cpu[container].append(
                    (t, float(r["cpu"]), max(float(r.get("cpu_request") or 0), 0.1))
                )
                last_cpu = t
        # Memory: one value per 24h window (aligned to the series' first sample): the largest of
        # its usages and OOM bumps; an OOM bump grows from max(memory at OOM, usage peak so far).
        t0 = float(rows[0]["timestamp"])
        peaks: dict[int, float] = {}
        usage_peak: dict[int, float] = defaultdict(float)
        for r in rows:
            if not r["memory"]:
                continue
            t, m = float(r["timestamp"]), float(r["memory"])
            k = math.floor((t - t0) / DAY)
            if r.get("event") == "oom":
                used = max(m, usage_peak[k])
                m = max(used + 100 * MIB, int(used * 1.2))
            else:
                usage_peak[k] = max(usage_peak[k], m)
            peaks[k] = max(peaks.get(k, 0.0), m)
        memory[container] += [(t0 + (k + 1) * DAY, v, 1.0) for k, v in peaks.items()]
    containers = sorted(set(cpu) | set(memory))
    n = len(containers)
    out = {}
    for c in containers:
        times = [t for t, _, _ in cpu[c]]
        span = (max(times) - min(times)) / DAY if times else 0.0
        conf = min(span, len(times) / 1440)

        def est(p: float, c: str = c) -> tuple[int, int]:
            cm = trunc(percentile(cpu[c], p, 0.01) * 1000)
            mb = trunc(percentile(memory[c], p, 1e7))
            return cm + trunc(cm * 0.15), mb + trunc(mb * 0.15)

        floor = (trunc(25 / n), trunc(250 * MIB / n))  # the same for every container
        up_f = math.inf if conf == 0 else 1 + 1 / conf
        lo_f = 0.0 if conf == 0 else (1 + 0.001 / conf) ** -2
        target = est(0.9)
        lower = tuple(trunc(v * lo_f) for v in est(0.5))
        upper = tuple(trunc(v * up_f) for v in est(0.95))

        out[c] = {
            "target": quantities(target, floor),
            "lowerBound": quantities(lower, floor),
            "upperBound": quantities(upper, floor),
        }
    return out
