"""Kubernetes REST semantics over the cluster: routing, list/watch, CRUD, subresources, errors.

Transport-free: server.py hands in a Request and writes out the Response (bytes, or a stream of
watch events), so everything here is plain functions of the cluster state.
"""

from __future__ import annotations

import base64
import binascii
import json
import threading
import time
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from app.simulator.apiserver import deletion, errors, kinds, listoptions, patches, selectors
from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.fieldvalidation import warning_header
from app.simulator.apiserver.resources import POD, Registry, ResourceType
from app.simulator.apiserver.store import Entry, dumps
from app.simulator.apiserver.version import KubeVersion
from app.simulator.control.cluster import SimCluster, generic_create
from app.simulator.endpoints import apply, bodies, prometheus, subresources, tables
from app.simulator.endpoints.messages import Request, Response, json_response, status_response
from app.simulator.endpoints.metrics import MetricsServer
from app.simulator.endpoints.openapi import OpenApiV3
from app.simulator.endpoints.openapiv2 import OpenApiV2

WATCH_DEFAULT_TIMEOUT = 1800.0  # kube-apiserver's --min-request-timeout


@dataclass
class Stats:
    """Requests by verb and resource, split LIST / WATCH / other, for benchmarks."""

    counts: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    lock: threading.Lock = field(default_factory=threading.Lock)
    since: float = field(default_factory=time.time)

    def count(self, verb: str, resource: str) -> None:
        cls = {"list": "LIST", "watch": "WATCH"}.get(verb, "other")
        with self.lock:
            self.counts[(verb, resource, cls)] += 1

    def snapshot(self) -> dict[str, Any]:
        with self.lock:
            items = sorted(self.counts.items())
        by_class: Counter[str] = Counter({"LIST": 0, "WATCH": 0, "other": 0})
        by_verb: Counter[str] = Counter()
        by_resource: dict[str, dict[str, int]] = {}
        for (verb, resource, cls), n in items:
            by_class[cls] += n
            by_verb[verb] += n
            by_resource.setdefault(resource, {})[verb] = (
                by_resource.get(resource, {}).get(verb, 0) + n
            )
        return {
            "since": self.since,
            "total": sum(by_class.values()),
            "byClass": by_class,
            "byVerb": by_verb,
            "byResource": by_resource,
            "requests": [
                {"verb": v, "resource": r, "class": c, "count": n} for (v, r, c), n in items
            ],
        }

    def reset(self) -> None:
        with self.lock:
            self.counts.clear()
            self.since = time.time()


