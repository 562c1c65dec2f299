"""What the updater sends (app.core.bodies): the resize patch and the Eviction, in wire form."""

from __future__ import annotations

from app.core.bodies import ContainerResize, EvictionBody, ResizeBody
from app.core.quantity import amount


def test_an_eviction_names_the_pod_and_with_a_uid_only_that_pod() -> None:
    assert EvictionBody("shop", "web-1").to_dict() == {
        "apiVersion": "policy/v1",
        "kind": "Eviction",
        "metadata": {"name": "web-1", "namespace": "shop"},
    }
    assert EvictionBody("shop", "web-1", "u1").to_dict()["deleteOptions"] == {
        "preconditions": {"uid": "u1"}
    }


def test_a_resize_sends_sidecars_under_init_containers_and_limits_only_when_set() -> None:
    body = ResizeBody(
        (ContainerResize("app", {"cpu": 250, "memory": 2**28}, {"memory": 2**29}),),
        (ContainerResize("proxy", {"cpu": 50}, {}),),
    )
    assert body.to_dict() == {
        "spec": {
            "containers": [
                {
                    "name": "app",
                    "resources": {
                        "requests": {"cpu": "250m", "memory": "256Mi"},
                        "limits": {"memory": "512Mi"},
                    },
                }
            ],
            "initContainers": [{"name": "proxy", "resources": {"requests": {"cpu": "50m"}}}],
        }
    }
    assert ResizeBody((ContainerResize("app", {"cpu": 1}, {}),)).to_dict() == {
        "spec": {"containers": [{"name": "app", "resources": {"requests": {"cpu": "1m"}}}]}
    }


def test_the_values_sent_read_back_as_the_amounts_given() -> None:
    c = ContainerResize("app", {"cpu": 1234, "memory": 5 * 10**9 + 1}, {"cpu": 2000})
    resources = c.to_dict()["resources"]
    assert {r: amount(r, v) for r, v in resources["requests"].items()} == c.requests
    assert {r: amount(r, v) for r, v in resources["limits"].items()} == c.limits
