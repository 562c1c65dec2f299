"""The database goes away and comes back; a writer is killed -9 in the middle of a batch.

PostgreSQL is reached through a forwarder (tests/reliability/proxy.py) that the test cuts and
restores, so only this app loses its database; the server itself keeps running for other tests.
"""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from flask_migrate import upgrade

from app import create_app
from app.core.recommend.array_model import ArrayModel
from app.core.recommend.settings import RecommenderSettings
from app.core.workload_key import WorkloadKey
from app.settings import settings_of
from app.store.checkpoints import load_checkpoints
from app.store.extensions import db
from app.store.models import Checkpoint, Recommendation
from app.store.recommendations import save_all
from app.store.results import results_from_model
from tests.support.bodies import review
from tests.support.databases import postgres_schema_url
from tests.support.json_bodies import plain
from tests.support.proxies import Proxy
from tests.support.reviews import add_policy, add_recommendation, refresh
from tests.support.usage import fed_model

NOW = datetime(2024, 7, 4, tzinfo=UTC)


@pytest.fixture
def proxied() -> Iterator[tuple[Flask, Proxy]]:
    """The app on a PostgreSQL schema of its own, reached through a proxy the test controls."""
    schema_urls = postgres_schema_url()
    url = next(schema_urls)
    parsed = sa.engine.make_url(url)
    proxy = Proxy(parsed.host or "127.0.0.1", parsed.port or 5432).restore()
    proxied_url = parsed.set(host="127.0.0.1", port=proxy.port).render_as_string(
        hide_password=False
    )
    app = create_app(
        {
            "TESTING": True,
            "JOBS": False,
            "SQLALCHEMY_DATABASE_URI": proxied_url,
            "SQLALCHEMY_ENGINE_OPTIONS": {"connect_args": {"connect_timeout": 2}},
        }
    )
    try:
        with app.app_context():
            upgrade()
            yield app, proxy
            db.session.remove()
            db.engine.dispose()
    finally:
        proxy.cut()
        for _ in schema_urls:  # drops the schema
            pass


def mutate(app: Flask) -> dict[str, object]:
    from tests.support.bodies import good_pod

    resp = app.test_client().post(
        "/mutate", data=json.dumps(review(good_pod(), "u1")), content_type="application/json"
    )
    assert resp.status_code == 200
    return resp.get_json()["response"]


def rows(model: type[Recommendation] | type[Checkpoint]) -> dict[str, int]:
    """name -> target cpu (recommendations) or sample count (checkpoints)."""
    if model is Recommendation:
        return {r.name: r.target_cpu for r in db.session.scalars(sa.select(Recommendation))}
    return {c.name: c.sample_count for c in db.session.scalars(sa.select(Checkpoint))}


@pytest.mark.postgres
def test_database_outage_webhook_serves_from_cache_readyz_degrades_writes_keep_old_rows(
    proxied: tuple[Flask, Proxy],
) -> None:
    app, proxy = proxied
    client = app.test_client()
    add_policy()
    add_recommendation()
    refresh(app)
    report = save_all(db.session, results_from_model(fed_model(5)), NOW, batch_size=2)
    assert (report.saved, report.failed) == (5, 0)
    before_recs, before_cps = rows(Recommendation), rows(Checkpoint)
    assert len(before_recs) == 6 and len(before_cps) == 5
    patched = mutate(app)
    assert patched["patchType"] == "JSONPatch"

    proxy.cut()
    # Degraded, not unready: the webhook still answers from its fresh cache (app/api/health.py).
    resp = client.get("/readyz")
    assert resp.status_code == 200, resp.get_json()
    assert resp.get_json()["status"] == "degraded"
    assert resp.get_json()["degraded"] == ["database"]
    assert client.get("/healthz").status_code == 200
    cache = app.extensions["rightsizer.webhook"].cache
    assert cache.refresh() is False  # the refresh fails, the previous snapshot stays
    started = time.monotonic()
    assert mutate(app) == patched  # same patch, from the cache
    # kube-apiserver waits at most the webhook's timeout; the answer comes well within it.
    assert time.monotonic() - started < settings_of(app).webhook.timeout_seconds
    # Once the cache is too old to answer from, the same outage makes the pod unready.
    max_age, cache.max_age = cache.max_age, 0.0
    resp = client.get("/readyz")
    assert resp.status_code == 503 and resp.get_json()["error"] == "ServiceUnavailable"
    assert "database" in resp.get_json()["message"]
    cache.max_age = max_age
    # The recommender's writes fail batch by batch; nothing it wrote is half there.
    newer = results_from_model(fed_model(7, cpu=0.9))
    report = save_all(db.session, newer, NOW + timedelta(hours=1), batch_size=2)
    assert (report.saved, report.failed) == (0, 7)
    db.session.rollback()

    proxy.restore()
    assert client.get("/readyz").status_code == 200
    assert rows(Recommendation) == before_recs and rows(Checkpoint) == before_cps
    assert cache.refresh() is True
    saved = save_all(
        db.session, results_from_model(fed_model(7, cpu=0.9)), NOW + timedelta(hours=1), 2
    )
    assert (saved.saved, saved.failed) == (7, 0)
    after = rows(Recommendation)
    assert len(after) == 8 and all(after[f"w{n}"] > before_recs[f"w{n}"] for n in range(5))
    assert rows(Checkpoint).keys() == {f"w{n}" for n in range(7)}
    assert mutate(app) == patched


