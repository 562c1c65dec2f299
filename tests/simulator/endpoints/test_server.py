"""A client that goes away mid-request is routine for an API server: the simulated one logs it at
debug level, with no traceback on stderr (socketserver's default printed one per connection: in
CI, the client an unreadable eviction answer made close its connection left two)."""

from __future__ import annotations

import logging
import socket
import struct
import time
from urllib.parse import urlsplit

import pytest

from app.simulator.simulator import Simulator


def test_a_client_that_resets_its_connection_is_a_debug_line(
    sim: Simulator, caplog: pytest.LogCaptureFixture, capsys: pytest.CaptureFixture[str]
) -> None:
    url = urlsplit(sim.url)
    with caplog.at_level(logging.DEBUG, logger="app.simulator.endpoints.server"):
        sock = socket.create_connection((url.hostname, url.port))
        sock.sendall(b"GET /api/v1/pods HTTP/1.1\r\nHost: sim\r\n\r\n")
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        sock.close()  # a reset, not a FIN: the server's next read or write fails
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and not any(
            "went away" in r.getMessage() for r in caplog.records
        ):
            time.sleep(0.02)
    assert any("went away" in r.getMessage() for r in caplog.records)
    assert "Traceback" not in capsys.readouterr().err
