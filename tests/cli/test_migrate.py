"""`rightsizer scaler preview` and `scaler import`: offline, as CPA users would run them."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from app.cli import cli


def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "app.cli", "scaler", *args],
        capture_output=True,
        text=True,
        input=stdin,
        timeout=60,
    )


@pytest.mark.parametrize(
    ("cores", "replicas"), [(0, 2), (4, 2), (6, 3), (11, 6), (21, 11), (40, 20)]
)
def test_preview_linear(cores: int, replicas: int) -> None:
    params = '{"linear": {"coresPerReplica": 2, "min": 2, "max": 100}}'
    out = run("preview", "--params", params, "--nodes", "3", "--cores", str(cores))
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout) == {"replicas": replicas}


def test_preview_counts_total_nodes_when_asked() -> None:
    params = '{"linear": {"nodesPerReplica": 1, "includeUnschedulableNodes": true}}'
    out = run(
        "preview",
        "--params",
        params,
        "--nodes",
        "2",
        "--cores",
        "8",
        "--total-nodes",
        "5",
        "--total-cores",
        "20",
    )
    assert json.loads(out.stdout) == {"replicas": 5}


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ("{not json", "params"),
        ('{"linear": {}}', "linear"),
        ('{"linear": {"nodesPerReplica": 1, "max": 1, "min": 3}}', "linear.max"),
        ('{"exponential": {}}', "exponential"),
    ],
)
def test_preview_rejects_bad_params_with_status_2_and_nothing_on_stdout(
    params: str, message: str
) -> None:
    out = run("preview", "--params", params, "--nodes", "3", "--cores", "4")
    assert out.returncode == 2
    assert out.stdout == ""
    assert f"error: {message}" in out.stderr


CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: dns-autoscaler, namespace: kube-system}
data:
  linear: |-
    {"coresPerReplica": 256, "nodesPerReplica": 16, "preventSinglePointFailure": true}
"""


def test_import_turns_a_configmap_into_a_scaler(tmp_path: Path) -> None:
    path = tmp_path / "cm.yaml"
    path.write_text(CONFIGMAP)
    out = run("import", "--configmap", str(path), "--target", "kube-system/Deployment/coredns")
    assert out.returncode == 0, out.stderr
    assert yaml.safe_load(out.stdout) == {
        "name": "dns-autoscaler",
        "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
        "params": {
            "linear": {
                "coresPerReplica": 256,
                "nodesPerReplica": 16,
                "preventSinglePointFailure": True,
            }
        },
        "enabled": True,
    }


def test_import_rejects_bad_params_naming_the_field() -> None:
    bad = CONFIGMAP.replace('"coresPerReplica": 256', '"coresPerReplica": -1')
    out = run("import", "--configmap", "-", "--target", "kube-system/Deployment/coredns", stdin=bad)
    assert out.returncode == 2
    assert "data.linear.coresPerReplica" in out.stderr


VPAS = """
apiVersion: v1
kind: List
items:
- apiVersion: autoscaling.k8s.io/v1
  kind: VerticalPodAutoscaler
  metadata: {name: web, namespace: shop}
  spec:
    targetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
    updatePolicy: {updateMode: Auto, minReplicas: 3}
    resourcePolicy:
      containerPolicies:
      - containerName: app
        minAllowed: {cpu: 100m}
        maxAllowed: {memory: 2Gi}
        controlledValues: RequestsOnly
      - {containerName: istio-proxy, mode: "Off"}
    recommenders: [{name: custom}]
"""


def test_policy_import_turns_vpas_into_policies() -> None:
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "policy", "import", "-f", "-"],
        capture_output=True,
        text=True,
        input=VPAS,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    [doc] = list(yaml.safe_load_all(out.stdout))
    assert doc == {
        "name": "web",
        "namespace": "shop",
        "target": {"kind": "Deployment", "name": "web"},
        "updateMode": "Auto",
        "minReplicas": 3,
        "containerPolicies": [
            {
                "containerName": "app",
                "minAllowed": {"cpu": "100m"},
                "maxAllowed": {"memory": "2Gi"},
                "controlledValues": "RequestsOnly",
            },
            {"containerName": "istio-proxy", "mode": "Off"},
        ],
    }
    assert "spec.recommenders" in out.stderr  # reported, not silently dropped


def test_policy_import_rejects_an_invalid_vpa_naming_the_field() -> None:
    bad = VPAS.replace("cpu: 100m", "cpu: lots")
    out = subprocess.run(
        [sys.executable, "-m", "app.cli", "policy", "import", "-f", "-"],
        capture_output=True,
        text=True,
        input=bad,
        timeout=60,
    )
    assert out.returncode == 2
    assert out.stdout == ""
    assert "containerPolicies[0].minAllowed.cpu" in out.stderr


def invoke(*args: str) -> subprocess.CompletedProcess[str]:
    """In-process (CliRunner) for the many small cases; `run` above shows the real process."""
    result = CliRunner().invoke(cli, ["scaler", *args], catch_exceptions=False)
    return subprocess.CompletedProcess(args, result.exit_code, result.stdout, result.stderr)


LINEAR = '{"linear": {"nodesPerReplica": 1}}'
STEP_DOWN = (
    '{"scaleDown": {"stabilizationWindowSeconds": 120, '
    '"policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}'
)


