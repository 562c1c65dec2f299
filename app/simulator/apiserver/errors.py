"""API errors as the `Status` objects kube-apiserver answers with."""

from __future__ import annotations

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
        if self.details:
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


def unknown_resource() -> ApiError:
    return ApiError(
        404,
        "the server could not find the requested resource",
        details={
            "causes": [{"reason": "UnexpectedServerResponse", "message": "404 page not found"}]
        },
    )


class FieldError:
    """One `field.Error`: where, what kind of problem, and the message kube-apiserver prints."""

    def __init__(self, field: str, kind: str, detail: str, value: Any = None) -> None:
        self.field, self.kind, self.detail, self.value = field, kind, detail, value

    def message(self) -> str:
        if self.kind == "FieldValueRequired":
            return (
                f"{self.field}: Required value: {self.detail}"
                if self.detail
                else f"{self.field}: Required value"
            )
        if self.kind == "FieldValueForbidden":
            return f"{self.field}: Forbidden: {self.detail}"
        if self.kind == "FieldValueNotSupported":
            return f"{self.field}: Unsupported value: {_go_value(self.value)}: {self.detail}"
        if self.kind == "FieldValueDuplicate":
            return f"{self.field}: Duplicate value: {_go_value(self.value)}"
        return f"{self.field}: Invalid value: {_go_value(self.value)}: {self.detail}"


def _go_value(value: Any) -> str:
    return f'"{value}"' if isinstance(value, str) else str(value)


def invalid(kind: str, group: str, name: str, errors: list[FieldError]) -> ApiError:
    msgs = [e.message() for e in errors]
    joined = msgs[0] if len(msgs) == 1 else "[" + ", ".join(msgs) + "]"
    # NewInvalid names the GroupKind: `Deployment.apps "web" is invalid: ...`
    qualified = f"{kind}.{group}" if group and not kind.endswith(f".{group}") else kind
    return ApiError(
        422,
        f'{qualified} "{name}" is invalid: {joined}',
        "Invalid",
        {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [
                {"reason": e.kind, "message": m, "field": e.field}
                for e, m in zip(errors, msgs, strict=True)
            ],
        },
    )
