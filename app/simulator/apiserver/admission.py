"""Mutating admission for pod CREATE, called the way kube-apiserver calls webhooks.

Each matching webhook of every MutatingWebhookConfiguration (configurations by name, webhooks
in order) gets an AdmissionReview over HTTPS, verified against its `caBundle` for the service's
DNS name `<name>.<namespace>.svc`. The simulator has no cluster DNS, so a service is reached at a
local host:port from `service_urls` ("namespace/name" or "namespace/name:port" -> "host:port"),
while TLS still checks the certificate against the service name, as a real cluster would.
"""

from __future__ import annotations

import base64
import binascii
import copy
import http.client
import json
import logging
import socket
import ssl
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import jsonpatch
import jsonpointer

from app.simulator.apiserver import fieldvalidation as fv
from app.simulator.apiserver import podutil, schema, selectors
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.jsonnumbers import Literal

log = logging.getLogger(__name__)
POD_DEFINITION = "io.k8s.api.core.v1.Pod"

ADMIN_USER = {"username": "kubernetes-admin", "groups": ["system:masters", "system:authenticated"]}


def controller_user(controller: str) -> dict[str, Any]:
    return {
        "username": f"system:serviceaccount:kube-system:{controller}",
        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, controller)),
        "groups": [
            "system:serviceaccounts",
            "system:serviceaccounts:kube-system",
            "system:authenticated",
        ],
    }


class WebhookCallError(Exception):
    """Calling the webhook failed: its failurePolicy decides whether that rejects the pod."""


@dataclass(frozen=True, slots=True)
class Endpoint:
    host: str
    port: int
    server_name: str  # what the certificate must be valid for
    path: str


def resolve(client_config: Mapping[str, Any], service_urls: Mapping[str, str]) -> Endpoint:
    if "url" in client_config:
        u = urlsplit(client_config["url"])
        if u.scheme != "https" or not u.hostname:
            raise WebhookCallError(f"webhook URL must be https: {client_config['url']}")
        path = u.path or "/"
        return Endpoint(
            u.hostname, u.port or 443, u.hostname, path + (f"?{u.query}" if u.query else "")
        )
    svc = client_config["service"]
    ns, name, port = svc["namespace"], svc["name"], int(svc.get("port", 443))
    target = service_urls.get(f"{ns}/{name}:{port}") or service_urls.get(f"{ns}/{name}")
    if target is None:
        raise WebhookCallError(
            f'service "{name}" not found (no simulator mapping for '
            f'"{ns}/{name}"; set it with --webhook-service)'
        )
    host, _, tport = target.rpartition(":")
    return Endpoint(host.strip("[]"), int(tport), f"{name}.{ns}.svc", svc.get("path") or "/")


