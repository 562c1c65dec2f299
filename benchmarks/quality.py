"""Benchmark: how good each recommendation strategy's targets are on real usage traces.

Every trace of a directory (rightsizer's trace CSV, as `rightsizer recommend --from-csv` reads it;
`.csv` or `.csv.gz`) is split `--train-days` after its first sample: the first part goes through
the recommender's model (the code the service runs), each strategy recommends from that one
state, and the rest of the trace judges the targets, per trace and container:

- under-provisioning: the share of later samples above the target (CPU, memory);
- slack: the share of the target left unused on average, 1 - mean(usage) / target. It goes below
  zero when usage outgrows the target (a container whose memory doubles has slack -100%);
- unused: the same, but a sample above the target counts as 0 unused, never below (so going far
  under never looks like saving).

That is the fixed protocol: one request for the whole judged part. `--rolling HOURS` adds the
service's own behaviour (score_trace_rolling): the model keeps learning over the judged part,
each strategy is asked again every HOURS, and the request in force changes only when the
updater's rule replaces the pod (updater_replaces); each sample is judged against the request in
force at its time, slack and unused over time (used / requested), and updates/day is shown.

The table shows the mean over traces (a trace with less than one day after the training part is
left out), and each figure's ratio to `vpa`'s. The result file (--output) records the machine,
the commit and the command.

    .venv/bin/python benchmarks/quality.py DIR [--train-days 7] [--rolling HOURS]
        [--strategy NAME[:param=value,...]]... [--per-trace] [--output FILE]

A strategy may be given several times with different parameters (one row each).

e.g. `benchmarks/quality.py tests/data/bitbrains-rnd-2013-07` (20 VMs), or a directory of your own
traces. The tests run it on a small directory only.
"""

from __future__ import annotations

import argparse
import datetime as dt
import gzip
import io
import json
import statistics
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

import frontier as fr  # noqa: E402
import scale_common as sc  # noqa: E402
import slack_bound as sb  # noqa: E402

from app.core.recommend.aggregate import memory_buckets  # noqa: E402
from app.core.recommend.array_model import ArrayModel  # noqa: E402
from app.core.recommend.daily import Distribution  # noqa: E402
from app.core.recommend.estimator import pod_minimum  # noqa: E402
from app.core.recommend.settings import DAY, RecommenderSettings  # noqa: E402
from app.core.recommend.strategies import VPA, Strategy, StrategyInvalid, configure  # noqa: E402
from app.core.recommend.strategies.balanced import balanced_level  # noqa: E402
from app.core.recommend.trace import (  # noqa: E402
    TRACE_WORKLOAD,
    TraceRow,
    feed,
    parse_trace,
    replay,
)
from app.core.recommendation import Recommendation  # noqa: E402
from app.core.resources import Resources  # noqa: E402
from app.core.sizing.priority import (  # noqa: E402
    ContainerView,
    UpdaterSettings,
    pod_priority,
    update_reason,
)

DEFAULT_STRATEGIES = ("vpa", "krr-simple", "balanced")
COLUMNS = ("cpu_under", "cpu_slack", "memory_under", "memory_slack")
EXTRA = ("cpu_unused", "memory_unused")


@dataclass(frozen=True)
class Score:
    """One container of one trace under one strategy (shares, not percent)."""

    trace: str
    container: str
    cpu_under: float
    cpu_slack: float
    cpu_unused: float
    memory_under: float
    memory_slack: float
    memory_unused: float
    updates_per_day: float = 0.0  # rolling protocol: how often the updater replaced the pod
    quick_per_day: float = 0.0  # ... of which less than the updater's 12 h after the last one


def judge(values: Sequence[float], target: float) -> tuple[float, float, float]:
    """(share above target, 1 - mean / target, mean of max(0, target - v) / target)."""
    above = sum(1 for v in values if v > target) / len(values)
    slack = 1 - statistics.fmean(values) / target
    unused = statistics.fmean(max(0.0, target - v) / target for v in values)
    return above, slack, unused


def split(rows: list[TraceRow], train_days: float) -> tuple[list[TraceRow], list[TraceRow]] | None:
    """Training rows and judging rows, or None when less than a day follows the training part."""
    start = min(r.time for r in rows)
    if max(r.time for r in rows) - start < (train_days + 1) * DAY:
        return None
    cut = start + train_days * DAY
    return [r for r in rows if r.time < cut], [r for r in rows if r.time >= cut and r.event is None]


