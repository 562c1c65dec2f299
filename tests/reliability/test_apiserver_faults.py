"""Informers against a simulated API server that drops watches, answers 429 and 500, and has
compacted its history (410 Gone): the cache re-lists once and converges to the server's objects."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from flask import Flask
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.kube.client import DEFAULT_TIMEOUT, api_client
from app.kube.informer import Informer
from app.simulator.testing import EMPTY, running_simulator
from app.store.session import app_sessions
from tests.support.json_bodies import plain
from tests.support.processes import wait_for

NS = "app"


class Faulty:
    """Wraps a typed list function: queued errors for the next watch calls, a gate holding the
    next watch back, and the open watch response so the test can drop it."""

    def __init__(self, fn: Any) -> None:
        self.fn = fn
        self.watch_errors: list[int] = []
        self.gate = threading.Event()
        self.gate.set()
        self.calls: Counter[str] = Counter()
        self.raised: list[int] = []
        self.watch: Any = None

    def __call__(self, **kwargs: Any) -> Any:
        kind = "watch" if kwargs.get("watch") else "list"
        self.calls[kind] += 1
        if kind == "watch":
            if self.watch_errors:
                status = self.watch_errors.pop(0)
                self.raised.append(status)
                raise ApiException(status=status, reason="injected")
            assert self.gate.wait(30)
        resp = self.fn(**kwargs)
        if kind == "watch":
            self.watch = resp
        return resp

    def drop_watch(self) -> None:
        sock = self.watch.connection.sock
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def cm(name: str) -> dict[str, Any]:
    return {"metadata": {"name": name}, "data": {"k": name}}


def server_names(core: client.CoreV1Api) -> set[str]:
    return {c.metadata.name for c in core.list_namespaced_config_map(NS).items}


def test_dropped_watch_then_429_500_and_410_gone_relist_once_and_converge() -> None:
    with running_simulator(EMPTY, watch_window=5) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        core.create_namespace(plain({"metadata": {"name": NS}}))
        for i in range(3):
            core.create_namespaced_config_map(NS, plain(cm(f"before-{i}")))
        faulty = Faulty(core.list_config_map_for_all_namespaces)
        inf = Informer("configmaps", faulty, page_size=2)
        inf.start()
        try:
            assert inf.wait_synced(30)
            wait_for(lambda: faulty.watch is not None, 30, "the first watch")
            core.create_namespaced_config_map(NS, plain(cm("live")))
            wait_for(lambda: inf.get(NS, "live"), 30, "a live event")
            assert inf.lists == 1

            # The connection drops; the server then answers 429 and 500; meanwhile more
            # changes happen than its watch window keeps, so resuming gives 410 Gone.
            faulty.gate.clear()
            faulty.watch_errors = [429, 500]
            sim.reset_stats()
            faulty.drop_watch()
            for i in range(15):  # the window keeps 5 to 10 events
                core.create_namespaced_config_map(NS, plain(cm(f"during-{i}")))
            core.delete_namespaced_config_map("before-0", NS)
            core.patch_namespaced_config_map("before-1", NS, {"data": {"k": "changed"}})
            faulty.gate.set()

            wait_for(lambda: inf.lists == 2, 60, "a re-list after 410 Gone")
            assert faulty.raised == [429, 500]
            expected = server_names(core)
            wait_for(lambda: {n for _, n in inf.objects} == expected, 30, "convergence")
            assert inf.get(NS, "before-0") is None
            assert inf.get(NS, "before-1")["data"] == {"k": "changed"}
            # One LIST for the recovery (resourceVersion=0: served whole from the watch cache, as
            # kube-apiserver does), not one per error; the other is the test's server_names().
            assert sim.stats()["byResource"]["configmaps"]["list"] == 2

            # Afterwards the watch carries on: a new object arrives without another LIST.
            core.create_namespaced_config_map(NS, plain(cm("after")))
            wait_for(lambda: inf.get(NS, "after"), 30, "an event after recovery")
            assert inf.lists == 2
        finally:
            inf.stop()
            api.close()


def via(proxy: Any, tmp_path: Path, timeout: tuple[float, float] = DEFAULT_TIMEOUT) -> Any:
    """The official client as rightsizer builds it (app.kube.client, `timeout` on every request),
    with every request going through `proxy`."""
    from app.simulator.simulator import write_kubeconfig

    path = tmp_path / "via-proxy.kubeconfig"
    write_kubeconfig(path, proxy.url)
    return api_client(str(path), timeout=timeout)


def test_slow_answers_then_an_outage_the_informer_backs_off_and_converges(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Every request takes 0.5 s; then the API server is unreachable for 6 s (open watch reset,
    new requests dropped) while objects change. The informer waits out the slow answers, retries
    the outage with growing pauses (not a tight loop), and converges afterwards."""
    from tests.support.proxies import ApiProxy

    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        core.create_namespace(plain({"metadata": {"name": NS}}))
        for i in range(3):
            core.create_namespaced_config_map(NS, plain(cm(f"before-{i}")))
        proxy = ApiProxy("127.0.0.1", int(sim.url.rsplit(":", 1)[1]))
        proxy.delay = 0.5
        slow_api = via(proxy, tmp_path)
        inf = Informer("configmaps", client.CoreV1Api(slow_api).list_config_map_for_all_namespaces)
        inf.start()
        try:
            assert inf.wait_synced(30)
            assert {n for _, n in inf.objects} == server_names(core)
            core.create_namespaced_config_map(NS, plain(cm("slow")))
            wait_for(lambda: inf.get(NS, "slow"), 30, "an event through the slow proxy")

            caplog.clear()  # before the drop: its first retry is logged at once
            proxy.block = lambda method, path: True
            assert proxy.drop_open() >= 1  # the open watch
            core.delete_namespaced_config_map("before-0", NS)
            core.create_namespaced_config_map(NS, plain(cm("during")))
            time.sleep(6)
            retries = [
                r.getMessage()
                for r in caplog.records
                if r.name == "app.kube.informer" and "retrying in" in r.getMessage()
            ]
            # Back-off doubling from 1 s: pauses of 1 + 2 + 4 s (with jitter) fit in 6 s at
            # most, so 2 to 4 attempts; a client retrying without pause would make hundreds.
            assert 2 <= len(retries) <= 4, retries
            delays = [float(m.rsplit("retrying in ", 1)[1].rstrip("s")) for m in retries]
            assert delays == [2.0**i for i in range(len(delays))], delays
            # Each attempt is one request, plus the client library's own 3 quick retries.
            assert sum(proxy.blocked.values()) <= 4 * len(retries), proxy.blocked
            assert inf.get(NS, "before-0") is not None  # the cache is stale: it cannot know yet

            proxy.block = lambda method, path: False
            expected = server_names(core)
            wait_for(lambda: {n for _, n in inf.objects} == expected, 60, "convergence")
            assert inf.get(NS, "before-0") is None and inf.get(NS, "during") is not None
        finally:
            inf.stop()
            slow_api.close()
            proxy.close()
            api.close()