class _VerifiedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to a local address but checks the certificate against another name (SNI too)."""

    def __init__(self, endpoint: Endpoint, context: ssl.SSLContext, timeout: float) -> None:
        super().__init__(endpoint.host, endpoint.port, timeout=timeout, context=context)
        self._server_name = endpoint.server_name
        self._ctx = context

    def connect(self) -> None:
        sock = socket.create_connection((self.host, self.port), self.timeout)
        self.sock = self._ctx.wrap_socket(sock, server_hostname=self._server_name)


def _ssl_context(ca_bundle: str | None) -> ssl.SSLContext:
    if not ca_bundle:
        return ssl.create_default_context()
    try:
        pem = base64.b64decode(ca_bundle, validate=True).decode()
        return ssl.create_default_context(cadata=pem)
    except (binascii.Error, UnicodeDecodeError, ssl.SSLError) as e:
        raise WebhookCallError(f"invalid caBundle: {e}") from None


def call_webhook(
    hook: Mapping[str, Any], review: dict[str, Any], service_urls: Mapping[str, str]
) -> dict[str, Any]:
    """POST the AdmissionReview and return its validated `response`."""
    timeout = float(hook.get("timeoutSeconds", 10))
    endpoint = resolve(hook.get("clientConfig") or {}, service_urls)
    ctx = _ssl_context((hook.get("clientConfig") or {}).get("caBundle"))
    sep = "&" if "?" in endpoint.path else "?"
    body = json.dumps(review).encode()
    deadline = time.monotonic() + timeout
    conn = _VerifiedHTTPSConnection(endpoint, ctx, timeout)
    try:
        conn.request(
            "POST",
            f"{endpoint.path}{sep}timeout={int(timeout)}s",
            body,
            {"Content-Type": "application/json", "Accept": "application/json"},
        )
        resp = conn.getresponse()
        data = resp.read()
    except TimeoutError:
        raise WebhookCallError("context deadline exceeded") from None
    except (OSError, http.client.HTTPException) as e:
        raise WebhookCallError(str(e) or type(e).__name__) from None
    finally:
        conn.close()
    if time.monotonic() > deadline:
        raise WebhookCallError("context deadline exceeded")
    if resp.status != 200:
        raise WebhookCallError(f"expected response status 200, got {resp.status}")
    try:
        out = json.loads(data)
    except ValueError as e:
        raise WebhookCallError(f"received invalid webhook response: {e}") from None
    response = out.get("response") if isinstance(out, dict) else None
    if not isinstance(response, dict):
        raise WebhookCallError("webhook response was absent")
    if out.get("apiVersion") != review["apiVersion"] or out.get("kind") != "AdmissionReview":
        raise WebhookCallError(
            f"expected webhook response of admission.k8s.io/v1, "
            f"Kind=AdmissionReview, got {out.get('apiVersion')}, "
            f"Kind={out.get('kind')}"
        )
    if response.get("uid") != review["request"]["uid"]:
        raise WebhookCallError(
            f"expected response.uid={review['request']['uid']!r}, got {response.get('uid')!r}"
        )
    return response


def _rule_matches(rule: Mapping[str, Any]) -> bool:
    def has(field: str, value: str) -> bool:
        vals = rule.get(field) or []
        return "*" in vals or value in vals

    return (
        has("operations", "CREATE")
        and has("apiGroups", "")
        and has("apiVersions", "v1")
        and (
            "pods" in (rule.get("resources") or [])
            or "*" in (rule.get("resources") or [])
            or "*/*" in (rule.get("resources") or [])
        )
        and rule.get("scope", "*") in ("*", "Namespaced")
    )


def hook_matches(
    hook: Mapping[str, Any], ns_labels: Mapping[str, str], pod_labels: Mapping[str, str]
) -> bool:
    if not any(_rule_matches(r) for r in hook.get("rules") or []):
        return False
    ns_sel = selectors.from_label_selector_object(hook.get("namespaceSelector") or {})
    obj_sel = selectors.from_label_selector_object(hook.get("objectSelector") or {})
    return selectors.matches(ns_sel, ns_labels) and selectors.matches(obj_sel, pod_labels)


def _review(
    hook: Mapping[str, Any], pod: dict[str, Any], namespace: str, user: Mapping[str, Any]
) -> dict[str, Any]:
    versions = hook.get("admissionReviewVersions") or ["v1"]
    version = "v1" if "v1" in versions else "v1beta1"
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    gvr = {"group": "", "version": "v1", "resource": "pods"}
    return {
        "apiVersion": f"admission.k8s.io/{version}",
        "kind": "AdmissionReview",
        "request": {
            "uid": str(uuid.uuid4()),
            "kind": gvk,
            "resource": gvr,
            "requestKind": gvk,
            "requestResource": gvr,
            "name": pod["metadata"].get("name", ""),
            "namespace": namespace,
            "operation": "CREATE",
            "userInfo": dict(user),
            "object": pod,
            "oldObject": None,
            "dryRun": False,
            "options": {"apiVersion": "meta.k8s.io/v1", "kind": "CreateOptions"},
        },
    }


def _apply(response: Mapping[str, Any], pod: dict[str, Any], minor: int) -> dict[str, Any]:
    patch_b64 = response.get("patch")
    if not patch_b64:
        return pod
    if response.get("patchType") != "JSONPatch":
        raise WebhookCallError(f"unsupported patch type {response.get('patchType')!r}")
    try:
        ops = json.loads(base64.b64decode(patch_b64, validate=True), parse_float=Literal)
        patched = jsonpatch.JsonPatch(ops).apply(pod)
    except (
        binascii.Error,
        ValueError,
        jsonpatch.JsonPatchException,
        jsonpointer.JsonPointerException,
    ) as e:
        raise WebhookCallError(f"failed to apply JSON patch: {e}") from None
    # The patched object is decoded and defaulted again (the mutating dispatcher's
    # GetObjectDefaulter().Default, apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go).
    if not isinstance(patched, dict):
        raise WebhookCallError("the patched object is not a JSON object")
    # Decoding into the Pod struct writes its quantities as stored (a patch's `cpu: 0.5` is
    # "500m", fieldvalidation.check) and drops the fields the struct has no place for.
    decoded: dict[str, Any] = fv.check(schema.definitions(minor), POD_DEFINITION, patched)[0]
    podutil.default_resource_requests(decoded)
    return decoded


def _denied(name: str, response: Mapping[str, Any]) -> ApiError:
    result = response.get("status") or {}
    code = result.get("code") or 400
    message = result.get("message") or ""
    text = f'admission webhook "{name}" denied the request'
    return ApiError(
        code,
        f"{text}: {message}" if message else f"{text} without explanation",
        result.get("reason") or None,
    )


def admit_pod(
    configs: list[dict[str, Any]],
    pod: dict[str, Any],
    namespace: str,
    ns_labels: Mapping[str, str],
    user: Mapping[str, Any],
    service_urls: Mapping[str, str],
    *,
    minor: int,
) -> dict[str, Any]:
    """Run every matching mutating webhook on a new pod; the mutated pod, or an ApiError. The
    patched pod is decoded with the schemas of release 1.`minor`."""
    hooks = [
        h
        for cfg in sorted(configs, key=lambda c: c["metadata"]["name"])
        for h in cfg.get("webhooks") or []
    ]
    pod = copy.deepcopy(pod)
    invoked_at: dict[str, int] = {}  # webhook name -> mutation count when it last ran
    mutations = 0

    def run(hook: Mapping[str, Any]) -> None:
        nonlocal pod, mutations
        if not hook_matches(hook, ns_labels, pod["metadata"].get("labels") or {}):
            return
        name = hook["name"]
        try:
            response = call_webhook(hook, _review(hook, pod, namespace, user), service_urls)
            if not response.get("allowed"):
                raise _denied(name, response)
            patched = _apply(response, pod, minor)
        except WebhookCallError as e:
            if hook.get("failurePolicy", "Fail") == "Ignore":
                log.warning("failed calling webhook %r, failing open: %s", name, e)
                return
            raise ApiError(
                500,
                f'Internal error occurred: failed calling webhook "{name}": {e}',
                "InternalError",
            ) from None
        invoked_at[name] = mutations
        if patched != pod:
            pod = patched
            mutations += 1
            invoked_at[name] = mutations

    for hook in hooks:
        run(hook)
    # reinvocationPolicy IfNeeded: once more if a later webhook changed the pod after it ran.
    if mutations:
        for hook in hooks:
            if (
                hook.get("reinvocationPolicy") == "IfNeeded"
                and invoked_at.get(hook["name"], mutations) < mutations
            ):
                run(hook)
    return pod
