"""carry_forward: a reloaded snapshot keeps the objects of what did not change."""

from __future__ import annotations

from dataclasses import replace

from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.update_mode import UpdateMode
from app.core.workload_key import WorkloadKey
from app.store.snapshot import build_snapshot, carry_forward

WEB = WorkloadKey("shop", "Deployment", "web")
API = WorkloadKey("shop", "Deployment", "api")


def rec(cpu: int) -> Recommendation:
    r = Resources(cpu, 100)
    return Recommendation(r, r, r, r)


def test_unchanged_objects_are_kept_changed_ones_are_new() -> None:
    web = Policy("web", "shop", "Deployment", "web", id=1)
    api = Policy("api", "shop", "Deployment", "api", id=2)
    old = build_snapshot([web, api], [(WEB, "app", rec(100), ()), (API, "app", rec(5), ["cpu"])], 1)
    web2 = Policy("web", "shop", "Deployment", "web", id=1)  # equal, another object
    api2 = replace(api, update_mode=UpdateMode.RECREATE)  # changed
    new = build_snapshot(
        [web2, api2], [(WEB, "app", rec(100), ()), (API, "app", rec(6), ["cpu"])], 2
    )
    kept = carry_forward(old, new)
    assert kept.loaded_at == 2 and kept.counts == new.counts
    web_kept, api_kept = kept.policies["shop"]
    assert web_kept is web and api_kept is api2
    assert kept.recommendations[WEB] is old.recommendations[WEB]
    assert kept.recommendations[API] is new.recommendations[API]
    assert kept.excluded[API] is old.excluded[API]  # the same conflicts
    assert kept == new  # equal values: every answer is the same


def test_gone_and_new_workloads() -> None:
    old = build_snapshot([], [(WEB, "app", rec(100), ())], 1)
    new = build_snapshot([], [(API, "app", rec(100), ())], 2)
    kept = carry_forward(old, new)
    assert set(kept.recommendations) == {API}
    assert kept.recommendations[API] is new.recommendations[API]
