"""Benchmark: sizing pod templates for the updater's ranking, `size_pod` against `build_patch`.

The updater ranks every pod template of the cluster at each run (13,500 in the 150,000-pod scale
benchmark) by what the webhook would give it; the conditions read the same sizing for their
LimitRange notes. `app.core.sizing.patch.size_pod` gives them the updates, reason and pod-level
update without the JSON Patch and the annotations `build_patch` also builds for the webhook.
This times both over `--templates` pods shaped as the scale benchmark's (one container with CPU
and memory requests and a memory limit, a Recreate policy, a recommendation per container),
the baseline `build_patch` measured in the same run, each figure the best of `--rounds`.

    .venv/bin/python benchmarks/pod_sizing.py [--templates 13500] [--rounds 5]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import scale_common as sc

from app.core.policy import Policy
from app.core.quantity import parse_amount
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.patch import build_patch, size_pod
from app.core.update_mode import UpdateMode

MI = 1024 * 1024


def templates(n: int) -> list[tuple[dict[str, Any], dict[str, Recommendation]]]:
    """`n` pods of distinct shapes, each with the recommendation its container would get."""
    out = []
    for i in range(n):
        cpu, mem = 100 + i % 900, (128 + i % 1900) * MI
        pod = {
            "metadata": {"name": f"app-{i:05d}-x", "namespace": f"ns-{i % 100:04d}"},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": f"example.com/app-{i % 50}:1.0",
                        "resources": {
                            "requests": {"cpu": f"{cpu}m", "memory": f"{mem // MI}Mi"},
                            "limits": {"memory": f"{2 * mem // MI}Mi"},
                        },
                    }
                ]
            },
        }
        r = Resources(cpu // 3 + 10, mem // 2)
        out.append((pod, {"app": Recommendation(r, r, Resources(cpu * 2, mem * 2), r)}))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--templates", type=int, default=13500)
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    shapes = templates(args.templates)
    policy = Policy("default", "*", update_mode=UpdateMode.RECREATE, id=1)
    patches = [build_patch(pod, recs, policy, parse=parse_amount) for pod, recs in shapes]
    sizings = [size_pod(pod, recs, policy, parse=parse_amount) for pod, recs in shapes]
    same = all(
        (s.updates, s.reason, s.detail, s.pod_level) == (b.updates, b.reason, b.detail, b.pod_level)
        for s, b in zip(sizings, patches, strict=True)
    )
    changed = sum(bool(b.operations) for b in patches)

    def patch_all() -> None:
        for pod, recs in shapes:
            build_patch(pod, recs, policy, parse=parse_amount)

    def size_all() -> None:
        for pod, recs in shapes:
            size_pod(pod, recs, policy, parse=parse_amount)

    baseline, measured = sc.best_of(patch_all, args.rounds), sc.best_of(size_all, args.rounds)
    n = args.templates
    lines = [
        f"pod sizing: {n} pod templates ({changed} with a change), best of {args.rounds}",
        f"machine: {sc.machine()}",
        f"  size_pod (the updater's ranking, the conditions): {measured:.3f}s, "
        f"{measured / n * 1e6:.1f} us a template",
        f"  baseline build_patch (the webhook's patch):     {baseline:.3f}s, "
        f"{baseline / n * 1e6:.1f} us a template",
        f"  ratio: {measured / baseline:.2f}x the baseline; same updates and reasons: {same}",
    ]
    sc.emit(lines, args.output)
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