WRITER = textwrap.dedent(
    """
    import sys, time
    from datetime import UTC, datetime
    from sqlalchemy import create_engine, event
    from sqlalchemy.orm import Session
    from app.store.recommendations import save_all
    from app.store.results import results_from_model
    from tests.support.usage import fed_model

    url, batch, committed = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    engine = create_engine(url)
    session = Session(engine)
    commits = 0

    @event.listens_for(session, "after_commit")
    def count(session):
        global commits
        commits += 1

    # after any statement that writes (ORM flush or Core executemany alike)
    @event.listens_for(engine, "after_cursor_execute")
    def stall(conn, cursor, statement, parameters, context, executemany):
        writes = statement.lstrip().upper().startswith(("INSERT", "UPDATE"))
        if writes and commits == committed:  # the next batch's first rows: written, not committed
            print("IN_BATCH", flush=True)
            time.sleep(600)

    save_all(session, results_from_model(fed_model(50)), datetime(2024, 7, 4, tzinfo=UTC), batch)
    print("DONE", flush=True)
    """
)


def test_kill_9_in_the_middle_of_a_batch_leaves_whole_batches_only(
    app: Flask, database_url: str, tmp_path: Path
) -> None:
    """Batches of 10 of 50 containers; the writer dies inside its third batch's transaction.
    Afterwards exactly the first two batches are there, recommendation and checkpoint together,
    and their checkpoints restore recommendations equal to those stored (within one bucket)."""
    db.session.remove()
    db.engine.dispose()
    script = tmp_path / "writer.py"
    script.write_text(WRITER)
    root = Path(__file__).resolve().parents[2]
    proc = subprocess.Popen(
        [sys.executable, str(script), database_url, "10", "2"],
        stdout=subprocess.PIPE,
        cwd=root,
        env={**os.environ, "PYTHONPATH": str(root)},
        start_new_session=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline().decode().strip()
        assert line == "IN_BATCH", line
        os.kill(proc.pid, signal.SIGKILL)
        assert proc.wait(10) == -signal.SIGKILL
    finally:
        if proc.poll() is None:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait(10)
    recs, cps = rows(Recommendation), rows(Checkpoint)
    assert len(recs) == len(cps) == 20
    assert recs.keys() == cps.keys()
    model = ArrayModel(RecommenderSettings())
    assert load_checkpoints(db.session, model) == (20, 0)
    for row in db.session.scalars(sa.select(Recommendation)):
        w = WorkloadKey(row.namespace, row.kind, row.name)
        restored = model.recommend(w)[row.container]
        assert restored.target.cpu == pytest.approx(row.target_cpu, rel=0.051)
        assert restored.target.memory == pytest.approx(row.target_memory, rel=0.051)


JOB_SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": name,
            "replicas": 2,
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/app:1",
                    "requests": {"cpu": "500m", "memory": "512Mi"},
                    "usage": {"cpu": {"base": 0.2}, "memory": {"base": "200Mi"}},
                }
            ],
        }
        for name in ("web", "api")
    ],
}


def checkpoint_counts(app: Flask) -> dict[str, int]:
    with app.app_context():
        try:
            return rows(Checkpoint)
        finally:
            db.session.remove()


