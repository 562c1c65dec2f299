"""Prometheus history from a production-like Prometheus (tests/support/prometheus_server.py): HTTPS
with its own CA, a bearer token from a file or basic auth, a client certificate, a tenant header,
a path prefix, VPA's label names and cAdvisor job, deleted pods attributed by their labels, and
clear errors and back-off when it is down. Data: the simulated cluster's usage model."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from app.core.recommend.array_model import ArrayModel
from app.jobs.history import PrometheusHistory
from app.kube.cluster import ClusterView
from app.settings import PrometheusSettings
from app.simulator.simulator import Simulator
from tests.support.prometheus import history_settings
from tests.support.prometheus_server import JOB, LABELS_QUERY, Pki, PrometheusServer
from tests.support.recommender_runs import deployment, wait_cache_caught_up

DAY = 86400.0
SCENARIO: dict[str, Any] = {
    "historyDays": 1,
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": "shop"}],
    "workloads": [deployment("shop", "web", replicas=2, cpu=0.3)],
}
TOKEN = "s3cr3t-token"
TENANT = "team-shop"


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SCENARIO


@pytest.fixture(scope="module")
def pki(tmp_path_factory: pytest.TempPathFactory) -> Pki:
    return Pki(tmp_path_factory.mktemp("pki"))


@pytest.fixture
def cluster(module_sim: Simulator) -> Iterator[ClusterView]:
    view = ClusterView(module_sim.api_client()).start()
    assert view.wait_synced(30)
    yield view
    view.stop()


@pytest.fixture
def served(module_sim: Simulator, pki: Pki) -> Iterator[PrometheusServer]:
    """Mimir-like: a bearer token, a tenant, the /prometheus prefix, VPA's label names."""
    server = PrometheusServer(
        module_sim.url, pki, token=TOKEN, tenant=TENANT, prefix="/prometheus"
    ).start()
    yield server
    server.stop()


def vpa_names(url: str, tmp_path: Path, pki: Pki, **fields: Any) -> PrometheusSettings:
    """Settings for the server above, as VPA's flags name its series."""
    token_file = tmp_path / "token"
    token_file.write_text(TOKEN + "\n")
    base: dict[str, Any] = {
        "bearer_token_file": str(token_file),
        "ca_file": pki.ca,
        "headers": (("X-Scope-OrgID", TENANT),),
        "cadvisor_job_name": JOB,
        "pod_label": "pod_name",
        "container_label": "name",
        "retry_seconds": 0.0,
    }
    return history_settings(url, 300.0, DAY, **{**base, **fields})


def load(sim: Simulator, settings: PrometheusSettings, cluster: ClusterView, **kw: Any) -> int:
    sleep = kw.pop("sleep", lambda seconds: None)
    history = PrometheusHistory(settings, clock=sim.now, sleep=sleep)
    return history(ArrayModel(), cluster, set(), **kw).fed


def test_history_loads_over_tls_with_a_token_file_a_tenant_and_vpas_label_names(
    module_sim: Simulator, cluster: ClusterView, served: PrometheusServer, tmp_path: Path, pki: Pki
) -> None:
    settings = vpa_names(served.url, tmp_path, pki)
    fed = load(module_sim, settings, cluster)
    assert fed > 2 * 2 * 200  # two pods, CPU and memory, a day at 5-minute steps
    assert {h.get("authorization") for h in served.seen} == {f"Bearer {TOKEN}"}
    assert {h.get("x-scope-orgid") for h in served.seen} == {TENANT}
    # With the kubelet's label names against this server nothing matches: the names matter.
    plain = history_settings(
        served.url, 300.0, DAY, bearer_token=TOKEN, ca_file=pki.ca, headers=settings.headers,
        cadvisor_job_name=JOB, retry_seconds=0.0,
    )  # fmt: skip
    assert load(module_sim, plain, cluster) == 0


def test_a_rotated_token_file_is_read_again(
    module_sim: Simulator, cluster: ClusterView, served: PrometheusServer, tmp_path: Path, pki: Pki
) -> None:
    settings = vpa_names(served.url, tmp_path, pki)
    served.token = "rotated"
    assert load(module_sim, settings, cluster) == 0  # refused with the old one
    Path(settings.bearer_token_file).write_text("rotated")
    assert load(module_sim, settings, cluster) > 0


