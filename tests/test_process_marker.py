"""`make test-fast` leaves out the tests tests/support/process_marker.py marks `process`: those
that start a process, a server, a browser or a cluster (through their fixtures and helpers; a
test using `cluster` is marked for the `sim` that fixture asks for)."""

from __future__ import annotations

from app.core.quantity import readable
from tests.support import fixtures, processes, updater_runs
from tests.support.process_marker import _Walk


def test_the_simulated_cluster_and_its_users_start_something() -> None:
    assert _Walk().starts(fixtures.sim)
    assert _Walk().starts(fixtures.module_sim)  # through their helper `_started`
    assert _Walk().starts(processes.AppProcess)  # subprocess


def _a_test_calling_a_helper() -> None:
    with updater_runs.web_api():  # a helper of the tests that starts the simulator
        pass


def _a_pure_test() -> None:
    assert readable("cpu", 1500) == "1.5"


def test_a_test_calling_a_helper_that_starts_something_starts_something() -> None:
    assert _Walk().starts(_a_test_calling_a_helper)
    assert not _Walk().starts(updater_runs.policy)  # a helper of the same module that does not


def test_pure_code_and_the_app_fixture_start_nothing() -> None:
    assert not _Walk().starts(_a_pure_test)
    assert not _Walk().starts(fixtures.app)  # the app in-process on a SQLite copy
    assert not _Walk().starts(fixtures.database_url)
