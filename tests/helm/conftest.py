"""Chart tests render through `render` (tests.support.helm: Helm's engine, offline)."""

from __future__ import annotations

import pytest

from tests.support.helm import Render, render_chart


@pytest.fixture
def render() -> Render:
    return render_chart
