"""The `rightsizer` command: rightsizer's own commands, one module per command group, and
Flask-Migrate's `db` (the schema). Not Flask's own CLI: its options (`--app`, `--env-file`,
`--debug`) and commands (`run`, `shell`, `routes`) are for developing a Flask app, not for
running rightsizer, so `rightsizer --help` lists only what is documented. The commands that need
the app (`db`, `certs`, `webhook`, `replay`) get it from `cli_app` through Flask's ScriptInfo, as
under `flask`:

- `recommend`: a usage trace replayed through the recommender (no database, no cluster);
- `serve`: the server (`app.serving`, then gunicorn);
- `certs`, `webhook`: the webhook's TLS material and its MutatingWebhookConfiguration;
- `client`: `policy`, `recommendations`, `scaler`, `events`, the REST API's client
  (with `migrate`: the offline VPA and cluster-proportional-autoscaler imports; `gitops`:
  `export`, the recommendations as files for git); `session` is its HTTP session and
  options, `context` where the server, CA and token come from (flags, variables, the context
  file), `reach` why a server could not be reached and the fix;
- `demo`: `demo` and `replay`, rightsizer without a cluster (`demo_access`: the demo's port check,
  admin token, CLI context and printed walk-through);
- `sim`: the simulated cluster (`app.simulator.cli`), loaded by name only when `sim` or `demo`
  runs (`simulated`): `serve` never imports the simulator, an optional part (the `simulator`
  extra).

The modules here import each other, never this package: it only assembles them.
"""

from __future__ import annotations

from typing import Any

import click
from flask import Flask
from flask.cli import ScriptInfo
from flask_migrate.cli import db as db_group

from app import create_app
from app.cli.certs import certs_group
from app.cli.client import register as register_client_commands
from app.cli.demo import demo, replay
from app.cli.fleet import fleet
from app.cli.recommend import recommend
from app.cli.serve import serve
from app.cli.simulated import sim
from app.cli.webhook import webhook_group


def cli_app() -> Flask:
    """The app for CLI commands: never runs the background jobs, whatever RIGHTSIZER_JOBS says."""
    return create_app({"JOBS": False})


class RightsizerGroup(click.Group):
    """A group whose commands find the app (Flask's `with_appcontext`, AppGroup) as under
    `flask`, through a ScriptInfo made afresh for each invocation."""

    def make_context(
        self,
        info_name: str | None,
        args: list[str],
        parent: click.Context | None = None,
        **extra: Any,
    ) -> click.Context:
        extra.setdefault("obj", ScriptInfo(create_app=cli_app, set_debug_flag=False))
        return super().make_context(info_name, args, parent, **extra)


@click.group(cls=RightsizerGroup)
@click.version_option(package_name="rightsizer", message="%(prog)s %(version)s")
def cli() -> None:
    """rightsizer: right-sizes Kubernetes workloads."""


cli.add_command(recommend)
cli.add_command(serve)
cli.add_command(fleet)
register_client_commands(cli)  # policy, recommendations, scaler, events, export: the API's client
cli.add_command(sim)  # needs no app context or database
cli.add_command(demo)
cli.add_command(replay)
cli.add_command(certs_group)
cli.add_command(webhook_group)
cli.add_command(db_group)  # Flask-Migrate: `rightsizer db upgrade`


def main() -> None:
    cli.main(prog_name="rightsizer")
