"""The scaler job in-process against the simulator: history that outlives a leader, Events on the
target, and API errors that stay with their own scaler (issues 7 and 11).

Behaviour time comes from the job's injectable clock, so windows of minutes take no real time.
"""

from __future__ import annotations

import http.client
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from kubernetes import client
from sqlalchemy import select

from app.jobs.scaler import ScalerJob
from app.kube.cluster import ClusterView
from app.kube.scale import ScaleClient
from app.simulator.simulator import Simulator
from app.store.extensions import db
from app.store.models import AuditEvent, Scaler
from app.store.session import app_sessions
from tests.support.json_bodies import plain
from tests.support.kubectl import describe_events
from tests.support.processes import wait_for
from tests.support.scaler_runs import NS, add_scaler


@pytest.fixture
def api(module_sim: Simulator) -> Iterator[Any]:
    a = module_sim.api_client()
    yield a
    a.close()


@pytest.fixture
def cluster(api: Any, module_sim: Simulator) -> Iterator[ClusterView]:
    view = ClusterView(api)
    view.nodes.start()  # the only cache the scaler job reads
    assert view.nodes.wait_synced(30)
    yield view
    for node in ("worker-0", "worker-1"):
        module_sim.uncordon(node)
    view.nodes.stop()


class Clock:
    def __init__(self, now: float = 1_000_000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def scaler_row(app: Flask, name: str) -> Scaler:
    with app.app_context():
        row = db.session.scalar(select(Scaler).where(Scaler.name == name))
        assert row is not None
        db.session.expunge(row)
        return row


def scale_audits(app: Flask, ref: str) -> list[tuple[int, int]]:
    with app.app_context():
        rows = db.session.scalars(
            select(AuditEvent)
            .where(AuditEvent.action == "scale", AuditEvent.object_ref == ref)
            .order_by(AuditEvent.id)
        )
        return [(e.details["from"], e.details["to"]) for e in rows]


def replicas(api: Any, name: str) -> int:
    return int(client.AppsV1Api(api).read_namespaced_deployment_scale(name, NS).spec.replicas)


def set_replicas(api: Any, name: str, n: int) -> None:
    client.AppsV1Api(api).patch_namespaced_deployment_scale(name, NS, {"spec": {"replicas": n}})


def cordon(sim: Simulator, cluster: ClusterView, *nodes: str) -> None:
    for node in nodes:
        sim.cordon(node)
    wait_for(
        lambda: (
            sum(bool((n.get("spec") or {}).get("unschedulable")) for n in cluster.nodes.items())
            == len(nodes)
        ),
        10,
        "the node cache to see the cordon",
    )


def new_job(app: Flask, api: Any, cluster: ClusterView, clock: Clock) -> ScalerJob:
    """What a new leader builds: its own job and scale client over the same database."""
    return ScalerJob(app_sessions(app), cluster, ScaleClient(api), interval=1.0, clock=clock)


def test_a_new_leader_keeps_the_stabilization_window_and_the_rate_limit(
    app: Flask, api: Any, module_sim: Simulator, cluster: ClusterView
) -> None:
    set_replicas(api, "coredns", 2)
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": 300,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
        }
    }
    add_scaler(app, "dns", "coredns", behavior)
    clock = Clock()
    t0 = clock.now
    assert (
        new_job(app, api, cluster, clock)
        .run_once(lambda: True)
        .endswith("1 changed, 0 with errors")
    )
    assert replicas(api, "coredns") == 5  # scale-up defaults: 2 -> 5 at once (4 pods or 100%)

    cordon(module_sim, cluster, "worker-0", "worker-1")  # proposal now 3
    clock.now = t0 + 10
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 5
    assert "stabilized" in (scaler_row(app, "dns").last_message or "")

    # A new leader (new job, same database) inside the window: the proposals of 5 still count.
    clock.now = t0 + 200
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 5

    # Past the window: down, but one pod per 60 s.
    clock.now = t0 + 301
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 4
    clock.now = t0 + 330  # yet another leader within the period: the change made is remembered
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 4
    clock.now = t0 + 362
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 3
    assert scale_audits(app, f"{NS}/coredns") == [(2, 5), (5, 4), (4, 3)]


class Killed(BaseException):
    """The process dying: nothing after it runs, no handler catches it."""


class DiesAfterScaling(ScaleClient):
    def record_event(self, *args: Any) -> None:
        raise Killed


def test_a_leader_killed_after_scaling_leaves_history_and_audit_together(
    app: Flask, api: Any, module_sim: Simulator, cluster: ClusterView
) -> None:
    set_replicas(api, "coredns", 5)
    behavior = {
        "scaleDown": {
            "stabilizationWindowSeconds": 0,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
        }
    }
    add_scaler(app, "dns", "coredns", behavior)
    cordon(module_sim, cluster, "worker-0", "worker-1")
    clock = Clock()
    dying = ScalerJob(app_sessions(app), cluster, DiesAfterScaling(api), interval=1.0, clock=clock)
    with pytest.raises(Killed):
        dying.run_once(lambda: True)
    assert replicas(api, "coredns") == 4
    assert scale_audits(app, f"{NS}/coredns") == [(5, 4)]
    assert scaler_row(app, "dns").history["changes"] == [[clock.now, -1]]
    clock.now += 30  # the next leader, within the period: no second step
    new_job(app, api, cluster, clock).run_once(lambda: True)
    assert replicas(api, "coredns") == 4


