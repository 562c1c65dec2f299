"""Issue 42 item 4: no package whose `__init__` and its modules import each other. A package's
`__init__` may assemble its modules (app.cli's command group, app.webhook's init_app); then none of
the modules it loads may import the package back (`from app.cli import context`: a name read from
a module still being executed). They import their siblings by their own names
(`from app.cli.context import ...`). import-linter cannot say it: its graph resolves
`from app.cli import context` to `app.cli.context`, so this reads the source."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app"


def module_name(path: Path) -> str:
    parts = path.relative_to(APP.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imports(path: Path, text: str | None = None) -> Iterator[tuple[str, list[str]]]:
    """(module imported from, names) of each import statement of the module at `path` (its
    source, or `text`), relative ones resolved."""
    package = module_name(path) if path.name == "__init__.py" else module_name(path.parent)
    source = path.read_text(encoding="utf-8") if text is None else text
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, []
        elif isinstance(node, ast.ImportFrom):
            base = package.split(".")
            if node.level:
                base = base[: len(base) - node.level + 1]
                name = ".".join([*base, node.module] if node.module else base)
            else:
                name = node.module or ""
            yield name, [alias.name for alias in node.names]


def loaded_by_init(package: Path) -> set[Path]:
    """The modules of `package` its `__init__` loads, directly or through one another."""
    name = module_name(package / "__init__.py")
    seen: set[Path] = set()
    todo = [package / "__init__.py"]
    while todo:
        for source, names in imports(todo.pop()):
            candidates = [source, *(f"{source}.{n}" for n in names)]
            for candidate in candidates:
                if not candidate.startswith(name + "."):
                    continue
                rel = Path(*candidate.split(".")[1:])
                for path in (APP / rel.with_suffix(".py"), APP / rel / "__init__.py"):
                    if path.exists() and path not in seen:
                        seen.add(path)
                        todo.append(path)
    return seen


def back_imports(package: Path) -> list[str]:
    name = module_name(package / "__init__.py")
    return [
        f"{module_name(path)} imports {source} ({', '.join(names)})"
        for path in sorted(loaded_by_init(package))
        for source, names in imports(path)
        if source == name and path.name != "__init__.py"
    ]


def test_no_package_init_and_its_modules_import_each_other() -> None:
    packages = [p.parent for p in APP.rglob("__init__.py")]
    assert len(packages) > 10
    assert [line for package in packages for line in back_imports(package)] == []


def test_the_check_sees_a_module_that_imports_its_package_back() -> None:
    """What the check reads: a module the `__init__` loads that imports the package back."""
    package = APP / "cli"
    assert any(p.name == "demo.py" for p in loaded_by_init(package))
    assert any(p.name == "context.py" for p in loaded_by_init(package))
    assert all(p.name != "__main__.py" for p in loaded_by_init(package))  # run, never loaded
    source = "from app.cli import context\n"
    assert list(imports(package / "session.py", source)) == [("app.cli", ["context"])]
    relative = "from . import metrics\nfrom .cache import WebhookCache\n"
    assert list(imports(APP / "webhook" / "route.py", relative)) == [
        ("app.webhook", ["metrics"]),
        ("app.webhook.cache", ["WebhookCache"]),
    ]
