"""422 Invalid answers as kube-apiserver writes them (apimachinery pkg/api/errors/errors.go
NewInvalid, util/validation/field/errors.go Error() and ErrorBody()): the Status message names
each field once per distinct error, each cause carries the field apart from its message, and the
real kubectl, which prints `<field>: <message>` per cause, shows every field once."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.apiserver.errors import FieldError, invalid
from tests.support.json_bodies import plain
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest

NS = "demo"
REPLICAS_BODY = "Invalid value: -1: must be greater than or equal to 0"
LABELS_BODY = (
    'Invalid value: map[string]string{"app":"other", "tier":"web"}: '
    "`selector` does not match template `labels`"
)


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def broken_deployment(name: str) -> dict[str, Any]:
    """Negative replicas and template labels its selector does not match: two field errors."""
    d = deployment(name, replicas=-1)
    d["spec"]["template"]["metadata"]["labels"] = {"tier": "web", "app": "other"}
    return d


# (error type, detail, bad value, ErrorBody()) as util/validation/field/errors.go writes them.
BODIES = [
    ("FieldValueRequired", "", "", "Required value"),
    ("FieldValueRequired", "name is required", "", "Required value: name is required"),
    ("FieldValueForbidden", "", "", "Forbidden"),
    ("FieldValueForbidden", "may not change", "x", "Forbidden: may not change"),
    ("FieldValueInvalid", "must be >= 0", -1, "Invalid value: -1: must be >= 0"),
    ("FieldValueInvalid", "no", True, "Invalid value: true: no"),
    ("FieldValueInvalid", "no", None, 'Invalid value: "null": no'),
    ("FieldValueInvalid", "", 'a"b', 'Invalid value: "a\\"b"'),
    ("FieldValueNotSupported", 'supported: "A"', "B", 'Unsupported value: "B": supported: "A"'),
    ("FieldValueDuplicate", "", "app", 'Duplicate value: "app"'),
    ("FieldValueTooLong", "at most 63 bytes", "x" * 70, "Too long: at most 63 bytes"),
    ("FieldValueInvalid", "", {"b": "", "a": "1"}, 'Invalid value: map[string]string{"a":"1", "b":""}'),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(("kind", "detail", "value", "body"), BODIES)
def test_a_field_errors_body_and_message_are_errorbody_and_error(
    kind: str, detail: str, value: Any, body: str
) -> None:
    error = FieldError("spec.f", kind, detail, value)
    assert error.body() == body
    assert error.message() == f"spec.f: {body}"


def test_the_status_lists_each_distinct_error_once_and_every_cause() -> None:
    same = FieldError("spec.replicas", "FieldValueInvalid", "must be >= 0", -1)
    other = FieldError("spec.selector", "FieldValueRequired", "")
    status = invalid("Deployment", "apps", "web", [same, same, other]).status()
    assert status["message"] == (
        'Deployment.apps "web" is invalid: '
        "[spec.replicas: Invalid value: -1: must be >= 0, spec.selector: Required value]"
    )
    replicas = {
        "reason": "FieldValueInvalid",
        "message": "Invalid value: -1: must be >= 0",
        "field": "spec.replicas",
    }
    required = {
        "reason": "FieldValueRequired",
        "message": "Required value",
        "field": "spec.selector",
    }
    assert status["details"]["causes"] == [replicas, replicas, required]
    single = invalid("Pod", "", "p", [other]).status()
    assert single["message"] == 'Pod "p" is invalid: spec.selector: Required value'


def test_kubectl_create_prints_each_invalid_field_once(
    module_kubectl: Kubectl, tmp_path: Path
) -> None:
    done = module_kubectl("create", "-f", manifest(tmp_path, broken_deployment("web")), check=False)
    assert done.returncode == 1
    assert done.stderr == (
        'The Deployment "web" is invalid: \n'
        f"* spec.replicas: {REPLICAS_BODY}\n"
        f"* spec.template.metadata.labels: {LABELS_BODY}\n"
    )
    pod = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": NS},
        "spec": {"containers": [{"name": "a", "image": "busybox"}, {"name": "a", "image": "x"}]},
    }
    done = module_kubectl("create", "-f", manifest(tmp_path, pod), check=False)
    assert done.returncode == 1
    assert done.stderr == (
        'The Pod "p" is invalid: spec.containers[1].name: Duplicate value: "a"\n'
    )


def test_the_python_client_reads_the_message_and_causes_apart(module_api: client.ApiClient) -> None:
    with pytest.raises(ApiException) as e:
        client.AppsV1Api(module_api).create_namespaced_deployment(
            NS, plain(broken_deployment("web2"))
        )
    assert e.value.status == 422
    status = json.loads(e.value.body)
    assert (status["reason"], status["code"]) == ("Invalid", 422)
    assert status["message"] == (
        'Deployment.apps "web2" is invalid: '
        f"[spec.replicas: {REPLICAS_BODY}, spec.template.metadata.labels: {LABELS_BODY}]"
    )
    details = module_api.deserialize(e.value.body, "V1Status", "application/json").details
    assert (details.kind, details.group, details.name) == ("Deployment", "apps", "web2")
    assert [(c.reason, c.field, c.message) for c in details.causes] == [
        ("FieldValueInvalid", "spec.replicas", REPLICAS_BODY),
        ("FieldValueInvalid", "spec.template.metadata.labels", LABELS_BODY),
    ]
