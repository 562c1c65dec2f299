"""A bad field of a document users wrote: its path and what is wrong with it (every parser of
app.documents reports all of them at once, and the API answers them as 422 `details`)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class FieldError:
    field: str
    message: str

    def as_dict(self) -> dict[str, str]:
        return {"field": self.field, "message": self.message}
