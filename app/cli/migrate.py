"""Offline helpers for moving from VPA and CPA: `scaler preview`, `scaler import`, `policy import`.

They work without rightsizer's server: preview evaluates params (and optionally a behavior) for a
cluster size you give, import turns a cluster-proportional-autoscaler ConfigMap manifest into a
scaler document for `scaler apply -f`, and VerticalPodAutoscaler objects, from a file or read from
the cluster (`--from-cluster`), into policy documents for `policy apply -f`. (`scaler preview
NAME`, which asks the server, is in app/cli/client.py.)
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, NoReturn, TypeVar

import click
import yaml

from app.core.scaling.behavior import BehaviorError, History, decide, parse_behavior, parse_history
from app.core.scaling.proportional import ClusterStatus, ParamsError, parse_params, replicas
from app.documents.cpa import ConfigMapRefused, scaler_from_configmap
from app.documents.scaler import preview
from app.documents.vpa import PolicyInvalid, policy_from_vpa

F = TypeVar("F", bound=Callable[..., Any])


def _exit(message: str) -> NoReturn:
    click.echo(f"error: {message}", err=True)
    sys.exit(2)


def preview_options(f: F) -> F:
    """The offline options of `scaler preview` (the command itself is in app/cli/client.py)."""
    for decorator in reversed(
        [
            click.option(
                "--params", help='CPA params, e.g. \'{"linear": {"coresPerReplica": 256}}\'.'
            ),
            click.option("--nodes", type=click.IntRange(min=0), help="Schedulable nodes."),
            click.option("--cores", type=click.IntRange(min=0), help="Schedulable cores."),
            click.option(
                "--total-nodes", type=click.IntRange(min=0), help="All nodes. [default: --nodes]"
            ),
            click.option(
                "--total-cores", type=click.IntRange(min=0), help="All cores. [default: --cores]"
            ),
            click.option(
                "--behavior",
                help="HPA-style behavior JSON ('{}': the HPA defaults); needs --current.",
            ),
            click.option(
                "--current", type=click.IntRange(min=0), help="The target's replicas now."
            ),
            click.option(
                "--history",
                help="Recent proposals and changes, ages in seconds: "
                '\'{"proposals": [[30, 5]], "changes": [[20, -1]]}\'.',
            ),
        ]
    ):
        f = decorator(f)
    return f


def _json(text: str, field: str) -> Any:
    try:
        return json.loads(text)
    except ValueError as e:
        _exit(f"{field}: not valid JSON: {e}")


def offline_preview(
    params: str | None,
    nodes: int | None,
    cores: int | None,
    total_nodes: int | None,
    total_cores: int | None,
    behavior: str | None,
    current: int | None,
    history: str | None,
) -> None:
    """Without --behavior/--current: {"replicas": N}. With them: the REST preview's shape."""
    for option, value in (("--params", params), ("--nodes", nodes), ("--cores", cores)):
        if value is None:
            _exit(f"{option} is required (or give a scaler NAME to preview it on the server)")
    assert params is not None and nodes is not None and cores is not None
    try:
        parsed = parse_params(params)
        status = ClusterStatus(
            total_nodes=nodes if total_nodes is None else total_nodes,
            schedulable_nodes=nodes,
            total_cores=cores if total_cores is None else total_cores,
            schedulable_cores=cores,
        )
    except (ParamsError, ValueError) as e:
        _exit(str(e))
    proposed = replicas(parsed, status)
    if behavior is None and current is None and history is None:
        click.echo(json.dumps({"replicas": proposed}))
        return
    if current is None:
        _exit("--current: required with --behavior or --history (the target's replicas now)")
    now = time.time()
    try:
        rules = parse_behavior(None if behavior is None else _json(behavior, "behavior"))
        past = History() if history is None else parse_history(_json(history, "history"), now)
    except BehaviorError as e:
        _exit(str(e))
    decision = decide(current, proposed, past.proposals, past.changes, now, rules)
    click.echo(json.dumps(preview(current, proposed, decision, status)))


