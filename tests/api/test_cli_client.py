"""The CLI against a real server over HTTP: apply, get, list, delete, outputs and errors."""

from __future__ import annotations

import csv
import io
import json
import math
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from flask import Flask
from sqlalchemy import update

from app.cli import cli
from app.config import override
from app.core.quantity import MAX_AMOUNT
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.tokens import TOKENS
from tests.support.usage import seed

Invoke = Callable[..., Result]

POLICIES = """\
name: web
namespace: shop
target: {kind: Deployment, name: web}
updateMode: Auto
containerPolicies:
  - containerName: app
    minAllowed: {cpu: 100m}
---
name: default
namespace: "*"
"""

SCALER = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1}},
}


@pytest.fixture
def run(live_url: str) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str, token: str = TOKENS["admin"], stdin: str | None = None) -> Result:
        env = {"RIGHTSIZER_SERVER": live_url, "RIGHTSIZER_TOKEN": token}
        return runner.invoke(cli, list(args), env=env, input=stdin, catch_exceptions=False)

    return invoke


def test_policy_apply_get_list_delete(run: Invoke, tmp_path: Path) -> None:
    f = tmp_path / "policies.yaml"
    f.write_text(POLICIES)
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 0, out.output
    # stdout: what was done (warnings go to stderr: this server has no cluster to check against)
    assert out.stdout.splitlines() == ["policy shop/web created", "policy */default created"]
    again = run("policy", "apply", "-f", str(f))
    assert again.stdout.splitlines()[0] == "policy shop/web configured"
    got = yaml.safe_load(run("policy", "get", "shop", "web").output)
    assert got["target"] == {"kind": "Deployment", "name": "web"}
    assert got["version"] == 2
    assert json.loads(run("policy", "get", "shop", "web", "-o", "json").output)["name"] == "web"
    listed = run("policy", "list").output.splitlines()
    assert listed[0].split() == ["NAMESPACE", "NAME", "TARGET", "MODE", "CONTAINERS", "UPDATED"]
    assert listed[1].split()[:5] == ["*", "default", "*", "Off", "0"]
    assert listed[2].split()[:5] == ["shop", "web", "Deployment/web", "Auto", "1"]
    only = json.loads(run("policy", "list", "-n", "shop", "-o", "json").output)
    assert [p["name"] for p in only] == ["web"]
    assert run("policy", "delete", "shop", "web").output == "policy shop/web deleted\n"
    gone = run("policy", "get", "shop", "web")
    assert gone.exit_code == 1
    assert "no policy 'web' in namespace 'shop' (404 NotFound)" in gone.output


