"""Moved to tests.support.generators; re-exported for tests/core until it imports from there."""

from tests.support.generators import (  # noqa: F401
    CPU,
    MEMORY,
    NAMES,
    lr_objects,
    lr_pods,
    place,
    policies,
    q,
)
