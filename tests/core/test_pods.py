"""Reading pod JSON into a view (app.core.pods.PodView): containers, requests and limits,
liveness, conditions and container statuses, and fields of the wrong type read as absent."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.pods import (
    CONTAINER,
    INIT,
    SIDECAR,
    ContainerResources,
    ContainerStatus,
    PodView,
    Termination,
    parse_time,
    resources_of,
)
from app.core.quantity import amount


def pod(phase: str = "Running", node: str | None = "n1", **meta: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1", **meta},
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
                    "resizePolicy": [
                        {"resourceName": "memory", "restartPolicy": "RestartContainer"}
                    ],
                },
            ],
        },
        "status": {
            "phase": phase,
            "startTime": "1970-01-01T00:01:00+00:00",
            "conditions": [
                {"type": "Ready", "status": "True"},
                {"type": "PodResizePending", "status": "False", "reason": "Deferred"},
            ],
        },
    }


def test_containers_sidecars_and_plain_init_containers() -> None:
    view = PodView.parse(pod())
    assert [(c.name, c.kind) for c in view.containers] == [
        ("app", CONTAINER),
        ("setup", INIT),
        ("proxy", SIDECAR),
    ]
    assert [c.name for c in view.app_containers()] == ["app", "proxy"]
    assert [c.name for c in view.plain_init_containers()] == ["setup"]
    assert [c.memory_resize_policy for c in view.containers] == [None, None, "RestartContainer"]


def test_resources_read_quantities_and_leave_malformed_ones_unset() -> None:
    res = PodView.parse(pod()).resources()
    assert res == {
        "app": ContainerResources(250, 64 * 1024 * 1024, None, None),
        "proxy": ContainerResources(None, None, 100, None),
    }
    assert res["app"].requests() == {"cpu": 250, "memory": 64 * 1024 * 1024}
    assert res["proxy"].limits() == {"cpu": 100}
    assert resources_of(None) == ContainerResources()
    assert PodView.parse(pod()).pod_resources is None
    with_pod_level = pod()
    with_pod_level["spec"]["resources"] = {"limits": {"memory": "1Gi"}}
    assert PodView.parse(with_pod_level).pod_resources == ContainerResources(
        None, None, None, 2**30
    )


def test_live_running_and_ready() -> None:
    def view(*args: Any, **kwargs: Any) -> PodView:
        return PodView.parse(pod(*args, **kwargs))

    assert view().is_live and view().is_running and view().is_ready
    assert not view(node=None).is_live  # not scheduled
    assert not view("Succeeded").is_live and not view("Failed").is_live
    deleting = view(deletionTimestamp="2024-07-01T12:00:00Z")
    assert deleting.deleting and not deleting.is_live and not deleting.is_running
    pending = view("Pending")
    assert pending.is_live and not pending.is_running and not pending.is_ready
    unready = pod()
    unready["status"]["conditions"] = [{"type": "Ready", "status": "False"}]
    assert PodView.parse(unready).is_running and not PodView.parse(unready).is_ready


def test_only_true_conditions_are_kept() -> None:
    view = PodView.parse(pod())
    assert view.condition("Ready") is not None
    assert view.condition("PodResizePending") is None  # status False


def test_times_refs_and_identity() -> None:
    assert parse_time("1970-01-01T00:01:00+00:00") == 60.0
    assert parse_time("yesterday") is None and parse_time(None) is None and parse_time(5) is None
    view = PodView.parse(pod(resourceVersion="7"))
    assert view.ref == "shop/web-1"
    assert (view.uid, view.resource_version, view.node_name, view.start_time) == (
        "u1",
        "7",
        "n1",
        60.0,
    )


def test_container_statuses_and_their_last_termination() -> None:
    p = pod()
    p["status"]["containerStatuses"] = [
        {
            "name": "app",
            "restartCount": 2,
            "lastState": {
                "terminated": {
                    "reason": "OOMKilled",
                    "startedAt": "1970-01-01T00:00:00Z",
                    "finishedAt": "1970-01-01T00:00:30Z",
                }
            },
        }
    ]
    p["status"]["initContainerStatuses"] = [{"name": "proxy", "restartCount": 0}]
    assert PodView.parse(p).statuses == (
        ContainerStatus("app", False, 2, Termination("OOMKilled", 0.0, 30.0)),
        ContainerStatus("proxy", True, 0, None),
    )


def test_the_wire_form_keeps_metadata_and_spec_for_the_patch_builder_not_the_status() -> None:
    p = pod()
    view = PodView.parse(p)
    assert view.wire == {"metadata": p["metadata"], "spec": p["spec"]}
    assert view.spec is p["spec"]


@pytest.mark.parametrize(
    "broken",
    [
        {},
        {"metadata": [], "spec": "x", "status": 3},
        {"spec": {"containers": {"name": "app"}, "initContainers": ["x", None]}},
        {"spec": {"containers": [{"name": 5, "resources": []}]}},
        {"status": {"conditions": "Ready", "containerStatuses": [{"restartCount": "many"}]}},
    ],
)
def test_fields_of_the_wrong_type_read_as_absent(broken: dict[str, Any]) -> None:
    view = PodView.parse(broken)
    assert not view.is_live and view.ref == "/"
    assert all(c.resources == ContainerResources() for c in view.containers)
    assert all(s.restart_count == 0 for s in view.statuses)


QUANTITY = st.one_of(
    st.integers(min_value=0, max_value=10**7).map(str),
    st.integers(min_value=0, max_value=10**7).map(lambda n: f"{n}m"),
    st.sampled_from(["0.5", "1.5Gi", "64Mi", "1e3", "2k", "-1", "lots", "", "1.5.2"]),
)


@given(cpu=QUANTITY, memory=QUANTITY)
def test_quantities_read_as_kube_apiserver_reads_them_or_as_unset(cpu: str, memory: str) -> None:
    """The view's reading is app.core.quantity.amount (the webhook's), malformed ones unset."""

    def expected(resource: str, text: str) -> int | None:
        try:
            return amount(resource, text)
        except ValueError:
            return None

    p = pod()
    p["spec"]["containers"][0]["resources"] = {
        "requests": {"cpu": cpu},
        "limits": {"memory": memory},
    }
    res = PodView.parse(p).resources()["app"]
    assert (res.cpu_request, res.memory_limit) == (expected("cpu", cpu), expected("memory", memory))


def test_labels_are_metadata_labels_when_they_are_an_object() -> None:
    from types import MappingProxyType

    assert PodView.parse({"metadata": {"labels": {"app": "web"}}}).labels == {"app": "web"}
    proxy = MappingProxyType({"app": "web"})
    assert PodView.parse({"metadata": {"labels": proxy}}).labels == {"app": "web"}
    assert PodView.parse({"metadata": {"labels": ["app"]}}).labels == {}
    assert PodView.parse({"metadata": {}}).labels == {}
    assert PodView.parse({}).labels == {}
    meta = MappingProxyType({"labels": {"app": "web"}})
    assert PodView.parse({"metadata": meta}).labels == {"app": "web"}


@given(
    st.sampled_from([None, "Pending", "Running", "Succeeded", "Failed", "Unknown"]),
    st.booleans(),
    st.lists(
        st.fixed_dictionaries(
            {
                "type": st.sampled_from(["Ready", "ContainersReady", "PodScheduled", "ready"]),
                "status": st.sampled_from(["True", "False", "Unknown"]),
            }
        ),
        max_size=5,
    ),
    st.lists(st.integers(0, 3), max_size=3),
)
def test_ready_and_restarted_are_what_the_statuses_say(
    phase: str | None, deleting: bool, conditions: list[dict[str, str]], restarts: list[int]
) -> None:
    """is_ready and restarted, found once when the pod is parsed, say what searching its
    conditions and statuses says: running, not being deleted, with a true Ready condition; some
    container's restartCount above 0."""
    meta: dict[str, object] = {"name": "web-0", "namespace": "shop"}
    if deleting:
        meta["deletionTimestamp"] = "2026-01-01T00:00:00Z"
    status: dict[str, object] = {
        "conditions": conditions,
        "containerStatuses": [{"name": f"c{i}", "restartCount": n} for i, n in enumerate(restarts)],
    }
    if phase is not None:
        status["phase"] = phase
    pod = PodView.parse({"metadata": meta, "spec": {"nodeName": "n1"}, "status": status})
    searched = pod.is_running and pod.condition("Ready") is not None
    assert pod.is_ready == searched
    assert pod.restarted == any(s.restart_count > 0 for s in pod.statuses)


