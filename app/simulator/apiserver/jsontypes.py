"""The type errors of decoding a JSON body into the kind's Go structs, before any validation.

kube-apiserver decodes a create or update body into typed structs (apimachinery
`pkg/runtime/serializer/json/json.go`, through sigs.k8s.io/json's fork of Go's
`encoding/json`), so a value of the wrong JSON type is refused there, with a 400, whatever
`fieldValidation` says: the handlers (apiserver `pkg/endpoints/handlers/rest.go`
transformDecodeError) answer `<Kind> in version "<version>" cannot be handled as a <Kind>: <err>`.
What `err` is, re-derived from `encoding/json/decode.go`:
- a literal, array or object where the Go type takes another is an UnmarshalTypeError, printed
  `json: cannot unmarshal <value> into Go struct field <Struct>.<path> of type <type>`: <value>
  is the JSON type (string, number, bool, array, object; `number <text>` for a number an
  integer type cannot hold), <Struct> the Go struct holding the field, <path> the field names
  from the root joined by "." (list indices and map keys are not part of it), <type> the Go
  type (int32, string, v1.ObjectMeta, []v1.Container, map[string]string, v1.ResourceList);
  decoding goes on and the first such error is the one reported;
- null fits every type (the field is left unset);
- types with their own UnmarshalJSON end decoding with their error, which is then reported
  even when an earlier field had a type error: IntOrString (a JSON string, else an int32, so
  `true` is `cannot unmarshal bool ... of type int32`), Quantity (any value read as its text
  and parsed: `quantities must match the regular expression ...`, no field named), Time and
  MicroTime (a JSON string first).

The Go types are read from the release's OpenAPI definitions (apiserver/schema.py): format
int32/int64, number as float64, a definition as `<package>.<Name>` with the package its name's
last segment but one. Go's named string and map types other than ResourceList (v1.PullPolicy,
v1.Protocol ...) are not in the OpenAPI document and print as their underlying type; a number's
text is the one sent (jsonnumbers.Literal: 1e3 prints as 1e3), Python's for a body decoded
otherwise. Pure.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.simulator.apiserver import gotime, quantity
from app.simulator.apiserver.fieldvalidation import Pairs
from app.simulator.apiserver.jsonnumbers import Literal
from app.simulator.apiserver.schema import Definitions, Schema, ref_name, types

_INT_RANGES = {"int32": (-(2**31), 2**31 - 1), "int64": (-(2**63), 2**63 - 1)}
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_TIMES = (
    "io.k8s.apimachinery.pkg.apis.meta.v1.Time",
    "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime",
)


class _Abort(Exception):
    """A type's own UnmarshalJSON failed: decoding ends with this message."""


class _Context:
    """Go's decodeState error context and its first saved error."""

    def __init__(self) -> None:
        self.saved: str | None = None

    def save(self, message: str) -> None:
        if self.saved is None:
            self.saved = message


def decode_error(defs: Definitions, root: str, obj: Any) -> str | None:
    """The error decoding `obj` into definition `root` gives, None when every value fits."""
    ctx = _Context()
    try:
        _value(defs, {"$ref": f"#/$defs/{root}"}, obj, (_short(root), ""), ctx)
    except _Abort as e:
        return str(e)
    return ctx.saved


def type_error(value: str, where: tuple[str, str], go_type: str) -> str:
    """UnmarshalTypeError.Error() with the context of `where` (struct name, field path)."""
    struct, path = where
    if path:
        return (
            f"json: cannot unmarshal {value} into Go struct field {struct}.{path} of type {go_type}"
        )
    return f"json: cannot unmarshal {value} into Go value of type {go_type}"


