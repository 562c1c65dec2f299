"""The RBAC permissions rightsizer needs, read from its own code rather than written by hand.

Every Kubernetes call goes through a method of one of the official client's API classes
(`CoreV1Api.create_namespaced_pod_eviction`, ...). We parse `app/**/*.py`, find every reference to
such a method (called, or passed along as informers and the scale client do), and translate it:

- the verb from the method's name, as the client names them (`list_*` -> list, `read_*` -> get,
  `create_*` -> create, `replace_*` -> update, `patch_*` -> patch, `delete_collection_*` ->
  deletecollection, `delete_*` -> delete, `connect_<http method>_*` -> that method's verb);
- the API group, resource and subresource from the request path the client generates for it
  (`/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale` -> apps, deployments/scale);
- watch, when a list function is called with `watch=True` or handed to an `Informer` or to
  `Watch().stream` (both list, then watch);
- for `CustomObjectsApi`, the literal `group` and `plural` arguments of the call; a call whose
  line (or the line above) carries `# rbac: any-custom-resource` reads objects of any kind
  discovery finds, and needs its verb on `*` of group `*` (`*/scale` for a scale subresource,
  as VPA's ClusterRole grants it).

A reference on a line (or in a function whose `def` line) carrying the comment `# rbac: cli-only`
is skipped: code that only runs on an operator's machine with their own credentials must not widen
the service account's rights. Such a function may only be used from the CLI modules (`app/cli/`,
and a package's `cli.py`) or from other cli-only code; `cli_only_misuse` finds any other use, so
that the server cannot start calling what the chart does not grant. Discovery calls
(`get_api_resources`, ...) need no RBAC rule.

`python tools/rbac.py --write` regenerates the chart's `files/rbac.yaml`; `--check` fails when it
is out of date (the helm tests check it too). A build-time tool: it reads the product's code and
writes the chart, and is no part of either (issue 42).
"""

from __future__ import annotations

import ast
import functools
import inspect
import re
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kubernetes import client

Permission = tuple[str, str, str]  # (apiGroup, resource[/subresource], verb)

ROOT = Path(__file__).resolve().parents[1]
APP_DIR = ROOT / "app"
CHART_RBAC_FILE = ROOT / "helm" / "rightsizer" / "files" / "rbac.yaml"
SKIP_MARKER = "rbac: cli-only"
ANY_MARKER = "rbac: any-custom-resource"
# Modules of operator commands (`rightsizer webhook uninstall`, `rightsizer demo`, ...): the only
# ones, besides cli-only code itself, that may use a cli-only function. The `cli` package of the
# root (app/cli/) and a module named cli.py (app/simulator/cli.py).
CLI_PACKAGE, CLI_MODULE = "cli", "cli.py"

# Resources rightsizer only touches in its own namespace: granted by a Role, not the ClusterRole.
NAMESPACE_LOCAL = {("coordination.k8s.io", "leases"), ("", "secrets")}
# Objects rightsizer owns by name: get/update/patch/delete are limited to that name. The value is
# the token the chart replaces with the configured name (see templates/rbac.yaml).
NAMED = {
    ("coordination.k8s.io", "leases"): "lease",
    ("", "secrets"): "tlsSecret",
    ("admissionregistration.k8s.io", "mutatingwebhookconfigurations"): "webhookConfiguration",
}
NAMEABLE_VERBS = {"get", "update", "patch", "delete"}

VERB_PREFIXES = (
    ("list_", "list"),
    ("read_", "get"),
    ("create_", "create"),
    ("replace_", "update"),
    ("patch_", "patch"),
    ("delete_collection_", "deletecollection"),
    ("delete_", "delete"),
)
CONNECT_VERBS = {
    "get": "get",
    "head": "get",
    "options": "get",
    "post": "create",
    "put": "update",
    "patch": "patch",
    "delete": "delete",
}
CUSTOM_OBJECT_METHOD = re.compile(r"(get|list|create|replace|patch|delete)_\w*custom_object\w*")
PATH = re.compile(r"""['"](/apis?/[^'"]+)['"]""")
WATCHERS = {"Informer", "stream"}  # callees that list then watch the list function they are given


class RbacError(ValueError):
    """A call whose permission cannot be told from the code (say where and why)."""


@dataclass(frozen=True)
class Endpoint:
    group: str
    resource: str  # plural, with "/subresource" when there is one
    namespaced: bool


@functools.cache
def api_classes() -> dict[str, type]:
    """Every typed API class of the client (`CoreV1Api`, ...), by name."""
    names = getattr(client, "__all__", None) or dir(client)  # the package loads lazily
    found = {name: getattr(client, name) for name in names if name.endswith("Api")}
    return {name: cls for name, cls in found.items() if isinstance(cls, type)}


