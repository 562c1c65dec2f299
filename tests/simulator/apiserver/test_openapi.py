"""Unit tests of the OpenAPI v3 documents (app.simulator.apiserver.openapi)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.simulator.apiserver import openapi, schema
from app.simulator.apiserver.resources import RESOURCES

DEFS = schema.definitions(33)


@pytest.fixture(scope="module")
def core() -> dict[str, Any]:
    return openapi.document(DEFS, "", "v1", "v1.33.1-sim")


def _refs(node: Any) -> list[str]:
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    if isinstance(node, dict):
        own = [node["$ref"]] if isinstance(node.get("$ref"), str) else []
        return own + [r for k, v in node.items() if k != "$ref" for r in _refs(v)]
    return []


def test_every_served_group_version_has_a_document_whose_refs_resolve() -> None:
    served = {(r.group, r.version) for r in RESOURCES if not r.computed}
    assert set(openapi.served_group_versions()) == served
    for group, version in served:
        doc = openapi.document(DEFS, group, version, "v1.33.1-sim")
        assert doc["openapi"] == "3.0.0"
        names = set(doc["components"]["schemas"])
        for ref in _refs(doc):
            assert ref.startswith("#/components/schemas/"), ref
            assert ref.removeprefix("#/components/schemas/") in names, (group, version, ref)


def test_patch_operations_carry_the_kind_and_field_validation(core: dict[str, Any]) -> None:
    """What kubectl's QueryParamVerifierV3 looks for before validating on the server."""
    patch = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}"]["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {"group": "", "version": "v1", "kind": "Pod"}
    assert patch["x-kubernetes-action"] == "patch"
    assert patch["operationId"] == "patchCoreV1NamespacedPod"
    assert "fieldValidation" in {p["name"] for p in patch["parameters"]}
    evict = core["paths"]["/api/v1/namespaces/{namespace}/pods/{name}/eviction"]["post"]
    assert evict["x-kubernetes-group-version-kind"]["kind"] == "Eviction"
    assert evict["operationId"] == "createCoreV1NamespacedPodEviction"
    nodes = core["paths"]["/api/v1/nodes/{name}"]["patch"]
    assert nodes["operationId"] == "patchCoreV1Node"
    everywhere = core["paths"]["/api/v1/pods"]["get"]
    assert everywhere["operationId"] == "listCoreV1PodForAllNamespaces"


def test_only_served_operations_are_advertised(core: dict[str, Any]) -> None:
    # No deletecollection (the simulator answers 405), no protobuf or YAML anywhere.
    assert "delete" not in core["paths"]["/api/v1/namespaces/{namespace}/pods"]
    text = json.dumps(core)
    assert "protobuf" not in text and "application/yaml" not in text
    apps = openapi.document(DEFS, "apps", "v1", "x")
    scale = apps["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
    assert scale["put"]["x-kubernetes-group-version-kind"]["group"] == "autoscaling"


def test_schemas_are_openapi_not_json_schema(core: dict[str, Any]) -> None:
    schemas = core["components"]["schemas"]
    pod = schemas["io.k8s.api.core.v1.Pod"]
    assert pod["type"] == "object"
    assert "enum" not in pod["properties"]["apiVersion"]  # added by the JSON Schema conversion
    spec = pod["properties"]["spec"]
    assert spec["allOf"] == [{"$ref": "#/components/schemas/io.k8s.api.core.v1.PodSpec"}]
    assert spec["description"].startswith("Specification of the desired behavior")
    containers = schemas["io.k8s.api.core.v1.PodSpec"]["properties"]["containers"]
    assert containers["type"] == "array"
    assert containers["x-kubernetes-patch-merge-key"] == "name"
    assert schemas["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]["format"] == "int-or-string"
    assert '"null"' not in json.dumps(schemas)


def test_discovery_names_each_document_with_its_hash() -> None:
    doc = openapi.discovery({"api/v1": "AB12", "apis/apps/v1": "CD34"})
    assert doc == {
        "paths": {
            "api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=AB12"},
            "apis/apps/v1": {"serverRelativeURL": "/openapi/v3/apis/apps/v1?hash=CD34"},
        }
    }