def hindsight_memory(values: Sequence[float], weight: float, floor: float) -> float:
    """The level `balanced` would pick (no margin) if it knew the judged samples in advance: a
    bound for any strategy trading unused memory against time above it at that weight."""
    buckets = memory_buckets(RecommenderSettings())
    counts: dict[int, int] = {}
    for v in values:
        b = buckets.find_bucket(v)
        counts[b] = counts.get(b, 0) + 1
    dist = Distribution(
        buckets, tuple(sorted(counts.items())), len(values), sum(values), max(values)
    )
    return balanced_level(dist, weight, floor).level


def bound_levels(
    rows: list[TraceRow], train_days: float
) -> tuple[list[sb.Levels], list[sb.Levels]] | None:
    """Each judged container's candidate memory requests for `foresight_bound`, in two lists:
    those at or above its judged mean, and any from the pod minimum. None when the trace is too
    short."""
    parts = split(rows, train_days)
    if parts is None:
        return None
    _, judged = parts
    names = sorted(c for c in {r.container for r in judged} if _has_usage(judged, c))
    floor = float(pod_minimum(len(names), RecommenderSettings()).memory)
    memory = [_memory(judged, c) for c in names]
    return (
        [sb.levels(values, floor, at_least_mean=True) for values in memory],
        [sb.levels(values, floor, at_least_mean=False) for values in memory],
    )


def foresight_bound(
    at_least_mean: list[sb.Levels], any_levels: list[sb.Levels], vpa: list[Score]
) -> str:
    """The lines that say how low mean memory slack can go at vpa's memory under-provisioning,
    from each judged container's levels at or above its mean use and its levels from the pod
    minimum (`bound_levels`)."""
    under = statistics.fmean(s.memory_under for s in vpa)
    slack = statistics.fmean(s.memory_slack for s in vpa)
    kept = sb.slack_bound(at_least_mean, under)
    any_level = sb.slack_bound(any_levels, under)
    return "\n".join(
        [
            "Foresight bound (--bound; benchmarks/slack_bound.py): one memory request per trace, "
            "chosen knowing the judged samples,",
            f"at vpa's mean memory under-provisioning ({pct(under)}): mean memory slack "
            f">= {pct(kept.slack)} with every request at or above its trace's judged mean use;",
            f">= {pct(any_level.slack)} when requests below a trace's mean use (negative slack) "
            f"count. 20% below vpa's slack: {pct(slack * 0.8)}",
        ]
    )


def score_trace(
    name: str,
    rows: list[TraceRow],
    train_days: float,
    strategies: Sequence[Strategy],
    hindsight: Sequence[float] = (),
) -> dict[str, list[Score]] | None:
    """Scores per strategy (by its label) for one trace; None when it is too short."""
    parts = split(rows, train_days)
    if parts is None:
        return None
    train, judged = parts
    model = ArrayModel()
    replay(train, model=model)
    out: dict[str, list[Score]] = {}
    vpa = model.recommend(TRACE_WORKLOAD, None, VPA)
    for strategy in strategies:
        recs = model.recommend(TRACE_WORKLOAD, None, strategy)
        out[label(strategy)] = [
            _score(name, c, judged, rec.target.cpu, float(rec.target.memory))
            for c, rec in sorted(recs.items())
            if _has_usage(judged, c)
        ]
    floor = float(pod_minimum(len(vpa), model.settings).memory)
    for weight in hindsight:
        out[hindsight_label(weight)] = [
            _score(
                name, c, judged, rec.target.cpu, hindsight_memory(_memory(judged, c), weight, floor)
            )
            for c, rec in sorted(vpa.items())
            if _has_usage(judged, c)
        ]
    return out


def _memory(judged: list[TraceRow], container: str) -> list[float]:
    return [r.memory for r in judged if r.container == container and r.memory is not None]


def _has_usage(judged: list[TraceRow], container: str) -> bool:
    cpu = any(r.cpu is not None for r in judged if r.container == container)
    return cpu and bool(_memory(judged, container))


def _score(
    name: str, container: str, judged: list[TraceRow], cpu_millis: int, memory: float
) -> Score:
    cpu = [r.cpu for r in judged if r.container == container and r.cpu is not None]
    c = judge(cpu, cpu_millis / 1000.0)
    m = judge(_memory(judged, container), memory)
    return Score(name, container, c[0], c[1], c[2], m[0], m[1], m[2])