@functools.cache
def method_index() -> dict[str, tuple[str, ...]]:
    """Public method name -> the API classes defining it."""
    index: dict[str, list[str]] = {}
    for name, cls in api_classes().items():
        for attr in vars(cls):
            if not attr.startswith("_") and not attr.endswith("_with_http_info"):
                index.setdefault(attr, []).append(name)
    return {k: tuple(sorted(v)) for k, v in index.items()}


def verb_of(method: str) -> str | None:
    """The RBAC verb of a client method by its name; None for discovery and other non-resources."""
    if method.startswith("connect_"):
        http = method.split("_")[1]
        return CONNECT_VERBS.get(http)
    for prefix, verb in VERB_PREFIXES:
        if method.startswith(prefix):
            return verb
    return None


def endpoint_of_path(path: str) -> Endpoint:
    """'/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale' -> apps deployments/scale."""
    parts = [p for p in path.split("/") if p]
    if parts[0] == "api":
        group, rest = "", parts[2:]
    else:
        group, rest = parts[1], parts[3:]
    namespaced = len(rest) >= 3 and rest[0] == "namespaces" and rest[1] == "{namespace}"
    if namespaced:
        rest = rest[2:]
    if not rest:
        raise RbacError(f"{path}: no resource in the path")
    resource = rest[0]
    if len(rest) >= 3:
        resource += "/" + rest[2]
    return Endpoint(group, resource, namespaced)


@functools.cache
def endpoint_of(api_class: str, method: str) -> Endpoint:
    """Group and resource of a typed method, from the request path its generated code builds."""
    cls = api_classes()[api_class]
    source = ""
    for candidate in (f"_{method}_serialize", f"{method}_with_http_info", method):
        fn = getattr(cls, candidate, None)
        if fn is not None:
            source = inspect.getsource(fn)
            if PATH.search(source):
                break
    found = PATH.search(source)
    if not found:
        raise RbacError(f"{api_class}.{method}: no request path in the client's code")
    return endpoint_of_path(found.group(1))


def permissions_of_method(api_class: str, method: str) -> set[Permission]:
    """What calling `api_class.method` needs (watch is added by the caller when it applies)."""
    verb = verb_of(method)
    if verb is None:
        return set()
    e = endpoint_of(api_class, method)
    return {(e.group, e.resource, verb)}


@dataclass(frozen=True)
class Reference:
    """One use of a client method in the code."""

    file: Path
    line: int
    api_class: str
    method: str
    watch: bool
    call: ast.Call | None  # the call, when the method is called right there
    any_resource: bool = False  # marked ANY_MARKER: group and plural are whatever discovery says

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def needs_rbac(method: str) -> bool:
    """False for discovery (`get_api_resources`, ...), which every authenticated client may do."""
    return verb_of(method) is not None or CUSTOM_OBJECT_METHOD.fullmatch(method) is not None


