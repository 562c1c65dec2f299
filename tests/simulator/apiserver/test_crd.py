"""CustomResourceDefinitions in the simulated cluster (apiserver/crd.py) and the Argo-Rollouts-like
controller (control/rollouts.py), through the official client and the real kubectl: definitions
validated as apiextensions-apiserver validates them, discovery, custom resources pruned and
type-checked, their `/scale` subresource, ReplicaSets owned by a custom resource and collected
with it, and the definition's deletion taking its objects along."""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
import requests
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator
from app.simulator.testing import running_simulator
from tests.support.json_bodies import json_object
from tests.support.kubectl import Kubectl, manifest
from tests.support.processes import wait_for
from tests.support.rollouts import (
    GROUP,
    PLURAL,
    VERSION,
    create_rollout,
    get_rollout,
    install_rollouts,
    rollout,
    rollout_crd,
)
from tests.support.simulators import SMALL

NS = "shop"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SMALL


@pytest.fixture(scope="module")
def installed(module_sim: Simulator) -> Simulator:
    api = module_sim.api_client()
    install_rollouts(api)
    api.close()
    module_sim.settle()
    return module_sim


@pytest.fixture
def api(installed: Simulator) -> Iterator[client.ApiClient]:
    c = installed.api_client()
    yield c
    c.close()


def invalid_causes(e: ApiException) -> dict[str, str]:
    body = json.loads(e.body)
    assert e.status == 422 and body["reason"] == "Invalid", body
    return {c["field"]: c["message"] for c in body["details"]["causes"]}


def settle(sim: Simulator, times: int = 3) -> None:
    for _ in range(times):
        sim.settle()


# --- the definition ---------------------------------------------------------------------------


def test_a_definition_is_established_and_served_in_discovery(
    installed: Simulator, api: client.ApiClient
) -> None:
    crd = client.ApiextensionsV1Api(api).read_custom_resource_definition("rollouts.argoproj.io")
    assert {(c.type, c.status) for c in crd.status.conditions} == {
        ("NamesAccepted", "True"),
        ("Established", "True"),
    }
    assert crd.status.stored_versions == ["v1alpha1"]
    assert crd.status.accepted_names.kind == "Rollout"
    groups = requests.get(f"{installed.url}/apis", timeout=5).json()["groups"]
    assert {"name": GROUP, "versions": [{"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION}],
            "preferredVersion": {"groupVersion": f"{GROUP}/{VERSION}", "version": VERSION},
            "kind": "APIGroup", "apiVersion": "v1"} in groups  # fmt: skip
    listing = requests.get(f"{installed.url}/apis/{GROUP}/{VERSION}", timeout=5).json()
    by_name = {r["name"]: r for r in listing["resources"]}
    assert by_name["rollouts"]["kind"] == "Rollout"
    assert by_name["rollouts"]["namespaced"] is True
    assert by_name["rollouts"]["shortNames"] == ["ro"]
    assert by_name["rollouts/scale"]["group"] == "autoscaling"
    assert by_name["rollouts/scale"]["kind"] == "Scale"
    assert "rollouts/status" in by_name


def create_definition(sim: Simulator, body: dict[str, Any]) -> requests.Response:
    """POST as kubectl would send it: the official client refuses a definition missing a
    required field before sending it."""
    url = f"{sim.url}/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
    return requests.post(url, json=body, timeout=10)


def causes_of(resp: requests.Response) -> dict[str, str]:
    body = resp.json()
    assert resp.status_code == 422 and body["reason"] == "Invalid", body
    return {c["field"]: c["message"] for c in body["details"]["causes"]}


def test_definitions_are_validated_as_apiextensions_validates_them(installed: Simulator) -> None:
    bad = rollout_crd()
    bad["metadata"]["name"] = "rollout.argoproj.io"
    bad["spec"]["group"] = "argoproj"
    version = bad["spec"]["versions"][0]
    version["subresources"]["scale"]["specReplicasPath"] = ".status.replicas"
    del version["subresources"]["scale"]["statusReplicasPath"]
    bad["spec"]["versions"].append({**copy.deepcopy(version), "name": "v1"})
    causes = causes_of(create_definition(installed, bad))
    assert causes["metadata.name"].endswith('must be spec.names.plural+"."+spec.group')
    assert causes["spec.group"].endswith("should be a domain with at least one dot")
    assert causes["spec.versions[0].subresources.scale.specReplicasPath"] == (
        'Invalid value: ".status.replicas": should be a json path under .spec'
    )
    assert causes["spec.versions[0].subresources.scale.statusReplicasPath"] == "Required value"
    every = [c["message"] for c in create_definition(installed, bad).json()["details"]["causes"]]
    assert any("must have exactly one version marked as storage version" in m for m in every)
    no_schema = rollout_crd()
    no_schema["spec"]["names"]["plural"] = "things"
    no_schema["metadata"]["name"] = "things.argoproj.io"
    del no_schema["spec"]["versions"][0]["schema"]
    assert causes_of(create_definition(installed, no_schema)) == {
        "spec.versions[0].schema.openAPIV3Schema": "Required value: schemas are required"
    }


def test_group_and_plural_are_immutable(api: client.ApiClient) -> None:
    ext = client.ApiextensionsV1Api(api)
    with pytest.raises(ApiException) as e:
        ext.patch_custom_resource_definition(
            "rollouts.argoproj.io", {"spec": {"names": {"kind": "Roll"}}}
        )
    assert invalid_causes(e.value)["spec.names.kind"].endswith("field is immutable")


# --- custom resources ---------------------------------------------------------------------------


def test_custom_resources_are_pruned_typed_and_keep_status_to_the_subresource(
    installed: Simulator, api: client.ApiClient
) -> None:
    custom = client.CustomObjectsApi(api)
    body = rollout("typed", NS, replicas=0)
    body["unknownTopLevel"] = {"x": 1}  # not in the schema: pruned
    body["status"] = {"replicas": 7}  # a create never sets the status subresource
    created = create_rollout(api, body)
    assert "unknownTopLevel" not in created
    assert "status" not in created
    assert created["metadata"]["generation"] == 1
    assert created["spec"]["template"]["spec"]["containers"][0]["name"] == "app"  # preserved
    wrong = rollout("wrong", NS)
    wrong["spec"]["replicas"] = "two"
    with pytest.raises(ApiException) as e:
        create_rollout(api, wrong)
    assert invalid_causes(e.value) == {
        "spec.replicas": 'Invalid value: "string": spec.replicas in body must be of type '
        'integer: "string"'
    }
    patched = json_object(
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "typed", {"spec": {"paused": True}}
        )
    )
    assert patched["metadata"]["generation"] == 2
    same = json_object(
        custom.patch_namespaced_custom_object(
            GROUP, VERSION, NS, PLURAL, "typed", {"metadata": {"labels": {"a": "b"}}}
        )
    )
    assert same["metadata"]["generation"] == 2  # metadata only: no new generation
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "typed")