def test_a_watch_whose_connection_goes_silent_is_given_up_and_resumed(tmp_path: Path) -> None:
    """The network loses everything without a reset (a peer that vanished): the open watch goes
    silent for good and new requests hang. The informer gives the silent watch up once it has
    been quiet longer than the server's watch timeout plus the grace, is not live meanwhile,
    and once the network heals resumes from its resourceVersion (no new LIST) with every change
    made in between. One-shot calls through the same client fail after their read timeout
    instead of hanging. Without timeouts, the informer would wait on the dead watch forever."""
    from tests.support.proxies import ApiProxy

    with running_simulator(EMPTY) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        core.create_namespace(plain({"metadata": {"name": NS}}))
        core.create_namespaced_config_map(NS, plain(cm("before")))
        proxy = ApiProxy("127.0.0.1", int(sim.url.rsplit(":", 1)[1]))
        lossy = via(proxy, tmp_path, timeout=(1.0, 2.0))
        lossy_core = client.CoreV1Api(lossy)
        inf = Informer(
            "configmaps",
            lossy_core.list_config_map_for_all_namespaces,
            watch_timeout=3,
            watch_read_grace=1.0,
        )
        inf.start()
        try:
            assert inf.wait_synced(30)
            wait_for(inf.live, 30, "the first watch")
            proxy.blackhole()
            core.create_namespaced_config_map(NS, plain(cm("during")))
            core.delete_namespaced_config_map("before", NS)

            outcome: list[Exception | None] = []

            def one_shot() -> None:
                try:
                    lossy_core.list_namespace()
                    outcome.append(None)
                except Exception as e:
                    outcome.append(e)

            caller = threading.Thread(target=one_shot, daemon=True)
            caller.start()
            caller.join(60)
            assert not caller.is_alive(), "a call through a silent network never returned"
            assert outcome and outcome[0] is not None and "timed out" in str(outcome[0])

            wait_for(lambda: not inf.live(), 30, "the silent watch to be given up")
            assert inf.get(NS, "before") is not None  # it cannot know yet

            proxy.heal()
            wait_for(lambda: {n for _, n in inf.objects} == {"during"}, 60, "convergence")
            assert inf.lists == 1  # resumed from its resourceVersion, no new LIST
            wait_for(inf.live, 30, "a live watch again")
        finally:
            inf.stop()
            lossy.close()
            proxy.close()
            api.close()


