"""Patches computed once per pod shape: every pod of a ReplicaSet gets the same answer.

`build_patch` (app.core.sizing.patch) is a pure function of the pod's containers' resources, its
pod-level resources and the three annotations it reads and writes, plus the policy, the
workload's recommendations, the resources another controller owns and the LimitRange items. The
pods a controller creates from one template differ only in what it ignores (name, uid, the
generated suffix), so the webhook (one review per new pod) and the updater (one patch per live pod
to rank them) would compute the same patch thousands of times.

`PatchCache.build_patch` answers from the cache when every input is the same:
- the pod's part that build_patch reads is compared by value (`pod_inputs`: that part as JSON
  text, so `1`, `1.0` and `true` differ as they do for the parser; a pod that is not plain JSON
  values, e.g. another Mapping type, is never cached);
- the policy, recommendations, exclusions and LimitRange items by identity: the caches that hand
  them out (the webhook's Snapshot, the LimitRange informer) build new objects for new values and
  never change one in place. Each entry keeps references to the objects of its key, so an id in
  a key always names the object it was made from (a freed object's id reused by a new one cannot
  match an entry, which keeps the old object alive).
A patch that raises (PodInvalid) is not cached; the next call raises again. The cache holds at
most `size` entries and starts over when full (entries of an old snapshot are dropped with it).
The answer is shared between callers: read it, never change it.
"""

from __future__ import annotations

import json
from collections.abc import Collection, Hashable, Mapping, Sequence
from typing import Any

from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.sizing.boost import BOOST_ANNOTATION, BoostOptions
from app.core.sizing.limitrange import LimitRangeItem, QuantityParser
from app.core.sizing.patch import (
    OBSERVED_ANNOTATION,
    UPDATES_ANNOTATION,
    PodPatch,
    build_patch,
)

ANNOTATIONS = (UPDATES_ANNOTATION, OBSERVED_ANNOTATION, BOOST_ANNOTATION)  # the ones it reads
NO_RECOMMENDATIONS: Mapping[str, Recommendation] = {}  # one object, so that it can hit


def _container(c: Any) -> Any:
    if not isinstance(c, dict):
        return ["not-a-container", c]
    return [c.get("name"), c.get("restartPolicy"), c.get("resources")]


def _containers(items: Any) -> Any:
    return [_container(c) for c in items] if isinstance(items, list) else items


def pod_inputs(pod: Any) -> str | None:
    """What build_patch reads of `pod`, as JSON text (types kept: `1`, `1.0` and `true` differ);
    None when the pod cannot be keyed (not JSON values: it is then never cached)."""
    if not isinstance(pod, dict):
        return None
    spec = pod.get("spec")
    if isinstance(spec, dict):
        spec_key = [
            _containers(spec.get("containers")),
            _containers(spec.get("initContainers")),
            spec.get("resources"),
        ]
    else:
        spec_key = ["not-a-spec", spec]
    meta = pod.get("metadata")
    annotations = meta.get("annotations") if isinstance(meta, dict) else None
    if not isinstance(meta, dict):
        state: Any = "no-metadata"
    elif not isinstance(annotations, dict):
        state = "no-annotations"
    else:
        state = [[k in annotations, annotations.get(k)] for k in ANNOTATIONS]
    try:
        return json.dumps([spec_key, state], separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


# The plain JSON types whose falsy value is unique ([], {}, "", None, False, 0), so that an empty
# part, which the pod cache does not share (app.kube.cluster.Shared), is keyed by its type. Not
# float: 0.0 and -0.0 are both falsy and JSON text tells them apart.
_ONE_FALSY = (list, dict, str, type(None), bool, int)


def _part(value: Any) -> int | str:
    return type(value).__name__ if not value and type(value) in _ONE_FALSY else id(value)


def shared_key(pod: Any) -> Hashable | None:
    """A key that is equal for two pods whose parts build_patch reads (containers, init
    containers, pod-level resources, annotations) are the SAME objects: the pods of one template
    in the pod cache, which keeps equal parts once (app.kube.cluster.Shared). Equal keys mean
    equal `pod_inputs`, as long as both pods are alive (an id names one object only while it
    lives: keep a pod of each key) and nothing changes them in place; pods with equal but
    distinct parts get different keys (then pod_inputs, by value, still finds them equal).
    None when `pod` is not a dict with dict metadata and spec."""
    if not isinstance(pod, dict):
        return None
    spec, meta = pod.get("spec"), pod.get("metadata")
    if not isinstance(spec, dict) or not isinstance(meta, dict):
        return None
    return (
        _part(spec.get("containers")),
        _part(spec.get("initContainers")),
        _part(spec.get("resources")),
        _part(meta.get("annotations")),
    )


def input_key(pod: Any, refs: tuple[object, ...]) -> Hashable | None:
    """A cache key for what is computed from `pod` and `refs`: pod_inputs(pod) by value, each of
    `refs` by identity (the entry must hold `refs`, so that an id names the same object while it
    lives). None when the pod cannot be keyed."""
    inputs = pod_inputs(pod)
    return None if inputs is None else (inputs, *map(id, refs))


class ByRelease:
    """A cache of what is sized by the API server's rules, which differ by its minor version
    (app.kube.version): `release` is set once known, and a change empties the cache (`_forget`),
    since its entries were sized by the other release's rules."""

    _release: int | None = None

    @property
    def release(self) -> int | None:
        return self._release

    @release.setter
    def release(self, value: int | None) -> None:
        if value != self._release:
            self._release = value
            self._forget()

    def _forget(self) -> None:
        raise NotImplementedError


class PatchCache(ByRelease):
    """build_patch with its answers kept (see the module's docstring). `boost` and `parse` are
    the cache's own: they are the same for every call."""

    def __init__(
        self, *, parse: QuantityParser, boost: BoostOptions | None = None, size: int = 4096
    ) -> None:
        self.parse, self.boost, self.size = parse, boost, size
        self._entries: dict[Hashable, tuple[tuple[object, ...], PodPatch]] = {}
        self.hits = self.misses = 0

    def _forget(self) -> None:
        self._entries = {}

    def build_patch(
        self,
        pod: Mapping[str, Any],
        recommendations: Mapping[str, Recommendation],
        policy: Policy | None,
        limit_ranges: Sequence[LimitRangeItem] = (),
        *,
        excluded: Mapping[str, Collection[str]] | None = None,
    ) -> PodPatch:
        """The same PodPatch build_patch returns for these arguments (or raises as it does)."""
        refs = (recommendations, policy, limit_ranges, excluded)
        key = input_key(pod, refs)
        if key is not None:
            found = self._entries.get(key)
            if found is not None:
                self.hits += 1
                return found[1]
        self.misses += 1
        result = build_patch(
            pod,
            recommendations,
            policy,
            limit_ranges,
            parse=self.parse,
            excluded=excluded,
            boost=self.boost,
            release=self.release,
        )
        if key is not None:
            entries = self._entries
            if len(entries) >= self.size:
                entries = self._entries = {}  # another thread may still read the old one
            entries[key] = (refs, result)
        return result
