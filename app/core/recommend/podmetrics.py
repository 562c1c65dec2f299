"""The metrics.k8s.io PodMetrics LIST, read into the few fields the recommender uses (no I/O).

A PodMetrics item (k8s.io/metrics pkg/apis/metrics/v1beta1 PodMetrics) carries its pod's
name and namespace in `metadata`, the scrape's `timestamp`, and per container its `name` and
`usage` (a ResourceList: quantities by resource name). Nothing else of it is read: not its
labels, window or creation time.

`decode_pod_metrics_list` reads the LIST's bytes straight into those fields (msgspec, typed:
the rest of each item is skipped as it is read, so the 55 MB a 150,000-pod cluster sends each
run become one small object per item and container instead of the dozen dicts and strings each
item is as plain JSON; benchmarks/metrics_floor.py measures it). A LIST whose shape is not the
one above (a field of another type, a null where an object belongs), or whose text the typed
reader refuses (an escaped lone surrogate), is read as plain JSON instead and taken item by item
(`pod_metrics_of`), each field as the typed reader gives it where it can: an item or container
that is not an object is skipped and logged, the rest is read. Both ways give the same items
(tests/core/recommend/test_podmetrics.py checks it on generated LISTs).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from typing import Any

import msgspec
import orjson

log = logging.getLogger(__name__)


# gc=False: these hold no reference cycles (strings, a dict of quantities, a list of
# containers), so the cyclic collector need not track the 300,000 of them a run reads.
class PodMetricsMeta(msgspec.Struct, frozen=True, gc=False):
    name: str = ""
    namespace: str = ""


# A usage's resource not sent (a null one is None)
ABSENT: Any = msgspec.UNSET


class ContainerUsage(msgspec.Struct, frozen=True, gc=False):
    """The quantities of the two resources the recommender reads, as sent (read by
    app.core.recommend.samples, which logs and skips a value that is not a quantity); other
    resources are not read. Fields, not a dict: 300,000 of them a run, decoded faster so."""

    cpu: Any = ABSENT
    memory: Any = ABSENT


class ContainerMetrics(msgspec.Struct, frozen=True, gc=False):
    name: str = ""
    usage: ContainerUsage = msgspec.field(default_factory=ContainerUsage)


class PodMetrics(msgspec.Struct, frozen=True, gc=False):
    metadata: PodMetricsMeta = msgspec.field(default_factory=PodMetricsMeta)
    timestamp: Any = None  # RFC 3339 text; anything else is logged and skipped when read
    containers: list[ContainerMetrics] = msgspec.field(default_factory=list)


class _PodMetricsList(msgspec.Struct, frozen=True):
    items: list[PodMetrics] | None = None


_TYPED = msgspec.json.Decoder(_PodMetricsList)


def decode_pod_metrics_list(body: bytes) -> list[PodMetrics]:
    """The items of a PodMetricsList's JSON text. Text that is not JSON raises json.loads'
    error (JSONDecodeError: where and what); JSON that is not an object raises ValueError."""
    try:
        return typed_items(body)
    except msgspec.MsgspecError as e:
        log.debug("PodMetrics LIST read as plain JSON: %s", e)
    return generic_items(body)


def typed_items(body: bytes) -> list[PodMetrics]:
    """The typed reading alone: raises msgspec's error when the LIST is not in the usual shape."""
    return _TYPED.decode(body).items or []


def generic_items(body: bytes) -> list[PodMetrics]:
    """The LIST read as plain JSON (orjson, or json.loads for what orjson refuses, such as an
    escaped lone surrogate), each item as `pod_metrics_of` reads it."""
    try:
        doc = orjson.loads(body)
    except orjson.JSONDecodeError:
        doc = json.loads(body)
    if not isinstance(doc, Mapping):
        raise ValueError(f"a PodMetricsList is a JSON object, got {type(doc).__name__}")
    items = doc.get("items")
    if items is None:
        return []
    if not isinstance(items, list):
        raise ValueError(f"a PodMetricsList's items is a list, got {type(items).__name__}")
    out = []
    for i, obj in enumerate(items):
        item = pod_metrics_of(obj, i)
        if item is not None:
            out.append(item)
    return out


def pod_metrics_of(obj: Any, index: int | None = None) -> PodMetrics | None:
    """One PodMetrics item read from plain JSON, as the typed reading would give it; None when
    it is not an object (logged). A missing or null field takes its default (an empty name, no
    containers, no usage); a name that is not text is read as its text, and a container or a
    usage that is not an object is skipped (logged)."""
    if not isinstance(obj, Mapping):
        what = f"PodMetrics item {index}" if index is not None else "PodMetrics item"
        log.warning("%s is not an object (%s); skipped", what, type(obj).__name__)
        return None
    meta = obj.get("metadata")
    meta = meta if isinstance(meta, Mapping) else {}
    name, namespace = _text(meta.get("name")), _text(meta.get("namespace"))
    where = f"PodMetrics {namespace}/{name}"
    containers = []
    raw = obj.get("containers")
    for c in raw if isinstance(raw, list) else ():
        if not isinstance(c, Mapping):
            log.warning("%s: a container that is not an object (%s); skipped", where, c)
            continue
        usage = c.get("usage")
        if usage is not None and not isinstance(usage, Mapping):
            log.warning(
                "%s container %s: usage %r is not an object; skipped", where, c.get("name"), usage
            )
            continue
        usage = usage or {}
        read = ContainerUsage(usage.get("cpu", ABSENT), usage.get("memory", ABSENT))
        containers.append(ContainerMetrics(_text(c.get("name")), read))
    return PodMetrics(PodMetricsMeta(name, namespace), obj.get("timestamp"), containers)


def _text(value: Any) -> str:
    """A name as text: missing, null or empty is "" (the typed reading's default)."""
    if not value:
        return ""
    return value if isinstance(value, str) else str(value)