@dataclass
class _Judged:
    """Running sums of one resource's judged samples against the request in force at each."""

    count: int = 0
    above: int = 0
    used: float = 0.0
    requested: float = 0.0
    unused: float = 0.0

    def add(self, value: float, request: float) -> None:
        self.count += 1
        self.above += value > request
        self.used += value
        self.requested += request
        self.unused += max(0.0, request - value)

    def figures(self) -> tuple[float, float, float]:
        """(share above, 1 - used / requested, unused / requested): for a request that never
        changes, what `judge` gives."""
        return self.above / self.count, 1 - self.used / self.requested, self.unused / self.requested


@dataclass
class _InForce:
    """What one strategy's pod runs with under the rolling protocol, and what it gave."""

    request: Resources
    since: float  # when the pod was (re)created with it
    updates: int = 0
    quick: int = 0  # replacements sooner than the updater's minimum life (request out of bounds)
    cpu: _Judged | None = None
    memory: _Judged | None = None


UPDATER = UpdaterSettings()


def updater_replaces(current: Resources, since: float, rec: Recommendation, now: float) -> bool:
    """Whether rightsizer's updater (app/core/sizing/priority.py, VPA's updater re-derived from
    kubernetes/autoscaler vertical-pod-autoscaler/pkg/updater/priority) replaces a pod running
    with `current` since `since`, given the recommendation `rec` at `now`: a request outside
    [lowerBound, upperBound], or a pod that lived 12 h whose requests differ from the target by
    10% or more in total. The trace is taken as one replica of a workload the disruption budget
    lets the updater touch (VPA's --min-replicas 2 would leave a lone pod alone)."""

    def amounts(r: Resources) -> dict[str, int]:
        return {"cpu": r.cpu, "memory": r.memory}

    view = ContainerView(
        "c",
        amounts(current),
        amounts(rec.target),
        amounts(rec.lower_bound),
        amounts(rec.upper_bound),
    )
    return update_reason(pod_priority([view]), since, now, False, UPDATER) is not None


def score_trace_rolling(
    name: str,
    rows: list[TraceRow],
    train_days: float,
    strategies: Sequence[Strategy],
    hours: float,
) -> dict[str, list[Score]] | None:
    """The rolling protocol: the model learns from the first `train_days`, each strategy's target
    is the pod's request then; the judged part is walked in steps of `hours`, every sample fed to
    the same model, and at each step the strategy is asked again and the updater decides whether
    the pod is replaced with the new target (`updater_replaces`). Each judged sample is judged
    against the request in force at its time. None when the trace is too short."""
    parts = split(rows, train_days)
    if parts is None:
        return None
    train, _ = parts
    cut = min(r.time for r in rows) + train_days * DAY
    later = [r for r in rows if r.time >= cut]
    model = ArrayModel()
    model.tune(TRACE_WORKLOAD, VPA)
    feed(train, model)
    step = hours * 3600.0
    states: dict[str, dict[str, _InForce]] = {label(s): {} for s in strategies}
    now, i = cut, 0
    while i < len(later):
        for strategy in strategies:
            in_force = states[label(strategy)]
            for c, rec in model.recommend(TRACE_WORKLOAD, None, strategy).items():
                state = in_force.get(c)
                if state is None:
                    if now == cut:  # only containers recommended at the start are judged
                        in_force[c] = _InForce(rec.target, now, cpu=_Judged(), memory=_Judged())
                elif updater_replaces(state.request, state.since, rec, now):
                    state.quick += now - state.since < UPDATER.min_lifetime_seconds
                    state.request, state.since = rec.target, now
                    state.updates += 1
        end = now + step
        j = i
        while j < len(later) and later[j].time < end:
            r = later[j]
            j += 1
            if r.event is not None:
                continue
            for in_force in states.values():
                state = in_force.get(r.container)
                if state is None:
                    continue
                assert state.cpu is not None and state.memory is not None
                if r.cpu is not None:
                    state.cpu.add(r.cpu, state.request.cpu / 1000.0)
                if r.memory is not None:
                    state.memory.add(r.memory, float(state.request.memory))
        feed(later[i:j], model)
        now, i = end, j
    days = (max(r.time for r in rows) - cut) / DAY
    out: dict[str, list[Score]] = {}
    for key, in_force in states.items():
        out[key] = []
        for c, state in sorted(in_force.items()):
            assert state.cpu is not None and state.memory is not None
            if not state.cpu.count or not state.memory.count:
                continue
            cpu, mem = state.cpu.figures(), state.memory.figures()
            out[key].append(
                Score(
                    name,
                    c,
                    *cpu[:1],
                    cpu[1],
                    cpu[2],
                    mem[0],
                    mem[1],
                    mem[2],
                    state.updates / days,
                    state.quick / days,
                )
            )
    return out


