"""Writes tests/data/sample-trace.csv: deterministic, real-looking usage of one web workload.

Two pods of a Deployment, each with an `app` container and an `envoy` sidecar, sampled every
5 minutes for 3 days: a daily traffic cycle, noise, a CPU request raised from 250m to 500m after
the first day, pod web-b replaced by web-c on day 2, and one OOM kill of app in web-a.
Run it again only to change the trace on purpose: tests compare results against it.
"""

from __future__ import annotations

import csv
import math
import random
import sys
from pathlib import Path

START = 1_719_792_000  # 2024-07-01T00:00:00Z
STEP = 300
DAYS = 3


def main(out: Path) -> None:
    rng = random.Random(42)
    rows = []
    lifetimes = {"web-a": (0, DAYS), "web-b": (0, 1.5), "web-c": (1.5, DAYS)}
    for i in range(DAYS * 86400 // STEP):
        t = START + i * STEP
        day = (t - START) / 86400
        cycle = 0.5 + 0.5 * math.sin(2 * math.pi * (day - 0.3))  # busy in the afternoon
        for pod, (born, died) in lifetimes.items():
            if not born <= day < died:
                continue
            request = 0.25 if day < 1 else 0.5
            app_cpu = max(0.0, 0.08 + 0.3 * cycle + rng.gauss(0, 0.03))
            app_mem = 380e6 + 120e6 * cycle + 40e6 * day + rng.gauss(0, 8e6)
            rows.append((t, pod, "app", f"{app_cpu:.4f}", f"{app_mem:.0f}", request, ""))
            proxy_cpu = max(0.0, 0.01 + 0.02 * cycle + rng.gauss(0, 0.004))
            proxy_mem = 62e6 + rng.gauss(0, 1e6)
            rows.append((t, pod, "envoy", f"{proxy_cpu:.4f}", f"{proxy_mem:.0f}", 0.1, ""))
        if i == 500:  # app in web-a hits its 512Mi limit
            rows.append((t + 1, "web-a", "app", "", str(512 * 1024 * 1024), 0.25, "oom"))
    with out.open("w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["timestamp", "pod", "container", "cpu", "memory", "cpu_request", "event"])
        w.writerows(rows)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).with_name("sample-trace.csv"))
