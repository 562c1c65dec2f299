"""The real `kubectl describe` against the simulator, for tests of Events rightsizer writes."""

from __future__ import annotations

import shutil
import subprocess

import pytest

from app.simulator.simulator import Simulator


def describe_events(sim: Simulator, resource: str, name: str, namespace: str) -> list[str]:
    """The lines of the Events section `kubectl describe` prints for the object (skips the test
    when kubectl is not installed)."""
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not installed")
    out = subprocess.run(
        [kubectl, "--kubeconfig", sim.kubeconfig_path, "describe", resource, name, "-n", namespace],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    _, found, section = out.partition("\nEvents:")
    assert found, f"kubectl describe printed no Events section:\n{out}"
    return [line.strip() for line in section.splitlines() if line.strip()]