def test_apply_of_an_invalid_policy_names_the_fields(run: Invoke, tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    f.write_text("name: web\nnamespace: shop\nupdateMode: Never\nminReplicas: -1\n")
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 1
    assert "updateMode: 'Never' is not one of" in out.output
    assert "minReplicas: must be a whole number" in out.output
    assert json.loads(run("policy", "list", "-o", "json").output) == []


def test_without_permission_or_token(run: Invoke, tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nnamespace: shop\n")
    out = run("policy", "apply", "-f", str(f), token=TOKENS["reader"])
    assert out.exit_code == 1
    assert "bob may not create policies in namespace shop (403 Forbidden)" in out.output
    out = run("policy", "list", token="")
    assert out.exit_code == 1
    assert "a bearer token is required (401 Unauthorized)" in out.output


def test_recommendations_outputs(app: Flask, run: Invoke) -> None:
    seed()
    text = run("recommendations", "list").output.splitlines()
    assert text[0].split()[:5] == ["NAMESPACE", "WORKLOAD", "CONTAINER", "CPU", "MEMORY"]
    assert text[1].split()[:8] == [
        "ops",
        "Deployment/web",
        "main",
        "587m",
        "1115Mi",
        "570m-9125m",
        "1083Mi-17327Mi",
        "-",
    ]
    assert len(text) == 4
    rows = list(
        csv.DictReader(
            io.StringIO(run("recommendations", "list", "-n", "shop", "-o", "csv").output)
        )
    )
    assert [(r["kind"], r["name"]) for r in rows] == [("Deployment", "web"), ("StatefulSet", "db")]
    assert rows[0]["target_memory"] == "1115Mi"
    assert rows[0]["current_cpu"] == ""
    as_yaml = yaml.safe_load(run("recommendations", "list", "-o", "yaml").output)
    assert len(as_yaml) == 3
    assert len(json.loads(run("recommendations", "list", "-o", "json", "-n", "ops").output)) == 1


def test_an_unbounded_upper_bound_reads_unknown(app: Flask, run: Invoke) -> None:
    """Without history the upper bound saturates at int64: never 9223372036854775807m or
    8.39e+06Ti in a table, nor in the API's JSON."""
    seed()
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "ops")
        .values(upper_bound_cpu=MAX_AMOUNT, upper_bound_memory=MAX_AMOUNT)
    )
    db.session.commit()
    line = run("recommendations", "list", "-n", "ops").output.splitlines()[1].split()
    assert line[5:7] == ["570m-unknown", "1083Mi-unknown"]
    [row] = csv.DictReader(
        io.StringIO(run("recommendations", "list", "-n", "ops", "-o", "csv").output)
    )
    assert (row["upper_cpu"], row["upper_memory"]) == ("unknown", "unknown")


def test_scalers_and_events(run: Invoke, tmp_path: Path) -> None:
    f = tmp_path / "s.json"
    f.write_text(json.dumps({"items": [SCALER]}))
    assert run("scaler", "apply", "-f", str(f)).output == "scaler coredns created\n"
    listed = run("scaler", "list").output.splitlines()
    assert listed[1].split() == [
        "coredns",
        "kube-system/Deployment/coredns",
        "linear",
        "yes",
        "-",
        "-",
    ]
    bad = {**SCALER, "params": {"linear": {"min": 1}}}
    out = run("scaler", "apply", "-f", "-", stdin=json.dumps(bad))
    assert out.exit_code == 1
    assert "params.linear: needs coresPerReplica or nodesPerReplica" in out.output
    assert run("scaler", "delete", "coredns").exit_code == 0
    ev = run("events").output.splitlines()
    assert ev[0].split() == ["TIME", "ACTOR", "ACTION", "OBJECT", "MESSAGE"]
    assert [line.split()[1:4] for line in ev[1:]] == [
        ["alice", "delete", "Scaler"],
        ["alice", "create", "Scaler"],
    ]
    one = json.loads(run("events", "--action", "create", "--limit", "1", "-o", "json").output)
    assert [e["action"] for e in one] == ["create"]


def test_unreachable_server_and_bad_file(tmp_path: Path) -> None:
    runner = CliRunner()
    out = runner.invoke(cli, ["policy", "list", "--server", "http://127.0.0.1:9"])
    assert out.exit_code == 1
    assert "nothing listens on 127.0.0.1:9 (connection refused)" in out.output
    f = tmp_path / "x.yaml"
    f.write_text("- 1\n- 2\n")
    out = runner.invoke(cli, ["policy", "apply", "-f", str(f), "--server", "http://127.0.0.1:9"])
    assert out.exit_code == 1
    assert "document 1 is not a mapping" in out.output


