"""A cluster-proportional-autoscaler ConfigMap -> a scaler document (`rightsizer scaler import`).

The autoscaler reads its params from one ConfigMap key, `linear` or `ladder`, whose value is JSON
text; the scaler document holds the same params as JSON, so the translation is one to one. The
params are checked here with the scaler job's own parser (app/core/scaling/proportional.py).
"""

from __future__ import annotations

import json
from typing import Any

from app.core.scaling.proportional import ParamsError, parse_params


class ConfigMapRefused(ValueError):
    """The manifest or the target cannot make a scaler; `field` is "manifest" or "target"."""

    def __init__(self, field: str, message: str) -> None:
        super().__init__(message)
        self.field = field


def scaler_from_configmap(manifest: Any, target: str, name: str | None = None) -> dict[str, Any]:
    """The scaler document for what the autoscaler scaled, `target` as namespace/Kind/name.

    `name` defaults to the ConfigMap's, then to the target's. Raises ConfigMapRefused."""
    if not isinstance(manifest, dict) or manifest.get("kind") != "ConfigMap":
        raise ConfigMapRefused("manifest", "not a ConfigMap manifest")
    data: dict[str, Any] = manifest.get("data") or {}
    parts = target.split("/")
    if len(parts) != 3 or not all(parts):
        raise ConfigMapRefused("target", "expected namespace/Kind/name")
    try:
        parse_params(data)  # a ConfigMap holds each mode as JSON text; checked here
    except ParamsError as e:
        raise ConfigMapRefused("manifest", f"data.{e}") from None
    [(mode, body)] = data.items()
    return {
        "name": name or (manifest.get("metadata") or {}).get("name") or parts[2],
        "target": {"namespace": parts[0], "kind": parts[1], "name": parts[2]},
        "params": {mode: json.loads(body) if isinstance(body, str) else body},
        "enabled": True,
    }
