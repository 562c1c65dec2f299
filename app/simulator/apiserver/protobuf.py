"""Request bodies in `application/vnd.kubernetes.protobuf`, decoded to the JSON kube-apiserver
would have read.

client-go's generated clients (kubectl create deployment, a Delete's DeleteOptions ...) send
built-in kinds as protobuf since 1.32 and fall back to JSON only for CBOR (client-go
`rest/request.go`, `rest/client.go`), so the simulator reads protobuf. Re-derived from
apimachinery: the envelope (`pkg/runtime/serializer/protobuf/protobuf.go`: the magic
`k8s\\x00`, then a `runtime.Unknown` {typeMeta {apiVersion 1, kind 2}, raw 2, contentEncoding 3,
contentType 4} whose `raw` is the object), the special messages (`pkg/apis/meta/v1` Time and
MicroTime {seconds 1, nanos 2}, FieldsV1 {Raw 1}; `pkg/api/resource` Quantity {string 1};
`pkg/util/intstr` IntOrString {type 1, intVal 2, strVal 3}; `pkg/runtime` RawExtension {raw 1})
and the field numbers of every other message (protofields.py). Unknown field numbers are
skipped, as the generated Unmarshal skips them; the JSON a message becomes is what Go's
encoder writes for the decoded struct (protofields.py explains pointers and omitempty).

Only decoding: the simulator answers in JSON, which every client accepts alongside protobuf.
"""

from __future__ import annotations

import base64
import json
import struct
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

from app.simulator.apiserver.errors import ApiError, bad_request
from app.simulator.apiserver.protofields import FIELDS

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
_VARINT, _FIXED64, _BYTES, _FIXED32 = 0, 1, 2, 5


class DecodeError(ValueError):
    pass


@dataclass(frozen=True)
class Field:
    name: str  # "" for an inline struct
    kind: str  # s y b i f t T q n r, or @message
    repeated: bool = False
    map: bool = False
    pointer: bool = False
    omitempty: bool = False


@dataclass(frozen=True)
class Envelope:
    api_version: str
    kind: str
    raw: bytes


def envelope(body: bytes) -> Envelope:
    """The runtime.Unknown around an object; 400 when the body is not one."""
    if not body.startswith(MAGIC):
        raise bad_request("provided object is not a protobuf message: it lacks the k8s prefix")
    try:
        fields = _parse(body[len(MAGIC) :])
        meta = _parse(_last(fields, 1, b""))
        encoding = _last(fields, 3, b"").decode()
        api_version = _last(meta, 1, b"").decode()
        kind = _last(meta, 2, b"").decode()
    except (DecodeError, UnicodeDecodeError) as e:
        raise bad_request(f"unable to decode the protobuf envelope: {e}") from None
    if encoding:
        raise ApiError(415, f"the protobuf content encoding {encoding!r} is not supported")
    return Envelope(api_version, kind, _last(fields, 2, b""))


def decode(message: str, raw: bytes) -> dict[str, Any]:
    """Message `message` (an OpenAPI definition name, io.k8s.api.core.v1.Pod) as JSON."""
    short = _short(message)
    if short not in FIELDS:
        raise ApiError(415, f"the simulator cannot decode {message} from protobuf; send JSON")
    try:
        return _message(short, raw)
    except (DecodeError, UnicodeDecodeError, json.JSONDecodeError, struct.error) as e:
        raise bad_request(f"unable to decode {message} from protobuf: {e}") from None


def _short(name: str) -> str:
    if name.startswith("io.k8s.apimachinery.pkg.apis.meta.v1."):
        return "meta.v1." + name.rsplit(".", 1)[-1]
    return name.removeprefix("io.k8s.api.")


@cache
def _fields(message: str) -> dict[int, Field]:
    out: dict[int, Field] = {}
    for spec in FIELDS[message].split(", "):
        number, name, kind = spec.split(" ")
        core = kind.rstrip("?~")
        out[int(number)] = Field(
            name="" if name == "^" else name,
            kind=core.lstrip("[{"),
            repeated=core.startswith("["),
            map=core.startswith("{"),
            pointer=kind.endswith("?"),
            omitempty=kind.endswith("~"),
        )
    return out


def _message(message: str, raw: bytes) -> dict[str, Any]:
    fields = _fields(message)
    out: dict[str, Any] = {}
    for number, wire, value in _scan(raw):
        f = fields.get(number)
        if f is None:
            continue  # a field of a later release: skipped, as Unmarshal skips it
        if f.map:
            entry = _parse(_bytes(wire, value))
            key = _last(entry, 1, b"").decode()
            out.setdefault(f.name, {})[key] = _value(f.kind, wire, _last(entry, 2, b""))
        elif f.repeated:
            out.setdefault(f.name, []).extend(_values(f.kind, wire, value))
        elif not f.name:
            out.update(_message(f.kind[1:], _bytes(wire, value)))
        else:
            decoded = _value(f.kind, wire, value)
            if f.omitempty and not f.pointer and decoded in ("", 0, False):
                out.pop(f.name, None)
            else:
                out[f.name] = decoded
    return out