def test_scale_subresource_reads_and_writes_the_definitions_paths(
    installed: Simulator, api: client.ApiClient
) -> None:
    custom = client.CustomObjectsApi(api)
    create_rollout(api, rollout("scaled", NS, replicas=1, labels={"app": "scaled"}))
    settle(installed)
    scale = json_object(
        custom.get_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "scaled")
    )
    assert scale["kind"] == "Scale" and scale["apiVersion"] == "autoscaling/v1"
    assert scale["spec"] == {"replicas": 1}
    assert scale["status"] == {"replicas": 1, "selector": "app=scaled"}
    custom.patch_namespaced_custom_object_scale(
        GROUP, VERSION, NS, PLURAL, "scaled", {"spec": {"replicas": 3}}
    )
    settle(installed)
    ro = get_rollout(api, NS, "scaled")
    assert ro["spec"]["replicas"] == 3
    assert ro["status"]["replicas"] == 3
    core = client.CoreV1Api(api)
    assert len(core.list_namespaced_pod(NS, label_selector="app=scaled").items) == 3
    # Without its spec replicas field a GET of /scale is an internal error, as in kube.
    custom.patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "scaled", {"spec": {"replicas": None}}
    )
    with pytest.raises(ApiException) as e:
        custom.get_namespaced_custom_object_scale(GROUP, VERSION, NS, PLURAL, "scaled")
    assert e.value.status == 500
    assert json.loads(e.value.body)["message"] == (
        'Internal error occurred: the spec replicas field ".spec.replicas" does not exist'
    )
    custom.delete_namespaced_custom_object(GROUP, VERSION, NS, PLURAL, "scaled")


