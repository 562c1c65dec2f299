"""Daily profiles stored by the leader and loaded by the next one, on SQLite and PostgreSQL: the
cluster's rows replaced at each store, a row that is not a profile skipped, the others loaded."""

from __future__ import annotations

import logging

import pytest
from flask import Flask
from sqlalchemy import func, select, update

from app.core.placement.profile import SLOT_SECONDS, SLOTS, Profiles
from app.core.workload_key import WorkloadKey
from app.store.extensions import db
from app.store.models import WorkloadProfileRow
from app.store.profiles import load_profiles, save_profiles

WEB = WorkloadKey("shop", "Deployment", "web")
DB = WorkloadKey("shop", "StatefulSet", "db")
MIDNIGHT = 20 * 86400.0


def fed() -> Profiles:
    profiles = Profiles()
    for s in range(SLOTS):
        t = MIDNIGHT + s * SLOT_SECONDS
        profiles.fold_run(
            [(WEB, "shop", "web-1", t, 0.001 * s, 1e6 * s), (DB, "shop", "db-0", t, 1.0, 5e8)]
        )
    return profiles


def same(a: Profiles, b: Profiles, key: WorkloadKey) -> bool:
    pa, pb = a.profile(key), b.profile(key)
    assert pa is not None and pb is not None
    return all(
        getattr(pa, f).tolist() == getattr(pb, f).tolist()
        for f in ("cpu", "memory", "weight", "seen_at")
    )


def test_stored_profiles_load_back_as_they_were(app: Flask) -> None:
    profiles = fed()
    assert save_profiles(db.session, profiles, MIDNIGHT + 86400) == 2
    loaded = Profiles()
    loaded.fold_run([(WorkloadKey("shop", "Deployment", "old"), "shop", "o", MIDNIGHT, 1.0, 1.0)])
    assert load_profiles(db.session, loaded) == (2, 0)
    assert set(loaded.index) == {WEB, DB}  # what it held before is replaced
    assert same(profiles, loaded, WEB) and same(profiles, loaded, DB)
    web = loaded.profile(WEB)
    assert web is not None
    ahead = web.ahead(MIDNIGHT, 2)
    assert ahead is not None and ahead[0].tolist() == pytest.approx([0.0, 1.0])


def test_a_store_replaces_the_rows_and_drops_forgotten_workloads(app: Flask) -> None:
    profiles = fed()
    save_profiles(db.session, profiles, MIDNIGHT)
    profiles.forget([WEB])
    assert save_profiles(db.session, profiles, MIDNIGHT + 3600) == 1
    assert db.session.scalar(select(func.count()).select_from(WorkloadProfileRow)) == 1


def test_a_row_that_is_not_a_profile_is_skipped_and_the_others_load(
    app: Flask, caplog: pytest.LogCaptureFixture
) -> None:
    save_profiles(db.session, fed(), MIDNIGHT)
    nan_weights = b"\x00" * (SLOTS * 8) + b"\xff\xff\xc0\x7f" * SLOTS + b"\x00" * (SLOTS * 8)
    for bad in (b"short", nan_weights):
        db.session.execute(
            update(WorkloadProfileRow).where(WorkloadProfileRow.name == "db").values(data=bad)
        )
        db.session.commit()
        loaded = Profiles()
        with caplog.at_level(logging.WARNING, logger="app.store.profiles"):
            assert load_profiles(db.session, loaded) == (1, 1)
        assert set(loaded.index) == {WEB} and "not a daily profile" in caplog.text
