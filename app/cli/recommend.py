"""`rightsizer recommend --from-csv`: a usage trace through the recommender (no database, no
cluster). A person gets what was read (samples, span, interval, gaps), a table and each
container's reason; `-o json` gives machines the recommendation alone, as it always has."""

from __future__ import annotations

import json
import os
import sys
from datetime import UTC, datetime
from typing import Any

import click

from app.cli.client import table
from app.config import ConfigError, idle_after_seconds, recommender_settings
from app.core.recommend.strategies import NAMES, Strategy, StrategyInvalid, configure
from app.core.recommend.trace import TraceError, parse_trace, recommendations_json, replay
from app.core.recommend.trace_summary import TraceSummary, duration, summarize

GAPS_SHOWN = 3


@click.command("recommend")
@click.option(
    "--from-csv",
    "path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Usage trace (CSV) to replay; '-' reads stdin.",
)
@click.option(
    "--recommender",
    default="vpa",
    show_default=True,
    type=click.Choice(NAMES),
    help="The strategy, as a policy's `recommender` (docs/policies.md).",
)
@click.option(
    "--param",
    "params",
    multiple=True,
    metavar="NAME=VALUE",
    help="A parameter of the strategy, as in `recommenderParams` (repeatable): cpuPercentile=90.",
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "json"]),
    default="table",
    show_default=True,
    help="table: what was read, the recommendation and its reasons; json: for machines.",
)
def recommend(path: str, recommender: str, params: tuple[str, ...], output: str) -> None:
    """Replay a usage trace through the recommender and print its recommendation: what it read
    (samples, span, gaps) and a table, or JSON with -o json."""

    try:
        settings = recommender_settings(os.environ)
        idle_after = idle_after_seconds(os.environ)
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
    strategy = _strategy(recommender, params)
    try:
        if path == "-":
            rows = parse_trace(sys.stdin)
        else:
            with open(path, encoding="utf-8", newline="") as fh:
                rows = parse_trace(fh)
    except OSError as e:
        click.echo(f"error: cannot read {path}: {e.strerror}", err=True)
        sys.exit(2)
    except UnicodeDecodeError as e:
        click.echo(f"error: {path}: not UTF-8 text ({e.reason} at byte {e.start})", err=True)
        sys.exit(2)
    except TraceError as e:
        click.echo(f"error: {path}: {e}", err=True)
        sys.exit(2)
    recs = replay(rows, settings, idle_after=idle_after, strategy=strategy)
    doc = recommendations_json(recs)
    if output == "json":
        click.echo(json.dumps(doc, indent=2))
        return
    click.echo(what_was_read(path, summarize(rows), idle_after))
    click.echo()
    click.echo(recommendation_table(doc))


def _count(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _time(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def what_was_read(path: str, s: TraceSummary, idle_after: float) -> str:
    """The lines saying what the trace held: samples, span and interval, gaps."""
    source = "stdin" if path == "-" else path
    ooms = f", {_count(s.ooms, 'OOM kill')}" if s.ooms else ""
    every = f", a sample every {duration(s.interval)}" if s.interval else ""
    lines = [
        f"read {source}: {_count(s.rows, 'row')}: {s.cpu_samples} CPU and "
        f"{_count(s.memory_samples, 'memory sample')}{ooms}; "
        f"{_count(len(s.containers), 'container')} ({', '.join(s.containers)}) "
        f"in {_count(s.pods, 'pod')}",
        f"span: {_time(s.first)} to {_time(s.last)} ({duration(s.last - s.first)}){every}",
    ]
    if not s.gaps:
        lines.append("gaps: none" if s.interval else "gaps: none (one sample per container)")
        return "\n".join(lines)
    longest = s.gaps[0]
    lines.append(
        f"gaps: {len(s.gaps)} longer than {duration(3 * (s.interval or 0))} without a sample, "
        f"the longest {duration(longest.seconds)}"
    )
    for g in s.gaps[:GAPS_SHOWN]:
        forgot = (
            ": the history before it is forgotten (RIGHTSIZER_IDLE_AFTER_SECONDS)"
            if g.seconds >= idle_after
            else ""
        )
        lines.append(
            f"  {g.pod}/{g.container}: {duration(g.seconds)} from {_time(g.start)} "
            f"to {_time(g.end)}{forgot}"
        )
    if len(s.gaps) > GAPS_SHOWN:
        lines.append(f"  ... and {len(s.gaps) - GAPS_SHOWN} shorter")
    return "\n".join(lines)


def recommendation_table(doc: dict[str, Any]) -> str:
    """One line per container (target and bounds as the JSON has them), then each reason."""
    containers = doc["containers"]
    if not containers:
        return "no recommendation: every container was idle too long at the end of the trace"
    rows = [
        (
            c["name"],
            c["target"]["cpu"],
            c["target"]["memory"],
            f"{c['lowerBound']['cpu']}-{c['upperBound']['cpu']}",
            f"{c['lowerBound']['memory']}-{c['upperBound']['memory']}",
        )
        for c in containers
    ]
    text = table(("CONTAINER", "CPU", "MEMORY", "CPU RANGE", "MEMORY RANGE"), rows)
    reasons = [f"{c['name']}: {c['reason']}" for c in containers if c.get("reason")]
    return text + ("\n\n" + "\n".join(reasons) if reasons else "")


def _strategy(name: str, params: tuple[str, ...]) -> Strategy:
    """The strategy with its --param values (JSON: 90, true); a bad one is a usage error."""
    values: dict[str, object] = {}
    for item in params:
        key, eq, text = item.partition("=")
        if not eq or not key:
            raise click.BadParameter(f"expected NAME=VALUE, got {item!r}", param_hint="--param")
        try:
            values[key] = json.loads(text)
        except json.JSONDecodeError:
            raise click.BadParameter(
                f"{key}: {text!r} is not a number or true/false", param_hint="--param"
            ) from None
    try:
        return configure(name, values)
    except StrategyInvalid as e:
        raise click.BadParameter(str(e), param_hint="--param") from None
