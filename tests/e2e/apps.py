"""Moved to tests.support.processes; re-exported here for tests/jobs until it imports from there."""

from tests.support.processes import AppProcess, recommendations, start_with_webhook, wait_for

__all__ = ["AppProcess", "recommendations", "start_with_webhook", "wait_for"]
