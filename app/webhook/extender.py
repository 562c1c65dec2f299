"""The scheduler extender: POST /scheduler/filter and /scheduler/prioritize (docs/placement.md).

kube-scheduler's extender protocol (k8s.io/kube-scheduler/extender/v1, types.go): the body is an
ExtenderArgs, `{"Pod": {...}, "Nodes": {"items": [...]}, "NodeNames": [...]}`: with
`nodeCacheCapable: true` only NodeNames, else only Nodes. Those Go structs carry no json tags, so
kube-scheduler writes the field names as they are spelt and reads answers whatever their case
(encoding/json matches names case-insensitively); the keys are read here the same way. `filter`
answers an ExtenderFilterResult (`NodeNames` or `Nodes`, whichever was sent, `FailedNodes`,
`FailedAndUnresolvableNodes`, `Error`), `prioritize` a HostPriorityList `[{"Host", "Score"}]`,
scores 0..MaxExtenderPriority (10).

The extender never fails a scheduling decision through its own fault: a body it cannot read,
levels not loaded yet, any error, all answer neutrally: every node passes the filter, every node
scores 0. Nodes it has no levels for pass and score as the emptiest node it has levels for
(app.core.placement.table). Only the filter threshold ever removes a
node (FailedNodes: preemption may free it).

It is served by WSGI middleware ahead of Flask, as /mutate is (app.webhook.route): every pod a
second scheduler places waits for it. The pod's predicted usage comes from the webhook's snapshot
(its workload's recommendations: app.core.placement.pod_level), the nodes' levels from this
process's LevelsCache.
"""

from __future__ import annotations

import logging
import operator
import os
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from itertools import compress
from typing import TYPE_CHECKING, Any

import orjson
from prometheus_client import Histogram
from werkzeug.wsgi import get_content_length, get_input_stream

from app.core.owners import workload_of_pod
from app.core.placement.hotspots import HotSpots
from app.core.placement.pod_level import pod_level
from app.core.placement.table import MAX_PRIORITY, LevelTable
from app.core.sizing.node_fit import Amounts
from app.web.probes import RequestObserver
from app.webhook.handler import Webhook
from app.webhook.levels import LevelsCache

if TYPE_CHECKING:
    from _typeshed.wsgi import StartResponse, WSGIApplication, WSGIEnvironment

log = logging.getLogger(__name__)

PREFIX = "/scheduler/"
VERBS = ("filter", "prioritize")
MAX_BODY_BYTES = 64 * 1024 * 1024  # 5,000 full Node objects (nodeCacheCapable: false) fit
TOO_FULL = "rightsizer: the node's predicted level passes the filter threshold"
HEADERS = [("Content-Type", "application/json")]
DURATION = Histogram(
    "rightsizer_extender_call_duration_seconds",
    "Time the scheduler extender took to answer a call, by verb and outcome (scored, neutral).",
    ["verb", "outcome"],
    buckets=(0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1),
)


class BadArgs(ValueError):
    pass


def field(doc: Mapping[str, Any], name: str) -> Any:
    """`doc[name]`, the key matched case-insensitively as Go's encoding/json does."""
    if name in doc:
        return doc[name]
    lower = name.lower()
    for k, v in doc.items():
        if isinstance(k, str) and k.lower() == lower:
            return v
    return None


def parse_args(body: bytes) -> tuple[Mapping[str, Any], list[str], list[Any] | None]:
    """(pod, node names, the Node objects when they were sent rather than names)."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError as e:
        raise BadArgs(f"body is not JSON: {e}") from None
    if not isinstance(doc, dict):
        raise BadArgs("body is not an object")
    pod = field(doc, "Pod")
    if not isinstance(pod, dict):
        raise BadArgs("Pod: not an object")
    names = field(doc, "NodeNames")
    if isinstance(names, list):
        return pod, strings(names), None
    nodes = field(doc, "Nodes")
    items = field(nodes, "items") if isinstance(nodes, dict) else None
    if isinstance(items, list):
        named = [n for n in items if isinstance(n, dict)]
        return pod, [node_name(n) for n in named], named
    raise BadArgs("neither NodeNames nor Nodes.items given")


def strings(items: list[Any]) -> list[str]:
    """The strings of `items`: all of them, checked in C, unless some are not."""
    if set(map(type, items)) <= {str}:
        return items
    return [n for n in items if isinstance(n, str)]


def node_name(node: Mapping[str, Any]) -> str:
    meta = field(node, "metadata")
    name = field(meta, "name") if isinstance(meta, dict) else None
    return name if isinstance(name, str) else ""


def names_only(body: bytes) -> tuple[list[str], list[Any] | None]:
    """The nodes of a body that is otherwise unusable, for a neutral answer; none if unreadable."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        return [], None
    if not isinstance(doc, dict):
        return [], None
    names = field(doc, "NodeNames")
    if isinstance(names, list):
        return [n for n in names if isinstance(n, str)], None
    nodes = field(doc, "Nodes")
    items = field(nodes, "items") if isinstance(nodes, dict) else None
    if isinstance(items, list):
        named = [n for n in items if isinstance(n, dict)]
        return [node_name(n) for n in named], named
    return [], None


