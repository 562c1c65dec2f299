"""`rightsizer demo` (what `make demo` runs): simulator + rightsizer, recommendations for all."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.e2e

WORKLOADS = [
    "data/Deployment/etl-worker",
    "data/Deployment/kafka-connect",
    "data/StatefulSet/postgres",
    "kube-system/DaemonSet/node-agent",
    "kube-system/Deployment/coredns",
    "shop/Deployment/catalog",
    "shop/Deployment/checkout",
    "shop/Deployment/frontend",
    "shop/Deployment/recommender",
    "shop/StatefulSet/session-cache",
    "tools/Deployment/ci-runner",
    "tools/Deployment/grafana",
]


def test_demo_shows_current_and_recommended_requests_for_every_workload(tmp_path: Path) -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "demo",
            "--port",
            "0",
            "--exit-when-ready",
            "--timeout",
            "120",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=240,
    )
    assert out.returncode == 0, out.stderr[-3000:]
    table = [
        line.split() for line in out.stdout.splitlines() if line.count("/") == 2 and " " in line
    ]
    assert sorted({row[0] for row in table}) == WORKLOADS
    frontend = next(r for r in table if r[0] == "shop/Deployment/frontend")
    assert (
        frontend[2] == "1000m" and int(frontend[3][:-1]) < 1000
    )  # over-provisioned: recommends less
    assert "/dashboard/" in out.stdout
    assert (tmp_path / "rightsizer.db").exists() and (tmp_path / "certs" / "ca.crt").exists()
