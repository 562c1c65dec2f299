"""The usage model (pure math) and what it drives: OOM kills, metrics, Prometheus history."""

from __future__ import annotations

import json
import urllib.parse
import urllib.request
from typing import Any

import pytest
from kubernetes import client

from app.simulator.testing import running_simulator
from app.simulator.workload.usage import (
    DAY,
    SAMPLE,
    ContainerLife,
    CpuProfile,
    MemoryProfile,
    UsageProfile,
    advance_life,
    container_key,
    cpu_cores,
    daily,
    first_oom,
    memory_bytes,
    observed,
)
from tests.support.json_bodies import json_object

MiB = 1 << 20


def test_usage_is_deterministic_per_seed_and_container():
    p = CpuProfile(0.5, daily=0.5, noise=0.2)
    k1, k2 = container_key(1, "ns", "pod", "c"), container_key(2, "ns", "pod", "c")
    t = 1_700_000_000.0
    assert cpu_cores(p, k1, t) == cpu_cores(p, container_key(1, "ns", "pod", "c"), t)
    assert cpu_cores(p, k1, t) != cpu_cores(p, k2, t)
    # Noise is constant within one 15 s sample and changes across samples.
    flat = CpuProfile(0.5, noise=0.2)
    s0 = t - t % SAMPLE
    assert cpu_cores(flat, k1, s0) == cpu_cores(flat, k1, s0 + SAMPLE - 1)
    assert cpu_cores(flat, k1, s0) != cpu_cores(flat, k1, s0 + SAMPLE)


def test_daily_cycle_and_noise_bounds():
    assert daily(12 * 3600) == pytest.approx(1.0) and daily(0) == pytest.approx(-1.0)
    p = CpuProfile(1.0, daily=0.5, noise=0.1)
    key = container_key(0, "x")
    values = [cpu_cores(p, key, t) for t in range(0, int(DAY), 900)]
    assert min(values) >= 0.5 * 0.9 - 1e-9 and max(values) <= 1.5 * 1.1 + 1e-9
    noon = cpu_cores(CpuProfile(1.0, daily=0.5), key, 12 * 3600)
    midnight = cpu_cores(CpuProfile(1.0, daily=0.5), key, 0)
    assert noon == pytest.approx(1.5) and midnight == pytest.approx(0.5)


def test_spikes_multiply_cpu_in_their_buckets():
    key = container_key(3, "spiky")
    p = CpuProfile(1.0, spike_probability=0.3, spike_factor=4.0)
    values = {cpu_cores(p, key, t * 300.0) for t in range(200)}
    assert values == {1.0, 4.0}


def test_memory_growth_resets_at_restart_and_ooms_at_the_limit():
    p = MemoryProfile(100 * MiB, growth_per_day=100 * MiB)
    key = container_key(0, "leak")
    assert memory_bytes(p, key, DAY, 0.0) == pytest.approx(200 * MiB)
    assert memory_bytes(p, key, DAY, DAY) == pytest.approx(100 * MiB)
    t = first_oom(p, key, 150 * MiB, 0.0, 0.0, DAY)
    assert t is not None and abs(t - DAY / 2) <= SAMPLE
    assert first_oom(p, key, 150 * MiB, 0.0, 0.0, DAY / 4) is None


def test_advance_life_records_kills_with_crash_backoff():
    p = MemoryProfile(200 * MiB)  # always above a 100 MiB limit: crash loop
    life, kills = advance_life(p, 1, 100 * MiB, ContainerLife(0.0), 3600.0)
    assert life.restart_count == len(kills) > 5
    gaps = [k.restart_at - k.at for k in kills]
    assert gaps[:4] == [10.0, 20.0, 40.0, 80.0] and max(gaps) == 300.0
    assert life.start_for(kills[0].at + 1) is None  # down during the back-off
    assert life.start_for(kills[0].restart_at) == kills[0].restart_at
    again, more = advance_life(p, 1, 100 * MiB, life, 3600.0)
    assert not more and again.restart_count == life.restart_count
    unlimited, none = advance_life(p, 1, None, ContainerLife(0.0), 3600.0)
    assert not none and unlimited.restart_count == 0


def test_observed_caps_cpu_at_the_limit():
    prof = UsageProfile(CpuProfile(2.0), MemoryProfile(50 * MiB))
    cpu, mem = observed(prof, 1, ContainerLife(0.0), 100.0, 0.5, None)
    assert cpu == 0.5 and mem == pytest.approx(50 * MiB)
    assert observed(prof, 1, ContainerLife(200.0), 100.0, None, None) is None


