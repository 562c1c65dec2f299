"""Benchmark: finding each workload's policy when every workload has its own.

VPA's usual pattern is one VerticalPodAutoscaler per workload (Goldilocks creates one per
Deployment); as rightsizer policies that is one policy per workload. A recommender run finds
every workload's policy in each of its passes (strategies, results, conditions), the webhook
and the updater every pod's. This times one pass over `--workloads` workloads spread over
`--namespaces` namespaces, each with its own policy plus a cluster default and a selector
policy per namespace: `app.core.policy.PolicyIndex.governing` against the baseline, measured
in the same run, `governing_policy` over the list of all policies (the scan every pass made
before the index), on `--baseline-workloads` of them and scaled to all (the scan's cost is the
same for each workload). Each figure is the best of `--rounds`.

    .venv/bin/python benchmarks/policy_lookup.py [--workloads 15000] [--namespaces 100]

Not run by the tests.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import scale_common as sc

from app.core.policy import Policy, PolicyIndex, governing_policy
from app.core.selectors import LabelSelector, Requirement
from app.core.workload_key import WorkloadKey


def policies_of(workloads: list[WorkloadKey], namespaces: int) -> list[Policy]:
    tier = LabelSelector((Requirement("tier", "In", frozenset({"batch"})),))
    out = [Policy("default", "*", created=0.0, id=1)]
    out += [Policy("batch", f"ns-{n}", target_selector=tier, id=2 + n) for n in range(namespaces)]
    first = len(out) + 1
    out += [
        Policy(w.name, w.namespace, w.kind, w.name, created=1.0, id=first + i)
        for i, w in enumerate(workloads)
    ]
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--workloads", type=int, default=15000)
    p.add_argument("--namespaces", type=int, default=100)
    p.add_argument("--baseline-workloads", type=int, default=500)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--output", type=Path)
    args = p.parse_args(argv)
    workloads = [
        WorkloadKey(f"ns-{i % args.namespaces}", "Deployment", f"w-{i}")
        for i in range(args.workloads)
    ]
    policies = policies_of(workloads, args.namespaces)
    labels = {"app": "web", "tier": "web"}
    sample = workloads[: args.baseline_workloads]
    began = time.perf_counter()
    index = PolicyIndex(policies)
    built = time.perf_counter() - began
    indexed = sc.best_of(lambda: [index.governing(w, labels) for w in workloads], args.rounds)
    scanned = sc.best_of(
        lambda: [governing_policy(policies, w, labels) for w in sample], args.rounds
    )
    scanned_all = scanned * len(workloads) / len(sample)
    same = all(index.governing(w, labels) is governing_policy(policies, w, labels) for w in sample)
    return sc.emit(
        [
            f"each workload's policy: {args.workloads} workloads in {args.namespaces} namespaces, "
            f"{len(policies)} policies (one per workload, a selector policy per namespace, a "
            "cluster default)",
            f"machine: {sc.machine()}",
            "",
            sc.table(
                [f"one pass over the workloads (best of {args.rounds})", "seconds"],
                [
                    ("PolicyIndex.governing", f"{indexed:.4f}"),
                    ("  building the index (once a run)", f"{built:.4f}"),
                    (
                        f"baseline: governing_policy over all policies ({len(sample)} "
                        f"workloads, x{len(workloads) / len(sample):g})",
                        f"{scanned_all:.2f}",
                    ),
                ],
            ),
            f"scan / index: {scanned_all / indexed:.0f}x; the same policy for each of the "
            f"{len(sample)} workloads compared: {'yes' if same else 'NO'}",
        ],
        args.output,
    )


if __name__ == "__main__":
    sys.exit(main())