@pytest.mark.postgres
def test_database_outage_the_recommender_loop_logs_retries_and_resumes_losing_nothing(
    proxied: tuple[Flask, Proxy], caplog: pytest.LogCaptureFixture
) -> None:
    """The recommender runs in its job loop (as on the leader) while the database goes away:
    each run fails, is logged and retried at the next interval; when the database is back the
    runs succeed again and every checkpoint is still there, with no sample count gone back."""
    from app.jobs.runner import JobRunner
    from app.kube.cluster import ClusterView
    from app.simulator.testing import running_simulator
    from tests.support.processes import wait_for
    from tests.support.recommender_runs import recommender_job

    app, proxy = proxied
    db.session.remove()
    with running_simulator(JOB_SCENARIO, speed=60) as sim:
        cluster = ClusterView(sim.api_client()).start()
        job = recommender_job(app, cluster, sim.now, interval=0.3)
        runner = JobRunner([job])
        try:
            assert cluster.wait_synced(30)
            runner.start()
            wait_for(
                lambda: checkpoint_counts(app).keys() == {"web", "api"}, 60, "first checkpoints"
            )
            before = checkpoint_counts(app)
            runs_before = runner.runs["recommender"]

            proxy.cut()
            caplog.clear()

            # the runner counts a failure before it logs it: wait for the records themselves
            def failures_logged() -> list[logging.LogRecord]:
                return [r for r in caplog.records if "recommender run failed" in r.getMessage()]

            wait_for(lambda: len(failures_logged()) >= 3, 60, "three failed runs logged")
            assert runner.failures["recommender"] >= 3
            failed = failures_logged()
            assert len(failed) >= 3 and all("retrying in" in r.getMessage() for r in failed)
            assert all(r.exc_info for r in failed)  # the cause is in the log
            # No run reported success while the database was away.
            runs_during = runner.runs["recommender"]
            assert runs_during <= runs_before + 1  # at most the run that was mid-way

            proxy.restore()
            wait_for(lambda: runner.runs["recommender"] >= runs_during + 2, 60, "runs resuming")
            after = checkpoint_counts(app)
        finally:
            runner.stop()
            cluster.stop()
    assert after.keys() == before.keys()
    assert all(after[k] >= before[k] for k in before), (before, after)
    assert any(after[k] > before[k] for k in before)  # new samples were saved after the outage


def stored_state(engine: sa.Engine) -> dict[tuple[str, str], tuple[object, object, int, int]]:
    """(workload, container) -> (recommendation updated_at, checkpoint updated_at, target cpu,
    target memory), both tables read in one snapshot: under READ COMMITTED each SELECT has its
    own, and a batch committed between the two showed its checkpoints without their
    recommendations (seen once in CI)."""
    snapshot = engine.execution_options(isolation_level="REPEATABLE READ")
    with snapshot.connect() as conn, conn.begin():
        recs = {
            (n, c): (t, cpu, mem)
            for n, c, t, cpu, mem in conn.execute(
                sa.text(
                    "SELECT name, container, updated_at, target_cpu, target_memory "
                    "FROM recommendations"
                )
            )
        }
        cps = {
            (n, c): t
            for n, c, t in conn.execute(
                sa.text("SELECT name, container, updated_at FROM checkpoints")
            )
        }
    assert recs.keys() == cps.keys(), (recs.keys(), cps.keys())
    return {k: (recs[k][0], cps[k], recs[k][1], recs[k][2]) for k in recs}


