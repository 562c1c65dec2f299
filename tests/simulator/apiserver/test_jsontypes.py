"""Values of the wrong JSON type are refused when the body is decoded into the kind's Go structs,
before validation: a 400 `<Kind> in version "v1" cannot be handled as a <Kind>: json: cannot
unmarshal ...` under every fieldValidation directive (apiserver handlers/rest.go
transformDecodeError, Go's encoding/json UnmarshalTypeError), as the real kubectl and the
official client see it; and the pure checker's rules."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.apiserver import schema
from app.simulator.apiserver.fieldvalidation import loads
from app.simulator.apiserver.jsontypes import decode_error
from tests.support.kubectl import WORKFLOWS, Kubectl, deployment, manifest
from tests.support.simulators import send

NS = "demo"
REPLICAS = (
    'Deployment in version "v1" cannot be handled as a Deployment: json: cannot unmarshal '
    "string into Go struct field DeploymentSpec.spec.replicas of type int32"
)
QUANTITY = (
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'"
)


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def create(api: client.ApiClient, path: str, body: Any, directive: str = "") -> Any:
    """A POST through the official client's own transport: its models (pydantic) would refuse
    these bodies before sending them, as kubectl --validate=false does not."""
    query = [("fieldValidation", directive)] if directive else []
    return send(api, "POST", path, body, query=query)


DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NS}/deployments"


def with_replicas(name: str, replicas: Any) -> dict[str, Any]:
    d = deployment(name)
    d["spec"]["replicas"] = replicas
    return d


def test_kubectl_apply_without_validation_gets_the_decoding_error(
    module_kubectl: Kubectl, tmp_path: Path
) -> None:
    path = manifest(tmp_path, with_replicas("two", "two"))
    done = module_kubectl("apply", "--validate=false", "-f", path, check=False)
    assert done.returncode == 1
    assert done.stderr == (
        f'Error from server (BadRequest): error when creating "{path}": {REPLICAS}\n'
    )
    # With validation on (kubectl asks the server for Strict) the answer is the same.
    done = module_kubectl("create", "-f", path, check=False)
    assert done.returncode == 1 and REPLICAS in done.stderr
    assert module_kubectl("get", "deployments", "-n", NS, "-o", "name").stdout.count("/two") == 0


@pytest.mark.parametrize("directive", ["Ignore", "Warn", "Strict"])
def test_the_python_client_gets_400_under_every_directive(
    module_api: client.ApiClient, directive: str
) -> None:
    with pytest.raises(ApiException) as e:
        create(module_api, DEPLOYMENTS, with_replicas("two", "two"), directive)
    assert e.value.status == 400
    status = json.loads(e.value.body)
    assert (status["reason"], status["message"]) == ("BadRequest", REPLICAS)


def test_a_type_error_comes_before_unknown_fields_and_validation(
    module_api: client.ApiClient,
) -> None:
    body = with_replicas("two", "two")
    body["spec"]["bogus"] = 1
    body["spec"]["template"]["metadata"]["labels"] = {"app": "other"}  # selector mismatch: 422
    with pytest.raises(ApiException) as e:
        create(module_api, DEPLOYMENTS, body, "Strict")
    assert (e.value.status, json.loads(e.value.body)["message"]) == (400, REPLICAS)


def test_a_bad_quantity_and_a_bad_intorstring_end_decoding(module_api: client.ApiClient) -> None:
    pod = {
        "metadata": {"name": "q"},
        "spec": {
            "containers": [
                {"name": "a", "image": "busybox", "resources": {"limits": {"cpu": "lots"}}}
            ]
        },
    }
    with pytest.raises(ApiException) as e:
        create(module_api, f"/api/v1/namespaces/{NS}/pods", pod)
    assert e.value.status == 400
    assert json.loads(e.value.body)["message"] == (
        f'Pod in version "v1" cannot be handled as a Pod: {QUANTITY}'
    )
    d = deployment("surge")
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": True}}
    with pytest.raises(ApiException) as e:
        create(module_api, DEPLOYMENTS, d)
    assert json.loads(e.value.body)["message"].endswith(
        "json: cannot unmarshal bool into Go struct field "
        "RollingUpdateDeployment.spec.strategy.rollingUpdate.maxSurge of type int32"
    )


def test_values_of_the_right_type_still_create(module_api: client.ApiClient) -> None:
    d = with_replicas("fine", 2)
    d["spec"]["strategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%"}}
    d["spec"]["template"]["spec"]["containers"][0]["resources"] = {"limits": {"cpu": 0.5}}
    made = create(module_api, DEPLOYMENTS, d)
    assert made["spec"]["replicas"] == 2
    client.AppsV1Api(module_api).delete_namespaced_deployment("fine", NS)


# The pure checker -------------------------------------------------------------------------------

DEFS = schema.definitions(33)
DEPLOYMENT = "io.k8s.api.apps.v1.Deployment"


def error_of(doc: dict[str, Any]) -> str | None:
    return decode_error(DEFS, DEPLOYMENT, loads(json.dumps(doc)))


CASES = [
    # the env value case as kube-apiserver answers it (a Helm chart's number for a string)
    (
        {"spec": {"template": {"spec": {"containers": [{"env": [{"name": "x", "value": 5}]}]}}}},
        "json: cannot unmarshal number into Go struct field "
        "EnvVar.spec.template.spec.containers.env.value of type string",
    ),
    (
        {"metadata": {"labels": {"a": 1}}},
        "json: cannot unmarshal number into Go struct field ObjectMeta.metadata.labels of type "
        "string",
    ),
    (
        {"metadata": "x"},
        "json: cannot unmarshal string into Go struct field Deployment.metadata of type "
        "v1.ObjectMeta",
    ),
    (
        {"spec": {"replicas": 1.5}},
        "json: cannot unmarshal number 1.5 into Go struct field DeploymentSpec.spec.replicas of "
        "type int32",
    ),
    (
        {"spec": {"replicas": 2**31}},
        "json: cannot unmarshal number 2147483648 into Go struct field "
        "DeploymentSpec.spec.replicas of type int32",
    ),
    (
        {"spec": {"template": {"spec": {"containers": "x"}}}},
        "json: cannot unmarshal string into Go struct field PodSpec.spec.template.spec.containers"
        " of type []v1.Container",
    ),
    (
        {"spec": {"template": {"spec": {"containers": [{"resources": {"limits": 5}}]}}}},
        "json: cannot unmarshal number into Go struct field "
        "ResourceRequirements.spec.template.spec.containers.resources.limits of type "
        "v1.ResourceList",
    ),
    (
        {"spec": {"paused": "yes"}},
        "json: cannot unmarshal string into Go struct field DeploymentSpec.spec.paused of type "
        "bool",
    ),
    # the first type error is reported, decoding goes on
    (
        {"spec": {"paused": 1, "replicas": "x"}},
        "json: cannot unmarshal number into Go struct field DeploymentSpec.spec.paused of type "
        "bool",
    ),
    # ... unless a type's own UnmarshalJSON fails later: that error ends decoding
    (
        {
            "spec": {
                "paused": 1,
                "template": {"spec": {"containers": [{"resources": {"limits": {"cpu": []}}}]}},
            }
        },
        QUANTITY,
    ),
    # null fits anything; unknown fields are skipped unread; IntOrString takes both
    ({"spec": {"replicas": None, "bogus": {"x": "y"}, "paused": None}}, None),
    ({"spec": {"strategy": {"rollingUpdate": {"maxSurge": "25%", "maxUnavailable": 1}}}}, None),
]


@pytest.mark.parametrize(("doc", "error"), CASES)
def test_decode_errors_as_go_prints_them(doc: dict[str, Any], error: str | None) -> None:
    assert error_of(doc) == error


JSON_VALUES = st.one_of(
    st.booleans(),
    st.text(max_size=3),
    st.floats(allow_nan=False, allow_infinity=False),
    st.lists(st.integers(), max_size=2),
    st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
)


@given(st.integers(min_value=-(2**31), max_value=2**31 - 1), JSON_VALUES)
def test_an_int32_field_takes_exactly_integers_in_range(good: int, other: Any) -> None:
    assert error_of({"spec": {"replicas": good}}) is None
    bad = error_of({"spec": {"replicas": other}})  # a float too: Go parses 1.0 as no integer
    assert bad is not None and bad.startswith("json: cannot unmarshal ")
    assert bad.endswith(" into Go struct field DeploymentSpec.spec.replicas of type int32")
