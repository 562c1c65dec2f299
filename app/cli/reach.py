"""Why a client command could not talk to the server, in words that name the fix.

`requests` reports a wrong port, an unknown host, plain HTTP sent to an HTTPS server (and the
reverse) and a certificate signed by another CA as nested exceptions with little to tell them
apart. `problem` reads the chain (pure); where the chain is ambiguous (a server that closes the
connection without a word, a TLS handshake failure), one small probe of the address asks what it
speaks. `explain` turns the result into one sentence: what happened, where the setting came from,
and what to change.
"""

from __future__ import annotations

import socket
import ssl
from collections.abc import Iterator
from dataclasses import dataclass
from http.client import RemoteDisconnected
from urllib.parse import urlsplit

import requests
from cryptography import x509

from app.cli.context import CACERT_VARIABLE, SERVER_VARIABLE, Connection

PROBE_TIMEOUT = 3.0
# X509_V_ERR_* codes of OpenSSL's verification (ssl.SSLCertVerificationError.verify_code).
CERT_EXPIRED, CERT_NOT_YET_VALID = 10, 9
HOSTNAME_MISMATCH, IP_MISMATCH = 62, 64


@dataclass(frozen=True)
class Problem:
    """What went wrong: `refused`, `dns`, `timeout`, `closed` (no answer at all), `tls`
    (a handshake that failed before any certificate check), `untrusted`, `name`, `expired`,
    or `other`; `detail` is the innermost error's text."""

    kind: str
    detail: str


def _chain(error: BaseException) -> Iterator[BaseException]:
    """The error and every error behind it (causes, contexts, urllib3's `reason`, wrapped args)."""
    seen: set[int] = set()
    todo = [error]
    while todo:
        e = todo.pop(0)
        if id(e) in seen:
            continue
        seen.add(id(e))
        yield e
        behind = [e.__cause__, e.__context__, getattr(e, "reason", None), *e.args]
        todo += [b for b in behind if isinstance(b, BaseException)]


def problem(error: BaseException) -> Problem:
    """Classifies a `requests` error from its chain of causes (no I/O)."""
    chain = list(_chain(error))
    detail = str(chain[-1])
    for e in chain:
        if isinstance(e, ssl.SSLCertVerificationError):
            code = e.verify_code
            if code in (HOSTNAME_MISMATCH, IP_MISMATCH):
                return Problem("name", e.verify_message)
            if code in (CERT_EXPIRED, CERT_NOT_YET_VALID):
                return Problem("expired", e.verify_message)
            return Problem("untrusted", e.verify_message)
    kinds: tuple[tuple[type[BaseException] | tuple[type[BaseException], ...], str], ...] = (
        (ConnectionRefusedError, "refused"),
        (socket.gaierror, "dns"),
        ((requests.Timeout, socket.timeout), "timeout"),
        (ssl.SSLError, "tls"),
        ((RemoteDisconnected, ConnectionResetError, ConnectionAbortedError), "closed"),
    )
    for types, kind in kinds:
        if any(isinstance(e, types) for e in chain):
            return Problem(kind, detail)
    return Problem("other", detail)


def _address(url: str) -> tuple[str, int, str]:
    parts = urlsplit(url)
    scheme = parts.scheme or "http"
    return parts.hostname or "", parts.port or (443 if scheme == "https" else 80), scheme


def _handshake(host: str, port: int) -> bytes | None:
    """The certificate (DER; empty if none) of a TLS handshake with host:port, not checked;
    None when no handshake completes."""
    context = ssl.create_default_context()
    context.check_hostname, context.verify_mode = False, ssl.CERT_NONE
    try:
        with (
            socket.create_connection((host, port), PROBE_TIMEOUT) as raw,
            context.wrap_socket(raw, server_hostname=host) as tls,
        ):
            return tls.getpeercert(binary_form=True) or b""
    except (OSError, ssl.SSLError):
        return None


def speaks_tls(host: str, port: int) -> bool:
    """Whether host:port completes a TLS handshake (the certificate is not checked)."""
    return _handshake(host, port) is not None