def filter_result(
    passed: Sequence[str], nodes: list[Any] | None, failed: Mapping[str, str], error: str = ""
) -> dict[str, Any]:
    result: dict[str, Any] = {
        "Nodes": None,
        "NodeNames": None,
        "FailedNodes": dict(failed),
        "FailedAndUnresolvableNodes": {},
        "Error": error,
    }
    if nodes is None:
        result["NodeNames"] = list(passed)
    else:
        keep = set(passed)
        result["Nodes"] = {"items": [n for n in nodes if node_name(n) in keep]}
    return result


def priorities(names: Iterable[str], scores: Iterable[int]) -> list[dict[str, Any]]:
    return [{"Host": n, "Score": s} for n, s in zip(names, scores, strict=True)]


# `","Score":<s>},{"Host":"` per score: what comes between two hosts' names
_BETWEEN = [b'","Score":%d},{"Host":"' % s for s in range(MAX_PRIORITY + 1)]
_LAST = [b'","Score":%d}]' % s for s in range(MAX_PRIORITY + 1)]


def priorities_json(names: list[str], scores: list[int]) -> bytes:
    """orjson.dumps(priorities(names, scores)), 0 <= score <= MAX_PRIORITY, without building
    a dict per node: half a 5,000-node call's time went to those dicts.

    orjson encodes the names once, as a JSON list of strings (escaped as JSON requires), and its
    elements are cut apart at `","`: inside a JSON string every `"` is escaped as `\"`, so
    `","` (a quote, a comma, a quote with no backslash before it) is only ever the boundary
    between two strings of the list. Each score's bytes go between them."""
    if not names:
        return b"[]"
    encoded = orjson.dumps(names)[2:-2].split(b'","')  # '["a","b"]' -> [b'a', b'b']
    between = list(map(_BETWEEN.__getitem__, scores))
    between[-1] = _LAST[scores[-1]]
    out: list[bytes] = [b""] * (2 * len(encoded))
    out[0::2] = encoded
    out[1::2] = between
    return b'[{"Host":"' + b"".join(out)


# Starts a watch of binds calling (on_bound, on_gone) with pods' JSON: app.kube.binds.BindWatch.
WatchBinds = Callable[[Callable[[dict[str, Any]], None], Callable[[dict[str, Any]], None]], object]
COVER_EVERY = 1.0  # seconds between checks of which hot spots the node levels cover