def test_preview_with_behavior_shows_raw_and_allowed_and_why() -> None:
    out = run(  # a real process, as users run it
        "preview", "--params", LINEAR, "--nodes", "3", "--cores", "12",
        "--behavior", STEP_DOWN, "--current", "6",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    body = json.loads(out.stdout)
    assert (body["current"], body["proposed"], body["allowedNow"]) == (6, 3, 5)
    assert body["reason"].startswith("scale-down to 3 limited to 5 by behavior.scaleDown.policies")
    assert body["cluster"] == {
        "schedulableNodes": 3,
        "schedulableCores": 12,
        "totalNodes": 3,
        "totalCores": 12,
    }


def test_preview_with_history_honours_the_window_and_the_period() -> None:
    base = ["preview", "--params", LINEAR, "--nodes", "3", "--cores", "12", "--current", "6"]
    held = invoke(*base, "--behavior", STEP_DOWN, "--history", '{"proposals": [[100, 6]]}')
    body = json.loads(held.stdout)
    assert (body["proposed"], body["allowedNow"]) == (3, 6)
    assert "120s scale-down window" in body["reason"]
    aged = invoke(*base, "--behavior", STEP_DOWN, "--history", '{"proposals": [[130, 6]]}')
    assert json.loads(aged.stdout)["allowedNow"] == 5
    # One pod removed 30 s ago: the 60 s period began at 7, so 6 is all it allows now.
    stepped = invoke(*base, "--behavior", STEP_DOWN, "--history", '{"changes": [[30, -1]]}')
    assert json.loads(stepped.stdout)["allowedNow"] == 6
    no_behavior = json.loads(invoke(*base).stdout)
    assert (no_behavior["allowedNow"], no_behavior["reason"]) == (3, "no behavior: applied at once")
    defaults = json.loads(invoke(*base, "--behavior", "{}").stdout)  # HPA defaults: 300 s window
    assert defaults["allowedNow"] == 3  # no earlier proposal to hold it
    held_by_defaults = invoke(*base, "--behavior", "{}", "--history", '{"proposals": [[299, 6]]}')
    assert json.loads(held_by_defaults.stdout)["allowedNow"] == 6


BAD_BEHAVIOR = [
    (
        '{"scaleUp": {"policies": [{"type": "Nodes", "value": 1, "periodSeconds": 15}]}}',
        "behavior.scaleUp.policies[0].type",
    ),
    (
        '{"scaleDown": {"policies": [{"type": "Pods", "value": -1, "periodSeconds": 15}]}}',
        "behavior.scaleDown.policies[0].value",
    ),
    (
        '{"scaleDown": {"policies": [{"type": "Percent", "value": 10, "periodSeconds": 0}]}}',
        "behavior.scaleDown.policies[0].periodSeconds",
    ),
    (
        '{"scaleUp": {"policies": [{"type": "Pods", "value": 1, "periodSeconds": 1801}]}}',
        "behavior.scaleUp.policies[0].periodSeconds",
    ),
    (
        '{"scaleDown": {"stabilizationWindowSeconds": -1}}',
        "behavior.scaleDown.stabilizationWindowSeconds",
    ),
    (
        '{"scaleUp": {"stabilizationWindowSeconds": 3601}}',
        "behavior.scaleUp.stabilizationWindowSeconds",
    ),
    ('{"scaleDown": {"selectPolicy": "Average"}}', "behavior.scaleDown.selectPolicy"),
    ("{not json", "behavior"),
]


@pytest.mark.parametrize(("behavior", "field"), BAD_BEHAVIOR)
def test_preview_rejects_bad_behavior_naming_the_field(behavior: str, field: str) -> None:
    out = invoke(
        "preview", "--params", LINEAR, "--nodes", "3", "--cores", "4",
        "--current", "3", "--behavior", behavior,
    )  # fmt: skip
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith(f"error: {field}: ")


@pytest.mark.parametrize(("behavior", "field"), BAD_BEHAVIOR[:-1])
def test_apply_rejects_bad_behavior_naming_the_field(
    behavior: str, field: str, tmp_path: Path
) -> None:
    doc = {
        "name": "dns",
        "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
        "params": json.loads(LINEAR),
        "behavior": json.loads(behavior),
    }
    path = tmp_path / "scaler.json"
    path.write_text(json.dumps(doc))
    # Validated before any request: the unreachable server is never asked.
    out = invoke("apply", "-f", str(path), "--server", "http://127.0.0.1:9")
    assert out.returncode == 1
    assert out.stdout == ""
    assert f"(scaler dns): {field}: " in out.stderr
    assert "nothing applied" in out.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--behavior", "{}"], "--current: required"),
        (["--current", "2", "--history", '{"proposals": [[-5, 1]]}'], "history.proposals[0][0]"),
        (["--current", "2", "--history", "[]"], "history: must be an object"),
    ],
)
def test_preview_behavior_usage_errors(args: list[str], message: str) -> None:
    out = invoke("preview", "--params", LINEAR, "--nodes", "3", "--cores", "4", *args)
    assert out.returncode == 2
    assert out.stdout == ""
    assert out.stderr.startswith(f"error: {message}")


def test_preview_needs_params_or_a_name_and_not_both() -> None:
    missing = invoke("preview", "--nodes", "3", "--cores", "4")
    assert (missing.returncode, missing.stdout) == (2, "")
    assert "--params is required (or give a scaler NAME" in missing.stderr
    both = invoke("preview", "coredns", "--params", LINEAR)
    assert (both.returncode, both.stdout) == (2, "")
    assert "error: --params: not with a scaler NAME" in both.stderr


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([], "give one of -f/--filename and --from-cluster"),
        (["-f", "vpas.yaml", "--from-cluster"], "give one of -f/--filename and --from-cluster"),
        (["-f", "vpas.yaml", "-n", "shop"], "--kubeconfig and --namespace go with --from-cluster"),
    ],
)
def test_policy_import_reads_a_file_or_the_cluster(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["policy", "import", *args])
    assert result.exit_code == 2 and message in result.output and not result.stdout.strip()
