"""Quantities come back as kube-apiserver stores them, through the official client and kubectl.

kube-apiserver decodes a body into Go structs: a Quantity's UnmarshalJSON reads a JSON string's
content or a JSON number's text (`cpu: 0.5`), ParseQuantity parses it, and MarshalJSON writes it
back canonical (`0.5` -> "500m", `1024Mi` -> "1Gi", `1.5Gi` -> "1536Mi"), unless ParseQuantity's
fast path kept the text as sent (apimachinery pkg/api/resource/quantity.go). So does the
simulator on a create, a patch and server-side apply, and the pods a controller makes from
the template carry the stored form (what rightsizer reads); a scenario's workloads are stored as
if they had been created through the API."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import WORKFLOWS, Kubectl
from tests.support.simulators import send

NS = "demo"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return WORKFLOWS


def pod(name: str, requests: dict[str, Any], limits: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": name, "namespace": NS},
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "image": "nginx:1.27",
                    "resources": {"requests": requests, "limits": limits},
                }
            ]
        },
    }


def test_the_official_client_reads_a_pod_created_with_numbers_canonically(
    module_api: client.ApiClient,
) -> None:
    api = module_api
    core = client.CoreV1Api(api)
    body = pod("numbers", {"cpu": 0.5, "memory": "1024Mi"}, {"cpu": 1.5, "memory": "1.5Gi"})
    made = send(api, "POST", f"/api/v1/namespaces/{NS}/pods", body)  # JSON numbers
    assert made["spec"]["containers"][0]["resources"] == {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "1500m", "memory": "1536Mi"},
    }
    read = core.read_namespaced_pod("numbers", NS).spec.containers[0].resources
    assert read.requests == {"cpu": "500m", "memory": "1Gi"}
    assert read.limits == {"cpu": "1500m", "memory": "1536Mi"}
    # A quantity already in canonical form, and one ParseQuantity keeps as sent, are unchanged.
    made = core.create_namespaced_pod(NS, plain(pod("kept", {"cpu": "250m"}, {"cpu": "+1"})))
    assert made.spec.containers[0].resources.requests == {"cpu": "250m"}
    assert made.spec.containers[0].resources.limits == {"cpu": "+1"}


def test_a_patch_with_numbers_reaches_the_pods_canonical(
    module_api: client.ApiClient, module_sim: Simulator
) -> None:
    api = module_api
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    deployment = {
        "metadata": {"name": "patched", "namespace": NS},
        "spec": {
            "replicas": 0,  # the patch scales it: its one pod is the patched template's
            "selector": {"matchLabels": {"app": "patched"}},
            "template": {
                "metadata": {"labels": {"app": "patched"}},
                "spec": {"containers": [{"name": "app", "image": "nginx:1.27"}]},
            },
        },
    }
    apps.create_namespaced_deployment(NS, plain(deployment))
    patch = {
        "spec": {
            "replicas": 1,
            "template": {
                "spec": {
                    "containers": [
                        {"name": "app", "resources": {"requests": {"cpu": 0.25, "memory": 10**8}}}
                    ]
                }
            },
        }
    }
    path = f"/apis/apps/v1/namespaces/{NS}/deployments/patched"
    patched = send(api, "PATCH", path, patch, "application/strategic-merge-patch+json")
    wanted = {"cpu": "250m", "memory": "100M"}
    assert patched["spec"]["template"]["spec"]["containers"][0]["resources"]["requests"] == wanted
    module_sim.settle()
    pods = core.list_namespaced_pod(NS, label_selector="app=patched").items
    assert [p.spec.containers[0].resources.requests for p in pods] == [wanted]


MANIFEST = """\
apiVersion: apps/v1
kind: Deployment
metadata: {name: NAME, namespace: demo}
spec:
  replicas: 1
  selector: {matchLabels: {app: NAME}}
  template:
    metadata: {labels: {app: NAME}}
    spec:
      containers:
        - name: app
          image: nginx:1.27
          resources:
            requests: {cpu: 0.5, memory: 1024Mi}
            limits: {cpu: 2, memory: 1.5Gi}
