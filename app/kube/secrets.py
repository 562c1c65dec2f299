"""The webhook's TLS material in a Kubernetes Secret (type kubernetes.io/tls, plus ca.crt/ca.key).

Every replica shares one Secret, so they all serve certificates of the same CA, the one in the
MutatingWebhookConfiguration's caBundle. Writes carry the resourceVersion that was read: when two
replicas renew at once, one wins and the other gets 409 Conflict, reads the winner's Secret and
uses it (`SecretStore.save` returns False).
"""

from __future__ import annotations

import base64
import json
import logging
from collections.abc import Mapping
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.responses import finish

log = logging.getLogger(__name__)


class SecretStore:
    """`load()` -> the Secret's files (empty when it does not exist); `save(files)` -> written?"""

    def __init__(self, api: client.ApiClient, namespace: str, name: str) -> None:
        self.core: Any = client.CoreV1Api(api)  # Any: plain JSON bodies instead of models
        self.namespace, self.name = namespace, name
        self._resource_version: str | None = None  # of what load() read; None: did not exist

    def __str__(self) -> str:
        return f"Secret {self.namespace}/{self.name}"

    def load(self) -> dict[str, bytes]:
        try:
            resp = self.core.read_namespaced_secret(
                self.name, self.namespace, _preload_content=False
            )
        except ApiException as e:
            if e.status == 404:
                self._resource_version = None
                return {}
            raise
        doc = json.loads(resp.data)
        self._resource_version = (doc.get("metadata") or {}).get("resourceVersion")
        data = doc.get("data") or {}
        return {k: base64.b64decode(v) for k, v in data.items() if isinstance(v, str)}

    def save(self, files: Mapping[str, bytes]) -> bool:
        """Creates or replaces the Secret with `files`; False when someone else wrote it since
        `load()` (409 Conflict or 409 AlreadyExists): load again."""
        body: dict[str, Any] = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": "kubernetes.io/tls",
            "metadata": {
                "name": self.name,
                "namespace": self.namespace,
                "labels": {"app.kubernetes.io/managed-by": "rightsizer"},
            },
            "data": {k: base64.b64encode(v).decode("ascii") for k, v in sorted(files.items())},
        }
        try:
            if self._resource_version is None:
                finish(
                    self.core.create_namespaced_secret(self.namespace, body, _preload_content=False)
                )
            else:
                body["metadata"]["resourceVersion"] = self._resource_version
                finish(
                    self.core.replace_namespaced_secret(
                        self.name, self.namespace, body, _preload_content=False
                    )
                )
        except ApiException as e:
            if e.status == 409:
                log.info("%s changed meanwhile (another replica?): reading it again", self)
                return False
            raise
        return True
