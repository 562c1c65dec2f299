"""NodeMetrics read into samples, and folded into the nodes' levels (app.core.placement.windows).

A NodeMetrics object (metrics.k8s.io/v1beta1) gives a node's `usage` (cpu, memory) over its
`window`, ending at its `timestamp`. A sample without a readable timestamp or usage is skipped;
a node without allocatable is skipped (no level means anything).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.core.nodes import NodeView
from app.core.placement.windows import NodeLevel, fold
from app.core.pods import parse_time
from app.core.quantity import amount_or_none
from app.core.wire import section, text

Sample = tuple[int, int, float]  # millicores, bytes, Unix time


def node_samples(items: Iterable[Mapping[str, Any]]) -> dict[str, Sample]:
    out: dict[str, Sample] = {}
    for m in items:
        if not isinstance(m, Mapping):
            continue
        name = text(section(m, "metadata").get("name"))
        usage = section(m, "usage")
        cpu = amount_or_none("cpu", usage.get("cpu"))
        memory = amount_or_none("memory", usage.get("memory"))
        at = parse_time(m.get("timestamp"))
        if name and cpu is not None and memory is not None and at is not None:
            out[name] = (cpu, memory, at)
    return out


def fold_samples(
    previous: Mapping[str, NodeLevel], nodes: Iterable[NodeView], samples: Mapping[str, Sample]
) -> list[NodeLevel]:
    """Every node of `nodes` with allocatable and a sample, its sample folded into its previous
    levels. Nodes without a sample this time are left out (their saved levels stay)."""
    out = []
    for n in nodes:
        sample = samples.get(n.name)
        if sample is None or not n.cpu_allocatable or not n.memory_allocatable:
            continue
        cpu, memory, at = sample
        out.append(
            fold(
                previous.get(n.name),
                n.name,
                n.cpu_allocatable,
                n.memory_allocatable,
                cpu,
                memory,
                at,
            )
        )
    return out