"""


@pytest.mark.parametrize("server_side", [False, True], ids=["apply", "server-side-apply"])
def test_kubectl_apply_of_yaml_numbers_stores_them_canonical(
    module_kubectl: Kubectl, module_sim: Simulator, tmp_path: Path, server_side: bool
) -> None:
    name = "ssa" if server_side else "csa"
    path = tmp_path / f"{name}.yaml"
    path.write_text(MANIFEST.replace("NAME", name))
    module_kubectl("apply", *(["--server-side"] if server_side else []), "-f", str(path))
    resources = "{.spec.containers[0].resources}"
    stored = module_kubectl.out(
        "get", "deployment", name, "-n", NS, "-o", f"jsonpath={{.spec.template{resources[1:]}"
    )
    wanted = {
        "requests": {"cpu": "500m", "memory": "1Gi"},
        "limits": {"cpu": "2", "memory": "1536Mi"},
    }
    assert json.loads(stored) == wanted
    module_sim.settle()
    pods = module_kubectl.out("get", "pods", "-n", NS, "-l", f"app={name}", "-o", "json")
    items = json.loads(pods)["items"]
    assert items and all(p["spec"]["containers"][0]["resources"] == wanted for p in items)
    # Applied again, the manifest means what is stored: the spec and its generation stay (the
    # client-side apply still sends cpu: 0.5, its three-way diff seeing "500m" live).
    generation = module_kubectl.out(
        "get", "deployment", name, "-n", NS, "-o", "jsonpath={.metadata.generation}"
    )
    module_kubectl("apply", *(["--server-side"] if server_side else []), "-f", str(path))
    again = module_kubectl.out("get", "deployment", name, "-n", NS, "-o", "json")
    assert json.loads(again)["spec"]["template"]["spec"]["containers"][0]["resources"] == wanted
    assert str(json.loads(again)["metadata"]["generation"]) == generation


def test_kubectl_create_and_an_in_place_resize_with_numbers_are_stored_canonical(
    module_kubectl: Kubectl, module_sim: Simulator, tmp_path: Path
) -> None:
    path = tmp_path / "pod.yaml"
    path.write_text(json.dumps(pod("resized", {"cpu": 0.25, "memory": 2**28}, {})))
    module_kubectl("create", "-f", str(path))
    module_sim.settle()
    requests = "jsonpath={.spec.containers[0].resources.requests}"
    got = module_kubectl.out("get", "pod", "resized", "-n", NS, "-o", requests)
    assert json.loads(got) == {"cpu": "250m", "memory": "268435456"}  # a number: DecimalSI
    resize = {"spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": 0.75}}}]}}
    module_kubectl(
        "patch", "pod", "resized", "-n", NS, "--subresource", "resize", "--type", "strategic",
        "-p", json.dumps(resize),
    )  # fmt: skip
    got = module_kubectl.out("get", "pod", "resized", "-n", NS, "-o", requests)
    assert json.loads(got) == {"cpu": "750m", "memory": "268435456"}


def test_a_scenarios_numbers_are_stored_as_through_the_api() -> None:
    workload = {
        "kind": "Deployment",
        "namespace": NS,
        "name": "web",
        "replicas": 1,
        "containers": [{"name": "app", "requests": {"cpu": 0.5, "memory": "1024Mi"}}],
    }
    with running_simulator({**WORKFLOWS, "workloads": [workload]}) as sim:
        sim.settle()
        api = sim.api_client()
        try:
            template = client.AppsV1Api(api).read_namespaced_deployment("web", NS).spec.template
            [made] = client.CoreV1Api(api).list_namespaced_pod(NS).items
        finally:
            api.close()
    wanted = {"cpu": "500m", "memory": "1Gi"}
    assert template.spec.containers[0].resources.requests == wanted
    assert made.spec.containers[0].resources.requests == wanted


def test_a_null_quantity_in_requests_is_stored_as_zero(module_api: client.ApiClient) -> None:
    # Quantity's UnmarshalJSON takes `null` as the zero Quantity, and a map element is always
    # decoded (ResourceList is a map of Quantity values, not pointers): written back as "0".
    made = send(
        module_api, "POST", f"/api/v1/namespaces/{NS}/pods", pod("nulls", {"cpu": None}, {})
    )
    assert made["spec"]["containers"][0]["resources"]["requests"] == {"cpu": "0"}
    read = client.CoreV1Api(module_api).read_namespaced_pod("nulls", NS)
    assert read.spec.containers[0].resources.requests == {"cpu": "0"}
