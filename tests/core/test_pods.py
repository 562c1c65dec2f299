"""Reading pod JSON (app.core.pods): containers, requests and limits, liveness."""

from __future__ import annotations

from typing import Any

from app.core.pods import (
    ContainerResources,
    app_containers,
    container_resources,
    is_live,
    is_ready,
    is_running,
    parse_time,
    plain_init_containers,
    pod_ref,
    resources_of,
)


def pod(phase: str = "Running", node: str | None = "n1", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-1", "namespace": "shop", **meta},
        "spec": {
            "nodeName": node,
            "containers": [
                {"name": "app", "resources": {"requests": {"cpu": "0.25", "memory": "64Mi"}}}
            ],
            "initContainers": [
                {"name": "setup", "resources": {"requests": {"cpu": "2"}}},
                {
                    "name": "proxy",
                    "restartPolicy": "Always",
                    "resources": {"limits": {"cpu": "100m", "memory": "lots"}},
                },
            ],
        },
        "status": {"phase": phase, "conditions": [{"type": "Ready", "status": "True"}]},
    }


def test_app_containers_are_the_containers_and_the_sidecars() -> None:
    assert [c["name"] for c in app_containers(pod())] == ["app", "proxy"]
    assert [c["name"] for c in plain_init_containers(pod())] == ["setup"]


def test_container_resources_read_quantities_and_leave_malformed_ones_unset() -> None:
    res = container_resources(pod())
    assert res == {
        "app": ContainerResources(250, 64 * 1024 * 1024, None, None),
        "proxy": ContainerResources(None, None, 100, None),
    }
    assert res["app"].requests() == {"cpu": 250, "memory": 64 * 1024 * 1024}
    assert res["proxy"].limits() == {"cpu": 100}
    assert resources_of(None) == ContainerResources()


def test_live_running_and_ready() -> None:
    assert is_live(pod()) and is_running(pod()) and is_ready(pod())
    assert not is_live(pod(node=None))  # not scheduled
    assert not is_live(pod("Succeeded")) and not is_live(pod("Failed"))
    deleting = pod(deletionTimestamp="2024-07-01T12:00:00Z")
    assert not is_live(deleting) and not is_running(deleting)
    pending = pod("Pending")
    assert is_live(pending) and not is_running(pending) and not is_ready(pending)
    unready = pod()
    unready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert is_running(unready) and not is_ready(unready)


def test_times_and_refs() -> None:
    assert parse_time("1970-01-01T00:01:00+00:00") == 60.0
    assert parse_time("yesterday") is None and parse_time(None) is None
    assert pod_ref(pod()) == "shop/web-1"
