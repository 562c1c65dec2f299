"""Workload pod templates validated as pods are (ValidatePodTemplateSpec in
pkg/apis/core/validation, called by apps/v1's and batch/v1's validation): a Deployment,
ReplicaSet, StatefulSet, DaemonSet or Job whose template kube-apiserver would refuse as a pod is
refused with 422 naming the template's field, instead of being stored with a rollout that sticks."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import EMPTY, running_simulator
from tests.support.simulators import send

PATHS = {
    "Deployment": "/apis/apps/v1/namespaces/default/deployments",
    "ReplicaSet": "/apis/apps/v1/namespaces/default/replicasets",
    "StatefulSet": "/apis/apps/v1/namespaces/default/statefulsets",
    "DaemonSet": "/apis/apps/v1/namespaces/default/daemonsets",
    "Job": "/apis/batch/v1/namespaces/default/jobs",
}
GROUPS = {"Job": "batch"}


def _workload(kind: str, cpu: str, restart: str | None = None) -> dict[str, Any]:
    container = {"name": "c", "image": "x:1", "resources": {"requests": {"cpu": cpu}}}
    pod_spec: dict[str, Any] = {"containers": [container]}
    if restart or kind == "Job":
        pod_spec["restartPolicy"] = restart or "Never"
    spec: dict[str, Any] = {
        "template": {"metadata": {"labels": {"app": "w"}}, "spec": pod_spec},
    }
    if kind != "Job":
        spec["selector"] = {"matchLabels": {"app": "w"}}
    version = "batch/v1" if kind == "Job" else "apps/v1"
    return {"apiVersion": version, "kind": kind, "metadata": {"name": "w"}, "spec": spec}


def _status(sim: Any, kind: str, body: dict[str, Any]) -> dict[str, Any]:
    with pytest.raises(ApiException) as e:
        send(sim.api_client(), "POST", PATHS[kind], body)
    assert e.value.status == 422
    return dict(json.loads(e.value.body))


@pytest.mark.parametrize("kind", list(PATHS))
def test_a_negative_cpu_in_the_template_is_refused_with_422(kind: str) -> None:
    with running_simulator(EMPTY) as sim:
        status = _status(sim, kind, _workload(kind, "-1"))
        group = GROUPS.get(kind, "apps")
        assert status["reason"] == "Invalid"
        assert status["message"] == (
            f'{kind}.{group} "w" is invalid: '
            "spec.template.spec.containers[0].resources.requests[cpu]: "
            'Invalid value: "-1": must be greater than or equal to 0'
        )
        # The same template with a valid quantity is stored.
        out = send(sim.api_client(), "POST", PATHS[kind], _workload(kind, "100m"))
        assert out["metadata"]["name"] == "w"


def test_restart_policies_a_controller_does_not_support_are_refused() -> None:
    with running_simulator(EMPTY) as sim:
        status = _status(sim, "Deployment", _workload("Deployment", "1", restart="Never"))
        assert status["details"]["causes"] == [
            {
                "reason": "FieldValueNotSupported",
                "field": "spec.template.spec.restartPolicy",
                "message": 'Unsupported value: "Never": supported values: "Always"',
            }
        ]
        status = _status(sim, "Job", _workload("Job", "1", restart="Always"))
        assert status["details"]["causes"] == [
            {
                "reason": "FieldValueRequired",
                "field": "spec.template.spec.restartPolicy",
                "message": 'Required value: valid values: "OnFailure", "Never"',
            }
        ]


def test_an_update_that_breaks_the_template_is_refused() -> None:
    with running_simulator(EMPTY) as sim:
        apps = client.AppsV1Api(sim.api_client())
        send(sim.api_client(), "POST", PATHS["Deployment"], _workload("Deployment", "100m"))
        body = {
            "spec": {
                "template": {
                    "spec": {
                        "containers": [{"name": "c", "resources": {"requests": {"cpu": "-1"}}}]
                    }
                }
            }
        }
        with pytest.raises(ApiException) as e:
            apps.patch_namespaced_deployment("w", "default", body)
        assert e.value.status == 422
        assert "must be greater than or equal to 0" in e.value.body
