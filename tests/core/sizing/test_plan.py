"""The updater's planning (app.core.sizing.plan), on pod and node views and core values only."""

from __future__ import annotations

from typing import Any

from app.core.bodies import ContainerResize, ResizeBody
from app.core.nodes import NodeView
from app.core.pods import PodView
from app.core.policy import Policy
from app.core.recommendation import Recommendation
from app.core.resources import Resources
from app.core.sizing.fit import NodeRoom
from app.core.sizing.plan import (
    Candidate,
    change_details,
    configured_replicas,
    describe,
    holds,
    node_rooms,
    not_resizable,
    placement,
    resize_body,
    stuck_resize,
    workload_candidates,
)
from app.core.sizing.priority import UpdaterSettings
from app.core.update_mode import UpdateMode
from app.core.workload_key import WorkloadKey

W = WorkloadKey("shop", "Deployment", "web")
MI = 1024 * 1024
NOW = 1_000_000.0


def pod(name: str = "web-1", **fields: Any) -> PodView:
    """`pod_json`, read as the pod cache reads it."""
    return PodView.parse(pod_json(name, **fields))


def pod_json(
    name: str = "web-1",
    cpu: str = "100m",
    memory: str = "100Mi",
    limits: dict[str, str] | None = None,
    node: str = "n1",
    phase: str = "Running",
    started: str = "1970-01-01T00:00:00+00:00",
    **extra: Any,
) -> dict[str, Any]:
    resources: dict[str, Any] = {"requests": {"cpu": cpu, "memory": memory}}
    if limits:
        resources["limits"] = limits
    return {
        "metadata": {"name": name, "namespace": "shop", "uid": f"uid-{name}", **extra},
        "spec": {"nodeName": node, "containers": [{"name": "app", "resources": resources}]},
        "status": {
            "phase": phase,
            "startTime": started,
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


def rec(cpu: int, memory: int) -> Recommendation:
    r = Resources(cpu, memory)
    return Recommendation(r, Resources(cpu // 2, memory // 2), Resources(cpu * 2, memory * 2), r)


def node(name: str, cpu: str = "4", memory: str = "8Gi", **spec: Any) -> NodeView:
    return NodeView.parse(node_json(name, cpu, memory, **spec))


def node_json(name: str, cpu: str = "4", memory: str = "8Gi", **spec: Any) -> dict[str, Any]:
    return {
        "metadata": {"name": name, "labels": {"zone": "a"}},
        "spec": spec,
        "status": {
            "allocatable": {"cpu": cpu, "memory": memory},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }


POLICY = Policy("p", "shop", "Deployment", "web", update_mode=UpdateMode.RECREATE)


def candidates(pods: list[PodView], target: Recommendation) -> list[Candidate]:
    recs = {"app": target}
    return workload_candidates(W, pods, POLICY, recs, None, (), NOW, UpdaterSettings())


def test_node_rooms_subtract_running_pods_and_skip_unusable_nodes() -> None:
    nodes = [
        node("n1"),
        node("cordoned", unschedulable=True),
        NodeView.parse(
            {**node_json("notready"), "status": {"allocatable": {"cpu": "4"}, "conditions": []}}
        ),
        node("bad", cpu="lots"),
    ]
    pods = [pod(cpu="500m", memory="1Gi"), pod("done", cpu="3", phase="Succeeded")]
    rooms = node_rooms(nodes, pods)
    assert [r.name for r in rooms] == ["n1"]
    assert (rooms[0].cpu_free, rooms[0].memory_free) == (3500, 7 * 1024 * MI)
    assert rooms[0].labels == (("zone", "a"),)


def test_a_pod_far_below_its_target_is_a_candidate_and_scale_ups_come_first() -> None:
    down = pod("big", cpu="2", memory="2Gi")
    up = pod("small", cpu="10m", memory="10Mi")
    found = candidates([down, up], rec(500, 500 * MI))
    assert [c.pod.name for c in found] == ["small", "big"]
    assert found[0].priority.scale_up and not found[1].priority.scale_up
    assert found[0].reason == "request outside the recommended range"
    assert not found[0].pending
    assert found[0].patch.updates[0].requests == {"cpu": 500, "memory": 500 * MI}


def test_a_pod_that_holds_its_target_or_is_being_deleted_is_no_candidate() -> None:
    holding = pod("holding", cpu="500m", memory="500Mi")
    deleting = pod("deleting", cpu="10m", deletionTimestamp="1970-01-01T00:00:00Z")
    assert candidates([holding, deleting], rec(500, 500 * MI)) == []


def test_a_young_pod_within_its_range_waits_for_its_minimum_lifetime() -> None:
    young = pod(cpu="400m", memory="400Mi", started="1970-01-12T13:46:00+00:00")  # ~40 s before
    assert candidates([young], rec(500, 500 * MI)) == []
    old = pod(cpu="400m", memory="400Mi")
    [c] = candidates([old], rec(500, 500 * MI))
    assert c.reason.startswith("requests differ from the target by")


def test_placement_takes_the_new_requests_or_finds_no_room() -> None:
    [c] = candidates([pod(cpu="100m", memory="100Mi")], rec(1000, 500 * MI))
    room = [NodeRoom("n1", 1000, 1024 * MI, (), ())]
    placed = placement(c, room)
    assert placed is not None and (placed[0].cpu_free, placed[0].memory_free) == (100, 624 * MI)
    assert placement(c, [NodeRoom("n1", 800, 1024 * MI, (), ())]) is None


def test_a_resize_that_changes_the_qos_class_is_known_refused() -> None:
    guaranteed = pod(cpu="100m", memory="100Mi", limits={"cpu": "100m", "memory": "100Mi"})
    policy = Policy(
        "p",
        "shop",
        "Deployment",
        "web",
        update_mode=UpdateMode.IN_PLACE_OR_RECREATE,
        container_policies=(),
    )
    recs = {"app": rec(300, 100 * MI)}
    [c] = workload_candidates(W, [guaranteed], policy, recs, None, (), NOW, UpdaterSettings())
    # RequestsAndLimits keeps the ratio, so the pod stays Guaranteed: resizable on 1.33.
    assert not_resizable(c, guaranteed, 33) is None
    # The same values sent to a pod that is Burstable now would make it Guaranteed.
    burstable = pod(cpu="100m", memory="100Mi", limits={"cpu": "100m", "memory": "200Mi"})
    assert (
        not_resizable(c, burstable, 33)
        == "resize would change the QoS class Burstable -> Guaranteed"
    )


def test_resize_body_addresses_sidecars_under_init_containers() -> None:
    p = pod_json(cpu="10m", memory="10Mi")
    p["spec"]["initContainers"] = [
        {
            "name": "proxy",
            "restartPolicy": "Always",
            "resources": {"requests": {"cpu": "10m", "memory": "10Mi"}},
        }
    ]
    recs = {"app": rec(500, 500 * MI), "proxy": rec(200, 100 * MI)}
    [c] = workload_candidates(W, [PodView.parse(p)], POLICY, recs, None, (), NOW, UpdaterSettings())
    body = resize_body(c)
    assert body == ResizeBody(
        (ContainerResize("app", {"cpu": 500, "memory": 500 * MI}, {}),),
        (ContainerResize("proxy", {"cpu": 200, "memory": 100 * MI}, {}),),
    )
    assert body.to_dict() == {
        "spec": {
            "containers": [
                {"name": "app", "resources": {"requests": {"cpu": "500m", "memory": "500Mi"}}}
            ],
            "initContainers": [
                {
                    "name": "proxy",
                    "resources": {"requests": {"cpu": "200m", "memory": "100Mi"}},
                }
            ],
        }
    }
    details = change_details(c)
    assert details["workload"] == str(W)
    assert describe(details["after"]) == "app[cpu=500m, memory=500Mi] proxy[cpu=200m, memory=100Mi]"
    # audit messages are read by people: memory rounded up to whole MiB, whole cores plain
    odd = {"app": {"requests": {"cpu": 2000, "memory": 380258472}}}
    assert describe(odd) == "app[cpu=2, memory=363Mi]"


def test_configured_replicas_fall_back_to_the_pods_seen() -> None:
    assert configured_replicas({"spec": {"replicas": 5}}, [pod()]) == 5
    assert configured_replicas(None, [pod(), pod("web-2")]) == 2
    assert configured_replicas({"spec": {"replicas": "5"}}, [pod()]) == 1


def test_a_stuck_resize_reads_the_kubelets_conditions() -> None:
    after = {"app": {"requests": {"cpu": 500}, "limits": {}}}
    p = pod_json(cpu="100m")
    p["status"]["conditions"].append(
        {"type": "PodResizePending", "status": "True", "reason": "Infeasible", "message": "no"}
    )
    assert not holds(PodView.parse(p), after)
    assert stuck_resize(PodView.parse(p), after) == ("Infeasible", "no")
    done = pod(cpu="500m")
    assert holds(done, after)
    assert stuck_resize(done, after)[0] == "Done"
