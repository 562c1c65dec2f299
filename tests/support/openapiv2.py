"""An independent reader of `/openapi/v2`'s protobuf: the `protobuf` package's generic wire
decoding (an empty message's UnknownFieldSet), walked by the field numbers of gnostic-models
`openapiv2/OpenAPIv2.proto` written out here by hand, back into the Swagger 2.0 JSON it encodes.

Nothing of the simulator's encoder (app/simulator/apiserver/gnostic.py) is used: a field this
reader does not know fails the test. Vendor extensions, `default`, `enum` and `example` come back
from their YAML text (`Any.yaml`, field 2) through PyYAML.

`proto3_view` is what a JSON document becomes after the trip: the zero scalars (false, "", 0)
and empty lists a proto3 message cannot tell from unset are left out, except inside a YAML value.
"""

from __future__ import annotations

import struct
from typing import Any

import yaml
from google.protobuf import empty_pb2, unknown_fields

_LEN, _VARINT, _FIXED64 = 2, 0, 1

# message -> {field number: (JSON key, kind)}; kinds: s string, b bool, i int, d double,
# S repeated string, A Any, *A repeated Any, T TypeItem, x vendor extension (NamedAny),
# {M a Named* wrapper of M, *M repeated M, M a message, |M a oneof chosen by field number.
_MESSAGES: dict[str, dict[int, tuple[str, str]]] = {
    "Document": {
        1: ("swagger", "s"),
        2: ("info", "Info"),
        3: ("host", "s"),
        4: ("basePath", "s"),
        5: ("schemes", "S"),
        6: ("consumes", "S"),
        7: ("produces", "S"),
        8: ("paths", "Paths"),
        9: ("definitions", "{Schema"),
        12: ("security", "*SecurityRequirement"),
        13: ("securityDefinitions", "{SecurityDefinitionsItem"),
        16: ("", "x"),
    },
    "Info": {1: ("title", "s"), 2: ("version", "s"), 3: ("description", "s"), 7: ("", "x")},
    "PathItem": {
        1: ("$ref", "s"),
        2: ("get", "Operation"),
        3: ("put", "Operation"),
        4: ("post", "Operation"),
        5: ("delete", "Operation"),
        6: ("options", "Operation"),
        7: ("head", "Operation"),
        8: ("patch", "Operation"),
        9: ("parameters", "*ParametersItem"),
        10: ("", "x"),
    },
    "Operation": {
        1: ("tags", "S"),
        2: ("summary", "s"),
        3: ("description", "s"),
        5: ("operationId", "s"),
        6: ("produces", "S"),
        7: ("consumes", "S"),
        8: ("parameters", "*ParametersItem"),
        9: ("responses", "Responses"),
        10: ("schemes", "S"),
        11: ("deprecated", "b"),
        13: ("", "x"),
    },
    "ParametersItem": {1: ("", "|Parameter"), 2: ("", "|JsonReference")},
    "Parameter": {1: ("", "|BodyParameter"), 2: ("", "|NonBodyParameter")},
    "NonBodyParameter": {
        1: ("", "|HeaderParameterSubSchema"),
        2: ("", "|FormDataParameterSubSchema"),
        3: ("", "|QueryParameterSubSchema"),
        4: ("", "|PathParameterSubSchema"),
    },
    "JsonReference": {1: ("$ref", "s"), 2: ("description", "s")},
    "BodyParameter": {
        1: ("description", "s"),
        2: ("name", "s"),
        3: ("in", "s"),
        4: ("required", "b"),
        5: ("schema", "Schema"),
        6: ("", "x"),
    },
    "QueryParameterSubSchema": {
        1: ("required", "b"),
        2: ("in", "s"),
        3: ("description", "s"),
        4: ("name", "s"),
        5: ("allowEmptyValue", "b"),
        6: ("type", "s"),
        7: ("format", "s"),
        10: ("default", "A"),
        20: ("uniqueItems", "b"),
        21: ("enum", "*A"),
        23: ("", "x"),
    },
    "PathParameterSubSchema": {
        1: ("required", "b"),
        2: ("in", "s"),
        3: ("description", "s"),
        4: ("name", "s"),
        5: ("type", "s"),
        6: ("format", "s"),
        9: ("default", "A"),
        19: ("uniqueItems", "b"),
        20: ("enum", "*A"),
        22: ("", "x"),
    },
    "ResponseValue": {1: ("", "|Response"), 2: ("", "|JsonReference")},
    "Response": {1: ("description", "s"), 2: ("schema", "SchemaItem"), 5: ("", "x")},
    "SchemaItem": {1: ("", "|Schema")},
    "Schema": {
        1: ("$ref", "s"),
        2: ("format", "s"),
        3: ("title", "s"),
        4: ("description", "s"),
        5: ("default", "A"),
        6: ("multipleOf", "d"),
        7: ("maximum", "d"),
        8: ("exclusiveMaximum", "b"),
        9: ("minimum", "d"),
        10: ("exclusiveMinimum", "b"),
        11: ("maxLength", "i"),
        12: ("minLength", "i"),
        13: ("pattern", "s"),
        14: ("maxItems", "i"),
        15: ("minItems", "i"),
        16: ("uniqueItems", "b"),
        17: ("maxProperties", "i"),
        18: ("minProperties", "i"),
        19: ("required", "S"),
        20: ("enum", "*A"),
        21: ("additionalProperties", "AdditionalPropertiesItem"),
        22: ("type", "T"),
        23: ("items", "ItemsItem"),
        24: ("allOf", "*Schema"),
        25: ("properties", "{Schema"),
        26: ("discriminator", "s"),
        27: ("readOnly", "b"),
        30: ("example", "A"),
        31: ("", "x"),
    },
    "SecurityDefinitionsItem": {1: ("", "|BasicAuthenticationSecurity"), 2: ("", "|ApiKey")},
    "BasicAuthenticationSecurity": {1: ("type", "s"), 2: ("description", "s"), 3: ("", "x")},
    "ApiKey": {
        1: ("type", "s"),
        2: ("name", "s"),
        3: ("in", "s"),
        4: ("description", "s"),
        5: ("", "x"),
    },
}


