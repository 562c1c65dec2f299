"""benchmarks/quality.py on a small directory: the table, the baseline, the record it writes."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HELD_OUT = ROOT / "tests" / "data" / "bitbrains-rnd-2013-07"


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "benchmarks" / "quality.py"), *args],
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_it_judges_each_strategy_against_vpa_and_records_where(tmp_path: Path) -> None:
    for vm in ("vm1", "vm20"):
        shutil.copy(HELD_OUT / f"{vm}.csv.gz", tmp_path)
    (tmp_path / "short.csv").write_text("timestamp,container,cpu,memory\n0,app,0.1,1000\n")
    out = tmp_path / "result.txt"
    done = run(str(tmp_path), "--output", str(out), "--per-trace", "--hindsight", "10")
    assert done.returncode == 0, done.stderr
    assert out.read_text() == done.stdout
    lines = done.stdout.splitlines()
    assert lines[0].startswith("# benchmarks/quality.py ")
    assert "at commit " in lines[1] and "cores" in lines[1]
    assert "3 traces" in lines[2] and "2 judged" in lines[2] and "1 too short (short)" in lines[2]
    rows: dict[str, str] = {}
    for line in lines:  # the first table: under-provisioning and slack
        name = line.split(" ", 1)[0]
        if name in ("vpa", "krr-simple", "balanced", "hindsight"):
            rows.setdefault(name, line)
    assert set(rows) == {"vpa", "krr-simple", "balanced", "hindsight"}
    assert rows["hindsight"].startswith("hindsight (weight 10)")
    assert rows["vpa"].count("x1.00") >= 4  # the baseline against itself
    assert "vm1/vm" in done.stdout and "vm20/vm" in done.stdout


def test_a_bad_strategy_parameter_is_named(tmp_path: Path) -> None:
    shutil.copy(HELD_OUT / "vm20.csv.gz", tmp_path)
    done = run(str(tmp_path), "--strategy", "balanced:memoryTimeAboveWeight=0")
    assert done.returncode != 0
    assert "memoryTimeAboveWeight: must be greater than 0" in done.stderr


def test_strategy_parameters_show_in_the_table(tmp_path: Path) -> None:
    shutil.copy(HELD_OUT / "vm20.csv.gz", tmp_path)
    done = run(str(tmp_path), "--strategy", "krr-simple:cpuPercentile=90")
    assert done.returncode == 0, done.stderr
    assert "krr-simple (cpuPercentile=90)" in done.stdout
    assert "balanced" not in done.stdout.split("x: ratio")[1]  # only the strategies asked for


def test_hindsight_knows_the_future_so_it_is_never_above_its_own_limit(tmp_path: Path) -> None:
    """At weight w, the level chosen from the judged samples leaves at most 1/w of them above."""
    shutil.copy(HELD_OUT / "vm20.csv.gz", tmp_path)
    done = run(str(tmp_path), "--hindsight", "4", "--strategy", "vpa")
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("hindsight (weight 4)"))
    memory_under = float(line.split()[-4].rstrip("%"))
    assert memory_under <= 25.0
    assert run(str(tmp_path), "--hindsight", "0").returncode == 2


def _table(text: str, title: str) -> dict[str, str]:
    """The first table after the line starting with `title`: its rows by strategy."""
    part = text.split("\n" + title, 1)[1]
    rows: dict[str, str] = {}
    for line in part.split("\n\n", 2)[1].splitlines()[3:]:
        rows[line.split("  ", 1)[0]] = line
    return rows


def test_rolling_with_one_step_longer_than_the_judged_part_is_the_fixed_protocol(
    tmp_path: Path,
) -> None:
    """Asked only at the start, the request never changes: the rolling figures are the fixed ones
    (slack 1 - used / requested is 1 - mean / target for one target)."""
    shutil.copy(HELD_OUT / "vm20.csv.gz", tmp_path)
    done = run(str(tmp_path), "--rolling", "10000", "--strategy", "vpa", "--strategy", "balanced")
    assert done.returncode == 0, done.stderr
    fixed, rolling = _table(done.stdout, "Fixed protocol"), _table(done.stdout, "Rolling protocol")
    assert set(fixed) == set(rolling) == {"vpa", "balanced"}
    assert fixed == rolling
    assert " 0.00" in done.stdout.split("updates/day")[-1]  # nobody was replaced


def test_rolling_replaces_pods_and_judges_each_sample_against_the_request_in_force(
    tmp_path: Path,
) -> None:
    shutil.copy(HELD_OUT / "vm20.csv.gz", tmp_path)
    done = run(str(tmp_path), "--rolling", "1", "--strategy", "vpa", "--per-trace")
    assert done.returncode == 0, done.stderr
    fixed, rolling = _table(done.stdout, "Fixed protocol"), _table(done.stdout, "Rolling protocol")
    assert fixed["vpa"] != rolling["vpa"]  # the request changed on the way
    updates = done.stdout.split("updates/day\n")[1].splitlines()[1].split()[-1]
    assert float(updates) > 0
    assert done.stdout.count("vm20/vm") == 2  # per trace, under both protocols
    assert run(str(tmp_path), "--rolling", "0").returncode == 2


def test_the_foresight_bound_is_printed_and_the_restricted_one_is_higher(tmp_path: Path) -> None:
    for vm in ("vm1", "vm20"):
        shutil.copy(HELD_OUT / f"{vm}.csv.gz", tmp_path)
    done = run(str(tmp_path), "--strategy", "vpa", "--bound")
    assert done.returncode == 0, done.stderr
    text = done.stdout.split("Foresight bound", 1)[1]
    figures = [float(x) for x in re.findall(r"(-?[0-9.]+)%", text)]
    assert len(figures) == 5, text  # under, the two bounds, "20% below", that figure
    under, kept, any_level, _, target = figures
    assert kept >= any_level  # levels below a trace's mean can only lower the bound
    assert 0 < under < 100 and target < 100


def test_the_frontier_sweeps_each_knob_and_draws_the_curves_with_the_bound(
    tmp_path: Path,
) -> None:
    held, train = tmp_path / "held", tmp_path / "train"
    held.mkdir()
    train.mkdir()
    shutil.copy(HELD_OUT / "vm20.csv.gz", held)
    shutil.copy(HELD_OUT / "vm1.csv.gz", train)  # any other trace stands for the training set
    png = tmp_path / "frontier.png"
    args = ["--frontier", "--rolling", "6", "--small-sweep", "--training", str(train)]
    done = run(str(held), *args, "--plot", str(png))
    assert done.returncode == 0, done.stderr
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert str(tmp_path) not in done.stdout  # directories outside the repository: name only
    training, held_out = done.stdout.split("\ntraining: ", 1)[1].split("\nheld-out: ", 1)
    for part in (training, held_out):
        defaults = [line.split()[0] for line in part.splitlines() if " * " in line[:14]]
        assert defaults == ["vpa", "krr-simple", "balanced"]  # each default marked once
        assert part.count("\nvpa ") == 2  # two settings of its knob
        bounds = re.findall(r"the hindsight bound (-?[0-9.]+)%", part)
        unused = re.findall(r"vpa leaves ([0-9.]+)% unused", part)
        assert len(bounds) == len(unused) == 2  # CPU and memory
        for b, u in zip(bounds, unused, strict=True):
            assert 0 <= float(b) <= float(u)  # no default beats knowing the future
    # the default vpa point is what the rolling protocol gives vpa alone
    alone = run(str(held), "--rolling", "6", "--strategy", "vpa")
    row = alone.stdout.split("updates/day\n")[1].splitlines()[1].split()
    point = next(line for line in held_out.splitlines() if line.startswith("vpa *")).split()
    assert (point[-5], point[-3], point[-2]) == (row[1], row[2], row[3])
    assert run(str(held), "--frontier").returncode == 2  # the rolling protocol is needed
