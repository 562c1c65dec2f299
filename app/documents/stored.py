"""What the server adds to a document it stores: accepted back in a body (so a GET result can be
edited and sent back) but ignored, except `version`, which must then match like If-Match."""

from __future__ import annotations

from typing import Any

READ_ONLY = ("version", "createdAt", "updatedAt", "status")


def without_read_only(doc: dict[str, Any]) -> dict[str, Any]:
    """The document as its author wrote it: the server-set fields dropped."""
    return {k: v for k, v in doc.items() if k not in READ_ONLY}
