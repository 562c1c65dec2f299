"""The OpenAPI v2 (Swagger 2.0) document of the served API, in the shape kube-apiserver serves
at `/openapi/v2`.

kubectl still reads it where OpenAPI v3 does not reach: client-side validation of a `kind: List`
(kubectl `pkg/validation/schema.go` paramVerifyingSchema: cli-runtime's
`query_param_verifier_v3.go` answers "fieldValidation unsupported" for v1 List, so
`pkg/util/openapi/validation` validates every item against the v2 models) and
`kubectl explain --output=plaintext-openapiv2`.

One document for every group version, as kube-apiserver's: `swagger: "2.0"`, `info`, `paths`
(each URL and operation of apiserver/openapi.py's v3 documents, written the Swagger 2.0 way:
parameters with their type inline, a `body` parameter instead of `requestBody`, `consumes` and
`produces` instead of `content`, a response's `schema`), `definitions` (every definition an
operation reaches) and `securityDefinitions`. A definition is the release's schema
(apiserver/schema.py) turned back from JSON Schema into Swagger 2.0 as kube-openapi's v2 builder
writes the same types: `#/$defs/X` -> `#/definitions/X` (a `$ref` keeps its `description` beside
it: Swagger 2.0 has no `allOf` wrapping there), `[T, "null"]` -> `T`, the `enum` the JSON Schema
conversion put on `apiVersion`/`kind` dropped, and the two types v3 writes as `oneOf` written as
v2 does (kube-openapi `OpenAPISchemaType`/`OpenAPISchemaFormat`): IntOrString
`{type: string, format: int-or-string}`, Quantity `{type: string}`. Pure: documents are dicts.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.simulator.apiserver import openapi
from app.simulator.apiserver.schema import Definitions

_V3_REF = "#/components/schemas/"
_DEFINITIONS = "#/definitions/"
_INT_OR_STRING = "io.k8s.apimachinery.pkg.util.intstr.IntOrString"
_QUANTITY = "io.k8s.apimachinery.pkg.api.resource.Quantity"
_METHODS = ("get", "put", "post", "delete", "options", "head", "patch")


def document(defs: Definitions, git_version: str) -> dict[str, Any]:
    """The Swagger 2.0 document of every served group version."""
    paths: dict[str, Any] = {}
    names: set[str] = set()
    for group, version in openapi.served_group_versions():
        v3 = openapi.document(defs, group, version, git_version)
        for path, item in v3["paths"].items():
            paths[path] = path_item(item)
        names.update(v3["components"]["schemas"])
    return {
        "swagger": "2.0",
        "info": {"title": "Kubernetes", "version": git_version},
        "paths": dict(sorted(paths.items())),
        "definitions": {name: to_swagger(defs, name) for name in sorted(names)},
        "securityDefinitions": {
            "BearerToken": {
                "description": "Bearer Token authentication",
                "in": "header",
                "name": "authorization",
                "type": "apiKey",
            }
        },
    }


def to_swagger(defs: Definitions, name: str) -> dict[str, Any]:
    """Definition `name` as a Swagger 2.0 definition."""
    schema = defs.get(name)
    if name in (_INT_OR_STRING, _QUANTITY):
        out: dict[str, Any] = {k: v for k, v in schema.items() if k != "oneOf"}
        out["type"] = "string"
        if name == _INT_OR_STRING:
            out["format"] = "int-or-string"
        return dict(sorted(out.items()))
    return openapi.convert_definition(schema, _inline_ref, ordered=True)


def _inline_ref(rest: dict[str, Any], name: str) -> dict[str, Any]:
    """A reference as v2 writes it: `$ref` beside the node's other keys (its description);
    `$` sorts before every other key, so the sorted order holds."""
    return {"$ref": _DEFINITIONS + name, **rest}


# --- operations: the v3 documents' paths, written as Swagger 2.0 ------------------------------


def path_item(item: Mapping[str, Any]) -> dict[str, Any]:
    """A v3 path item (apiserver/openapi.py) as a Swagger 2.0 path item."""
    out: dict[str, Any] = {}
    for key, value in item.items():
        if key == "parameters":
            out[key] = [_parameter(p) for p in value]
        elif key in _METHODS:
            out[key] = _operation(value, key)
        else:
            out[key] = value
    return out


def _operation(op: Mapping[str, Any], method: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    params = [_parameter(p) for p in op.get("parameters", ())]
    body = op.get("requestBody")
    if body is not None:
        content = body["content"]
        out["consumes"] = list(content)
        schema = next(iter(content.values()))["schema"]
        body_param: dict[str, Any] = {"in": "body", "name": "body", "schema": _ref(schema)}
        if method != "delete":  # DeleteOptions may be left out
            body_param["required"] = True
        params.insert(0, body_param)
    else:
        out["consumes"] = ["*/*"]
    out["description"] = op["description"]
    out["operationId"] = op["operationId"]
    if params:
        out["parameters"] = params
    produces: list[str] = []
    responses: dict[str, Any] = {}
    for code, answer in op["responses"].items():
        response: dict[str, Any] = {"description": answer["description"]}
        for media, described in answer.get("content", {}).items():
            if media not in produces:
                produces.append(media)
            response["schema"] = _ref(described["schema"])
        responses[code] = response
    out["produces"] = produces
    out["responses"] = responses
    out["tags"] = list(op["tags"])
    for key, value in op.items():
        if key.startswith("x-"):
            out[key] = value
    return out


def _parameter(param: Mapping[str, Any]) -> dict[str, Any]:
    """A v3 query or path parameter: its schema's type written inline."""
    out = {k: v for k, v in param.items() if k != "schema"}
    out.update(param.get("schema", {}))
    return dict(sorted(out.items()))


def _ref(schema: Mapping[str, Any]) -> dict[str, Any]:
    ref = schema.get("$ref")
    if isinstance(ref, str) and ref.startswith(_V3_REF):
        return {"$ref": _DEFINITIONS + ref[len(_V3_REF) :]}
    return dict(schema)
