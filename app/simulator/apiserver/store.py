"""Versioned object storage: the simulator's etcd and watch cache in one.

Every write bumps one global resourceVersion and appends one watch event, so a watch can resume
from any resourceVersion still in the event window and gets 410 Gone for older ones, as with a
compacted etcd. Objects are kept with their JSON bytes, serialised once on write, so that LIST and
WATCH only join bytes: no per-request copies or re-encoding, which is what makes 150,000 pods
cheap to serve. Stored dicts are never mutated; writers build a new dict and replace the entry.
"""

from __future__ import annotations

import bisect
import json
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, NamedTuple

from app.simulator.apiserver import errors
from app.simulator.apiserver.resources import ResourceType

_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False, check_circular=False)


def dumps(obj: Any) -> bytes:
    return _ENCODER.encode(obj).encode()


@dataclass(frozen=True, slots=True)
class Entry:
    obj: dict[str, Any]
    raw: bytes
    rv: int

    def copy(self) -> dict[str, Any]:
        """A private deep copy to edit (parsing the bytes is faster than copy.deepcopy)."""
        obj: dict[str, Any] = json.loads(self.raw)
        return obj


class WatchEvent(NamedTuple):
    rv: int
    type: str  # ADDED, MODIFIED, DELETED
    rt: ResourceType
    entry: Entry
    prev: Entry | None


Listener = Callable[[WatchEvent], None]
IndexFn = Callable[[dict[str, Any]], Iterable[str]]


