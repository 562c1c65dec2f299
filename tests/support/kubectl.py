"""The real `kubectl` against the simulator: any command (`run_kubectl`), and the Events section
`kubectl describe` prints, for tests of Events rightsizer writes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.simulator.simulator import Simulator


def run_kubectl(
    sim: Simulator, *args: str, check: bool = True, timeout: float = 60
) -> subprocess.CompletedProcess[str]:
    """`kubectl --kubeconfig <the simulator's> ARGS...`, output captured as text; a failure
    raises (with stderr in the message) unless `check=False`. Skips the test when kubectl is
    not installed."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    done = subprocess.run(
        [kubectl, "--kubeconfig", sim.kubeconfig_path, *args],
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
