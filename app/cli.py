"""The `rightsizer` command: Flask's CLI (db migrations included) plus rightsizer's own commands."""

from __future__ import annotations

import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import click
from flask import Flask, current_app
from flask.cli import FlaskGroup

from app import create_app
from app.cli_client import register as register_client_commands
from app.config import ConfigError, idle_after_seconds, recommender_settings
from app.core.trace import TraceError, parse_trace, recommendations_json, replay


def cli_app() -> Flask:
    """The app for CLI commands: never runs the background jobs, whatever RIGHTSIZER_JOBS says."""
    return create_app({"JOBS": False})


@click.group(cls=FlaskGroup, create_app=cli_app, add_version_option=False)
def cli() -> None:
    """rightsizer: right-sizes Kubernetes workloads."""


@cli.command("recommend", with_appcontext=False)
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


@cli.command("serve", with_appcontext=False)
@click.option("--migrate/--no-migrate", default=True, help="Run `db upgrade` first.")
def serve(migrate: bool) -> None:
    """Migrate the database, register the webhook, then serve with gunicorn (jobs on unless
    RIGHTSIZER_JOBS=false)."""
    from app.serve import metrics_directory, prepare

    os.environ.setdefault("RIGHTSIZER_JOBS", "true")
    prepare(create_app({"JOBS": False}), migrate)  # the jobs run in gunicorn's workers only
    metrics_directory(os.environ)  # before gunicorn: its workers read it when they import
    exec_gunicorn([])


def exec_gunicorn(extra: list[str]) -> None:
    beside = Path(sys.executable).with_name("gunicorn")  # the venv's, even when not on PATH
    gunicorn = str(beside) if beside.exists() else shutil.which("gunicorn") or "gunicorn"
    # The project's gunicorn settings live in app/gunicorn_conf.py (inside the package, so an
    # installed rightsizer finds them); the application is wsgi.py's, installed beside `app`.
    os.execv(gunicorn, [gunicorn, "-c", "python:app.gunicorn_conf", *extra, "wsgi:app"])


register_client_commands(cli)  # policy, recommendations, scaler, events: the REST API's client

from app.simulator.cli import sim_command  # noqa: E402  (needs no app context or database)

cli.add_command(sim_command)

from app import cli_demo  # noqa: E402

cli.add_command(cli_demo.demo)
cli.add_command(cli_demo.replay)


@cli.group("certs")
def certs_group() -> None:
    """The webhook's TLS material: a private CA and a serving certificate."""


@certs_group.command("ensure")
@click.option(
    "--dir",
    "directory",
    type=click.Path(file_okay=False, path_type=Path),
    help="Where the files live. [default: RIGHTSIZER_CERT_DIR]",
)
@click.option("--service", help="The webhook's Service. [default: RIGHTSIZER_WEBHOOK_SERVICE]")
@click.option("--namespace", help="Its namespace. [default: RIGHTSIZER_NAMESPACE]")
@click.option(
    "--extra-name",
    "extra_names",
    multiple=True,
    help="Another DNS name or IP address for the serving certificate (repeatable).",
)
@click.option(
    "--secret",
    help="Keep them in this Secret of the namespace (shared by all replicas) and copy them to the "
    "directory. [default: RIGHTSIZER_CERT_SECRET]",
)
@click.option("--kubeconfig", help="For --secret. [default: RIGHTSIZER_KUBECONFIG, in-cluster]")
def certs_ensure(
    directory: Path | None,
    service: str | None,
    namespace: str | None,
    extra_names: tuple[str, ...],
    secret: str | None,
    kubeconfig: str | None,
) -> None:
    """Create the CA and serving certificate if missing; renew what is due."""
    from app.certs import DirectoryStore, ensure, ensure_in, service_names

    cfg = current_app.config
    directory = directory or Path(cfg["CERT_DIR"])
    namespace = namespace or cfg["NAMESPACE"]
    names = service_names(service or cfg["WEBHOOK_SERVICE"], namespace)
    names += [n for n in extra_names if n not in names]
    secret = secret or cfg["CERT_SECRET"]
    try:
        if secret:
            from app.kube.secrets import SecretStore

            store = SecretStore(_api_client(kubeconfig), namespace, secret)
            files, done = ensure_in(store, names)
            disk = DirectoryStore(directory)
            disk.save(files)
            paths = disk.paths
            click.echo(f"Secret {namespace}/{secret} holds them")
        else:
            paths, done = ensure(directory, names)
    except (OSError, ValueError) as e:
        raise click.ClickException(f"{directory}: {e}") from None
    except click.ClickException:
        raise
    except Exception as e:  # the API server's refusal (RBAC, no such namespace)
        raise click.ClickException(f"Secret {namespace}/{secret}: {e}") from None
    for line in done:
        click.echo(line)
    if not done:
        click.echo(f"certificates in {directory} are current")
    click.echo(f"CA: {paths.ca}  certificate: {paths.cert}  key: {paths.key}")


