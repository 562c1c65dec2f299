"""Moved to tests.support.kubectl; re-exported here for tests/jobs until it imports from there."""

from tests.support.kubectl import describe_events

__all__ = ["describe_events"]
