"""The dashboard's fleet: the fleet page (each cluster and the totals, the API's numbers) and
`?cluster=` on the other pages, kept by every link; in headless Chromium, the selector in the
header switches the cluster shown. Two clusters need PostgreSQL (tests/support/fleet.py: east is
the serving process's own, west the other)."""

from __future__ import annotations

import re
from datetime import UTC, datetime
from typing import Any

import pytest
from flask.testing import FlaskClient

from app.settings import settings
from app.store.cluster_totals import write_totals
from app.store.extensions import db
from app.store.policies import InvalidPolicyLog
from app.store.savings import Scoper
from tests.support.fleet import fleet, seen  # noqa: F401  (fixture)
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS


def cells(html: str, row: str, cls: str) -> str:
    """The data-value of the `cls` cell in the fleet table's row `row` (a data-name or id)."""
    start = html.index(row)
    found = re.search(rf'class="num {cls}[^"]*" data-value="(-?[\d.]+)"', html[start:])
    assert found, (row, cls)
    return found.group(1)


@pytest.mark.usefixtures("fleet")
def test_the_fleet_page_shows_each_cluster_and_the_totals_as_the_api(
    client: FlaskClient,
) -> None:
    html = client.get("/dashboard/fleet").get_data(as_text=True)
    api = client.get("/api/v1/fleet").get_json()
    assert cells(html, 'data-name="east"', "savings-cpu") == "300"
    assert cells(html, 'data-name="west"', "savings-cpu") == "-900"
    assert cells(html, 'data-name="west"', "short-cpu") == "900"
    assert cells(html, 'id="fleet-totals"', "savings-cpu") == "-600"
    assert cells(html, 'id="fleet-totals"', "pods") == "6"
    assert api["totals"]["estimatedSavings"]["cpuCores"] == -0.6
    assert cells(html, 'id="fleet-totals"', "short-containers") == "1"
    assert 'href="/dashboard/?cluster=uid-west"' in html
    # no totals stored by the clusters' leaders yet: summed for this page, and said so
    assert html.count('data-computed="request">summed now<') == 2


@pytest.mark.usefixtures("fleet")
def test_a_page_shows_the_cluster_named_and_its_links_keep_it(client: FlaskClient) -> None:
    own = client.get("/dashboard/workloads").get_data(as_text=True)
    assert 'data-value="100"' in own and 'data-value="500"' not in own
    west = client.get("/dashboard/workloads?cluster=west").get_data(as_text=True)
    assert 'data-value="500"' in west and 'data-value="100"' not in west
    assert 'href="/dashboard/workloads/shop/Deployment/web?cluster=west"' in west
    assert 'href="/dashboard/workloads?cluster=west&amp;sort=name"' in west  # one query
    assert '<option value="uid-west" selected>' in west
    page = client.get("/dashboard/workloads/shop/Deployment/web?cluster=west")
    assert page.status_code == 200 and "500m" in page.get_data(as_text=True)
    events = client.get("/dashboard/events?cluster=west").get_data(as_text=True)
    assert "shop/web-west" in events and "shop/web-east" not in events
    # the next page is the process's own cluster again
    assert 'data-value="100"' in client.get("/dashboard/workloads").get_data(as_text=True)


def test_an_unknown_cluster_is_a_page_naming_the_parameter(client: FlaskClient) -> None:
    resp = client.get("/dashboard/?cluster=north")
    assert resp.status_code == 400
    assert "cluster: no cluster named &#39;north&#39;" in resp.get_data(as_text=True)


def test_one_cluster_offers_no_selector(client: FlaskClient) -> None:
    html = client.get("/dashboard/").get_data(as_text=True)
    assert 'id="cluster-select"' not in html
    assert client.get("/dashboard/fleet").status_code == 200


@pytest.mark.browser
@pytest.mark.usefixtures("fleet")
def test_in_chromium_the_selector_switches_the_cluster_and_the_fleet_page_links_it(
    browser: Any, live_url: str, database_url: str
) -> None:
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.goto(f"{live_url}/dashboard/login?next=/dashboard/workloads")
    page.fill("input[name=token]", TOKENS["reader"])
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard/workloads")
    assert "100m" in page.locator("main").inner_text()
    page.select_option("#cluster-select select", "uid-west")
    page.click("#cluster-select button")
    page.wait_for_url("**/dashboard/workloads?cluster=uid-west")
    assert "500m" in page.locator("main").inner_text()
    shot(page, "workloads-of-another-cluster", database_url)
    page.click("nav >> text=Fleet")
    page.wait_for_url("**/dashboard/fleet")
    rows = page.locator("#fleet tr.cluster").evaluate_all("rs => rs.map(r => r.dataset.name)")
    assert rows == ["west", "east"]
    assert page.locator("#fleet-clusters").get_attribute("data-value") == "2"
    shot(page, "fleet", database_url)
    page.click("#fleet tr.cluster[data-name='west'] a")
    page.wait_for_url("**/dashboard/?cluster=uid-west")
    assert page.locator("#total-workloads").get_attribute("data-value") == "1"


def test_the_fleet_page_shows_when_stored_totals_were_summed(client: FlaskClient) -> None:
    """On SQLite too: the one cluster's totals as its leader stored them, with their time."""
    db.session.add(seen(None, 100, 3, 200))
    db.session.commit()
    scoper = Scoper.as_configured(db.session, InvalidPolicyLog("test"), settings())
    assert write_totals(db.session, scoper, datetime(2026, 12, 7, 5, 0, tzinfo=UTC))
    html = client.get("/dashboard/fleet").get_data(as_text=True)
    assert 'data-computed="leader">2026-12-07 05:00:00 UTC<' in html
    assert cells(html, 'id="fleet-totals"', "savings-cpu") == "300"
