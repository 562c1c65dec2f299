"""kubectl, the real one at /usr/bin/kubectl, against the real control plane."""

from __future__ import annotations

import subprocess
from typing import Any

import yaml

from tests.realkube.cluster import RealCluster


def kubectl(cluster: RealCluster, *args: str, stdin: str | None = None) -> str:
    """Runs kubectl with the cluster's admin kubeconfig; its output, or an assertion naming
    what it printed on stderr."""
    done = subprocess.run(
        ["kubectl", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env={
            "KUBECONFIG": cluster.kubeconfig_path,
            "PATH": "/usr/bin:/bin",
            "HOME": str(cluster.directory),
        },
        timeout=60,
    )
    assert done.returncode == 0, f"kubectl {' '.join(args)}: {done.stderr}"
    return done.stdout


def kubectl_apply(cluster: RealCluster, docs: list[dict[str, Any]], *flags: str) -> str:
    """Server-side apply, as Helm 3.x's (and kubectl's) field manager: every field validated by
    kube-apiserver itself."""
    return kubectl(
        cluster,
        "apply",
        "--server-side",
        "--field-manager=helm",
        "-f",
        "-",
        *flags,
        stdin=yaml.safe_dump_all(docs),
    )
