"""List+watch caches (informers) that parse JSON themselves.

The client's model deserialisation costs about a millisecond per pod; at 150000 pods that is minutes
of CPU per re-list. We ask the typed API functions for the raw response (`_preload_content=False`)
and keep plain dicts, or what `transform` makes of each (the pod cache keeps frozen views,
app.core.pods.PodView). The initial state comes from a watch-list stream where the server offers
it (Kubernetes' WatchList: `sendInitialEvents=true`, one object per event, then a bookmark
annotated `k8s.io/initial-events-end`, then the changes on the same connection, as client-go's
reflector does it); else from a LIST at `resourceVersion=0` (served from the API server's cache,
not etcd, in one response: the watch cache does not page), read item by item as it arrives
(app.kube.liststream). Either way the whole state is never held as one JSON document. A WATCH
continues from the state's resourceVersion; bookmarks keep
that version fresh, and a 410 Gone (history compacted) triggers a new LIST. Errors back off
exponentially (with jitter) up to 30 s. A watch silent for longer than the server's own timeout
plus a grace is a dead connection: it times out and is resumed from the last resourceVersion.
"""

from __future__ import annotations

import contextlib
import json
import logging
import random
import socket
import threading
from collections.abc import Callable, Iterator
from typing import Any, Generic, TypeVar, cast, overload

from kubernetes.client.exceptions import ApiException

from app.kube.client import DEFAULT_TIMEOUT
from app.kube.liststream import read_list, response_chunks
from app.kube.responses import give_back

log = logging.getLogger(__name__)

Obj = dict[str, Any]
Key = tuple[str, str]  # (namespace, name); namespace "" for cluster-scoped objects
ListFn = Callable[..., Any]  # a typed list function, e.g. CoreV1Api().list_pod_for_all_namespaces
T = TypeVar("T")  # what the cache holds per object: the JSON, or what `transform` makes of it


NOT_SERVED_RETRY = 300.0  # seconds before asking again for a resource the server lacks
INITIAL_EVENTS_END = "k8s.io/initial-events-end"  # the annotation ending a watch-list's state


class Gone(Exception):
    """The watch's resourceVersion is too old: list again."""


def raise_watch_error(status: Obj) -> None:
    """A watch's ERROR event (its object a Status): Gone for 410 (list again), else ValueError."""
    if status.get("code") == 410:
        raise Gone()
    raise ValueError(f"watch error: {status.get('message') or status}")


def key_of(obj: Obj) -> Key:
    meta = obj.get("metadata") or {}
    return (meta.get("namespace") or "", meta.get("name") or "")


def iter_lines(resp: Any) -> Iterator[bytes]:
    buffer = b""
    for chunk in resp.stream(amt=None, decode_content=False):
        buffer += chunk
        *lines, buffer = buffer.split(b"\n")
        yield from (line for line in lines if line)
    if buffer.strip():
        yield buffer


