"""A Swagger 2.0 document in the protobuf encoding kube-apiserver serves at `/openapi/v2`
(`application/com.github.proto-openapi.spec.v2@v1.0+protobuf`): gnostic's `openapi.v2.Document`.

kube-openapi's handler (`pkg/handler/handler.go` ToProtoBinary) parses the JSON document with
gnostic (`openapiv2.ParseDocument`, the generated `NewDocument`... of google/gnostic-models
`openapiv2/OpenAPIv2.go`) and marshals the result; client-go's `OpenAPISchema()` unmarshals it
and kube-openapi's `pkg/util/proto` reads the models from it (kubectl's v2 validation and
explain). Re-derived from the message and field numbers of gnostic-models
`openapiv2/OpenAPIv2.proto` and the way its `New*` functions map JSON onto them:

- a JSON object whose keys are names (`definitions`, `properties`, `securityDefinitions`, a
  security requirement) is a wrapper message of `Named*` entries {name 1, value 2} at field 1,
  in the document's key order; `paths` puts `/...` keys in field 2 and `x-` keys in field 1,
  `responses` status codes in field 1 and `x-` keys in field 2;
- every `x-...` key of an object is a vendor extension: a `NamedAny` whose `Any.yaml` (field 2)
  is the value written as YAML, as `compiler.Marshal` writes it; so are `default`, `example`
  and each `enum` value;
- `type` is a `TypeItem` {repeated value 1} (a string or a list), `items` an `ItemsItem`
  {repeated schema 1} holding the one item schema, `additionalProperties` a oneof of a schema (1)
  or a boolean (2);
- a parameter is `ParametersItem` {parameter 1 | json_reference 2}, a `Parameter`
  {body_parameter 1 | non_body_parameter 2} chosen by `in`, a non-body one a
  `NonBodyParameter` {header 1 | formData 2 | query 3 | path 4}; a response value
  {response 1 | json_reference 2}, a response's schema a `SchemaItem` {schema 1};
- proto3: a scalar is written only when it is not zero (empty string, false, 0), a message
  whenever its key is present (an empty `properties` still is one), a oneof member always.

Pure. Keys gnostic's parser refuses (not in its message, not `x-`) raise ValueError naming the
path, as ToProtoBinary fails on them. Messages no document of the simulator has (OAuth2
security, response headers, examples) are refused the same way.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from app.simulator.apiserver.protobuf import read_varint

# Field kinds: s string, b bool, i int64, d double, S repeated string, A Any, *A repeated Any,
# T TypeItem, @Msg a message, *@Msg repeated messages, {Msg a wrapper of Named{name, Msg}
# entries at field 1, ={Msg the same wrapper of Named{name, repeated string} (security).
_Table = dict[str, tuple[int, str]]


def _fields(spec: str) -> _Table:
    out: _Table = {}
    for item in spec.split(", "):
        key, number, kind = item.split(" ")
        out[key] = (int(number), kind)
    return out


_PRIMITIVE = (
    "type {} s, format {} s, items {} @PrimitivesItems, collectionFormat {} s, default {} A, "
    "maximum {} d, exclusiveMaximum {} b, minimum {} d, exclusiveMinimum {} b, maxLength {} i, "
    "minLength {} i, pattern {} s, maxItems {} i, minItems {} i, uniqueItems {} b, enum {} *A, "
    "multipleOf {} d"
)


def _primitive(first: int) -> str:
    """The validation fields gnostic's parameter sub-schemas share, numbered from `first`."""
    return _PRIMITIVE.format(*range(first, first + 17))