@pytest.mark.postgres
@pytest.mark.e2e
def test_kill_9_of_rightsizer_serve_inside_a_checkpoint_batch(tmp_path: Path) -> None:
    """`rightsizer serve` saves 6 workloads in batches of 2 every second. The test holds a row
    lock on one checkpoint, so the app's next batch blocks half-written inside its transaction;
    then the whole app is killed -9. Afterwards: whole batches only (every recommendation saved
    together with its checkpoint, the blocked batch not at all), nothing lost, and a restarted
    app restores from the checkpoints and recommends what was stored, within one bucket."""
    from kubernetes import client as kube

    from app.simulator.testing import running_simulator
    from tests.support.processes import AppProcess, wait_for

    schema_urls = postgres_schema_url()
    url = next(schema_urls)
    engine = sa.create_engine(url)
    scenario = {
        **JOB_SCENARIO,
        "workloads": [
            {**JOB_SCENARIO["workloads"][0], "name": f"w{i}"}  # type: ignore[index]
            for i in range(6)
        ],
    }
    settings: dict[str, Any] = {
        "RIGHTSIZER_CHECKPOINT_BATCH_SIZE": 2,
        "RIGHTSIZER_RECOMMENDER_INTERVAL": 1,
        "RIGHTSIZER_LEASE_DURATION": 3,
        "RIGHTSIZER_LEASE_RENEW_DEADLINE": 2,
        "RIGHTSIZER_LEASE_RETRY_PERIOD": 0.5,
    }
    app = locker = None
    try:
        with running_simulator(scenario, speed=60) as sim:
            api = sim.api_client()
            kube.CoreV1Api(api).create_namespace(plain({"metadata": {"name": "rightsizer"}}))
            api.close()
            app = AppProcess(sim.kubeconfig_path, url, tmp_path / "a.log", **settings)
            app.wait_ready()
            wait_for(lambda: len(stored_state(engine)) == 6, 60, "six saved workloads")
            before = stored_state(engine)
            wait_for(lambda: stored_state(engine) != before, 30, "a second save")
            before = stored_state(engine)

            locker = engine.connect()
            locker.execute(sa.text("SELECT id FROM checkpoints WHERE name = 'w3' FOR UPDATE"))
            me = locker.execute(sa.text("SELECT pg_backend_pid()")).scalar_one()
            watcher = sa.create_engine(url)

            def blocked() -> list[int]:
                with watcher.connect() as conn:
                    return list(
                        conn.execute(
                            sa.text(
                                "SELECT pid FROM pg_stat_activity WHERE "
                                ":me = ANY(pg_blocking_pids(pid))"
                            ),
                            {"me": me},
                        ).scalars()
                    )

            [backend] = wait_for(blocked, 30, "the app blocked inside a batch")
            app.stop(signal.SIGKILL)
            locker.rollback()  # the blocked UPDATE goes on, then finds its client gone
            locker.close()
            locker = None

            def gone() -> bool:
                with watcher.connect() as conn:
                    return not conn.execute(
                        sa.text("SELECT 1 FROM pg_stat_activity WHERE pid = :p"), {"p": backend}
                    ).all()

            wait_for(gone, 30, "the killed app's database session to end")
            watcher.dispose()
            after = stored_state(engine)
            assert after.keys() == before.keys()  # nothing lost
            # Every run rewrites the six checkpoints (fewer than the least a run writes); a
            # recommendation row is written in the same transaction when its values changed,
            # and left as it stands by a run that saw no new sample of it: never newer.
            for k, (rec_t, cp_t, _, _) in after.items():
                assert rec_t <= cp_t, k  # type: ignore[operator]
            # Every run saved w3 until the lock; after it, one run got as far as w3's batch.
            # What that run committed is whole batches; w3's batch, blocked, left nothing.
            last_w3 = after[("w3", "app")][1]
            killed_run = {k: v[1] for k, v in after.items() if v[1] > last_w3}  # type: ignore[operator]
            assert len(set(killed_run.values())) <= 1, killed_run
            assert len(killed_run) % 2 == 0, killed_run  # whole batches of 2 only
            assert len(killed_run) <= 4  # not w3's batch

            # Restart: the checkpoints restore the model; what it recommends matches the store.
            model = ArrayModel(RecommenderSettings())
            with engine.connect() as conn, sa.orm.Session(bind=conn) as session:
                assert load_checkpoints(session, model) == (6, 0)
            for (name, container), (_, _, cpu, mem) in after.items():
                restored = model.recommend(WorkloadKey("shop", "Deployment", name))[container]
                assert restored.target.cpu == pytest.approx(cpu, rel=0.051)
                assert restored.target.memory == pytest.approx(mem, rel=0.051)
            app = AppProcess(sim.kubeconfig_path, url, tmp_path / "b.log", **settings)
            app.wait_ready()
            wait_for(
                lambda: all(v[1] != after[k][1] for k, v in stored_state(engine).items()),
                60,
                "a full save by the restarted app",
            )
            assert "restored 6 checkpoints" in app.log()
    finally:
        if locker is not None:
            locker.close()
        if app is not None:
            app.stop()
        engine.dispose()
        for _ in schema_urls:
            pass
