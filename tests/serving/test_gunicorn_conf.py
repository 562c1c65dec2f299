"""What `rightsizer serve`'s gunicorn settings do in each worker once the app is loaded."""

from __future__ import annotations

import gc
import subprocess
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


def test_each_read_bound_is_at_most_the_webhook_timeout() -> None:
    """kube-apiserver gives up on the webhook after its timeoutSeconds: a client may take no
    longer for its handshake, headers or body."""
    from app.config import from_environment
    from app.serving.intake import ReadBounds

    settings = from_environment(
        {
            "RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS": "4",
            "RIGHTSIZER_TLS_HANDSHAKE_TIMEOUT_SECONDS": "2",
            "RIGHTSIZER_HEADER_TIMEOUT_SECONDS": "10",
            "RIGHTSIZER_BODY_TIMEOUT_SECONDS": "4.5",
        }
    )
    assert gunicorn_conf.read_bounds(settings) == ReadBounds(handshake=2, headers=4, body=4)
    assert gunicorn_conf.read_bounds(from_environment({})) == ReadBounds(3, 3, 3)


def test_the_largest_body_read_is_the_largest_any_route_accepts() -> None:
    """Larger is answered 413 before it is read (app.serving.request_end); the webhook's own
    limit, or the REST API's when it is set higher."""
    from app.config import from_environment
    from app.serving.request_end import BODY_LIMIT
    from app.webhook.review import MAX_BODY_BYTES

    assert BODY_LIMIT == MAX_BODY_BYTES
    assert gunicorn_conf.read_bounds(from_environment({})).body_bytes == MAX_BODY_BYTES
    larger = {"RIGHTSIZER_API_MAX_BODY_BYTES": str(8 * MAX_BODY_BYTES)}
    assert gunicorn_conf.read_bounds(from_environment(larger)).body_bytes == 8 * MAX_BODY_BYTES


def test_the_master_loads_no_database_cluster_or_web_library() -> None:
    """gunicorn's master reads only these settings (the workers load the app): importing them
    must not load SQLAlchemy, Alembic, Flask-SQLAlchemy or the Kubernetes client, which the
    master never uses and would hold for its whole life. Failed before: app/__init__.py
    imported Flask, SQLAlchemy and Alembic at the top and app.settings the Kubernetes client, so
    the master held about 50 MB more (benchmarks/peers.py, kept memory)."""
    code = (
        "import sys, app.serving.gunicorn_conf; "
        "print(' '.join(sorted({m.split('.')[0] for m in sys.modules})))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = set(done.stdout.split())
    heavy = {"sqlalchemy", "alembic", "flask_sqlalchemy", "flask_migrate", "kubernetes"}
    assert loaded & heavy == set(), sorted(loaded & heavy)
