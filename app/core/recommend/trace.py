"""Usage traces in CSV, the input of `rightsizer recommend --from-csv`, and their replay.

Columns: timestamp (RFC 3339 or unix seconds), container, cpu (cores), memory (bytes), and
optionally cpu_request (cores), pod, event (`oom`: memory is then the memory at the OOM kill).
Every error names the line and the column; nothing is replayed from a file with an error.
"""

from __future__ import annotations

import csv
import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from app.core.recommend.array_model import ArrayModel, Sample
from app.core.recommend.model import IDLE_AFTER_SECONDS
from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import VPA, Strategy
from app.core.recommendation import ContainerPolicy, Recommendation
from app.core.workload_key import WorkloadKey

REQUIRED = ("timestamp", "container", "cpu", "memory")
OPTIONAL = ("cpu_request", "pod", "event")
DEFAULT_POD = "pod-0"
TRACE_WORKLOAD = WorkloadKey("default", "Trace", "trace")


class TraceError(ValueError):
    def __init__(self, line: int, column: str | None, message: str) -> None:
        where = f"line {line}" + (f", column {column!r}" if column else "")
        super().__init__(f"{where}: {message}")
        self.line, self.column = line, column


@dataclass(frozen=True)
class TraceRow:
    line: int
    time: float
    pod: str
    container: str
    cpu: float | None
    memory: float | None
    cpu_request: float
    event: str | None


def parse_timestamp(text: str) -> float:
    """Unix seconds, or RFC 3339 with a time zone."""
    try:
        value = float(text)
    except ValueError:
        try:
            parsed = datetime.fromisoformat(text)
        except ValueError:
            raise ValueError(f"{text!r} is neither unix seconds nor an RFC 3339 time") from None
        if parsed.tzinfo is None:
            raise ValueError(f"{text!r} has no time zone (RFC 3339 needs Z or an offset)") from None
        return parsed.timestamp()
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"{text!r} is not a valid unix time")
    return value


