"""`rightsizer webhook`: the MutatingWebhookConfiguration that sends pod creations to rightsizer."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import click
import yaml
from flask.cli import AppGroup

from app.cli.cluster import operator_api
from app.kube.webhook_config import (
    WebhookRegistration,
    register_webhook,
    unregister_webhook,
    webhook_configuration,
)
from app.serving.certs import CertPaths
from app.serving.registration import registration
from app.settings import settings


@click.group("webhook", cls=AppGroup)
def webhook_group() -> None:
    """The MutatingWebhookConfiguration that sends pod creations to rightsizer."""


def _registration(cert_dir: Path | None, url: str | None) -> tuple[WebhookRegistration, bytes]:
    config = settings()
    reg = registration(config)
    if url:
        reg = replace(reg, url=url)
    ca = CertPaths(cert_dir or Path(config.certs.directory)).ca
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
    reg, ca = _registration(cert_dir, url)
    doc = webhook_configuration(reg, ca)
    if output == "json":
        click.echo(json.dumps(doc, indent=2))
    else:
        click.echo(yaml.safe_dump(doc, sort_keys=False), nl=False)


@webhook_group.command("install")
@CERT_DIR_OPTION
@URL_OPTION
@KUBECONFIG_OPTION
def webhook_install(cert_dir: Path | None, url: str | None, kubeconfig: str | None) -> None:
    """Create or update the configuration in the cluster."""
    reg, ca = _registration(cert_dir, url)
    try:
        outcome = register_webhook(operator_api(kubeconfig), reg, ca)
    except click.ClickException:
        raise
    except Exception as e:
        raise click.ClickException(f"could not register the webhook: {e}") from None
    click.echo(f"MutatingWebhookConfiguration {reg.config_name} {outcome}")


@webhook_group.command("uninstall")
@KUBECONFIG_OPTION
def webhook_uninstall(kubeconfig: str | None) -> None:
    """Delete the configuration from the cluster: pods are then created without rightsizer."""
    name = settings().webhook.config_name
    try:
        deleted = unregister_webhook(operator_api(kubeconfig), name)
    except click.ClickException:
        raise
    except Exception as e:
        raise click.ClickException(f"could not delete the webhook: {e}") from None
    click.echo(f"MutatingWebhookConfiguration {name} {'deleted' if deleted else 'was not there'}")
