"""API errors as the `Status` objects kube-apiserver answers with."""

from __future__ import annotations

import json
from typing import Any

from app.simulator.apiserver.resources import ResourceType

_REASONS = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    504: "Timeout",
}


class ApiError(Exception):
    """Raised anywhere in request handling; the server turns it into a Status response."""

    def __init__(
        self,
        code: int,
        message: str,
        reason: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.reason = reason or _REASONS.get(code, "Unknown")
        self.details = details

    def status(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        }
        if not self.reason:  # StatusReasonUnknown, "" (a plain error of the server): omitted
            del body["reason"]
        if self.details is not None:  # written when given, even empty, as kube writes it
            body["details"] = self.details
        return body


def _details(rt: ResourceType, name: str) -> dict[str, Any]:
    return {"name": name, "group": rt.group, "kind": rt.plural}


def not_found(rt: ResourceType, name: str) -> ApiError:
    return ApiError(404, f'{rt.group_resource} "{name}" not found', details=_details(rt, name))


def already_exists(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        409, f'{rt.group_resource} "{name}" already exists', "AlreadyExists", _details(rt, name)
    )


def conflict(rt: ResourceType, name: str) -> ApiError:
    return ApiError(
        409,
        f'Operation cannot be fulfilled on {rt.group_resource} "{name}": the '
        "object has been modified; please apply your changes to the latest version "
        "and try again",
        "Conflict",
        _details(rt, name),
    )


def bad_request(message: str) -> ApiError:
    return ApiError(400, message)


def gone(message: str) -> ApiError:
    return ApiError(410, message, "Expired")


def too_large_resource_version(wanted: int, current: int) -> ApiError:
    """storage.NewTooLargeResourceVersionError (apiserver pkg/storage/errors.go): a 504 Timeout
    the client should retry after a second."""
    return ApiError(
        504,
        f"Timeout: Too large resource version: {wanted}, current: {current}",
        "Timeout",
        {
            "causes": [
                {"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}
            ],
            "retryAfterSeconds": 1,
        },
    )


def unknown_resource() -> ApiError:
    """An unknown resource of a served group/version: a NotFound Status with empty details."""
    return ApiError(404, "the server could not find the requested resource", details={})


# `ErrorType.String()` of apimachinery's util/validation/field/errors.go, by cause type.
_TYPE_WORDS = {
    "FieldValueNotFound": "Not found",
    "FieldValueRequired": "Required value",
    "FieldValueDuplicate": "Duplicate value",
    "FieldValueInvalid": "Invalid value",
    "FieldValueNotSupported": "Unsupported value",
    "FieldValueForbidden": "Forbidden",
    "FieldValueTooLong": "Too long",
    "FieldValueTooMany": "Too many",
    "InternalError": "Internal error",
    "FieldValueTypeInvalid": "Invalid value",
}
# The types whose body never shows the bad value (ErrorBody's first cases).
_VALUELESS = frozenset(
    {"FieldValueRequired", "FieldValueForbidden", "FieldValueTooLong", "InternalError"}
)


class FieldError:
    """One `field.Error` (apimachinery util/validation/field/errors.go): the field's path, the
    error type (a StatusCause reason), the detail and the bad value."""

    def __init__(self, field: str, kind: str, detail: str, value: Any = None) -> None:
        self.field, self.kind, self.detail, self.value = field, kind, detail, value

    def body(self) -> str:
        """`ErrorBody()`: the message without the field, as a StatusCause carries it."""
        text = _TYPE_WORDS.get(self.kind, "Invalid value")
        if self.kind not in _VALUELESS:
            text += f": {_go_value(self.value)}"
        return f"{text}: {self.detail}" if self.detail else text

    def message(self) -> str:
        """`Error()`: `<field>: <body>`, as the Status message lists it."""
        return f"{self.field}: {self.body()}"


def _go_value(value: Any) -> str:
    """The bad value as ErrorBody prints it: nil as "null" (quoted, being then a string),
    strings quoted (%q), numbers and booleans as Go's %v writes them, a map[string]string (as
    labels are) as %#v does, keys sorted."""
    if value is None:
        value = "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value, ensure_ascii=False)
    if isinstance(value, dict) and all(isinstance(v, str) for v in value.values()):
        pairs = (f"{_go_value(str(k))}:{_go_value(value[k])}" for k in sorted(value))
        return "map[string]string{" + ", ".join(pairs) + "}"
    return str(value)


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    """`NewInvalid` (apimachinery pkg/api/errors/errors.go): Status.message is
    `<Kind>[.<group>] "<name>" is invalid: <ErrorList.ToAggregate()>` (each distinct `Error()`,
    bracketed and comma-joined when more than one); one cause per error, its message being
    `ErrorBody()` (kubectl prints `<field>: <message>`), none dropped."""
    msgs = list(dict.fromkeys(e.message() for e in errors))  # ToAggregate skips repeats
    joined = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    qualified = f"{kind}.{group}" if group and not kind.endswith(f".{group}") else kind
    return ApiError(
        422,
        f'{qualified} "{name}" is invalid: {joined}',
        "Invalid",
        {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [{"reason": e.kind, "message": e.body(), "field": e.field} for e in errors],
        },
    )