def _number(text: str, line: int, column: str, *, optional: bool) -> float | None:
    if text == "":
        if optional:
            return None
        raise TraceError(line, column, "value is required")
    try:
        value = float(text)
    except ValueError:
        raise TraceError(line, column, f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise TraceError(line, column, f"{text!r} is not a finite number")
    if value < 0:
        raise TraceError(line, column, f"usage cannot be negative ({text})")
    return value


def parse_trace(lines: Iterable[str]) -> list[TraceRow]:
    reader = csv.reader(lines)
    header = _header(next(reader, None))
    rows: list[TraceRow] = []
    last: dict[tuple[str, str], float] = {}
    for cells in reader:
        line = reader.line_num
        if not any(c.strip() for c in cells):
            continue
        if len(cells) != len(header):
            raise TraceError(line, None, f"expected {len(header)} fields, found {len(cells)}")
        row = _row(dict(zip(header, (c.strip() for c in cells), strict=True)), line)
        series = (row.pod, row.container)
        previous = last.get(series)
        # Samples are in order; an OOM kill may come at any place, as the recommender reads OOM
        # events after the metrics of its run (VPA's cluster feeder does the same), and is
        # taken when it is fresh enough (ArrayModel.record_oom).
        if row.event is None and previous is not None and row.time <= previous:
            what = "out of order" if row.time < previous else "a duplicate"
            raise TraceError(
                line,
                "timestamp",
                f"{_text_time(cells, header)} is {what} for pod {row.pod!r} "
                f"container {row.container!r}",
            )
        if row.event is None:
            last[series] = row.time
        rows.append(row)
    if not rows:
        raise TraceError(reader.line_num or 1, None, "no samples after the header")
    return rows


def _header(header: list[str] | None) -> list[str]:
    """The column names, checked: every required one, no unknown, none twice."""
    if header is None or not any(h.strip() for h in header):
        raise TraceError(1, None, "empty file: expected a header row " + ",".join(REQUIRED))
    header = [h.strip() for h in header]
    problems = []
    missing = [c for c in REQUIRED if c not in header]
    unknown = [c for c in header if c not in REQUIRED + OPTIONAL]
    if missing:
        problems.append("missing " + ", ".join(missing))
    if unknown:
        problems.append("unknown " + ", ".join(unknown))
    if len(set(header)) != len(header):
        problems.append("repeated column names")
    if problems:
        raise TraceError(1, None, "bad header: " + "; ".join(problems))
    return header


def _text_time(cells: list[str], header: list[str]) -> str:
    return cells[header.index("timestamp")].strip()


def _row(rec: dict[str, str], line: int) -> TraceRow:
    """One sample row, each field checked; TraceError naming the line and column."""
    try:
        t = parse_timestamp(rec["timestamp"])
    except ValueError as e:
        raise TraceError(line, "timestamp", str(e)) from None
    container = rec["container"]
    if not container:
        raise TraceError(line, "container", "value is required")
    pod = rec.get("pod") or DEFAULT_POD
    event = rec.get("event") or None
    if event not in (None, "oom"):
        raise TraceError(line, "event", f"unknown event {event!r} (expected empty or 'oom')")
    cpu = _number(rec["cpu"], line, "cpu", optional=True)
    memory = _number(rec["memory"], line, "memory", optional=event is None)
    request = _number(rec.get("cpu_request", ""), line, "cpu_request", optional=True) or 0.0
    if event is None and cpu is None and memory is None:
        raise TraceError(line, "cpu", "a sample needs cpu, memory or both")
    return TraceRow(line, t, pod, container, cpu, memory, request, event)


def replay(
    rows: Iterable[TraceRow],
    settings: RecommenderSettings | None = None,
    policies: list[ContainerPolicy] | None = None,
    model: ArrayModel | None = None,
    workload: WorkloadKey = TRACE_WORKLOAD,
    idle_after: float = IDLE_AFTER_SECONDS,
    strategy: Strategy = VPA,
) -> dict[str, Recommendation]:
    """Feeds the rows through the recommender's model, as the recommender job would: a
    container idle for `idle_after` starts afresh when it comes back, and one idle that long
    at the end of the trace is dropped, as the job's run after the last sample drops it. The
    strategy's parameters tune the history from the first sample (ArrayModel.tune)."""
    model = model or ArrayModel(settings, idle_after)
    w = workload
    model.tune(w, strategy)
    feed(rows, model, w)
    newest = model.newest_sample()
    if newest is not None:
        model.expire_idle(newest)
    return model.recommend(w, policies, strategy)


def feed(
    rows: Iterable[TraceRow], model: ArrayModel, workload: WorkloadKey = TRACE_WORKLOAD
) -> None:
    """Feeds the rows' samples and OOM kills into the model, in order (what `replay` does before
    it recommends; benchmarks/quality.py feeds a trace in steps with it): the samples between
    two OOM kills in one call (ArrayModel.add_usages: as one by one, a row's CPU then its
    memory, as the job takes a PodMetrics container)."""
    batch: list[Sample] = []
    for r in rows:
        if r.event == "oom":
            assert r.memory is not None
            model.add_usages(batch)
            batch = []
            model.record_oom(workload, r.pod, r.container, r.time, r.memory)
            continue
        batch.append((workload, r.pod, r.container, r.time, r.cpu, r.cpu_request, r.memory))
    model.add_usages(batch)


def recommendations_json(recs: dict[str, Recommendation]) -> dict[str, object]:
    return {
        "containers": [
            {
                "name": name,
                "target": rec.target.as_quantities(),
                "lowerBound": rec.lower_bound.as_quantities(),
                "upperBound": rec.upper_bound.as_quantities(),
                "uncappedTarget": rec.uncapped_target.as_quantities(),
                **({"reason": rec.reason} if rec.reason else {}),
            }
            for name, rec in sorted(recs.items())
        ]
    }
