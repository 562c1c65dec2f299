"""Only the store commits (issue 42): no module of the service outside app/store calls a
`.commit()`; the API, the webhook and the jobs hand their writes to app.store functions, which
commit them (with their audit events). The simulator is no part of the service."""

from __future__ import annotations

import ast
from pathlib import Path

APP = Path(__file__).resolve().parents[2] / "app"
OUTSIDE = (APP / "store", APP / "simulator")


def commits(path: Path) -> list[int]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [
        node.lineno
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "commit"
        and not node.args
    ]


def test_no_module_outside_the_store_commits() -> None:
    found = {
        str(path.relative_to(APP.parent)): lines
        for path in sorted(APP.rglob("*.py"))
        if not any(path.is_relative_to(p) for p in OUTSIDE)
        for lines in [commits(path)]
        if lines
    }
    assert found == {}


def test_the_scan_finds_a_commit() -> None:
    store = commits(APP / "store" / "policies.py")
    assert store  # the store's own writes commit: the scan sees them