class Extender:
    def __init__(
        self,
        hook: Webhook,
        levels: LevelsCache,
        autostart: bool = True,
        watch_binds: WatchBinds | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.hook, self.levels, self.autostart = hook, levels, autostart
        self.watch_binds, self.clock = watch_binds, clock
        # pods bound since their node's last metrics (app.core.placement.hotspots), fed by this
        # process's watch of binds; a lock: the watch's thread writes, the calls read
        self.hot = HotSpots()
        self._hot_lock = threading.Lock()
        self._covered_at = 0.0
        self._watch_pid = 0

    def start(self) -> None:
        """This process's threads (levels, binds, and the webhook's snapshot and informers)."""
        if not self.autostart:
            return
        self.levels.start()
        if self.watch_binds is not None and self._watch_pid != os.getpid():
            with self._hot_lock:
                if self._watch_pid != os.getpid():
                    self._watch_pid = os.getpid()
                    try:
                        self.watch_binds(self.bound, self.gone)
                    except Exception as e:
                        log.warning("scheduler extender: no watch of binds (no hot spots): %s", e)
        if self.hook.autostart:
            self.hook.start()

    def answer(self, verb: str, body: bytes) -> bytes:
        """The JSON answer to `verb` (filter or prioritize); neutral on any error."""
        started, outcome = time.perf_counter(), "scored"
        try:
            doc, outcome = self._answer(verb, body)
        except Exception as e:
            if not isinstance(e, BadArgs):
                log.exception("scheduler extender %s failed; answering neutrally", verb)
            else:
                log.debug("scheduler extender %s: %s; answering neutrally", verb, e)
            names, nodes = names_only(body)
            if verb == "filter":
                doc = filter_result(names, nodes, {})
            else:
                doc = priorities(names, [0] * len(names))
            outcome = "neutral"
        DURATION.labels(verb, outcome).observe(time.perf_counter() - started)
        return doc if isinstance(doc, bytes) else orjson.dumps(doc)

    def _answer(self, verb: str, body: bytes) -> tuple[Any, str]:
        pod, names, nodes = parse_args(body)
        table = self.levels.current()
        if table is None:
            if verb == "filter":
                return filter_result(names, nodes, {}), "neutral"
            return priorities(names, [0] * len(names)), "neutral"
        predicted = self.pod_usage(pod)
        hot = self.hot_spots(table)
        if verb == "filter":
            full = table.too_full(names, predicted, hot)
            if not any(full):
                return filter_result(names, nodes, {}), "scored"
            passed = list(compress(names, map(operator.not_, full)))
            failed = dict.fromkeys(compress(names, full), TOO_FULL)
            return filter_result(passed, nodes, failed), "scored"
        return priorities_json(names, table.scores(names, predicted, hot)), "scored"

    def hot_spots(self, table: LevelTable) -> dict[str, Amounts]:
        """Per node, the predicted usage of the pods bound since its last metrics."""
        now = self.clock()
        with self._hot_lock:
            if len(self.hot) and now - self._covered_at >= COVER_EVERY:
                self.hot.covered({n: lv.metrics_at for n, lv in table.levels.items()}, now)
                self._covered_at = now
            return self.hot.nodes()

    def bound(self, pod: dict[str, Any]) -> None:
        """A pod just bound to its node (the watch of binds): its predicted usage is added."""
        seen = self._seen(pod)
        if seen is not None:
            uid, node, (cpu, memory) = seen
            with self._hot_lock:
                self.hot.bound(uid, node, cpu, memory, self.clock())

    def gone(self, pod: dict[str, Any]) -> None:
        """A pod deleted or finished: a bind still held is dropped; any other pod's predicted
        usage is subtracted from its node until the metrics show it gone."""
        seen = self._seen(pod)
        if seen is not None:
            uid, node, (cpu, memory) = seen
            with self._hot_lock:
                self.hot.gone(uid, node, cpu, memory, self.clock())

    def _seen(self, pod: dict[str, Any]) -> tuple[str, str, Amounts] | None:
        meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
        uid, node = meta.get("uid"), spec.get("nodeName")
        if not isinstance(uid, str) or not isinstance(node, str) or not node:
            return None
        try:
            return uid, node, self.pod_usage(pod)
        except Exception as e:  # a pod it cannot read adds nothing
            log.debug("scheduler extender: pod %s not counted: %s", uid, e)
            return None

    def pod_usage(self, pod: Mapping[str, Any]) -> Amounts:
        """The pod's predicted usage: its workload's recommendations, else its requests."""
        spec = pod.get("spec")
        if not isinstance(spec, dict):
            raise BadArgs("Pod.spec: not an object")
        recs: Mapping[str, Any] = {}
        snapshot, _ = self.hook.cache.state()
        meta = pod.get("metadata")
        namespace = meta.get("namespace") if isinstance(meta, dict) else None
        if snapshot is not None and isinstance(namespace, str):
            w = workload_of_pod(pod, namespace, self.hook.owner_lookup, self.hook.scalable)
            if w is not None:
                recs = snapshot.recommendations.get(w, {})
        return pod_level(spec, recs)

    def table(self) -> LevelTable | None:
        return self.levels.current()


class ExtenderRoute:
    """WSGI middleware: POST /scheduler/<verb> answered by `extender`, the rest by `app`."""

    def __init__(
        self, app: WSGIApplication, extender: Extender, observers: Sequence[RequestObserver]
    ) -> None:
        self.app, self.extender, self.observers = app, extender, observers

    def __call__(self, environ: WSGIEnvironment, start_response: StartResponse) -> Iterable[bytes]:
        path = environ.get("PATH_INFO") or ""
        verb = path[len(PREFIX) :] if path.startswith(PREFIX) else ""
        if verb not in VERBS or environ.get("REQUEST_METHOD") != "POST":
            return self.app(environ, start_response)
        started = time.perf_counter()
        self.extender.start()
        if (get_content_length(environ) or 0) > MAX_BODY_BYTES:
            body = b""  # not read: answered neutrally, with no node (it cannot be read)
        else:
            body = get_input_stream(environ).read(MAX_BODY_BYTES + 1)
        out = self.extender.answer(verb, body)
        start_response("200 OK", [*HEADERS, ("Content-Length", str(len(out)))])
        seconds = time.perf_counter() - started
        for observe in self.observers:
            observe(path, "POST", 200, seconds)
        return [out]