# resources(), built once with the view (the recommender reads it for every pod of every run):
# the same as reading the app containers afresh, whatever the pod and however the view is made.
_cpu = st.one_of(st.none(), st.sampled_from(["100m", "1", "0.5", "lots", 3]))
_spec_container = st.fixed_dictionaries(
    {"name": st.sampled_from(["a", "b", "c", "d"])},
    optional={
        "restartPolicy": st.sampled_from(["Always", "Never", ""]),
        "resources": st.fixed_dictionaries(
            {}, optional={"requests": st.fixed_dictionaries({"cpu": _cpu, "memory": _cpu})}
        ),
    },
)


@given(
    st.lists(_spec_container, max_size=4),
    st.lists(_spec_container, max_size=4),
    st.lists(_spec_container, max_size=4),
)
def test_resources_equal_the_app_containers_read_afresh(
    containers: list[dict[str, Any]], inits: list[dict[str, Any]], others: list[dict[str, Any]]
) -> None:
    import dataclasses

    view = PodView.parse(
        {"metadata": {"name": "p"}, "spec": {"containers": containers, "initContainers": inits}}
    )
    fresh = {c.name: c.resources for c in view.app_containers()}
    assert view.resources() == fresh
    # a view made anew from another's fields reads its own containers, not the other's
    other = PodView.parse({"metadata": {"name": "q"}, "spec": {"containers": others}})
    moved = dataclasses.replace(view, containers=other.containers)
    assert moved.resources() == {c.name: c.resources for c in other.app_containers()}
    assert view == dataclasses.replace(view)  # the cache takes no part in comparisons
