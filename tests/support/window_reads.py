"""Counts the usage windows whose percentiles are computed (UsageWindow.percentiles), for the
tests that check a window is read only for the history points written."""

from __future__ import annotations

from typing import Any

import pytest

from app.core.recommend.timeline import UsageWindow


def count_window_reads(monkeypatch: pytest.MonkeyPatch) -> list[UsageWindow]:
    """The list each UsageWindow.percentiles call appends its window to (patched for the test)."""
    read: list[UsageWindow] = []
    percentiles = UsageWindow.percentiles

    def counted(self: UsageWindow) -> Any:
        read.append(self)
        return percentiles(self)

    monkeypatch.setattr(UsageWindow, "percentiles", counted)
    return read
