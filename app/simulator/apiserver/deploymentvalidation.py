"""A Deployment's strategy as kube-apiserver validates it (kubernetes/kubernetes
`pkg/apis/apps/validation/validation.go` ValidateDeploymentStrategy,
ValidateRollingUpdateDeployment, ValidatePositiveIntOrPercent, IsNotMoreThan100Percent)."""

from __future__ import annotations

import re
from typing import Any

from app.simulator.apiserver.errors import FieldError

_PERCENT = re.compile(r"^[0-9]+%$")
_PERCENT_MSG = (
    "a valid percent string must be a numeric string followed by an ending '%' "
    "(e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
)


class GoValue:
    """A value printed as Go's %#v prints it (field errors on an intstr.IntOrString)."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text


def int_or_string(value: Any) -> GoValue:
    if isinstance(value, str):
        return GoValue(f'intstr.IntOrString{{Type:1, IntVal:0, StrVal:"{value}"}}')
    return GoValue(f'intstr.IntOrString{{Type:0, IntVal:{value}, StrVal:""}}')


def _amount(value: Any) -> tuple[int, bool] | None:
    """(the number, whether it is a percentage), or None if it is neither."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value, False
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1]), True
    return None


def strategy_errors(spec: dict[str, Any]) -> list[FieldError]:
    strategy = spec.get("strategy") or {}
    path = "spec.strategy"
    kind = strategy.get("type")
    rolling = strategy.get("rollingUpdate")
    if kind == "Recreate":
        if rolling is not None:
            return [
                FieldError(
                    f"{path}.rollingUpdate",
                    "FieldValueForbidden",
                    "may not be specified when strategy `type` is 'Recreate'",
                )
            ]
        return []
    if kind != "RollingUpdate":
        return [
            FieldError(
                f"{path}.type",
                "FieldValueNotSupported",
                'supported values: "Recreate", "RollingUpdate"',
                kind,
            )
        ]
    if not isinstance(rolling, dict):
        return [FieldError(f"{path}.rollingUpdate", "FieldValueRequired", "")]
    return _rolling_errors(rolling, f"{path}.rollingUpdate")


def _rolling_errors(rolling: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    values: dict[str, tuple[int, bool] | None] = {}
    for field in ("maxUnavailable", "maxSurge"):
        value = rolling.get(field, 0)
        amount = values[field] = _amount(value)
        if isinstance(value, str) and amount is None:
            errs.append(
                FieldError(
                    f"{path}.{field}", "FieldValueInvalid", _PERCENT_MSG, int_or_string(value)
                )
            )
        elif amount is not None and amount[0] < 0:
            errs.append(
                FieldError(
                    f"{path}.{field}",
                    "FieldValueInvalid",
                    "must be greater than or equal to 0",
                    amount[0],
                )
            )
    unavailable, surge = values["maxUnavailable"], values["maxSurge"]
    if (unavailable or (0, False))[0] == 0 and (surge or (0, False))[0] == 0:
        errs.append(
            FieldError(
                f"{path}.maxUnavailable",
                "FieldValueInvalid",
                "may not be 0 when `maxSurge` is 0",
                int_or_string(rolling.get("maxUnavailable", 0)),
            )
        )
    if unavailable is not None and unavailable[1] and unavailable[0] > 100:
        errs.append(
            FieldError(
                f"{path}.maxUnavailable",
                "FieldValueInvalid",
                "must not be greater than 100%",
                int_or_string(rolling["maxUnavailable"]),
            )
        )
    return errs
