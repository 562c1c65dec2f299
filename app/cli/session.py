"""The client commands' HTTP session with rightsizer's REST API, and their common options.

`api_options` gives a command `--server`, `--cacert`, `--token` and `--context` and hands it an
`Api` built from them, the environment and the context file (app/cli/context.py). Every failure
ends the command with `error: ...` on stderr and status 1: the server's message and each bad field,
or why the server could not be reached and how to fix it (app/cli/reach.py).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn, TypeVar
from urllib.parse import urlsplit

import click
import requests

from app.cli.context import DEFAULT_SERVER, Connection, ContextError, config_path, resolve
from app.cli.context import load as load_contexts
from app.cli.reach import explain
from app.core.policy_warnings import warning_texts

TIMEOUT = 30
F = TypeVar("F", bound=Callable[..., Any])
RENAMED = {"RIGHTSIZER_API_URL": "RIGHTSIZER_SERVER", "RIGHTSIZER_API_TOKEN": "RIGHTSIZER_TOKEN"}


def fail(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(1)


class Api:
    def __init__(self, conn: Connection) -> None:
        self.conn = conn
        self.base = conn.server.rstrip("/") + "/api/v1"
        self.session = requests.Session()
        if conn.token:
            self.session.headers["Authorization"] = f"Bearer {conn.token}"
        # Per request: requests lets REQUESTS_CA_BUNDLE override a session's `verify`.
        self.verify: str | bool = conn.cacert or True
        # Query parameters every GET of the command carries (`--cluster`: app/cli/fleet.py).
        self.read_params: dict[str, str] = {}

    def call(
        self, method: str, path: str, *, ok: Sequence[int] = (200,), **kwargs: Any
    ) -> requests.Response:
        """The answer; any status outside `ok` ends the command with the server's message."""
        resp = self.send(method, path, **kwargs)
        if resp.status_code not in ok:
            self.fail_response(resp)
        return resp

    def send(self, method: str, path: str, **kwargs: Any) -> requests.Response:
        """The answer whatever its status; an unreachable server ends the command."""
        if method == "GET" and self.read_params:
            kwargs["params"] = {**self.read_params, **(kwargs.get("params") or {})}
        try:
            resp = self.session.request(
                method, self.base + path, timeout=TIMEOUT, verify=self.verify, **kwargs
            )
        except requests.RequestException as e:
            fail(explain(e, self.conn))
        # The server's warnings (a policy whose target cannot act), printed as kubectl does:
        # each header as sent (urllib3 keeps them apart; requests' mapping joins them).
        raw: Any = getattr(resp.raw, "headers", None)
        if raw is not None and hasattr(raw, "getlist"):
            values = list(raw.getlist("Warning"))
        else:
            values = [resp.headers["Warning"]] if "Warning" in resp.headers else []
        for text in warning_texts(values):
            click.echo(f"Warning: {text}", err=True)
        return resp

    def fail_response(self, resp: requests.Response, what: str = "") -> NoReturn:
        try:
            body = resp.json()
            message = f"{body['message']} ({resp.status_code} {body['error']})"
            details = body.get("details") or []
        except (ValueError, KeyError, TypeError):
            message = (
                f"HTTP {resp.status_code} from {resp.url}, not an answer of rightsizer's API: "
                f"is {self.conn.server} (from {self.conn.server_from}) rightsizer?"
            )
            details = []
        if resp.status_code == 401:
            message += (
                ": the token was refused"
                if self.conn.token
                else ": no token was sent; pass --token, set RIGHTSIZER_TOKEN, or use a context "
                "with one (`rightsizer demo` writes one)"
            )
        click.echo(f"error: {what}{message}", err=True)
        for d in details:
            click.echo(f"  {d.get('field') or '(body)'}: {d.get('message')}", err=True)
        sys.exit(1)


def connect(server: str | None, cacert: str | None, token: str | None, context: str | None) -> Api:
    """The Api for these flags, the environment and the context file; bad settings end here."""
    env = os.environ
    for old, new in RENAMED.items():
        if env.get(old) and not env.get(new):
            click.echo(f"warning: {old} is no longer read; set {new}", err=True)
    path = config_path(env)
    flags = {"server": server, "cacert": cacert, "token": token, "context": context}
    try:
        conn = resolve(flags, env, load_contexts(path), str(path))
    except ContextError as e:
        fail(str(e))
    parts = urlsplit(conn.server)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        fail(
            f"server {conn.server!r} (from {conn.server_from}) is not a URL: expected one "
            "such as https://localhost:8443 or http://127.0.0.1:8080"
        )
    if conn.cacert and not Path(conn.cacert).is_file():
        fail(
            f"the CA file {conn.cacert} (from {conn.cacert_from}) does not exist: give the CA "
            f"certificate that signed the server's (PEM), e.g. the demo's certs/ca.crt"
        )
    return Api(conn)


def api_options(f: F) -> F:
    """Adds the connection options and passes the command `api` instead of them."""

    @functools.wraps(f)
    def wrapper(
        *args: Any,
        server: str | None,
        cacert: str | None,
        token: str | None,
        context: str | None,
        **kwargs: Any,
    ) -> Any:
        return f(*args, api=connect(server, cacert, token, context), **kwargs)

    options = (
        click.option(
            "--context",
            help="Context of the CLI's config file to use [env var: RIGHTSIZER_CONTEXT; "
            "default: its current-context]",
        ),
        click.option(
            "--token",
            help="Bearer token [env var: RIGHTSIZER_TOKEN] (prefer the variable or a context: "
            "flags show up in process lists).",
        ),
        click.option(
            "--cacert",
            metavar="FILE",
            help="CA certificate (PEM) that signed the server's [env var: RIGHTSIZER_CACERT].",
        ),
        click.option(
            "--server",
            metavar="URL",
            help="rightsizer's URL [env var: RIGHTSIZER_SERVER; default: the context's, else "
            f"{DEFAULT_SERVER}].",
        ),
    )
    decorated: Any = wrapper
    for option in options:
        decorated = option(decorated)
    return decorated  # type: ignore[no-any-return]


def cluster_option(f: F) -> F:
    """Adds `--cluster NAME_OR_ID` (put it below `@api_options`: it needs the command's `api`):
    every GET of the command asks about that cluster of the fleet instead of the server's own
    (the API's `?cluster=`, docs/api.md)."""

    @functools.wraps(f)
    def wrapper(*args: Any, cluster: str | None, api: Api, **kwargs: Any) -> Any:
        if cluster is not None:
            api.read_params["cluster"] = cluster
        return f(*args, api=api, **kwargs)

    option = click.option(
        "--cluster",
        metavar="NAME_OR_ID",
        help="Read this cluster of the fleet (its id or name) instead of the server's own.",
    )
    decorated: Any = option(wrapper)
    return decorated  # type: ignore[no-any-return]
