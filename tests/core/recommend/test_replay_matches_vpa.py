"""Whole traces through the recommender agree with a naive re-computation of VPA's algorithm."""

from __future__ import annotations

from pathlib import Path

import pytest

from app.core.quantity import parse_quantity
from app.core.recommend.trace import parse_trace, recommendations_json, replay
from tests.support import vpa_oracle

DATA = Path(__file__).resolve().parents[2] / "data"
BITBRAINS = Path(__file__).resolve().parents[4] / "shared" / "data" / "bitbrains-rnd-2013-07"


def ours(path: Path) -> dict[str, dict[str, dict[str, str]]]:
    with path.open(newline="") as fh:
        out = recommendations_json(replay(parse_trace(fh)))
    return {
        c["name"]: {k: c[k] for k in ("target", "lowerBound", "upperBound")}
        for c in out["containers"]  # type: ignore[attr-defined]
    }


def test_sample_trace_with_pods_request_change_and_oom() -> None:
    path = DATA / "sample-trace.csv"
    expected = vpa_oracle.recommend(path)
    assert set(expected) == {"app", "envoy"}
    assert ours(path) == expected


def test_oom_raises_the_memory_target(tmp_path: Path) -> None:
    rows = ["timestamp,container,cpu,memory,event"]
    rows += [f"{1_700_000_000 + 60 * i},app,0.1,{200 * 2**20}," for i in range(100)]
    without = tmp_path / "plain.csv"
    without.write_text("\n".join(rows) + "\n")
    rows.append(f"{1_700_000_000 + 6000},app,,{256 * 2**20},oom")
    with_oom = tmp_path / "oom.csv"
    with_oom.write_text("\n".join(rows) + "\n")
    assert ours(with_oom) == vpa_oracle.recommend(with_oom)
    assert parse_quantity(ours(with_oom)["app"]["target"]["memory"]) > parse_quantity(
        ours(without)["app"]["target"]["memory"]
    )


def test_bitbrains_trace_shipped_with_the_tests() -> None:
    path = DATA / "bitbrains-vm20.csv"
    assert ours(path) == vpa_oracle.recommend(path)


@pytest.mark.parametrize("vm", ["vm1", "vm7", "vm14"])
def test_more_bitbrains_traces(vm: str) -> None:
    """The full set lives beside the repository (../shared/data), where it is present."""
    path = BITBRAINS / f"{vm}.csv"
    if not path.exists():
        pytest.skip(f"{path} not present on this machine")
    assert ours(path) == vpa_oracle.recommend(path)
