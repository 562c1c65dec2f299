"""Each node's level over the next hours, from the daily profiles of the pods it runs.

The leader's node-levels job calls `with_ahead` after folding the newest NodeMetrics: for each
node, its level over the last 15 minutes (the 15-minute window's, CPU and memory) plus, for every
pod running on it whose workload has a complete profile (app.core.placement.profile), the change
that profile shows from the present slot to each of the next ones; then one level per hour, the
mean of its four slots (the first hour: the present slot and the three after it). Hours, not
slots: the extender scores each as a column of its own for every node of every call, and 24
slots a resource tripled its `prioritize` time over 5,000 nodes (benchmarks/water_level.py); 6
hours add about 0.3 ms. A node none of whose pods has a profile gets no levels ahead (the
extender then reads its newest level in their place).

The 15-minute level, not the newest sample: a sample is one scrape, and its noise, carried
through every hour ahead, made the spread ahead chase it (benchmarks/README.md, "Noisy usage").
The window lags what just started on the node, though: `age` seconds after a pod starts it has
taken in 1 - exp(-age / 900) of the pod's usage. So a pod with a profile adds the rest, its
present slot's usage times exp(-age / 900), to its node's level ahead. A pod that just left is
still partly in the window, and is not taken out: that node looks a little fuller than it is for
some minutes, which sends pods elsewhere, never onto it. A pod started before the node's first
sample (`NodeLevel.first_at`: that sample set every window) is wholly in it already. A pod
without a profile is only in the window (the extender's hot spots count a pod it placed until
metrics show it; the windows' floor and the filter read the newest sample).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

import numpy as np

from app.core.placement.profile import SLOT_SECONDS, SLOTS, Profiles, node_ahead, slot_of
from app.core.placement.windows import WINDOWS, NodeLevel

SLOTS_AN_HOUR = round(3600 / SLOT_SECONDS)
SETTLING = WINDOWS[0][1]  # the 15-minute window's time constant, seconds

RunningPod = tuple[str, str, str, float | None]  # node, namespace, name, start time (Unix)


def with_ahead(
    levels: Iterable[NodeLevel],
    pods: Iterable[RunningPod],
    profiles: Profiles,
    hours: int,
) -> list[NodeLevel]:
    """`levels` with their levels ahead over `hours` hours. `pods`: (node, namespace, name,
    start time or None) of each pod running on a node; a pod is found in the profiles' workload
    of each pod (the recommender's last run). The slots, and the pods' ages, are those of the
    newest metrics among `levels` (the nodes are sampled together)."""
    out = list(levels)
    if hours <= 0 or not len(profiles) or not out:
        return out
    slots = hours * SLOTS_AN_HOUR
    node_of = {level.name: i for i, level in enumerate(out)}
    owners, row_of = profiles.workload_of_pod, profiles.index
    on_node: list[int] = []
    rows: list[int] = []
    started: list[float] = []
    for node_name, namespace, name, started_at in pods:
        i = node_of.get(node_name)
        if i is None:
            continue
        r = row_of.get(owners.get((namespace, name)))
        if r is not None:
            on_node.append(i)
            rows.append(r)
            started.append(np.nan if started_at is None else started_at)
    if not rows:
        return out
    row = np.array(rows, dtype=np.intp)
    node = np.array(on_node, dtype=np.intp)
    whole = (profiles.weight[row] > 0).all(axis=1)  # a whole day learned
    row, node, since = row[whole], node[whole], np.array(started)[whole]
    if not len(row):
        return out
    at = max(level.metrics_at for level in out)
    index = (slot_of(at) + np.arange(slots)) % SLOTS
    # of each pod, what the 15-minute window has not taken in yet: none without a start time,
    # nor of a pod started before its node's first sample (which set the windows)
    first = np.array([-np.inf if x.first_at is None else x.first_at for x in out])
    fresh = since > first[node]  # False for a pod without a start time (NaN)
    unseen = np.where(fresh, np.exp(-np.maximum(at - since, 0.0) / SETTLING), 0.0)
    changes, lag = [], []
    for usage in (profiles.cpu, profiles.memory):
        per_pod = usage[row][:, index]
        missing = np.zeros(len(out))
        np.add.at(missing, node, per_pod[:, 0] * unseen)
        lag.append(missing)
        per_pod -= per_pod[:, :1]  # each pod's change from the present slot
        total = np.zeros((len(out), slots))
        np.add.at(total, node, per_pod)
        changes.append(total.reshape(len(out), hours, SLOTS_AN_HOUR).mean(axis=2))
    known = np.zeros(len(out), dtype=bool)
    known[node] = True
    result = []
    for i, level in enumerate(out):
        if not known[i]:
            result.append(level)
            continue
        result.append(
            dataclasses.replace(
                level,
                cpu_ahead=node_ahead(
                    level.cpu[0], level.cpu_allocatable, changes[0][i] + lag[0][i]
                ),
                memory_ahead=node_ahead(
                    level.memory[0], level.memory_allocatable, changes[1][i] + lag[1][i]
                ),
            )
        )
    return result