def decode_document(data: bytes) -> dict[str, Any]:
    """The Swagger 2.0 JSON a gnostic `openapi.v2.Document` holds."""
    decoded: dict[str, Any] = _message("Document", data)
    return decoded


def wire_fields(data: bytes) -> list[tuple[int, int, Any]]:
    """(field number, wire type, value) of a message, by protobuf's own parser."""
    holder = empty_pb2.Empty()
    holder.ParseFromString(data)
    return [(f.field_number, f.wire_type, f.data) for f in unknown_fields.UnknownFieldSet(holder)]


def _message(name: str, data: bytes) -> Any:
    if name == "Paths":
        return _named_entries(data, {1: None, 2: "PathItem"})
    if name == "Responses":
        return _named_entries(data, {1: "ResponseValue", 2: None})
    if name == "SecurityRequirement":
        return {n: v for n, v in (_named(e, "StringArray") for e in _payloads(data, 1))}
    if name == "StringArray":
        return [p.decode() for p in _payloads(data, 1)]
    if name == "ItemsItem":
        (item,) = [_message("Schema", p) for p in _payloads(data, 1)]
        return item
    if name == "AdditionalPropertiesItem":
        ((number, _, value),) = wire_fields(data)
        return _message("Schema", value) if number == 1 else bool(value)
    table = _MESSAGES[name]
    out: dict[str, Any] = {}
    for number, wire, value in wire_fields(data):
        assert number in table, f"{name} has no field {number}"
        key, kind = table[number]
        if kind.startswith("|"):  # a oneof: the chosen member is the value itself
            return _message(kind[1:], value)
        if kind == "x":
            ext_name, ext_value = _named(value, "Any")
            out[ext_name] = ext_value
        elif kind in ("S", "*A") or kind.startswith("*"):
            out.setdefault(key, []).append(_scalar(kind.lstrip("*"), wire, value))
        else:
            out[key] = _scalar(kind, wire, value)
    return out


def _scalar(kind: str, wire: int, value: Any) -> Any:
    if kind in ("s", "S"):
        assert wire == _LEN
        return value.decode()
    if kind == "b":
        assert wire == _VARINT
        return bool(value)
    if kind == "i":
        assert wire == _VARINT
        return value - (1 << 64) if value >= 1 << 63 else value
    if kind == "d":
        assert wire == _FIXED64
        return struct.unpack("<d", struct.pack("<Q", value))[0]
    if kind == "A":
        return _any(value)
    if kind == "T":
        types = [p.decode() for p in _payloads(value, 1)]
        return types[0] if len(types) == 1 else types
    if kind.startswith("{"):
        return {n: v for n, v in (_named(e, kind[1:]) for e in _payloads(value, 1))}
    assert wire == _LEN
    return _message(kind, value)


def _any(data: bytes) -> Any:
    fields = wire_fields(data)
    assert [n for n, _, _ in fields] == [2], f"an Any holds only its yaml: {fields}"
    return yaml.safe_load(fields[0][2].decode())


def _named(data: bytes, value_message: str) -> tuple[str, Any]:
    fields = {n: v for n, _, v in wire_fields(data)}
    assert set(fields) <= {1, 2}
    value = fields.get(2, b"")
    decoded = _any(value) if value_message == "Any" else _message(value_message, value)
    return fields[1].decode(), decoded


def _named_entries(data: bytes, numbers: dict[int, str | None]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for number, _, value in wire_fields(data):
        message = numbers[number]
        name, item = _named(value, message or "Any")
        out[name] = item
    return out


def _payloads(data: bytes, number: int) -> list[bytes]:
    fields = wire_fields(data)
    assert {n for n, _, _ in fields} <= {number}, f"unexpected fields in {fields}"
    return [v for _, _, v in fields]


# Maps gnostic keeps as NamedSchema lists (OpenAPIv2.proto Definitions and Properties), with no
# vendor extensions: a key there is a name.
_NAMED_SCHEMAS = ("definitions", "properties")


def proto3_view(node: Any, *, inside_yaml: bool = False) -> Any:
    """A Swagger JSON value as it reads after a proto3 round trip."""
    if inside_yaml:
        return node
    if isinstance(node, list):
        return [proto3_view(v) for v in node]
    if not isinstance(node, dict):
        return node
    out = {}
    for key, value in node.items():
        if key in _NAMED_SCHEMAS and isinstance(value, dict):
            # NamedSchema entries: their keys are names ("x-" included), never extensions
            out[key] = {name: proto3_view(schema) for name, schema in value.items()}
            continue
        keep_as_is = key.startswith("x-") or key in ("default", "example")
        keep_as_is = keep_as_is or (key == "enum" and value != [])  # a repeated Any
        zero = value is False or value in ("", []) or (type(value) in (int, float) and value == 0)
        if zero and not keep_as_is and key != "additionalProperties":  # a oneof member stays
            continue
        out[key] = proto3_view(value, inside_yaml=keep_as_is)
    return out
