"""`rightsizer recommend --from-csv` as users run it: a real process, stdout, stderr, exit code."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.markdown import section

DATA = Path(__file__).parents[1] / "data"


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "recommend", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


def test_single_sample_example(tmp_path: Path) -> None:
    trace = tmp_path / "one.csv"
    trace.write_text("timestamp,container,cpu,memory\n1700000000,app,0.5,1000000000\n")
    out = run("--from-csv", str(trace), "-o", "json")
    assert out.returncode == 0, out.stderr
    [c] = json.loads(out.stdout)["containers"]
    assert c["name"] == "app"
    assert c["target"] == {"cpu": "587m", "memory": "1115Mi"}


def test_sample_trace_lists_containers_sorted() -> None:
    out = run("--from-csv", str(DATA / "sample-trace.csv"), "-o", "json")
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert [c["name"] for c in body["containers"]] == ["app", "envoy"]
    for c in body["containers"]:
        assert set(c) == {"name", "target", "lowerBound", "upperBound", "uncappedTarget", "reason"}
        assert c["reason"].startswith("vpa: ")
        assert c["target"]["cpu"].endswith("m")
        assert c["target"]["memory"].endswith("Mi")  # rounded up to whole MiB


def test_reads_stdin() -> None:
    out = run(
        "--from-csv",
        "-",
        "-o",
        "json",
        stdin="timestamp,container,cpu,memory\n1700000000,app,0.5,1e9\n",
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["containers"][0]["target"]["cpu"] == "587m"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("", "line 1: empty file"),
        ("a,b,c\n", "line 1: bad header"),
        ("timestamp,container,cpu,memory\n1700000000,app,x,1\n", "line 2, column 'cpu'"),
        ("timestamp,container,cpu,memory\n1700000000,app,0.1,-1\n", "line 2, column 'memory'"),
        (
            "timestamp,container,cpu,memory\n1700000060,app,0.1,1\n1700000000,app,0.1,1\n",
            "line 3, column 'timestamp': 1700000000 is out of order",
        ),
    ],
)
def test_malformed_file_exits_2_with_nothing_on_stdout(
    tmp_path: Path, content: str, expected: str
) -> None:
    trace = tmp_path / "bad.csv"
    trace.write_text(content)
    out = run("--from-csv", str(trace))
    assert out.returncode == 2
    assert out.stdout == ""
    assert expected in out.stderr


def test_missing_file_exits_2(tmp_path: Path) -> None:
    out = run("--from-csv", str(tmp_path / "nope.csv"))
    assert out.returncode == 2
    assert out.stdout == ""
    assert "nope.csv" in out.stderr


def test_binary_file_exits_2(tmp_path: Path) -> None:
    trace = tmp_path / "bin.csv"
    trace.write_bytes(b"\xff\xfe\x00garbage")
    out = run("--from-csv", str(trace))
    assert out.returncode == 2
    assert "not UTF-8" in out.stderr


def test_bad_setting_is_a_usage_error(tmp_path: Path) -> None:
    trace = tmp_path / "one.csv"
    trace.write_text("timestamp,container,cpu,memory\n1700000000,app,0.5,1000000000\n")
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "recommend", "--from-csv", str(trace)],
        capture_output=True,
        text=True,
        env={"RIGHTSIZER_TARGET_CPU_PERCENTILE": "1.5", "PATH": "/usr/bin:/bin"},
        timeout=60,
    )
    assert out.returncode == 2
    assert "RIGHTSIZER_TARGET_CPU_PERCENTILE: target_cpu_percentile must be in (0, 1]" in out.stderr


def test_replay_learns_the_trace_into_the_database(tmp_path: Path) -> None:
    env = {"PATH": "/usr/bin:/bin", "RIGHTSIZER_DATABASE_URL": f"sqlite:///{tmp_path}/demo.db"}
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "app.cli",
            "replay",
            "--trace",
            str(DATA / "sample-trace.csv"),
        ],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert (body["namespace"], body["kind"], body["name"]) == ("demo", "Deployment", "web")
    assert [c["name"] for c in body["containers"]] == ["app", "envoy"]
    assert body["containers"][0]["sampleCount"] == 1728
    assert (tmp_path / "demo.db").exists()
    assert "replayed 3457 rows" in out.stderr


def test_another_strategy_and_its_parameters() -> None:
    trace = str(DATA / "bitbrains-vm20.csv")
    [vpa] = json.loads(run("--from-csv", trace, "-o", "json").stdout)["containers"]
    out = run(
        "--from-csv",
        trace,
        "-o",
        "json",
        "--recommender",
        "krr-simple",
        "--param",
        "cpuPercentile=99",
    )
    assert out.returncode == 0, out.stderr
    [krr] = json.loads(out.stdout)["containers"]
    assert krr["reason"].startswith("krr-simple over 14 days: CPU p99 of ")
    assert krr["target"] != vpa["target"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (("--recommender", "goldilocks"), "'goldilocks' is not one of"),
        (
            ("--recommender", "balanced", "--param", "memoryTimeAboveWeight=0"),
            "memoryTimeAboveWeight: must be greater than 0",
        ),
        (("--param", "cpuPercentile=90"), "cpuPercentile: unknown parameter"),
        (("--recommender", "krr-simple", "--param", "cpuPercentile"), "expected NAME=VALUE"),
        (("--recommender", "krr-simple", "--param", "cpuPercentile=high"), "is not a number"),
    ],
)
def test_a_bad_strategy_or_parameter_is_a_usage_error(args: tuple[str, ...], message: str) -> None:
    out = run("--from-csv", str(DATA / "sample-trace.csv"), *args)
    assert out.returncode == 2 and out.stdout == ""
    assert message in out.stderr


def test_the_docs_reason_examples_are_what_the_command_prints() -> None:
    doc = section("docs/strategies.md", "Recommendation strategies").splitlines()
    examples = [
        (line, doc[i + 1].strip())
        for i, line in enumerate(doc)
        if line.startswith("$ .venv/bin/rightsizer recommend --from-csv tests/data/bitbrains-vm20")
    ]
    assert len(examples) == 3
    for command, shown in examples:
        args = command.split("recommend ", 1)[1].split(" | ")[0].split()
        out = run(*args)
        assert out.returncode == 0, out.stderr
        [container] = json.loads(out.stdout)["containers"]
        assert shown == f'"reason": {json.dumps(container["reason"])}'


def test_the_docs_sample_output_is_what_the_command_prints() -> None:
    """docs/strategies.md shows what `recommend --from-csv tests/data/sample-trace.csv` prints,
    as is."""
    doc = section("docs/strategies.md", "Replaying a usage trace: `rightsizer recommend`")
    block = doc.split("$ .venv/bin/rightsizer recommend --from-csv tests/data/sample-trace.csv\n")[
        1
    ]
    block = block.split("```", 1)[0]
    out = subprocess.run(  # from the checkout's root, as the docs run it
        [sys.executable, "-m", "app.cli", "recommend", "--from-csv", "tests/data/sample-trace.csv"],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=DATA.parents[1],
        check=False,
    )
    assert out.returncode == 0, out.stderr
    assert block == out.stdout
