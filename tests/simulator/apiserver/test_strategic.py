"""Strategic merge patch, the pure algorithm (app/simulator/apiserver/strategic.py): the cases
of apimachinery's strategicpatch semantics, and the property that a two-way patch computed as
kubectl computes it, applied to the original, gives back the modified object."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.simulator.apiserver import schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.schema import PatchMeta
from app.simulator.apiserver.strategic import apply
from tests.support.strategic_diff import two_way

# A small schema with every strategy: merge lists of maps (by name, by an int key), a merge
# list of scalars, atomic lists, a retainKeys map, a merge+retainKeys list, a replace map.
META = {
    ("containers",): PatchMeta(("merge",), "name"),
    ("containers", "env"): PatchMeta(("merge",), "name"),
    ("containers", "ports"): PatchMeta(("merge",), "containerPort"),
    ("finalizers",): PatchMeta(("merge",)),
    ("strategy",): PatchMeta(("retainKeys",)),
    ("volumes",): PatchMeta(("merge", "retainKeys"), "name"),
    ("template",): PatchMeta(("replace",)),
}


def lookup(path: tuple[str, ...]) -> PatchMeta:
    return META.get(path, PatchMeta())


def test_maps_merge_and_null_deletes() -> None:
    out = apply({"a": {"x": 1, "y": 2}, "b": 1}, {"a": {"y": None, "z": 3}, "c": None}, lookup)
    assert out == {"a": {"x": 1, "z": 3}, "b": 1}


def test_merge_list_merges_by_key_and_new_elements_come_first() -> None:
    """Without $setElementOrder, patch.go puts patched elements before the server's others."""
    original = {"containers": [{"name": "a", "image": "1"}, {"name": "b", "image": "1"}]}
    out = apply(original, {"containers": [{"name": "c", "image": "2"}]}, lookup)
    assert [c["name"] for c in out["containers"]] == ["c", "a", "b"]
    out = apply(original, {"containers": [{"name": "b", "image": "2"}]}, lookup)
    assert out["containers"] == [{"name": "a", "image": "1"}, {"name": "b", "image": "2"}]


def test_set_element_order_orders_the_merged_list() -> None:
    original = {"containers": [{"name": "a"}, {"name": "b"}]}
    patch = {
        "$setElementOrder/containers": [{"name": "a"}, {"name": "c"}, {"name": "b"}],
        "containers": [{"name": "c", "image": "x"}],
    }
    assert [c["name"] for c in apply(original, patch, lookup)["containers"]] == ["a", "c", "b"]


def test_patch_delete_and_replace_in_lists_and_maps() -> None:
    original = {"containers": [{"name": "a"}, {"name": "b"}], "m": {"x": 1}}
    out = apply(original, {"containers": [{"name": "a", "$patch": "delete"}]}, lookup)
    assert out["containers"] == [{"name": "b"}]
    out = apply(original, {"containers": [{"name": "z"}, {"$patch": "replace"}]}, lookup)
    assert out["containers"] == [{"name": "z"}]
    assert apply(original, {"m": {"$patch": "replace", "y": 2}}, lookup)["m"] == {"y": 2}
    assert apply(original, {"m": {"$patch": "delete"}}, lookup)["m"] == {}


def test_scalar_merge_lists_union_and_delete_from_primitive_list() -> None:
    original = {"finalizers": ["a", "b"]}
    assert apply(original, {"finalizers": ["c", "a"]}, lookup)["finalizers"] == ["c", "a", "b"]
    out = apply(original, {"$deleteFromPrimitiveList/finalizers": ["a"]}, lookup)
    assert out["finalizers"] == ["b"]


def test_lists_without_merge_strategy_are_replaced() -> None:
    out = apply({"args": ["a", "b"]}, {"args": ["c"]}, lookup)
    assert out == {"args": ["c"]}
    assert apply({"template": {"a": 1}}, {"template": {"b": 2}}, lookup) == {"template": {"b": 2}}


def test_retain_keys_clears_other_keys_and_must_cover_the_patch() -> None:
    original = {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}}}
    patch = {"strategy": {"$retainKeys": ["type"], "type": "Recreate"}}
    assert apply(original, patch, lookup) == {"strategy": {"type": "Recreate"}}
    with pytest.raises(ApiError) as e:
        apply(original, {"strategy": {"$retainKeys": [], "type": "Recreate"}}, lookup)
    assert (e.value.code, e.value.message) == (400, "invalid patch format of retainKeys")