def test_a_change_is_a_kubernetes_event_on_the_target(
    app: Flask, api: Any, cluster: ClusterView
) -> None:
    core = client.CoreV1Api(api)

    def ours() -> dict[str, Any]:
        return {
            e.metadata.name: e
            for e in core.list_namespaced_event(NS).items
            if e.reason == "RightsizerScaled" and e.involved_object.name == "coredns"
        }

    set_replicas(api, "coredns", 2)
    before = set(ours())
    add_scaler(app, "dns", "coredns", None)
    new_job(app, api, cluster, Clock()).run_once(lambda: True)
    assert replicas(api, "coredns") == 5
    [event] = [e for name, e in ours().items() if name not in before]
    assert event.involved_object.kind == "Deployment"
    assert event.involved_object.api_version == "apps/v1"
    assert event.type == "Normal"
    assert event.message.startswith("scaled from 2 to 5 replicas (5 schedulable nodes")
    new_job(app, api, cluster, Clock()).run_once(lambda: True)  # nothing to change: no event
    assert len(ours()) == len(before) + 1


def test_kubectl_describe_lists_the_scaled_event(
    app: Flask, api: Any, module_sim: Simulator, cluster: ClusterView
) -> None:
    """kubectl finds an object's Events by involvedObject name, namespace, kind and uid: the
    Event refers to the Deployment by uid and resourceVersion, as kube's event recorder does."""
    core = client.CoreV1Api(api)

    def ours() -> dict[str, Any]:
        selector = "reportingComponent=rightsizer,reason=RightsizerScaled"
        return {
            e.metadata.name: e
            for e in core.list_namespaced_event(NS, field_selector=selector).items
        }

    set_replicas(api, "coredns", 3)
    before = set(ours())
    add_scaler(app, "dns", "coredns", None)
    new_job(app, api, cluster, Clock()).run_once(lambda: True)
    deployment = client.AppsV1Api(api).read_namespaced_deployment("coredns", NS)
    [event] = [e for name, e in ours().items() if name not in before]
    ref = event.involved_object
    assert (ref.api_version, ref.kind, ref.name, ref.namespace) == (
        "apps/v1",
        "Deployment",
        "coredns",
        NS,
    )
    assert ref.uid == deployment.metadata.uid
    assert int(ref.resource_version) >= 1  # the Deployment's, as the scale call returned it
    lines = describe_events(module_sim, "deployment", "coredns", NS)
    assert any(
        line.startswith("Normal") and "RightsizerScaled" in line and "scaled from 3 to 5" in line
        for line in lines
    ), lines


class FaultyProxy:
    """Forwards to the simulator, but answers `status` for paths containing `blocked`: an API
    server that refuses one object (RBAC, an admission error, a 500) and serves the rest."""

    def __init__(self, upstream: str, blocked: str, status: int) -> None:
        target = urlsplit(upstream)
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def _any(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                if blocked in self.path:
                    outer.refused += 1
                    data = json.dumps(
                        {
                            "kind": "Status",
                            "apiVersion": "v1",
                            "status": "Failure",
                            "message": "refused by the test",
                            "code": status,
                        }
                    ).encode()
                    self.send_response(status)
                    self.send_header("Content-Type", "application/json")
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                conn = http.client.HTTPConnection(target.hostname, target.port, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() != "host"}
                conn.request(self.command, self.path, body or None, headers)
                resp = conn.getresponse()
                data = resp.read()
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                conn.close()

            do_GET = do_PATCH = do_POST = do_PUT = _any

            def log_message(self, *args: Any) -> None:
                pass

        self.refused = 0
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def api_client(self, via: Any) -> Any:
        cfg = client.Configuration()
        cfg.host = self.url
        cfg.api_key = dict(via.configuration.api_key)
        cfg.api_key_prefix = dict(via.configuration.api_key_prefix)
        return client.ApiClient(cfg)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.mark.parametrize("status", [403, 500])
def test_an_api_error_on_one_target_does_not_stop_the_others(
    app: Flask, api: Any, module_sim: Simulator, cluster: ClusterView, status: int
) -> None:
    set_replicas(api, "coredns", 2)
    proxy = FaultyProxy(module_sim.url, "/deployments/coredns", status)
    via_proxy = proxy.api_client(api)
    try:
        add_scaler(app, "a-refused", "coredns", None)  # first by name: runs before the other
        add_scaler(app, "b-web", "frontend", None)
        client.AppsV1Api(api).create_namespaced_deployment(
            NS,
            plain(
                {
                    "metadata": {"name": "frontend"},
                    "spec": {
                        "replicas": 1,
                        "selector": {"matchLabels": {"app": "frontend-test"}},
                        "template": {
                            "metadata": {"labels": {"app": "frontend-test"}},
                            "spec": {"containers": [{"name": "c", "image": "nginx"}]},
                        },
                    },
                }
            ),
        )
        job = ScalerJob(
            app_sessions(app), cluster, ScaleClient(via_proxy), interval=1.0, clock=Clock()
        )
        summary = job.run_once(lambda: True)
        assert (
            summary
            == f"2 scalers over {len(cluster.nodes.items())} nodes: 1 changed, 1 with errors"
        )
        assert proxy.refused >= 1
        assert replicas(api, "frontend") == 5
        assert replicas(api, "coredns") == 2
        assert f"HTTP {status}" in (scaler_row(app, "a-refused").last_message or "")
    finally:
        client.AppsV1Api(api).delete_namespaced_deployment("frontend", NS)
        via_proxy.close()
        proxy.close()
