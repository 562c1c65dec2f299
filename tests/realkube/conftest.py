"""One real control plane per test run (session scope), shared by every test under tests/realkube.

The binaries come from tools/build.py (`make test` builds them first). Without them the tests are
skipped, unless RIGHTSIZER_REQUIRE_REALKUBE is set (CI sets it): then they fail.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client

from tests.realkube.cluster import RELEASES, RealCluster, built_tools
from tests.realkube.kubectl import kubectl_apply
from tests.support.helm import NAMESPACE, render_chart
from tests.support.json_bodies import plain

NODES = ("kwok-node-0", "kwok-node-1", "kwok-node-2")


@pytest.fixture(scope="session", params=list(RELEASES))
def real_cluster(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[RealCluster]:
    """Every test here runs against each release (RELEASES: the newest and 1.33); pytest runs the
    tests of one release, stops its control plane, then starts the next."""
    bins = built_tools()
    if isinstance(bins, str):
        if os.environ.get("RIGHTSIZER_REQUIRE_REALKUBE"):
            pytest.fail(f"the real control plane is required (RIGHTSIZER_REQUIRE_REALKUBE): {bins}")
        pytest.skip(f"real control plane not built: {bins}")
    release = request.param
    cluster = RealCluster(
        Path(tmp_path_factory.mktemp(f"realkube-{release}")), bins, RELEASES[release]
    )
    try:
        cluster.start()
        for name in NODES:
            cluster.add_node(name)
        cluster.wait_nodes_ready(len(NODES))
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture(scope="session")
def chart_installed(real_cluster: RealCluster) -> list[dict[str, Any]]:
    """The chart's manifests (defaults) applied server-side: its namespace, ServiceAccount and
    RBAC are what the tests run `rightsizer serve` as (tests.realkube.serve.serving_as_chart)."""
    with real_cluster.api() as api:
        client.CoreV1Api(api).create_namespace(plain({"metadata": {"name": NAMESPACE}}))
    docs = render_chart()
    kubectl_apply(real_cluster, docs)
    return docs
