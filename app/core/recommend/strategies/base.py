"""What every recommendation strategy is: a pure function from a workload container's aggregated
usage to an estimate (target, lower and upper bound) and the reason it gives, with parameters
declared and checked here, so a bad one is rejected naming the field.

A parameter may stand for one of the recommender settings (`Param.setting`, a field of
RecommenderSettings): given in a policy's `recommenderParams`, it replaces the global value
(RIGHTSIZER_*) for that policy's workloads only, as VPA's per-VPA settings replace its flags;
not given, the global value applies (its `default` is None). `tuned_settings` makes the settings
a strategy runs with. Every strategy takes the rounding parameters (`ROUNDING_PARAMS`, VPA's
--round-cpu-millicores and --round-memory-bytes), which apply after any of them.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import ClassVar, Protocol

from app.core.recommend.aggregate import AggregateState
from app.core.recommend.estimator import Estimate
from app.core.recommend.settings import RecommenderSettings
from app.core.resources import Resources
from app.core.strategy_choice import ParamValue as ParamValue  # what every parameter holds


@dataclass(frozen=True)
class StrategyInput:
    """One workload container's usage, as every strategy reads it."""

    aggregate: AggregateState
    containers: int  # containers in the workload's pods (the pod minimum is split among them)
    settings: RecommenderSettings


@dataclass(frozen=True)
class Proposal:
    """A strategy's answer: the estimate (None: not enough data to recommend) and why."""

    estimate: Estimate | None
    reason: str


class Strategy(Protocol):
    """A configured strategy: its name, its parameters (all of them, defaults filled in)."""

    @property
    def name(self) -> str: ...

    @property
    def params(self) -> Mapping[str, ParamValue]: ...

    def propose(self, given: StrategyInput) -> Proposal: ...


@dataclass(frozen=True)
class ParamError:
    field: str  # the parameter's name, as written in recommenderParams
    message: str


@dataclass(frozen=True)
class Param:
    """One parameter of a strategy: its type, default, allowed range and meaning (docs)."""

    name: str
    kind: type[float] | type[int] | type[bool]
    default: ParamValue | None  # None: the global value (`inherits`) applies when not given
    description: str
    minimum: float | None = None
    maximum: float | None = None
    exclusive_minimum: bool = False
    setting: str | None = None  # the RecommenderSettings field it replaces for the policy
    inherits: str | None = None  # where the value comes from when not given (documentation)

    def parse(self, value: object) -> ParamValue:
        """The value, checked; raises ValueError with the message for the field."""
        if self.kind is bool:
            if not isinstance(value, bool):
                raise ValueError(f"must be true or false, got {value!r}")
            return value
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise ValueError(f"must be a number, got {value!r}")
        if not math.isfinite(value):
            raise ValueError(f"must be a finite number, got {value!r}")
        if self.kind is int and value != int(value):
            raise ValueError(f"must be a whole number, got {value!r}")
        if self.minimum is not None and (
            value < self.minimum or (self.exclusive_minimum and value == self.minimum)
        ):
            word = "greater than" if self.exclusive_minimum else "at least"
            raise ValueError(f"must be {word} {_number(self.minimum)}, got {value!r}")
        if self.maximum is not None and value > self.maximum:
            raise ValueError(f"must be at most {_number(self.maximum)}, got {value!r}")
        return int(value) if self.kind is int else float(value)

    def allowed(self) -> str:
        """The allowed values in words, for the documentation."""
        if self.kind is bool:
            return "true or false"
        kind = "whole number" if self.kind is int else "number"
        parts = []
        if self.minimum is not None:
            parts.append(f"{'>' if self.exclusive_minimum else '>='} {_number(self.minimum)}")
        if self.maximum is not None:
            parts.append(f"<= {_number(self.maximum)}")
        return f"{kind} {', '.join(parts)}".strip()


def _number(x: float) -> str:
    return str(int(x)) if x == int(x) else str(x)


