"""What `rightsizer serve`'s gunicorn settings do in each worker once the app is loaded."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator

import pytest

from app.serving import gunicorn_conf


@pytest.fixture
def restored() -> Iterator[None]:
    interval = sys.getswitchinterval()
    yield
    sys.setswitchinterval(interval)
    gc.unfreeze()


def test_a_worker_hands_the_gil_over_within_half_a_millisecond(restored: None) -> None:
    """Failed before: a worker kept CPython's 5 ms, so a ready answer waited up to 5 ms for the
    GIL behind the cache's refresh thread, each time it needed it back."""
    sys.setswitchinterval(0.005)
    gunicorn_conf.post_worker_init(worker=None)
    assert sys.getswitchinterval() == pytest.approx(0.0005)
    assert gc.get_freeze_count() > 0
