"""Which recommendation strategy a policy chose, with what parameters: the policy document's
`recommender` and `recommenderParams` once the strategy has checked them (docs/policies.md).

A policy (app/core/policy.py) holds this plain choice, so what reads policies (the sizing, the
scaling) never reaches the recommender's code (the `core-parts-independent` contract in
setup.cfg). The documents make the choice of a configured strategy
(app.documents.recommender_fields); the recommender makes the strategy of a choice
(app.core.recommend.strategies.chosen).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

ParamValue = float | int | bool
DEFAULT_STRATEGY = "vpa"  # a policy that names none


@dataclass(frozen=True)
class StrategyChoice:
    name: str = DEFAULT_STRATEGY
    params: Mapping[str, ParamValue] = field(default_factory=dict)  # all, defaults filled in

    def __hash__(self) -> int:  # a choice's strategy is made once (strategies.chosen caches it)
        return hash((self.name, tuple(sorted(self.params.items()))))