def speaks_plain_http(host: str, port: int) -> bool:
    """Whether host:port answers a plain-text HTTP request."""
    try:
        with socket.create_connection((host, port), PROBE_TIMEOUT) as s:
            s.sendall(f"HEAD / HTTP/1.0\r\nHost: {host}\r\n\r\n".encode())
            return s.recv(5) == b"HTTP/"
    except OSError:
        return False


def certificate_names(host: str, port: int) -> list[str]:
    """The DNS names and IP addresses the server's certificate is issued for (unverified)."""
    der = _handshake(host, port)
    if not der:
        return []
    try:
        sans = x509.load_der_x509_certificate(der).extensions.get_extension_for_class(
            x509.SubjectAlternativeName
        )
    except (ValueError, x509.ExtensionNotFound):
        return []
    dns = sans.value.get_values_for_type(x509.DNSName)
    ips = [str(ip) for ip in sans.value.get_values_for_type(x509.IPAddress)]
    return [*dns, *ips]


def explain(error: BaseException, conn: Connection) -> str:
    """One sentence on what went wrong talking to `conn.server`, and how to fix it."""
    found = problem(error)
    host, port, scheme = _address(conn.server)
    where = f"{host}:{port}"
    origin = f"(server {conn.server}, from {conn.server_from})"
    fix_server = f"fix it with --server URL or {SERVER_VARIABLE}"
    if found.kind == "tls" and scheme == "https" and speaks_plain_http(host, port):
        return (
            f"{where} answers plain HTTP, not HTTPS {origin}: use "
            f"--server http://{where}, or serve with TLS"
        )
    if found.kind in ("closed", "tls") and scheme == "http" and speaks_tls(host, port):
        return (
            f"{where} speaks HTTPS and the request went in plain HTTP {origin}: use "
            f"--server https://{where} (and --cacert FILE if its certificate comes from your "
            f"own CA, such as the demo's certs/ca.crt)"
        )
    if found.kind == "name":
        names = certificate_names(host, port)
        valid = f" (it is for {', '.join(names)})" if names else ""
        return (
            f"the certificate of {where} is not valid for the name {host!r}{valid} {origin}: "
            f"use one of its names in the server URL; {fix_server}"
        )
    return _MESSAGES.get(found.kind, _other)(found, conn, where, origin, fix_server)


def _refused(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    return (
        f"nothing listens on {where} (connection refused) {origin}: is rightsizer running, "
        f"and on this port? `rightsizer demo` prints the URL it serves; {fix}"
    )


def _dns(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    host = where.rsplit(":", 1)[0]
    return (
        f"unknown host {host!r}: the name does not resolve (DNS: {p.detail}) {origin}: check "
        f"its spelling, or use an IP address; {fix}"
    )


def _timeout(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    return (
        f"no answer from {where} in time {origin}: a firewall may drop the connection, or the "
        f"server is overloaded; check the host and port; {fix}"
    )


def _closed(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    return f"{where} closed the connection without an answer {origin}: is it rightsizer? {fix}"


def _untrusted(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    if conn.cacert:
        trusted = f"the CA in {conn.cacert} (from {conn.cacert_from})"
    else:
        trusted = "any CA this machine trusts (no --cacert given)"
    return (
        f"the certificate of {where} is not signed by {trusted} ({p.detail}) {origin}: give "
        f"the CA that signed it with --cacert FILE or {CACERT_VARIABLE} (the demo's is "
        f"certs/ca.crt in the directory it ran in)"
    )


def _expired(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    return (
        f"the certificate of {where} is {p.detail} {origin}: renew it (`rightsizer certs "
        f"ensure` renews the certificates rightsizer made), or check this machine's clock"
    )


def _other(p: Problem, conn: Connection, where: str, origin: str, fix: str) -> str:
    return f"cannot reach {where}: {p.detail} {origin}"


_MESSAGES = {
    "refused": _refused,
    "dns": _dns,
    "timeout": _timeout,
    "closed": _closed,
    "untrusted": _untrusted,
    "expired": _expired,
}
