"""The CLI tells a wrong port from an unknown host, plain HTTP sent to HTTPS and the reverse, and
a certificate from another CA or for another name, each with the fix: against real servers
(the app over HTTP and over HTTPS with certificates of `rightsizer certs`)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from pathlib import Path

import certifi
import pytest
from click.testing import CliRunner, Result
from flask import Flask

from app.cli import cli
from app.serving.certs import CertPaths, ensure
from tests.support.live_server import serving
from tests.support.processes import free_port
from tests.support.tokens import TOKENS
from tests.support.users import app_config, live_url, token_file  # noqa: F401  (fixtures)


@pytest.fixture(params=["sqlite"])
def database_url(request: pytest.FixtureRequest, tmp_path: Path) -> str:
    """The connection does not depend on the database: SQLite only."""
    return f"sqlite:///{tmp_path}/rightsizer.db"


@pytest.fixture
def certs(tmp_path: Path) -> CertPaths:
    paths, _ = ensure(tmp_path / "certs", ["localhost"])
    return paths


@pytest.fixture
def tls_url(app: Flask, certs: CertPaths) -> Iterator[str]:
    with serving(app, tls=(certs.cert, certs.key)) as url:
        yield url


def run(*args: str) -> Result:
    return CliRunner().invoke(cli, ["recommendations", "list", *args], catch_exceptions=False)


def error(result: Result) -> str:
    assert result.exit_code == 1 and result.stdout == "", result.output
    text = result.stderr.strip()
    assert text.startswith("error: ") and "\n" not in text
    return text


def test_a_wrong_port() -> None:
    port = free_port()
    text = error(run("--server", f"http://127.0.0.1:{port}"))
    assert f"nothing listens on 127.0.0.1:{port} (connection refused)" in text
    assert "from --server" in text and "`rightsizer demo` prints the URL it serves" in text


def test_an_unknown_host() -> None:
    text = error(run("--server", "http://no-such-host.invalid:8443"))
    assert "unknown host 'no-such-host.invalid': the name does not resolve (DNS" in text
    assert "check its spelling" in text


def test_plain_http_to_an_https_server(tls_url: str) -> None:
    port = tls_url.rsplit(":", 1)[1]
    text = error(run("--server", f"http://localhost:{port}"))
    assert f"localhost:{port} speaks HTTPS and the request went in plain HTTP" in text
    assert f"use --server https://localhost:{port}" in text


def test_https_to_a_plain_http_server(live_url: str) -> None:  # noqa: F811
    port = live_url.rsplit(":", 1)[1]
    text = error(run("--server", f"https://127.0.0.1:{port}"))
    assert f"127.0.0.1:{port} answers plain HTTP, not HTTPS" in text
    assert f"use --server http://127.0.0.1:{port}" in text


def test_a_certificate_of_another_ca(tls_url: str, certs: CertPaths, tmp_path: Path) -> None:
    text = error(run("--server", tls_url))
    assert "is not signed by any CA this machine trusts (no --cacert given)" in text
    assert "give the CA that signed it with --cacert FILE or RIGHTSIZER_CACERT" in text
    other, _ = ensure(tmp_path / "other", ["localhost"])
    text = error(run("--server", tls_url, "--cacert", str(other.ca)))
    assert f"is not signed by the CA in {other.ca} (from --cacert)" in text


def test_a_certificate_for_another_name(tls_url: str, certs: CertPaths) -> None:
    by_address = tls_url.replace("localhost", "127.0.0.1")
    text = error(run("--server", by_address, "--cacert", str(certs.ca)))
    assert "is not valid for the name '127.0.0.1' (it is for localhost)" in text


def test_the_right_ca_and_name_work(tls_url: str, certs: CertPaths) -> None:
    out = CliRunner().invoke(
        cli,
        ["policy", "list", "-o", "json", "--server", tls_url, "--cacert", str(certs.ca)],
        # requests lets REQUESTS_CA_BUNDLE override a session's CA: --cacert must still win.
        env={"RIGHTSIZER_TOKEN": TOKENS["admin"], "REQUESTS_CA_BUNDLE": certifi.where()},
    )
    assert (out.exit_code, out.stdout) == (0, "[]\n"), out.output


def test_a_server_that_closes_without_answering() -> None:
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        port = listener.getsockname()[1]

        def close_each() -> None:
            for _ in range(3):  # the request, then the probe for TLS
                try:
                    conn, _ = listener.accept()
                except OSError:
                    return
                conn.recv(1024)
                conn.close()

        threading.Thread(target=close_each, daemon=True).start()
        text = error(run("--server", f"http://127.0.0.1:{port}"))
    assert f"127.0.0.1:{port} closed the connection without an answer" in text