def hindsight_label(weight: float) -> str:
    return f"hindsight (weight {weight:g})"


def trace_files(directory: Path) -> list[Path]:
    return sorted([*directory.glob("*.csv"), *directory.glob("*.csv.gz")])


def frontier_set(
    directory: Path, train_days: float, hours: float, small: bool
) -> tuple[str, list[fr.Point], list[Any], list[Any]]:
    """One directory under --frontier: (its summary line, the points, the CPU and memory
    containers of the hindsight bound)."""
    swept = fr.sweep(small)
    strategies = [s for *_, s in swept]
    keys = [label(s) for s in strategies]
    scores: dict[str, list[Score]] = {k: [] for k in keys}
    cpu: list[Any] = []
    memory: list[Any] = []
    files = trace_files(directory)
    short = []
    for f in files:
        name = f.name.removesuffix(".gz").removesuffix(".csv")
        rows = read_trace(f)
        walked = score_trace_rolling(name, rows, train_days, strategies, hours)
        if walked is None:
            short.append(name)
            continue
        for key, s in walked.items():
            scores[key] += s
        cut = min(r.time for r in rows) + train_days * DAY
        c, m = fr.bound_containers(rows, cut, hours * 3600.0, UPDATER.min_lifetime_seconds)
        cpu += c
        memory += m
    if not cpu:
        raise SystemExit(f"{directory}: no trace is longer than {train_days:g} days + 1")
    labels = [(n, text, d, k) for (n, text, d, _), k in zip(swept, keys, strict=True)]
    line = (
        f"{shown_path(directory)}: {len(files)} traces, {len(files) - len(short)} judged "
        f"({len(cpu)} containers)" + (f", {len(short)} too short" if short else "")
    )
    return line, fr.points(labels, scores), cpu, memory


def frontier_report(args: argparse.Namespace, argv: Sequence[str] | None) -> int:
    sets = [("held-out", args.directory)]
    if args.training is not None:
        sets.insert(0, ("training", args.training))
    given = list(argv if argv is not None else sys.argv[1:])
    paths = {str(args.directory): args.directory, str(args.training): args.training}
    if args.plot is not None:
        paths[str(args.plot)] = args.plot
    shown = [shown_path(paths[a]) if a in paths and paths[a] is not None else a for a in given]
    lines = [
        f"# {' '.join(['benchmarks/quality.py', *shown])}",
        f"# {dt.date.today()}, at commit {commit()}, on {sc.machine()}",
        f"Rolling protocol (--rolling {args.rolling:g}), trained on the first "
        f"{args.train_days:g} days; each strategy's risk knob swept (benchmarks/frontier.py); "
        "* marks its default. Mean over containers; unused: a sample above the request counts "
        "as 0 unused; updates/day: pods the updater replaced per judged day, of which <12h: "
        "sooner than its 12 h minimum life (request outside the bounds), which the hindsight "
        "bound (benchmarks/rolling_bound.py: at most one change per 12 h) does not cover.",
    ]
    panels = []
    for title, directory in sets:
        line, pts, cpu, memory = frontier_set(
            directory, args.train_days, args.rolling, args.small_sweep
        )
        panels.append((title, pts, cpu, memory))
        lines += [
            "",
            f"{title}: {line}",
            sc.table(fr.HEADERS, fr.table(pts), f"{title}: the sweep"),
            "",
            fr.bound_lines(pts, cpu, memory),
        ]
    if args.plot:
        fr.plot(args.plot, panels)
        lines += ["", f"plot: {shown_path(args.plot)}"]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.output:
        args.output.write_text(report)
    return 0


def read_trace(path: Path) -> list[TraceRow]:
    """A trace CSV, gzip-compressed when its name ends in .gz."""
    raw = path.read_bytes()
    if path.suffix == ".gz":
        raw = gzip.decompress(raw)
    return parse_trace(io.StringIO(raw.decode(), newline=""))


def parse_strategy(text: str) -> Strategy:
    """`NAME` or `NAME:param=value,...` (values are JSON: 95, true)."""
    name, _, rest = text.partition(":")
    params: dict[str, object] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise SystemExit(f"--strategy {text}: expected param=value, got {item!r}")
        try:
            params[key] = json.loads(value)
        except json.JSONDecodeError:
            raise SystemExit(
                f"--strategy {text}: {key}: {value!r} is not a number or boolean"
            ) from None
    try:
        return configure(name, params)
    except StrategyInvalid as e:
        raise SystemExit(f"--strategy {text}: {e}") from None


