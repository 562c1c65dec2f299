"""What the updater does to pods: evict (honouring PodDisruptionBudgets), resize, and say so.

Every call reports its outcome instead of raising, so one failing pod never stops a run:
`blocked` means the API server refused for now (429: a PodDisruptionBudget, or rate limiting)
and the pod is simply tried again next run; it is never deleted instead. `gone` means the pod no
longer exists; `unsupported` that the pod exists but the API server has no `resize` subresource
(Kubernetes before 1.33 answers 404 for it too, so a 404 is checked against the pod itself);
`refused` that the API server will not do it as asked (400, 403, 422: e.g. a resize that
ValidatePodResize or the PodResizeValidator admission rejects), its message in `last_refusal`;
trying again would get the same answer. `unanswered` that the request went out but its answer
was lost (the connection broke or timed out while it was read): the API server may have done it,
so the updater counts it against the disruption budget as if done, and the next run sees from
the cache what happened (in CI an eviction whose answer was unreadable, counted as failed, let
the updater evict a second pod of an owner allowed one). `failed` is anything else (5xx, 409
Conflict, a connection that could not be made or a request that could not be written).

What is sent is built in app.core.bodies (ResizeBody, EvictionBody); the pod read back is a
frozen view (app.core.pods.PodView), so nothing above this module reads pod JSON.

An eviction, sent by the thousand in one run, skips the typed method's argument validation and
models, and the generic per-call work of `ApiClient.call_api` / `RESTClientObject.request`
(content-type regexes, a urllib3 Timeout built per call, form-field encoding): its JSON body goes
to the connection pool of the urllib3 pool manager the official client configured (its TLS
settings and certificates; through its proxy when it has one), after the client's own rate
limiter, with its default timeout, its default headers and its BearerToken auth hook, and only
the status is read, with the API server's Status message on an error (issue 22: the typed call
was 0.6-0.9 ms of CPU each, `call_api` 0.30-0.40 ms). `send_eviction` sends one and reads its
answer later (app.kube.posts), so that the updater keeps a few in flight without threads.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from http.client import HTTPException
from typing import Any, Literal
from urllib.parse import quote

from kubernetes import client
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError, ProtocolError, ReadTimeoutError

from app.core.bodies import EvictionBody, ResizeBody
from app.core.pods import PodView
from app.kube.events import event_body, object_reference
from app.kube.posts import SentPost, send_post
from app.kube.responses import finish
from app.kube.version import read_minor

log = logging.getLogger(__name__)
Outcome = Literal["done", "blocked", "gone", "unsupported", "refused", "unanswered", "failed"]
# The Event reason of an eviction or resize whose answer was lost (a Warning on the pod).
ANSWER_LOST = "RightsizerAnswerLost"
MAY_BE_DONE = "the API server's answer was lost: it may have been done"

# An eviction is the client's CoreV1Api.create_namespaced_pod_eviction (tools/rbac.py grants
# `pods/eviction create` from this reference), sent to its path as that method sends it.
EVICTION = client.CoreV1Api.create_namespaced_pod_eviction
EVICTION_PATH = "/api/v1/namespaces/{namespace}/pods/{name}/eviction"


class SentEviction:
    """An eviction on the wire (PodActions.send_eviction); `outcome()` reads its answer once."""

    def __init__(
        self, actions: PodActions, what: str, sent: SentPost | None, outcome: Outcome = "failed"
    ) -> None:
        self.actions, self.what, self.sent, self._outcome = actions, what, sent, outcome

    def outcome(self) -> Outcome:
        sent, self.sent = self.sent, None
        if sent is None:
            return self._outcome
        try:
            status, reason, data = sent.answer()
        except (HTTPError, HTTPException, OSError) as e:
            return _unanswered(self.what, e)
        if 200 <= status <= 299:
            return "done"
        return self.actions._refused(self.what, status, _status_message(data, reason))

    def abandon(self) -> None:
        """Its answer is not read: the connection is closed (a run interrupted)."""
        sent, self.sent = self.sent, None
        if sent is not None:
            sent.abandon()


class PodActions:
    def __init__(self, api: client.ApiClient, dry_run: bool = False) -> None:
        self.api = api
        self.core: Any = client.CoreV1Api(api)
        self.version_api: Any = client.VersionApi(api)
        self.dry_run = dry_run
        self.last_refusal = ""  # the API server's message for the last `refused` outcome
        self._minor: int | None = None

    def _call(self, what: str, fn: Any, *args: Any, **kwargs: Any) -> Outcome:
        if self.dry_run:
            kwargs["dry_run"] = "All"
        try:
            # The answer is not read into the client's models (nothing here uses it, and that
            # deserialisation was a third of an eviction's cost); errors still raise ApiException.
            finish(fn(*args, _preload_content=False, **kwargs))
            return "done"
        except ApiException as e:
            return self._refused(what, e.status, _message(e))
        except (ReadTimeoutError, ProtocolError) as e:  # sent; urllib3 retries no PATCH or POST
            return _unanswered(what, e)
        except (HTTPError, OSError) as e:
            log.warning("%s failed: %s", what, e)
            return "failed"

    def _refused(self, what: str, status: int, message: str) -> Outcome:
        """The outcome of an answer outside 2xx, from its status and the Status message."""
        if status == 429:
            log.info("%s refused for now (429): %s", what, message)
            return "blocked"
        if status == 404:
            return "gone"
        if status == 409 and "Precondition failed" in message:
            log.info("%s: %s", what, message)
            return "gone"  # another object has that name now
        if status in (400, 403, 422):
            self.last_refusal = f"HTTP {status}: {message}"
            log.warning("%s refused: %s", what, self.last_refusal)
            return "refused"
        log.warning("%s failed: HTTP %s %s", what, status, message)
        return "failed"

    def current(self, namespace: str, name: str) -> PodView | None:
        """The pod as the API server has it now (one GET), or None if it is gone or unreadable."""
        try:
            resp = self.core.read_namespaced_pod(name, namespace, _preload_content=False)
            doc = json.loads(resp.data)
            return PodView.parse(doc) if isinstance(doc, dict) else None
        except ApiException as e:
            if e.status != 404:
                log.warning("cannot read pod %s/%s: HTTP %s", namespace, name, e.status)
            return None
        except (HTTPError, OSError, ValueError) as e:
            log.warning("cannot read pod %s/%s: %s", namespace, name, e)
            return None

    def evict(self, body: EvictionBody) -> Outcome:
        """With the body's uid, only that pod: one that took its name since (a StatefulSet's
        replacement) is left alone (409 Precondition failed, reported as `gone`). Sent to the
        client's own connection pool (app.kube.posts, see the module docstring) and answered
        before it returns; outcomes as `_call`'s."""
        return self.send_eviction(body).outcome()

    def send_eviction(self, body: EvictionBody) -> SentEviction:
        """The eviction `evict` sends, its answer read later by `outcome()` (app.kube.posts: a
        few sent before their answers are read keep the API server busy without a thread)."""
        what = f"eviction of {body.namespace}/{body.name}"
        path = EVICTION_PATH.format(
            namespace=quote(body.namespace, safe=""), name=quote(body.name, safe="")
        )
        try:
            return SentEviction(self, what, send_post(self.api, path, self.dry_run, body.to_dict()))
        except ApiException as e:  # the REST layer's own (an SSL error is status 0)
            return SentEviction(self, what, None, self._refused(what, e.status, _message(e)))
        except (HTTPError, HTTPException, OSError) as e:
            log.warning("%s failed: %s", what, e)
            return SentEviction(self, what, None, "failed")

    def server_minor(self) -> int | None:
        """The API server's Kubernetes minor version (GET /version, asked once), None if unknown."""
        if self._minor is None:
            self._minor = read_minor(self.version_api)
        return self._minor

    def resize(self, namespace: str, name: str, body: ResizeBody) -> Outcome:
        """A 404 is `gone` only when the pod is gone too; a pod that is still there means the
        `resize` subresource is missing (a cluster older than 1.33): `unsupported`."""
        outcome = self._call(
            f"resize of {namespace}/{name}",
            self.core.patch_namespaced_pod_resize,
            name,
            namespace,
            body.to_dict(),
        )
        if outcome != "gone":
            return outcome
        try:
            # read to its end: the eviction that follows may be sent on this connection
            finish(self.core.read_namespaced_pod(name, namespace, _preload_content=False))
        except ApiException as e:
            if e.status == 404:
                return "gone"
            log.warning("cannot read pod %s/%s after a 404 resize: %s", namespace, name, e.status)
            return "failed"
        except (HTTPError, OSError) as e:
            log.warning("cannot read pod %s/%s after a 404 resize: %s", namespace, name, e)
            return "failed"
        log.info("resize of %s/%s: no resize subresource (Kubernetes < 1.33)", namespace, name)
        return "unsupported"

    def annotate(self, namespace: str, name: str, key: str, value: str | None) -> Outcome:
        """Sets one annotation of the pod (None removes it), by a strategic merge patch."""
        return self._call(
            f"annotation {key} of {namespace}/{name}",
            self.core.patch_namespaced_pod,
            name,
            namespace,
            {"metadata": {"annotations": {key: value}}},
        )

    def record_event(self, pod: PodView, reason: str, message: str, type_: str = "Normal") -> None:
        """A core/v1 Event on the pod, so `kubectl describe pod` says what rightsizer did: its
        involvedObject carries the pod's uid and resourceVersion, as kube's recorder writes."""
        if self.dry_run:
            return
        meta = {
            "name": pod.name,
            "namespace": pod.namespace,
            "uid": pod.uid,
            "resourceVersion": pod.resource_version,
        }
        self.record_object_event("v1", "Pod", meta, reason, message, type_)

    def record_object_event(
        self,
        api_version: str,
        kind: str,
        meta: Mapping[str, Any],
        reason: str,
        message: str,
        type_: str = "Normal",
    ) -> None:
        """A core/v1 Event on any object of the namespace whose `metadata` is `meta` (a
        workload, so `kubectl describe deployment` says why rightsizer left it alone)."""
        if self.dry_run:
            return
        ref = object_reference(api_version, kind, meta)
        self._call(
            f"event {reason} on {ref['namespace']}/{ref['name']}",
            self.core.create_namespaced_event,
            ref["namespace"],
            event_body(ref, reason, message, type_),
        )


def _unanswered(what: str, error: Exception) -> Outcome:
    """The request went out, its answer was lost: the API server may have done it."""
    log.warning("%s: its answer was lost (%s); it may have been done", what, error)
    return "unanswered"


def _status_message(data: bytes, reason: str) -> str:
    """The message of the API server's Status answer, or the HTTP reason without one."""
    try:
        doc = json.loads(data or b"{}")
    except ValueError:
        return reason
    return str((doc.get("message") if isinstance(doc, dict) else None) or reason)


def _message(e: ApiException) -> str:
    try:
        return str(json.loads(e.body or "{}").get("message") or e.reason)
    except ValueError:
        return str(e.reason)
