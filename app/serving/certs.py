"""The webhook's TLS material: a private CA and a serving certificate for the Service's DNS names.

kube-apiserver calls the webhook over HTTPS and checks the serving certificate against the
`caBundle` of the MutatingWebhookConfiguration, for the name `<service>.<namespace>.svc`. We keep
our own small CA (10 years) so that rotating the serving certificate (1 year, renewed 30 days before
expiry) never changes the `caBundle`. Keys are ECDSA P-256 (cheap handshakes), files are 0600 and
replaced atomically, so a server reloading them never reads half a file.

The files live in a directory or in a Kubernetes Secret (app.kube.secrets.SecretStore, shared by
all replicas); a server with RIGHTSIZER_CERT_ROTATE checks them periodically
(app.serving.rotation) and gunicorn reloads the renewed files without a restart.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_DAYS = 3650
SERVING_DAYS = 365
RENEW_BEFORE = dt.timedelta(days=30)
CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE = "ca.crt", "ca.key", "tls.crt", "tls.key"
FILES = (CA_FILE, CA_KEY_FILE, CERT_FILE, KEY_FILE)
KEY_FILES = (CA_KEY_FILE, KEY_FILE)


@dataclass(frozen=True)
class CertPaths:
    directory: Path

    @property
    def ca(self) -> Path:
        return self.directory / CA_FILE

    @property
    def ca_key(self) -> Path:
        return self.directory / CA_KEY_FILE

    @property
    def cert(self) -> Path:
        return self.directory / CERT_FILE

    @property
    def key(self) -> Path:
        return self.directory / KEY_FILE


def service_names(service: str, namespace: str) -> list[str]:
    base = f"{service}.{namespace}"
    return [service, base, f"{base}.svc", f"{base}.svc.cluster.local"]


def _key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _builder(
    subject: str,
    issuer: x509.Name,
    public_key: ec.EllipticCurvePublicKey,
    days: int,
    now: dt.datetime,
) -> x509.CertificateBuilder:
    return (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(issuer)
        .public_key(public_key)
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # tolerate clock skew
        .not_valid_after(now + dt.timedelta(days=days))
    )


def make_ca(
    now: dt.datetime, name: str = "rightsizer-ca"
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    subject = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, name)])
    cert = (
        _builder(name, subject, key.public_key(), CA_DAYS, now)
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(
            x509.KeyUsage(
                digital_signature=True,
                key_cert_sign=True,
                crl_sign=True,
                content_commitment=False,
                key_encipherment=False,
                data_encipherment=False,
                key_agreement=False,
                encipher_only=False,
                decipher_only=False,
            ),
            critical=True,
        )
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    return key, cert


def make_serving(
    ca_key: ec.EllipticCurvePrivateKey,
    ca_cert: x509.Certificate,
    names: list[str],
    now: dt.datetime,
) -> tuple[ec.EllipticCurvePrivateKey, x509.Certificate]:
    key = _key()
    sans: list[x509.GeneralName] = []
    for n in names:
        try:
            sans.append(x509.IPAddress(ipaddress.ip_address(n)))
        except ValueError:
            sans.append(x509.DNSName(n))
    cert = (
        _builder(names[0], ca_cert.subject, key.public_key(), SERVING_DAYS, now)
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(
            x509.AuthorityKeyIdentifier.from_issuer_public_key(ca_key.public_key()), critical=False
        )
        .sign(ca_key, hashes.SHA256())
    )
    return key, cert


def _pem_key(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


def _pem_cert(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def _write_atomically(path: Path, data: bytes, mode: int) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        os.fchmod(fd, mode)
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def needs_renewal(cert: x509.Certificate, names: list[str], now: dt.datetime) -> str | None:
    """Why the serving certificate must be replaced now, or None."""
    if cert.not_valid_after_utc - now <= RENEW_BEFORE:
        return f"expires {cert.not_valid_after_utc:%Y-%m-%d}"
    try:
        sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return "has no subject alternative names"
    have = {str(v) for v in sans.get_values_for_type(x509.DNSName)}
    have |= {str(v) for v in sans.get_values_for_type(x509.IPAddress)}
    missing = [n for n in names if n not in have]
    return f"lacks {', '.join(missing)}" if missing else None


class Store(Protocol):
    """Where the four files live: a directory, or a Kubernetes Secret (app.kube.secrets)."""

    def load(self) -> dict[str, bytes]:
        """The files there now (missing ones absent)."""
        ...

    def save(self, files: Mapping[str, bytes]) -> bool:
        """Writes all files; False when the store changed since `load` (then load again)."""
        ...


class DirectoryStore:
    def __init__(self, directory: Path) -> None:
        self.paths = CertPaths(directory)

    def __str__(self) -> str:
        return str(self.paths.directory)

    def load(self) -> dict[str, bytes]:
        out = {}
        for name in FILES:
            path = self.paths.directory / name
            if path.exists():
                out[name] = path.read_bytes()
        return out

    def save(self, files: Mapping[str, bytes]) -> bool:
        """Writes the files that differ, each atomically; keys before certificates, so a reader
        that sees a new certificate also finds its key."""
        self.paths.directory.mkdir(parents=True, exist_ok=True)
        for name in (CA_KEY_FILE, CA_FILE, KEY_FILE, CERT_FILE):
            if name not in files:
                continue
            path = self.paths.directory / name
            if path.exists() and path.read_bytes() == files[name]:
                continue
            _write_atomically(path, files[name], 0o600 if name in KEY_FILES else 0o644)
        return True


def plan(
    files: Mapping[str, bytes], names: list[str], now: dt.datetime
) -> tuple[dict[str, bytes], list[str]]:
    """The four files as they must be now, and what changed (nothing: `files` as they are)."""
    out = dict(files)
    done: list[str] = []
    ca_cert: x509.Certificate | None = None
    if CA_FILE in files and CA_KEY_FILE in files:
        ca_cert = x509.load_pem_x509_certificate(files[CA_FILE])
        ca_key = serialization.load_pem_private_key(files[CA_KEY_FILE], None)
        if ca_cert.not_valid_after_utc - now <= dt.timedelta(days=SERVING_DAYS):
            ca_cert = None  # a CA must outlive the certificates it signs
            done.append("CA expires within a year: new CA")
    if ca_cert is None:
        ca_key, ca_cert = make_ca(now)
        out[CA_KEY_FILE], out[CA_FILE] = _pem_key(ca_key), _pem_cert(ca_cert)
        done.append("created CA")
        out.pop(CERT_FILE, None)  # signed by the old CA: replace
    assert isinstance(ca_key, ec.EllipticCurvePrivateKey)
    reason = "missing" if not (CERT_FILE in out and KEY_FILE in out) else None
    if reason is None:
        reason = needs_renewal(x509.load_pem_x509_certificate(out[CERT_FILE]), names, now)
    if reason:
        key, cert = make_serving(ca_key, ca_cert, names, now)
        out[KEY_FILE], out[CERT_FILE] = _pem_key(key), _pem_cert(cert)
        done.append(f"serving certificate {reason}: issued for {', '.join(names)}")
    return (out, done) if done else (dict(files), [])


def ensure_in(
    store: Store, names: list[str], now: dt.datetime | None = None, attempts: int = 3
) -> tuple[dict[str, bytes], list[str]]:
    """Creates what is missing in `store` and renews what is due. Returns the files as they are
    now and what this call did. When another writer got there first (a replica renewing the same
    Secret), its files are read again and used if they are current."""
    now = now or dt.datetime.now(dt.UTC)
    for _ in range(attempts):
        files, done = plan(store.load(), names, now)
        if not done or store.save(files):
            return files, done
    raise RuntimeError(f"{store} kept changing under us ({attempts} attempts)")


def ensure(
    directory: Path, names: list[str], now: dt.datetime | None = None
) -> tuple[CertPaths, list[str]]:
    """`ensure_in` a directory. Returns the paths and what it did."""
    store = DirectoryStore(directory)
    _, done = ensure_in(store, names, now)
    return store.paths, done
