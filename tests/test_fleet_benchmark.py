"""benchmarks/fleet.py at a tiny size, against the PostgreSQL server of
RIGHTSIZER_TEST_POSTGRES_URL (skipped without it): every count of clusters is measured with the
service's own save path and snapshot reload, the rows its runs write are counted, its ratios are
the last count's figures over the first's, and the database it created is dropped. Figures are
not judged here (benchmarks/README.md)."""

from __future__ import annotations

import os
import uuid
from pathlib import Path
from types import ModuleType

import pytest
import sqlalchemy as sa

URL = os.environ.get("RIGHTSIZER_TEST_POSTGRES_URL")
pytestmark = [
    pytest.mark.postgres,
    pytest.mark.skipif(not URL, reason="RIGHTSIZER_TEST_POSTGRES_URL is not set"),
]

BENCHMARKS = Path(__file__).resolve().parents[1] / "benchmarks"


@pytest.fixture
def fleet(monkeypatch: pytest.MonkeyPatch) -> ModuleType:
    monkeypatch.syspath_prepend(str(BENCHMARKS))  # the benchmark imports scale_common
    import fleet as module

    return module


def _databases(name: str) -> list[str]:
    assert URL is not None
    engine = sa.create_engine(URL)
    try:
        with engine.connect() as conn:
            q = sa.text("SELECT datname FROM pg_database WHERE datname = :n")
            return list(conn.execute(q, {"n": name}).scalars())
    finally:
        engine.dispose()


def test_the_fleet_benchmark_measures_each_count_and_drops_its_database(
    fleet: ModuleType,
) -> None:
    name = f"rightsizer_fleet_test_{uuid.uuid4().hex[:8]}"
    args = fleet.parser().parse_args(
        [
            *("--clusters", "3", "--pods", "40", "--counts", "1", "2"),
            *("--runs", "2", "--reloads", "2", "--database-url", str(URL)),
            *("--database-name", name, "--padding", "30"),
        ]
    )
    steps, day, lines = fleet.run(args)

    assert [s.clusters for s in steps] == [1, 2, 3]  # the last count is always --clusters
    assert [s.containers for s in steps] == [4, 8, 12]  # 40 pods: 4 Deployments of 10
    for s in steps:
        assert s.runs == 2 * s.clusters and len(s.run_seconds) == s.runs
        # every run moves every row's span: at least one row written per container and run
        assert s.rows >= s.runs * 4
        assert s.reload_examined >= 4 and s.run_examined >= 4  # the cluster's own rows at least
        assert any("recommendations" in scan for scan in s.scans)
        # GET /api/v1/fleet answered from every cluster's stored totals, equal to its rows summed
        # (both checked inside), and every leader's run wrote them
        assert s.view > 0 and s.summed > 0 and s.totals_write > 0
    before, after, day_rows, _ = day
    # a day: every container's history point written and the oldest trimmed, 24 times
    assert day_rows >= 24 * 12 * 2
    assert after["recommendation_history"] >= before["recommendation_history"] > 0
    assert _databases(name) == []

    ratios = fleet.flatness(steps)
    first, last = steps[0], steps[-1]
    assert ratios["reload_cpu"] == last.reload_cpu / first.reload_cpu
    assert ratios["reload_examined"] == last.reload_examined / first.reload_examined
    text = "\n".join(lines)
    assert (
        f"snapshot reload of one cluster, 3 clusters / 1: CPU {ratios['reload_cpu']:.2f}x" in text
    )
    assert f"rows examined {ratios['reload_examined']:.2f}x" in text
    header = next(line for line in lines if line.startswith("clusters"))
    assert "rows/s" in header and "reload CPU ms" in header and "fleet view ms" in header
    assert "summed ms" in header and "totals write ms" in header
    assert "GET /api/v1/fleet (each cluster's stored totals) at 3 clusters / 1" in text
    assert "one leader's totals write (its 4 rows read and summed, one row written)" in text
    assert "KB per container per day" in text and "machine:" in text
    # 30 more clusters' copies of the first one's 4 rows, beside the 3 clusters' 12
    assert "then 30 more clusters' rows copied in (132 recommendation and checkpoint rows" in text