def key_of(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


class Store:
    def __init__(self, watch_window: int = 20_000) -> None:
        self.lock = threading.RLock()
        self.changed = threading.Condition(self.lock)
        self.rv = 1
        self.watch_window = watch_window
        self._objects: dict[ResourceType, dict[str, Entry]] = {}
        self._keys: dict[ResourceType, list[str]] = {}
        self._log: list[WatchEvent] = []
        self._log_base = 2  # resourceVersion of _log[0]
        self._listeners: list[Listener] = []
        self._indexes: dict[tuple[ResourceType, str], tuple[IndexFn, dict[str, set[str]]]] = {}
        self.closed = False

    # --- reads ----------------------------------------------------------------------------

    def get(self, rt: ResourceType, namespace: str, name: str) -> Entry | None:
        return self._objects.get(rt, {}).get(key_of(namespace, name))

    def require(self, rt: ResourceType, namespace: str, name: str) -> Entry:
        entry = self.get(rt, namespace, name)
        if entry is None:
            raise errors.not_found(rt, name)
        return entry

    def _range(self, rt: ResourceType, namespace: str | None, after: str | None) -> slice:
        keys = self._keys.get(rt, [])
        lo, hi = 0, len(keys)
        if namespace is not None:
            lo = bisect.bisect_left(keys, namespace + "/")
            hi = bisect.bisect_left(keys, namespace + "0")  # "0" sorts right after "/"
        if after is not None:
            lo = max(lo, bisect.bisect_right(keys, after))
        return slice(lo, max(lo, hi))

    def scan(
        self, rt: ResourceType, namespace: str | None = None, after: str | None = None
    ) -> tuple[list[tuple[str, Entry]], int]:
        """Entries in key order (namespace/name), optionally after a key, with the store's rv."""
        with self.lock:
            objects = self._objects.get(rt, {})
            keys = self._keys.get(rt, [])[self._range(rt, namespace, after)]
            return [(k, objects[k]) for k in keys], self.rv

    def iter_scan(
        self, rt: ResourceType, namespace: str | None = None, after: str | None = None
    ) -> tuple[Iterator[tuple[str, Entry]], int, int]:
        """Like scan, but entries are looked up as they are consumed: a LIST with a limit
        touches `limit` objects, not the whole range. Also returns the range's size."""
        with self.lock:
            objects = self._objects.get(rt, {})
            keys = self._keys.get(rt, [])[self._range(rt, namespace, after)]
            rv = self.rv

        def entries() -> Iterator[tuple[str, Entry]]:
            for k in keys:
                entry = objects.get(k)
                if entry is not None:  # deleted since the range was taken
                    yield k, entry

        return entries(), rv, len(keys)

    def index_scan(
        self, rt: ResourceType, index: str, value: str, namespace: str | None, after: str | None
    ) -> tuple[Iterator[tuple[str, Entry]], int, int]:
        """iter_scan restricted to an index value (e.g. pods on one node)."""
        with self.lock:
            objects = self._objects.get(rt, {})
            prefix = None if namespace is None else namespace + "/"
            keys = sorted(
                k
                for k in self._indexes[(rt, index)][1].get(value, ())
                if (prefix is None or k.startswith(prefix)) and (after is None or k > after)
            )
            found = [(k, objects[k]) for k in keys if k in objects]
            return iter(found), self.rv, len(found)

    def count(self, rt: ResourceType) -> int:
        return len(self._objects.get(rt, {}))

    def by_index(self, rt: ResourceType, index: str, value: str) -> list[Entry]:
        with self.lock:
            _, table = self._indexes[(rt, index)]
            objects = self._objects.get(rt, {})
            return [objects[k] for k in sorted(table.get(value, ())) if k in objects]

    def index_values(self, rt: ResourceType, index: str) -> list[str]:
        with self.lock:
            return [v for v, keys in self._indexes[(rt, index)][1].items() if keys]

    # --- writes ---------------------------------------------------------------------------

    def add_listener(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def add_index(self, rt: ResourceType, name: str, fn: IndexFn) -> None:
        table: dict[str, set[str]] = {}
        for key, entry in self._objects.get(rt, {}).items():
            for value in fn(entry.obj):
                table.setdefault(value, set()).add(key)
        self._indexes[(rt, name)] = (fn, table)

    def create(self, rt: ResourceType, obj: dict[str, Any], now: str) -> Entry:
        """Store a new object (taking ownership of `obj`), filling uid, timestamp and rv."""
        meta = obj["metadata"]
        key = key_of(meta.get("namespace", ""), meta["name"])
        with self.lock:
            if key in self._objects.get(rt, {}):
                raise errors.already_exists(rt, meta["name"])
            meta.setdefault("uid", str(uuid.uuid4()))
            meta.setdefault("creationTimestamp", now)
            return self._write(rt, key, obj, "ADDED", None)

    def replace(
        self, rt: ResourceType, obj: dict[str, Any], expected_rv: str | None = None
    ) -> Entry:
        """Replace an object; a stale `expected_rv` is a 409 Conflict (optimistic concurrency)."""
        meta = obj["metadata"]
        key = key_of(meta.get("namespace", ""), meta["name"])
        with self.lock:
            prev = self._objects.get(rt, {}).get(key)
            if prev is None:
                raise errors.not_found(rt, meta["name"])
            if expected_rv and expected_rv != str(prev.rv):
                raise errors.conflict(rt, meta["name"])
            for field in ("uid", "creationTimestamp"):
                meta[field] = prev.obj["metadata"][field]
            return self._write(rt, key, obj, "MODIFIED", prev)

    def update(
        self, rt: ResourceType, namespace: str, name: str, mutate: Callable[[dict[str, Any]], Any]
    ) -> Entry | None:
        """Read-modify-write under the lock; `mutate` returning False means no change."""
        with self.lock:
            prev = self.get(rt, namespace, name)
            if prev is None:
                return None
            obj = prev.copy()
            if mutate(obj) is False:
                return prev
            return self._write(rt, key_of(namespace, name), obj, "MODIFIED", prev)

    def delete(self, rt: ResourceType, namespace: str, name: str) -> Entry:
        key = key_of(namespace, name)
        with self.lock:
            prev = self._objects.get(rt, {}).get(key)
            if prev is None:
                raise errors.not_found(rt, name)
            self.rv += 1
            obj = prev.copy()
            obj["metadata"]["resourceVersion"] = str(self.rv)
            entry = Entry(obj, dumps(obj), self.rv)
            del self._objects[rt][key]
            keys = self._keys[rt]
            del keys[bisect.bisect_left(keys, key)]
            self._reindex(rt, key, prev.obj, None)
            self._publish(WatchEvent(self.rv, "DELETED", rt, entry, prev))
            return entry

    def bulk_load(self, rt: ResourceType, objs: Iterable[dict[str, Any]], now: str) -> None:
        """Load many pre-existing objects at startup: no watch events, one sort at the end."""
        with self.lock:
            table = self._objects.setdefault(rt, {})
            for obj in objs:
                meta = obj["metadata"]
                meta.setdefault("uid", str(uuid.uuid4()))
                meta.setdefault("creationTimestamp", now)
                self.rv += 1
                meta["resourceVersion"] = str(self.rv)
                key = key_of(meta.get("namespace", ""), meta["name"])
                table[key] = Entry(obj, dumps(obj), self.rv)
                self._reindex(rt, key, None, obj)
            self._keys[rt] = sorted(table)
            # Events before the load are compacted: a watch from before it gets 410 Gone.
            self._log.clear()
            self._log_base = self.rv + 1

    def _write(
        self, rt: ResourceType, key: str, obj: dict[str, Any], type_: str, prev: Entry | None
    ) -> Entry:
        self.rv += 1
        obj["metadata"]["resourceVersion"] = str(self.rv)
        entry = Entry(obj, dumps(obj), self.rv)
        table = self._objects.setdefault(rt, {})
        if prev is None:
            bisect.insort(self._keys.setdefault(rt, []), key)
        table[key] = entry
        self._reindex(rt, key, prev.obj if prev else None, obj)
        self._publish(WatchEvent(self.rv, type_, rt, entry, prev))
        return entry

    def _reindex(
        self, rt: ResourceType, key: str, old: dict[str, Any] | None, new: dict[str, Any] | None
    ) -> None:
        for (irt, _), (fn, table) in self._indexes.items():
            if irt is not rt and irt != rt:  # a custom resource's type is rebuilt on updates
                continue
            for value in fn(old) if old is not None else ():
                table.get(value, set()).discard(key)
            for value in fn(new) if new is not None else ():
                table.setdefault(value, set()).add(key)

    def _publish(self, event: WatchEvent) -> None:
        if not self._log:
            self._log_base = event.rv
        self._log.append(event)
        if len(self._log) > 2 * self.watch_window:
            drop = len(self._log) - self.watch_window
            del self._log[:drop]
            self._log_base += drop
        for listener in self._listeners:
            listener(event)
        self.changed.notify_all()

    # --- watch ----------------------------------------------------------------------------

    def events_after(self, rv: int) -> list[WatchEvent]:
        """Events with resourceVersion > rv; 410 Gone if some of them were compacted away."""
        with self.lock:
            if rv >= self.rv:
                return []
            if rv + 1 < self._log_base:
                raise errors.gone(f"too old resource version: {rv} ({self._log_base - 1})")
            return self._log[rv + 1 - self._log_base :]

    def compacted_rv(self) -> int:
        return self._log_base - 1

    def wait(self, rv: int, timeout: float) -> None:
        """Block until the store moves past `rv`, the timeout passes, or the store closes."""
        with self.lock:
            if self.rv <= rv and not self.closed:
                self.changed.wait(timeout)

    def wait_fresh(self, rv: int, timeout: float = 3.0) -> None:
        """The watch cache's waitUntilFreshAndBlock (apiserver pkg/storage/cacher/
        watch_cache.go): wait up to 3 s for the store to reach `rv`, then 504 "Too large
        resource version"."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while self.rv < rv and not self.closed:
                left = deadline - time.monotonic()
                if left <= 0:
                    raise errors.too_large_resource_version(rv, self.rv)
                self.changed.wait(left)

    def close(self) -> None:
        with self.lock:
            self.closed = True
            self.changed.notify_all()
