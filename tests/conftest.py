"""Every test gets the shared fixtures of tests/support/fixtures.py (database, app, simulator);
tests/support/process_marker.py marks `process` those that start a process or a server.

Hypothesis runs without its per-example deadline: on a shared, loaded machine a 200 ms deadline
fails property tests for the machine's load, not for the code (speed belongs in benchmarks/)."""

from hypothesis import settings

pytest_plugins = ["tests.support.fixtures", "tests.support.process_marker"]

settings.register_profile("rightsizer", deadline=None)
settings.load_profile("rightsizer")
