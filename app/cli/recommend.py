"""`rightsizer recommend --from-csv`: a usage trace through the recommender (no database, no
cluster)."""

from __future__ import annotations

import json
import os
import sys

import click

from app.config import ConfigError, idle_after_seconds, recommender_settings
from app.core.recommend.trace import TraceError, parse_trace, recommendations_json, replay


@click.command("recommend")
@click.option(
    "--from-csv",
    "path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="Usage trace (CSV) to replay; '-' reads stdin.",
)
def recommend(path: str) -> None:
    """Replay a usage trace through the recommender and print its recommendation as JSON."""

    try:
        settings = recommender_settings(os.environ)
        idle_after = idle_after_seconds(os.environ)
    except ConfigError as e:
        raise click.UsageError(str(e)) from None
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
    recs = replay(rows, settings, idle_after=idle_after)
    click.echo(json.dumps(recommendations_json(recs), indent=2))
