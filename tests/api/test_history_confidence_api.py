"""Bounds stay VPA's in the API, and every container says how much history it has against what
the updater needs (`history`): one rule from no history (`unknown` upper bound) through minutes
(hundreds of times the target) to enough. The dashboard and the CLI say "not enough history"
instead of those bounds."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from click.testing import CliRunner, Result
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update

from app.cli import cli
from app.core.quantity import MAX_AMOUNT
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.reviews import add_recommendation
from tests.support.tokens import TOKENS

MI = 2**20
T0 = datetime(2024, 7, 4, 12, tzinfo=UTC)


def young(name: str, minutes: float, upper_cpu: int) -> None:
    """A container with `minutes` of history and VPA's upper bound for it."""
    add_recommendation(
        "app",
        138,
        250 * MI,
        workload=("shop", "Deployment", name),
        first_sample_at=T0,
        last_sample_at=T0 + timedelta(minutes=minutes),
        sample_count=1 + int(minutes),
    )
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.name == name)
        .values(
            upper_bound_cpu=upper_cpu,
            upper_bound_memory=MAX_AMOUNT if upper_cpu == MAX_AMOUNT else 525358 * MI,
        )
    )
    db.session.commit()


@pytest.fixture
def run(live_url: str) -> Any:
    def invoke(*args: str) -> Result:
        env = {"RIGHTSIZER_SERVER": live_url, "RIGHTSIZER_TOKEN": TOKENS["admin"]}
        return CliRunner().invoke(cli, list(args), env=env, catch_exceptions=False)

    return invoke


def container(client: FlaskClient, name: str) -> Any:
    body = client.get(f"/api/v1/recommendations/shop/Deployment/{name}").get_json()
    return body["containers"][0]


def test_the_api_keeps_vpas_bounds_and_says_how_much_history_there_is(
    client: FlaskClient,
) -> None:
    young("new", 0, MAX_AMOUNT)  # one sample: VPA's upper bound is unbounded
    young("minutes", 12, 343196)  # 12 minutes later: finite, 2,500 times the target
    young("grown", 90, 1200)
    new, minutes, grown = (container(client, n) for n in ("new", "minutes", "grown"))
    assert new["upperBound"] == {"cpu": "unknown", "memory": "unknown"}
    assert minutes["upperBound"]["cpu"] == "343196m"  # VPA's number, kept
    assert new["history"] == {"hours": 0.0, "neededHours": 1.0, "enough": False}
    assert minutes["history"] == {"hours": 0.2, "neededHours": 1.0, "enough": False}
    assert grown["history"] == {"hours": 1.5, "neededHours": 1.0, "enough": True}


def test_the_dashboard_and_the_cli_say_not_enough_history_instead_of_the_bounds(
    app: Flask, client: FlaskClient
) -> None:
    young("minutes", 12, 343196)
    html = client.get("/dashboard/workloads/shop/Deployment/minutes").get_data(as_text=True)
    cells = re.findall(
        r'<td class="num range-(cpu|memory) low-history" title="([^"]*)">([^<]*)<', html
    )
    assert [(r, text) for r, _, text in cells] == [
        ("cpu", "not enough history: 0.2 hours of 1"),
        ("memory", "not enough history: 0.2 hours of 1"),
    ]
    assert "343196m" not in re.sub(r'title="[^"]*"', "", html)  # only in the cell's tooltip


def test_the_cli_table_says_not_enough_history(run: Any) -> None:
    young("minutes", 12, 343196)
    young("grown", 90, 1200)
    out = run("recommendations", "list", "-n", "shop")
    assert out.exit_code == 0, out.output
    lines = {line.split()[1]: line for line in out.stdout.splitlines()[1:]}
    assert lines["Deployment/minutes"].count("not enough history: 0.2 hours of 1") == 2
    assert "343196" not in lines["Deployment/minutes"]
    assert "not enough history" not in lines["Deployment/grown"]  # enough: VPA's range
    assert "69m-" in lines["Deployment/grown"]
    csv = run("recommendations", "list", "-n", "shop", "-o", "csv").stdout
    assert "343196m" in csv  # machines keep the API's numbers
