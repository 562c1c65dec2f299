"""Security: TLS of `rightsizer serve`, key files, secrets kept out of logs, writes refused
without the right token, stored names escaped in the dashboard."""

from __future__ import annotations

import os
import socket
import ssl
import stat
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
import requests
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.serving.certs import CertPaths, ensure, service_names
from app.store.extensions import db
from app.store.models import AuditEvent, Policy, Recommendation, Scaler
from tests.support.processes import AppProcess
from tests.support.sql_scan import raw_sql_findings
from tests.support.tokens import TOKEN_FILE, TOKENS

SERVICE = "rightsizer.rightsizer.svc"
POLICY = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "updateMode": "Recreate",
}
SCALER = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"nodesPerReplica": 4}},
}


@pytest.fixture(scope="module")
def tls_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[AppProcess, CertPaths]]:
    """`rightsizer serve` over TLS with a token file, access log on, logging at DEBUG."""
    from flask_migrate import upgrade

    from app import create_app

    tmp = tmp_path_factory.mktemp("tls")
    db_url = f"sqlite:///{tmp}/rightsizer.db"
    app = create_app({"SQLALCHEMY_DATABASE_URI": db_url, "JOBS": False})
    with app.app_context():
        upgrade()
        db.engine.dispose()
    paths, _ = ensure(tmp / "certs", [*service_names("rightsizer", "rightsizer"), "localhost"])
    tokens = tmp / "tokens.csv"
    tokens.write_text(TOKEN_FILE)
    proc = AppProcess(
        str(tmp / "no-kubeconfig"),
        db_url,
        tmp / "app.log",
        ca_file=str(paths.ca),
        RIGHTSIZER_JOBS="false",
        RIGHTSIZER_PUBLIC_READS="false",
        RIGHTSIZER_ACCESS_LOG="true",
        RIGHTSIZER_LOG_LEVEL="DEBUG",
        RIGHTSIZER_AUTH_TOKEN_FILE=str(tokens),
        RIGHTSIZER_TLS_CERT_FILE=paths.cert,
        RIGHTSIZER_TLS_KEY_FILE=paths.key,
    )
    try:
        proc.wait_ready()
        yield proc, paths
    finally:
        proc.stop()


def handshake(port: int, ctx: ssl.SSLContext, server_hostname: str) -> str:
    with (
        socket.create_connection(("127.0.0.1", port), timeout=5) as raw,
        ctx.wrap_socket(raw, server_hostname=server_hostname) as tls,
    ):
        return str(tls.version())


