"""A Prometheus as production runs it, for the history loader's tests: HTTPS with a certificate of
a test CA (optionally asking for a client certificate), a bearer token or basic auth, a tenant
header, a path prefix (VictoriaMetrics' `/select/0/prometheus`, Mimir's `/prometheus`), and VPA's
classic label names (`pod_name`, `name`, a `job` label) instead of the kubelet's.

It answers `GET <prefix>/api/v1/query_range` from the simulated cluster's own Prometheus endpoint:
the query's label names are translated to the simulator's, the job matcher checked and dropped, and
the answer's labels translated back. `archive()` keeps the series of pods about to be deleted (the
simulator forgets them; a real Prometheus keeps them for its retention) and the labels of those
pods, served under `up{job="kubernetes-pods"}` with `kubernetes_namespace`, `kubernetes_pod_name`
and `pod_label_*` labels, as Prometheus' kubernetes-pods scrape configuration relabels them.
"""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import re
import ssl
import threading
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlparse

import requests
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

JOB = "kubernetes-cadvisor"
LABELS_QUERY = 'up{job="kubernetes-pods"}'
TO_SIMULATOR = {"pod_name": "pod", "name": "container"}  # VPA's names -> the kubelet's
FROM_SIMULATOR = {v: k for k, v in TO_SIMULATOR.items()}


@dataclass
class Pki:
    """A test CA with a server certificate for 127.0.0.1 and a client certificate, as files."""

    directory: Path

    def __post_init__(self) -> None:
        now = dt.datetime.now(dt.UTC)
        ca_key = ec.generate_private_key(ec.SECP256R1())
        ca_name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "test-ca")])
        ca = (
            _builder(ca_name, ca_name, ca_key.public_key(), now)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .sign(ca_key, hashes.SHA256())
        )
        self.ca = self._write("ca.crt", ca.public_bytes(serialization.Encoding.PEM))
        self.server_cert, self.server_key = self._leaf(
            "server", ca, ca_key, now, ExtendedKeyUsageOID.SERVER_AUTH
        )
        self.client_cert, self.client_key = self._leaf(
            "client", ca, ca_key, now, ExtendedKeyUsageOID.CLIENT_AUTH
        )

    def _leaf(
        self,
        name: str,
        ca: x509.Certificate,
        ca_key: ec.EllipticCurvePrivateKey,
        now: dt.datetime,
        usage: x509.ObjectIdentifier,
    ) -> tuple[str, str]:
        key = ec.generate_private_key(ec.SECP256R1())
        subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
        cert = (
            _builder(subject, ca.subject, key.public_key(), now)
            .add_extension(
                x509.SubjectAlternativeName(
                    [x509.DNSName("localhost"), x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]
                ),
                critical=False,
            )
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .sign(ca_key, hashes.SHA256())
        )
        key_pem = key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
        return (
            self._write(f"{name}.crt", cert.public_bytes(serialization.Encoding.PEM)),
            self._write(f"{name}.key", key_pem),
        )

    def _write(self, name: str, data: bytes) -> str:
        path = self.directory / name
        path.write_bytes(data)
        return str(path)


def _builder(
    subject: x509.Name, issuer: x509.Name, key: Any, now: dt.datetime
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(subject)
        .issuer_name(issuer)
        .public_key(key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=1))
    )


