"""Unit tests of server-side field validation (app.simulator.apiserver.fieldvalidation)."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.simulator.apiserver import fieldvalidation as fv
from app.simulator.apiserver import schema
from app.simulator.apiserver.errors import ApiError
from app.simulator.apiserver.gofmt import go_format

DEFS = schema.definitions(33)
POD = "io.k8s.api.core.v1.Pod"


def test_unknown_and_duplicate_fields_are_named_by_path_in_document_order() -> None:
    body = (
        b'{"apiVersion":"v1","kind":"Pod",'
        b'"metadata":{"name":"a","name":"b","labels":{"x":"1","x":"2"}},'
        b'"spec":{"foo":{"bar":1,"bar":2},"containers":[{"name":"c","image":"i","bogus":1,'
        b'"resources":{"limits":{"cpu":"1"}}}]}}'
    )
    pruned, errors = fv.check(DEFS, POD, fv.loads(body))
    assert errors == [
        'duplicate field "metadata.name"',
        'duplicate field "metadata.labels.x"',
        'unknown field "spec.foo"',  # its value is not read: no duplicate "spec.foo.bar"
        'unknown field "spec.containers[0].bogus"',
    ]
    assert pruned == {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "b", "labels": {"x": "2"}},
        "spec": {
            "containers": [{"name": "c", "image": "i", "resources": {"limits": {"cpu": "1"}}}]
        },
    }


def test_free_form_objects_keep_what_they_hold() -> None:
    obj = {
        "metadata": {"name": "e", "managedFields": [{"fieldsV1": {"f:spec": {"any": {}}}}]},
        "involvedObject": {"kind": "Pod"},
    }
    pruned, errors = fv.check(DEFS, "io.k8s.api.core.v1.Event", obj)
    assert errors == []
    assert pruned == obj


def test_a_patch_is_checked_for_duplicates_only() -> None:
    patch = fv.loads(b'{"spec":{"replicas":1,"replicas":2,"unknown":1},"l":[{"a":1,"a":2}]}')
    assert fv.duplicates(patch) == ['duplicate field "spec.replicas"', 'duplicate field "l[0].a"']


@pytest.mark.parametrize(
    ("given_", "expected"), [({}, "Warn"), ({"fieldValidation": "Strict"}, "Strict")]
)
def test_the_directive_defaults_to_warn(given_: dict[str, str], expected: str) -> None:
    assert fv.directive(given_, "CreateOptions") == expected


def test_an_unknown_directive_is_refused_naming_the_parameter() -> None:
    with pytest.raises(ApiError) as e:
        fv.directive({"fieldValidation": "strict"}, "PatchOptions")
    assert e.value.code == 422
    assert e.value.message == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "strict": '
        'supported values: "", "Ignore", "Strict", "Warn"'
    )


def test_errors_read_as_kube_apiserver_writes_them() -> None:
    err = fv.refuse_body("Deployment", "apps/v1", ['unknown field "spec.foo"'])
    assert err.code == 400
    assert err.message == (
        'Deployment in version "v1" cannot be handled as a Deployment: '
        'strict decoding error: unknown field "spec.foo"'
    )
    patch = fv.refuse_patch("map[spec:map[foo:1]]", ['unknown field "spec.foo"'])
    assert patch.code == 422
    assert patch.message.startswith(' "" is invalid: patch: Invalid value: "map[spec:map[foo:1]]"')
    assert go_format({"b": [1, None, True], "a": "x"}) == "map[a:x b:[1 <nil> true]]"


def test_the_warning_header_quotes_each_violation() -> None:
    header = fv.warning_header(['unknown field "spec.foo"', 'duplicate field "a\\b"'])
    assert header == {
        "Warning": '299 - "unknown field \\"spec.foo\\"", 299 - "duplicate field \\"a\\\\b\\""'
    }
    assert fv.warning_header([]) == {}


@given(st.lists(st.text(min_size=1, max_size=5), min_size=1, max_size=6))
def test_the_last_of_duplicate_labels_wins_and_each_repeat_is_reported(keys: list[str]) -> None:
    members = ",".join(f"{json.dumps(k)}:{json.dumps(str(i))}" for i, k in enumerate(keys))
    body = '{"metadata":{"labels":{' + members + "}}}"
    pruned, errors = fv.check(DEFS, POD, fv.loads(body))
    assert pruned["metadata"]["labels"] == {k: str(i) for i, k in enumerate(keys)}
    repeated = {k for i, k in enumerate(keys) if k in keys[:i]}
    assert len(errors) == len(repeated)
    assert all(e.startswith('duplicate field "metadata.labels.') for e in errors)