class Api:
    def __init__(
        self,
        cluster: SimCluster,
        *,
        bookmark_interval: float = 60.0,
        version: KubeVersion | None = None,
    ) -> None:
        self.cluster = cluster
        self.version = version or KubeVersion.parse(None)  # the rules of that release apply
        self.store = cluster.store
        self.metrics = MetricsServer(cluster)
        self.stats = Stats()
        self.bookmark_interval = bookmark_interval
        self.openapi = OpenApiV3(self.version)
        self.openapi_v2 = OpenApiV2(self.version)

    # --- routing --------------------------------------------------------------------------

    def handle(self, req: Request) -> Response:
        try:
            return self._route(req)
        except ApiError as e:
            return status_response(e)

    def _route(self, req: Request) -> Response:
        path = req.path.rstrip("/") or "/"
        if path in ("/api/v1/query_range", "/prometheus/api/v1/query_range"):
            self.stats.count("get", "prometheus/query_range")
            return self._prometheus(req)
        if path.startswith("/sim/"):
            return self._sim(req, path)
        if path in ("/healthz", "/livez", "/readyz"):
            return Response(200, b"ok", content_type="text/plain")
        if path == "/version":
            return json_response(200, self.version.document())
        if path == "/openapi/v3" or path.startswith("/openapi/v3/"):
            return self.openapi.handle(req, path)
        if req.path == "/openapi/v2":  # exactly: kube's mux has no "/openapi/v2/"
            return self.openapi_v2.handle(req)
        parts = path.strip("/").split("/")
        if parts[0] == "api":
            if len(parts) == 1:
                return json_response(
                    200,
                    {"kind": "APIVersions", "versions": ["v1"], "serverAddressByClientCIDRs": []},
                )
            group, version, rest = "", parts[1], parts[2:]
        elif parts[0] == "apis":
            if len(parts) == 1:
                return json_response(200, _group_list(self.cluster.resources))
            if len(parts) == 2:
                found = self.cluster.resources.groups().get(parts[1])
                if found is None:
                    raise errors.unknown_resource()
                return json_response(200, _group(parts[1], found))
            group, version, rest = parts[1], parts[2], parts[3:]
        else:
            raise errors.unknown_resource()
        if not self.cluster.resources.serves(group, version):
            return _not_found_text()  # as kube's NotFoundHandler answers: plain text
        if not rest:
            return json_response(200, self.cluster.resources.api_resource_list(group, version))
        _resource_path(self.cluster.resources, group, version, rest)  # 404 before any 406
        target = tables.negotiate(req)  # a Table or PartialObjectMetadata (printers/), or 406
        resp = self._resource(req, group, version, rest)
        return tables.respond(resp, target, req, self.cluster.now)

    def _resource(self, req: Request, group: str, version: str, rest: list[str]) -> Response:
        rt, namespace, name, sub = _resource_path(self.cluster.resources, group, version, rest)
        verb = _verb(req, name)
        # Counted as group/resource (pods.metrics.k8s.io is not a core pod LIST).
        self.stats.count(verb, rt.group_resource if not sub else f"{rt.group_resource}/{sub}")
        if rt.computed:
            if verb not in ("get", "list"):
                raise _method_not_allowed(req)
            return self._metrics(rt, namespace, name, req)
        if name is None:
            return self._collection(rt, namespace, verb, req)
        ns = namespace or ""
        if sub in ("scale", "eviction", "resize", "log"):
            return subresources.handle(self, rt, ns, name, sub, req)
        if verb == "get":
            return Response(200, self.store.require(rt, ns, name).raw)
        if verb in ("update", "patch"):
            apply.check_options(req)
            if apply.is_apply(req) and sub is None and self.store.get(rt, ns, name) is None:
                return apply.create(self, rt, ns, name, req)  # server-side apply creates
            return self._update(rt, ns, name, sub, req)
        if verb == "delete" and sub is None:
            return self._delete(rt, ns, name, req)
        raise _method_not_allowed(req)

    def _collection(
        self, rt: ResourceType, namespace: str | None, verb: str, req: Request
    ) -> Response:
        if verb == "list":
            return self._list(rt, namespace, req.query)
        if verb == "watch":
            return self._watch(rt, namespace, req.query)
        if verb == "create" and (namespace is not None or not rt.namespaced):
            return self._create(rt, namespace or "", req)
        raise _method_not_allowed(req)

    # --- list and watch -------------------------------------------------------------------

    def _list(self, rt: ResourceType, namespace: str | None, q: dict[str, str]) -> Response:
        listoptions.check_list(q)
        label_sel = selectors.parse_label_selector(q.get("labelSelector"))
        field_sel = selectors.parse_field_selector(q.get("fieldSelector"), rt.plural)
        limit = _int_param(q, "limit")
        wanted = _resource_version(q)
        if wanted and not q.get("continue"):
            self.store.wait_fresh(wanted)  # 504 when the store does not get there
        if q.get("resourceVersion") == "0" and not q.get("continue"):
            limit = 0  # served from the watch cache, which does not paginate
        after, list_rv = None, None
        if q.get("continue"):
            list_rv, after = _decode_continue(q["continue"])
            if list_rv < self.store.compacted_rv():
                raise errors.gone(
                    "The provided continue parameter is too old to display a "
                    "consistent list result. You can start a new list without "
                    "the continue parameter."
                )
        node = next(
            (r.value for r in field_sel if r.field == "spec.nodeName" and not r.negate), None
        )
        if rt is POD and node is not None:  # kubelets' query: use the node index
            entries, rv, total = self.store.index_scan(rt, "node", node, namespace, after)
        else:
            entries, rv, total = self.store.iter_scan(rt, namespace, after)
        list_rv = list_rv or rv
        items: list[bytes] = []
        cont, remaining = None, None
        filtered = bool(label_sel or field_sel)
        last_key = None
        consumed = 0
        for key, entry in entries:
            if limit and len(items) == limit:
                cont = _encode_continue(list_rv, last_key or key)
                if not filtered:
                    remaining = total - consumed
                break
            consumed += 1
            if filtered and not _match(entry.obj, label_sel, field_sel):
                continue
            items.append(entry.raw)
            last_key = key
        meta: dict[str, Any] = {"resourceVersion": str(list_rv)}
        if cont:
            meta["continue"] = cont
            if remaining is not None:
                meta["remainingItemCount"] = remaining
        head = dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": meta})
        return Response(200, head[:-1] + b',"items":[' + b",".join(items) + b"]}")

    def _watch(self, rt: ResourceType, namespace: str | None, q: dict[str, str]) -> Response:
        label_sel = selectors.parse_label_selector(q.get("labelSelector"))
        field_sel = selectors.parse_field_selector(q.get("fieldSelector"), rt.plural)
        timeout = float(_int_param(q, "timeoutSeconds") or WATCH_DEFAULT_TIMEOUT)
        bookmarks = q.get("allowWatchBookmarks") in ("true", "1")
        start = listoptions.check_watch(q, self.version)  # sendInitialEvents, WatchList
        initial: list[Entry] = []
        wanted = _resource_version(q)
        if start.initial and wanted:
            try:
                self.store.wait_fresh(wanted)
            except ApiError as e:  # the watch is open (200) and ends with the error event
                return Response(200, stream=iter([_event("ERROR", dumps(e.status()))]))
        if start.initial:
            entries, start_rv = self.store.scan(rt, namespace)
            initial = [e for _, e in entries if _match(e.obj, label_sel, field_sel)]
        elif start.from_rv is None:
            start_rv = self.store.rv  # "" or "0" without initial events: from now on
        else:
            start_rv = start.from_rv
        stream = self._watch_stream(
            rt,
            namespace,
            label_sel,
            field_sel,
            start_rv,
            initial,
            start.initial_end,
            bookmarks,
            timeout,
        )
        return Response(200, stream=stream)

    def _watch_stream(
        self,
        rt: ResourceType,
        namespace: str | None,
        label_sel: selectors.Selector,
        field_sel: tuple[selectors.FieldRequirement, ...],
        pos: int,
        initial: list[Entry],
        initial_end: bool,
        bookmarks: bool,
        timeout: float,
    ) -> Iterator[bytes]:
        deadline = time.monotonic() + timeout
        for entry in initial:
            yield _event("ADDED", entry.raw)
        if initial_end:
            yield _bookmark(rt, pos, initial_end=True)
        next_bookmark = time.monotonic() + self.bookmark_interval
        while not self.store.closed:
            try:
                events = self.store.events_after(pos)
            except ApiError as e:
                yield _event("ERROR", dumps(e.status()))
                return
            for ev in events:
                pos = ev.rv
                if (ev.rt is not rt and ev.rt != rt) or (
                    namespace is not None and ev.entry.obj["metadata"].get("namespace") != namespace
                ):
                    continue
                now_match = _match(ev.entry.obj, label_sel, field_sel)
                if ev.type == "MODIFIED" and (label_sel or field_sel):
                    was = ev.prev is not None and _match(ev.prev.obj, label_sel, field_sel)
                    if was and not now_match:
                        yield _event("DELETED", ev.entry.raw)
                    elif now_match:
                        yield _event("MODIFIED" if was else "ADDED", ev.entry.raw)
                elif now_match:
                    yield _event(ev.type, ev.entry.raw)
            now = time.monotonic()
            if now >= deadline:
                if bookmarks:
                    yield _bookmark(rt, pos)
                return
            if bookmarks and now >= next_bookmark:
                yield _bookmark(rt, pos)
                next_bookmark = now + self.bookmark_interval
            if not events:
                self.store.wait(pos, min(deadline, next_bookmark if bookmarks else deadline) - now)

    # --- writes ---------------------------------------------------------------------------

    def _create(self, rt: ResourceType, namespace: str, req: Request) -> Response:
        obj, warned = bodies.object_body(req, rt, self.version, "CreateOptions")
        meta = obj.setdefault("metadata", {})
        if not isinstance(meta, dict):
            raise bad_request("metadata must be an object")
        if rt.namespaced and meta.get("namespace") and meta["namespace"] != namespace:
            raise bad_request(
                "the namespace of the provided object does not match the "
                "namespace sent on the request"
            )
        apply.check_options(req)
        apply.record_create(self, rt, req, obj)  # metadata.managedFields: the creator's
        dry_run = req.query.get("dryRun") == "All"
        if rt is POD:
            created = self.cluster.create_pod(namespace, obj, dry_run=dry_run)
        else:
            created = generic_create(self.cluster, rt, namespace, obj, dry_run=dry_run)
        resp = (
            Response(201, created.raw)
            if isinstance(created, Entry)
            else json_response(201, created)
        )
        resp.headers.update(warning_header(warned))
        return resp

    def _update(
        self, rt: ResourceType, ns: str, name: str, sub: str | None, req: Request
    ) -> Response:
        for _ in range(5):  # patches retry on concurrent writes, as the API server's do
            old = self.store.require(rt, ns, name)
            if req.method == "PUT":
                new, warned = bodies.object_body(req, rt, self.version, "UpdateOptions")
                meta = new.get("metadata")
                if not isinstance(meta, dict) or meta.get("name") != name:
                    raise bad_request(
                        f"the name of the object ({(meta or {}).get('name')}) "
                        f"does not match the name on the URL ({name})"
                    )
                expected = meta.get("resourceVersion") or None
                if expected and expected != str(old.rv):
                    # GuaranteedUpdate compares resourceVersions before validation runs
                    raise errors.conflict(rt, name)
            else:
                if apply.is_apply(req):  # server-side apply, with field ownership
                    new = apply.applied(self, rt, ns, name, sub, req, old.copy())
                else:
                    ctype = req.headers.get("content-type", "")
                    new = patches.apply_patch(ctype, old.copy(), req.body, self.version.minor)
                new, warned = bodies.patched_object(req, rt, self.version, new)
                if not isinstance(new.get("metadata"), dict):
                    raise ApiError(422, "metadata must be an object")
                expected = str(old.rv)
                sent_rv = new["metadata"].get("resourceVersion")
                if sent_rv and sent_rv != str(old.rv):
                    raise errors.conflict(rt, name)
            new["apiVersion"], new["kind"] = rt.api_version, rt.kind
            new["metadata"]["name"] = name
            if rt.namespaced:
                new["metadata"]["namespace"] = ns
            if rt.has_status:
                if sub == "status":
                    status, new = new.get("status"), old.copy()
                    new["status"] = status
                else:
                    new["status"] = old.obj.get("status", {})
            deletion.prepare_update(rt, old.obj, new)
            kinds.prepare_update(rt, old.obj, new, self.cluster.resources.schema(rt))
            apply.record_update(self, rt, req, sub, old.obj, new)  # the writer's managedFields
            if req.query.get("dryRun") == "All":
                resp = json_response(200, new)
                resp.headers.update(warning_header(warned))
                return resp
            try:
                stored = self.store.replace(rt, new, expected)
                stored = deletion.after_update(self.store, rt, old.obj, stored)
                return Response(200, stored.raw, headers=warning_header(warned))
            except ApiError as e:
                if e.code != 409 or req.method == "PUT":
                    raise
        raise errors.conflict(rt, name)

    def _delete(self, rt: ResourceType, ns: str, name: str, req: Request) -> Response:
        """DELETE (apiserver/deletion.py): the object while finalizers hold it (202 when the
        deprecated orphanDependents=false asked for it), else the deleted pod or a Status."""
        options = deletion.parse_options(bodies.delete_body(req), req.query)
        dry_run = deletion.is_dry_run(options, req.query)
        deleted, gone = deletion.delete(
            self.store, rt, ns, name, options, self.cluster.now_str(), dry_run=dry_run
        )
        if not gone:
            return Response(202 if options.get("orphanDependents") is False else 200, deleted.raw)
        if rt is POD:
            return Response(200, deleted.raw)
        return json_response(
            200,
            {
                "kind": "Status",
                "apiVersion": "v1",
                "metadata": {},
                "status": "Success",
                "details": {
                    "name": name,
                    "group": rt.group,
                    "kind": rt.plural,
                    "uid": deleted.obj["metadata"]["uid"],
                },
            },
        )

    # --- metrics, prometheus, simulator control -------------------------------------------

    def _metrics(
        self, rt: ResourceType, namespace: str | None, name: str | None, req: Request
    ) -> Response:
        scrape = self.metrics.scrape()
        if rt.kind == "PodMetrics":
            table = {k: v for k, v in scrape.pods.items() if namespace is None or k[0] == namespace}
            key: Any = (namespace, name)
        else:
            table = {("", k): v for k, v in scrape.nodes.items()}
            key = ("", name)
        if name is not None:
            found = table.get(key)
            if found is None:
                raise errors.not_found(rt, name)
            return Response(200, found[1])
        sel = selectors.parse_label_selector(req.query.get("labelSelector"))
        items = [
            raw for k, (labels, raw) in sorted(table.items()) if selectors.matches(sel, labels)
        ]
        head = dumps({"kind": rt.list_kind, "apiVersion": rt.api_version, "metadata": {}})
        return Response(200, head[:-1] + b',"items":[' + b",".join(items) + b"]}")

    def _prometheus(self, req: Request) -> Response:
        try:
            return json_response(200, prometheus.query_range(self.cluster, req.query))
        except prometheus.PromError as e:
            return json_response(400, {"status": "error", "errorType": "bad_data", "error": str(e)})

    def _sim(self, req: Request, path: str) -> Response:
        if path == "/sim/stats":
            if req.method == "DELETE":
                self.stats.reset()
            return json_response(200, self.stats.snapshot())
        if path == "/sim/clock":
            if req.method == "POST":
                try:
                    seconds = float(req.query.get("advance", "0"))
                    self.cluster.advance(seconds)
                except ValueError as e:
                    raise bad_request(f"advance: {e}") from None
                # metrics-server scrapes in the background while time passes, so its answer for
                # the new window is ready before anyone asks (not built by the first request)
                self.metrics.scrape()
            now = self.cluster.now()
            return json_response(
                200, {"now": now, "time": self.cluster.now_str(), "speed": self.cluster.clock.speed}
            )
        raise errors.unknown_resource()


