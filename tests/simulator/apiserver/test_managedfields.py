"""Field ownership and server-side apply, the pure part (apiserver/fieldpaths.py and
managedfields.py): FieldsV1, who owns what after Update and Apply, conflicts and their message,
force, pruning, and apply's properties (idempotent; applying C1 then C2 is applying C2)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from app.simulator.apiserver import fieldpaths, kindmeta, managedfields
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.managedfields import Write

DEPLOYMENT = kindmeta.lookup("apps/v1", "Deployment", 33)


def write(manager: str, now: str = "2025-01-01T00:00:00Z", **kw: Any) -> Write:
    return Write(manager, "apps/v1", now, DEPLOYMENT, **kw)


def deployment(replicas: int = 2, image: str = "nginx:1.27", **extra: Any) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": image, **extra}
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default", "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [container]},
            },
        },
    }


def owners(obj: dict[str, Any]) -> dict[tuple[str, str], set[str]]:
    return {
        (e["manager"], e["operation"]): {
            fieldpaths.path_string(p) for p in fieldpaths.decode(e["fieldsV1"])
        }
        for e in obj["metadata"].get("managedFields", [])
    }


def test_fields_v1_is_kubes_encoding() -> None:
    fields = fieldpaths.to_field_set(deployment(ports=[{"containerPort": 80}]), DEPLOYMENT)
    encoded = fieldpaths.encode(fields)
    container = encoded["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
    assert container["."] == {} and container["f:image"] == {}
    assert container["f:ports"] == {
        'k:{"containerPort":80,"protocol":"TCP"}': {".": {}, "f:containerPort": {}}
    }
    assert encoded["f:spec"]["f:selector"] == {}  # LabelSelector is an atomic map
    assert fieldpaths.decode(encoded) == fields
    paths = {fieldpaths.path_string(p) for p in fields}
    assert '.spec.template.spec.containers[name="web"].image' in paths
    assert '.spec.template.spec.containers[name="web"].ports[containerPort=80,protocol="TCP"]' in (
        paths
    )


def test_an_update_moves_ownership_of_what_it_changed() -> None:
    created = deployment()
    managedfields.record_update(None, created, write("kubectl-create"))
    assert ".spec.replicas" in owners(created)[("kubectl-create", "Update")]
    scaled = json.loads(json.dumps(created))
    scaled["spec"]["replicas"] = 5
    managedfields.record_update(created, scaled, write("kubectl-scale", "2025-01-02T00:00:00Z"))
    got = owners(scaled)
    assert got[("kubectl-scale", "Update")] == {".spec.replicas"}
    assert ".spec.replicas" not in got[("kubectl-create", "Update")]
    entry = next(e for e in scaled["metadata"]["managedFields"] if e["manager"] == "kubectl-scale")
    assert entry["time"] == "2025-01-02T00:00:00Z" and entry["apiVersion"] == "apps/v1"


def test_an_apply_that_changes_anothers_field_is_a_409_in_kubes_words() -> None:
    live = managedfields.apply(None, deployment(), write("alice"), force=False)
    with pytest.raises(ApiError) as e:
        managedfields.apply(live, deployment(replicas=3), write("bob"), force=False)
    assert e.value.code == 409 and e.value.reason == "Conflict"
    assert e.value.message == 'Apply failed with 1 conflict: conflict with "alice": .spec.replicas'
    assert e.value.details == {
        "causes": [
            {
                "reason": "FieldManagerConflict",
                "message": 'conflict with "alice"',
                "field": ".spec.replicas",
            }
        ]
    }
    with pytest.raises(ApiError) as e:
        managedfields.apply(live, deployment(3, "nginx:1.28"), write("bob"), force=False)
    assert e.value.message == (
        'Apply failed with 2 conflicts: conflicts with "alice":\n'
        "- .spec.replicas\n"
        '- .spec.template.spec.containers[name="web"].image'
    )


def test_force_takes_fields_over_and_equal_values_are_shared() -> None:
    live = managedfields.apply(None, deployment(), write("alice"), force=False)
    shared = managedfields.apply(live, deployment(), write("bob"), force=False)
    got = owners(shared)
    assert ".spec.replicas" in got[("alice", "Apply")] & got[("bob", "Apply")]
    forced = managedfields.apply(live, deployment(replicas=3), write("bob"), force=True)
    got = owners(forced)
    assert forced["spec"]["replicas"] == 3
    assert ".spec.replicas" in got[("bob", "Apply")] - got[("alice", "Apply")]


def test_an_update_managers_field_conflicts_with_using_its_version() -> None:
    live = deployment()
    managedfields.record_update(None, live, write("kubectl-create"))
    with pytest.raises(ApiError) as e:
        managedfields.apply(live, deployment(replicas=4), write("ci"), force=False)
    assert 'conflict with "kubectl-create" using apps/v1: .spec.replicas' in e.value.message


def test_what_an_applier_stops_applying_is_pruned_unless_someone_else_owns_it() -> None:
    first = deployment(env=[{"name": "A", "value": "1"}])
    first["metadata"]["labels"]["extra"] = "x"
    live = managedfields.apply(None, first, write("alice"), force=False)
    again = managedfields.apply(live, deployment(), write("alice"), force=False)
    assert "extra" not in again["metadata"]["labels"]
    assert "env" not in again["spec"]["template"]["spec"]["containers"][0]
    # The same drop, but bob applied the label too: it stays, now bob's alone.
    both = managedfields.apply(live, first, write("bob"), force=False)
    kept = managedfields.apply(both, deployment(), write("alice"), force=False)
    assert kept["metadata"]["labels"]["extra"] == "x"
    assert ".metadata.labels.extra" not in owners(kept)[("alice", "Apply")]


def test_an_object_nobody_managed_is_owned_before_first_apply() -> None:
    with pytest.raises(ApiError) as e:
        managedfields.apply(deployment(), deployment(replicas=7), write("alice"), force=False)
    assert 'conflict with "before-first-apply" using apps/v1' in e.value.message


def test_kubectl_takes_over_what_its_last_applied_annotation_set() -> None:
    """lastappliedmanager.go: a value client-side apply set is no conflict for kubectl."""
    old = deployment()
    old["metadata"]["annotations"] = {managedfields.LAST_APPLIED: json.dumps(deployment())}
    managedfields.record_update(None, old, write("kubectl-client-side-apply"))
    new = managedfields.apply(old, deployment(replicas=3), write("kubectl"), force=False)
    assert new["spec"]["replicas"] == 3
    annotation = json.loads(new["metadata"]["annotations"][managedfields.LAST_APPLIED])
    assert annotation["spec"]["replicas"] == 3  # lastappliedupdater.go keeps it current
    with pytest.raises(ApiError):  # another manager gets no such pass
        managedfields.apply(old, deployment(replicas=3), write("helm"), force=False)


def test_applied_configurations_are_checked() -> None:
    bad = deployment()
    bad["apiVersion"] = "apps/v1beta1"
    with pytest.raises(ApiError) as e:
        managedfields.apply(None, bad, write("a"), force=False)
    assert (e.value.code, e.value.message) == (
        400,
        "Incorrect version specified in apply patch. "
        "Specified patch version: apps/v1beta1, expected: apps/v1",
    )
    bad = deployment()
    bad["metadata"]["managedFields"] = []
    with pytest.raises(ApiError) as e:
        managedfields.apply(None, bad, write("a"), force=False)
    assert (e.value.code, e.value.message) == (400, "metadata.managedFields must be nil")


def test_status_is_not_the_main_resources_and_subresources_own_only_it() -> None:
    live = managedfields.apply(None, deployment(), write("alice"), force=False)
    withstatus = json.loads(json.dumps(live))
    withstatus["status"] = {"replicas": 2}
    managedfields.record_update(live, withstatus, write("kcm", subresource="status"))
    entry = next(e for e in withstatus["metadata"]["managedFields"] if e["manager"] == "kcm")
    assert entry["subresource"] == "status"
    assert {fieldpaths.path_string(p) for p in fieldpaths.decode(entry["fieldsV1"])} == {
        ".status.replicas"
    }


# --- properties --------------------------------------------------------------------------------

names = st.sampled_from(["a", "b", "c"])
values = st.one_of(st.integers(0, 3), st.sampled_from(["x", "y"]))
containers = st.lists(
    st.fixed_dictionaries(
        {"name": names},
        optional={
            "image": values,
            "env": st.lists(
                st.fixed_dictionaries({"name": names, "value": values}),
                max_size=3,
                unique_by=lambda e: e["name"],
            ),
            "args": st.lists(values, max_size=2),
        },
    ),
    min_size=1,
    max_size=3,
    unique_by=lambda c: str(c["name"]),
)
configs = st.builds(
    lambda labels, replicas, cs, finalizers: {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "labels": labels, "finalizers": finalizers},
        "spec": {"replicas": replicas, "template": {"spec": {"containers": cs}}},
    },
    st.dictionaries(names, st.sampled_from(["x", "y"]), max_size=3),
    st.integers(0, 5),
    containers,
    st.lists(names, max_size=3, unique=True),
)


def _canonical(obj: dict[str, Any]) -> Any:
    """The object without managedFields, keyed lists and sets in a fixed order."""
    body = json.loads(json.dumps(obj))
    body["metadata"].pop("managedFields", None)
    body["metadata"]["finalizers"] = sorted(body["metadata"].get("finalizers") or [])
    cs = body["spec"]["template"]["spec"]["containers"]
    for c in cs:
        c.get("env", []).sort(key=lambda e: e["name"])
    cs.sort(key=lambda c: c["name"])
    return _without_empty(body)


def _without_empty(v: Any) -> Any:
    if isinstance(v, dict):
        return {k: _without_empty(x) for k, x in v.items() if x not in ({}, [])}
    if isinstance(v, list):
        return [_without_empty(x) for x in v]
    return v


@settings(max_examples=150, deadline=None)
@given(configs)
def test_applying_the_same_configuration_again_changes_nothing(config: dict[str, Any]) -> None:
    once = managedfields.apply(None, config, write("alice"), force=False)
    twice = managedfields.apply(once, config, write("alice", "2030-01-01T00:00:00Z"), force=False)
    assert twice == once


@settings(max_examples=150, deadline=None)
@given(configs, configs)
def test_a_sole_applier_applying_c1_then_c2_gets_what_applying_c2_gives(
    c1: dict[str, Any], c2: dict[str, Any]
) -> None:
    after_both = managedfields.apply(
        managedfields.apply(None, c1, write("alice"), force=False), c2, write("alice"), force=False
    )
    direct = managedfields.apply(None, c2, write("alice"), force=False)
    assert _canonical(after_both) == _canonical(direct)
    assert owners(after_both) == owners(direct)