class Informer(Generic[T]):
    """A thread keeping `objects` equal to the server's set of one resource.

    Without `transform` it holds each object's JSON (an `Informer[Obj]`); with one, what it makes
    of each (the key and resourceVersion are read from the JSON before)."""

    @overload
    def __init__(
        self: Informer[Obj],
        name: str,
        list_fn: ListFn,
        page_size: int = ...,
        watch_timeout: int = ...,
        watch_read_grace: float = ...,
        on_event: Callable[[str, Obj], None] | None = ...,
        transform: None = ...,
        watch_list: bool = ...,
        **list_kwargs: Any,
    ) -> None: ...

    @overload
    def __init__(
        self,
        name: str,
        list_fn: ListFn,
        page_size: int = ...,
        watch_timeout: int = ...,
        watch_read_grace: float = ...,
        on_event: Callable[[str, T], None] | None = ...,
        *,
        transform: Callable[[Obj], T],
        watch_list: bool = ...,
        **list_kwargs: Any,
    ) -> None: ...

    def __init__(
        self,
        name: str,
        list_fn: ListFn,
        page_size: int = 500,
        watch_timeout: int = 300,
        watch_read_grace: float = 60.0,
        on_event: Callable[[str, Any], None] | None = None,
        transform: Callable[[Obj], Any] | None = None,
        watch_list: bool = True,
        **list_kwargs: Any,
    ) -> None:
        self.name, self.list_fn, self.page_size = name, list_fn, page_size
        self.watch_timeout, self.on_event, self.list_kwargs = watch_timeout, on_event, list_kwargs
        # The server ends a watch after watch_timeout; one silent for longer than that plus this
        # grace is a dead connection (half-open: no reset ever comes), and is given up.
        self.watch_read_grace = watch_read_grace
        self.transform = transform  # keeps only the fields we use: pods are 5 KB, we need 1
        self.objects: dict[Key, T] = {}
        self.resource_version = ""
        self.synced = threading.Event()
        self.lists = 0  # full syncs done (a LIST or a watch-list stream): 1 in a healthy run
        # full syncs and events applied, counted once the cache shows them: equal counts read
        # around a walk of the cache saw the same objects (app.core.owner_memo's version). With
        # `counts`, an event counts only when counts(old, new) says so (None: absent before,
        # deleted); a full sync always counts (it may stand for events never seen).
        self.changes = 0
        self.counts: Callable[[T | None, T | None], bool] | None = None
        self.watch_lists = 0  # of them, by a watch-list stream
        self.watch_list = watch_list  # ask for a watch-list first (until the server refuses)
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._resp: Any = None
        # Live = what the cache shows is what the server has now, give or take the latency of a
        # watch event: a watch stream is open, or the server told us it lacks the resource.
        self._watching = False
        self._absent = False

    # Reading ---------------------------------------------------------------------------------
    def get(self, namespace: str, name: str) -> T | None:
        return self.objects.get((namespace, name))

    def items(self) -> list[T]:
        with self._lock:
            return list(self.objects.values())

    def snapshot(self) -> dict[Key, T]:
        """The cached objects by (namespace, name) as they are now: a copy, which the watch
        events that follow leave as it is (one C-level copy of the map, not a key per object)."""
        with self._lock:
            return dict(self.objects)

    def _convert(self, obj: Obj) -> T:
        return cast(T, self.transform(obj) if self.transform is not None else obj)

    # Running ---------------------------------------------------------------------------------
    def start(self) -> Informer[T]:
        """Starts the thread; a no-op while it runs (a re-elected leader keeps its cache)."""
        if self._thread is not None and self._thread.is_alive():
            return self
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"informer-{self.name}", daemon=True)
        self._thread.start()
        return self

    def stop(self, join: bool = True) -> None:
        self._stop.set()
        sock = getattr(getattr(self._resp, "connection", None), "sock", None)
        if sock is not None:
            # Closing the response would wait for the reading thread's lock; shutting the socket
            # down makes that thread's blocked read return at once.
            with contextlib.suppress(OSError):
                sock.shutdown(socket.SHUT_RDWR)
        if join and self._thread is not None:
            self._thread.join(timeout=5)

    def join(self, timeout: float) -> None:
        if self._thread is not None:
            self._thread.join(timeout)

    def wait_synced(self, timeout: float | None = None) -> bool:
        return self.synced.wait(timeout)

    def live(self) -> bool:
        """Synced and following the server now. False while the watch is down (retrying, or a
        request hanging): the cache then misses every change since, and acting on it is unsafe."""
        return self.synced.is_set() and (self._watching or self._absent)

    def _run(self) -> None:
        delay = 1.0
        need_list = True
        while not self._stop.is_set():
            try:
                if need_list:
                    if self.watch_list and self._watch_list():
                        need_list = False
                        continue  # synced from the stream, which has ended: watch on
                    self._list()
                    need_list = False
                self._watch()
                delay = 1.0
            except Gone:
                log.info(
                    "%s: resourceVersion %s too old; re-listing", self.name, self.resource_version
                )
                need_list = True
            except ApiException as e:
                if self._stop.is_set():
                    return
                if e.status == 410:
                    need_list = True
                    continue
                if e.status == 404 and need_list:
                    self._not_served()
                    continue
                log.warning("%s: %s; retrying in %.1fs", self.name, _describe(e), delay)
                self._stop.wait(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, 30.0)
            except Exception as e:
                if self._stop.is_set():
                    return  # closing the response mid-read raises from inside http.client
                log.warning("%s: %s; retrying in %.1fs", self.name, _describe(e), delay)
                self._stop.wait(delay * random.uniform(0.8, 1.2))
                delay = min(delay * 2, 30.0)

    def _not_served(self) -> None:
        """The API server does not serve this resource: an empty cache, looked at again later."""
        if not self.synced.is_set():
            log.warning("%s: not served by this API server; treating it as empty", self.name)
        with self._lock:
            self.objects = {}
        self._absent = True
        self.synced.set()
        self._stop.wait(NOT_SERVED_RETRY)

    def _watch_list(self) -> bool:
        """The initial state from a watch-list stream (client-go's reflector `watchList`): the
        current objects as ADDED events up to the bookmark annotated k8s.io/initial-events-end,
        then the changes after it on the same connection, until the server ends the watch.
        False when the server refuses it (then a LIST does the sync, and a server that answers
        400, 403 or 422, one without the WatchList feature, is not asked again) or the stream
        ended before the state was complete."""
        try:
            resp = self.list_fn(
                watch=True,
                send_initial_events=True,
                resource_version_match="NotOlderThan",
                resource_version="",
                allow_watch_bookmarks=True,
                timeout_seconds=self.watch_timeout,
                _preload_content=False,
                _request_timeout=(DEFAULT_TIMEOUT[0], self.watch_timeout + self.watch_read_grace),
                **self.list_kwargs,
            )
        except ApiException as e:
            if e.status in (400, 403, 422):
                self.watch_list = False
                # Expected of API servers without the WatchList feature (before 1.32, or off):
                # not a problem, only how this informer syncs (a LIST).
                log.debug(
                    "%s: watch-list not served (%s); listing instead", self.name, _describe(e)
                )
            return False
        fresh: dict[Key, T] = {}
        self._resp = resp
        done = False
        try:
            for line in iter_lines(resp):
                if self._stop.is_set():
                    return done
                event = json.loads(line)
                if done:
                    self._apply(event)
                    continue
                kind, obj = event.get("type"), event.get("object") or {}
                meta = obj.get("metadata") or {}
                if kind == "ADDED":
                    fresh[key_of(obj)] = self._convert(obj)
                elif kind == "BOOKMARK":
                    if (meta.get("annotations") or {}).get(INITIAL_EVENTS_END) == "true":
                        self._replace(fresh, meta.get("resourceVersion") or "")
                        self.watch_lists += 1
                        self._watching = done = True
                elif kind == "ERROR":
                    self._apply(event)  # raises Gone or ValueError
        finally:
            self._watching = False
            self._resp = None
            give_back(resp)  # closed if left midway: the stream would go on on it
        return done

    def _replace(self, fresh: dict[Key, T], rv: str) -> None:
        """A full state (a LIST's or a watch-list's) takes the place of the cache's."""
        with self._lock:
            old = self.objects
            self.objects = fresh
        self.resource_version = rv
        self.lists += 1
        self.changes += 1
        self._absent = False
        if self.on_event is not None:
            for k, obj in fresh.items():
                self.on_event("MODIFIED" if k in old else "ADDED", obj)
            for k in old.keys() - fresh.keys():
                self.on_event("DELETED", old[k])
        self.synced.set()
        log.info("%s: synced %d objects at resourceVersion %s", self.name, len(fresh), rv)

    def _list(self) -> None:
        fresh: dict[Key, T] = {}
        cont: str | None = None
        rv = ""
        while True:
            kwargs: dict[str, Any] = {
                "limit": self.page_size,
                "_preload_content": False,
                **self.list_kwargs,
            }
            if cont:
                kwargs["_continue"] = cont
            else:
                kwargs["resource_version"] = "0"
            resp = self.list_fn(**kwargs)

            def keep(item: Obj) -> None:
                fresh[key_of(item)] = self._convert(item)

            body = read_list(response_chunks(resp), keep)  # item by item, never the whole body
            meta = body.get("metadata") or {}
            rv = meta.get("resourceVersion") or rv
            cont = meta.get("continue")
            if not cont:
                break
        self._replace(fresh, rv)

    def _watch(self) -> None:
        resp = self.list_fn(
            watch=True,
            resource_version=self.resource_version,
            allow_watch_bookmarks=True,
            timeout_seconds=self.watch_timeout,
            _preload_content=False,
            _request_timeout=(DEFAULT_TIMEOUT[0], self.watch_timeout + self.watch_read_grace),
            **self.list_kwargs,
        )
        self._resp = resp
        self._watching = True
        try:
            for line in iter_lines(resp):
                if self._stop.is_set():
                    return
                self._apply(json.loads(line))
        finally:
            self._watching = False
            self._resp = None
            give_back(resp)  # closed if left midway: the stream would go on on it

    def _apply(self, event: Obj) -> None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            raise_watch_error(obj)
        rv = (obj.get("metadata") or {}).get("resourceVersion")
        if kind == "BOOKMARK":
            self.resource_version = rv or self.resource_version
            return
        if kind not in ("ADDED", "MODIFIED", "DELETED"):
            log.debug("%s: ignoring watch event %s", self.name, kind)
            return
        k, value = key_of(obj), self._convert(obj)
        with self._lock:
            if kind == "DELETED":
                old, new = self.objects.pop(k, None), None
            else:
                old, new = self.objects.get(k), value
                self.objects[k] = value
        if self.counts is None or self.counts(old, new):
            self.changes += 1
        if rv:
            self.resource_version = rv
        if self.on_event is not None:
            self.on_event(str(kind), value)


def _describe(e: Exception) -> str:
    if isinstance(e, ApiException):
        return f"HTTP {e.status} {e.reason}"
    return f"{type(e).__name__}: {e}"
