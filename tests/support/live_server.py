"""The app served over real HTTP on a free loopback port, in a thread, for CLI and browser tests."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from flask import Flask
from werkzeug.serving import make_server


@contextmanager
def serving(app: Flask, tls: tuple[Path, Path] | None = None) -> Iterator[str]:
    """Yields the base URL; the server stops when the block ends. With `tls` (certificate and key
    files) it serves HTTPS, at https://localhost:PORT."""
    context = (str(tls[0]), str(tls[1])) if tls else None
    server = make_server("127.0.0.1", 0, app, threaded=True, ssl_context=context)
    thread = threading.Thread(target=server.serve_forever, name="live-server", daemon=True)
    thread.start()
    try:
        yield f"https://localhost:{server.port}" if tls else f"http://127.0.0.1:{server.port}"
    finally:
        server.shutdown()
        thread.join(10)
