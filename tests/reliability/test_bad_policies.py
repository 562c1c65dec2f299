"""Invalid policies and scalers through the REST API and the CLI: every bad field is named, and
nothing is written (row counts, versions and the audit trail unchanged)."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner, Result
from flask.testing import FlaskClient
from sqlalchemy import func, select

from app.cli import cli
from app.store.extensions import db
from app.store.models import AuditEvent, Policy, Scaler
from tests.support.tokens import TOKENS

GOOD_POLICY: dict[str, Any] = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "updateMode": "Recreate",
    "minReplicas": 2,
    "containerPolicies": [
        {
            "containerName": "app",
            "mode": "Auto",
            "minAllowed": {"cpu": "100m", "memory": "128Mi"},
            "maxAllowed": {"cpu": "2", "memory": "4Gi"},
            "controlledResources": ["cpu", "memory"],
            "controlledValues": "RequestsAndLimits",
        }
    ],
}
GOOD_SCALER: dict[str, Any] = {
    "name": "coredns",
    "target": {"namespace": "kube-system", "kind": "Deployment", "name": "coredns"},
    "params": {"linear": {"coresPerReplica": 256, "nodesPerReplica": 16, "min": 1, "max": 10}},
    "enabled": True,
}

# (path to set, value) -> the field the error must name. A path of None deletes the key.
POLICY_CASES: list[tuple[tuple[Any, ...], Any, str]] = [
    (("name",), "Web_Server", "name"),
    (("name",), "", "name"),
    (("name",), 7, "name"),
    (("namespace",), "Shop!", "namespace"),
    (("namespace",), None, "namespace"),
    (("target",), "web", "target"),
    (("target", "kind"), "Pod", "target.kind"),
    (("target", "name"), "<script>", "target.name"),
    (("target", "extra"), 1, "target.extra"),
    (("updateMode",), "Never", "updateMode"),
    (("updateMode",), ["Auto"], "updateMode"),
    (("minReplicas",), 0, "minReplicas"),
    (("minReplicas",), 2**31, "minReplicas"),
    (("minReplicas",), "2", "minReplicas"),
    (("minReplicas",), True, "minReplicas"),
    (("unknown",), 1, "unknown"),
    (("containerPolicies",), {"app": {}}, "containerPolicies"),
    (("containerPolicies", 0, "mode"), "Sometimes", "containerPolicies[0].mode"),
    (("containerPolicies", 0, "minAllowed", "cpu"), "-1", "containerPolicies[0].minAllowed.cpu"),
    (("containerPolicies", 0, "minAllowed", "cpu"), "NaN", "containerPolicies[0].minAllowed.cpu"),
    (
        ("containerPolicies", 0, "maxAllowed", "memory"),
        "lots",
        "containerPolicies[0].maxAllowed.memory",
    ),
    (
        ("containerPolicies", 0, "controlledResources"),
        ["cpu", "gpu"],
        "containerPolicies[0].controlledResources",
    ),
    (
        ("containerPolicies", 0, "controlledValues"),
        "LimitsOnly",
        "containerPolicies[0].controlledValues",
    ),
    (("containerPolicies", 0, "containerName"), 5, "containerPolicies[0].containerName"),
    (("containerPolicies", 0, "bogus"), 1, "containerPolicies[0].bogus"),
]
SCALER_CASES: list[tuple[tuple[Any, ...], Any, str]] = [
    (("name",), "Core DNS", "name"),
    (("target", "kind"), "Pod", "target.kind"),
    (("target", "namespace"), "", "target.namespace"),
    (("target", "name"), None, "target.name"),
    (("params",), {}, "params"),
    (("params",), {"linear": {}, "ladder": {}}, "params"),
    (("params", "linear", "max"), -1, "params.linear.max"),
    (("params", "linear", "min"), "one", "params.linear.min"),
    (("params", "linear", "coresPerReplica"), -5, "params.linear.coresPerReplica"),
    (("params", "linear", "bogus"), 1, "params.linear.bogus"),
    (("enabled",), "yes", "enabled"),
    (("nodeSelector",), "a in (", "nodeSelector"),
    (("unknown",), 1, "unknown"),
]


def mutated(doc: dict[str, Any], path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    parent: Any = out
    for p in path[:-1]:
        parent = parent[p]
    if value is None:
        parent.pop(path[-1], None)
    else:
        parent[path[-1]] = value
    return out


def state() -> tuple[Any, ...]:
    """Everything a write could change: rows, their versions and documents, audit events."""
    db.session.expire_all()
    policies = [
        (p.namespace, p.name, p.version, p.update_mode)
        for p in db.session.scalars(select(Policy).order_by(Policy.id))
    ]
    scalers = [
        (s.name, s.version, json.dumps(s.params))
        for s in db.session.scalars(select(Scaler).order_by(Scaler.id))
    ]
    events = db.session.scalar(select(func.count()).select_from(AuditEvent))
    return policies, scalers, events


def fields_of(resp: Any) -> set[str]:
    body = resp.get_json()
    assert resp.status_code == 422, (resp.status_code, body)
    assert body["error"] == "Invalid"
    return {d["field"] for d in body["details"]}


@pytest.mark.parametrize(("path", "value", "field"), POLICY_CASES)
def test_invalid_policy_field_is_named_and_nothing_is_written(
    client: FlaskClient, path: tuple[Any, ...], value: Any, field: str
) -> None:
    assert client.post("/api/v1/policies", json={**GOOD_POLICY, "name": "kept"}).status_code == 201
    before = state()
    bad = mutated(GOOD_POLICY, path, value)
    assert field in fields_of(client.post("/api/v1/policies", json=bad))
    assert state() == before
    # The same through PUT and a merge PATCH of the stored policy.
    put = mutated({**GOOD_POLICY, "name": "kept"}, path, value)
    if path[0] not in ("name", "namespace"):
        assert field in fields_of(client.put("/api/v1/policies/shop/kept", json=put))
        if path[0] in put:  # a merge patch carrying the bad top-level field
            resp = client.patch(
                "/api/v1/policies/shop/kept",
                data=json.dumps({path[0]: put[path[0]]}),
                content_type="application/merge-patch+json",
            )
            assert field in fields_of(resp)
    assert state() == before


@pytest.mark.parametrize(("path", "value", "field"), SCALER_CASES)
def test_invalid_scaler_field_is_named_and_nothing_is_written(
    client: FlaskClient, path: tuple[Any, ...], value: Any, field: str
) -> None:
    assert client.post("/api/v1/scalers", json={**GOOD_SCALER, "name": "kept"}).status_code == 201
    before = state()
    bad = mutated(GOOD_SCALER, path, value)
    assert field in fields_of(client.post("/api/v1/scalers", json=bad))
    if path[0] != "name":
        put = mutated({**GOOD_SCALER, "name": "kept"}, path, value)
        assert field in fields_of(client.put("/api/v1/scalers/kept", json=put))
    assert state() == before


def test_several_bad_fields_are_all_named_at_once(client: FlaskClient) -> None:
    bad = GOOD_POLICY
    expected = set()
    for path, value, field in POLICY_CASES[::3]:
        bad = mutated(bad, path, value)
        expected.add(field)
    got = fields_of(client.post("/api/v1/policies", json=bad))
    assert expected - {"target"} <= got | {"target.kind", "target.name"}
    assert state() == ([], [], 0)


Invoke = Callable[..., Result]


@pytest.fixture
def run(live_url: str) -> Invoke:
    runner = CliRunner()

    def invoke(*args: str) -> Result:
        env = {"RIGHTSIZER_SERVER": live_url, "RIGHTSIZER_TOKEN": TOKENS["admin"]}
        return runner.invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def test_cli_apply_names_the_bad_fields_and_writes_nothing(run: Invoke, tmp_path: Path) -> None:
    f = tmp_path / "bad.yaml"
    bad = mutated(GOOD_POLICY, ("containerPolicies", 0, "minAllowed", "cpu"), "-1")
    bad = mutated(bad, ("updateMode",), "Never")
    f.write_text(yaml.safe_dump(bad))
    before = state()
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 1
    assert "containerPolicies[0].minAllowed.cpu" in out.output and "updateMode" in out.output
    assert state() == before
    s = tmp_path / "bad-scaler.yaml"
    s.write_text(yaml.safe_dump(mutated(GOOD_SCALER, ("params", "linear", "max"), -1)))
    out = run("scaler", "apply", "-f", str(s))
    assert out.exit_code == 1 and "params.linear.max" in out.output
    assert state() == before


def test_cli_apply_of_a_file_with_one_bad_document_writes_nothing(
    run: Invoke, tmp_path: Path
) -> None:
    docs = [
        {**GOOD_POLICY, "name": "first"},
        mutated({**GOOD_POLICY, "name": "second"}, ("minReplicas",), 0),
        {**GOOD_POLICY, "name": "third"},
    ]
    f = tmp_path / "three.yaml"
    f.write_text(yaml.safe_dump_all(docs))
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 1 and "minReplicas" in out.output
    assert state() == ([], [], 0)