STALE_SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "shop",
            "name": "web",
            "replicas": 4,
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/app:1",
                    "requests": {"cpu": "1", "memory": "1Gi"},
                    "usage": {"cpu": {"base": 0.1}, "memory": {"base": "200Mi"}},
                }
            ],
        }
    ],
}


def test_the_updater_evicts_nothing_while_its_pod_cache_is_stale(
    app: Flask, tmp_path: Path
) -> None:
    """The updater's caches reach the API server through a forwarder; its evictions go direct.
    The forwarder goes down (watches reset, new requests dropped) and, unseen by the cache, two
    of web's four pods die and their replacements cannot be scheduled (nodes cordoned). A run
    now must not evict: its cache shows 4 running pods where 2 are, and evicting the 2 (the
    tolerance of 4) would leave web with none."""
    from datetime import UTC, datetime, timedelta

    from app.jobs.updater import UpdaterJob
    from app.kube.actions import PodActions
    from app.kube.cluster import ClusterView
    from app.settings import settings_of
    from app.store.extensions import db
    from app.store.models import AuditEvent, Policy, Recommendation
    from tests.support.proxies import ApiProxy
    from tests.support.updater_runs import updater_settings

    now = datetime.now(UTC)
    db.session.add(
        Policy(
            name="web",
            namespace="shop",
            target_kind="Deployment",
            target_name="web",
            update_mode="Recreate",
        )
    )
    db.session.add(
        Recommendation(
            namespace="shop",
            kind="Deployment",
            name="web",
            container="app",
            target_cpu=200,
            target_memory=2**28,
            lower_bound_cpu=100,
            lower_bound_memory=2**27,
            upper_bound_cpu=300,
            upper_bound_memory=2**29,
            uncapped_target_cpu=200,
            uncapped_target_memory=2**28,
            sample_count=100,
            first_sample_at=now - timedelta(hours=2),
            last_sample_at=now,
        )
    )
    db.session.commit()
    with running_simulator(STALE_SCENARIO) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        proxy = ApiProxy("127.0.0.1", int(sim.url.rsplit(":", 1)[1]))
        cluster = ClusterView(via(proxy, tmp_path)).start()
        job = UpdaterJob(
            app_sessions(app),
            cluster,
            PodActions(api),
            updater_settings(settings_of(app)),
            lambda: True,
            clock=sim.now,
        )
        try:
            assert cluster.wait_synced(30)
            running = lambda: [  # noqa: E731
                p.metadata.name
                for p in core.list_namespaced_pod("shop").items
                if p.status.phase == "Running" and p.metadata.deletion_timestamp is None
            ]
            wait_for(lambda: len(running()) == 4, 30, "4 running pods")
            wait_for(lambda: len(cluster.pods.items()) >= 4, 30, "the cache")

            proxy.block = lambda method, path: True
            proxy.drop_open()
            for node in core.list_node().items:
                core.patch_node(node.metadata.name, {"spec": {"unschedulable": True}})
            for name in running()[:2]:
                core.delete_namespaced_pod(name, "shop", grace_period_seconds=0)
            sim.settle()
            assert len(running()) == 2  # the replacements stay Pending

            outcome = job.run_once(lambda: True)
            assert "caches not following the API server (pods" in str(outcome), outcome
            evictions = list(db.session.scalars(sa.select(AuditEvent)))
            assert evictions == [], [e.object_ref for e in evictions]
            assert len(running()) == 2
        finally:
            cluster.stop()
            proxy.close()
            api.close()
