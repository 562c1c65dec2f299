"""Issue 49 item 7: durations wherever a time is taken (`events --since 2m`), and the valid values
listed when one is unknown (`events --action evicted`, an unknown policy field), against a real
server over HTTP."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import click
import pytest
import requests

from app.cli.times import Duration, Since
from app.store.audit import ACTIONS
from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401
from tests.support.tokens import TOKENS

POLICY = "name: web\nnamespace: shop\ntarget: {kind: Deployment, name: web}\n"


@pytest.fixture
def one_event(run: Invoke, tmp_path: Path) -> Invoke:  # noqa: F811
    f = tmp_path / "p.yaml"
    f.write_text(POLICY)
    assert run("policy", "apply", "-f", str(f)).exit_code == 0
    return run


@pytest.mark.parametrize("since", ["2m", "1h", "3d", "1h30m", "90s"])
def test_events_since_a_duration(one_event: Invoke, since: str) -> None:
    out = one_event("events", "--since", since, "-o", "json")
    assert out.exit_code == 0, out.output
    assert [e["action"] for e in json.loads(out.output)] == ["create"]


def test_events_since_a_time_still_works_and_the_future_holds_nothing(one_event: Invoke) -> None:
    later = (datetime.now(UTC) + timedelta(hours=1)).strftime("%Y-%m-%dT%H:%M:%SZ")
    out = one_event("events", "--since", later, "-o", "json")
    assert (out.exit_code, json.loads(out.output)) == (0, [])
    out = one_event("events", "--since", "0", "-o", "json")
    assert len(json.loads(out.output)) == 1


def test_a_bad_since_is_a_usage_error_showing_the_forms(one_event: Invoke) -> None:
    out = one_event("events", "--since", "2 minutes")
    assert out.exit_code == 2
    assert "a duration such as 90s, 2m, 1h30m or 3d" in out.output
    assert "RFC 3339" in out.output


def test_an_unknown_action_is_refused_listing_the_valid_ones(one_event: Invoke) -> None:
    out = one_event("events", "--action", "evicted")
    assert out.exit_code == 1
    assert "unknown action 'evicted'; actions are " + ", ".join(ACTIONS) in out.output
    assert "evict" in ACTIONS
    ok = one_event("events", "--action", "create", "-o", "json")
    assert [e["action"] for e in json.loads(ok.output)] == ["create"]


def test_an_unknown_policy_field_lists_the_valid_fields(run: Invoke, tmp_path: Path) -> None:  # noqa: F811
    f = tmp_path / "p.yaml"
    f.write_text(POLICY + "updateMod: Auto\n")
    out = run("policy", "apply", "-f", str(f))
    assert out.exit_code == 1
    assert "updateMod: unknown field; valid fields are " in out.output
    assert "updateMode" in out.output.split("valid fields are ", 1)[1]
    f.write_text(POLICY + "containerPolicies: [{containerName: app, minAlowed: {cpu: 1}}]\n")
    out = run("policy", "apply", "-f", str(f))
    assert "containerPolicies[0].minAlowed: unknown field; valid fields are " in out.output
    assert "minAllowed" in out.output.split("valid fields are ", 1)[1]


def test_the_api_lists_the_valid_fields_too(run: Invoke, live_url: str) -> None:  # noqa: F811
    doc = {"name": "web", "namespace": "shop", "updateMod": "Auto"}
    resp = requests.post(
        f"{live_url}/api/v1/policies",
        json=doc,
        headers={"Authorization": f"Bearer {TOKENS['admin']}"},
        timeout=30,
    )
    assert resp.status_code == 422
    [detail] = resp.json()["details"]
    assert detail["field"] == "updateMod"
    assert detail["message"].startswith("unknown field; valid fields are ")
    assert "updateMode" in detail["message"]


@pytest.mark.parametrize(
    ("text", "seconds"), [("90", 90), ("90s", 90), ("2m", 120), ("1h30m", 5400), ("3d", 259200)]
)
def test_a_duration_takes_units(text: str, seconds: float) -> None:
    assert Duration().convert(text, None, None) == seconds


def test_since_a_duration_is_that_long_before_now() -> None:
    assert Since(now=lambda: 1_700_000_120.0).convert("2m", None, None) == "2023-11-14T22:13:20Z"


@pytest.mark.parametrize("text", ["2 minutes", "-2m", "2w", "m"])
def test_not_a_duration(text: str) -> None:
    with pytest.raises(click.BadParameter, match="90s, 2m, 1h30m or 3d"):
        Duration().convert(text, None, None)
