"""The dashboard in real headless Chromium (Debian's /usr/bin/chromium driven by Playwright):
log in, visit every page on a laptop and a phone screen, compare numbers with the API, filter.
Screenshots go to tests/artifacts/ (not committed)."""

from __future__ import annotations

import pytest
import requests
from flask import Flask
from sqlalchemy import update

from app.core.quantity import amount
from app.store.extensions import db
from app.store.models import Recommendation
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS
from tests.support.usage import seed

pytestmark = pytest.mark.browser


@pytest.fixture
def seeded(app: Flask) -> None:
    seed()
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop")
        .values(
            current_cpu_request=1000,
            current_memory_request=2**31,
            replicas=2,
            requested_cpu_total=2000,
            requested_memory_total=2**32,
        )
    )
    db.session.commit()


def test_pages_numbers_and_filter(
    browser: object, seeded: None, live_url: str, database_url: str
) -> None:
    api = requests.Session()
    api.headers["Authorization"] = f"Bearer {TOKENS['reader']}"
    items = api.get(f"{live_url}/api/v1/recommendations", timeout=10).json()["items"]
    api_cpu = sum(amount("cpu", c["target"]["cpu"]) for w in items for c in w["containers"])
    api_mem = sum(amount("memory", c["target"]["memory"]) for w in items for c in w["containers"])

    context = browser.new_context(viewport={"width": 1280, "height": 800})  # type: ignore[attr-defined]
    page = context.new_page()
    page.goto(f"{live_url}/dashboard/workloads")
    assert "/dashboard/login" in page.url  # no token yet
    page.fill("input[name=token]", TOKENS["reader"])
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard/workloads")

    page.goto(f"{live_url}/dashboard/")
    assert int(page.get_attribute("#total-target-cpu", "data-value") or -1) == api_cpu
    assert int(page.get_attribute("#total-target-memory", "data-value") or -1) == api_mem
    assert page.inner_text("#total-workloads") == str(len(items))
    assert page.locator("svg rect.bar").count() == 4
    shot(page, "overview", database_url)

    page.goto(f"{live_url}/dashboard/workloads")
    assert page.locator("tr.workload").count() == 3
    page.select_option("#namespace-filter", "shop")
    page.click("#apply-filter")
    page.wait_for_url("**namespace=shop**")
    rows = page.locator("tr.workload")
    assert rows.count() == 2
    assert {rows.nth(i).get_attribute("data-namespace") for i in range(2)} == {"shop"}
    shop = [w for w in items if w["namespace"] == "shop"]
    shown = sorted(
        int(v)
        for v in page.locator("td.target-cpu").evaluate_all(
            "cells => cells.map(c => c.dataset.value)"
        )
    )
    assert shown == sorted(amount("cpu", w["containers"][0]["target"]["cpu"]) for w in shop)
    shot(page, "workloads-filtered", database_url)

    page.click("text=Deployment/web")
    page.wait_for_url("**/dashboard/workloads/shop/Deployment/web")
    web = next(w for w in shop if w["name"] == "web")
    cell = page.locator("tr.container td.target-cpu")
    want = str(amount("cpu", web["containers"][0]["target"]["cpu"]))
    assert cell.get_attribute("data-value") == want
    assert page.locator(".histogram-cpu svg rect").count() >= 1
    assert page.locator(".histogram-memory svg line.marker").count() == 1
    # the recommendation over time: seeding saved one point, the API's target
    point = page.locator(".history-cpu svg circle.point.target")
    assert point.count() == 1
    assert point.get_attribute("data-value") == want
    shot(page, "workload", database_url)

    for path, name in (("scalers", "scalers"), ("nodes", "nodes"), ("events", "events")):
        page.goto(f"{live_url}/dashboard/{path}")
        assert page.locator("h1").count() == 1
        shot(page, name, database_url)
    assert page.locator("#no-nodes").count() == 0  # the events page now; nodes checked below
    page.goto(f"{live_url}/dashboard/nodes")
    assert page.locator("#no-nodes").is_visible()
    context.close()


def test_readable_on_a_phone(
    browser: object, seeded: None, live_url: str, database_url: str
) -> None:
    context = browser.new_context(  # type: ignore[attr-defined]
        viewport={"width": 390, "height": 844}, device_scale_factor=2, is_mobile=True
    )
    context.add_cookies(
        [{"name": "rightsizer_token", "value": TOKENS["reader"], "url": f"{live_url}/dashboard/"}]
    )
    page = context.new_page()
    page.goto(f"{live_url}/dashboard/workloads")
    assert page.locator("tr.workload").count() == 3
    # the page itself does not scroll sideways: only the table's own wrapper may
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390
    shot(page, "workloads-phone", database_url)
    page.goto(f"{live_url}/dashboard/")
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    shot(page, "overview-phone", database_url)
    context.close()
