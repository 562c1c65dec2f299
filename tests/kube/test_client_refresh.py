"""The kubeconfig loader's per-request refresh hook runs at most once a second (app.kube.client)."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from kubernetes import client
from kubernetes.config.kube_config import KubeConfigLoader

from app.kube.client import RefreshAtMost, api_client
from app.simulator.testing import EMPTY, running_simulator


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_the_hook_runs_at_most_once_a_second() -> None:
    clock, calls = Clock(), []
    configuration = SimpleNamespace(refresh_api_key_hook=None)
    hook = RefreshAtMost(lambda cfg: calls.append(clock.now), every=1.0, clock=clock)
    configuration.refresh_api_key_hook = hook
    for t in (100.0, 100.5, 100.99, 101.0, 101.2, 103.0):
        clock.now = t
        configuration.refresh_api_key_hook(configuration)
    assert calls == [100.0, 101.0, 103.0]


def test_rightsizer_s_client_reapplies_its_kubeconfig_once_for_many_requests(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The loader's hook (re-applying the kubeconfig, the token reloaded when it expires) stays
    behind RefreshAtMost after it ran, which re-installs itself."""
    calls: list[float] = []
    clock = Clock()
    set_config = KubeConfigLoader._set_config

    def counted(self: Any, configuration: Any) -> None:
        calls.append(clock.now)
        set_config(self, configuration)

    with running_simulator(EMPTY) as sim:
        api = api_client(sim.kubeconfig_path, qps=0)
        try:
            hook = api.configuration.refresh_api_key_hook
            assert isinstance(hook, RefreshAtMost)  # the kubeconfig has a token
            hook.clock = clock
            monkeypatch.setattr(KubeConfigLoader, "_set_config", counted)
            core = client.CoreV1Api(api)
            for _ in range(3):
                core.list_namespace()  # each one authorised with the token
            clock.now += 1.0
            core.read_namespace("default")
            core.read_namespace("default")
            assert calls == [100.0, 101.0]
            assert api.configuration.refresh_api_key_hook is hook
        finally:
            api.close()


def test_more_connections_than_the_official_default_are_kept_for_reuse(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Twelve requests at once (ten watches and the updater's evictions on 2 cores), then each
    connection is kept for the next request: none is discarded as the default pool of 10 did."""
    with running_simulator(EMPTY) as sim:
        api = api_client(sim.kubeconfig_path, qps=0)
        try:
            core: Any = client.CoreV1Api(api)  # answers unread: urllib3 responses
            held = [core.list_namespace(_preload_content=False) for _ in range(12)]
            with caplog.at_level("WARNING", logger="urllib3.connectionpool"):
                for resp in held:  # all twelve answered, their connections returned
                    resp.drain_conn()
                    resp.release_conn()
            assert "Connection pool is full" not in caplog.text
        finally:
            api.close()