# Each message: its JSON keys, field numbers and kinds; "x-" is the vendor extension field.
MESSAGES: dict[str, _Table] = {
    name: _fields(spec)
    for name, spec in {
        "Document": (
            "swagger 1 s, info 2 @Info, host 3 s, basePath 4 s, schemes 5 S, consumes 6 S, "
            "produces 7 S, paths 8 @Paths, definitions 9 {Schema, security 12 *@Security, "
            "securityDefinitions 13 {SecurityDefinitionsItem, tags 14 *@Tag, "
            "externalDocs 15 @ExternalDocs, x- 16 x"
        ),
        "Info": (
            "title 1 s, version 2 s, description 3 s, termsOfService 4 s, contact 5 @Contact, "
            "license 6 @License, x- 7 x"
        ),
        "Contact": "name 1 s, url 2 s, email 3 s, x- 4 x",
        "License": "name 1 s, url 2 s, x- 3 x",
        "ExternalDocs": "description 1 s, url 2 s, x- 3 x",
        "Tag": "name 1 s, description 2 s, externalDocs 3 @ExternalDocs, x- 4 x",
        "PathItem": (
            "$ref 1 s, get 2 @Operation, put 3 @Operation, post 4 @Operation, "
            "delete 5 @Operation, options 6 @Operation, head 7 @Operation, patch 8 @Operation, "
            "parameters 9 *@ParametersItem, x- 10 x"
        ),
        "Operation": (
            "tags 1 S, summary 2 s, description 3 s, externalDocs 4 @ExternalDocs, "
            "operationId 5 s, produces 6 S, consumes 7 S, parameters 8 *@ParametersItem, "
            "responses 9 @Responses, schemes 10 S, deprecated 11 b, security 12 *@Security, "
            "x- 13 x"
        ),
        "JsonReference": "$ref 1 s, description 2 s",
        "BodyParameter": (
            "description 1 s, name 2 s, in 3 s, required 4 b, schema 5 @Schema, x- 6 x"
        ),
        "HeaderParameterSubSchema": (
            f"required 1 b, in 2 s, description 3 s, name 4 s, {_primitive(5)}, x- 22 x"
        ),
        "PathParameterSubSchema": (
            f"required 1 b, in 2 s, description 3 s, name 4 s, {_primitive(5)}, x- 22 x"
        ),
        "QueryParameterSubSchema": (
            "required 1 b, in 2 s, description 3 s, name 4 s, allowEmptyValue 5 b, "
            f"{_primitive(6)}, x- 23 x"
        ),
        "FormDataParameterSubSchema": (
            "required 1 b, in 2 s, description 3 s, name 4 s, allowEmptyValue 5 b, "
            f"{_primitive(6)}, x- 23 x"
        ),
        "PrimitivesItems": f"{_primitive(1)}, x- 18 x",
        "Response": "description 1 s, schema 2 @SchemaItem, x- 5 x",
        "Schema": (
            "$ref 1 s, format 2 s, title 3 s, description 4 s, default 5 A, multipleOf 6 d, "
            "maximum 7 d, exclusiveMaximum 8 b, minimum 9 d, exclusiveMinimum 10 b, "
            "maxLength 11 i, minLength 12 i, pattern 13 s, maxItems 14 i, minItems 15 i, "
            "uniqueItems 16 b, maxProperties 17 i, minProperties 18 i, required 19 S, enum 20 *A, "
            "additionalProperties 21 @AdditionalPropertiesItem, type 22 T, items 23 @ItemsItem, "
            "allOf 24 *@Schema, properties 25 {Schema, discriminator 26 s, readOnly 27 b, "
            "xml 28 @Xml, externalDocs 29 @ExternalDocs, example 30 A, x- 31 x"
        ),
        "Xml": ("name 1 s, namespace 2 s, prefix 3 s, attribute 4 b, wrapped 5 b, x- 6 x"),
        "ApiKeySecurity": "type 1 s, name 2 s, in 3 s, description 4 s, x- 5 x",
        "BasicAuthenticationSecurity": "type 1 s, description 2 s, x- 3 x",
    }.items()
}

_VARINT, _FIXED64, _BYTES = 0, 1, 2
_STATUS_CODE = re.compile(r"^([0-9]{3})$|^(default)$")


def encode_document(doc: Mapping[str, Any]) -> bytes:
    """The gnostic `openapi.v2.Document` of a Swagger 2.0 document, marshalled."""
    return _message("Document", doc, "")


def _message(name: str, obj: Any, path: str) -> bytes:
    special = _SPECIAL.get(name)
    if special is not None:
        return special(obj, path)
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path or '/'}: expected an object for {name}, got {obj!r}")
    table = MESSAGES[name]
    parts: list[tuple[int, bytes]] = []
    for key, value in obj.items():
        where = f"{path}/{key}"
        if key.startswith("x-") and "x-" in table:
            number = table["x-"][0]
            parts.append((number, _bytes(number, _named_any(key, value))))
            continue
        if key not in table:
            raise ValueError(f"{where}: {name} has no field {key!r}")
        number, kind = table[key]
        parts.append((number, _field(number, kind, value, where)))
    parts.sort(key=lambda p: p[0])  # Go writes fields in field-number order
    return b"".join(data for _, data in parts)


def _field(number: int, kind: str, value: Any, where: str) -> bytes:
    if kind == "s":
        return _string(number, _str(value, where)) if value else b""
    if kind == "b":
        return _key(number, _VARINT) + b"\x01" if _bool(value, where) else b""
    if kind == "i":
        return _key(number, _VARINT) + _varint(_int(value, where)) if value else b""
    if kind == "d":
        return _key(number, _FIXED64) + struct.pack("<d", _float(value, where)) if value else b""
    if kind == "S":
        return b"".join(_string(number, _str(v, where)) for v in _list(value, where))
    if kind == "A":
        return _bytes(number, _any(value))
    if kind == "*A":
        return b"".join(_bytes(number, _any(v)) for v in _list(value, where))
    if kind == "T":
        types = [value] if isinstance(value, str) else _list(value, where)
        return _bytes(number, b"".join(_string(1, _str(t, where)) for t in types))
    if kind.startswith("*@"):
        sub = kind[2:]
        items = _list(value, where)
        return b"".join(
            _bytes(number, _message(sub, v, f"{where}/{i}")) for i, v in enumerate(items)
        )
    if kind.startswith("@"):
        return _bytes(number, _message(kind[1:], value, where))
    if kind.startswith("{"):
        return _bytes(number, _named_map(kind[1:], value, where))
    raise AssertionError(f"unknown field kind {kind!r}")