OOM_SCENARIO = {
    "seed": 1,
    "historyDays": 2,
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": ["app"],
    "workloads": [
        {
            "kind": "Deployment",
            "namespace": "app",
            "name": "leaky",
            "replicas": 1,
            "containers": [
                {
                    "name": "main",
                    "image": "leaky:1",
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                    "limits": {"cpu": "200m", "memory": "256Mi"},
                    "usage": {
                        "cpu": {"base": 0.5},
                        "memory": {"base": "100Mi", "growthPerDay": "200Mi"},
                    },
                }
            ],
        },
        {
            "kind": "Deployment",
            "namespace": "app",
            "name": "steady",
            "replicas": 1,
            "containers": [
                {
                    "name": "main",
                    "image": "steady:1",
                    "requests": {"cpu": "100m", "memory": "128Mi"},
                    "usage": {"cpu": {"base": 0.05}, "memory": {"base": "60Mi"}},
                }
            ],
        },
    ],
}


def _pod(core, app):
    return core.list_namespaced_pod("app", label_selector=f"app={app}").items[0]


def test_oom_kills_over_history_and_as_the_clock_advances():
    with running_simulator(OOM_SCENARIO) as sim:
        api = sim.api_client()
        core = client.CoreV1Api(api)
        pod = _pod(core, "leaky")
        # 100 MiB + 200 MiB/day hits 256 MiB after ~19 h: about 2 kills in 2 days of history.
        cs = pod.status.container_statuses[0]
        assert cs.restart_count == 2
        term = cs.last_state.terminated
        assert term.reason == "OOMKilled" and term.exit_code == 137
        created = pod.metadata.creation_timestamp.timestamp()
        assert sim.now() - created == pytest.approx(2 * DAY, abs=60)
        assert _pod(core, "steady").status.container_statuses[0].restart_count == 0
        sim.advance(DAY)
        cs = _pod(core, "leaky").status.container_statuses[0]
        assert cs.restart_count == 3 and cs.last_state.terminated.reason == "OOMKilled"
        api.close()


def _prom(sim, query: str, start: float, end: float, step: str) -> dict[str, Any]:
    qs = urllib.parse.urlencode({"query": query, "start": start, "end": end, "step": step})
    try:
        with urllib.request.urlopen(f"{sim.url}/api/v1/query_range?{qs}") as resp:
            return json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return {"http": e.code, **json.loads(e.read())}


def test_prometheus_series_cover_history_and_metrics_api_agrees():
    with running_simulator(OOM_SCENARIO) as sim:
        now = sim.now()
        out = _prom(
            sim,
            'rate(container_cpu_usage_seconds_total{namespace="app",container!=""}[5m])',
            now - 2 * DAY,
            now,
            "1h",
        )
        assert out["status"] == "success" and out["data"]["resultType"] == "matrix"
        series = {s["metric"]["pod"].split("-")[0]: s for s in out["data"]["result"]}
        assert set(series) == {"leaky", "steady"}
        assert len(series["steady"]["values"]) >= 48
        assert series["steady"]["values"][0][0] <= now - 2 * DAY + 3600
        assert max(float(v) for _, v in series["leaky"]["values"]) <= 0.2  # capped at limit
        mem = _prom(
            sim, 'container_memory_working_set_bytes{pod=~"leaky-.*"}', now - 2 * DAY, now, "15m"
        )
        values = [float(v) for _, v in mem["data"]["result"][0]["values"]]
        assert max(values) <= 256 * MiB and min(values) >= 100 * MiB * 0.99
        # metrics.k8s.io reports the same model at the current scrape.
        co = client.CustomObjectsApi(sim.api_client())
        pm = json_object(
            co.list_namespaced_custom_object(
                "metrics.k8s.io", "v1beta1", "app", "pods", label_selector="app=steady"
            )
        )
        usage = pm["items"][0]["containers"][0]["usage"]
        assert usage["cpu"].endswith("n") and usage["memory"].endswith("Ki")
        assert int(usage["cpu"][:-1]) == pytest.approx(0.05e9, rel=0.01)
        nm = json_object(
            co.get_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes", "node-0")
        )
        assert nm["kind"] == "NodeMetrics" and nm["usage"]["cpu"].endswith("n")
        bad = _prom(sim, "up", now - 60, now, "15s")
        assert bad["http"] == 400 and bad["errorType"] == "bad_data"
        too_many = _prom(sim, "container_memory_working_set_bytes", now - 8 * DAY, now, "60")
        assert too_many["http"] == 400 and "11,000 points" in too_many["error"]
