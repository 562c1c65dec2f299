"""Unit tests of `/openapi/v2`: the Swagger 2.0 document (app.simulator.apiserver.openapiv2),
its gnostic protobuf encoding (app.simulator.apiserver.gnostic) read back by an independent
decoder (tests/support/openapiv2.py: the protobuf package's wire parser), and the handler's
negotiation and conditional requests (app.simulator.endpoints.openapiv2)."""

from __future__ import annotations

import gzip
import hashlib
import json
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

from app.simulator.apiserver import gnostic, openapi, openapiv2, schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.version import SUPPORTED_MINORS, KubeVersion
from app.simulator.endpoints.messages import Request
from app.simulator.endpoints.openapiv2 import (
    JSON,
    PROTOBUF,
    PROTOBUF_DEPRECATED,
    OpenApiV2,
    negotiate,
    parse_accept,
)
from tests.support.openapiv2 import decode_document, proto3_view, wire_fields

DEFS = schema.definitions(33)
_PRIMITIVES = {"string", "number", "integer", "boolean"}


@pytest.fixture(scope="module")
def doc() -> dict[str, Any]:
    return openapiv2.document(DEFS, "v1.33.1-sim")


@pytest.fixture(scope="module")
def handler() -> OpenApiV2:
    return OpenApiV2(KubeVersion.parse("1.33"))


def _get(handler: OpenApiV2, **headers: str) -> Any:
    return handler.handle(Request("GET", "/openapi/v2", {}, headers))


# --- the document ---------------------------------------------------------------------------


