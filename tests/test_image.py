"""Issue 42 item 1: the image does not contain the simulated cluster (app.simulator, the `simulator`
extra). There is no docker here: this rebuilds what the Dockerfile's builder stage installs, from
the build context docker would send (.dockerignore's rules), the files the Dockerfile COPYs from it
and setuptools' own discovery of setup.cfg's packages in them (what `pip install .` installs), then
runs the commands of the image from that copy."""

from __future__ import annotations

import configparser
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from setuptools import find_namespace_packages

ROOT = Path(__file__).parents[1]


def translate(pattern: str) -> str:
    """A .dockerignore pattern (Go's filepath.Match, with `**` for any number of directories) as
    a regular expression over paths relative to the context, `/`-separated."""
    out, i = "", 0
    while i < len(pattern):
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif pattern[i] == "*":
            out, i = out + "[^/]*", i + 1
        elif pattern[i] == "?":
            out, i = out + "[^/]", i + 1
        else:
            out, i = out + re.escape(pattern[i]), i + 1
    return out


def dockerignore() -> list[tuple[bool, re.Pattern[str]]]:
    rules = []
    for line in (ROOT / ".dockerignore").read_text(encoding="utf-8").splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        keep = line.startswith("!")
        rules.append((keep, re.compile(translate(line.lstrip("!").strip("/")))))
    return rules


def ignored(rel: str, rules: list[tuple[bool, re.Pattern[str]]]) -> bool:
    """Docker's rule: the last pattern that matches the path or one of its parents decides."""
    parts = rel.split("/")
    prefixes = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    verdict = False
    for keep, rule in rules:
        if any(rule.fullmatch(p) for p in prefixes):
            verdict = not keep
    return verdict


def context_files() -> set[str]:
    rules = dockerignore()
    files = set()
    for top, dirs, names in os.walk(ROOT):
        rel_top = Path(top).relative_to(ROOT).as_posix()
        rel = "" if rel_top == "." else rel_top + "/"
        dirs[:] = [d for d in dirs if not ignored(rel + d, rules)]
        files |= {rel + n for n in names if not ignored(rel + n, rules)}
    return files


def builder_copies() -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY of the Dockerfile's first stage."""
    stage = (ROOT / "Dockerfile").read_text(encoding="utf-8").split("\nFROM ")[1]
    copies = []
    for line in stage.splitlines():
        if line.startswith("COPY ") and "--from" not in line:
            *sources, dest = line.split()[1:]
            copies.append((sources, dest))
    return copies


@pytest.fixture(scope="module")
def source(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """/src of the builder stage, as `pip install .` finds it."""
    files = context_files()
    src = tmp_path_factory.mktemp("image") / "src"
    for sources, dest in builder_copies():
        for name in sources:
            under = [f for f in files if f == name or f.startswith(name + "/")]
            assert under, f"COPY {name}: not in the build context"
            for f in under:
                rel = Path(f).name if f == name else Path(f).relative_to(name)
                target = src / dest / rel
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(ROOT / f, target)
    return src


def test_the_simulator_is_not_in_the_build_context() -> None:
    files = context_files()
    assert "app/cli/serve.py" in files and "setup.cfg" in files
    assert [f for f in files if f.startswith("app/simulator")] == []
    assert ignored("app/simulator/cli.py", dockerignore())
    assert not ignored("app/cli/simulated.py", dockerignore())


def test_the_builder_installs_no_simulator_and_no_extra(source: Path) -> None:
    cfg = configparser.ConfigParser()
    cfg.read(source / "setup.cfg")
    include = cfg["options.packages.find"]["include"].replace(",", " ").split()
    packages = find_namespace_packages(where=str(source), include=include)
    assert "app.cli" in packages and "app.serving" in packages
    assert [p for p in packages if p.startswith("app.simulator")] == []
    installs = [
        line for line in (ROOT / "Dockerfile").read_text().splitlines() if "pip install" in line
    ]
    assert installs and all(line.rstrip().endswith("pip install .") for line in installs)
    assert "kubernetes-validate" not in cfg["options"]["install_requires"]


def rightsizer(source: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """The image's `rightsizer`: the builder's copy of app first on the path."""
    code = (
        "import sys; sys.path.insert(0, sys.argv.pop(1)); import app; "
        "assert app.__file__.startswith(sys.path[0]), app.__file__; "
        "from app.cli import main; sys.argv[0] = 'rightsizer'; main()"
    )
    return subprocess.run(
        [sys.executable, "-c", code, str(source), *args],
        cwd=source,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_image_s_commands_run_without_the_simulator(source: Path) -> None:
    """What the Dockerfile runs at build time (`rightsizer --help`) and the image's CMD's help;
    `rightsizer sim` says which extra it lacks."""
    for args in (["--help"], ["serve", "--help"]):
        out = rightsizer(source, *args)
        assert out.returncode == 0, out.stderr
    out = rightsizer(source, "sim")
    assert out.returncode == 1
    assert "no module named 'app.simulator'" in out.stderr
    assert "pip install 'rightsizer[simulator]'" in out.stderr
