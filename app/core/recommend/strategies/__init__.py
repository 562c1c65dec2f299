"""Recommendation strategies, registered by name: a policy's `recommender` picks one and its
`recommenderParams` configure it (docs/policies.md).

- `vpa` (default): the VPA recommender's estimator, exactly (vpa.py).
- `krr-simple`: Robusta KRR's simple strategy (krr.py).
- `balanced`: rightsizer's own, CPU as VPA and memory balancing unused memory against time above
  the request (balanced.py).

Each is a pure function of a workload container's aggregate (app/core/recommend/aggregate.py);
`configure` checks the parameters and names every bad one.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass

from app.core.recommend.strategies import balanced, krr, vpa
from app.core.recommend.strategies.base import (
    Param,
    ParamError,
    ParamValue,
    Proposal,
    Strategy,
    StrategyInput,
    parse_params,
)

DEFAULT = "vpa"


@dataclass(frozen=True)
class StrategyType:
    name: str
    summary: str  # one line, for the documentation
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, ParamValue]], Strategy]


REGISTRY: dict[str, StrategyType] = {
    t.name: t
    for t in (
        StrategyType(
            "vpa",
            "the VPA recommender's estimator (the recommender settings, RIGHTSIZER_*)",
            vpa.PARAMS,
            lambda _values: vpa.VpaStrategy(),
        ),
        StrategyType(
            "krr-simple",
            "Robusta KRR's simple strategy: CPU percentile of samples, memory max + buffer",
            krr.PARAMS,
            lambda values: krr.KrrSimpleStrategy(values),
        ),
        StrategyType(
            "balanced",
            "rightsizer's own: CPU as vpa, memory balancing unused memory and time above it",
            balanced.PARAMS,
            lambda values: balanced.BalancedStrategy(values),
        ),
    )
}
NAMES = tuple(REGISTRY)
VPA: Strategy = vpa.VpaStrategy()


class StrategyInvalid(ValueError):
    """Every problem of a strategy name or its parameters; `field` is None for the name."""

    def __init__(self, errors: list[tuple[str | None, str]]) -> None:
        super().__init__("; ".join(f"{f or 'recommender'}: {m}" for f, m in errors))
        self.errors = errors


def configure(name: str | None, params: Mapping[str, object] | None = None) -> Strategy:
    """The named strategy with its parameters checked (defaults for those not given).
    Raises StrategyInvalid naming the unknown strategy or every bad parameter."""
    name = DEFAULT if name is None else name
    kind = REGISTRY.get(name)
    if kind is None:
        raise StrategyInvalid(
            [(None, f"unknown recommender {name!r}; expected one of {', '.join(NAMES)}")]
        )
    values, errors = parse_params(kind.params, params)
    if errors:
        raise StrategyInvalid([(e.field, e.message) for e in errors])
    return kind.build(values)


__all__ = [
    "DEFAULT",
    "NAMES",
    "REGISTRY",
    "VPA",
    "Param",
    "ParamError",
    "Proposal",
    "Strategy",
    "StrategyInput",
    "StrategyInvalid",
    "StrategyType",
    "configure",
]
