"""What `make demo` and `make test` install: the demo the service and its simulated cluster (the
`simulator` extra), the tests everything."""

from __future__ import annotations

import configparser
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


def dry_run(target: str, venv: Path) -> list[str]:
    """The pip installs `make TARGET` would run into a fresh venv (make -n: nothing is run)."""
    if shutil.which("make") is None:
        pytest.skip("make is not installed")
    out = subprocess.run(
        ["make", "-n", target, f"VENV={venv}"], cwd=ROOT, capture_output=True, text=True
    )
    assert out.returncode == 0, out.stderr
    return [line for line in out.stdout.splitlines() if " pip install " in line]


def test_make_demo_installs_only_what_the_service_and_the_simulator_need(tmp_path: Path) -> None:
    installs = dry_run("demo", tmp_path / "venv")
    assert installs and installs[-1].endswith("pip install --quiet -e '.[simulator]'")
    assert not any("[test]" in line for line in installs)


def test_what_only_the_simulator_needs_is_in_its_extra() -> None:
    """Issue 42: kubernetes-validate (the simulator's API schemas) is no dependency of the
    service; the `simulator` extra brings it, and the `test` extra brings that extra."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    extras = cfg["options.extras_require"]
    assert "kubernetes-validate" not in cfg["options"]["install_requires"]
    assert "kubernetes-validate" in extras["simulator"]
    assert "rightsizer[simulator]" in extras["test"].split()


def test_make_test_installs_the_test_toolchain(tmp_path: Path) -> None:
    installs = dry_run("test", tmp_path / "venv")
    assert any(line.endswith("pip install --quiet -e '.[test]'") for line in installs)
    # ... which the service itself does not depend on
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    service = cfg["options"]["install_requires"]
    for tool in ("playwright", "mypy", "schemathesis", "pytest"):
        assert tool in cfg["options.extras_require"]["test"] and tool not in service


def test_the_packages_are_found_with_the_templates_directory_in_them() -> None:
    """setuptools warns ("Package 'app.dashboard.templates.dashboard' is absent from the
    `packages` configuration", a 40-line box) when a directory of package data is importable
    but not listed: namespace discovery lists it."""
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    assert cfg["options"]["packages"].strip() == "find_namespace:"
    # a flat layout declared as such: a plain .pth for the editable install, no warning either
    assert cfg["options"]["package_dir"].split() == ["=", "."]
