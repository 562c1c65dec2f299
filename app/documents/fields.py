"""A bad field of a document users wrote: its path and what is wrong with it (every parser of
app.documents reports all of them at once, and the API answers them as 422 `details`).

`unparsable` marks a field holding JSON text that does not parse (a scaler's params as a
ConfigMap holds them): the API answers that as it answers a body that does not parse, 400."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str
    unparsable: bool = False

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}
