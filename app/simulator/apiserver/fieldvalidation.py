"""Server-side field validation: unknown and duplicate fields in a request body.

Re-derived from kube-apiserver: the `fieldValidation` query parameter (apimachinery
`pkg/apis/meta/v1/validation/validation.go` ValidateFieldValidation; "" means Warn, apiserver
`pkg/endpoints/handlers/rest.go` fieldValidation), the strict JSON decoder that finds the
violations (sigs.k8s.io/json `internal/golang/encoding/json`: a path of field names joined by
".", list indices as "[i]", map keys as fields; an unknown field's value is skipped unread; at
most 100 errors, each once) and what the handlers do with them (`handlers/create.go`,
`update.go`, `patch.go`): Strict refuses the request, Warn answers with one `Warning` per
violation, and under every directive the unknown fields are dropped, since kube-apiserver
decodes into Go types that have no place for them (duplicates: the last one wins).

Decoding into those types also rewrites every Quantity as ParseQuantity and MarshalJSON do
(`cpu: 0.5` is stored as "500m", `1024Mi` as "1Gi": quantity.stored), a JSON number being read
from its text as sent (jsonnumbers.Literal), and every Time and MicroTime as metav1's
MarshalJSON writes them, in UTC with `Z` (`2026-01-02T03:04:05+01:00` is stored as
`2026-01-02T02:04:05Z`, a MicroTime with six fractional digits: `...05.000000Z`).

A type's fields are those of its OpenAPI definition (apiserver/schema.py). Pure.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from app.simulator.apiserver import quantity
from app.simulator.apiserver.errors import ApiError, FieldError, bad_request, invalid
from app.simulator.apiserver.jsonnumbers import Literal, text_of
from app.simulator.apiserver.schema import Definitions, Schema

IGNORE, WARN, STRICT = "Ignore", "Warn", "Strict"
QUANTITY_REF = "#/$defs/io.k8s.apimachinery.pkg.api.resource.Quantity"
_TIME_REFS = {
    "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.Time": False,
    "#/$defs/io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime": True,
}
# Go's time.RFC3339 as time.Parse reads it: any fraction of a second, `Z` or an offset.
_RFC3339 = re.compile(
    r"^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d{1,9}))?"
    r"(?:[Zz]|([+-])(\d{2}):(\d{2}))$"
)
_ALLOWED = ("", IGNORE, STRICT, WARN)  # sorted, as the error lists them
_MAX_ERRORS = 100


class Pairs(dict[str, Any]):
    """A decoded JSON object that remembers its members in order, duplicates included."""

    pairs: list[tuple[str, Any]]


def _pairs_hook(pairs: list[tuple[str, Any]]) -> Pairs:
    obj = Pairs(pairs)
    obj.pairs = pairs
    return obj


def loads(body: bytes | str) -> Any:
    """json.loads, keeping each object's members (duplicates too) for `check` and each float's
    text (a Quantity parses it)."""
    return json.loads(body, object_pairs_hook=_pairs_hook, parse_float=Literal)


def directive(query: Mapping[str, str], options_kind: str) -> str:
    """The request's directive (Warn when unset); 422 naming the field for any other value.
    `options_kind` is CreateOptions, UpdateOptions or PatchOptions."""
    value = query.get("fieldValidation", "")
    if value not in _ALLOWED:
        raise invalid(
            f"{options_kind}.meta.k8s.io",
            "meta.k8s.io",
            "",
            [
                FieldError(
                    "fieldValidation",
                    "FieldValueNotSupported",
                    "supported values: " + ", ".join(f'"{v}"' for v in _ALLOWED),
                    value,
                )
            ],
        )
    return value or WARN


def check(defs: Definitions, root: str, obj: Any) -> tuple[Any, list[str]]:
    """(obj without its unknown fields, with plain dicts and its quantities as stored, the
    violations in document order: 'unknown field "spec.foo"', 'duplicate field
    "metadata.name"')."""
    errors: list[str] = []
    pruned = _walk(defs, defs.resolve(defs.get(root)), obj, "", errors)
    return pruned, errors


def duplicates(obj: Any) -> list[str]:
    """The duplicate-field violations of a patch document, which has no schema."""
    errors: list[str] = []
    _dups(obj, "", errors)
    return errors


def strict_error(errors: list[str]) -> str:
    return "strict decoding error: " + ", ".join(errors)


def refuse_body(kind: str, api_version: str, errors: list[str]) -> ApiError:
    """The 400 of a create or update under Strict (handlers/rest.go transformDecodeError)."""
    return cannot_handle(kind, api_version, strict_error(errors))


def cannot_handle(kind: str, api_version: str, error: str) -> ApiError:
    """transformDecodeError's 400 for a body of a known kind that did not decode."""
    version = api_version.rsplit("/", 1)[-1]
    return bad_request(f'{kind} in version "{version}" cannot be handled as a {kind}: {error}')


def refuse_patch(value: str, errors: list[str]) -> ApiError:
    """The 422 of a patch under Strict (handlers/patch.go): field `patch`, the patched object."""
    return invalid(
        "", "", "", [FieldError("patch", "FieldValueInvalid", strict_error(errors), value)]
    )


def warning_header(errors: list[str]) -> dict[str, str]:
    """The `Warning` header carrying each violation (code 299, agent "-", RFC 7234 5.5)."""
    if not errors:
        return {}
    quoted = [json.dumps(e) for e in errors]  # a quoted-string: \" and \\ escaped
    return {"Warning": ", ".join(f"299 - {q}" for q in quoted)}


def _walk(defs: Definitions, schema: Schema, value: Any, path: str, errors: list[str]) -> Any:
    if isinstance(value, list):
        element = defs.items(schema)
        if element is None:
            return plain(value)
        return [_walk(defs, element, v, f"{path}[{i}]", errors) for i, v in enumerate(value)]
    if not isinstance(value, dict):
        return float(value) if isinstance(value, Literal) else value
    props, extra = schema.get("properties"), schema.get("additionalProperties")
    if not isinstance(props, Mapping) and not isinstance(extra, Mapping):
        return plain(value)  # an object of any shape (RawExtension, FieldsV1): kept as sent
    out: dict[str, Any] = {}
    for key, member, where in _members(value, path, errors):
        if isinstance(props, Mapping) and key in props:
            child = props[key]
        elif isinstance(extra, Mapping):
            child = extra
        else:
            _add(errors, f'unknown field "{where}"')  # its value is skipped, unread
            out.pop(key, None)
            continue
        if child.get("$ref") in _TIME_REFS:
            out[key] = written_time(member, micro=_TIME_REFS[child["$ref"]])
        elif child.get("$ref") == QUANTITY_REF:
            in_map = not (isinstance(props, Mapping) and key in props)
            out[key] = "0" if member is None and in_map else _quantity(member)
        else:
            out[key] = _walk(defs, defs.resolve(child), member, where, errors)
    return out


def written_time(value: Any, *, micro: bool) -> Any:
    """A metav1.Time (micro: MicroTime) as its UnmarshalJSON then MarshalJSON leave it: UTC,
    RFC 3339 with `Z`, whole seconds (Time) or six fractional digits (MicroTime, RFC3339Micro).
    What does not parse is kept as sent (jsontypes reports it)."""
    m = _RFC3339.match(value) if isinstance(value, str) else None
    if m is None:
        return value
    year, month, day, hour, minute, second = (int(m.group(i)) for i in range(1, 7))
    micros = int((m.group(7) or "0").ljust(9, "0")[:6])
    try:
        when = datetime(year, month, day, hour, minute, second, micros, tzinfo=UTC)
    except ValueError:
        return value
    if m.group(8):
        offset = timedelta(hours=int(m.group(9)), minutes=int(m.group(10)))
        when -= offset if m.group(8) == "+" else -offset
    if micro:
        return when.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def _quantity(value: Any) -> Any:
    """A Quantity as decoding stores it; anything else as it is (what does not parse, which
    jsontypes refuses first for a create or update; a null field, a nil *Quantity). A null in a
    map of quantities (a ResourceList: requests, limits, overhead, hard) is decoded by
    Quantity's UnmarshalJSON, which takes `null` as the zero Quantity: the caller stores "0"."""
    if isinstance(value, str) or (isinstance(value, int | float) and not isinstance(value, bool)):
        try:
            return quantity.stored(value if isinstance(value, str) else text_of(value))
        except ValueError:
            pass
    return plain(value)


def _dups(value: Any, path: str, errors: list[str]) -> None:
    if isinstance(value, list):
        for i, v in enumerate(value):
            _dups(v, f"{path}[{i}]", errors)
    elif isinstance(value, dict):
        for _, member, where in _members(value, path, errors):
            _dups(member, where, errors)


def _members(value: dict[str, Any], path: str, errors: list[str]) -> Iterator[tuple[str, Any, str]]:
    """An object's members as sent (key, value, path), each repeated key reported."""
    seen: set[str] = set()
    for key, member in value.pairs if isinstance(value, Pairs) else value.items():
        where = f"{path}.{key}" if path else key
        if key in seen:
            _add(errors, f'duplicate field "{where}"')
        seen.add(key)
        yield key, member, where


def plain(value: Any) -> Any:
    """A decoded value with duplicates resolved (last wins) and plain dicts."""
    if isinstance(value, list):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    return float(value) if isinstance(value, Literal) else value


def _add(errors: list[str], error: str) -> None:
    if len(errors) < _MAX_ERRORS and error not in errors:
        errors.append(error)