def _named_map(value_message: str, obj: Any, path: str) -> bytes:
    """A wrapper message: Named{name 1, value 2} entries at field 1, in key order."""
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {obj!r}")
    return b"".join(
        _bytes(1, _named(key, _message(value_message, value, f"{path}/{key}")))
        for key, value in obj.items()
    )


def _named(name: str, value: bytes) -> bytes:
    return _string(1, name) + _bytes(2, value)


def _named_any(name: str, value: Any) -> bytes:
    return _named(name, _any(value))


def _any(value: Any) -> bytes:
    """gnostic's Any: the value as YAML text in field 2 (no google.protobuf.Any)."""
    return _string(2, to_yaml(value))


# --- messages that are not plain field tables -----------------------------------------------


def _paths(obj: Any, path: str) -> bytes:
    out = []
    for key, value in _map(obj, path).items():
        if key.startswith("x-"):
            out.append(_bytes(1, _named(key, _any(value))))
        elif key.startswith("/"):
            out.append(_bytes(2, _named(key, _message("PathItem", value, f"{path}/{key}"))))
        else:
            raise ValueError(f"{path}/{key}: a path must start with '/'")
    return _in_field_order(out)


def _responses(obj: Any, path: str) -> bytes:
    out = []
    for key, value in _map(obj, path).items():
        where = f"{path}/{key}"
        if key.startswith("x-"):
            out.append(_bytes(2, _named(key, _any(value))))
        elif _STATUS_CODE.match(key):
            chosen = _oneof(value, where, "$ref", (2, "JsonReference"), (1, "Response"))
            out.append(_bytes(1, _named(key, chosen)))
        else:
            raise ValueError(f"{where}: not a status code")
    return _in_field_order(out)


def _parameters_item(obj: Any, path: str) -> bytes:
    if isinstance(obj, Mapping) and "$ref" in obj:
        return _bytes(2, _message("JsonReference", obj, path))
    where = _map(obj, path).get("in")
    if where == "body":
        parameter = _bytes(1, _message("BodyParameter", obj, path))
    else:
        number, sub = _NON_BODY.get(str(where), (0, ""))
        if not number:
            raise ValueError(f"{path}/in: unexpected value {where!r}")
        parameter = _bytes(2, _bytes(number, _message(sub, obj, path)))
    return _bytes(1, parameter)


_NON_BODY = {
    "header": (1, "HeaderParameterSubSchema"),
    "formData": (2, "FormDataParameterSubSchema"),
    "query": (3, "QueryParameterSubSchema"),
    "path": (4, "PathParameterSubSchema"),
}


def _schema_item(obj: Any, path: str) -> bytes:
    return _bytes(1, _message("Schema", obj, path))


def _items_item(obj: Any, path: str) -> bytes:
    if not isinstance(obj, Mapping):  # gnostic: "has unexpected value for item array"
        raise ValueError(f"{path}: items must be one schema, got {obj!r}")
    return _bytes(1, _message("Schema", obj, path))


def _additional_properties(obj: Any, path: str) -> bytes:
    if isinstance(obj, bool):  # a oneof member: written even when false
        return _key(2, _VARINT) + (b"\x01" if obj else b"\x00")
    return _bytes(1, _message("Schema", obj, path))


def _security_definitions_item(obj: Any, path: str) -> bytes:
    kind = _map(obj, path).get("type")
    if kind == "apiKey":
        return _bytes(2, _message("ApiKeySecurity", obj, path))
    if kind == "basic":
        return _bytes(1, _message("BasicAuthenticationSecurity", obj, path))
    raise ValueError(f"{path}/type: security definitions of type {kind!r} are not supported")


def _security(obj: Any, path: str) -> bytes:
    """A SecurityRequirement: NamedStringArray{name, StringArray{repeated value 1}} entries."""
    out = []
    for key, scopes in _map(obj, path).items():
        values = b"".join(_string(1, _str(s, path)) for s in _list(scopes, f"{path}/{key}"))
        out.append(_bytes(1, _named(key, values)))
    return b"".join(out)


