"""core/v1 Events as the cluster's components write them: the pure part (no store, no clock).

Re-derived from client-go, which every component that writes core/v1 Events goes through:

- `tools/record/event.go` `recorderImpl.makeEvent`/`generateEvent`: the Event is named
  `<object name>.<unix nanoseconds in hex>`, lives in the object's namespace (`default` for a
  cluster-scoped object), has count 1 and firstTimestamp = lastTimestamp, the recorder's
  `source`, and reportingComponent/reportingInstance = source component/host.
- `tools/reference/ref.go` `GetReference` (and `GetPartialReference`, which the kubelet uses with a
  `spec.containers{name}` fieldPath): kind, namespace, name, uid, apiVersion, resourceVersion.
- `tools/record/events_cache.go` `EventCorrelator`: events that differ only by message are
  aggregated after 10 in 10 minutes into one "(combined from similar events): ..." Event;
  identical events (same source, object, type, reason, message) bump the existing Event's count
  and lastTimestamp instead of creating one; a source may send 25 events about an object at once,
  then one per 5 minutes (token bucket), the rest are dropped. The caches are LRUs of 4096
  entries, as client-go's.

Times are simulated seconds passed in by the caller, so all of this is deterministic.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from app.simulator.workload.clock import rfc3339

MAX_LRU_ENTRIES = 4096  # maxLruCacheEntries
AGGREGATE_MAX_EVENTS = 10  # defaultAggregateMaxEvents
AGGREGATE_INTERVAL = 600.0  # defaultAggregateIntervalInSeconds
SPAM_BURST = 25  # defaultSpamBurst
SPAM_QPS = 1.0 / 300.0  # defaultSpamQPS
COMBINED_PREFIX = "(combined from similar events): "  # EventAggregatorByReasonMessageFunc

Event = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Source:
    """v1.EventSource of a recorder: the component, and for kubelets the node."""

    component: str
    host: str = ""


# --- references and events ----------------------------------------------------------------------


def object_reference(obj: Mapping[str, Any], field_path: str = "") -> dict[str, str]:
    """GetReference (GetPartialReference with a fieldPath) of a stored object."""
    meta = obj.get("metadata") or {}
    ref = {
        "kind": str(obj.get("kind") or ""),
        "namespace": str(meta.get("namespace") or ""),
        "name": str(meta.get("name") or ""),
        "uid": str(meta.get("uid") or ""),
        "apiVersion": str(obj.get("apiVersion") or ""),
        "resourceVersion": str(meta.get("resourceVersion") or ""),
    }
    if field_path:
        ref["fieldPath"] = field_path
    return {k: v for k, v in ref.items() if v}


def node_reference(node: str) -> dict[str, str]:
    """The kubelet's `nodeRef` (pkg/kubelet/kubelet.go NewMainKubelet): kind Node, the node's
    name, and the name again as uid; no apiVersion. `kubectl describe node` looks its Events up
    by the node's uid and then by this name-as-uid."""
    return {"kind": "Node", "name": node, "uid": node}


def container_field_path(pod: Mapping[str, Any], container: str) -> str:
    """kubecontainer.GenerateContainerRef's fieldPath for a container of the pod."""
    spec = pod.get("spec") or {}
    for kind in ("containers", "initContainers"):
        if any(c.get("name") == container for c in spec.get(kind) or []):
            return f"spec.{kind}{{{container}}}"
    return f"spec.containers{{{container}}}"


def event_name(object_name: str, nanos: int) -> str:
    return f"{object_name}.{nanos:x}"


def make_event(
    ref: Mapping[str, str],
    type_: str,
    reason: str,
    message: str,
    source: Source,
    at: float,
    nanos: int,
) -> Event:
    """makeEvent + generateEvent: what a recorder sends for one occurrence at `at`."""
    ts = rfc3339(at)
    src = {"component": source.component}
    if source.host:
        src["host"] = source.host
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {
            "name": event_name(ref.get("name", ""), nanos),
            "namespace": ref.get("namespace") or "default",
        },
        "involvedObject": dict(ref),
        "reason": reason,
        "message": message,
        "source": src,
        "firstTimestamp": ts,
        "lastTimestamp": ts,
        "count": 1,
        "type": type_,
        "eventTime": None,
        "reportingComponent": source.component,
        "reportingInstance": source.host,
    }


def _source_of(event: Event) -> tuple[str, str]:
    src = event.get("source") or {}
    return str(src.get("component") or ""), str(src.get("host") or "")


def _object_key(event: Event, *, field_path: bool) -> list[str]:
    ref = event["involvedObject"]
    parts = [ref.get("kind", ""), ref.get("namespace", ""), ref.get("name", "")]
    if field_path:
        parts.append(ref.get("fieldPath", ""))
    return [*parts, ref.get("uid", ""), ref.get("apiVersion", "")]


def event_key(event: Event) -> str:
    """getEventKey: source, involved object (fieldPath included), type, reason, message."""
    return "".join(
        [
            *_source_of(event),
            *_object_key(event, field_path=True),
            event["type"],
            event["reason"],
            event["message"],
        ]
    )


def spam_key(event: Event) -> str:
    """getSpamKey: source and involved object (no fieldPath)."""
    return "".join([*_source_of(event), *_object_key(event, field_path=False)])


