"""Marks `process` every test that starts a process, a server, a browser or a cluster.

`make test-fast` runs the others (`-m "not process and not slow and not e2e and not browser"`).
Rather than a hand-kept list, a test is marked when the code it runs from the tests (its function,
the fixtures it uses, transitively, and the helpers under `tests.` they call) names something that
starts one: `subprocess`, the simulated cluster (`app.simulator.simulator`, `app.simulator.testing`:
its API server listens on a port), a Werkzeug or `http.server` server (the live app, fake API
servers, proxies, the test Prometheus), Playwright, or the real control plane (`tests.realkube`).
The walk is by name and over-approximates: a helper module that starts a server somewhere marks
every test calling into it, which only moves a test from the fast loop to the full run.
"""

from __future__ import annotations

import functools
import inspect
from pathlib import Path
from types import CodeType, ModuleType
from typing import Any

import pytest

STARTERS = (
    "subprocess",
    "multiprocessing",
    "playwright",
    "werkzeug.serving",
    "http.server",
    "socketserver",
    "app.simulator.simulator",
    "app.simulator.testing",
    "tests.realkube",
)

TESTS = Path(__file__).resolve().parents[1]


def _of_the_tests(obj: Any) -> bool:
    """Code under tests/ (conftest modules are imported as `conftest`, not `tests.`...)."""
    try:
        return _under_tests(inspect.getfile(obj))
    except (TypeError, OSError):
        return False


@functools.cache
def _under_tests(filename: str) -> bool:
    return Path(filename).resolve().is_relative_to(TESTS)


def _is_starter(module: str | None) -> bool:
    return module is not None and any(module == s or module.startswith(s + ".") for s in STARTERS)


def _names(code: CodeType) -> set[str]:
    names = set(code.co_names)
    for const in code.co_consts:
        if isinstance(const, CodeType):
            names |= _names(const)
    return names


class _Walk:
    """Whether an object, followed through the tests' own code, names a starter."""

    def __init__(self) -> None:
        self.seen: set[int] = set()

    def starts(self, obj: Any) -> bool:
        if id(obj) in self.seen:
            return False
        self.seen.add(id(obj))
        if inspect.ismodule(obj):
            return _is_starter(obj.__name__)
        obj = inspect.unwrap(obj) if callable(obj) else obj
        module = getattr(obj, "__module__", None)
        if not isinstance(module, str):
            return False
        if _is_starter(module):
            return True
        if not _of_the_tests(obj):
            return False
        if inspect.isclass(obj):
            return any(self.starts(v) for v in vars(obj).values() if inspect.isfunction(v))
        if inspect.isfunction(obj):
            return self._code_starts(obj.__code__, obj.__globals__)
        return False

    def _code_starts(self, code: CodeType, scope: dict[str, Any]) -> bool:
        names = _names(code)
        if any(_is_starter(n) for n in names):  # `import subprocess` inside a function
            return True
        values = [scope[n] for n in names if n in scope]
        # `helpers.thing()`: the attribute names may belong to a module of the tests.
        for module in [v for v in values if isinstance(v, ModuleType)]:
            if _of_the_tests(module):
                values += [getattr(module, n) for n in names if hasattr(module, n)]
        return any(self.starts(v) for v in values)


def _starts_something(item: pytest.Function) -> bool:
    walk = _Walk()
    if walk.starts(item.function):
        return True
    for defs in item._fixtureinfo.name2fixturedefs.values():
        if defs and walk.starts(defs[-1].func):
            return True
    return False


@pytest.hookimpl(tryfirst=True)  # before `-m` deselects
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if isinstance(item, pytest.Function) and _starts_something(item):
            item.add_marker(pytest.mark.process)