def test_rollout_controller_owns_replicasets_and_the_collector_follows_the_rollout(
    installed: Simulator, api: client.ApiClient
) -> None:
    apps, core = client.AppsV1Api(api), client.CoreV1Api(api)
    created = create_rollout(api, rollout("canary", NS, replicas=2))
    settle(installed)
    (rs,) = apps.list_namespaced_replica_set(NS, label_selector="app=canary").items
    ref = rs.metadata.owner_references[0]
    assert (ref.api_version, ref.kind, ref.name, ref.uid, ref.controller) == (
        f"{GROUP}/{VERSION}",
        "Rollout",
        "canary",
        created["metadata"]["uid"],
        True,
    )
    pod_hash = rs.metadata.labels["rollouts-pod-template-hash"]
    assert rs.metadata.name == f"canary-{pod_hash}"
    assert rs.spec.selector.match_labels == {
        "app": "canary",
        "rollouts-pod-template-hash": pod_hash,
    }
    status = get_rollout(api, NS, "canary")["status"]
    assert status["phase"] == "Healthy"
    assert status["currentPodHash"] == pod_hash
    assert (status["replicas"], status["availableReplicas"], status["selector"]) == (
        2,
        2,
        "app=canary",
    )
    # A new template: a new ReplicaSet at full size, the old one scaled to 0 once it is available.
    client.CustomObjectsApi(api).patch_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "canary",
        {"spec": {"template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.28",
         "resources": {"requests": {"cpu": "100m", "memory": "64Mi"}}}]}}}},
    )  # fmt: skip
    settle(installed, 6)
    sizes = {
        r.metadata.name: r.spec.replicas
        for r in apps.list_namespaced_replica_set(NS, label_selector="app=canary").items
    }
    assert sizes[rs.metadata.name] == 0 and sorted(sizes.values()) == [0, 2]
    pods = core.list_namespaced_pod(NS, label_selector="app=canary").items
    assert {p.spec.containers[0].image for p in pods} == {"nginx:1.28"}
    # Deleting the Rollout: its ReplicaSets and their pods go, through ownerReferences.
    client.CustomObjectsApi(api).delete_namespaced_custom_object(
        GROUP, VERSION, NS, PLURAL, "canary"
    )
    settle(installed, 6)
    assert apps.list_namespaced_replica_set(NS, label_selector="app=canary").items == []
    assert core.list_namespaced_pod(NS, label_selector="app=canary").items == []


def test_kubectl_applies_gets_and_scales_a_custom_resource(
    installed: Simulator, tmp_path: Any
) -> None:
    kubectl = Kubectl(installed, tmp_path / "cache")
    path = manifest(tmp_path, rollout("viakubectl", NS, replicas=1))
    assert "rollout.argoproj.io/viakubectl created" in kubectl.out("apply", "-f", path)
    out = kubectl.out("wait", "--for=condition=established", "crd/rollouts.argoproj.io")
    assert "condition met" in out
    settle(installed)
    lines = kubectl.out("get", "rollouts", "-n", NS).splitlines()
    assert lines[0].split() == ["NAME", "AGE"]
    assert "viakubectl" in kubectl.out("get", "ro", "-n", NS)
    assert "rollout.argoproj.io/viakubectl scaled" in kubectl.out(
        "scale", "rollout/viakubectl", "-n", NS, "--replicas=2"
    )
    settle(installed)
    jsonpath = "jsonpath={.spec.replicas}/{.status.replicas}"
    assert kubectl.out("get", "rollout", "viakubectl", "-n", NS, "-o", jsonpath) == "2/2"
    assert "rollouts.argoproj.io" in kubectl.out("get", "crd")
    kubectl("delete", "rollout", "viakubectl", "-n", NS)


def test_a_definition_exists_only_in_its_own_cluster() -> None:
    with running_simulator(SMALL) as first, running_simulator(SMALL) as second:
        api = first.api_client()
        install_rollouts(api)
        api.close()
        assert requests.get(f"{first.url}/apis/{GROUP}/{VERSION}", timeout=5).status_code == 200
        assert requests.get(f"{second.url}/apis/{GROUP}/{VERSION}", timeout=5).status_code == 404


def test_deleting_the_definition_deletes_its_objects() -> None:
    with running_simulator(SMALL) as sim:
        api = sim.api_client()
        install_rollouts(api)
        create_rollout(api, rollout("doomed", NS, replicas=1))
        settle(sim)
        client.ApiextensionsV1Api(api).delete_custom_resource_definition("rollouts.argoproj.io")
        settle(sim)
        with pytest.raises(ApiException) as e:
            get_rollout(api, NS, "doomed")
        assert e.value.status == 404
        install_rollouts(api)  # the same definition again: the old objects do not come back
        wait_for(
            lambda: (
                json_object(
                    client.CustomObjectsApi(api).list_namespaced_custom_object(
                        GROUP, VERSION, NS, PLURAL
                    )
                )["items"]
                == []
            ),
            10,
            "an empty list of rollouts",
        )
        api.close()


def test_a_scenario_may_define_a_resource_and_create_its_objects() -> None:
    scenario = {
        **SMALL,
        "objects": [rollout_crd(), rollout("from-scenario", NS, replicas=2)],
    }
    with running_simulator(scenario) as sim:
        settle(sim)
        api = sim.api_client()
        assert get_rollout(api, NS, "from-scenario")["status"]["replicas"] == 2
        api.close()
