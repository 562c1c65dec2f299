"""The API's permission check: `@requires(verb, resource)` on every view under /api/v1.

Who the caller is and what they may do is decided in app/web/auth.py (shared with the dashboard);
this adds what only the API needs: the namespace a request acts in, which may be in its body.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, request

from app.api.body import request_json
from app.web.auth import authenticated, authorize

F = TypeVar("F", bound=Callable[..., Any])


def _namespace_of_request(kwargs: dict[str, Any]) -> str | None:
    """The namespace the request acts in: the URL's, the body's (create), or the list filter.

    Only called once the caller is authenticated: the body is then read (within its limit)."""
    ns = kwargs.get("namespace")
    if ns is None:
        if request.method in ("POST", "PUT"):
            body = request_json()
            ns = body.get("namespace") if isinstance(body, dict) else None
        else:
            ns = request.args.get("namespace")
    if not isinstance(ns, str) or ns in ("", "*"):
        return None  # cluster-wide: a cluster default policy, or every namespace
    return ns


def requires(verb: str, resource: str, namespaced: bool = False) -> Callable[[F], F]:
    """Checks the caller may `verb` `resource` before the view runs; `g.user` is who they are.

    The token is checked before anything reads the body: an unauthenticated request costs no
    more than its headers, whatever body it carries."""

    def decorate(view: F) -> F:
        @wraps(view)
        def wrapped(*args: Any, **kwargs: Any) -> Any:
            user = authenticated(verb)
            ns = _namespace_of_request(kwargs) if namespaced else None
            g.user = authorize(user, verb, resource, ns)
            return view(*args, **kwargs)

        wrapped.permission = (verb, resource)  # type: ignore[attr-defined]
        return wrapped  # type: ignore[return-value]

    return decorate
