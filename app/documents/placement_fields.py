"""The policy field that picks how the pods a policy governs are placed on nodes
(docs/policies.md, "Placement"):

- `placement`: `default` (the default: the pods keep the scheduler they name, usually
  kube-scheduler's `default-scheduler`) or `waterLevel`: the webhook gives each new pod the
  chart's water-level scheduler (`RIGHTSIZER_PLACEMENT_SCHEDULER_NAME`, a second kube-scheduler
  calling rightsizer's scheduler extender), which places pods by what nodes really use. A pod
  naming a scheduler of its own keeps it; with no such scheduler configured the field changes
  nothing.

Stored in the policy row's `placement` column, None for `default` (so rows written before the
field existed read as they always did).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.policy import DEFAULT_PLACEMENT, PLACEMENTS, WATER_LEVEL
from app.documents.fields import FieldError

PLACEMENT_FIELDS = ("placement",)


def parse_placement(doc: Mapping[str, Any], errors: list[FieldError]) -> str:
    """The policy's placement (`default` when not written); problems go to `errors`."""
    value = doc.get("placement", DEFAULT_PLACEMENT)
    if value is None:
        return DEFAULT_PLACEMENT
    if not isinstance(value, str) or value not in PLACEMENTS:
        shown = "a boolean" if isinstance(value, bool) else repr(value)
        errors.append(FieldError("placement", f"{shown} is not one of {', '.join(PLACEMENTS)}"))
        return DEFAULT_PLACEMENT
    return value


def stored_placement(doc: Mapping[str, Any]) -> str | None:
    """The column's value for a valid document: None for the default."""
    value = doc.get("placement")
    return None if value in (None, DEFAULT_PLACEMENT) else str(value)


def placement_document(placement: str | None) -> dict[str, Any]:
    """The field back from the column (nothing when it is the default)."""
    return {} if placement in (None, DEFAULT_PLACEMENT) else {"placement": placement}


def placement_warning(placement: str | None, scheduler: str) -> str | None:
    """What a write of a policy with `placement` warns about when this server has no water-level
    scheduler (`scheduler`, RIGHTSIZER_PLACEMENT_SCHEDULER_NAME, empty): the field then changes
    nothing, which the user should hear rather than find out."""
    if placement != WATER_LEVEL or scheduler:
        return None
    return (
        "placement waterLevel changes nothing yet: no water-level scheduler is configured "
        "(RIGHTSIZER_PLACEMENT_SCHEDULER_NAME; the Helm chart's placement.scheduler.enabled)"
    )
