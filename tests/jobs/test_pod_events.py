"""Events the updater writes on pods show in `kubectl describe pod` (issue #15): the Event refers
to the pod by uid and resourceVersion, as kube's event recorder writes it."""

from __future__ import annotations

from kubernetes import client

from app.kube.actions import PodActions
from app.simulator.simulator import Simulator
from tests.support.kubectl import describe_events


def test_kubectl_describe_pod_lists_the_event_rightsizer_wrote(sim: Simulator) -> None:
    api = sim.api_client()
    try:
        core = client.CoreV1Api(api)
        listed = core.list_namespaced_pod("kube-system", label_selector="k8s-app=kube-dns")
        name = listed.items[0].metadata.name
        actions = PodActions(api)
        pod = actions.current("kube-system", name)
        assert pod is not None
        actions.record_event(pod, "RightsizerResized", "resized in place: cpu 100m -> 50m")
        [event] = core.list_namespaced_event(
            "kube-system", field_selector="reason=RightsizerResized"
        ).items
        ref = event.involved_object
        assert (ref.api_version, ref.kind, ref.name) == ("v1", "Pod", name)
        assert ref.uid == pod.uid
        assert ref.resource_version == pod.resource_version
        assert event.reporting_component == "rightsizer"
        lines = describe_events(sim, "pod", name, "kube-system")
        assert any(
            line.startswith("Normal") and "RightsizerResized" in line and "cpu 100m" in line
            for line in lines
        ), lines
    finally:
        api.close()