@cli.group("webhook")
def webhook_group() -> None:
    """The MutatingWebhookConfiguration that sends pod creations to rightsizer."""


def _registration(cert_dir: Path | None, url: str | None) -> tuple[Any, bytes]:
    from dataclasses import replace

    from app.certs import CertPaths
    from app.kube.webhook_config import WebhookRegistration

    cfg = current_app.config
    reg = WebhookRegistration.from_config(cfg)
    if url:
        reg = replace(reg, url=url)
    ca = CertPaths(cert_dir or Path(cfg["CERT_DIR"])).ca
    try:
        return reg, ca.read_bytes()
    except OSError as e:
        raise click.ClickException(
            f"cannot read the CA certificate {ca}: {e.strerror}; run `rightsizer certs ensure`"
        ) from None


CERT_DIR_OPTION = click.option(
    "--cert-dir",
    type=click.Path(file_okay=False, path_type=Path),
    help="Directory holding ca.crt. [default: RIGHTSIZER_CERT_DIR]",
)
URL_OPTION = click.option("--url", help="Call this URL instead of the Service (development).")
KUBECONFIG_OPTION = click.option(
    "--kubeconfig", help="Kubeconfig file. [default: RIGHTSIZER_KUBECONFIG, in-cluster, ~/.kube]"
)


@webhook_group.command("print")
@CERT_DIR_OPTION
@URL_OPTION
@click.option("--output", "-o", type=click.Choice(["yaml", "json"]), default="yaml")
def webhook_print(cert_dir: Path | None, url: str | None, output: str) -> None:
    """Print the configuration (no cluster needed), e.g. for `kubectl apply -f -`."""
    import yaml

    from app.kube.webhook_config import webhook_configuration

    reg, ca = _registration(cert_dir, url)
    doc = webhook_configuration(reg, ca)
    if output == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(yaml.safe_dump(doc, sort_keys=False), nl=False)


def _api_client(kubeconfig: str | None) -> Any:
    from app.kube.client import ClusterUnreachable, api_client

    try:
        return api_client(kubeconfig or current_app.config["KUBECONFIG"] or None)
    except ClusterUnreachable as e:
        raise click.ClickException(str(e)) from None


@webhook_group.command("install")
@CERT_DIR_OPTION
@URL_OPTION
@KUBECONFIG_OPTION
def webhook_install(cert_dir: Path | None, url: str | None, kubeconfig: str | None) -> None:
    """Create or update the configuration in the cluster."""
    from app.kube.webhook_config import register_webhook

    reg, ca = _registration(cert_dir, url)
    try:
        outcome = register_webhook(_api_client(kubeconfig), reg, ca)
    except click.ClickException:
        raise
    except Exception as e:
        raise click.ClickException(f"could not register the webhook: {e}") from None
    click.echo(f"MutatingWebhookConfiguration {reg.config_name} {outcome}")


@webhook_group.command("uninstall")
@KUBECONFIG_OPTION
def webhook_uninstall(kubeconfig: str | None) -> None:
    """Delete the configuration from the cluster: pods are then created without rightsizer."""
    from app.kube.webhook_config import unregister_webhook

    name = current_app.config["WEBHOOK_CONFIG_NAME"]
    try:
        deleted = unregister_webhook(_api_client(kubeconfig), name)
    except click.ClickException:
        raise
    except Exception as e:
        raise click.ClickException(f"could not delete the webhook: {e}") from None
    click.echo(f"MutatingWebhookConfiguration {name} {'deleted' if deleted else 'was not there'}")


def main() -> None:
    cli.main(prog_name="rightsizer")


if __name__ == "__main__":
    main()
