"""Errors as JSON `{"error": <reason>, "message": <text>}` with the HTTP status that fits."""

from __future__ import annotations

import logging

from flask import Flask, jsonify
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException

from app.store.extensions import db
from app.store.session import DatabaseUnavailable, ValueRefused
from app.web.auth import AuthError
from app.web.error_body import error_body, http_error, internal_error

log = logging.getLogger(__name__)


class ApiError(Exception):
    """An answer other than success; `details` lists field errors (422), `headers` extra headers."""

    def __init__(
        self,
        status: int,
        error: str,
        message: str,
        details: list[dict[str, str]] | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status, self.error, self.message = status, error, message
        self.details, self.headers = details, headers or {}


def error_response(
    status: int,
    error: str,
    message: str,
    details: list[dict[str, str]] | None = None,
    headers: dict[str, str] | None = None,
) -> ResponseReturnValue:
    return jsonify(error_body(error, message, details)), status, headers or {}


def init_app(app: Flask) -> None:
    @app.errorhandler(ApiError)
    def api_error(e: ApiError) -> ResponseReturnValue:
        return error_response(e.status, e.error, e.message, e.details, e.headers)

    @app.errorhandler(AuthError)
    def auth_error(e: AuthError) -> ResponseReturnValue:
        # app/web/auth.py refuses for the API and the dashboard alike: the same JSON as ApiError
        return error_response(e.status, e.error, e.message, None, e.headers)

    @app.errorhandler(HTTPException)
    def http_exception(e: HTTPException) -> ResponseReturnValue:
        status, body = http_error(e)
        return jsonify(body), status

    @app.errorhandler(DatabaseUnavailable)
    def database_unavailable(e: DatabaseUnavailable) -> ResponseReturnValue:
        db.session.rollback()
        log.warning("database unavailable: %s", e.orig)
        return error_response(503, "ServiceUnavailable", "database unavailable; retry later")

    @app.errorhandler(ValueRefused)
    def value_the_database_refuses(e: ValueRefused) -> ResponseReturnValue:
        # e.g. a NUL character in a query parameter, which PostgreSQL text cannot hold: the
        # request is at fault, not the server. The statement is not logged: it may hold input.
        db.session.rollback()
        return error_response(
            400, "BadRequest", "a value in the request cannot be stored or searched"
        )

    @app.errorhandler(Exception)
    def unexpected(e: Exception) -> ResponseReturnValue:
        log.exception("unhandled error")
        status, body = internal_error()
        return jsonify(body), status
