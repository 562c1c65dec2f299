"""metav1.Time and MicroTime are stored as kube-apiserver writes them (UTC, `Z`; MicroTime with
six fractional digits), whatever offset the client sent: the official Python client sends a
Lease's renewTime as `datetime.isoformat()` (`+00:00`), and a leader-election client comparing
the text it wrote with the text it reads must see what a real cluster returns."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

from kubernetes import client

from app.simulator.testing import EMPTY, running_simulator
from tests.support.simulators import send


def test_lease_micro_times_are_written_with_z() -> None:
    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        renew = datetime(2026, 12, 6, 12, 30, 5, 123456, tzinfo=timezone(timedelta(hours=2)))
        body = {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"name": "leader"},
            "spec": {
                "holderIdentity": "a",
                "leaseDurationSeconds": 15,
                "acquireTime": "2026-12-06T10:30:05.000000+00:00",
                "renewTime": renew.isoformat(),
            },
        }
        out = send(api, "POST", "/apis/coordination.k8s.io/v1/namespaces/default/leases", body)
        assert out["spec"]["acquireTime"] == "2026-12-06T10:30:05.000000Z"
        assert out["spec"]["renewTime"] == "2026-12-06T10:30:05.123456Z"
        coordination = client.CoordinationV1Api(api)
        now = datetime(2026, 12, 6, 11, 0, 0, 1, tzinfo=UTC)
        coordination.patch_namespaced_lease(
            "leader", "default", {"spec": {"renewTime": now.isoformat()}}
        )
        raw = send(
            api, "GET", "/apis/coordination.k8s.io/v1/namespaces/default/leases/leader", None
        )
        assert raw["spec"]["renewTime"] == "2026-12-06T11:00:00.000001Z"


def test_times_are_written_in_utc_to_the_second() -> None:
    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        patch = {
            "status": {
                "conditions": [
                    {
                        "type": "Ready",
                        "status": "True",
                        "lastTransitionTime": "2026-12-06T12:00:00.5+01:00",
                    }
                ]
            }
        }
        node = core.list_node().items[0].metadata.name
        core.patch_node_status(node, patch)
        raw = send(api, "GET", f"/api/v1/nodes/{node}", None)
        ready = [c for c in raw["status"]["conditions"] if c["type"] == "Ready"]
        assert ready[0]["lastTransitionTime"] == "2026-12-06T11:00:00Z"