def test_as_a_real_process(live_url: str, tmp_path: Path) -> None:
    f = tmp_path / "p.yaml"
    f.write_text(POLICIES)
    env = {
        "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
        "RIGHTSIZER_SERVER": live_url,
        "RIGHTSIZER_TOKEN": TOKENS["admin"],
    }
    done = subprocess.run(
        [sys.executable, "-m", "app.cli", "policy", "apply", "-f", str(f)],
        capture_output=True,
        text=True,
        env=env,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "policy shop/web created" in done.stdout
    assert TOKENS["admin"] not in done.stdout + done.stderr


def test_policy_writes_print_the_servers_warnings_as_kubectl_does(
    app: Flask, run: Invoke, tmp_path: Path
) -> None:
    override(app, {"EXCLUDED_NAMESPACES": "legacy"})
    f = tmp_path / "p.yaml"
    f.write_text(
        "name: coredns\nnamespace: kube-system\ntarget: {kind: Deployment, name: coredns}\n"
    )
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 0, out.output  # written all the same
    assert out.stdout == "policy kube-system/coredns created\n"
    assert out.stderr == (
        "Warning: namespace kube-system is never sized (the webhook configuration always keeps "
        "it out): this policy will not act\n"
    )
    f.write_text("name: old\nnamespace: legacy\nupdateMode: Initial\n")
    assert run("policy", "apply", "-f", str(f)).exit_code == 0
    mode = run("policy", "set-mode", "legacy/old", "Recreate")
    assert mode.stdout == "policy legacy/old: updateMode Initial -> Recreate\n"
    assert mode.stderr.startswith("Warning: namespace legacy is never sized (excluded by ")


def test_client_settings_are_documented() -> None:
    from app.cli.context import CLIENT_ENVIRONMENT
    from tests.support.markdown import read

    cli = read("docs/cli.md")
    for name, default in CLIENT_ENVIRONMENT.items():
        assert f"| `{name}` | {f'`{default}`' if default else '(empty)'} |" in cli


def test_scaler_preview_by_name_asks_the_server(app: Flask, run: Invoke) -> None:
    import kubernetes
    from kubernetes.utils import parse_quantity

    from app.simulator.testing import running_simulator

    with running_simulator() as sim:  # default scenario: 5 schedulable nodes, coredns at 2
        override(app, {"KUBECONFIG": sim.kubeconfig_path})
        scaler = {
            **SCALER,
            "params": {"linear": {"nodesPerReplica": 1}},
            "behavior": {"scaleUp": {"selectPolicy": "Disabled"}},
        }
        assert run("scaler", "apply", "-f", "-", stdin=json.dumps(scaler)).exit_code == 0
        api = sim.api_client()
        nodes = kubernetes.client.CoreV1Api(api).list_node().items
        api.close()
        cores = math.ceil(sum(parse_quantity(n.status.allocatable["cpu"]) for n in nodes))
        out = run("scaler", "preview", "coredns")
        assert out.exit_code == 0, out.output
        assert json.loads(out.stdout) == {
            "current": 2,
            "proposed": 5,
            "allowedNow": 2,
            "reason": "scale-up to 5 blocked: behavior.scaleUp.selectPolicy is Disabled",
            "cluster": {
                "schedulableNodes": 5,
                "schedulableCores": cores,
                "totalNodes": 5,
                "totalCores": cores,
            },
        }
    missing = run("scaler", "preview", "nope")
    assert (missing.exit_code, missing.stdout) == (1, "")
    assert "no scaler 'nope' (404 NotFound)" in missing.stderr


def test_the_table_has_a_conditions_column(app: Flask, run: Invoke) -> None:
    from datetime import UTC, datetime

    from app.core.conditions import RECOMMENDER_TYPES, Condition
    from app.core.workload_key import WorkloadKey
    from app.store.conditions import save_conditions

    seed()
    now = datetime.now(UTC)
    web, ghost = WorkloadKey("ops", "Deployment", "web"), WorkloadKey("ops", "Deployment", "ghost")
    conditions = {
        web: [
            Condition("RecommendationProvided", "True"),
            Condition("LowConfidence", "True", "ShortHistory", "app (10m)"),
            Condition("LimitedByPolicy", "True", "ContainerPolicy", "app: cpu ..."),
        ],
        ghost: [
            Condition("ConfigUnsupported", "True", "TargetUnsupported", "it does not exist"),
            Condition("RecommendationProvided", "False", "ConfigUnsupported", "..."),
        ],
    }
    save_conditions(db.session, RECOMMENDER_TYPES, conditions, now)
    lines = run("recommendations", "list", "-n", "ops").output.splitlines()
    assert lines[0].split()[-1] == "CONDITIONS"
    assert lines[1].split()[:3] == ["ops", "Deployment/ghost", "-"]
    assert lines[1].split()[-1] == "NoRecommendation,ConfigUnsupported"
    assert lines[2].split()[1] == "Deployment/web"
    assert lines[2].split()[-1] == "LowConfidence,LimitedByPolicy"
    # csv keeps one row per container: the workload without containers is not one
    rows = list(csv.DictReader(io.StringIO(run("recommendations", "list", "-o", "csv").output)))
    assert "ghost" not in {r["name"] for r in rows}


EXPORTED = """\
name: checkout
namespace: shop
target: {kind: Deployment, name: checkout}
updateMode: InPlace
inPlaceSkipDisruptionBudget: true
evictionRequirements:
  - resources: [cpu]
    changeRequirement: TargetHigherThanRequests
evictAfterOOMSeconds: 90
startupBoost:
  cpu: {type: Factor, factor: 2, durationSeconds: 15}
containerPolicies:
  - containerName: app
    integerCPU: true
    startupBoost:
      cpu: {type: Quantity, quantity: 250m}
---
name: shop-wide
namespace: shop
updateMode: Initial
"""


def test_policy_export_then_import_gives_the_same_policies(run: Invoke, tmp_path: Path) -> None:
    from app.documents.policy import parse_policy

    path = tmp_path / "policies.yaml"
    path.write_text(EXPORTED)
    run("policy", "apply", "-f", str(path))
    before = json.loads(run("policy", "get", "shop", "checkout", "-o", "json").output)
    exported = run("policy", "export", "-n", "shop")
    assert "shop/shop-wide is namespace-wide" in exported.stderr  # VPA needs a targetRef
    [vpa] = list(yaml.safe_load_all(exported.stdout))
    assert vpa["kind"] == "VerticalPodAutoscaler"
    assert vpa["spec"]["updatePolicy"]["evictAfterOOMSeconds"] == 90
    assert run("policy", "export", "shop", "checkout").stdout == exported.stdout
    run("policy", "delete", "shop", "checkout")
    imported = run("policy", "import", "-f", "-", stdin=exported.stdout)
    assert imported.stderr == ""  # nothing left out
    run("policy", "apply", "-f", "-", stdin=imported.stdout)
    after = json.loads(run("policy", "get", "shop", "checkout", "-o", "json").output)
    strip = ("version", "createdAt", "updatedAt")
    assert parse_policy({k: v for k, v in after.items() if k not in strip}) == parse_policy(
        {k: v for k, v in before.items() if k not in strip}
    )
    missing = run("policy", "export", "shop", "shop-wide")
    assert missing.exit_code == 1 and "needs a targetRef" in missing.stderr


def test_policy_list_shows_a_placement_column_once_a_policy_sets_one(
    run: Invoke, tmp_path: Path
) -> None:
    f = tmp_path / "p.yaml"
    f.write_text("name: web\nnamespace: shop\n---\nname: batch\nnamespace: shop\n")
    assert run("policy", "apply", "-f", str(f)).exit_code == 0
    assert "PLACEMENT" not in run("policy", "list").output
    f.write_text("name: web\nnamespace: shop\nplacement: waterLevel\n")
    assert run("policy", "apply", "-f", str(f)).exit_code == 0
    listed = run("policy", "list").output.splitlines()
    assert listed[0].split()[:5] == ["NAMESPACE", "NAME", "TARGET", "MODE", "PLACEMENT"]
    assert listed[1].split()[:5] == ["shop", "batch", "*", "Off", "default"]
    assert listed[2].split()[:5] == ["shop", "web", "*", "Off", "waterLevel"]
    got = yaml.safe_load(run("policy", "get", "shop/web").output)
    assert got["placement"] == "waterLevel"
