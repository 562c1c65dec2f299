"""Unit tests of app.simulator.apiserver.schema: definitions, lookup, $ref, patch metadata."""

from __future__ import annotations

from typing import Any

import pytest

from app.simulator.apiserver import schema
from app.simulator.apiserver.schema import Definitions, PatchMeta
from app.simulator.apiserver.version import SUPPORTED_MINORS

POD = ("", "v1", "Pod")
DEPLOYMENT = ("apps", "v1", "Deployment")


@pytest.fixture(scope="module")
def defs() -> Definitions:
    return schema.definitions(33)


def test_every_release_the_simulator_serves_has_its_definitions() -> None:
    assert set(SUPPORTED_MINORS) <= set(schema.available_minors())
    for minor in SUPPORTED_MINORS:
        assert schema.definitions(minor).release == f"1.{minor}"


def test_an_uninstalled_release_is_refused_naming_the_installed_ones() -> None:
    with pytest.raises(LookupError, match=r"1\.99.*installed: .*1\.33"):
        schema.definitions(99)


def test_kinds_are_found_by_group_version_kind(defs: Definitions) -> None:
    assert defs.name_for(*POD) == "io.k8s.api.core.v1.Pod"
    assert defs.name_for(*DEPLOYMENT) == "io.k8s.api.apps.v1.Deployment"
    assert defs.name_for("policy", "v1", "Eviction") == "io.k8s.api.policy.v1.Eviction"
    assert defs.name_for("apps", "v1", "Pod") is None
    assert POD in set(defs.gvks())


def test_a_field_path_crosses_refs_lists_and_maps(defs: Definitions) -> None:
    pod = defs.name_for(*POD)
    assert pod is not None
    limits = defs.field(pod, ["spec", "containers", "resources", "limits"])
    assert limits is not None and "additionalProperties" in limits
    cpu = defs.field(pod, ["spec", "containers", "resources", "limits", "cpu"])
    assert cpu == defs.get("io.k8s.apimachinery.pkg.api.resource.Quantity")
    label = defs.field(pod, ["metadata", "labels", "app"])
    assert label is not None and schema.types(label) == ("string",)
    assert defs.field(pod, ["spec", "foo"]) is None
    assert defs.field(pod, ["spec", "containers", "name", "x"]) is None


def test_resolve_keeps_the_referring_description(defs: Definitions) -> None:
    spec = defs.get("io.k8s.api.core.v1.Pod")["properties"]["spec"]
    resolved = defs.resolve(spec)
    assert resolved["description"] == spec["description"]
    assert "containers" in resolved["properties"]


def test_a_ref_cycle_is_an_error_not_a_hang() -> None:
    looping = Definitions("x", {"a": {"$ref": "#/$defs/b"}, "b": {"$ref": "#/$defs/a"}})
    with pytest.raises(ValueError, match="cycle"):
        looping.resolve({"$ref": "#/$defs/a"})
    with pytest.raises(ValueError, match="unsupported"):
        schema.ref_name("#/definitions/a")


@pytest.mark.parametrize(
    ("kind", "path", "expected"),
    [
        (POD, "spec.containers", PatchMeta(("merge",), "name", "map", ("name",))),
        (
            POD,
            "spec.containers.ports",
            PatchMeta(("merge",), "containerPort", "map", ("containerPort", "protocol")),
        ),
        (POD, "spec.containers.env", PatchMeta(("merge",), "name", "map", ("name",))),
        (POD, "spec.containers.args", PatchMeta((), None, "atomic")),
        (POD, "metadata.finalizers", PatchMeta(("merge",), None, "set")),
        (
            DEPLOYMENT,
            "spec.template.spec.volumes",
            PatchMeta(("merge", "retainKeys"), "name", "map", ("name",)),
        ),
        (DEPLOYMENT, "spec.strategy", PatchMeta(("retainKeys",))),
        (DEPLOYMENT, "spec.selector", PatchMeta(map_type="atomic")),
        (POD, "spec.nope.deeper", PatchMeta()),
        (POD, "", PatchMeta()),
    ],
)
def test_patch_metadata_of_a_field(
    defs: Definitions, kind: tuple[str, str, str], path: str, expected: PatchMeta
) -> None:
    name = defs.name_for(*kind)
    assert name is not None
    assert defs.patch_meta(name, path.split(".") if path else []) == expected


@pytest.mark.parametrize("minor", list(SUPPORTED_MINORS))
def test_every_ref_of_every_release_resolves(minor: int) -> None:
    defs = schema.definitions(minor)

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str):  # JSONSchemaProps has a *property* "$ref"
                assert schema.ref_name(node["$ref"]) in defs.defs, node["$ref"]
            for v in node.values():
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)

    walk(dict(defs.defs))