def _not_found_text() -> Response:
    """What kube-apiserver answers below a group/version it does not serve: plain text, no
    Status (client-go reports it as NotFound, "the server could not find the requested
    resource")."""
    return Response(404, b"404 page not found\n", content_type="text/plain; charset=utf-8")


def _resource_path(
    resources: Registry, group: str, version: str, rest: list[str]
) -> tuple[ResourceType, str | None, str | None, str | None]:
    """(resource, namespace, name, subresource) of a path below /api/v1 or /apis/G/V; 404 as
    kube-apiserver answers for an unknown resource or subresource."""
    namespace: str | None = None
    if len(rest) >= 3 and rest[0] == "namespaces":
        rt = resources.lookup(group, version, rest[2])
        if rt is not None and rt.namespaced:
            namespace, rest = rest[1], rest[2:]
    found = resources.lookup(group, version, rest[0])
    if found is None or len(rest) > 3:
        raise errors.unknown_resource()
    name = rest[1] if len(rest) > 1 else None
    sub = rest[2] if len(rest) > 2 else None
    if sub is not None and sub != "status" and sub not in found.subresources:
        raise errors.unknown_resource()
    if sub == "status" and not found.has_status:
        raise errors.unknown_resource()
    if found.namespaced and namespace is None and name is not None:
        raise errors.unknown_resource()
    return found, namespace, name, sub


