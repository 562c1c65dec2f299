"""Bearer-token authentication and per-verb authorisation, shared by the REST API and the dashboard.

Two ways to check a token (RIGHTSIZER_AUTH_MODE):
- `tokens`: a static file of `token,user,permissions` lines, for clusters without TokenReview
  access and for the demo. It is re-read when it changes, so tokens rotate without a restart.
- `kubernetes`: TokenReview says who the token belongs to, SubjectAccessReview whether they may
  use `verb` on `<resource>.<RIGHTSIZER_AUTH_API_GROUP>` (in the object's namespace where it has
  one), so the cluster's RBAC decides, with namespace-scoped Roles where teams want them.

Verbs are Kubernetes' own: get and list (reads), create, update, patch, delete (writes).
Writes always need a token; reads need one unless RIGHTSIZER_PUBLIC_READS is on. A token is never
logged, echoed in an error, or kept in memory other than as the static file's contents and as a
SHA-256 digest in the Kubernetes mode's short-lived cache.

This module belongs to neither front end, so that `app.api` and `app.dashboard` stay independent:
a refusal is an `AuthError` (401, 403 or 503), which the API answers as JSON (app/api/errors.py)
and the dashboard as a login redirect or an error page. The API's `requires` decorator, which also
reads the namespace from the request body, is in app/api/auth.py.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import threading
import time
from dataclasses import dataclass
from typing import Any, Protocol, TypeVar

from flask import Flask, current_app, g, request

from app.kube.auth import KubeReviewer, ReviewFailed
from app.settings import settings, settings_of

log = logging.getLogger(__name__)

READ_VERBS = frozenset({"get", "list"})
WRITE_VERBS = frozenset({"create", "update", "patch", "delete"})
VERBS = READ_VERBS | WRITE_VERBS
PERMISSION_SHORTHANDS = {"read": READ_VERBS, "write": WRITE_VERBS, "*": VERBS}
COOKIE = "rightsizer_token"
EXTENSION = "rightsizer.auth"
CHALLENGE = {"WWW-Authenticate": 'Bearer realm="rightsizer"'}


K = TypeVar("K")
V = TypeVar("V")


class AuthError(Exception):
    """The request may not go on: 401 (no valid token), 403 (not allowed) or 503 (cannot check
    now); `error` is the reason word of the answer, `headers` its extra headers."""

    def __init__(
        self, status: int, error: str, message: str, headers: dict[str, str] | None = None
    ) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.headers = headers or {}


class AuthUnavailable(RuntimeError):
    """The token could not be checked now (e.g. the API server is unreachable): 503, not 401."""


@dataclass(frozen=True)
class User:
    name: str
    verbs: frozenset[str] = frozenset()  # static tokens; the Kubernetes mode asks per request
    review: Any = None  # app.kube.auth.ReviewedUser in the Kubernetes mode


class Authenticator(Protocol):
    def authenticate(self, token: str) -> User | None: ...

    def allowed(
        self, user: User, verb: str, resource: str, namespace: str | None
    ) -> tuple[bool, str]: ...


class TokenFileError(ValueError):
    pass


def parse_token_file(text: str, path: str = "token file") -> dict[str, User]:
    """`token,user,permissions` per line; permissions `|`-separated verbs or read, write, *.

    Errors name the line, never the token on it.
    """
    users: dict[str, User] = {}
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        parts = [p.strip() for p in line.split(",")]
        if len(parts) != 3 or not all(parts):
            raise TokenFileError(f"{path}: line {n}: expected token,user,permissions")
        token, name, perms = parts
        if any(c.isspace() for c in token):
            raise TokenFileError(f"{path}: line {n}: the token contains whitespace")
        verbs: set[str] = set()
        for p in perms.split("|"):
            p = p.strip()
            if p in PERMISSION_SHORTHANDS:
                verbs |= PERMISSION_SHORTHANDS[p]
            elif p in VERBS:
                verbs.add(p)
            else:
                raise TokenFileError(
                    f"{path}: line {n}: unknown permission {p!r}; use read, write, * or "
                    f"{', '.join(sorted(VERBS))}"
                )
        if token in users:
            raise TokenFileError(f"{path}: line {n}: the same token appears twice")
        users[token] = User(name, frozenset(verbs))
    return users


class StaticTokens:
    """Tokens from RIGHTSIZER_AUTH_TOKEN_FILE; no file configured means no token is valid."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._lock = threading.Lock()
        self._mtime: float | None = None
        self._users: dict[str, User] = {}
        if path:
            self._load(os.stat(path).st_mtime)  # a bad file stops start-up, not the first request

    def _load(self, mtime: float) -> None:
        with open(self.path, encoding="utf-8") as fh:
            self._users = parse_token_file(fh.read(), self.path)
        self._mtime = mtime

    def _refresh(self) -> None:
        try:
            mtime = os.stat(self.path).st_mtime
        except OSError as e:
            log.warning("token file %s unreadable (%s): keeping the tokens loaded", self.path, e)
            return
        if mtime == self._mtime:
            return
        with self._lock:
            try:
                self._load(mtime)
                log.info("token file %s reloaded: %d tokens", self.path, len(self._users))
            except (OSError, UnicodeDecodeError, TokenFileError) as e:
                log.error(
                    "token file %s not reloaded, keeping the previous tokens: %s", self.path, e
                )
                self._mtime = mtime

    def authenticate(self, token: str) -> User | None:
        if not self.path:
            return None
        self._refresh()
        found = None
        for known, user in self._users.items():  # compare all, in constant time each
            if hmac.compare_digest(known.encode(), token.encode()):
                found = user
        return found

    def allowed(
        self, user: User, verb: str, resource: str, namespace: str | None
    ) -> tuple[bool, str]:
        return verb in user.verbs, ""


