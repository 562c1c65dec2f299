"""The metrics wire format -> recommender samples (no I/O): PodMetrics items, OOM kills.

The one place that reads the usage of metrics.k8s.io PodMetrics items (app.kube.cluster fetches
the LIST, app.core.recommend.podmetrics decodes it into the items' fields) and a pod's container
statuses for OOM kills, from its view (app.core.pods.PodView).

CPU samples are weighted by the container's current CPU request, so the pod object is needed next
to its metrics. An OOM kill shows up as a container whose lastState is `terminated` with reason
`OOMKilled` and whose restartCount grew since we last looked; the memory it is taken to have
used is its request (or, without one, its limit), as VPA's recommender takes it (its OOM observer,
pkg/recommender/input/oom/observer.go, reads the pod's requests): the bump is VPA's bump, which
tests/realkube/test_peers_vpa.py checks against the real VPA.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, NamedTuple

import numpy as np

from app.core.pods import ContainerResources, Obj, PodView, parse_time
from app.core.quantity import amount_float
from app.core.recommend.array_model import SampleColumns
from app.core.recommend.podmetrics import ABSENT, PodMetrics, pod_metrics_of
from app.core.workload_key import WorkloadKey

log = logging.getLogger(__name__)


class Usage(NamedTuple):
    """One container's usage in one PodMetrics item (a tuple: 150,000 pods make 300,000 a run,
    and a frozen dataclass costs several times as much to build)."""

    pod: str
    container: str
    time: float
    cpu_cores: float | None
    memory_bytes: float | None


@dataclass(frozen=True)
class OomKill:
    pod: str
    container: str
    time: float
    memory_bytes: float


def usage_from_metrics(item: PodMetrics | Obj) -> list[Usage]:
    """One PodMetrics item -> a usage per container; malformed values are skipped and logged.
    The item as decode_pod_metrics_list reads it, or as plain JSON (read as it reads that)."""
    if not isinstance(item, PodMetrics):
        read = pod_metrics_of(item)
        if read is None:
            return []
        item = read
    return [Usage(*u) for u in _usages(item)]


# One PodMetrics container's usage as raw_usages appends it: (workload, pod, container, time,
# CPU as sent, CPU request in cores, memory as sent), a quantity ABSENT when not sent; parsed,
# column by column, into the fields of ArrayModel's Sample (UsageColumns).
RawUsage = tuple[WorkloadKey, str, str, float, Any, float, Any]


def raw_usages(
    w: WorkloadKey,
    item: PodMetrics,
    resources: Mapping[str, ContainerResources],
    out: list[RawUsage],
) -> None:
    """The containers of `item` that are in `resources`, appended to `out` with their quantities
    as sent (parsed_columns parses them, for the whole LIST at once) and the container's CPU
    request in cores (0 without one), which weighs its CPU samples. An item without a valid
    timestamp is logged and skipped, and so is a container not in `resources` whose values are
    not quantities (as usage_from_metrics logs it). One loop, no generator: this runs for every
    item of every LIST."""
    meta = item.metadata
    pod = meta.name
    t = item_time(item.timestamp)
    if t is None:
        log.warning("PodMetrics %s/%s has no valid timestamp; skipped", meta.namespace, pod)
        return
    append, get = out.append, resources.get
    for c in item.containers:
        name, usage = c.name, c.usage
        r = get(name)
        if r is not None:
            append((w, pod, name, t, usage.cpu, (r.cpu_request or 0) / 1000.0, usage.memory))
            continue
        try:  # not fed: read only for what usage_from_metrics would log
            _ = _amount(usage.cpu) if usage.cpu is not ABSENT else None
            _ = _amount(usage.memory) if usage.memory is not ABSENT else None
        except ValueError as e:
            log.warning("PodMetrics %s/%s container %s: %s; skipped", meta.namespace, pod, name, e)


# Of the samples, what the daily profiles fold (app.core.placement.profile.fold_columns), a
# column each: workload, pod, time, CPU cores, memory bytes.
ProfileColumns = tuple[
    Sequence[WorkloadKey], Sequence[str], Sequence[float], Sequence[float | None], Sequence[Any]
]

# The usage samples as columns, one per field of ArrayModel's Sample: add_usage_table's
UsageColumns = SampleColumns


class ParsedUsages(NamedTuple):
    columns: UsageColumns
    # the raw usages kept, by index, when one was left out (None: all of them)
    kept: list[int] | None = None

    @property
    def profiled(self) -> ProfileColumns:
        """The columns the daily profiles fold: workload, pod, time, CPU cores, memory bytes."""
        ws, pods, _, times, cores, _, bytes_ = self.columns
        return ws, pods, times, cores, bytes_


# Raw usages as columns, one per field of RawUsage
RawColumns = tuple[
    Sequence[WorkloadKey],
    Sequence[str],
    Sequence[str],
    Sequence[float],
    Sequence[Any],
    Sequence[float],
    Sequence[Any],
]


def parsed_columns(raw: RawColumns) -> ParsedUsages:
    """Raw usages, given as columns, with their quantities parsed (quantities: column-wise, the
    CPU column then the memory one), in order, as columns: usage_from_metrics' values. A usage
    with a value that is not a quantity is logged (its CPU's error first, as usage_from_metrics
    logs it) and left out (`kept` says which were kept)."""
    ws, pods, containers, times, cpus, requests, memories = raw
    cores, cpu_errors = quantities(cpus)
    bytes_, memory_errors = quantities(memories)
    if not cpu_errors and not memory_errors:
        return ParsedUsages((ws, pods, containers, times, cores, requests, bytes_))
    for i in sorted(cpu_errors.keys() | memory_errors.keys()):
        e = cpu_errors.get(i) or memory_errors[i]
        log.warning(
            "PodMetrics %s/%s container %s: %s; skipped", ws[i].namespace, pods[i], containers[i], e
        )
    bad = cpu_errors.keys() | memory_errors.keys()
    columns = (ws, pods, containers, times, cores, requests, bytes_)
    kept = [i for i in range(len(ws)) if i not in bad]
    c: list[list[Any]] = [[column[i] for i in kept] for column in columns]
    return ParsedUsages((c[0], c[1], c[2], c[3], c[4], c[5], c[6]), kept)


def _usages(item: PodMetrics) -> Iterator[tuple[str, str, float, float | None, float | None]]:
    """(pod, container, time, CPU cores, memory bytes) of each container of a PodMetrics item
    whose values parse; the others, and an item without a valid timestamp, are logged."""
    meta = item.metadata
    pod = meta.name
    t = item_time(item.timestamp)
    if t is None:
        log.warning("PodMetrics %s/%s has no valid timestamp; skipped", meta.namespace, pod)
        return
    for c in item.containers:
        usage = c.usage
        try:
            cpu = _amount(usage.cpu) if usage.cpu is not ABSENT else None
            mem = _amount(usage.memory) if usage.memory is not ABSENT else None
        except ValueError as e:
            log.warning(
                "PodMetrics %s/%s container %s: %s; skipped", meta.namespace, pod, c.name, e
            )
            continue
        yield pod, c.name, t, cpu, mem


# The suffixes metrics-server writes (resource.Quantity's canonical forms of its usage: CPU in
# nanocores `123456n`, memory in `Ki`, whole numbers bare) and their exact factors. A whole
# number of at most 15 digits is exact as a float, and int / 10^k and int * 2^k are then the
# correctly rounded value, as float() of the exact Decimal product amount_float computes is.
_DIVIDED = {"n": 10**9, "u": 10**6, "m": 10**3}
_MULTIPLIED = {"Ki": 2**10, "Mi": 2**20, "Gi": 2**30}


def _amount(value: Any) -> float:
    """amount_float, without the Decimal arithmetic for the plain forms above (the same float)."""
    if isinstance(value, str) and value.isascii():
        if value[-1:] in _DIVIDED and value[:-1].isdigit() and len(value) <= 16:
            return int(value[:-1]) / _DIVIDED[value[-1]]
        if value[-2:] in _MULTIPLIED and value[:-2].isdigit() and len(value) <= 17:
            return float(int(value[:-2]) * _MULTIPLIED[value[-2:]])
        if value.isdigit() and len(value) <= 15:
            return float(int(value))
    return amount_float(value)


def quantities(values: Sequence[Any]) -> tuple[list[float | None], dict[int, ValueError]]:
    """_amount of each value (None for ABSENT), and by index the error of each value that is
    not a quantity (its amount then None). A column of one plain form (metrics-server writes
    every CPU usage in nanocores, every memory usage in Ki, but zero) is read at once: joined,
    checked and converted by numpy (int64: below 10^15, so exact as a float; then divided or
    multiplied as _amount does, the same float). Any other column is read value by value."""
    found = _plain_column(values)
    if found is not None:
        return found, {}
    out: list[float | None] = []
    errors: dict[int, ValueError] = {}
    for i, value in enumerate(values):
        if value is ABSENT:
            out.append(None)
            continue
        try:
            out.append(_amount(value))
        except ValueError as e:
            out.append(None)
            errors[i] = e
    return out, errors


def _plain_column(values: Sequence[Any]) -> list[float | None] | None:
    """The amounts of a column whose values are all text of the first one's plain form (digits
    and the same suffix, each below 10^15); None for any other column."""
    first = values[0] if values else None
    if type(first) is not str:
        return None
    if first[-2:] in _MULTIPLIED:
        suffix = first[-2:]
    elif first[-1:] in _DIVIDED:
        suffix = first[-1:]
    else:
        suffix = ""
    try:
        text = " ".join(values)  # TypeError when one is not text
    except TypeError:
        return None
    n = len(values)
    if not text.isascii():
        return None
    if suffix:
        # n suffixes, each at the end of a value: n - 1 before a separator, one at the end
        if text.count(suffix) != n or text.count(suffix + " ") != n - 1:
            return None
        if not text.endswith(suffix):
            return None
        text = text.replace(suffix, "")
    # n runs of digits, one space between two (no value empty), read by numpy's own text
    # parser; a value of 10^15 or more (past 19 digits numpy saturates) is read value by value
    if text.count(" ") != n - 1 or "  " in text or text[:1] == " " or text[-1:] == " ":
        return None
    if not text.replace(" ", "").isdigit():
        return None
    ints = np.fromstring(text, dtype=np.int64, sep=" ")
    if len(ints) != n or int(ints.max()) >= 10**15:
        return None
    amounts: Any
    if suffix in _DIVIDED:
        amounts = ints / float(_DIVIDED[suffix])
    elif suffix:
        amounts = ints * float(_MULTIPLIED[suffix])
    else:
        amounts = ints.astype(np.float64)
    out: list[float | None] = amounts.tolist()
    return out


@lru_cache(maxsize=4096)
def _cached_time(text: str) -> float | None:
    return parse_time(text)


def item_time(value: Any) -> float | None:
    """A PodMetrics timestamp read as parse_time reads it, cached by text: the pods of a node
    share their scrape's timestamp."""
    return _cached_time(value) if isinstance(value, str) else parse_time(value)


