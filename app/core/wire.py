"""Reading Kubernetes JSON defensively, no I/O: a field of the wrong type counts as absent.

The API server never sends a malformed object, but pods reach the webhook as raw JSON and tests
build objects by hand; whatever in app.core reads Kubernetes JSON (the pod and node views, owner
references, scheduling constraints, the proportional scaler's node counts) reads it through these,
so a wrong type is "not set", never an AttributeError halfway through a run.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def section(obj: Mapping[str, Any], key: str) -> Mapping[str, Any]:
    """obj[key] when it is an object, else {}."""
    value = obj.get(key)
    return value if isinstance(value, Mapping) else {}


def entries(obj: Mapping[str, Any], key: str) -> list[Mapping[str, Any]]:
    """The objects in the list obj[key]; [] when it is not a list."""
    value = obj.get(key)
    return [x for x in value if isinstance(x, Mapping)] if isinstance(value, list) else []


def text(value: Any) -> str:
    """value when it is a string, else ""."""
    return value if isinstance(value, str) else ""