def _values(kind: str, wire: int, value: int | bytes) -> list[Any]:
    if wire == _BYTES and kind in ("i", "b", "f"):  # a packed list of numbers
        assert isinstance(value, bytes)
        if kind == "f":
            return [v for (v,) in struct.iter_unpack("<d", value)]
        out: list[Any] = []
        pos = 0
        while pos < len(value):
            n, pos = read_varint(value, pos)
            out.append(bool(n) if kind == "b" else _signed(n))
        return out
    return [_value(kind, wire, value)]


def _value(kind: str, wire: int, value: int | bytes) -> Any:
    if kind == "i":
        return _signed(_int(wire, value))
    if kind == "b":
        return bool(_int(wire, value))
    if kind == "f":
        if wire != _FIXED64 or not isinstance(value, bytes):
            raise DecodeError("a float is not a fixed64")
        return struct.unpack("<d", value)[0]
    data = _bytes(wire, value)
    if kind == "s":
        return data.decode()
    if kind == "y":
        return base64.b64encode(data).decode()
    if kind.startswith("@"):
        return _message(kind[1:], data)
    return _special(kind, _parse(data))


def _special(kind: str, fields: dict[int, list[int | bytes]]) -> Any:
    if kind == "q":  # a zero Quantity is written "0"
        return _str(fields, 1) or "0"
    if kind == "n":
        if _int(_VARINT, _last(fields, 1, 0)) == 1:
            return _str(fields, 3)
        return _signed(_int(_VARINT, _last(fields, 2, 0)))
    if kind == "r":
        raw = _bytes(_BYTES, _last(fields, 1, b""))
        return json.loads(raw) if raw else None
    if kind in ("t", "T"):  # Time / MicroTime; the zero time is written null
        seconds = _signed(_int(_VARINT, _last(fields, 1, 0)))
        nanos = _signed(_int(_VARINT, _last(fields, 2, 0)))
        if seconds == 0 and nanos == 0:
            return None
        when = datetime.fromtimestamp(seconds, UTC)
        if kind == "t":
            return when.strftime("%Y-%m-%dT%H:%M:%SZ")
        return when.strftime("%Y-%m-%dT%H:%M:%S") + f".{nanos // 1000:06d}Z"
    raise DecodeError(f"unknown field type {kind!r}")


# --- wire format --------------------------------------------------------------------------


def _scan(raw: bytes) -> list[tuple[int, int, int | bytes]]:
    """(field number, wire type, value) in order: an int for varints, bytes otherwise."""
    out: list[tuple[int, int, int | bytes]] = []
    pos = 0
    while pos < len(raw):
        key, pos = read_varint(raw, pos)
        number, wire = key >> 3, key & 7
        value: int | bytes
        if wire == _VARINT:
            value, pos = read_varint(raw, pos)
        elif wire == _BYTES:
            length, pos = read_varint(raw, pos)
            if pos + length > len(raw):
                raise DecodeError("a length-delimited field runs past the end")
            value, pos = raw[pos : pos + length], pos + length
        elif wire in (_FIXED64, _FIXED32):
            size = 8 if wire == _FIXED64 else 4
            if pos + size > len(raw):
                raise DecodeError("a fixed-size field runs past the end")
            value, pos = raw[pos : pos + size], pos + size
        else:
            raise DecodeError(f"unsupported wire type {wire}")
        if number == 0:
            raise DecodeError("field number 0")
        out.append((number, wire, value))
    return out


def _parse(raw: bytes) -> dict[int, list[int | bytes]]:
    out: dict[int, list[int | bytes]] = {}
    for number, _, value in _scan(raw):
        out.setdefault(number, []).append(value)
    return out


def _last(fields: dict[int, list[int | bytes]], number: int, default: Any) -> Any:
    values = fields.get(number)
    return values[-1] if values else default


def _str(fields: dict[int, list[int | bytes]], number: int) -> str:
    return _bytes(_BYTES, _last(fields, number, b"")).decode()


def read_varint(raw: bytes, pos: int = 0) -> tuple[int, int]:
    """The base-128 varint at `pos` (protobuf's wire format) and the position after it."""
    result = shift = 0
    while True:
        if pos >= len(raw):
            raise DecodeError("a varint runs past the end")
        byte = raw[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7
        if shift >= 70:
            raise DecodeError("a varint is too long")


def _signed(n: int) -> int:
    """A varint as the int64 (or sign-extended int32) Go wrote."""
    n &= (1 << 64) - 1
    return n - (1 << 64) if n >= 1 << 63 else n


def _int(wire: int, value: int | bytes) -> int:
    if wire != _VARINT or not isinstance(value, int):
        raise DecodeError("expected a varint")
    return value


def _bytes(wire: int, value: int | bytes) -> bytes:
    if wire != _BYTES or not isinstance(value, bytes):
        raise DecodeError("expected a length-delimited field")
    return value