def _receiver_name(node: ast.expr) -> str | None:
    """`core` for `core.x`, `self.core.x` and `self._core.x`: the name an API object is bound to."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _api_constructed(node: ast.expr | None, classes: dict[str, type]) -> str | None:
    """'CoreV1Api' for `client.CoreV1Api(api)` or `CoreV1Api(api)`."""
    if not isinstance(node, ast.Call):
        return None
    func = node.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name if name in classes else None


def _bindings(tree: ast.AST, classes: dict[str, type]) -> dict[str, set[str]]:
    """Names (variables and attributes) bound to API objects in a module -> their classes."""
    out: dict[str, set[str]] = {}

    def bind(target: ast.expr, value: ast.expr | None) -> None:
        if isinstance(target, ast.Tuple) and isinstance(value, ast.Tuple):
            for t, v in zip(target.elts, value.elts, strict=False):
                bind(t, v)
            return
        cls, name = _api_constructed(value, classes), _receiver_name(target)
        if cls and name:
            out.setdefault(name, set()).add(cls)

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, ast.AnnAssign):
            bind(node.target, node.value)
    return out


def _skipped_lines(source: str, tree: ast.AST) -> set[int]:
    lines = source.splitlines()
    marked = {i + 1 for i, text in enumerate(lines) if SKIP_MARKER in text}
    skipped = set(marked)
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef) and node.lineno in marked:
            skipped.update(range(node.lineno, (node.end_lineno or node.lineno) + 1))
    return skipped


def references(root: Path = APP_DIR, skip_cli_only: bool = True) -> Iterator[Reference]:
    """Every reference to a client API method under `root` (a package directory or one file);
    with `skip_cli_only`, not those in cli-only code."""
    classes, index = api_classes(), method_index()
    files = [root] if root.is_file() else sorted(root.rglob("*.py"))
    for path in files:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        bound = _bindings(tree, classes)
        skipped = _skipped_lines(source, tree) if skip_cli_only else set()
        lines = source.splitlines()
        calls: dict[int, ast.Call] = {}
        watched: set[int] = set()
        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            calls[id(node.func)] = node
            callee = _receiver_name(node.func) if isinstance(node.func, ast.Attribute) else None
            callee = callee or getattr(node.func, "id", None)
            if callee in WATCHERS:
                watched.update(id(a) for a in node.args)
                watched.update(id(k.value) for k in node.keywords)
            if any(
                k.arg == "watch" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            ):
                watched.add(id(node.func))
        for node in ast.walk(tree):
            if not isinstance(node, ast.Attribute) or node.attr not in index:
                continue
            if node.lineno in skipped or not needs_rbac(node.attr):
                continue
            owners = index[node.attr]
            constructed = _api_constructed(node.value, classes)
            receiver = _receiver_name(node.value)
            known = {constructed} if constructed else bound.get(receiver or "", set())
            known &= set(owners)
            if len(known) == 1:
                (owner,) = known
            elif len(owners) == 1:
                (owner,) = owners
            else:
                raise RbacError(
                    f"{path}:{node.lineno}: {node.attr} exists in {', '.join(owners)}; bind the "
                    "API object to a name assigned from the class (e.g. `core = CoreV1Api(api)`)"
                )
            marked = any(
                ANY_MARKER in lines[i] for i in (node.lineno - 2, node.lineno - 1) if i >= 0
            )
            yield Reference(
                path,
                node.lineno,
                owner,
                node.attr,
                id(node) in watched,
                calls.get(id(node)),
                marked,
            )


def _module_name(path: Path, root: Path) -> str:
    """'app.kube.client' for app/kube/client.py under the package directory `root` (app/)."""
    rel = path.relative_to(root.parent).with_suffix("")
    return ".".join(rel.parts[:-1] if rel.name == "__init__" else rel.parts)


def cli_only_misuse(root: Path = APP_DIR) -> list[str]:
    """Uses of a cli-only function (its `def` line marked) outside CLI modules and cli-only code.

    A use is a reference in the defining module, or a `from <module> import <function>` (and the
    imported name's references) elsewhere. Each finding is 'file:line: why'.
    """
    files = sorted(root.rglob("*.py"))
    parsed: dict[Path, tuple[ast.AST, set[int]]] = {}
    marked: dict[str, set[str]] = {}  # module -> its cli-only functions
    for path in files:
        source = path.read_text(encoding="utf-8")
        tree = ast.parse(source, filename=str(path))
        lines = source.splitlines()
        parsed[path] = (tree, _skipped_lines(source, tree))
        for node in ast.walk(tree):
            if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if SKIP_MARKER in lines[node.lineno - 1]:
                marked.setdefault(_module_name(path, root), set()).add(node.name)
    out: list[str] = []
    for path, (module_tree, skipped) in parsed.items():
        if path.relative_to(root).parts[0] == CLI_PACKAGE or path.name == CLI_MODULE:
            continue
        module = _module_name(path, root)
        names = {n: f"{module}.{n}" for n in marked.get(module, set())}
        for node in ast.walk(module_tree):
            if isinstance(node, ast.ImportFrom) and node.module in marked and not node.level:
                for alias in node.names:
                    if alias.name in marked[node.module]:
                        names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
                        if node.lineno not in skipped:
                            out.append(f"{path}:{node.lineno}: imports {node.module}.{alias.name}")
        for node in ast.walk(module_tree):
            if isinstance(node, ast.Name) and node.id in names and node.lineno not in skipped:
                out.append(f"{path}:{node.lineno}: uses {names[node.id]}")
    hint = f"which is `# {SKIP_MARKER}`: only app/cli/ and cli-only code may use it"
    return [f"{finding}, {hint}" for finding in sorted(set(out))]


def _literal_argument(call: ast.Call | None, name: str, position: int) -> str | None:
    if call is None:
        return None
    for k in call.keywords:
        if k.arg == name:
            value: Any = k.value
            break
    else:
        if len(call.args) <= position:
            return None
        value = call.args[position]
    literal = value.value if isinstance(value, ast.Constant) else None
    return literal if isinstance(literal, str) else None


def custom_object_permissions(ref: Reference) -> set[Permission]:
    """`CustomObjectsApi.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "pods")`.

    The path template ('/apis/{group}/{version}/namespaces/{namespace}/{plural}/{name}/scale')
    gives the shape; the call's literal arguments fill in `{group}` and `{plural}`.
    """
    verb = "get" if ref.method.startswith("get_") else verb_of(ref.method)
    if verb is None:
        raise RbacError(f"{ref.where()}: CustomObjectsApi.{ref.method}: unknown verb")
    e = endpoint_of("CustomObjectsApi", ref.method)
    method = getattr(api_classes()["CustomObjectsApi"], ref.method)
    params = [p for p in inspect.signature(method).parameters if p != "self"]
    group, resource = e.group, e.resource
    for placeholder in set(re.findall(r"\{(\w+)\}", f"{group}/{resource}")):
        value = _literal_argument(ref.call, placeholder, params.index(placeholder))
        if value is None and ref.any_resource:
            value = "*"
        if not isinstance(value, str):
            raise RbacError(
                f"{ref.where()}: CustomObjectsApi.{ref.method} needs a literal {placeholder} "
                "argument at the call (literal group and plural), so that its permission can be "
                "read from the code"
            )
        group = group.replace(f"{{{placeholder}}}", value)
        resource = resource.replace(f"{{{placeholder}}}", value)
    out = {(group, resource, verb)}
    if ref.watch and verb == "list":
        out.add((group, resource, "watch"))
    return out


def permissions_of(refs: Iterable[Reference]) -> set[Permission]:
    out: set[Permission] = set()
    for ref in refs:
        if ref.api_class == "CustomObjectsApi":
            out |= custom_object_permissions(ref)
            continue
        perms = permissions_of_method(ref.api_class, ref.method)
        out |= perms
        if ref.watch:
            out |= {(g, r, "watch") for g, r, v in perms if v == "list"}
    return out


def required_permissions(root: Path = APP_DIR) -> set[Permission]:
    """Every (apiGroup, resource, verb) the code under `root` can ask the API server for."""
    return permissions_of(references(root))


# The chart's copy ------------------------------------------------------------------------------


def chart_rules(perms: set[Permission]) -> dict[str, list[dict[str, Any]]]:
    """Rules for the ClusterRole (`clusterRules`) and the namespaced Role (`namespaceRules`).

    One rule per resource and name restriction; a `resourceNames` entry is a token (see NAMED).
    """
    grouped: dict[tuple[str, str, str], set[str]] = {}
    for group, resource, verb in perms:
        base = (group, resource.split("/")[0])
        token = NAMED.get(base, "") if verb in NAMEABLE_VERBS else ""
        grouped.setdefault((group, resource, token), set()).add(verb)
    out: dict[str, list[dict[str, Any]]] = {"clusterRules": [], "namespaceRules": []}
    for (group, resource, token), verbs in sorted(grouped.items()):
        rule: dict[str, Any] = {"apiGroups": [group], "resources": [resource]}
        if token:
            rule["resourceNames"] = token
        rule["verbs"] = sorted(verbs)
        local = (group, resource.split("/")[0]) in NAMESPACE_LOCAL
        out["namespaceRules" if local else "clusterRules"].append(rule)
    return out


def render_chart_file(perms: set[Permission]) -> str:
    """files/rbac.yaml: plain YAML in flow style, so that it diffs one rule per line."""

    def flow(items: list[str]) -> str:
        return "[" + ", ".join(f'"{i}"' for i in items) + "]"

    lines = [
        "# GENERATED by `python tools/rbac.py --write` from the Kubernetes calls in app/:",
        "# do not edit. resourceNames holds a token that templates/rbac.yaml replaces with the",
        "# name of the object rightsizer owns.",
    ]
    for key, rules in chart_rules(perms).items():
        lines.append(f"{key}:" + ("" if rules else " []"))
        for r in rules:
            lines.append(f"  - apiGroups: {flow(r['apiGroups'])}")
            lines.append(f"    resources: {flow(r['resources'])}")
            if "resourceNames" in r:
                lines.append(f"    resourceNames: {r['resourceNames']}")
            lines.append(f"    verbs: {flow(r['verbs'])}")
    return "\n".join(lines) + "\n"


def main(argv: list[str]) -> int:
    text = render_chart_file(required_permissions())
    if "--write" in argv:
        CHART_RBAC_FILE.parent.mkdir(parents=True, exist_ok=True)
        CHART_RBAC_FILE.write_text(text, encoding="utf-8")
        print(f"wrote {CHART_RBAC_FILE}")
    elif "--check" in argv:
        current = CHART_RBAC_FILE.read_text(encoding="utf-8") if CHART_RBAC_FILE.exists() else ""
        misuse = cli_only_misuse()
        for finding in misuse:
            print(finding)
        if current != text:
            print(f"{CHART_RBAC_FILE} is out of date: run `python tools/rbac.py --write`")
        if misuse or current != text:
            return 1
    else:
        for group, resource, verb in sorted(required_permissions()):
            print(f"{group or 'core'}\t{resource}\t{verb}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