def test_basic_auth_and_a_client_certificate(
    module_sim: Simulator, cluster: ClusterView, pki: Pki, tmp_path: Path
) -> None:
    server = PrometheusServer(
        module_sim.url, pki, basic=("vpa", "pa55"), client_certs=True, prefix="/select/0/prometheus"
    ).start()  # VictoriaMetrics-like
    try:
        password = tmp_path / "password"
        password.write_text("pa55")
        base = {"bearer_token_file": "", "headers": (), "username": "vpa"}
        settings = vpa_names(
            server.url, tmp_path, pki, **base, password_file=str(password),
            client_cert_file=pki.client_cert, client_key_file=pki.client_key,
        )  # fmt: skip
        assert load(module_sim, settings, cluster) > 0
    finally:
        server.stop()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"ca_file": ""}, "TLS with https://127.0.0.1"),
        ({"bearer_token_file": ""}, "answered 401 Unauthorized: it wants credentials"),
        ({"headers": ()}, "answered 401 Unauthorized: the bearer token was refused"),
        ({"url": "/not-prometheus"}, "answered 404 with text/plain, not the Prometheus HTTP API"),
    ],
)
def test_what_is_wrong_is_said_once_and_not_retried(
    module_sim: Simulator,
    cluster: ClusterView,
    served: PrometheusServer,
    tmp_path: Path,
    pki: Pki,
    caplog: pytest.LogCaptureFixture,
    change: dict[str, Any],
    message: str,
) -> None:
    change = dict(change)
    url = served.url
    if "url" in change:  # a base that is not the API's (the prefix forgotten, another path)
        url = served.url.removesuffix("/prometheus") + change.pop("url")
    settings = vpa_names(url, tmp_path, pki, retry_seconds=600.0, **change)
    slept: list[float] = []
    with caplog.at_level(logging.WARNING, logger="app.jobs.history"):
        assert load(module_sim, settings, cluster, sleep=slept.append) == 0
    assert slept == []  # waiting would not fix it
    warnings = [r.getMessage() for r in caplog.records if r.name == "app.jobs.history"]
    assert len(warnings) == 1 and message in warnings[0], warnings


def test_insecure_skips_verifying_the_servers_certificate(
    module_sim: Simulator, cluster: ClusterView, served: PrometheusServer, tmp_path: Path, pki: Pki
) -> None:
    settings = vpa_names(served.url, tmp_path, pki, ca_file="", insecure=True)
    assert load(module_sim, settings, cluster) > 0


def test_while_it_is_down_the_load_backs_off_and_then_succeeds(
    module_sim: Simulator, cluster: ClusterView, pki: Pki, tmp_path: Path
) -> None:
    server = PrometheusServer(module_sim.url, pki, token=TOKEN, tenant=TENANT, failures=5)
    server.start()
    port = server.port
    server.stop()  # down: nothing listens
    slept: list[float] = []

    def sleep(seconds: float) -> None:
        slept.append(seconds)
        if len(slept) == 2:  # it comes back, answering 503 for a while (5 requests)
            server.port = port
            server.start()

    try:
        settings = vpa_names(f"https://127.0.0.1:{port}", tmp_path, pki, retry_seconds=120.0)
        assert load(module_sim, settings, cluster, sleep=sleep) > 0
    finally:
        server.stop()
    assert slept[:3] == [2.0, 4.0, 8.0]  # doubling
    assert sum(slept) <= 120.0


def test_it_gives_up_after_the_retry_budget_saying_why(
    module_sim: Simulator,
    cluster: ClusterView,
    pki: Pki,
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    settings = vpa_names("https://127.0.0.1:1", tmp_path, pki, retry_seconds=30.0)
    slept: list[float] = []
    with caplog.at_level(logging.WARNING, logger="app.jobs.history"):
        assert load(module_sim, settings, cluster, sleep=slept.append) == 0
    assert slept == [2.0, 4.0, 8.0, 16.0]  # 30 s: the next wait (32 s) would pass the budget
    last = [r for r in caplog.records if r.name == "app.jobs.history"][-1].getMessage()
    assert last.startswith("no history loaded: Prometheus at https://127.0.0.1:1 is unreachable")


def test_a_deleted_pods_history_goes_to_the_workload_its_labels_select(
    module_sim: Simulator, cluster: ClusterView, served: PrometheusServer, tmp_path: Path, pki: Pki
) -> None:
    core = client.CoreV1Api(module_sim.api_client())
    wait_cache_caught_up(module_sim, cluster)
    pods = core.list_namespaced_pod("shop", label_selector="app=web").items
    gone = pods[0]
    settings = vpa_names(served.url, tmp_path, pki)
    before = load(module_sim, settings, cluster)
    now = module_sim.now()
    served.archive("shop", gone.metadata.name, dict(gone.metadata.labels), now - DAY, now)
    core.delete_namespaced_pod(gone.metadata.name, "shop")
    module_sim.settle()
    wait_cache_caught_up(module_sim, cluster)  # the deleted pod gone, its replacement there
    assert load(module_sim, settings, cluster) < before  # its series: skipped without labels
    with_labels = vpa_names(served.url, tmp_path, pki, pod_labels_metric=LABELS_QUERY)
    assert load(module_sim, with_labels, cluster) >= before  # attributed to Deployment web
