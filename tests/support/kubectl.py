"""The real `kubectl` against the simulator: any command (`run_kubectl`, or a `Kubectl` bound to
one simulator and its own discovery cache), one started in the background (`Background`, for
`kubectl wait` and watches), and the Events section `kubectl describe` prints.

Without kubectl on the PATH the tests skip, unless RIGHTSIZER_REQUIRE_KUBECTL=1 (CI's `.ci/run`
sets it), where they fail instead."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from app.simulator.simulator import Simulator
from tests.support.processes import wait_for


def kubectl_binary() -> str:
    """The kubectl on the PATH; skips the test (fails it under RIGHTSIZER_REQUIRE_KUBECTL=1)
    when there is none."""
    found = shutil.which("kubectl")
    if found is None:
        if os.environ.get("RIGHTSIZER_REQUIRE_KUBECTL") == "1":
            pytest.fail("kubectl is not installed, and RIGHTSIZER_REQUIRE_KUBECTL=1 requires it")
        pytest.skip("kubectl is not installed")
    return found


def run_kubectl(
    sim: Simulator, *args: str, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`kubectl --kubeconfig <the simulator's> ARGS...`, output captured as text; a failure
    raises (with stderr in the message) unless `check=False`. Skips the test when kubectl is
    not installed."""
    done = subprocess.run(
        [kubectl_binary(), "--kubeconfig", sim.kubeconfig_path, *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stderr}")
    return done


def describe_events(sim: Simulator, resource: str, name: str, namespace: str) -> list[str]:
    """The lines of the Events section `kubectl describe` prints for the object (skips the test
    when kubectl is not installed)."""
    out = run_kubectl(sim, "describe", resource, name, "-n", namespace).stdout
    _, found, section = out.partition("\nEvents:")
    assert found, f"kubectl describe printed no Events section:\n{out}"
    return [line.strip() for line in section.splitlines() if line.strip()]


@dataclass
class Kubectl:
    """kubectl for one simulator, with a discovery cache of its own (no other run's reused)."""

    sim: Simulator
    cache: Path

    def __call__(
        self, *args: str, check: bool = True, timeout: float = 60
    ) -> subprocess.CompletedProcess[str]:
        return run_kubectl(
            self.sim, "--cache-dir", str(self.cache), *args, check=check, timeout=timeout
        )

    def out(self, *args: str) -> str:
        """stdout of a command that must succeed."""
        return self(*args).stdout

    def watching(self, resource: str, *args: str) -> Background:
        """Start a command that watches `resource` (`pods`, `deployments.apps`, ...), and return
        once the simulator serves its watch: what changes after this, the command sees."""
        before = self._watches(resource)
        background = self.start(*args)
        wait_for(
            lambda: self._watches(resource) > before or background.proc.poll() is not None,
            30,
            f"kubectl {' '.join(args)} to watch {resource}",
            interval=0.05,
        )
        return background

    def _watches(self, resource: str) -> int:
        return int(self.sim.stats()["byResource"].get(resource, {}).get("watch", 0))

    def start(self, *args: str) -> Background:
        """Start a command that waits for something (`kubectl wait`, `rollout status`)."""
        proc = subprocess.Popen(
            [
                kubectl_binary(),
                "--kubeconfig",
                self.sim.kubeconfig_path,
                "--cache-dir",
                str(self.cache),
                *args,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        return Background(proc)


@dataclass
class Background:
    proc: subprocess.Popen[str]

    def result(self, timeout: float = 60) -> subprocess.CompletedProcess[str]:
        """Wait for the command to end (killing it past `timeout`) and return what it printed."""
        try:
            out, err = self.proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            out, err = self.proc.communicate()
        return subprocess.CompletedProcess(self.proc.args, self.proc.returncode, out, err)


# --- a cluster and manifests for the kubectl workflow tests -------------------------------------

WORKFLOWS: dict[str, Any] = {
    "seed": 11,
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "4", "memory": "16Gi"}],
    "namespaces": ["demo"],
}


def deployment(
    name: str,
    *,
    replicas: int = 3,
    image: str = "nginx:1.27",
    cpu: str = "100m",
    namespace: str = "demo",
    max_surge: int | str = 1,
    max_unavailable: int | str = 0,
    **spec: Any,
) -> dict[str, Any]:
    """A Deployment manifest (a rolling update within the given fenceposts)."""
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "strategy": {
                "type": "RollingUpdate",
                "rollingUpdate": {"maxSurge": max_surge, "maxUnavailable": max_unavailable},
            },
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {
                    "containers": [
                        {
                            "name": "app",
                            "image": image,
                            "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}},
                        }
                    ]
                },
            },
            **spec,
        },
    }


def workload(kind: str, name: str, *, replicas: int = 2, namespace: str = "demo") -> dict[str, Any]:
    """A StatefulSet, DaemonSet or ReplicaSet manifest with one small container."""
    spec: dict[str, Any] = {
        "selector": {"matchLabels": {"app": name}},
        "template": {
            "metadata": {"labels": {"app": name}},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "image": "busybox:1.36",
                        "resources": {"requests": {"cpu": "50m", "memory": "32Mi"}},
                    }
                ]
            },
        },
    }
    if kind != "DaemonSet":
        spec["replicas"] = replicas
    if kind == "StatefulSet":
        spec["serviceName"] = name
    return {
        "apiVersion": "apps/v1",
        "kind": kind,
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def manifest(directory: Path, *objects: dict[str, Any]) -> str:
    """Write the objects as one manifest file (YAML documents, each in JSON) for `kubectl apply
    -f` and return its path."""
    path = directory / f"manifest-{len(list(directory.glob('manifest-*')))}.yaml"
    path.write_text("\n---\n".join(json.dumps(obj) for obj in objects) + "\n")
    return str(path)
