"""Issue 49 item 7: `recommend --from-csv` prints, for a person, what it read (samples, span,
gaps), a table and each reason with a truthful confidence ("confidence 5.7 days" for a 30-day
trace read as if the history were 5.7 days long); `-o json` is the recommendation alone, as
before. Real processes, stdout and stderr as users see them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from app.core.recommend.trace import parse_trace, recommendations_json, replay

DATA = Path(__file__).parents[1] / "data"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "recommend", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_default_is_what_was_read_then_a_table_and_the_reasons() -> None:
    out = run("--from-csv", str(DATA / "sample-trace.csv"))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == (
        f"read {DATA / 'sample-trace.csv'}: 3457 rows: 3456 CPU and 3456 memory samples, "
        "1 OOM kill; 2 containers (app, envoy) in 3 pods"
    )
    assert lines[1] == (
        "span: 2024-07-01T00:00:00Z to 2024-07-03T23:55:00Z (3.0 days), a sample every 5m"
    )
    assert lines[2] == "gaps: none"
    header = lines.index("CONTAINER   CPU    MEMORY   CPU RANGE   MEMORY RANGE")
    assert lines[header + 1].split() == ["app", "442m", "777Mi", "270m-872m", "683Mi-1423Mi"]
    assert lines[header + 2].split() == ["envoy", "35m", "125Mi", "22m-89m", "125Mi-137Mi"]
    assert lines[header + 4].startswith("app: vpa: CPU p90 of usage")
    assert out.stderr == ""


def test_json_is_the_recommendation_alone_as_before() -> None:
    path = DATA / "sample-trace.csv"
    out = run("--from-csv", str(path), "-o", "json")
    assert out.returncode == 0, out.stderr
    with path.open(newline="") as fh:
        expected = recommendations_json(replay(parse_trace(fh)))
    assert out.stdout == json.dumps(expected, indent=2) + "\n"


def test_a_30_day_trace_sampled_every_5_minutes_is_6_days_worth_and_says_so(
    tmp_path: Path,
) -> None:
    trace = tmp_path / "month.csv"
    rows = [f"{1_700_000_000 + 300 * i},app,0.2,200000000" for i in range(30 * 288 + 1)]
    trace.write_text("timestamp,container,cpu,memory\n" + "\n".join(rows) + "\n")
    out = run("--from-csv", str(trace))
    assert out.returncode == 0, out.stderr
    assert "span: 2023-11-14T22:13:20Z to 2023-12-14T22:13:20Z (30.0 days), a sample every 5m" in (
        out.stdout
    )
    assert (
        "confidence 6.0 days: 8641 CPU samples over 30.0 days, 1440 samples counting as a day"
        in out.stdout
    )


def test_gaps_are_named_longest_first_and_a_forgetting_one_says_so(tmp_path: Path) -> None:
    trace = tmp_path / "gaps.csv"
    minutes = [0, 1, 2, 60, 61, 62, 63] + [15_000 + m for m in range(5)]
    trace.write_text(
        "timestamp,pod,container,cpu,memory\n"
        + "".join(f"{60 * m},web-0,app,0.1,100000000\n" for m in minutes)
    )
    out = run("--from-csv", str(trace))
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[2] == "gaps: 2 longer than 3m without a sample, the longest 10.4 days"
    assert lines[3] == (
        "  web-0/app: 10.4 days from 1970-01-01T01:03:00Z to 1970-01-11T10:00:00Z: the history "
        "before it is forgotten (RIGHTSIZER_IDLE_AFTER_SECONDS)"
    )
    assert lines[4] == "  web-0/app: 58m from 1970-01-01T00:02:00Z to 1970-01-01T01:00:00Z"
