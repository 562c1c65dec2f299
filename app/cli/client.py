"""`rightsizer policy|recommendations|scaler|events`: the REST API from a terminal.

These commands only speak HTTP to a server (--server, RIGHTSIZER_SERVER or the context file:
app/cli/session.py), never to the database, so they work the same against a laptop demo and a
remote deployment, and go through the same authentication, validation and audit trail as any
other client.
"""

from __future__ import annotations

import csv
import difflib
import io
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any, TypeVar

import click
import yaml

from app.cli.export import export_vpas
from app.cli.gitops import export_resources
from app.cli.migrate import import_configmap, import_vpas, offline_preview, preview_options
from app.cli.names import METAVAR, namespaced_name, object_ref
from app.cli.session import Api, api_options, cluster_option, fail
from app.cli.times import Since
from app.core.history import HOUR, History
from app.core.quantity import amount, readable
from app.core.update_mode import UPDATE_MODE_ALIASES, UPDATE_MODES
from app.documents.policy import PolicyInvalid, parse_policy
from app.documents.scaler import validate_scaler
from app.documents.stored import without_read_only

F = TypeVar("F", bound=Callable[..., Any])


def output_option(choices: Sequence[str], default: str) -> Callable[[F], F]:
    return click.option(
        "-o",
        "--output",
        type=click.Choice(list(choices)),
        default=default,
        show_default=True,
        help="Output format.",
    )


def table(headers: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    cells = [list(headers)] + [["" if v is None else str(v) for v in r] for r in rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(headers))]
    return "\n".join(
        "   ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells
    )


def dump(data: Any, output: str) -> str:
    if output == "json":
        return json.dumps(data, indent=2)
    text: str = yaml.safe_dump(data, sort_keys=False)
    return text.rstrip("\n")


def shown(resource: str, text: str | None, absent: str = "-") -> str:
    """A quantity the API sent, as a table shows it (app.core.quantity.readable): memory rounded
    up to a whole unit (`1168723596` -> `1115Mi`), "unknown" kept; json, yaml and csv keep the
    API's exact text. `absent` for a value the API left out."""
    if text is None:
        return absent
    try:
        return readable(resource, amount(resource, text))
    except ValueError:
        return text  # "unknown", or whatever a newer server says