def test_errors_answer_as_kube_apiserver() -> None:
    with pytest.raises(ApiError) as e:
        apply({"containers": [{"name": "a"}]}, {"containers": [{"image": "x"}]}, lookup)
    assert e.value.code == 500
    assert e.value.message == "map: map[image:x] does not contain declared merge key: name"
    with pytest.raises(ApiError) as e:
        apply({"finalizers": [["a"]]}, {"finalizers": [["b"]]}, lookup)
    assert (e.value.code, e.value.message) == (422, "lists of lists are not supported")
    with pytest.raises(ApiError) as e:
        apply({"m": {}}, {"m": {"$patch": "bogus"}}, lookup)
    assert e.value.code == 500 and e.value.message.startswith("unknown patch type: bogus")
    with pytest.raises(ApiError) as e:
        apply({}, {"$deleteFromPrimitiveListfinalizers": ["a"]}, lookup)
    assert (e.value.code, e.value.message) == (400, "invalid patch format of primitive list")


def test_real_schema_merges_a_deployment_as_kubectl_set_image_patches_it() -> None:
    """The patch `kubectl set image deploy/web web=nginx:1.28` sends, on the 1.33 schema."""
    defs = schema.definitions(33)
    root = defs.name_for("apps", "v1", "Deployment")
    assert root is not None

    def deployment(path: tuple[str, ...]) -> PatchMeta:
        return defs.patch_meta(root, path)

    web = {"name": "web", "image": "nginx:1.27", "env": [{"name": "A", "value": "1"}]}
    live = {
        "spec": {
            "template": {
                "spec": {
                    "containers": [
                        web,
                        {"name": "side", "image": "busybox"},
                    ],
                    "tolerations": [{"key": "a"}],
                }
            }
        }
    }
    patch = {
        "spec": {
            "template": {
                "spec": {
                    "$setElementOrder/containers": [{"name": "web"}, {"name": "side"}],
                    "containers": [{"name": "web", "image": "nginx:1.28"}],
                    "tolerations": [{"key": "b"}],
                }
            }
        }
    }
    pod = apply(live, patch, deployment)["spec"]["template"]["spec"]
    assert pod["containers"][0] == {
        "name": "web",
        "image": "nginx:1.28",
        "env": [{"name": "A", "value": "1"}],
    }
    assert [c["name"] for c in pod["containers"]] == ["web", "side"]
    assert pod["tolerations"] == [{"key": "b"}]  # listType=atomic: replaced
    assert "$setElementOrder/containers" not in pod


# --- property: apply(original, two_way(original, modified)) == modified -------------------------

names = st.sampled_from(["a", "b", "c", "d", "e"])
scalars = st.one_of(st.integers(-3, 3), st.sampled_from(["x", "y", ""]), st.booleans())


def _unique_by(key: str, elements: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[Any]:
    return st.lists(elements, max_size=4, unique_by=lambda e: e[key])


env = st.fixed_dictionaries({"name": names}, optional={"value": scalars})
port = st.fixed_dictionaries(
    {"containerPort": st.integers(1, 5)}, optional={"protocol": st.sampled_from(["TCP", "UDP"])}
)
container = st.fixed_dictionaries(
    {"name": names},
    optional={
        "image": scalars,
        "env": _unique_by("name", env),
        "ports": _unique_by("containerPort", port),
        "args": st.lists(scalars, max_size=3),
        "resources": st.dictionaries(names, scalars, max_size=2),
    },
)
volume = st.one_of(
    st.fixed_dictionaries({"name": names, "emptyDir": st.dictionaries(names, scalars)}),
    st.fixed_dictionaries({"name": names, "configMap": st.fixed_dictionaries({"name": names})}),
)
objects = st.fixed_dictionaries(
    {},
    optional={
        "labels": st.dictionaries(names, scalars, max_size=3),
        "containers": _unique_by("name", container),
        "finalizers": st.lists(names, max_size=4, unique=True),
        "strategy": st.one_of(
            st.fixed_dictionaries({"type": st.just("Recreate")}),
            st.fixed_dictionaries(
                {"type": st.just("RollingUpdate"), "rollingUpdate": st.dictionaries(names, scalars)}
            ),
        ),
        "volumes": _unique_by("name", volume),
        "template": st.dictionaries(names, scalars, max_size=2),
        "tolerations": st.lists(st.dictionaries(names, scalars, max_size=2), max_size=2),
        "replicas": scalars,
    },
)


@settings(max_examples=400, deadline=None)
@given(objects, objects)
def test_a_two_way_patch_applied_to_the_original_gives_the_modified_object(
    original: dict[str, Any], modified: dict[str, Any]
) -> None:
    patch = two_way(original, modified, lookup)
    assert apply(original, patch, lookup) == modified


@settings(max_examples=200, deadline=None)
@given(objects, objects)
def test_applying_leaves_its_arguments_unchanged(
    original: dict[str, Any], modified: dict[str, Any]
) -> None:
    patch = two_way(original, modified, lookup)
    before, sent = repr(original), repr(patch)
    apply(original, patch, lookup)
    assert (repr(original), repr(patch)) == (before, sent)