def _oneof(
    obj: Any, path: str, marker: str, if_marked: tuple[int, str], otherwise: tuple[int, str]
) -> bytes:
    number, sub = if_marked if marker in _map(obj, path) else otherwise
    return _bytes(number, _message(sub, obj, path))


_SPECIAL: dict[str, Callable[[Any, str], bytes]] = {
    "Paths": _paths,
    "Responses": _responses,
    "ParametersItem": _parameters_item,
    "SchemaItem": _schema_item,
    "ItemsItem": _items_item,
    "AdditionalPropertiesItem": _additional_properties,
    "SecurityDefinitionsItem": _security_definitions_item,
    "Security": _security,
}


def _in_field_order(parts: list[bytes]) -> bytes:
    """Parts each starting with its key: stable-sorted by field number."""
    ordered: list[bytes] = sorted(parts, key=_field_number)
    return b"".join(ordered)


def _field_number(part: bytes) -> int:
    return read_varint(part)[0] >> 3


# --- YAML text, as gnostic's compiler.Marshal (yaml.v3, block style) writes a JSON value ----

_PLAIN = re.compile(r"[A-Za-z_/][A-Za-z0-9_./,-]*")  # fullmatch: "$" would let "a\n" through
_ESCAPED = {0x2028, 0x2029, 0xFFFE, 0xFFFF}
_RESERVED = {"true", "false", "yes", "no", "on", "off", "null", "y", "n", "~"}


def to_yaml(value: Any) -> str:
    """`value` as a YAML document: mappings and sequences in block style, 4-space indents."""
    return "".join(line + "\n" for line in _yaml_lines(value))


def _yaml_lines(value: Any) -> list[str]:
    if isinstance(value, Mapping):
        if not value:
            return ["{}"]
        lines = []
        for key, item in value.items():
            lines.extend(_entry(f"{_scalar(str(key))}:", item, "    "))
        return lines
    if isinstance(value, list):
        if not value:
            return ["[]"]
        lines = []
        for item in value:
            lines.extend(_entry("-", item, "  ", inline_block=True))
        return lines
    return [_scalar(value)]


def _entry(head: str, item: Any, indent: str, inline_block: bool = False) -> list[str]:
    inner = _yaml_lines(item)
    nested = isinstance(item, (Mapping, list)) and bool(item)
    if not nested:
        return [f"{head} {inner[0]}"]
    if inline_block and isinstance(item, Mapping):  # "- key: value" then aligned keys
        return [f"{head} {inner[0]}", *(indent + line for line in inner[1:])]
    return [head, *("    " + line for line in inner)]


def _scalar(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):  # with a '.', which YAML 1.1 readers need to see a float
        mantissa, e, exponent = repr(value).partition("e")
        return (mantissa if "." in mantissa else mantissa + ".0") + e + exponent
    text = str(value)
    if _PLAIN.fullmatch(text) and text.lower() not in _RESERVED:
        return text
    return _quoted(text)


def _quoted(text: str) -> str:
    """A double-quoted YAML scalar: escapes for what YAML does not take raw or would fold as
    a line break (C0 and C1 controls, DEL, U+2028/U+2029, surrogates, U+FFFE/U+FFFF), the
    quote and the backslash."""
    out = ['"']
    for ch in text:
        code = ord(ch)
        if ch in ('"', "\\"):
            out.append("\\" + ch)
        elif code < 0x20 or 0x7F <= code <= 0x9F or code in _ESCAPED or 0xD800 <= code <= 0xDFFF:
            out.append(f"\\u{code:04x}")
        else:
            out.append(ch)
    out.append('"')
    return "".join(out)


# --- protobuf wire format ----------------------------------------------------------------------


def _key(number: int, wire: int) -> bytes:
    return _varint(number << 3 | wire)


def _varint(n: int) -> bytes:
    n &= (1 << 64) - 1  # a negative int64 as its two's complement, ten bytes
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _bytes(number: int, data: bytes) -> bytes:
    return _key(number, _BYTES) + _varint(len(data)) + data


def _string(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())


# --- JSON values, checked as gnostic's *ForScalarNode checks them --------------------------


def _map(obj: Any, path: str) -> Mapping[str, Any]:
    if not isinstance(obj, Mapping):
        raise ValueError(f"{path}: expected an object, got {obj!r}")
    return obj


def _list(value: Any, path: str) -> Sequence[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{path}: expected a list, got {value!r}")
    return value


def _str(value: Any, path: str) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{path}: expected a string, got {value!r}")
    return value


def _bool(value: Any, path: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{path}: expected a boolean, got {value!r}")
    return value


def _int(value: Any, path: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ValueError(f"{path}: expected an integer, got {value!r}")
    return value


def _float(value: Any, path: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ValueError(f"{path}: expected a number, got {value!r}")
    return float(value)