def _verb(req: Request, name: str | None) -> str:
    m = req.method
    if m == "GET":
        if name is None:
            return "watch" if req.query.get("watch") in ("true", "1") else "list"
        return "get"
    return {
        "POST": "create",
        "PUT": "update",
        "PATCH": "patch",
        "DELETE": "delete" if name else "deletecollection",
    }.get(m, m.lower())


def _method_not_allowed(req: Request) -> ApiError:
    return ApiError(
        405, f"the server does not allow this method on the requested resource ({req.method})"
    )


def _resource_version(q: dict[str, str]) -> int:
    """The resourceVersion a list or watch-list asks for, 0 when none (or not a number)."""
    try:
        return max(int(q.get("resourceVersion") or 0), 0)
    except ValueError:
        return 0


def _int_param(q: dict[str, str], name: str) -> int:
    raw = q.get(name)
    if not raw:
        return 0
    try:
        value = int(raw)
    except ValueError:
        raise bad_request(f'strconv.ParseInt: parsing "{raw}": invalid syntax') from None
    if value < 0:
        raise bad_request(f"{name}: must be non-negative")
    return value


def _encode_continue(rv: int, key: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": key}).encode()
    return base64.urlsafe_b64encode(raw).decode()


def _decode_continue(token: str) -> tuple[int, str]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token.encode()))
        return int(data["rv"]), str(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise bad_request(
            "continue key is not valid: incorrect encoded start resourceVersion "
            "(version meta.k8s.io/v1)"
        ) from None


def _match(
    obj: dict[str, Any],
    label_sel: selectors.Selector,
    field_sel: tuple[selectors.FieldRequirement, ...],
) -> bool:
    return (not label_sel or selectors.matches(label_sel, obj["metadata"].get("labels"))) and (
        not field_sel or selectors.fields_match(field_sel, obj)
    )


def _event(type_: str, raw: bytes) -> bytes:
    return b'{"type":"' + type_.encode() + b'","object":' + raw + b"}\n"


def _bookmark(rt: ResourceType, rv: int, *, initial_end: bool = False) -> bytes:
    meta: dict[str, Any] = {"resourceVersion": str(rv)}
    if initial_end:
        meta["annotations"] = {"k8s.io/initial-events-end": "true"}
    return _event(
        "BOOKMARK", dumps({"kind": rt.kind, "apiVersion": rt.api_version, "metadata": meta})
    )


def _group(name: str, versions: list[str]) -> dict[str, Any]:
    gvs = [{"groupVersion": f"{name}/{v}", "version": v} for v in versions]
    return {
        "kind": "APIGroup",
        "apiVersion": "v1",
        "name": name,
        "versions": gvs,
        "preferredVersion": gvs[0],
    }


def _group_list(resources: Registry) -> dict[str, Any]:
    return {
        "kind": "APIGroupList",
        "apiVersion": "v1",
        "groups": [_group(g, vs) for g, vs in sorted(resources.groups().items())],
    }
