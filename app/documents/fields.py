"""A bad field of a document users wrote: its path and what is wrong with it (every parser of
app.documents reports all of them at once, and the API answers them as 422 `details`).

`unparsable` marks a field holding JSON text that does not parse (a scaler's params as a
ConfigMap holds them): the API answers that as it answers a body that does not parse, 400."""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str
    unparsable: bool = False

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}


def unknown_message(known: Iterable[str]) -> str:
    """What an unknown field is told: the fields that are valid where it stands."""
    return f"unknown field; valid fields are {', '.join(sorted(known))}"


def unknown_fields(
    doc: Mapping[str, Any], known: Collection[str], path: str = ""
) -> list[FieldError]:
    """A FieldError for each key of `doc` not in `known`, listing the valid ones; `path` is
    where `doc` stands ("" for the top level)."""
    return [
        FieldError(f"{path}.{k}" if path else str(k), unknown_message(known))
        for k in sorted(set(doc) - set(known), key=str)
    ]
