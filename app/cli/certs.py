"""`rightsizer certs`: the webhook's TLS material, in a directory or a Secret."""

from __future__ import annotations

from pathlib import Path

import click
from flask.cli import AppGroup

from app.cli.cluster import operator_api
from app.kube.secrets import SecretStore
from app.serving.certs import DirectoryStore, ensure, ensure_in, service_names
from app.settings import settings


@click.group("certs", cls=AppGroup)
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
    config = settings()
    directory = directory or Path(config.certs.directory)
    namespace = namespace or config.cluster.namespace
    names = service_names(service or config.webhook.service, namespace)
    names += [n for n in extra_names if n not in names]
    secret = secret or config.certs.secret
    try:
        if secret:
            store = SecretStore(operator_api(kubeconfig), namespace, secret)
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