def label(s: Strategy) -> str:
    from app.core.recommend.strategies import REGISTRY

    defaults = {p.name: p.default for p in REGISTRY[s.name].params}
    changed = [f"{k}={v:g}" for k, v in s.params.items() if v != defaults[k]]
    return s.name + (f" ({', '.join(changed)})" if changed else "")


def pct(x: float) -> str:
    return f"{x * 100:.2f}%"


def summary(results: dict[str, list[Score]], rolling: bool = False) -> str:
    base = {c: statistics.fmean(getattr(s, c) for s in results["vpa"]) for c in COLUMNS + EXTRA}
    rows = []
    extra = []
    for name, scores in results.items():
        means = {c: statistics.fmean(getattr(s, c) for s in scores) for c in COLUMNS + EXTRA}
        row: list[str] = [name, str(len(scores))]
        for c in COLUMNS:
            ratio = means[c] / base[c] if base[c] else float("nan")
            row.append(f"{pct(means[c])} x{ratio:.2f}")
        rows.append(row)
        extra.append([name, *(pct(means[c]) for c in EXTRA)])
        if rolling:
            extra[-1].append(f"{statistics.fmean(s.updates_per_day for s in scores):.2f}")
    headers = ["strategy", "traces", "CPU under", "CPU slack", "memory under", "memory slack"]
    return (
        sc.table(headers, rows, "mean over traces; x: ratio to vpa's")
        + "\n\n"
        + sc.table(
            ["strategy", "CPU unused", "memory unused"] + (["updates/day"] if rolling else []),
            extra,
            "unused: like slack, but a sample above the target counts as 0 unused, not negative"
            + ("; updates/day: pods the updater replaced per judged day" if rolling else ""),
        )
    )


def per_trace(results: dict[str, list[Score]]) -> str:
    names = list(results)
    by_key = {n: {(s.trace, s.container): s for s in results[n]} for n in names}
    rows = []
    for key in sorted(by_key["vpa"]):
        row = ["/".join(key)]
        for n in names:
            s = by_key[n].get(key)
            row.append(
                f"{pct(s.cpu_under)} {pct(s.cpu_slack)} {pct(s.memory_under)} {pct(s.memory_slack)}"
                if s
                else "no recommendation"
            )
        rows.append(row)
    return sc.table(
        ["trace/container", *names], rows, "per trace: CPU under, CPU slack, memory under, slack"
    )


def shown_path(directory: Path) -> str:
    """The directory relative to the repository, or only its name when it is outside."""
    try:
        return str(directory.resolve().relative_to(ROOT))
    except ValueError:
        return f"<{directory.name}>"


def commit() -> str:
    def git(*args: str) -> str:
        done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True)
        return done.stdout.strip() if done.returncode == 0 else ""

    head = git("rev-parse", "--short", "HEAD") or "unknown"
    dirty = git(
        "status",
        "--porcelain",
        "--untracked-files=no",
        "--",
        "app/core/recommend",
        "benchmarks/quality.py",
    )
    return head + (" (with uncommitted changes to the recommender)" if dirty else "")


