"""Prometheus history settings for tests: the defaults of every RIGHTSIZER_PROMETHEUS_* variable,
with what a test changes."""

from __future__ import annotations

import dataclasses
from typing import Any

from app.config import from_environment
from app.settings import PrometheusSettings


def history_settings(
    url: str, step: float = 300.0, window: float = 8 * 86400.0, **fields: Any
) -> PrometheusSettings:
    """PrometheusSettings as the environment would give them, pointed at `url`."""
    defaults = from_environment({}).prometheus
    return dataclasses.replace(defaults, url=url, step=step, history_seconds=window, **fields)
