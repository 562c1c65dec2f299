"""The fixtures every test may ask for, registered once as a pytest plugin in tests/conftest.py.

- `cli_context_of_the_tests` (automatic): the CLI's context file and variables are the tests' own.
- `database_url`: each test runs on SQLite and, marked `postgres`, on PostgreSQL: a throw-away
  database migrated when the test uses `app`, else an empty schema (tests that migrate it
  themselves, as `rightsizer db upgrade` does, start from nothing).
- `app`: the Flask app on a fresh, migrated database, without background jobs; a directory or
  module adds settings by overriding `app_config` (tests.support.users does, with a token file).
  Each database is migrated once per session (`migrated_sqlite`, `migrated_postgres`) and copied
  for each test: the SQLite file, the PostgreSQL database as a template.
- `client`: the app's test client (tests.support.users overrides it with the admin's token).
- `sim`: a simulated cluster per test (`module_sim`: one per module, for modules whose tests
  leave it as they found it). A module chooses what it holds by overriding `scenario` (a mapping
  in the scenario format, or None for the bundled default), `sim_options` (Simulator's keyword
  options: seed, nodes/pods, ...), `sim_namespaces` (namespaces created before the test) or
  `sim_warmup` (seconds of simulated time to advance and settle before the test). Overrides used
  with `module_sim` must be module-scoped.
- `module_kubectl`: the real kubectl bound to `module_sim` (tests.support.kubectl.Kubectl).
- `api`: a client of `sim`'s API server, closed after the test (`module_api`: of `module_sim`).
- `cluster`: the jobs' caches of `sim` (app.kube.cluster.ClusterView), started and synced.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from flask_migrate import upgrade
from kubernetes import client as k8s

from app import create_app
from app.kube.cluster import ClusterView
from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from app.store.extensions import db
from tests.support.databases import PostgresTemplate, postgres_schema_url, postgres_template
from tests.support.json_bodies import plain
from tests.support.kubectl import Kubectl


@pytest.fixture(scope="session", autouse=True)
def cli_context_of_the_tests(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The CLI reads a context file and RIGHTSIZER_SERVER, _CACERT, _TOKEN, _CONTEXT by default
    (app/cli/context.py): tests never read the user's, and a `rightsizer demo` they run never
    writes the user's. A test that needs them sets its own."""
    names = ("RIGHTSIZER_SERVER", "RIGHTSIZER_CACERT", "RIGHTSIZER_TOKEN", "RIGHTSIZER_CONTEXT")
    saved = {n: os.environ.pop(n) for n in (*names, "RIGHTSIZER_CONFIG") if n in os.environ}
    path = tmp_path_factory.mktemp("cli-context") / "config.yaml"
    os.environ["RIGHTSIZER_CONFIG"] = str(path)
    yield path
    os.environ.pop("RIGHTSIZER_CONFIG", None)
    os.environ.update(saved)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path: os.PathLike[str]) -> Iterator[str]:
    if request.param == "sqlite":
        yield f"sqlite:///{tmp_path}/rightsizer.db"  # `app` copies the migrated file here
    elif "app" in request.fixturenames:
        template: PostgresTemplate = request.getfixturevalue("migrated_postgres")
        yield from template.copy()
    else:
        yield from postgres_schema_url()


@pytest.fixture
def app_config() -> dict[str, object]:
    """Settings added to the app's; overridden where tests need others."""
    return {}


SQLITE = "sqlite:///"


def migrate(url: str) -> None:
    """Brings the database at `url` to the newest revision and closes every connection to it."""
    template = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": url, "JOBS": False})
    with template.app_context():
        upgrade()
        db.session.remove()
        db.engine.dispose()


@pytest.fixture(scope="session")
def migrated_sqlite(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A SQLite database migrated to the newest revision once per test session: `app` copies the
    file for each test instead of running every migration again (CONTRIBUTING.md: measured)."""
    path = tmp_path_factory.mktemp("migrated") / "rightsizer.db"
    migrate(f"{SQLITE}{path}")
    return path


@pytest.fixture(scope="session")
def migrated_postgres() -> Iterator[PostgresTemplate]:
    """A PostgreSQL database migrated once per test session (skips when the server is not
    reachable): `database_url` makes each test using `app` a database from it."""
    yield from postgres_template(migrate)


@pytest.fixture
def app(
    database_url: str, app_config: dict[str, object], request: pytest.FixtureRequest
) -> Iterator[Flask]:
    if database_url.startswith(SQLITE):
        target = Path(database_url.removeprefix(SQLITE))
        if not target.exists():
            shutil.copyfile(request.getfixturevalue("migrated_sqlite"), target)
    app = create_app(
        {"TESTING": True, "SQLALCHEMY_DATABASE_URI": database_url, "JOBS": False, **app_config}
    )
    with app.app_context():  # a copy of a migrated database (migrated_sqlite, migrated_postgres)
        yield app
        db.session.remove()
        db.engine.dispose()


@pytest.fixture
def client(app: Flask) -> FlaskClient:
    return app.test_client()


@pytest.fixture(scope="module")
def scenario() -> Mapping[str, Any] | None:
    """The cluster `sim` starts from: None is the simulator's bundled default scenario."""
    return None


@pytest.fixture(scope="module")
def sim_options() -> dict[str, Any]:
    """Simulator's keyword options (seed, nodes/pods for scale mode, version, ...)."""
    return {}


@pytest.fixture(scope="module")
def sim_namespaces() -> Sequence[str]:
    """Namespaces created through the API before the test, beyond the scenario's."""
    return ()


@pytest.fixture(scope="module")
def sim_warmup() -> float:
    """Seconds of simulated time to advance (then settle) before the test: 0 leaves the clock."""
    return 0


def _started(
    scenario: Mapping[str, Any] | None,
    options: dict[str, Any],
    namespaces: Sequence[str],
    warmup: float,
) -> Iterator[Simulator]:
    with running_simulator(scenario, **options) as s:
        if namespaces:
            api = s.api_client()
            for name in namespaces:
                k8s.CoreV1Api(api).create_namespace(plain({"metadata": {"name": name}}))
            api.close()
        if warmup:
            s.advance(warmup)
            s.settle()
        yield s


@pytest.fixture
def sim(
    scenario: Mapping[str, Any] | None,
    sim_options: dict[str, Any],
    sim_namespaces: Sequence[str],
    sim_warmup: float,
) -> Iterator[Simulator]:
    yield from _started(scenario, sim_options, sim_namespaces, sim_warmup)


@pytest.fixture(scope="module")
def module_sim(
    scenario: Mapping[str, Any] | None,
    sim_options: dict[str, Any],
    sim_namespaces: Sequence[str],
    sim_warmup: float,
) -> Iterator[Simulator]:
    yield from _started(scenario, sim_options, sim_namespaces, sim_warmup)


@pytest.fixture
def api(sim: Simulator) -> Iterator[k8s.ApiClient]:
    a = sim.api_client()
    yield a
    a.close()


@pytest.fixture
def module_api(module_sim: Simulator) -> Iterator[k8s.ApiClient]:
    a = module_sim.api_client()
    yield a
    a.close()


@pytest.fixture
def cluster(sim: Simulator) -> Iterator[ClusterView]:
    view = ClusterView(sim.api_client()).start()
    assert view.wait_synced(30)
    yield view
    view.stop()


@pytest.fixture(scope="module")
def module_kubectl(module_sim: Simulator, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    return Kubectl(module_sim, tmp_path_factory.mktemp("kubectl-cache"))
