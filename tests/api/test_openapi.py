"""The OpenAPI document lists exactly the routes the app serves, with the same methods."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient

DOCUMENTED_PREFIXES = ("/api/v1/", "/metrics", "/healthz", "/readyz")
METHODS = {"get", "post", "put", "patch", "delete"}


def served(app: Flask) -> dict[str, set[str]]:
    out: dict[str, set[str]] = {}
    for rule in app.url_map.iter_rules():
        if rule.rule.startswith(DOCUMENTED_PREFIXES):
            path = re.sub(r"<(?:[^:<>]+:)?([^<>]+)>", r"{\1}", rule.rule)
            methods = {m.lower() for m in rule.methods or ()} & METHODS
            out.setdefault(path, set()).update(methods)
    return out


def test_document_matches_the_routes(app: Flask, anon: FlaskClient) -> None:
    doc = anon.get("/api/v1/openapi.json").get_json()
    assert doc["openapi"].startswith("3.")
    documented = {path: set(ops) & METHODS for path, ops in doc["paths"].items()}
    assert documented == served(app)


def test_path_parameters_match_the_template(anon: FlaskClient) -> None:
    doc = anon.get("/api/v1/openapi.json").get_json()
    for path, item in doc["paths"].items():
        names = set(re.findall(r"{([^}]+)}", path))
        declared = {p["name"] for p in item.get("parameters", []) if p["in"] == "path"}
        assert declared == names, path


def test_every_operation_has_a_unique_id_and_an_error_schema(anon: FlaskClient) -> None:
    doc = anon.get("/api/v1/openapi.json").get_json()
    ids = [
        op["operationId"]
        for item in doc["paths"].values()
        for m, op in item.items()
        if m in METHODS
    ]
    assert len(ids) == len(set(ids))
    assert set(doc["components"]["schemas"]["Error"]["required"]) == {"error", "message"}