def main(argv: Sequence[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("directory", type=Path, help="a directory of trace CSV files")
    ap.add_argument("--train-days", type=float, default=7.0)
    ap.add_argument(
        "--strategy",
        action="append",
        help="NAME or NAME:param=value,... (repeatable; default: vpa, krr-simple, balanced)",
    )
    ap.add_argument(
        "--hindsight",
        type=float,
        action="append",
        default=[],
        metavar="WEIGHT",
        help="also a row for balanced's memory level chosen from the judged samples themselves "
        "(knowing the future) at this weight: a bound no strategy can beat at that trade-off",
    )
    ap.add_argument(
        "--rolling",
        type=float,
        metavar="HOURS",
        help="also the rolling protocol: the model keeps learning over the judged part, each "
        "strategy is asked again every HOURS and the updater's rule decides when the pod's "
        "request changes",
    )
    ap.add_argument(
        "--bound",
        action="store_true",
        help="also the lowest mean memory slack any one request per trace could have at vpa's "
        "memory under-provisioning, knowing the judged samples (fixed protocol)",
    )
    ap.add_argument(
        "--frontier",
        action="store_true",
        help="instead: sweep each strategy's risk knob under the rolling protocol (needs "
        "--rolling) and report the curve of under-provisioning against unused request, with "
        "the rolling protocol's hindsight bound (benchmarks/frontier.py)",
    )
    ap.add_argument(
        "--training",
        type=Path,
        metavar="DIR",
        help="--frontier: also this directory of traces (the training set), reported first",
    )
    ap.add_argument(
        "--plot", type=Path, metavar="PNG", help="--frontier: also draw the curves (matplotlib)"
    )
    ap.add_argument(
        "--small-sweep",
        action="store_true",
        help="--frontier: a few settings per strategy only (for tests)",
    )
    ap.add_argument("--per-trace", action="store_true", help="also one line per trace")
    ap.add_argument("--output", type=Path, help="also write the report to this file")
    args = ap.parse_args(argv)
    files = trace_files(args.directory)
    if not files:
        ap.error(f"{args.directory}: no .csv or .csv.gz files")
    if args.frontier:
        if args.rolling is None or not args.rolling > 0:
            ap.error("--frontier needs --rolling HOURS (greater than 0)")
        if args.training is not None and not trace_files(args.training):
            ap.error(f"--training {args.training}: no .csv or .csv.gz files")
        return frontier_report(args, argv)
    strategies = [parse_strategy(s) for s in args.strategy or DEFAULT_STRATEGIES]
    if len({label(s) for s in strategies}) != len(strategies):
        ap.error("each strategy (with its parameters) may be given once")
    vpa = [s for s in strategies if s.name == "vpa"] or [configure("vpa")]
    strategies = vpa + [s for s in strategies if s.name != "vpa"]  # the baseline comes first
    if any(w <= 0 for w in args.hindsight):
        ap.error("--hindsight: the weight must be greater than 0")
    if args.rolling is not None and not args.rolling > 0:
        ap.error("--rolling: the hours must be greater than 0")
    results: dict[str, list[Score]] = {label(s): [] for s in strategies}
    results.update({hindsight_label(w): [] for w in args.hindsight})
    rolled: dict[str, list[Score]] = {label(s): [] for s in strategies}
    short = []
    bound_kept: list[sb.Levels] = []  # per judged container (--bound): levels >= its mean use
    bound_any: list[sb.Levels] = []  # and levels from the pod minimum
    for f in files:
        name = f.name.removesuffix(".gz").removesuffix(".csv")
        rows = read_trace(f)
        scored = score_trace(name, rows, args.train_days, strategies, args.hindsight)
        if scored is None:
            short.append(name)
            continue
        for key, scores in scored.items():
            results[key] += scores
        levels = bound_levels(rows, args.train_days) if args.bound else None
        if levels is not None:
            bound_kept += levels[0]
            bound_any += levels[1]
        if args.rolling is not None:
            walked = score_trace_rolling(name, rows, args.train_days, strategies, args.rolling)
            assert walked is not None
            for key, scores in walked.items():
                rolled[key] += scores
    if not results["vpa"]:
        ap.error(f"no trace is longer than {args.train_days:g} days + 1")
    given = list(argv if argv is not None else sys.argv[1:])
    shown = [shown_path(args.directory) if a == str(args.directory) else a for a in given]
    command = " ".join(["benchmarks/quality.py", *shown])
    lines = [
        f"# {command}",
        f"# {dt.date.today()}, at commit {commit()}, on {sc.machine()}",
        f"{len(files)} traces in {args.directory.name}: {len(files) - len(short)} judged "
        f"(trained on the first {args.train_days:g} days, judged on the rest)"
        + (f", {len(short)} too short ({', '.join(short)})" if short else ""),
        "",
        "Fixed protocol: the target at the end of the training part is the request for the "
        "whole judged part",
        "",
        summary(results),
    ]
    if args.bound:
        lines += ["", foresight_bound(bound_kept, bound_any, results["vpa"])]
    if args.rolling is not None:
        lines += [
            "",
            f"Rolling protocol (--rolling {args.rolling:g}): the model keeps learning; every "
            f"{args.rolling:g} h each strategy is asked again and the pod is replaced with the "
            "new target when the updater's rule says so (request outside [lowerBound, "
            "upperBound], or 12 h old and 10% off); slack = 1 - used / requested over time",
            "",
            summary(rolled, rolling=True),
        ]
    if args.per_trace:
        lines += ["", "Fixed protocol", per_trace(results)]
        if args.rolling is not None:
            lines += ["", "Rolling protocol", per_trace(rolled)]
    report = "\n".join(lines) + "\n"
    print(report, end="")
    if args.output:
        args.output.write_text(report)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
