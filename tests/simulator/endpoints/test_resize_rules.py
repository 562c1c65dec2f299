"""The `resize` subresource where kube-apiserver's own rules decide: its decoder's defaults, the
QoS-class message beside the other errors, and LimitRanger on `pods/resize`."""

from __future__ import annotations

import json
from typing import Any

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import running_simulator
from tests.support.json_bodies import plain
from tests.support.simulators import send

NODES = [{"namePrefix": "node", "count": 2, "cpu": "4", "memory": "16Gi"}]
GUARANTEED = {"cpu": "500m", "memory": "1Gi"}


def _pod(core: Any, resources: dict[str, Any]) -> None:
    spec = {"containers": [{"name": "app", "image": "x:1", "resources": resources}]}
    core.create_namespaced_pod("default", {"metadata": {"name": "p"}, "spec": spec})


def _json_patch(api: Any, ops: list[dict[str, Any]]) -> Any:
    return send(
        api,
        "PATCH",
        "/api/v1/namespaces/default/pods/p/resize",
        ops,
        content_type="application/json-patch+json",
    )


def test_limits_without_requests_are_defaulted_as_kube_apiservers_decoder_does() -> None:
    """A Guaranteed pod's resources replaced by limits alone: SetDefaults_Pod gives requests
    equal to the limits, so the class stays Guaranteed and the resize is accepted."""
    with running_simulator({"nodes": NODES}) as sim:
        api = sim.api_client()
        _pod(client.CoreV1Api(api), {"requests": GUARANTEED, "limits": GUARANTEED})
        sim.settle()
        limits = {"cpu": "750m", "memory": "1Gi"}
        op = {"op": "replace", "path": "/spec/containers/0/resources", "value": {"limits": limits}}
        out = _json_patch(api, [op])
        assert out["spec"]["containers"][0]["resources"] == {"limits": limits, "requests": limits}


def test_a_qos_change_is_named_beside_the_other_errors() -> None:
    """ValidatePodResize appends the QoS error (value: the pod's status.qosClass) whatever else
    is wrong: a Guaranteed pod losing its CPU limit gets both."""
    with running_simulator({"nodes": NODES}) as sim:
        api = sim.api_client()
        _pod(client.CoreV1Api(api), {"requests": GUARANTEED, "limits": GUARANTEED})
        sim.settle()
        with pytest.raises(ApiException) as e:
            _json_patch(api, [{"op": "remove", "path": "/spec/containers/0/resources/limits/cpu"}])
        assert e.value.status == 422
        status = json.loads(e.value.body)
        causes = {(c["field"], c["message"]) for c in status["details"]["causes"]}
        assert (
            "spec",
            'Invalid value: "Guaranteed": Pod QOS Class may not change as a result of resizing',
        ) in causes
        assert (
            "spec.containers[0].resources.limits",
            "Forbidden: resource limits cannot be removed",
        ) in causes


def test_limit_ranger_checks_a_resize_with_403() -> None:
    """LimitRanger's SupportsAttributes admits the resize subresource of a Pod update."""
    limit_range = {
        "metadata": {"name": "lr"},
        "spec": {"limits": [{"type": "Container", "max": {"cpu": "1"}}]},
    }
    with running_simulator({"nodes": NODES}) as sim:
        core = client.CoreV1Api(sim.api_client())
        core.create_namespaced_limit_range("default", plain(limit_range))
        _pod(core, {"requests": {"cpu": "500m"}, "limits": {"cpu": "1"}})
        sim.settle()
        body = {"spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "2"}}}]}}
        with pytest.raises(ApiException) as e:
            core.patch_namespaced_pod_resize("p", "default", body)
        assert e.value.status == 403
        assert json.loads(e.value.body)["message"] == (
            'pods "p" is forbidden: maximum cpu usage per Container is 1, but limit is 2'
        )
        body = {"spec": {"containers": [{"name": "app", "resources": {"limits": {"cpu": "1"}}}]}}
        assert core.patch_namespaced_pod_resize("p", "default", body).metadata.name == "p"