@click.command("import")
@click.option(
    "--configmap",
    "path",
    required=True,
    type=click.Path(dir_okay=False, allow_dash=True),
    help="The autoscaler's ConfigMap manifest (YAML or JSON; '-': stdin).",
)
@click.option(
    "--target",
    required=True,
    help="What the autoscaler scaled: namespace/Kind/name, e.g. kube-system/Deployment/coredns.",
)
@click.option("--name", help="The scaler's name. [default: the ConfigMap's]")
@click.option(
    "-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)
def import_configmap(path: str, target: str, name: str | None, output: str) -> None:
    """Turn a cluster-proportional-autoscaler ConfigMap into a scaler (for `scaler apply -f -`)."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        manifest = yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        _exit(f"cannot read {path}: {e}")
    try:
        doc = scaler_from_configmap(manifest, target, name)
    except ConfigMapRefused as e:
        _exit(f"--target {target!r}: {e}" if e.field == "target" else f"{path}: {e}")
    click.echo(
        json.dumps(doc, indent=2) if output == "json" else yaml.safe_dump(doc, sort_keys=False),
        nl=output == "json",
    )


@click.command("import")
@click.option(
    "-f",
    "--filename",
    "path",
    type=click.Path(dir_okay=False, allow_dash=True),
    help="VerticalPodAutoscaler objects (YAML, e.g. `kubectl get vpa -A -o yaml`; '-': stdin).",
)
@click.option(
    "--from-cluster",
    is_flag=True,
    help="Read the VerticalPodAutoscaler objects from the cluster instead of a file.",
)
@click.option(
    "--kubeconfig",
    help="With --from-cluster. [default: RIGHTSIZER_KUBECONFIG, in-cluster, ~/.kube]",
)
@click.option("-n", "--namespace", help="With --from-cluster: only this namespace.")
@click.option(
    "-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)
def import_vpas(
    path: str | None,
    from_cluster: bool,
    kubeconfig: str | None,
    namespace: str | None,
    output: str,
) -> None:
    """Turn VerticalPodAutoscaler objects into policies (for `policy apply -f -`)."""
    if (path is None) == (not from_cluster):
        _exit("give one of -f/--filename and --from-cluster")
    if not from_cluster and (kubeconfig or namespace):
        _exit("--kubeconfig and --namespace go with --from-cluster")
    if from_cluster:
        path = "the cluster"
        vpas = cluster_vpas(kubeconfig, namespace)
    else:
        assert path is not None
        vpas = file_vpas(path)
    out = []
    for i, vpa in enumerate(vpas):
        if not isinstance(vpa, dict) or vpa.get("kind") != "VerticalPodAutoscaler":
            _exit(f"{path}: object {i + 1} is not a VerticalPodAutoscaler")
        meta = vpa.get("metadata") or {}
        name = f"{meta.get('namespace')}/{meta.get('name')}"
        try:
            doc, warnings = policy_from_vpa(vpa)
        except PolicyInvalid as e:
            _exit(f"{path}: VerticalPodAutoscaler {name}: {e}")
        for w in warnings:
            click.echo(f"warning: VerticalPodAutoscaler {name}: {w}", err=True)
        out.append(doc)
    if output == "json":
        click.echo(json.dumps({"items": out}, indent=2))
    else:
        click.echo(yaml.safe_dump_all(out, sort_keys=False), nl=False)


def file_vpas(path: str) -> list[Any]:
    """The objects of a YAML file (or stdin): each document, each item of a List."""
    try:
        text = sys.stdin.read() if path == "-" else Path(path).read_text(encoding="utf-8")
        docs = [d for d in yaml.safe_load_all(text) if d is not None]
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as e:
        _exit(f"cannot read {path}: {e}")
    vpas: list[Any] = []
    for d in docs:
        vpas += (
            d.get("items") or []
            if isinstance(d, dict) and d.get("kind", "").endswith("List")
            else [d]
        )
    return vpas


def cluster_vpas(kubeconfig: str | None, namespace: str | None) -> list[Any]:
    """The cluster's VerticalPodAutoscaler objects, read with the operator's own credentials:
    --kubeconfig, else RIGHTSIZER_KUBECONFIG, else in-cluster config or ~/.kube."""
    from app.kube.client import ClusterUnreachable, api_client
    from app.kube.vpas import VpasUnreadable, list_vpas

    try:
        api = api_client(kubeconfig or os.environ.get("RIGHTSIZER_KUBECONFIG") or None)
    except ClusterUnreachable as e:
        _exit(str(e))
    try:
        return list_vpas(api, namespace)
    except VpasUnreadable as e:
        _exit(str(e))
    finally:
        api.close()
