"""Moved to tests.support.pods; re-exported here for tests/core until it imports from there."""

from tests.support.pods import (  # noqa: F401
    amounts,
    apply_strictly,
    assert_valid_pod,
    container,
    pod,
    policy,
    rec,
    sized_containers,
)
