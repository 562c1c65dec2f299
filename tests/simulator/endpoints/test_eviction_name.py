"""An Eviction whose name differs from the pod's in the URL is refused with kube-apiserver's
own words (pkg/registry/core/pod/storage/eviction.go EvictionREST.Create)."""

from __future__ import annotations

import json

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.testing import EMPTY, running_simulator
from tests.support.json_bodies import plain


def test_a_name_mismatch_is_400_in_kubes_words() -> None:
    with running_simulator(EMPTY) as sim:
        core = client.CoreV1Api(sim.api_client())
        spec = {"containers": [{"name": "c", "image": "x:1"}]}
        core.create_namespaced_pod("default", plain({"metadata": {"name": "p"}, "spec": spec}))
        body = {"metadata": {"name": "other", "namespace": "default"}}
        with pytest.raises(ApiException) as e:
            core.create_namespaced_pod_eviction("p", "default", plain(body))
        assert e.value.status == 400
        status = json.loads(e.value.body)
        assert (status["reason"], status["message"]) == (
            "BadRequest",
            "name in URL does not match name in Eviction object",
        )