class KubernetesAuth:
    """TokenReview + SubjectAccessReview, each answer cached briefly to spare the API server."""

    def __init__(self, group: str, kubeconfig: str, ttl: float) -> None:
        self.group, self.ttl = group, ttl
        self._reviewer = KubeReviewer(kubeconfig)
        self._users: dict[str, tuple[float, User | None]] = {}
        self._decisions: dict[tuple[Any, ...], tuple[float, tuple[bool, str]]] = {}

    def _fresh(self, cache: dict[K, tuple[float, V]], key: K) -> tuple[float, V] | None:
        """The (expiry, value) entry for `key` while it has not expired."""
        hit = cache.get(key)
        if hit and hit[0] > time.monotonic():
            return hit
        if len(cache) > 10_000:
            cache.clear()  # bounded: a flood of random tokens cannot grow it without end
        return None

    def authenticate(self, token: str) -> User | None:
        key = hashlib.sha256(token.encode()).hexdigest()
        known = self._fresh(self._users, key)
        if known is not None:
            return known[1]
        try:
            reviewed = self._reviewer.authenticate(token)
        except ReviewFailed as e:
            raise AuthUnavailable(str(e)) from None
        user = User(reviewed.name, review=reviewed) if reviewed else None
        self._users[key] = (time.monotonic() + self.ttl, user)
        return user

    def allowed(
        self, user: User, verb: str, resource: str, namespace: str | None
    ) -> tuple[bool, str]:
        r = user.review
        key = (r.name, r.uid, r.groups, repr(sorted(r.extra.items())), verb, resource, namespace)
        cached = self._fresh(self._decisions, key)
        if cached is not None:
            return cached[1]
        try:
            decision = self._reviewer.allowed(user.review, verb, self.group, resource, namespace)
        except ReviewFailed as e:
            raise AuthUnavailable(str(e)) from None
        self._decisions[key] = (time.monotonic() + self.ttl, decision)
        return decision


def init_app(app: Flask) -> None:
    config = settings_of(app)
    auth = config.auth
    if auth.mode == "kubernetes":
        app.extensions[EXTENSION] = KubernetesAuth(
            auth.api_group, config.cluster.kubeconfig, auth.cache_seconds
        )
    else:
        app.extensions[EXTENSION] = StaticTokens(auth.token_file)


def bearer_token(allow_cookie: bool = False) -> str | None:
    """The request's token: `Authorization: Bearer`, or for dashboard pages the login cookie."""
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() == "bearer" and token.strip():
        return token.strip()
    if allow_cookie:
        return request.cookies.get(COOKIE) or None
    return None


def authenticate(token: str) -> User | None:
    auth: Authenticator = current_app.extensions[EXTENSION]
    try:
        return auth.authenticate(token)
    except AuthUnavailable as e:
        log.warning("cannot check a token: %s", e)
        raise AuthError(
            503, "ServiceUnavailable", "cannot check the token now; retry later"
        ) from None


def check(
    verb: str, resource: str, namespace: str | None, allow_cookie: bool = False
) -> User | None:
    """The user allowed to do this; raises 401 or 403. None: an anonymous, public read."""
    return authorize(authenticated(verb, allow_cookie), verb, resource, namespace)


def authenticated(verb: str, allow_cookie: bool = False) -> User | None:
    """Who sent the request, from the token alone (the body is not read): 401 without a valid
    token, unless `verb` is a read and reads are public (None: anonymous)."""
    token = bearer_token(allow_cookie)
    if token is None:
        if verb in READ_VERBS and settings().auth.public_reads:
            return None
        raise AuthError(401, "Unauthorized", "a bearer token is required", headers=CHALLENGE)
    user = authenticate(token)
    if user is None:
        raise AuthError(401, "Unauthorized", "the bearer token is not valid", headers=CHALLENGE)
    return user


def authorize(user: User | None, verb: str, resource: str, namespace: str | None) -> User | None:
    """403 unless `user` may `verb` `resource` (in `namespace`); anonymous reads pass."""
    if user is None:
        return None
    auth: Authenticator = current_app.extensions[EXTENSION]
    try:
        ok, reason = auth.allowed(user, verb, resource, namespace)
    except AuthUnavailable as e:
        log.warning("cannot check a permission: %s", e)
        raise AuthError(
            503, "ServiceUnavailable", "cannot check permissions now; retry later"
        ) from None
    if not ok:
        where = f" in namespace {namespace}" if namespace else ""
        message = f"{user.name} may not {verb} {resource}{where}"
        raise AuthError(403, "Forbidden", message + (f": {reason}" if reason else ""))
    return user


def actor() -> str:
    user = g.get("user")
    return user.name if user else "anonymous"