@dataclass
class PrometheusServer:
    """The server; `start()` binds a free port on 127.0.0.1 (or `port`)."""

    upstream: str  # the simulator's URL
    pki: Pki
    token: str | None = None  # the bearer token it accepts
    basic: tuple[str, str] | None = None  # or the user and password
    tenant: str | None = None  # the X-Scope-OrgID it requires
    prefix: str = ""
    client_certs: bool = False  # ask for (and require) a client certificate
    port: int = 0
    failures: int = 0  # answer 503 to this many requests first
    seen: list[dict[str, str]] = field(default_factory=list)  # each request's headers
    archived: list[dict[str, Any]] = field(default_factory=list)  # series of deleted pods
    pod_labels: list[dict[str, Any]] = field(default_factory=list)

    def start(self) -> PrometheusServer:
        handler = _handler(self)
        self.httpd = ThreadingHTTPServer(("127.0.0.1", self.port), handler)
        self.port = self.httpd.server_address[1]
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(self.pki.server_cert, self.pki.server_key)
        if self.client_certs:
            context.load_verify_locations(self.pki.ca)
            context.verify_mode = ssl.CERT_REQUIRED
        self.httpd.socket = context.wrap_socket(self.httpd.socket, server_side=True)
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)
        self.thread.start()
        return self

    def stop(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.port}{self.prefix}"

    def archive(
        self, namespace: str, pod: str, labels: dict[str, str], start: float, end: float
    ) -> None:
        """Keeps a pod's series and labels before the test deletes it."""
        for query in (
            f'rate(container_cpu_usage_seconds_total{{pod="{pod}"}}[300s])',
            f'container_memory_working_set_bytes{{pod="{pod}"}}',
        ):
            params = {"query": query, "start": str(start), "end": str(end), "step": "300"}
            answer = requests.get(f"{self.upstream}/api/v1/query_range", params=params, timeout=30)
            for series in answer.json()["data"]["result"]:
                if series["metric"]["namespace"] == namespace:
                    series["metric"]["__query__"] = "cpu" if "rate(" in query else "memory"
                    self.archived.append(series)
        metric = {"__name__": "up", "job": "kubernetes-pods", "kubernetes_namespace": namespace}
        metric["kubernetes_pod_name"] = pod
        metric.update({f"pod_label_{_prom_label(k)}": v for k, v in labels.items()})
        self.pod_labels.append({"metric": metric, "values": [[end, "1"]]})

    # --- answering ----------------------------------------------------------------------------

    def authorized(self, headers: dict[str, str]) -> bool:
        auth = headers.get("authorization", "")
        if self.token is not None and auth != f"Bearer {self.token}":
            return False
        if self.basic is not None:
            wanted = base64.b64encode(f"{self.basic[0]}:{self.basic[1]}".encode()).decode()
            if auth != f"Basic {wanted}":
                return False
        return self.tenant is None or headers.get("x-scope-orgid") == self.tenant

    def answer(self, query: str, params: dict[str, str]) -> tuple[int, dict[str, Any]]:
        if query == LABELS_QUERY:
            return 200, _matrix(self.pod_labels)
        if f'job="{JOB}"' not in query:
            return 400, {"status": "error", "errorType": "bad_data", "error": "no job matcher"}
        translated = query.replace(f'job="{JOB}", ', "")
        for vpa, kubelet in TO_SIMULATOR.items():
            translated = re.sub(rf"\b{vpa}(?=\s*(=~|!~|!=|=))", kubelet, translated)
        answer = requests.get(
            f"{self.upstream}/api/v1/query_range",
            params={**params, "query": translated},
            timeout=30,
        ).json()
        if answer.get("status") != "success":
            return 400, answer
        result = [self._relabel(s["metric"], s["values"]) for s in answer["data"]["result"]]
        kind = "cpu" if query.startswith("rate(") else "memory"
        result += [
            self._relabel({k: v for k, v in s["metric"].items() if k != "__query__"}, s["values"])
            for s in self.archived
            if s["metric"]["__query__"] == kind
        ]
        return 200, _matrix(result)

    @staticmethod
    def _relabel(metric: dict[str, str], values: list[Any]) -> dict[str, Any]:
        relabelled = {FROM_SIMULATOR.get(k, k): v for k, v in metric.items()}
        relabelled["job"] = JOB
        return {"metric": relabelled, "values": values}


def _prom_label(key: str) -> str:
    return re.sub(r"[^a-zA-Z0-9_]", "_", key)


def _matrix(result: list[dict[str, Any]]) -> dict[str, Any]:
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _handler(server: PrometheusServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            return

        def do_GET(self) -> None:
            headers = {k.lower(): v for k, v in self.headers.items()}
            server.seen.append(headers)
            url = urlparse(self.path)
            if url.path != f"{server.prefix}/api/v1/query_range":
                self._send(404, b"404 page not found", "text/plain")
                return
            if server.failures > 0:
                server.failures -= 1
                self._send(503, b"<html>Service Unavailable</html>", "text/html")
                return
            if not server.authorized(headers):
                self._send(401, b"Unauthorized\n", "text/plain")
                return
            params = {k: v[0] for k, v in parse_qs(url.query).items()}
            status, body = server.answer(params.get("query", ""), params)
            self._send(status, json.dumps(body).encode(), "application/json")

        def _send(self, status: int, body: bytes, kind: str) -> None:
            self.send_response(status)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler
