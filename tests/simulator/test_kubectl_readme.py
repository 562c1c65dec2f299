"""The "kubectl against the demo" walk-through of docs/simulator.md, run command by command with
the real kubectl against the cluster `make demo` starts (the bundled scenario), and the state it
leaves."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from tests.support.kubectl import kubectl_binary
from tests.support.readme_walkthrough import check_walkthrough, run_walkthrough


@pytest.fixture(scope="module")
def scenario() -> None:
    """The bundled scenario, which `make demo` runs."""
    return None


@pytest.fixture(scope="module")
def sim_warmup() -> float:
    """The demo's clock runs: half a minute in, metrics-server has scraped."""
    return 30


def test_the_readme_walkthrough_runs_against_the_demo_cluster(
    sim: Simulator, api: client.ApiClient, tmp_path: Path
) -> None:
    env = {**os.environ, "KUBECONFIG": sim.kubeconfig_path, "HOME": os.environ.get("HOME", "")}
    out = run_walkthrough(kubectl_binary(), env, tmp_path / "cache", sim.settle)
    check_walkthrough(out, api)
