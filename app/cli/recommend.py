"""`rightsizer recommend --from-csv`: a usage trace through the recommender (no database, no
cluster)."""

from __future__ import annotations

import json
import os
import sys

import click

from app.config import ConfigError, idle_after_seconds, recommender_settings
from app.core.recommend.strategies import NAMES, Strategy, StrategyInvalid, configure
from app.core.recommend.trace import TraceError, parse_trace, recommendations_json, replay


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
def recommend(path: str, recommender: str, params: tuple[str, ...]) -> None:
    """Replay a usage trace through the recommender and print its recommendation as JSON."""

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
    click.echo(json.dumps(recommendations_json(recs), indent=2))


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
