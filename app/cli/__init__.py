"""The `rightsizer` command: Flask's CLI (db migrations included) plus rightsizer's own commands,
one module per command group:

- `recommend`: a usage trace replayed through the recommender (no database, no cluster);
- `serve`: the server (`app.serving`, then gunicorn);
- `certs`, `webhook`: the webhook's TLS material and its MutatingWebhookConfiguration;
- `client`: `policy`, `recommendations`, `scaler`, `events`, the REST API's client
  (with `migrate`: the offline VPA and cluster-proportional-autoscaler imports); `session` is its
  HTTP session and options, `context` where the server, CA and token come from (flags, variables,
  the context file), `reach` why a server could not be reached and the fix;
- `demo`: `demo` and `replay`, rightsizer without a cluster (`demo_access`: the demo's port check,
  admin token, CLI context and printed walk-through);
- `sim`: the simulated cluster (`app.simulator.cli`).
"""

from __future__ import annotations

import click
from flask import Flask
from flask.cli import FlaskGroup

from app import create_app
from app.cli import demo
from app.cli.certs import certs_group
from app.cli.client import register as register_client_commands
from app.cli.recommend import recommend
from app.cli.serve import serve
from app.cli.webhook import webhook_group
from app.simulator.cli import sim_command


def cli_app() -> Flask:
    """The app for CLI commands: never runs the background jobs, whatever RIGHTSIZER_JOBS says."""
    return create_app({"JOBS": False})


@click.group(cls=FlaskGroup, create_app=cli_app, add_version_option=False)
def cli() -> None:
    """rightsizer: right-sizes Kubernetes workloads."""


cli.add_command(recommend)
cli.add_command(serve)
register_client_commands(cli)  # policy, recommendations, scaler, events: the REST API's client
cli.add_command(sim_command)  # needs no app context or database
cli.add_command(demo.demo)
cli.add_command(demo.replay)
cli.add_command(certs_group)
cli.add_command(webhook_group)


def main() -> None:
    cli.main(prog_name="rightsizer")
