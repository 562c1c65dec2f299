"""Recommendation strategies, registered by name: a policy's `recommender` picks one and its
`recommenderParams` configure it (docs/policies.md).

- `vpa` (default): the VPA recommender's estimator, exactly (vpa.py).
- `krr-simple`: Robusta KRR's simple strategy (krr.py).
- `balanced`: rightsizer's own, CPU as VPA and memory balancing unused memory against time above
  the request (balanced.py).

Each is a pure function of a workload container's aggregate (app/core/recommend/aggregate.py);
`configure` checks the parameters and names every bad one. `tuning` gives the settings a
configured strategy runs with: the global recommender settings with what its parameters replace
(`vpa`'s VPA flags, every strategy's rounding).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import lru_cache

from app.core.recommend.settings import RecommenderSettings
from app.core.recommend.strategies import balanced, krr, vpa
from app.core.recommend.strategies.base import (
    Param,
    ParamError,
    ParamValue,
    Proposal,
    Strategy,
    StrategyInput,
    parse_params,
    tuned_settings,
)
from app.core.strategy_choice import DEFAULT_STRATEGY, StrategyChoice

DEFAULT = DEFAULT_STRATEGY


@dataclass(frozen=True)
class StrategyType:
    name: str
    summary: str  # one line, for the documentation
    params: tuple[Param, ...]
    build: Callable[[Mapping[str, ParamValue]], Strategy]
    check: Callable[[Mapping[str, ParamValue]], list[ParamError]] = lambda _values: []


REGISTRY: dict[str, StrategyType] = {
    t.name: t
    for t in (
        StrategyType(
            "vpa",
            "the VPA recommender's estimator (the recommender settings, RIGHTSIZER_*)",
            vpa.PARAMS,
            lambda values: vpa.VpaStrategy(values),
            vpa.check,
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
    if not errors:
        errors = kind.check({k: v for k, v in values.items() if k in (params or {})})
    if errors:
        raise StrategyInvalid([(e.field, e.message) for e in errors])
    return kind.build(values)


@lru_cache(maxsize=1024)
def chosen(choice: StrategyChoice) -> Strategy:
    """The strategy a policy chose (app.core.strategy_choice), configured: its parameters, all of
    them with the defaults, make the same strategy as the document's did (checked again here)."""
    return configure(choice.name, choice.params)


@dataclass(frozen=True)
class Tuning:
    """What a workload's history and estimate are made with: the recommender settings and how
    long its containers may go without a sample before their history is dropped."""

    settings: RecommenderSettings
    idle_after: float


def tuning(strategy: Strategy, base: RecommenderSettings, idle_after: float) -> Tuning:
    """The global `base` settings and `idle_after`, with what the strategy's parameters replace.
    The idle time is VPA's memory aggregation window, interval x count, when the parameters set
    either (the count not given: `idle_after` / the global interval, 8 by default)."""
    kind = REGISTRY.get(strategy.name)
    values = strategy.params
    settings = tuned_settings(base, kind.params if kind else (), values)
    count = values.get(vpa.INTERVAL_COUNT)
    interval = settings.memory_aggregation_interval_seconds
    if count is not None or interval != base.memory_aggregation_interval_seconds:
        if count is None:
            count = idle_after / base.memory_aggregation_interval_seconds
        idle_after = interval * float(count)
    return Tuning(settings, idle_after)


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
    "Tuning",
    "chosen",
    "configure",
    "tuning",
]
