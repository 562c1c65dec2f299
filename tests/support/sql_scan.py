"""A static scan for SQL built from data: where Python source could hand SQLAlchemy SQL text
that was put together at run time instead of passing values as bound parameters.

What counts as raw SQL is resolved through the module's imports, so a function of the
application that merely shares a name with SQLAlchemy's (`app.core.wire.text`, which reads a
string out of JSON) is not mistaken for `sqlalchemy.text`:

- `text`, `literal_column`, `literal`: SQLAlchemy's constructors of SQL text, called by a name
  imported from a `sqlalchemy` module (under any alias), or as an attribute of a `sqlalchemy`
  module (`import sqlalchemy as sa; sa.text(...)`, `from sqlalchemy import sql; sql.text(...)`)
  or of Flask-SQLAlchemy's extension object, which re-exports SQLAlchemy's names (`db.text`,
  `db` imported from `app.store.extensions` or made by `SQLAlchemy(...)` in the module). Given
  anything but one literal string, they are a finding.
- `exec_driver_sql`: only SQLAlchemy's `Connection` has it; any call that is not one literal
  string is a finding, whatever the receiver.
- `execute()` given a string (literal or built at run time) rather than a SQLAlchemy construct.
"""

from __future__ import annotations

import ast

RAW_SQL_CONSTRUCTORS = frozenset({"text", "literal_column", "literal"})
RAW_SQL_METHODS = frozenset({"exec_driver_sql"})
EXTENSION_MODULES = ("app.store.extensions", "flask_sqlalchemy")


def _is_sqlalchemy(module: str | None) -> bool:
    return module is not None and (module == "sqlalchemy" or module.startswith("sqlalchemy."))


class _Names:
    """What the module's imports (and `X = SQLAlchemy(...)`) bind, as far as SQL goes."""

    def __init__(self, tree: ast.AST) -> None:
        self.constructors: dict[str, str] = {}  # local name -> SQLAlchemy constructor name
        self.modules: set[str] = set()  # local names of sqlalchemy modules or `db` objects
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if _is_sqlalchemy(alias.name):
                        # `import sqlalchemy.sql` binds `sqlalchemy`; `as sa` binds `sa`.
                        self.modules.add(alias.asname or alias.name.split(".")[0])
            elif isinstance(node, ast.ImportFrom):
                self._from_import(node)
            elif isinstance(node, ast.Assign) and _calls(node.value, "SQLAlchemy"):
                self.modules.update(t.id for t in node.targets if isinstance(t, ast.Name))

    def _from_import(self, node: ast.ImportFrom) -> None:
        for alias in node.names:
            local = alias.asname or alias.name
            if _is_sqlalchemy(node.module):
                if alias.name in RAW_SQL_CONSTRUCTORS:
                    self.constructors[local] = alias.name
                elif alias.name in ("sql", "expression", "sqlalchemy"):
                    self.modules.add(local)  # `from sqlalchemy import sql`
            elif node.module in EXTENSION_MODULES and alias.name == "db":
                self.modules.add(local)

    def raw_sql_call(self, func: ast.expr) -> str | None:
        """The SQLAlchemy function `func` names when it builds SQL from text, else None."""
        if isinstance(func, ast.Name):
            return self.constructors.get(func.id)
        if not isinstance(func, ast.Attribute):
            return None
        if func.attr in RAW_SQL_METHODS:
            return func.attr
        if func.attr in RAW_SQL_CONSTRUCTORS and _root(func.value) in self.modules:
            return func.attr
        return None


def _calls(node: ast.expr, name: str) -> bool:
    return isinstance(node, ast.Call) and (
        (isinstance(node.func, ast.Name) and node.func.id == name)
        or (isinstance(node.func, ast.Attribute) and node.func.attr == name)
    )


def _root(node: ast.expr) -> str:
    """`sa` of `sa.sql.expression`; "" when the chain does not start at a plain name."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else ""


def _is_literal_string(node: ast.expr) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str)


def _is_dynamic_string(node: ast.expr) -> bool:
    """An expression building a string at run time: f-string, %, +, or .format()."""
    if isinstance(node, ast.JoinedStr):
        return True
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod | ast.Add):
        return any(
            isinstance(side, ast.JoinedStr) or _is_literal_string(side)
            for side in (node.left, node.right)
        )
    return (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "format"
    )


def raw_sql_findings(source: str, filename: str) -> list[str]:
    """Places in `source` where SQL text could be built from data, as `file:line: what`."""
    tree = ast.parse(source, filename)
    names = _Names(tree)
    out = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        where = f"{filename}:{node.lineno}"
        raw = names.raw_sql_call(node.func)
        if raw is not None:
            args = [*node.args, *(k.value for k in node.keywords)]
            if not (len(args) == 1 and _is_literal_string(args[0])):
                out.append(f"{where}: {raw}() of a non-literal")
        elif (
            _calls(node, "execute")
            and node.args
            and (_is_dynamic_string(node.args[0]) or _is_literal_string(node.args[0]))
        ):
            out.append(f"{where}: execute() of a string")
    return out
