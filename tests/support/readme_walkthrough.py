"""The "kubectl against the demo" walk-through of docs/simulator.md: its commands, run one by one
with the real kubectl, and what they must print and leave behind. The same walk-through runs
against the simulated cluster (tests/simulator/test_kubectl_readme.py) and against the real
control plane (tests/realkube/test_kubectl_readme_real.py)."""

from __future__ import annotations

import re
import shlex
import subprocess
from collections.abc import Callable
from pathlib import Path

from kubernetes import client

from tests.support.markdown import section


def walkthrough() -> list[str]:
    """The commands of the section's first sh block, without their comments."""
    text = section("docs/simulator.md", "kubectl against the demo")
    block = re.search(r"```sh\n(.*?)```", text, re.S)
    assert block, "the section has no sh block"
    lines = [shlex.split(line, comments=True) for line in block.group(1).splitlines()]
    return [" ".join(args) for args in lines if args]


def run_walkthrough(
    kubectl: str, env: dict[str, str], cache: Path, after_each: Callable[[], None]
) -> dict[str, str]:
    """Each command after the first (`export KUBECONFIG=...`: `env` says it) with the real
    kubectl; what each printed. `after_each` runs between commands (the simulator settles)."""
    commands = walkthrough()
    assert commands[0] == "export KUBECONFIG=$PWD/rightsizer-sim.kubeconfig"
    printed: dict[str, str] = {}
    for command in commands[1:]:
        args = shlex.split(command)
        assert args[0] == "kubectl", command
        done = subprocess.run(
            [kubectl, "--cache-dir", str(cache), *args[1:]],
            capture_output=True,
            text=True,
            env=env,
            timeout=120,
            check=False,
        )
        assert done.returncode == 0, f"{command}\n{done.stderr}"
        printed[command] = done.stdout
        after_each()
    return printed


def check_walkthrough(out: dict[str, str], api: client.ApiClient) -> None:
    """What the commands printed, and the state they left: frontend scaled to 4, restarted and
    rolled back to revision 1's template (now revision 3), worker-1 drained and uncordoned."""
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
