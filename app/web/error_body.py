"""The JSON body of an error answer, `{"error": <reason>, "message": <text>}`, in one place.

The REST API writes it through Flask (app.api.errors); the webhook's POST /mutate route
(app.webhook.route, with its handler's refusals of a bad or too large AdmissionReview) runs ahead
of Flask and may not import app.api (the front ends are independent of each other), so both build
the body here and each writes it its own way.
"""

from __future__ import annotations

from werkzeug.exceptions import HTTPException

INTERNAL_ERROR = "internal error; see the server log"  # the message of an unexpected error's 500


def error_body(
    error: str, message: str, details: list[dict[str, str]] | None = None
) -> dict[str, object]:
    """`details` (field errors, 422) only when given."""
    body: dict[str, object] = {"error": error, "message": message}
    if details is not None:
        body["details"] = details
    return body


def http_error(e: HTTPException) -> tuple[int, dict[str, object]]:
    """The status and body of an HTTP error: its own code, its name without spaces as the reason
    ("RequestEntityTooLarge"), its description as the message."""
    name = (e.name or "Error").replace(" ", "")
    return e.code or 500, error_body(name, e.description or name)


def internal_error() -> tuple[int, dict[str, object]]:
    """The status and body of an unexpected error (the caller logs it)."""
    return 500, error_body("InternalServerError", INTERNAL_ERROR)
