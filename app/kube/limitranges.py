"""Each namespace's LimitRange items, kept in memory for the webhook by a list+watch informer.

The webhook caps new requests at the namespace's LimitRange (kube-apiserver would refuse a pod
outside it), and must not ask the API server while a pod waits: a background informer of all
LimitRanges keeps `namespace -> items` current, and a lookup is one dict read. LimitRanges are few
and small, so the whole objects are parsed once per change.

When they cannot be listed (no RBAC permission, API server unreachable) the webhook keeps working
without LimitRange capping: that is logged once, and once more when the list works again.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from itertools import chain
from typing import Any

from kubernetes import client

from app.core.quantity import amount
from app.core.sizing.limitrange import LimitRangeItem, parse_limit_range
from app.kube.informer import Informer, Obj, key_of

log = logging.getLogger(__name__)


class LimitRangeCache:
    """`cache(namespace)` -> that namespace's LimitRange items (empty when none or unknown)."""

    def __init__(self, api: client.ApiClient, watch_timeout: int = 300) -> None:
        core = client.CoreV1Api(api)
        self._by_object: dict[tuple[str, str], tuple[LimitRangeItem, ...]] = {}
        self._by_namespace: dict[str, tuple[LimitRangeItem, ...]] = {}
        self.failing = False  # the last LIST failed: no capping until one works
        self.informer = Informer(
            "limitranges",
            core.list_limit_range_for_all_namespaces,
            watch_timeout=watch_timeout,
            on_event=self._on_event,
        )
        self._list_fn, self.informer.list_fn = self.informer.list_fn, self._list

    def __call__(self, namespace: str) -> Sequence[LimitRangeItem]:
        return self._by_namespace.get(namespace, ())

    @property
    def synced(self) -> bool:
        return self.informer.synced.is_set()

    def start(self) -> LimitRangeCache:
        self.informer.start()
        return self

    def stop(self) -> None:
        self.informer.stop()

    def wait_synced(self, timeout: float) -> bool:
        return self.informer.wait_synced(timeout)

    def _list(self, **kwargs: Any) -> Any:
        """The client's list function, noting (once per outage) that capping is off. A sync is a
        LIST or a watch-list (`sendInitialEvents`, the informer's first try); a watch-list the
        server refuses (400/403/422: no WatchList there) is no outage, the LIST after it decides."""
        sync = not kwargs.get("watch") or bool(kwargs.get("send_initial_events"))
        try:
            resp = self._list_fn(**kwargs)
        except Exception as e:
            refused = kwargs.get("watch") and getattr(e, "status", None) in (400, 403, 422)
            if sync and not refused and not self.failing:
                self.failing = True
                log.warning(
                    "cannot list LimitRanges (%s): until it can, the webhook sizes pods without "
                    "LimitRange capping and the updater touches no pod",
                    _short(e),
                )
            raise
        if sync and self.failing:
            self.failing = False
            log.info("LimitRanges listed again: requests are capped at them")
        return resp

    def _on_event(self, kind: str, obj: Obj) -> None:
        ns, name = key_of(obj)
        if kind == "DELETED":
            self._by_object.pop((ns, name), None)
        else:
            self._by_object[(ns, name)] = tuple(parse_limit_range(obj, amount))
        items = tuple(
            chain.from_iterable(v for (o_ns, _), v in sorted(self._by_object.items()) if o_ns == ns)
        )
        # One assignment: a reader sees the old tuple or the new one, never a half-built one.
        if items:
            self._by_namespace = {**self._by_namespace, ns: items}
        elif ns in self._by_namespace:
            self._by_namespace = {k: v for k, v in self._by_namespace.items() if k != ns}


def _short(e: Exception) -> str:
    status = getattr(e, "status", None)
    if status is not None:
        return f"HTTP {status} {getattr(e, 'reason', '')}".strip()
    return f"{type(e).__name__}: {e}"