def aggregate_key(event: Event) -> str:
    """EventAggregatorByReasonFunc's aggregate key (the message is the local key)."""
    return "".join(
        [
            *_source_of(event),
            *_object_key(event, field_path=False),
            event["type"],
            event["reason"],
            event.get("reportingComponent") or "",
            event.get("reportingInstance") or "",
        ]
    )


# --- the correlator -----------------------------------------------------------------------------

V = TypeVar("V")


class _Lru(Generic[V]):
    """groupcache/lru as client-go uses it: Get refreshes, Add evicts the oldest past the size."""

    def __init__(self, size: int) -> None:
        self.size = size
        self._items: OrderedDict[str, V] = OrderedDict()

    def get(self, key: str) -> V | None:
        value = self._items.get(key)
        if value is not None:
            self._items.move_to_end(key)
        return value

    def add(self, key: str, value: V) -> None:
        self._items[key] = value
        self._items.move_to_end(key)
        while len(self._items) > self.size:
            self._items.popitem(last=False)

    def __len__(self) -> int:
        return len(self._items)


@dataclass(slots=True)
class _Aggregate:
    # localKeys, in insertion order: PopAny may drop any; dropping the oldest keeps runs repeatable.
    messages: dict[str, None] = field(default_factory=dict)
    last: float = float("-inf")


@dataclass(frozen=True, slots=True)
class _Observed:
    count: int
    first: str
    name: str


@dataclass(slots=True)
class _Bucket:
    """flowcontrol's token bucket (starts full)."""

    tokens: float
    last: float

    def try_accept(self, now: float, qps: float, burst: int) -> bool:
        self.tokens = min(float(burst), self.tokens + max(now - self.last, 0.0) * qps)
        self.last = max(self.last, now)
        if self.tokens >= 1.0:
            self.tokens -= 1.0
            return True
        return False


@dataclass(frozen=True, slots=True)
class Correlated:
    """What to send: the Event, and whether it updates an existing one (by name) rather than
    creating it; an update sets count, lastTimestamp and message (the recorder's patch)."""

    event: Event
    update: bool


class EventCorrelator:
    """NewEventCorrelator's defaults: aggregate, observe (dedup with count), then spam-filter."""

    def __init__(
        self,
        *,
        cache_size: int = MAX_LRU_ENTRIES,
        burst: int = SPAM_BURST,
        qps: float = SPAM_QPS,
        max_events: int = AGGREGATE_MAX_EVENTS,
        max_interval: float = AGGREGATE_INTERVAL,
    ) -> None:
        self.burst, self.qps = burst, qps
        self.max_events, self.max_interval = max_events, max_interval
        self._aggregates: _Lru[_Aggregate] = _Lru(cache_size)
        self._observed: _Lru[_Observed] = _Lru(cache_size)
        self._spam: _Lru[_Bucket] = _Lru(cache_size)

    def correlate(self, event: Event, at: float, nanos: int) -> Correlated | None:
        """The event to write for an occurrence at `at`, or None if the spam filter drops it.
        `nanos` names a new aggregate Event (the recorder's clock in nanoseconds)."""
        aggregated, key = self._aggregate(event, at, nanos)
        observed, update = self._observe(aggregated, key)
        bucket = self._spam.get(spam_key(observed))
        if bucket is None:
            bucket = _Bucket(float(self.burst), at)
        accepted = bucket.try_accept(at, self.qps, self.burst)
        self._spam.add(spam_key(observed), bucket)
        return Correlated(observed, update) if accepted else None

    def _aggregate(self, event: Event, at: float, nanos: int) -> tuple[Event, str]:
        """EventAggregate: the (possibly aggregate) event and its cache key."""
        group = aggregate_key(event)
        record = self._aggregates.get(group)
        if record is None or at - record.last > self.max_interval:
            record = _Aggregate()
        record.messages[event["message"]] = None
        record.last = at
        self._aggregates.add(group, record)
        if len(record.messages) < self.max_events:
            return event, event_key(event)
        del record.messages[next(iter(record.messages))]
        ts = rfc3339(at)
        ref = event["involvedObject"]
        combined: Event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {
                "name": event_name(ref.get("name", ""), nanos),
                "namespace": event["metadata"]["namespace"],
            },
            "involvedObject": dict(ref),
            "reason": event["reason"],
            "message": COMBINED_PREFIX + event["message"],
            "source": dict(event.get("source") or {}),
            "firstTimestamp": ts,
            "lastTimestamp": ts,
            "count": 1,
            "type": event["type"],
            "eventTime": None,
            "reportingComponent": "",
            "reportingInstance": "",
        }
        return combined, group

    def _observe(self, event: Event, key: str) -> tuple[Event, bool]:
        """eventLogger.eventObserve: a repeat takes the first one's name, firstTimestamp and
        count + 1."""
        last = self._observed.get(key)
        update = last is not None
        if last is not None:
            event = {
                **event,
                "metadata": {**event["metadata"], "name": last.name},
                "firstTimestamp": last.first,
                "count": last.count + 1,
            }
        self._observed.add(
            key, _Observed(event["count"], event["firstTimestamp"], event["metadata"]["name"])
        )
        return event, update
