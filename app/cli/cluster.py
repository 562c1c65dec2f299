"""The operator's own API client for the commands that talk to a cluster."""

from __future__ import annotations

from typing import Any

import click

from app.kube.client import ClusterUnreachable, api_client
from app.settings import settings


def operator_api(kubeconfig: str | None) -> Any:
    """The client for `kubeconfig`, else RIGHTSIZER_KUBECONFIG, else in-cluster or ~/.kube."""
    try:
        return api_client(kubeconfig or settings().cluster.kubeconfig or None)
    except ClusterUnreachable as e:
        raise click.ClickException(str(e)) from None
