"""The policy fields that pick the recommendation strategy (docs/policies.md, "Recommender"):

- `recommender`: the strategy's name (app.core.recommend.strategies: `vpa`, the default,
  `krr-simple`, `balanced`). VPA's `spec.recommenders[0].name` maps to it on import.
- `recommenderParams`: that strategy's parameters, an object; every one is checked by the
  strategy (a bad one is reported as `recommenderParams.<name>`), and the defaults fill the rest.

Both are stored as written, in the policy row's `recommender` and `recommender_params` columns.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.recommend.strategies import NAMES, StrategyInvalid, configure
from app.core.strategy_choice import StrategyChoice
from app.documents.fields import FieldError

RECOMMENDER_FIELDS = ("recommender", "recommenderParams")


def parse_recommender(doc: Mapping[str, Any], errors: list[FieldError]) -> StrategyChoice:
    """The strategy a policy document chose, its parameters checked and the defaults filled in
    (the default strategy when it names none); problems are appended to `errors`."""
    name = doc.get("recommender")
    params = doc.get("recommenderParams")
    ok = True
    if name is not None and not isinstance(name, str):
        errors.append(FieldError("recommender", f"must be one of {', '.join(NAMES)}"))
        ok = False
    if params is not None and not isinstance(params, dict):
        errors.append(
            FieldError("recommenderParams", 'must be an object such as {"cpuPercentile": 90}')
        )
        ok = False
    if not ok:
        return StrategyChoice()
    try:
        strategy = configure(name, params)
    except StrategyInvalid as e:
        for field, message in e.errors:
            path = "recommender" if field is None else f"recommenderParams.{field}"
            errors.append(FieldError(path, message))
        return StrategyChoice()
    return StrategyChoice(strategy.name, dict(strategy.params))


def stored_recommender(doc: Mapping[str, Any]) -> tuple[str | None, dict[str, Any] | None]:
    """The columns of a valid document: its `recommender` and `recommenderParams` as written."""
    params = doc.get("recommenderParams")
    return doc.get("recommender"), dict(params) if params else None


def recommender_document(name: str | None, params: Mapping[str, Any] | None) -> dict[str, Any]:
    """The fields back from the columns, as the user wrote them (nothing when not written)."""
    out: dict[str, Any] = {}
    if name is not None:
        out["recommender"] = name
    if params:
        out["recommenderParams"] = dict(params)
    return out