def parse_params(
    spec: tuple[Param, ...], given: Mapping[str, object] | None
) -> tuple[dict[str, ParamValue], list[ParamError]]:
    """Every parameter of `spec` (defaults for those not given) and the errors: unknown names,
    wrong types, values out of range."""
    given = given or {}
    known = {p.name: p for p in spec}
    errors = [
        ParamError(
            str(k),
            "unknown parameter; expected "
            + (", ".join(sorted(known)) if known else "none (this strategy takes no parameters)"),
        )
        for k in sorted(set(given) - set(known), key=str)
    ]
    values: dict[str, ParamValue] = {}
    for p in spec:
        if p.name in given:
            try:
                values[p.name] = p.parse(given[p.name])
                continue
            except ValueError as e:
                errors.append(ParamError(p.name, str(e)))
        if p.default is not None:
            values[p.name] = p.default
    return values, errors


def filled(spec: tuple[Param, ...], given: Mapping[str, ParamValue]) -> dict[str, ParamValue]:
    """The parameters of `spec` that have a value: given, else the default (a parameter whose
    default is the global setting is absent when not given)."""
    out: dict[str, ParamValue] = {}
    for p in spec:
        value = given.get(p.name, p.default)
        if value is not None:
            out[p.name] = value
    return out


@dataclass(frozen=True)
class Configured:
    """What every strategy class shares: the parameter values given (`values`), checked by
    `configure`) and, through its `SPEC`, all of them with the defaults filled in (`params`)."""

    values: Mapping[str, ParamValue] = field(default_factory=dict)
    SPEC: ClassVar[tuple[Param, ...]] = ()

    @property
    def params(self) -> Mapping[str, ParamValue]:
        return filled(self.SPEC, self.values)

    def number(self, key: str) -> float:
        """A parameter that has a value (given or by default), as a float."""
        return float(self.params[key])


def tuned_settings(
    base: RecommenderSettings, spec: tuple[Param, ...], values: Mapping[str, ParamValue]
) -> RecommenderSettings:
    """`base` with every setting a parameter of `spec` gives in `values` replaced."""
    changes = {
        p.setting: float(values[p.name]) for p in spec if p.setting is not None and p.name in values
    }
    return replace(base, **changes) if changes else base


def setting_param(
    name: str,
    kind: type[float] | type[int],
    setting: str,
    description: str,
    minimum: float,
    maximum: float | None = None,
    exclusive_minimum: bool = False,
) -> Param:
    """A parameter standing for the recommender setting `setting` (RIGHTSIZER_<SETTING>)."""
    return Param(
        name,
        kind,
        None,
        description,
        minimum,
        maximum,
        exclusive_minimum,
        setting=setting,
        inherits="RIGHTSIZER_" + setting.upper(),
    )


# Every strategy's: VPA rounds every recommendation (ResourcesAsResourceList in
# pkg/recommender/model/types.go), before its post-processors (integerCPU, then capping).
ROUNDING_PARAMS = (
    setting_param(
        "roundCpuMillicores",
        int,
        "round_cpu_millicores",
        "Every CPU amount is rounded up to a multiple of this many millicores "
        "(VPA's --round-cpu-millicores)",
        1,
    ),
    setting_param(
        "roundMemoryBytes",
        int,
        "round_memory_bytes",
        "Every memory amount is rounded up to a multiple of this many bytes "
        "(VPA's --round-memory-bytes)",
        1,
    ),
)


def with_bounds_around(target: Resources, vpa: Estimate) -> Estimate:
    """An estimate whose target is `target` and whose bounds are VPA's, stretched to include it:
    the updater then leaves a pod alone within the same range as under VPA (app.core.sizing)."""
    lower = Resources(
        min(vpa.lower_bound.cpu, target.cpu), min(vpa.lower_bound.memory, target.memory)
    )
    upper = Resources(
        max(vpa.upper_bound.cpu, target.cpu), max(vpa.upper_bound.memory, target.memory)
    )
    return Estimate(target, lower, upper)
