"""Connection to the cluster: in-cluster config, or a kubeconfig (RIGHTSIZER_KUBECONFIG first)."""

from __future__ import annotations

import logging
import os
from typing import Any

from kubernetes import client, config

log = logging.getLogger(__name__)


class ClusterUnreachable(RuntimeError):
    pass


def api_client(kubeconfig: str | None = None, context: str | None = None) -> client.ApiClient:
    """The kubeconfig if given, else in-cluster config in a pod, else $KUBECONFIG or ~/.kube."""
    try:
        if kubeconfig:
            return config.new_client_from_config(config_file=kubeconfig, context=context)
        if os.environ.get("KUBERNETES_SERVICE_HOST"):
            cfg = client.Configuration()
            config.load_incluster_config(client_configuration=cfg)
            return client.ApiClient(cfg)
        return config.new_client_from_config(context=context)
    except (config.ConfigException, OSError) as e:
        where = kubeconfig or "in-cluster config or ~/.kube/config"
        raise ClusterUnreachable(f"no usable Kubernetes configuration ({where}): {e}") from None


def ensure_namespace(api: client.ApiClient, name: str) -> bool:  # rbac: cli-only
    """Creates the namespace if missing (what an installer does). True if it was created."""
    core: Any = client.CoreV1Api(api)  # Any: the stubs want a model; plain JSON works as well
    try:
        core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return True
    except client.exceptions.ApiException as e:
        if e.status == 409:
            return False
        raise