def legacy_client(version: ssl.TLSVersion) -> ssl.SSLContext:
    """A client that offers only `version` (and would accept any certificate)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    ctx.set_ciphers("ALL:@SECLEVEL=0")
    with warnings.catch_warnings():  # setting TLS 1.0/1.1 warns: that is the point here
        warnings.simplefilter("ignore", DeprecationWarning)
        ctx.minimum_version = ctx.maximum_version = version
    return ctx


@pytest.mark.e2e
def test_tls_below_1_2_is_refused_and_the_chain_verifies_for_the_service_name(
    tls_server: tuple[AppProcess, CertPaths],
) -> None:
    proc, paths = tls_server
    for old in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1):
        with pytest.raises(ssl.SSLError) as e:
            handshake(proc.port, legacy_client(old), SERVICE)
        # The server refused it: the client did offer the version (not "no protocols").
        assert "PROTOCOL_VERSION" in str(e.value), e.value
    verified = ssl.create_default_context(cafile=str(paths.ca))
    verified.minimum_version = ssl.TLSVersion.TLSv1_2
    for name in (SERVICE, "rightsizer.rightsizer.svc.cluster.local", "rightsizer", "localhost"):
        assert handshake(proc.port, verified, name) in ("TLSv1.2", "TLSv1.3")
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(proc.port, verified, "other.rightsizer.svc")  # not a name of the certificate
    with pytest.raises(ssl.SSLCertVerificationError):
        handshake(proc.port, ssl.create_default_context(), SERVICE)  # system CAs: not trusted
    tls12 = ssl.create_default_context(cafile=str(paths.ca))
    tls12.maximum_version = ssl.TLSVersion.TLSv1_2
    assert handshake(proc.port, tls12, SERVICE) == "TLSv1.2"


def test_private_key_files_are_0600(tmp_path: Path) -> None:
    paths, _ = ensure(tmp_path / "certs", service_names("rightsizer", "rightsizer"))
    for key in (paths.key, paths.ca_key):
        assert stat.S_IMODE(os.stat(key).st_mode) == 0o600, key
    for cert in (paths.cert, paths.ca):
        assert stat.S_IMODE(os.stat(cert).st_mode) & 0o022 == 0, cert


@pytest.mark.e2e
def test_no_token_or_key_material_in_the_logs(tls_server: tuple[AppProcess, CertPaths]) -> None:
    proc, paths = tls_server
    url, verify = proc.url, proc.verify

    def call(method: str, path: str, token: str | None, **kw: Any) -> int:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        resp = requests.request(
            method, f"{url}{path}", headers=headers, verify=verify, timeout=5, **kw
        )
        return resp.status_code

    bogus = "not-a-real-token-5f1e0c9a7b"
    assert call("POST", "/api/v1/policies", TOKENS["admin"], json=POLICY) == 201
    assert call("GET", "/api/v1/policies", TOKENS["reader"]) == 200
    assert call("DELETE", "/api/v1/policies/shop/web", TOKENS["reader"]) == 403
    assert call("GET", "/api/v1/policies", bogus) == 401
    assert call("POST", "/dashboard/login", None, data={"token": bogus}) in (200, 401, 303)
    assert call("POST", "/dashboard/login", None, data={"token": TOKENS["admin"]}) in (200, 303)
    log = proc.log()
    assert "/api/v1/policies" in log  # the access log is on: requests were logged
    for secret in [*TOKENS.values(), bogus]:
        assert secret not in log, f"token {secret[:6]}... in the log"
    assert "PRIVATE KEY" not in log
    for path in (paths.key, paths.ca_key):
        body = [line for line in path.read_text().splitlines() if "-----" not in line]
        assert body and not any(line in log for line in body)


WRITES = [
    ("POST", "/api/v1/policies", POLICY),
    ("PUT", "/api/v1/policies/shop/web", POLICY),
    ("PATCH", "/api/v1/policies/shop/web", {"updateMode": "Off"}),
    ("DELETE", "/api/v1/policies/shop/web", None),
    ("POST", "/api/v1/scalers", SCALER),
    ("PUT", "/api/v1/scalers/coredns", SCALER),
    ("PATCH", "/api/v1/scalers/coredns", {"enabled": False}),
    ("DELETE", "/api/v1/scalers/coredns", None),
]


def counts() -> tuple[int, ...]:
    return tuple(
        db.session.scalar(select(func.count()).select_from(m)) for m in (Policy, Scaler, AuditEvent)
    )


def versions() -> tuple[int, ...]:
    return tuple(db.session.scalars(select(Policy.version))) + tuple(
        db.session.scalars(select(Scaler.version))
    )


def test_writes_without_a_token_are_401_and_with_a_read_only_token_403(
    client: FlaskClient, as_user: Callable[[str], FlaskClient], anon: FlaskClient
) -> None:
    assert client.post("/api/v1/policies", json=POLICY).status_code == 201
    assert client.post("/api/v1/scalers", json=SCALER).status_code == 201
    before, before_versions = counts(), versions()
    reader = as_user("reader")
    bogus = {"Authorization": "Bearer nope"}
    for method, path, body in WRITES:
        kw: dict[str, Any] = {"json": body} if body is not None else {}
        for c, headers, want in (
            (anon, {}, 401),
            (anon, bogus, 401),
            (reader, {}, 403),
        ):
            resp = c.open(path, method=method, headers=headers, **kw)
            assert resp.status_code == want, (method, path, want, resp.get_json())
            assert resp.is_json and resp.get_json()["error"]
            assert "nope" not in resp.get_data(as_text=True)
    # The editor may update policies but not create or delete them, nor touch scalers.
    editor = as_user("editor")
    assert editor.delete("/api/v1/policies/shop/web").status_code == 403
    assert editor.post("/api/v1/scalers", json={**SCALER, "name": "x"}).status_code == 403
    db.session.expire_all()
    assert counts() == before and versions() == before_versions


PAYLOAD = "<script>alert(1)</script>"
IMG = '"><img src=x onerror=alert(2)>'


def test_names_and_labels_from_the_database_are_escaped_on_every_page(
    app: Flask, client: FlaskClient
) -> None:
    """Rows written straight to the database (bypassing the API's validation), as a compromised
    writer or an old version could leave them: nothing they hold runs in the browser."""
    db.session.add(
        Policy(
            name=PAYLOAD,
            namespace="shop",
            target_kind="Deployment",
            target_name=IMG,
            update_mode="Recreate",
            container_policies=[{"containerName": PAYLOAD, "mode": "Auto"}],
        )
    )
    db.session.add(
        Recommendation(
            namespace="shop",
            kind="Deployment",
            name=PAYLOAD,
            container=IMG,
            target_cpu=100,
            target_memory=2**28,
            lower_bound_cpu=50,
            lower_bound_memory=2**27,
            upper_bound_cpu=200,
            upper_bound_memory=2**29,
            uncapped_target_cpu=100,
            uncapped_target_memory=2**28,
            sample_count=10,
            current_cpu_request=500,
            current_memory_request=2**30,
        )
    )
    db.session.add(
        Scaler(
            name=PAYLOAD,
            target_namespace="kube-system",
            target_kind="Deployment",
            target_name=IMG,
            params={"linear": {"nodesPerReplica": 1}},
            node_selector=f"pool={PAYLOAD}",
            enabled=True,
            last_message=IMG,
        )
    )
    db.session.add(
        AuditEvent(
            actor=PAYLOAD, action="update", object_kind="Policy", object_ref=IMG, message=PAYLOAD
        )
    )
    db.session.commit()
    pages = [
        "/dashboard/",
        "/dashboard/workloads",
        "/dashboard/workloads?namespace=" + PAYLOAD,
        "/dashboard/scalers",
        "/dashboard/events",
        "/dashboard/workloads/shop/Deployment/" + PAYLOAD.replace("/", "%2F"),
    ]
    shown = 0
    for page in pages:
        resp = client.get(page)
        assert resp.status_code in (200, 404), (page, resp.status_code)
        html = resp.get_data(as_text=True)
        assert "<script>alert" not in html and "<img src=x" not in html, page
        shown += html.count("&lt;script&gt;alert(1)&lt;/script&gt;")
    assert shown >= 4  # the payload was on the pages, escaped


# --- SQL built only through SQLAlchemy parameters --------------------------------------------

APP = Path(__file__).resolve().parents[2] / "app"


def test_the_sql_scanner_finds_what_it_looks_for() -> None:
    bad = """
from sqlalchemy import text
session.execute(text(f"SELECT * FROM policies WHERE name = '{name}'"))
session.execute("DELETE FROM policies WHERE id = %s" % pid)
conn.exec_driver_sql("SELECT 1")
conn.exec_driver_sql(query)
session.execute(text("SELECT " + column))
session.execute("SELECT {}".format(x))
"""
    found = raw_sql_findings(bad, "bad.py")
    assert sorted(int(f.split(":")[1]) for f in found) == [3, 4, 6, 7, 8], found
    good = (
        'session.execute(text("SELECT 1"))\nsession.execute(select(Policy).where(Policy.name == n))'
    )
    assert raw_sql_findings(good, "good.py") == []


def test_the_sql_scanner_knows_sqlalchemy_by_its_imports() -> None:
    """SQLAlchemy's raw-SQL constructors under other names are found; a function of the
    application that is only called `text` (app.core.wire.text) is not SQL."""
    aliased = """
from sqlalchemy import text as sql_text, literal_column
import sqlalchemy as sa
from sqlalchemy import sql
from app.store.extensions import db
session.execute(sql_text(f"SELECT * FROM policies WHERE name = '{name}'"))
select(literal_column(column))
session.execute(sa.text("SELECT " + column))
session.execute(sql.expression.text(query))
session.execute(db.text(query))
session.execute(sa.text("SELECT 1"))
"""
    found = raw_sql_findings(aliased, "aliased.py")
    assert sorted(int(f.split(":")[1]) for f in found) == [6, 7, 8, 9, 10], found
    not_sql = """
from app.core.wire import text
name = text(meta.get("name"))
label = widget.text(f"{name}:")
"""
    assert raw_sql_findings(not_sql, "views.py") == []


def test_app_builds_sql_only_through_sqlalchemy_parameters() -> None:
    files = sorted(APP.rglob("*.py"))
    assert len(files) > 50  # the scan did see the application
    findings = [
        f
        for path in files
        for f in raw_sql_findings(path.read_text(encoding="utf-8"), str(path.relative_to(APP)))
    ]
    assert findings == [], findings


HOSTILE = [
    "x'); DROP TABLE policies; --",
    'shop" OR "1"="1',
    "shop' OR '1'='1",
    "%' OR name LIKE '%",
    "\\'; SELECT pg_sleep(10); --",
]


def test_hostile_names_reach_the_database_only_as_data(client: FlaskClient) -> None:
    """Hostile strings through every way the API takes them: as a policy name (refused, the
    field named), as list filters (no match, no error), and stored directly then read back byte
    for byte, fetched and deleted by their URL. Tables and other rows stay intact."""
    assert client.post("/api/v1/policies", json=POLICY).status_code == 201
    before = counts()
    for bad in HOSTILE:
        resp = client.post("/api/v1/policies", json={**POLICY, "name": bad})
        assert resp.status_code == 422 and "name" in resp.get_json()["message"], resp.get_json()
        for path, param in (
            ("/api/v1/policies", "namespace"),
            ("/api/v1/recommendations", "namespace"),
            ("/api/v1/recommendations", "name"),
            ("/api/v1/events", "objectRef"),
            ("/api/v1/events", "actor"),
        ):
            resp = client.get(path, query_string={param: bad})
            assert resp.status_code == 200, (path, param, resp.get_json())
            assert resp.get_json()["items"] == [], (path, param)
    db.session.expire_all()
    assert counts() == before

    for i, bad in enumerate(HOSTILE):  # as an old version or a direct writer could leave them
        db.session.add(Policy(name=bad, namespace="shop", update_mode="Off", target_name=f"w{i}"))
    db.session.commit()
    listed = {p["name"] for p in client.get("/api/v1/policies?namespace=shop").get_json()["items"]}
    assert listed == {"web", *HOSTILE}
    for bad in HOSTILE:
        url = "/api/v1/policies/shop/" + quote(bad, safe="")
        got = client.get(url)
        assert got.status_code == 200 and got.get_json()["name"] == bad, bad
        # An update re-validates the whole policy: refused, naming the field, row unchanged.
        resp = client.patch(url, json={"updateMode": "Initial"})
        assert resp.status_code == 422 and resp.get_json()["details"][0]["field"] == "name"
        assert client.get(url).get_json()["updateMode"] == "Off"
        assert client.delete(url).status_code == 204
    db.session.expire_all()
    assert [p.name for p in db.session.scalars(select(Policy))] == ["web"]