def json_kind(value: Any) -> str:
    """The JSON type Go names in an UnmarshalTypeError."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def _value(
    defs: Definitions, raw: Schema, value: Any, where: tuple[str, str], ctx: _Context
) -> None:
    if value is None:
        return
    name = ref_name(raw["$ref"]) if "$ref" in raw else None
    if name == _INT_OR_STRING:
        if not isinstance(value, str):
            _integer(value, "int32", where, abort=True)
        return
    if name == _QUANTITY:
        text = value if isinstance(value, str) else _text(value)
        try:
            quantity.parse(text.strip())
        except ValueError:
            raise _Abort(
                "quantities must match the regular expression "
                "'^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
            ) from None
        return
    if name in _TIMES:
        if not isinstance(value, str):
            raise _Abort(type_error(json_kind(value), where, "string"))
        error = gotime.parse_error(value, micro=name.endswith("MicroTime"))
        if error:
            raise _Abort(error)
        return
    schema = defs.resolve(raw)
    kinds = types(schema)
    if "object" in kinds:
        _object(defs, schema, name, value, where, ctx)
    elif "array" in kinds:
        _array(defs, schema, value, where, ctx)
    else:
        _literal(schema, kinds, value, where, ctx)  # no type (RawExtension ...): anything


def _literal(
    schema: Schema, kinds: tuple[str, ...], value: Any, where: tuple[str, str], ctx: _Context
) -> None:
    """literalStore's checks: a literal, array or object where Go has an int, float, bool or
    string."""
    number = isinstance(value, int | float) and not isinstance(value, bool)
    if "integer" in kinds:
        if not number:
            ctx.save(type_error(json_kind(value), where, _go_int(schema)))
        else:
            message = _integer(value, _go_int(schema), where, abort=False)
            if message:
                ctx.save(message)
    elif "number" in kinds:
        if not number:
            ctx.save(type_error(json_kind(value), where, "float64"))
    elif "boolean" in kinds:
        if not isinstance(value, bool):
            ctx.save(type_error(json_kind(value), where, "bool"))
    elif "string" in kinds and not isinstance(value, str):
        ctx.save(type_error(json_kind(value), where, "string"))


def _object(
    defs: Definitions,
    schema: Schema,
    name: str | None,
    value: Any,
    where: tuple[str, str],
    ctx: _Context,
) -> None:
    if not isinstance(value, dict):
        ctx.save(type_error(json_kind(value), where, go_type(defs, schema, name)))
        return
    props, extra = schema.get("properties"), schema.get("additionalProperties")
    struct, path = where
    members = value.pairs if isinstance(value, Pairs) else list(value.items())
    for key, member in members:
        if isinstance(props, Mapping) and key in props:
            # A struct's field: the context names this struct and the field's path.
            here = (_short(name) if name else struct, f"{path}.{key}" if path else key)
            _value(defs, props[key], member, here, ctx)
        elif isinstance(extra, Mapping):
            _value(defs, extra, member, where, ctx)  # a map's value: the same context
        # an unknown field: its value is skipped unread (fieldvalidation reports it)


def _array(
    defs: Definitions, schema: Schema, value: Any, where: tuple[str, str], ctx: _Context
) -> None:
    if not isinstance(value, list):
        ctx.save(type_error(json_kind(value), where, go_type(defs, schema, None)))
        return
    items = schema.get("items")
    if isinstance(items, Mapping):
        for member in value:
            _value(defs, items, member, where, ctx)


def _integer(value: Any, go_int: str, where: tuple[str, str], *, abort: bool) -> str | None:
    """An integer type's error for `value` (None when it fits): Go's literalStore parses the
    number's text as an integer; an IntOrString's json.Unmarshal ends decoding."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        message = type_error(json_kind(value), where, go_int)
    else:
        low, high = _INT_RANGES.get(go_int, _INT_RANGES["int64"])
        if isinstance(value, int) and low <= value <= high:
            return None
        message = type_error(f"number {_text(value)}", where, go_int)
    if abort:
        raise _Abort(message)
    return message


def go_type(defs: Definitions, raw: Schema, name: str | None) -> str:
    """The Go type (reflect's String()) of a field of schema `raw` (definition `name`)."""
    if name is None and "$ref" in raw:
        name = ref_name(raw["$ref"])
    if name is not None:
        parts = name.split(".")
        return f"{parts[-2]}.{parts[-1]}" if len(parts) >= 2 else name
    schema = defs.resolve(raw)
    kinds = types(schema)
    items, extra = schema.get("items"), schema.get("additionalProperties")
    if "array" in kinds and isinstance(items, Mapping):
        return "[]" + go_type(defs, items, None)
    if "object" in kinds and isinstance(extra, Mapping):
        if extra.get("$ref") == f"#/$defs/{_QUANTITY}":
            return "v1.ResourceList"  # core/v1's map[ResourceName]resource.Quantity
        return "map[string]" + go_type(defs, extra, None)
    if "integer" in kinds:
        return _go_int(schema)
    if "number" in kinds:
        return "float64"
    if "boolean" in kinds:
        return "bool"
    if "string" in kinds:
        return "string"
    return "interface {}"


def _go_int(schema: Schema) -> str:
    fmt = schema.get("format")
    return str(fmt) if fmt in _INT_RANGES else "int64"


def _short(name: str) -> str:
    """A definition's Go type name (io.k8s.api.apps.v1.DeploymentSpec -> DeploymentSpec)."""
    return name.rsplit(".", 1)[-1]


def _text(value: Any) -> str:
    """A JSON value's text as Go's decoder sees it."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, Literal):
        return value.text
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e16:
        return repr(value)
    return str(value)