def test_the_document_has_every_served_operation_and_the_definitions_they_reach(
    doc: dict[str, Any],
) -> None:
    assert doc["swagger"] == "2.0"
    assert doc["info"] == {"title": "Kubernetes", "version": "v1.33.1-sim"}
    v3_paths = set()
    for group, version in openapi.served_group_versions():
        v3_paths |= set(openapi.document(DEFS, group, version, "x")["paths"])
    assert set(doc["paths"]) == v3_paths
    create = doc["paths"]["/api/v1/namespaces/{namespace}/pods"]["post"]
    assert create["operationId"] == "createCoreV1NamespacedPod"
    assert create["x-kubernetes-action"] == "post"
    assert create["x-kubernetes-group-version-kind"] == {
        "group": "",
        "version": "v1",
        "kind": "Pod",
    }
    assert create["consumes"] == ["*/*"] and create["produces"] == ["application/json"]
    body = create["parameters"][0]
    assert body == {
        "in": "body",
        "name": "body",
        "required": True,
        "schema": {"$ref": "#/definitions/io.k8s.api.core.v1.Pod"},
    }
    field_validation = next(p for p in create["parameters"] if p["name"] == "fieldValidation")
    assert field_validation["in"] == "query" and field_validation["type"] == "string"
    assert "schema" not in field_validation  # Swagger 2.0: the type inline
    patch = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]["patch"]
    assert "application/apply-patch+yaml" in patch["consumes"]
    assert patch["responses"]["200"]["schema"] == {
        "$ref": "#/definitions/io.k8s.api.autoscaling.v1.Scale"
    }
    delete = doc["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["delete"]
    assert "required" not in delete["parameters"][0]  # DeleteOptions may be left out
    watch = doc["paths"]["/api/v1/pods"]["get"]
    assert watch["produces"] == ["application/json", "application/json;stream=watch"]
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert "enum" not in pod["properties"]["kind"]
    assert pod["properties"]["metadata"]["$ref"] == (
        "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    )
    assert pod["properties"]["metadata"]["description"].startswith("Standard object's metadata")
    assert doc["securityDefinitions"]["BearerToken"]["type"] == "apiKey"


def test_int_or_string_and_quantity_are_written_as_kube_openapi_writes_them_in_v2(
    doc: dict[str, Any],
) -> None:
    int_or_string = doc["definitions"]["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]
    assert int_or_string == {"type": "string", "format": "int-or-string"}
    quantity = doc["definitions"]["io.k8s.apimachinery.pkg.api.resource.Quantity"]
    assert quantity == {"type": "string"}


def _schemas(node: Any, path: str) -> Any:
    """Every schema below a definition, with its path."""
    yield path, node
    for name, prop in (node.get("properties") or {}).items():
        yield from _schemas(prop, f"{path}.{name}")
    if isinstance(node.get("items"), dict):
        yield from _schemas(node["items"], f"{path}[]")
    if isinstance(node.get("additionalProperties"), dict):
        yield from _schemas(node["additionalProperties"], f"{path}{{}}")


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_every_definition_is_one_kube_openapis_v2_parser_accepts(minor: int) -> None:
    """kubectl reads the models with kube-openapi `pkg/util/proto` NewOpenAPIData, which refuses
    a `$ref` with a type or properties, or outside #/definitions, a schema of several types, an
    array without exactly one item schema and an unknown primitive type: one refused definition
    fails all of kubectl's v2 validation and explain."""
    doc = openapiv2.document(schema.definitions(minor), f"v1.{minor}.1-sim")
    names = set(doc["definitions"])
    for name, definition in doc["definitions"].items():
        for path, node in _schemas(definition, name):
            if "$ref" in node:
                assert "type" not in node and "properties" not in node, path
                assert node["$ref"].removeprefix("#/definitions/") in names, path
                continue
            kind = node.get("type")
            assert "oneOf" not in node and "allOf" not in node, path
            if kind is None:
                continue
            assert isinstance(kind, str), path
            if kind == "array":
                assert isinstance(node.get("items"), dict), path
            elif kind != "object":
                assert kind in _PRIMITIVES, path


# --- the protobuf encoding ---------------------------------------------------------------


@pytest.mark.parametrize("minor", SUPPORTED_MINORS)
def test_the_protobuf_reads_back_as_the_json_document(minor: int) -> None:
    doc = openapiv2.document(schema.definitions(minor), f"v1.{minor}.1-sim")
    assert decode_document(gnostic.encode_document(doc)) == proto3_view(doc)


def test_the_protobuf_fields_are_gnostics(doc: dict[str, Any]) -> None:
    """A hand walk of the first fields: Document{swagger 1, info 2, paths 8, definitions 9,
    securityDefinitions 13}, in field-number order as Go marshals them."""
    fields = wire_fields(gnostic.encode_document(doc))
    assert [n for n, _, _ in fields] == [1, 2, 8, 9, 13]
    assert fields[0][2] == b"2.0"
    info = wire_fields(fields[1][2])
    assert info == [(1, 2, b"Kubernetes"), (2, 2, b"v1.33.1-sim")]
    first_path = wire_fields(wire_fields(fields[2][2])[0][2])  # Paths.path[0]: NamedPathItem
    assert first_path[0] == (1, 2, b"/api/v1/configmaps")
    pod = next(
        wire_fields(entry)
        for _, _, entry in wire_fields(fields[3][2])
        if wire_fields(entry)[0][2] == b"io.k8s.api.core.v1.Pod"
    )
    pod_schema = wire_fields(pod[1][2])
    gvk = [value for number, _, value in pod_schema if number == 31]  # vendor_extension
    name, any_value = wire_fields(gvk[0])
    assert name == (1, 2, b"x-kubernetes-group-version-kind")
    (yaml_text,) = wire_fields(any_value[2])
    assert yaml_text[0] == 2  # Any.yaml
    assert yaml.safe_load(yaml_text[2]) == [{"group": "", "kind": "Pod", "version": "v1"}]


_NAMES = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
_JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | _NAMES,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(_NAMES, inner, max_size=4),
    max_leaves=12,
)
_EXTENSIONS = st.dictionaries(st.text(max_size=8).map(lambda s: "x-" + s), _JSON, max_size=2)


def _schema_strategy(refs: list[str]) -> Any:
    leaf = st.fixed_dictionaries(
        {"type": st.sampled_from(sorted(_PRIMITIVES))},
        optional={
            "description": _NAMES,
            "format": _NAMES,
            "enum": st.lists(_JSON, max_size=3),
            "default": _JSON,
            "maxLength": st.integers(-(2**63), 2**63 - 1),
            "minimum": st.floats(allow_nan=False, allow_infinity=False),
            "uniqueItems": st.booleans(),
        },
    )
    ref = st.sampled_from(refs).map(lambda name: {"$ref": "#/definitions/" + name})

    def extend(inner: Any) -> Any:
        obj = st.fixed_dictionaries(
            {"type": st.just("object"), "properties": st.dictionaries(_NAMES, inner, max_size=3)},
            optional={
                "required": st.lists(_NAMES, max_size=2),
                "additionalProperties": st.booleans() | inner,
            },
        )
        array = st.fixed_dictionaries({"type": st.just("array"), "items": inner})
        return obj | array

    base = leaf | ref
    tree = st.recursive(base, extend, max_leaves=8)
    return st.tuples(tree, _EXTENSIONS).map(lambda t: {**t[0], **t[1]})


@given(st.data())
@settings(max_examples=120, deadline=None)
def test_any_schema_document_survives_the_protobuf_trip(data: st.DataObject) -> None:
    names = data.draw(st.lists(_NAMES, min_size=1, max_size=3, unique=True))
    definitions = {name: data.draw(_schema_strategy(names)) for name in names}
    document = {
        "swagger": "2.0",
        "info": {"title": data.draw(_NAMES), "version": "v1"},
        "definitions": definitions,
    }
    assert decode_document(gnostic.encode_document(document)) == proto3_view(document)


@given(_JSON)
@settings(max_examples=300, deadline=None)
@example({"a\n": ["b\n"]})  # a trailing newline once passed the plain-scalar check ("$")
def test_extension_values_are_yaml_that_reads_back_as_the_value(value: Any) -> None:
    assert yaml.safe_load(gnostic.to_yaml(value)) == value


def test_extensions_are_written_as_block_yaml() -> None:
    gvk = [{"group": "", "kind": "Pod", "version": "v1"}]
    assert gnostic.to_yaml(gvk) == '- group: ""\n  kind: Pod\n  version: v1\n'
    assert gnostic.to_yaml("merge,retainKeys") == "merge,retainKeys\n"
    assert gnostic.to_yaml({"a": ["x", "true"]}) == 'a:\n    - x\n    - "true"\n'


def test_a_key_gnostic_refuses_is_an_error_naming_its_path() -> None:
    bad = {"swagger": "2.0", "definitions": {"A": {"type": "object", "oneOf": []}}}
    with pytest.raises(ValueError, match=r"^/definitions/A/oneOf: Schema has no field 'oneOf'"):
        gnostic.encode_document(bad)
    with pytest.raises(ValueError, match="/definitions/A/items: items must be one schema"):
        gnostic.encode_document({"definitions": {"A": {"type": "array", "items": [{}]}}})


# --- the handler ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("accept", "served"),
    [
        ("", JSON),  # no header is */*
        ("*/*", JSON),
        ("application/json", JSON),
        ("application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF),
        ("application/com.github.proto-openapi.spec.v2.v1.0+protobuf", PROTOBUF),
        ("application/*", JSON),
        ("text/html, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF),
        (
            "application/json;q=0.5, application/com.github.proto-openapi.spec.v2@v1.0+protobuf",
            PROTOBUF,
        ),
        # goautoneg's Less puts a concrete type before */* whatever their q: protobuf
        ("*/*;q=0.9, " + PROTOBUF_DEPRECATED + ";q=0.8", PROTOBUF),
        ("text/*;q=0.9, application/json;q=0.5", JSON),
        ("application/json;q=0.5, " + PROTOBUF_DEPRECATED + ";q=0.9", PROTOBUF),
        ("*/*, application/com.github.proto-openapi.spec.v2@v1.0+protobuf", PROTOBUF),
        ("application/JSON", None),  # goautoneg compares case-sensitively
        ("text/html", None),
        ("application/yaml", None),
        ("application/json;q= 0.5, text/plain", JSON),  # " 0.5" is unreadable: q=0, yet served
    ],
)
def test_accept_is_negotiated_as_kube_openapis_handler_does(
    accept: str, served: str | None
) -> None:
    assert negotiate(accept) == served


def test_accept_clauses_sort_as_goautoneg_sorts_them() -> None:
    # an insertion sort with a Less that is no strict order: text/html (q=0.9) ends up before
    # text/* (q=1), as in kube-apiserver
    assert parse_accept("*/*;q=0.5, text/*, text/html;q=0.9, a/b") == [
        ("a", "b"),
        ("text", "html"),
        ("text", "*"),
        ("*", "*"),
    ]
    assert parse_accept("bogus, a/b/c, */*") == [("*", "*")]  # no subtype: dropped


def test_both_formats_share_the_jsons_etag_and_the_protobuf_is_the_json(
    handler: OpenApiV2,
) -> None:
    as_json = _get(handler, accept="application/json")
    as_proto = _get(handler, accept="application/com.github.proto-openapi.spec.v2@v1.0+protobuf")
    assert as_json.status == as_proto.status == 200
    assert as_json.content_type == JSON and as_proto.content_type == PROTOBUF
    assert as_json.headers["Etag"] == as_proto.headers["Etag"]
    assert as_json.headers["Etag"] == f'"{hashlib.sha512(as_json.body).hexdigest().upper()}"'
    assert "Accept" in as_json.headers["Vary"] and "Accept-Encoding" in as_json.headers["Vary"]
    assert decode_document(as_proto.body) == proto3_view(json.loads(as_json.body))


def test_conditional_requests_are_answered_as_net_http_serve_content(handler: OpenApiV2) -> None:
    first = _get(handler)
    etag, modified = first.headers["Etag"], first.headers["Last-Modified"]
    cached = _get(handler, **{"if-none-match": f'"nope", W/{etag}'})
    assert cached.status == 304 and cached.body == b"" and cached.content_type == ""
    assert cached.headers["Etag"] == etag and "Last-Modified" not in cached.headers
    assert _get(handler, **{"if-none-match": "*"}).status == 304
    assert _get(handler, **{"if-none-match": '"other"'}).status == 200
    assert _get(handler, **{"if-modified-since": modified}).status == 304
    assert _get(handler, **{"if-modified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}).status == 200
    assert _get(handler, **{"if-modified-since": "not a date"}).status == 200
    refused = _get(handler, **{"if-match": '"other"'})
    assert refused.status == 412 and refused.body == b""
    assert _get(handler, **{"if-match": etag}).status == 200
    assert _get(handler, **{"if-unmodified-since": "Thu, 01 Jan 1970 00:00:00 GMT"}).status == 412
    # If-None-Match wins over If-Modified-Since
    assert _get(handler, **{"if-none-match": '"x"', "if-modified-since": modified}).status == 200


def test_gzip_when_asked_and_nothing_else(handler: OpenApiV2) -> None:
    plain = _get(handler)
    zipped = _get(handler, **{"accept-encoding": "deflate, gzip"})
    assert "Content-Encoding" not in plain.headers
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert gzip.decompress(zipped.body) == plain.body
    assert "Content-Encoding" not in _get(handler, **{"accept-encoding": "gzip;q=0"}).headers
    head = handler.handle(Request("HEAD", "/openapi/v2", {}, {"accept-encoding": "gzip"}))
    assert head.body == plain.body and "Content-Encoding" not in head.headers  # length of it


def test_nothing_acceptable_is_406_and_writes_are_refused(handler: OpenApiV2) -> None:
    refused = _get(handler, accept="application/yaml")
    assert refused.status == 406 and refused.body == b""
    with pytest.raises(ApiError) as e:
        handler.handle(Request("POST", "/openapi/v2", {}, {}))
    assert e.value.code == 405
