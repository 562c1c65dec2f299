"""What `rightsizer serve`'s gunicorn settings do in each worker once the app is loaded."""

from __future__ import annotations

import gc
import sys
from collections.abc import Iterator
from types import SimpleNamespace

import pytest
from flask import Flask

from app.probes import start_with_worker
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


def test_a_booting_worker_starts_the_apps_parts_before_it_serves(restored: None) -> None:
    """The parts registered with start_with_worker (the webhook's cache) are started by the
    worker's post_worker_init, given WORKER_START_WAIT to be ready; a worker whose wsgi is not a
    Flask app starts nothing."""
    app = Flask(__name__)
    started: list[float] = []
    start_with_worker(app, started.append)
    gunicorn_conf.post_worker_init(worker=SimpleNamespace(wsgi=app))
    assert started == [gunicorn_conf.WORKER_START_WAIT]
    gunicorn_conf.post_worker_init(worker=SimpleNamespace(wsgi=lambda environ, start: []))
    assert started == [gunicorn_conf.WORKER_START_WAIT]
