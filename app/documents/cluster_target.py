"""A policy's `clusters`, as users write it -> app.core.cluster_target.ClusterTarget.

    clusters: {names: [prod-eu, prod-us]}                 # these clusters (by name or id)
    clusters: {selector: {matchLabels: {env: prod}}}      # the clusters whose labels match
    clusters: {selector: {}}                              # every cluster of the fleet

Absent, the policy governs the one cluster whose API created it (as before fleets). Each problem
names its field (`clusters.names[1]`, `clusters.selector.matchLabels.env`).
"""

from __future__ import annotations

from typing import Any

from app.core.cluster_target import ClusterTarget
from app.documents.fields import FieldError, unknown_fields
from app.documents.selector import parse_selector

FIELD = "clusters"
SHAPE = "must be {names: [NAME, ...]} or {selector: {matchLabels: {...}}} ({selector: {}}: all)"


def parse_cluster_target(doc: Any, errors: list[FieldError]) -> ClusterTarget | None:
    """The policy's target clusters (None: absent); problems are appended to `errors`."""
    raw = doc.get(FIELD) if isinstance(doc, dict) else None
    if raw is None:
        return None
    if not isinstance(raw, dict) or len(set(raw) & {"names", "selector"}) != 1:
        errors.append(FieldError(FIELD, SHAPE))
        return None
    found = unknown_fields(raw, ("names", "selector"), FIELD)
    if "selector" in raw:
        selector = parse_selector(raw["selector"], f"{FIELD}.selector", found)
        errors += found
        return None if found else ClusterTarget(selector=selector)
    names = raw["names"]
    if not isinstance(names, list) or not names:
        found.append(FieldError(f"{FIELD}.names", "must be a non-empty list of cluster names"))
    else:
        for i, n in enumerate(names):
            if not isinstance(n, str) or not n.strip() or len(n) > 253:
                found.append(
                    FieldError(f"{FIELD}.names[{i}]", "must be a cluster's name or id (text)")
                )
    errors += found
    return None if found else ClusterTarget(names=frozenset(names))
