"""Is the webhook serving? Asked the way kube-apiserver would reach it, before the updater evicts.

A configuration that exists is not enough: if no rightsizer answers behind its Service, an evicted
pod comes back with its old requests (failurePolicy Ignore). So each webhook of the configuration
is probed with `GET /readyz` over TLS verified against the configuration's own caBundle, for the
name kube-apiserver verifies (`<service>.<namespace>.svc`, or the host of `clientConfig.url`).

`probe_address` (RIGHTSIZER_WEBHOOK_PROBE_ADDRESS, `host:port`) only changes where the connection
goes, for places where the Service name does not resolve (the simulated cluster, a laptop);
the certificate is still verified for the Service's name.
"""

from __future__ import annotations

import base64
import http.client
import logging
import socket
import ssl
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

from kubernetes import client

from app.kube.webhook_config import _read

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Target:
    server_name: str  # the name the certificate must carry
    host: str
    port: int
    ca_pem: bytes


def targets(configuration: dict[str, Any], probe_address: str = "") -> list[Target]:
    """Where each webhook of a configuration is reached. Raises ValueError when one cannot be."""
    out = []
    for hook in configuration.get("webhooks") or []:
        cc = hook.get("clientConfig") or {}
        ca = base64.b64decode(cc.get("caBundle") or "")
        if not ca:
            raise ValueError(f"webhook {hook.get('name')!r} has no caBundle")
        if cc.get("url"):
            url = urlsplit(cc["url"])
            name, port = url.hostname or "", url.port or 443
        elif cc.get("service"):
            svc = cc["service"]
            name, port = (
                f"{svc.get('name')}.{svc.get('namespace')}.svc",
                int(svc.get("port") or 443),
            )
        else:
            raise ValueError(f"webhook {hook.get('name')!r} has neither url nor service")
        host = name
        if probe_address:
            host, _, p = probe_address.rpartition(":")
            port = int(p)
        out.append(Target(name, host, port, ca))
    if not out:
        raise ValueError("the configuration has no webhooks")
    return out


def answers(target: Target, timeout: float) -> bool:
    """GET /readyz over TLS verified for target.server_name; True on HTTP 200."""
    ctx = ssl.create_default_context(cadata=target.ca_pem.decode())
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    raw = socket.create_connection((target.host, target.port), timeout=timeout)
    try:
        tls = ctx.wrap_socket(raw, server_hostname=target.server_name)
    except BaseException:
        raw.close()
        raise
    conn = http.client.HTTPConnection(target.server_name, target.port, timeout=timeout)
    conn.sock = tls  # already connected and verified: http.client only speaks HTTP over it
    try:
        conn.request("GET", "/readyz")
        return conn.getresponse().status == 200
    finally:
        conn.close()


def webhook_serving(
    api_client: client.ApiClient, config_name: str, probe_address: str = "", timeout: float = 3
) -> bool:
    """Registered with a caBundle, and every webhook in it answers. Any doubt counts as no: the
    updater must not evict on a maybe."""
    api: Any = client.AdmissionregistrationV1Api(api_client)
    try:
        configuration = _read(api, config_name)
        if configuration is None:
            log.warning("MutatingWebhookConfiguration %s not found", config_name)
            return False
        for t in targets(configuration, probe_address):
            if not answers(t, timeout):
                log.warning("webhook at %s:%d (%s) is not ready", t.host, t.port, t.server_name)
                return False
    except (OSError, ValueError, ssl.SSLError, http.client.HTTPException) as e:
        log.warning("webhook %s is not serving: %s", config_name, e)
        return False
    except Exception as e:  # the API server's errors: same answer, never evict on a maybe
        log.warning("cannot read MutatingWebhookConfiguration %s: %s", config_name, e)
        return False
    return True
