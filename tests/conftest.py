"""Every test gets the shared fixtures of tests/support/fixtures.py (database, app, simulator)."""

pytest_plugins = ["tests.support.fixtures"]
