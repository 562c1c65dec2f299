"""The MutatingWebhookConfiguration that sends pod creations to rightsizer, kept up to date.

Built as plain JSON (what `kubectl get -o json` shows), so `rightsizer webhook print` needs no
cluster, and sent through `AdmissionregistrationV1Api`. Registration is create-or-update and safe
to run from every replica at once: a lost race (409) is retried against the winner's object, and
an object that already says what we want is not written again.

Choices, all for "never break pod creation": `failurePolicy: Ignore` (a pod is created unsized
when rightsizer is down), `sideEffects: None` (so dry-run requests are sent too),
`reinvocationPolicy: IfNeeded` (other webhooks may add containers after us; our patch is
idempotent), and a namespaceSelector that keeps kube-system and rightsizer's own namespace out,
so rightsizer's own pods can always start.
"""

from __future__ import annotations

import base64
import copy
import json
import logging
from dataclasses import dataclass
from typing import Any

from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.core.scope import ALWAYS_EXCLUDED

log = logging.getLogger(__name__)

WEBHOOK_NAME = "pods.rightsizer.io"  # kube-apiserver wants a name of three or more DNS labels
NAMESPACE_LABEL = "kubernetes.io/metadata.name"  # set on every namespace since Kubernetes 1.21


@dataclass(frozen=True)
class WebhookRegistration:
    config_name: str = "rightsizer"
    service: str = "rightsizer"
    namespace: str = "rightsizer"  # rightsizer's own, where its Service lives
    port: int = 443
    path: str = "/mutate"
    url: str = ""  # when set, kube-apiserver calls this URL instead of the Service
    timeout_seconds: int = 5
    excluded_namespaces: tuple[str, ...] = ()

    def excluded(self) -> list[str]:
        return sorted({*ALWAYS_EXCLUDED, self.namespace, *self.excluded_namespaces})


def webhook_configuration(reg: WebhookRegistration, ca_bundle: bytes) -> dict[str, Any]:
    """The object as JSON; `ca_bundle` is the PEM of the CA that signed the serving cert."""
    client_config: dict[str, Any]
    if reg.url:
        client_config = {"url": reg.url}
    else:
        client_config = {
            "service": {
                "name": reg.service,
                "namespace": reg.namespace,
                "path": reg.path,
                "port": reg.port,
            }
        }
    client_config["caBundle"] = base64.b64encode(ca_bundle).decode("ascii")
    return {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "MutatingWebhookConfiguration",
        "metadata": {
            "name": reg.config_name,
            "labels": {"app.kubernetes.io/managed-by": "rightsizer"},
        },
        "webhooks": [
            {
                "name": WEBHOOK_NAME,
                "clientConfig": client_config,
                "rules": [
                    {
                        "operations": ["CREATE"],
                        "apiGroups": [""],
                        "apiVersions": ["v1"],
                        "resources": ["pods"],
                        "scope": "Namespaced",
                    }
                ],
                "admissionReviewVersions": ["v1"],
                "sideEffects": "None",
                "failurePolicy": "Ignore",
                "matchPolicy": "Equivalent",
                "timeoutSeconds": reg.timeout_seconds,
                "reinvocationPolicy": "IfNeeded",
                "namespaceSelector": {
                    "matchExpressions": [
                        {"key": NAMESPACE_LABEL, "operator": "NotIn", "values": reg.excluded()}
                    ]
                },
            }
        ],
    }


def _covers(current: Any, wanted: Any) -> bool:
    """`current` says at least what `wanted` says (the server adds defaults of its own)."""
    if isinstance(wanted, dict):
        return isinstance(current, dict) and all(
            _covers(current.get(k), v) for k, v in wanted.items()
        )
    if isinstance(wanted, list):
        return (
            isinstance(current, list)
            and len(current) == len(wanted)
            and all(_covers(c, w) for c, w in zip(current, wanted, strict=True))
        )
    return bool(current == wanted)


def _read(api: Any, name: str) -> dict[str, Any] | None:
    try:
        resp = api.read_mutating_webhook_configuration(name, _preload_content=False)
    except ApiException as e:
        if e.status == 404:
            return None
        raise
    doc: dict[str, Any] = json.loads(resp.data)
    return doc


def register_webhook(
    api_client: client.ApiClient, reg: WebhookRegistration, ca_bundle: bytes, attempts: int = 3
) -> str:
    """Creates or updates the configuration; returns "created", "updated" or "unchanged"."""
    # Any: the client's stubs want model objects; it takes plain JSON just as well.
    api: Any = client.AdmissionregistrationV1Api(api_client)
    wanted = webhook_configuration(reg, ca_bundle)
    for _ in range(attempts):
        current = _read(api, reg.config_name)
        try:
            if current is None:
                api.create_mutating_webhook_configuration(wanted)
                log.info("created MutatingWebhookConfiguration %s", reg.config_name)
                return "created"
            if _covers(current, {"metadata": wanted["metadata"], "webhooks": wanted["webhooks"]}):
                return "unchanged"
            body = copy.deepcopy(wanted)
            body["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            api.replace_mutating_webhook_configuration(reg.config_name, body)
            log.info("updated MutatingWebhookConfiguration %s", reg.config_name)
            return "updated"
        except ApiException as e:
            if e.status != 409:  # 409: another replica wrote it meanwhile; look again
                raise
    raise RuntimeError(
        f"MutatingWebhookConfiguration {reg.config_name} kept changing under us "
        f"({attempts} attempts)"
    )


def unregister_webhook(api_client: client.ApiClient, config_name: str) -> bool:  # rbac: cli-only
    """Deletes the configuration; False when there was none."""
    api = client.AdmissionregistrationV1Api(api_client)
    try:
        api.delete_mutating_webhook_configuration(config_name)
    except ApiException as e:
        if e.status == 404:
            return False
        raise
    log.info("deleted MutatingWebhookConfiguration %s", config_name)
    return True


def is_registered(api_client: client.ApiClient, config_name: str) -> bool:
    """The configuration exists with a CA bundle: pods created now would reach the webhook.

    Any error reading it counts as not registered: the updater must not evict on a maybe.
    """
    api: Any = client.AdmissionregistrationV1Api(api_client)
    try:
        current = _read(api, config_name)
    except Exception as e:
        log.warning("cannot read MutatingWebhookConfiguration %s: %s", config_name, e)
        return False
    hooks = (current or {}).get("webhooks") or []
    return bool(hooks) and all((h.get("clientConfig") or {}).get("caBundle") for h in hooks)
