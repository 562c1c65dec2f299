"""`rightsizer fleet` and `--cluster` against a real server over HTTP, on two clusters in one
PostgreSQL database (tests/support/fleet.py: east is the server's own, west the other)."""

from __future__ import annotations

import json

import pytest

from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401
from tests.support.fleet import fleet  # noqa: F401  (fixture)

pytestmark = pytest.mark.usefixtures("fleet")


def test_fleet_lists_each_cluster_and_the_totals(run: Invoke) -> None:  # noqa: F811
    out = run("fleet")
    assert out.exit_code == 0, out.output
    lines = [line.split() for line in out.output.splitlines()]
    assert lines[0][:4] == ["CLUSTER", "WORKLOADS", "CONTAINERS", "PODS"]
    rows = {line[0]: line for line in lines[1:]}
    # name (own marked *), workloads, containers, pods, savings cores, GiB, short cores, GiB, n
    assert rows["east"][1:11] == [
        "*",
        "1",
        "1",
        "3",
        "0.3",
        "0.75",
        "0",
        "0",
        "0",
        "2026-12-01T00:00:00Z",
    ]
    assert rows["east"][11:] == ["summed", "now"]  # AS OF: no totals stored, summed for this
    assert rows["west"][1:9] == ["1", "1", "3", "-0.9", "0.75", "0.9", "0", "1"]
    assert rows["TOTAL"][1:11] == ["(2", "clusters)", "2", "2", "6", "-0.6", "1.5", "0.9", "0", "1"]
    body = json.loads(run("fleet", "-o", "json").output)
    assert body["totals"]["clusters"] == 2


def test_cluster_reads_another_cluster_of_the_fleet(run: Invoke) -> None:  # noqa: F811
    def cpu_targets(*args: str) -> list[str]:
        out = run("recommendations", "list", "-o", "json", *args)
        assert out.exit_code == 0, out.output
        return [c["target"]["cpu"] for w in json.loads(out.output) for c in w["containers"]]

    assert cpu_targets() == ["100m"]
    assert cpu_targets("--cluster", "west") == ["500m"]
    assert cpu_targets("--cluster", "uid-west") == ["500m"]
    policies = run("policy", "list", "--cluster", "west", "-o", "json").output
    assert {p["name"] for p in json.loads(policies)} == {"west-only", "everywhere"}
    assert run("policy", "get", "shop/west-only", "--cluster", "west").exit_code == 0
    events = json.loads(run("events", "--cluster", "west", "-o", "json").output)
    assert [e["objectRef"] for e in events] == ["shop/web-west"]
    assert run("scaler", "list", "--cluster", "west").exit_code == 0
    unknown = run("recommendations", "list", "--cluster", "north")
    assert unknown.exit_code == 1
    assert "error: cluster: no cluster named 'north'" in unknown.output