def load_documents(path: str) -> list[dict[str, Any]]:
    """YAML or JSON: one document, several (---), or a list / {"items": [...]}."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        fail(f"cannot read {path}: {e}")
    try:
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except yaml.YAMLError as e:
        fail(f"{path}: not YAML or JSON: {e}")
    out: list[Any] = []
    for d in docs:
        if isinstance(d, dict) and isinstance(d.get("items"), list) and len(d) == 1:
            out += d["items"]
        elif isinstance(d, list):
            out += d
        else:
            out.append(d)
    for i, d in enumerate(out):
        if not isinstance(d, dict):
            fail(f"{path}: document {i + 1} is not a mapping")
    if not out:
        fail(f"{path}: no documents")
    return out


def apply(api: Api, kind: str, collection: str, item_path: str, doc: dict[str, Any]) -> None:
    """Create, or replace conditionally on the ETag just read (kubectl apply, without merging)."""
    doc = without_read_only(doc)
    current = api.call("GET", item_path, ok=(200, 404))
    if current.status_code == 404:
        resp = api.send("POST", collection, json=doc)
        verb = "created"
    else:
        headers = {"If-Match": current.headers.get("ETag", "*")}
        resp = api.send("PUT", item_path, json=doc, headers=headers)
        verb = "configured"
    if resp.status_code not in (200, 201):
        api.fail_response(resp, f"{kind} {item_path.split('/', 2)[2]}: ")
    click.echo(f"{kind} {item_path.split('/', 2)[2]} {verb}")


# policy ---------------------------------------------------------------------------------------
@click.group("policy")
def policy() -> None:
    """Policies (VerticalPodAutoscaler objects): apply, get, list, delete."""


@policy.command("apply")
@click.option("-f", "--filename", required=True, help="YAML or JSON file ('-': stdin).")
@api_options
def policy_apply(filename: str, api: Api) -> None:
    """Create or update the policies in FILE: all of them, or none if one is invalid."""
    docs = load_documents(filename)
    for i, doc in enumerate(docs):
        ns, name = doc.get("namespace"), doc.get("name")
        if not isinstance(ns, str) or not isinstance(name, str) or not ns or not name:
            fail(f"{filename}: every policy needs a name and a namespace")
        try:  # the server's own validation, before anything is written
            parse_policy(without_read_only(doc))
        except PolicyInvalid as e:
            fail(f"{filename}: document {i + 1} (policy {ns}/{name}): {e}; nothing applied")
    for doc in docs:
        ns, name = doc["namespace"], doc["name"]
        apply(api, "policy", "/policies", f"/policies/{ns}/{name}", doc)


@policy.command("get")
@click.argument("ref", nargs=-1, required=True, metavar=METAVAR)
@output_option(("yaml", "json"), "yaml")
@api_options
@cluster_option
def policy_get(ref: tuple[str, ...], output: str, api: Api) -> None:
    """Print one policy, e.g. shop/web (NAMESPACE '*' for a cluster default: '*/default')."""
    namespace, name = object_ref(ref)
    click.echo(dump(api.call("GET", f"/policies/{namespace}/{name}").json(), output))


@policy.command("list")
@click.option("-n", "--namespace", help="Only this namespace.")
@output_option(("table", "json", "yaml"), "table")
@api_options
@cluster_option
def policy_list(namespace: str | None, output: str, api: Api) -> None:
    """List policies."""
    params = {"namespace": namespace} if namespace else {}
    items = api.call("GET", "/policies", params=params).json()["items"]
    if output != "table":
        click.echo(dump(items, output))
        return
    placed = any(p.get("placement", "default") != "default" for p in items)  # then a column
    rows = []
    for p in items:
        target = p.get("target")
        rows.append(
            (
                p["namespace"],
                p["name"],
                f"{target['kind']}/{target['name']}" if target else "*",
                p["updateMode"],
                *((p.get("placement", "default"),) if placed else ()),
                len(p.get("containerPolicies") or []),
                p["updatedAt"],
            )
        )
    heads = ("NAMESPACE", "NAME", "TARGET", "MODE", *(("PLACEMENT",) if placed else ()))
    click.echo(table((*heads, "CONTAINERS", "UPDATED"), rows))


@policy.command("delete")
@click.argument("ref", nargs=-1, required=True, metavar=METAVAR)
@api_options
def policy_delete(ref: tuple[str, ...], api: Api) -> None:
    """Delete a policy, e.g. shop/web."""
    namespace, name = object_ref(ref)
    api.call("DELETE", f"/policies/{namespace}/{name}", ok=(204,))
    click.echo(f"policy {namespace}/{name} deleted")


@policy.command("set-mode")
@click.argument("policy_ref", metavar=METAVAR)
@click.argument("mode", type=click.Choice([*UPDATE_MODES, *UPDATE_MODE_ALIASES]))
@api_options
def policy_set_mode(policy_ref: str, mode: str, api: Api) -> None:
    """Set a policy's updateMode (Off: recommend only; Initial: size new pods; Recreate: also
    evict pods far from their recommendation; InPlaceOrRecreate: resize them in place first;
    InPlace: resize them in place, never evict)."""
    namespace, name = namespaced_name(policy_ref)
    path = f"/policies/{namespace}/{name}"
    current = api.call("GET", path, ok=(200, 404))
    if current.status_code == 404:
        fail(
            f"no policy {name!r} in namespace {namespace!r}: `rightsizer policy list` shows the "
            "policies; create one with `rightsizer policy apply -f FILE` (docs/policies.md)"
        )
    before = current.json().get("updateMode")
    headers = {
        "If-Match": current.headers.get("ETag", "*"),
        "Content-Type": "application/merge-patch+json",
    }
    resp = api.send("PATCH", path, json={"updateMode": mode}, headers=headers)
    if resp.status_code != 200:
        api.fail_response(resp, f"policy {namespace}/{name}: ")
    click.echo(f"policy {namespace}/{name}: updateMode {before} -> {resp.json()['updateMode']}")


# recommendations -------------------------------------------------------------------------------
@click.group("recommendations")
def recommendations() -> None:
    """Recommendations per workload container."""


CSV_COLUMNS = (
    "namespace",
    "kind",
    "name",
    "container",
    "target_cpu",
    "target_memory",
    "lower_cpu",
    "lower_memory",
    "upper_cpu",
    "upper_memory",
    "current_cpu",
    "current_memory",
    "node_group",  # a DaemonSet sized per node group: the group (empty: the DaemonSet-wide row)
)


def recommendation_rows(items: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """A row per workload container, then one per node group of a DaemonSet sized per group."""
    rows = []
    for w in items:
        for c in w["containers"]:
            for r in (c, *(c.get("nodeGroups") or ())):
                cur = r.get("currentRequests") or {}
                target, lower = r.get("target") or {}, r.get("lowerBound") or {}
                upper = r.get("upperBound") or {}
                rows.append(
                    {
                        "namespace": w["namespace"],
                        "kind": w["kind"],
                        "name": w["name"],
                        "container": c["name"],
                        "target_cpu": target.get("cpu"),
                        "target_memory": target.get("memory"),
                        "lower_cpu": lower.get("cpu"),
                        "lower_memory": lower.get("memory"),
                        "upper_cpu": upper.get("cpu"),
                        "upper_memory": upper.get("memory"),
                        "current_cpu": cur.get("cpu"),
                        "current_memory": cur.get("memory"),
                        "node_group": r.get("nodeGroup"),
                    }
                )
    return rows


def condition_summary(workload: dict[str, Any]) -> str:
    """The workload's conditions in a word each (app.core.conditions): those that hold, and
    `NoRecommendation` when RecommendationProvided is False; `-` when none says anything."""
    words = []
    for c in workload.get("conditions") or []:
        if c.get("type") == "RecommendationProvided":
            if c.get("status") == "False":
                words.append("NoRecommendation")
        elif c.get("status") == "True":
            words.append(str(c.get("type")))
    return ",".join(words) or "-"


def group_cell(workload: dict[str, Any], group: str | None) -> str:
    """NODE GROUP: `label=value` of a node group's row, `*` for the DaemonSet-wide row of a
    DaemonSet sized per group, `-` otherwise."""
    label = workload.get("nodeGroupLabel")
    if label is None:
        return "-"
    return "*" if group is None else f"{label}={group}"


def too_little_history(container: dict[str, Any]) -> str | None:
    """`not enough history: 0.2 hours of 1` for a container the API says has less history than
    the updater needs (its `history`), else None."""
    h = container.get("history")
    if not isinstance(h, dict) or h.get("enough") is not False:
        return None
    try:
        hours, needed = float(h["hours"]), float(h["neededHours"])
    except (KeyError, TypeError, ValueError):
        return None
    return History(hours * HOUR, needed * HOUR).message()


def table_rows(items: list[dict[str, Any]]) -> list[tuple[str, ...]]:
    """One line per workload container; a workload without any (a policy's target without
    pods) gets one line saying why, in its conditions. A DaemonSet sized per node group adds a
    line per group, and the table a last column, NODE GROUP (`group_cell`)."""
    out: list[tuple[str, ...]] = []
    grouped = any(w.get("nodeGroupLabel") for w in items)  # a NODE GROUP column, then
    for w in items:
        conditions = condition_summary(w)
        rows: list[dict[str, Any]] = recommendation_rows([w]) or [{"container": "-"}]
        short = {c["name"]: too_little_history(c) for c in w["containers"]}
        for r in rows:
            # a container with less history than the updater needs: said so, not VPA's bounds
            # (hundreds of times the target, or unknown, at first); json, yaml and csv keep them
            young = short.get(r["container"]) if r.get("node_group") is None else None
            out.append(
                (
                    w["namespace"],
                    f"{w['kind']}/{w['name']}",
                    r["container"],
                    shown("cpu", r.get("target_cpu")),
                    shown("memory", r.get("target_memory")),
                    young
                    or (
                        f"{shown('cpu', r.get('lower_cpu'))}-{shown('cpu', r.get('upper_cpu'))}"
                        if r.get("lower_cpu") is not None
                        else "-"
                    ),
                    young
                    or (
                        f"{shown('memory', r.get('lower_memory'))}-"
                        f"{shown('memory', r.get('upper_memory'))}"
                        if r.get("lower_memory") is not None
                        else "-"
                    ),
                    shown("cpu", r.get("current_cpu")),
                    shown("memory", r.get("current_memory")),
                    conditions,
                    *((group_cell(w, r.get("node_group")),) if grouped else ()),
                )
            )
    return out


def nothing_listed(api: Api, namespace: str | None) -> str:
    """Why a list of recommendations is empty: none yet anywhere, or none in this namespace
    while others have some (a typo, such as `-n shopp`: the namespaces that have workloads are
    named, the closest first)."""
    if namespace is None:
        return "no recommendations yet"
    resp = api.send("GET", "/recommendations")
    if resp.status_code != 200:  # e.g. a reader limited to some namespaces: no hint
        return f"no recommendations in namespace {namespace!r}"
    known = sorted({str(w.get("namespace")) for w in resp.json().get("items") or []})
    if not known:
        return "no recommendations yet, in any namespace"
    close = difflib.get_close_matches(namespace, known, n=1)
    guess = f"; did you mean {close[0]!r}?" if close else ""
    return (
        f"no workloads in namespace {namespace!r}: rightsizer knows of none there "
        f"(namespaces with workloads: {', '.join(known)}){guess}"
    )


@recommendations.command("list")
@click.option("-n", "--namespace", help="Only this namespace.")
@output_option(("table", "json", "yaml", "csv"), "table")
@api_options
@cluster_option
def recommendations_list(namespace: str | None, output: str, api: Api) -> None:
    """List recommendations: one line per workload container."""
    params = {"namespace": namespace} if namespace else {}
    items = api.call("GET", "/recommendations", params=params).json()["items"]
    if output in ("json", "yaml"):
        click.echo(dump(items, output))
        return
    rows = recommendation_rows(items)
    if output == "csv":
        buf = io.StringIO()
        writer = csv.DictWriter(buf, CSV_COLUMNS, lineterminator="\n")
        writer.writeheader()
        writer.writerows(rows)
        click.echo(buf.getvalue(), nl=False)
        return
    if not items:
        click.echo(nothing_listed(api, namespace), err=True)
        return
    click.echo(
        table(
            (
                "NAMESPACE",
                "WORKLOAD",
                "CONTAINER",
                "CPU",
                "MEMORY",
                "CPU RANGE",
                "MEMORY RANGE",
                "CURRENT CPU",
                "CURRENT MEMORY",
                "CONDITIONS",
                *(("NODE GROUP",) if any(w.get("nodeGroupLabel") for w in items) else ()),
            ),
            table_rows(items),
        )
    )


# scaler ---------------------------------------------------------------------------------------
@click.group("scaler")
def scaler() -> None:
    """Proportional scalers (cluster-proportional-autoscaler): list, apply, delete, preview..."""


@scaler.command("list")
@output_option(("table", "json", "yaml"), "table")
@api_options
@cluster_option
def scaler_list(output: str, api: Api) -> None:
    """List scalers with what they last did."""
    items = api.call("GET", "/scalers").json()["items"]
    if output != "table":
        click.echo(dump(items, output))
        return
    rows = []
    for s in items:
        t, status = s["target"], s.get("status") or {}
        [mode] = list(s["params"]) or ["?"]
        rows.append(
            (
                s["name"],
                f"{t['namespace']}/{t['kind']}/{t['name']}",
                mode,
                "yes" if s["enabled"] else "no",
                status.get("lastApplied") if status.get("lastApplied") is not None else "-",
                status.get("lastRunTime") or "-",
            )
        )
    click.echo(table(("NAME", "TARGET", "MODE", "ENABLED", "REPLICAS", "LAST RUN"), rows))


@scaler.command("apply")
@click.option("-f", "--filename", required=True, help="YAML or JSON file ('-': stdin).")
@api_options
def scaler_apply(filename: str, api: Api) -> None:
    """Create or update the scalers in FILE: all of them, or none if one is invalid."""
    docs = load_documents(filename)
    for i, doc in enumerate(docs):
        name = doc.get("name")
        if not isinstance(name, str) or not name:
            fail(f"{filename}: every scaler needs a name")
        errors = validate_scaler(without_read_only(doc))  # the server's own validation
        if errors:
            details = "; ".join(f"{e.field}: {e.message}" for e in errors)
            fail(f"{filename}: document {i + 1} (scaler {name}): {details}; nothing applied")
    for doc in docs:
        apply(api, "scaler", "/scalers", f"/scalers/{doc['name']}", doc)


@scaler.command("preview")
@click.argument("name", required=False)
@preview_options
@api_options
def scaler_preview(name: str | None, api: Api, **offline: Any) -> None:
    """What a scaler proposes and what its behavior allows now, and why.

    \b
    rightsizer scaler preview NAME
        the stored scaler on the live cluster (asks the server)
    rightsizer scaler preview --params JSON --nodes N --cores C
        offline, for a cluster size you give; add --behavior JSON --current N
        [--history JSON] to see what a behavior allows
    """
    if name is None:
        offline_preview(**offline)
        return
    given = [k for k, v in offline.items() if v is not None]
    if given:
        click.echo(
            f"error: --{given[0].replace('_', '-')}: not with a scaler NAME "
            "(the server uses the stored scaler and the live cluster)",
            err=True,
        )
        sys.exit(2)
    click.echo(json.dumps(api.call("GET", f"/scalers/{name}/preview").json()))


scaler.add_command(import_configmap)
policy.add_command(import_vpas)
policy.add_command(export_vpas)


@scaler.command("delete")
@click.argument("name")
@api_options
def scaler_delete(name: str, api: Api) -> None:
    """Delete a scaler."""
    api.call("DELETE", f"/scalers/{name}", ok=(204,))
    click.echo(f"scaler {name} deleted")


# events ---------------------------------------------------------------------------------------
@click.command("events")
@click.option("--action", help="Only this action (create, update, delete, evict, scale, ...).")
@click.option("--kind", "object_kind", help="Only this object kind (Policy, Scaler, Pod, ...).")
@click.option("--ref", "object_ref", help="Only this object, e.g. shop/web.")
@click.option(
    "--since",
    type=Since(),
    help="Only events since then: 2m, 1h, 3d (that long ago), an RFC 3339 time or unix seconds.",
)
@click.option("--limit", type=click.IntRange(1), default=50, show_default=True)
@output_option(("table", "json", "yaml"), "table")
@api_options
@cluster_option
def events(
    action: str | None,
    object_kind: str | None,
    object_ref: str | None,
    since: str | None,
    limit: int,
    output: str,
    api: Api,
) -> None:
    """The audit trail, newest first (follows pages until --limit events)."""
    params: dict[str, Any] = {
        k: v
        for k, v in (
            ("action", action),
            ("objectKind", object_kind),
            ("objectRef", object_ref),
            ("since", since),
        )
        if v
    }
    items: list[dict[str, Any]] = []
    while len(items) < limit:
        params["limit"] = min(limit - len(items), 1000)
        page = api.call("GET", "/events", params=params).json()
        items += page["items"]
        if not page["continue"]:
            break
        params["continue"] = page["continue"]
    if output != "table":
        click.echo(dump(items, output))
        return
    click.echo(
        table(
            ("TIME", "ACTOR", "ACTION", "OBJECT", "MESSAGE"),
            [
                (
                    e["time"],
                    e["actor"],
                    e["action"],
                    f"{e['objectKind']} {e['objectRef']}",
                    e["message"],
                )
                for e in items
            ],
        )
    )


def register(cli: click.Group) -> None:
    for command in (policy, recommendations, scaler, events, export_resources):
        cli.add_command(command)
