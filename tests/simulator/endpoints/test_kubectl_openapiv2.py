"""`/openapi/v2` for real clients: kubectl's client-side validation of a `kind: List` (it reads
the v2 models there, as v3 has no List), `kubectl explain --output=plaintext-openapiv2`, kubectl's
HTTP cache revalidating the document, and the official Python client reading it as JSON and as
gnostic protobuf (decoded by the protobuf package, tests/support/openapiv2.py)."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator
from tests.support.json_bodies import json_object
from tests.support.kubectl import Kubectl, manifest
from tests.support.openapiv2 import decode_document, proto3_view

NS = "other"
PROTOBUF_ACCEPT = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf"


@pytest.fixture
def kubectl(sim: Simulator, tmp_path: Path) -> Kubectl:
    return Kubectl(sim, tmp_path / "kube-cache")


def _list(replicas: Any = 1, data: str = "1", **extra_spec: Any) -> dict[str, Any]:
    """A v1 List of a ConfigMap and a Deployment."""
    return {
        "apiVersion": "v1",
        "kind": "List",
        "items": [
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "settings", "namespace": NS},
                "data": {"x": data},
            },
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "listed", "namespace": NS},
                "spec": {
                    "replicas": replicas,
                    "selector": {"matchLabels": {"app": "listed"}},
                    "template": {
                        "metadata": {"labels": {"app": "listed"}},
                        "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
                    },
                    **extra_spec,
                },
            },
        ],
    }


def test_kubectl_apply_of_a_list_creates_then_changes(
    kubectl: Kubectl, tmp_path: Path, core: client.CoreV1Api, apps: client.AppsV1Api
) -> None:
    created = kubectl("apply", "-f", manifest(tmp_path, _list()))
    assert created.stdout.splitlines() == [
        "configmap/settings created",
        "deployment.apps/listed created",
    ]
    assert core.read_namespaced_config_map("settings", NS).data == {"x": "1"}
    assert apps.read_namespaced_deployment("listed", NS).spec.replicas == 1
    changed = kubectl("apply", "-f", manifest(tmp_path, _list(replicas=2, data="2")))
    assert changed.stdout.splitlines() == [
        "configmap/settings configured",
        "deployment.apps/listed configured",
    ]
    assert core.read_namespaced_config_map("settings", NS).data == {"x": "2"}
    deployment = apps.read_namespaced_deployment("listed", NS)
    assert deployment.spec.replicas == 2
    applied = deployment.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(applied)["spec"]["replicas"] == 2


@pytest.mark.parametrize(
    ("spec", "error"),
    [
        (
            {"bogus": 1},
            'ValidationError(Deployment.spec): unknown field "bogus" in '
            "io.k8s.api.apps.v1.DeploymentSpec",
        ),
        (
            {"replicas": "two"},
            "ValidationError(Deployment.spec.replicas): invalid type for "
            'io.k8s.api.apps.v1.DeploymentSpec.replicas: got "string", expected "integer"',
        ),
    ],
)
def test_kubectl_validates_each_item_of_a_list_against_the_v2_models(
    kubectl: Kubectl, tmp_path: Path, core: client.CoreV1Api, spec: Any, error: str
) -> None:
    refused = kubectl("apply", "-f", manifest(tmp_path, _list(**spec)), check=False)
    assert refused.returncode == 1
    assert f"error validating data: {error};" in refused.stderr, refused.stderr
    with pytest.raises(ApiException) as e:  # nothing of the List was sent
        core.read_namespaced_config_map("settings", NS)
    assert e.value.status == 404
    if "bogus" in spec:  # without validation the server drops it (fieldValidation=Ignore)
        loose = kubectl("apply", "--validate=false", "-f", manifest(tmp_path, _list(**spec)))
        assert "deployment.apps/listed created" in loose.stdout


def test_kubectl_explain_reads_the_v2_models(kubectl: Kubectl) -> None:
    spec = kubectl.out("explain", "--output=plaintext-openapiv2", "pods.spec")
    assert spec.startswith("KIND:     Pod\nVERSION:  v1\n\nRESOURCE: spec <Object>\n")
    assert "   containers\t<[]Object> -required-\n" in spec
    assert "   nodeName\t<string>\n" in spec
    surge = kubectl.out(
        "explain", "--output=plaintext-openapiv2", "deployment.spec.strategy.rollingUpdate"
    )
    assert "KIND:     Deployment\nVERSION:  apps/v1\n" in surge
    assert "   maxSurge\t<string>\n" in surge  # IntOrString is a string in v2
    limits = kubectl.out("explain", "--output=plaintext-openapiv2", "pod.spec.containers.resources")
    assert "   limits\t<map[string]string>\n" in limits  # Quantity too


def test_kubectl_revalidates_its_cached_document_with_the_etag(kubectl: Kubectl) -> None:
    def openapi_v2_response(verbose: str) -> str:
        """The response headers `kubectl -v=8` logged for its GET of /openapi/v2."""
        request = verbose.index('verb="GET" url="' + kubectl.sim.url + "/openapi/v2")
        response = verbose.index('"Response"', request)
        return verbose[response : verbose.index("\n >", response)]

    first = kubectl("explain", "--output=plaintext-openapiv2", "pods", "-v=8").stderr
    assert "X-From-Cache" not in openapi_v2_response(first)
    again = kubectl("explain", "--output=plaintext-openapiv2", "pods", "-v=8").stderr
    # httpcache sent If-None-Match and used its copy on the 304 (a 200 would not say this)
    assert "X-From-Cache: 1" in openapi_v2_response(again)


def _read(api_client: client.ApiClient, accept: str) -> Any:
    """GET /openapi/v2 the way the client's generated methods send a request."""
    method, url, headers, _, _ = api_client.param_serialize(
        "GET", "/openapi/v2", header_params={"Accept": accept}, auth_settings=["BearerToken"]
    )
    response = api_client.call_api(method, url, headers)
    response.read()
    return response


def test_the_python_client_reads_the_document_as_json_and_as_protobuf(
    api_client: client.ApiClient,
) -> None:
    as_json = _read(api_client, "application/json")
    assert as_json.status == 200 and as_json.getheader("Content-Type") == "application/json"
    doc = json_object(api_client.response_deserialize(as_json, {"200": "object"}).data)
    assert doc["swagger"] == "2.0" and doc["info"]["title"] == "Kubernetes"
    create = doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments"]["post"]
    assert create["x-kubernetes-action"] == "post"
    assert create["x-kubernetes-group-version-kind"]["kind"] == "Deployment"
    pod = doc["definitions"]["io.k8s.api.core.v1.Pod"]
    assert pod["x-kubernetes-group-version-kind"] == [{"group": "", "kind": "Pod", "version": "v1"}]
    assert pod["properties"]["spec"]["$ref"] == "#/definitions/io.k8s.api.core.v1.PodSpec"
    as_protobuf = _read(api_client, PROTOBUF_ACCEPT)
    assert as_protobuf.getheader("Content-Type") == (
        "application/com.github.proto-openapi.spec.v2.v1.0+protobuf"
    )
    assert as_protobuf.getheader("Etag") == as_json.getheader("Etag")
    assert decode_document(as_protobuf.data) == proto3_view(doc)


def test_only_openapi_v2_itself_is_served(sim: Simulator) -> None:
    for path in ("/swagger-2.0.0.pb-v1", "/swagger.json", "/openapi/v2/"):
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(sim.url + path, timeout=30)
        assert e.value.code == 404, path
