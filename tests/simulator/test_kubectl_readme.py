"""The README's "kubectl against the demo" walk-through, run command by command with the real
kubectl against the cluster `make demo` starts (the bundled scenario), and the state it leaves."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
from pathlib import Path

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from tests.support.kubectl import kubectl_binary

README = (Path(__file__).parents[2] / "README.md").read_text()


@pytest.fixture(scope="module")
def scenario() -> None:
    """The bundled scenario, which `make demo` runs."""
    return None


@pytest.fixture(scope="module")
def sim_warmup() -> float:
    """The demo's clock runs: half a minute in, metrics-server has scraped."""
    return 30


def walkthrough() -> list[str]:
    """The commands of the section's first sh block, without their comments."""
    section = README.split("\n## kubectl against the demo\n", 1)[1].split("\n## ", 1)[0]
    block = re.search(r"```sh\n(.*?)```", section, re.S)
    assert block, "the section has no sh block"
    lines = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    return [" ".join(args) for args in lines if args]


def test_the_readme_walkthrough_runs_against_the_demo_cluster(
    sim: Simulator, api: client.ApiClient, tmp_path: Path
) -> None:
    commands = walkthrough()
    assert commands[0] == "export KUBECONFIG=$PWD/rightsizer-sim.kubeconfig"
    env = {**os.environ, "KUBECONFIG": sim.kubeconfig_path, "HOME": os.environ.get("HOME", "")}
    printed: dict[str, str] = {}
    for command in commands[1:]:
        args = shlex.split(command)
        assert args[0] == "kubectl", command
        done = subprocess.run(
            [kubectl_binary(), "--cache-dir", str(tmp_path / "cache"), *args[1:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        printed[command] = done.stdout
        sim.settle()
    out = printed
    assert "worker-1" in out["kubectl get nodes"]
    assert "frontend" in out["kubectl top pods -n shop --containers"]
    assert "NewReplicaSet:" in out["kubectl describe deployment frontend -n shop"]
    assert (
        'deployment "frontend" successfully rolled out'
        in (out["kubectl rollout status deployment frontend -n shop"])
    )
    assert (
        out["kubectl drain worker-1 --ignore-daemonsets"].strip().endswith("node/worker-1 drained")
    )
    assert "ScalingReplicaSet" in out["kubectl get events -n shop"]
    apps = client.AppsV1Api(api)
    frontend = apps.read_namespaced_deployment("frontend", "shop")
    assert frontend.spec.replicas == 4
    assert frontend.metadata.annotations["deployment.kubernetes.io/revision"] == "3"
    assert "kubectl.kubernetes.io/restartedAt" not in (
        frontend.spec.template.metadata.annotations or {}
    )
    assert (frontend.status.updated_replicas, frontend.status.available_replicas) == (4, 4)
    assert not client.CoreV1Api(api).read_node("worker-1").spec.unschedulable