def new_oom_kills(pod: PodView, restarts_seen: dict[tuple[str, str, str], int]) -> list[OomKill]:
    """OOM kills not reported before; updates restarts_seen (key: namespace, pod uid, container)."""
    resources: dict[str, ContainerResources] | None = None  # read at the first kill only
    out = []
    for cs in pod.statuses:
        key = (pod.namespace, pod.uid or pod.name, cs.name)
        previous = restarts_seen.get(key)
        restarts_seen[key] = cs.restart_count
        if previous is not None and cs.restart_count <= previous:
            continue
        term = cs.last_termination
        if term is None or term.reason != "OOMKilled" or cs.restart_count == 0:
            continue
        if resources is None:
            resources = pod.resources()
        res = resources.get(cs.name, ContainerResources())
        memory = res.memory_request if res.memory_request is not None else res.memory_limit
        if memory is None or term.finished is None:
            continue
        out.append(OomKill(pod.name, cs.name, term.finished, float(memory)))
    return out


def watched_pods(
    pods: Iterable[PodView], restarts_seen: dict[tuple[str, str, str], int]
) -> list[PodView]:
    """The pods new_oom_kills needs to read: those with a container that restarted. The others
    have no kill to show and no count worth keeping: a pod's counts never go down, so a count of
    0 and no count let its first kill count alike. Forgets, in `restarts_seen`, the counts of
    every other pod: those of pods that are gone (keyed by uid: a pod never comes back; kept,
    they grew by every pod a rollout ever made, as the churn soak benchmark found), and those of
    a pod without a uid, keyed by its name, when a pod of that name is back at no restart.
    Reading every pod kept 300,000 counts at 150,000 pods, each rewritten every run."""
    watched = [p for p in pods if p.restarted]
    if restarts_seen:
        live = {(p.namespace, p.uid or p.name) for p in watched}
        for key in [k for k in restarts_seen if k[:2] not in live]:
            del restarts_seen[key]
    return watched
