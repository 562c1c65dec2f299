"""In headless Chromium: the Overview counts only what rightsizer would change and says what it
leaves out, the pod minimum is a line apart from the risk list, and a workload page offers one
policy for all its containers (none in kube-system). Screenshots go to tests/artifacts/."""

from __future__ import annotations

from typing import Any

import pytest
import yaml
from flask import Flask

from app.documents.policy import parse_policy
from tests.dashboard.scope_seed import HPA, MI, seed_scope
from tests.support.reviews import add_recommendation
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS

pytestmark = pytest.mark.browser


def logged_in(browser: Any, live_url: str) -> Any:
    page = browser.new_context(viewport={"width": 1400, "height": 900}).new_page()
    page.goto(f"{live_url}/dashboard/login")
    page.fill("input[name=token]", TOKENS["reader"])
    page.click("button[type=submit]")
    page.wait_for_url("**/dashboard/")
    return page


def test_the_overview_counts_what_rightsizer_changes_and_says_what_it_leaves_out(
    browser: Any, app: Flask, live_url: str, database_url: str
) -> None:
    seed_scope()
    page = logged_in(browser, live_url)
    frontend = page.locator("#waste tr.waste[data-name='frontend']")
    assert frontend.locator("td.savings-cpu").get_attribute("data-value") == "0"
    assert int(frontend.locator("td.savings-memory").get_attribute("data-value")) == 3 * 768 * MI
    assert page.locator("#waste tr.waste[data-name='node-agent']").count() == 0
    assert page.locator("#risk tr.risk").evaluate_all("rs => rs.map(r => r.dataset.name)") == [
        "api",
        "api",
    ]
    line = page.locator("#pod-minimum")
    assert line.is_visible()
    assert "Not a risk: 1 container asks for less than the pod minimum" in line.inner_text()
    page.locator("#left-alone summary").click()
    rows = page.locator("#left-alone-table tr.left-alone")
    assert rows.count() == 2
    assert HPA in page.locator("#left-alone-table tr[data-name='frontend']").inner_text()
    assert (
        "never sized" in page.locator("#left-alone-table tr[data-name='node-agent']").inner_text()
    )
    assert "as a default policy would" in page.locator("#savings-basis").inner_text()
    shot(page, "overview-scope", database_url)


def test_a_workload_page_offers_one_policy_for_all_its_containers(
    browser: Any, app: Flask, live_url: str, database_url: str
) -> None:
    seed_scope()
    add_recommendation("envoy", 100, 128 * MI, workload=("shop", "Deployment", "frontend"))
    page = logged_in(browser, live_url)
    page.goto(f"{live_url}/dashboard/workloads/shop/Deployment/frontend")
    assert page.locator("pre.snippet.policy").count() == 1
    policy = parse_policy(yaml.safe_load(page.locator("pre.snippet.policy").inner_text()))
    assert [(c.container_name, c.controlled_resources) for c in policy.container_policies] == [
        ("envoy", ("cpu", "memory")),
        ("web", ("memory",)),  # its CPU: the HPA's
    ]
    web = page.locator("tr.container[data-name='web']")
    assert web.locator("td.savings-cpu").inner_text() == "left alone"
    assert f"cpu left alone: {HPA}" in web.inner_text()
    shot(page, "workload-scope", database_url)
    page.goto(f"{live_url}/dashboard/workloads/kube-system/DaemonSet/node-agent")
    assert page.locator("pre.snippet.policy").count() == 0
    assert "never sized" in page.locator("#no-policy").inner_text()
    shot(page, "workload-kube-system", database_url)


def test_a_young_workload_says_not_enough_history_instead_of_six_digit_bounds(
    browser: Any, app: Flask, live_url: str, database_url: str
) -> None:
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from app.store.extensions import db
    from app.store.models import Recommendation

    t0 = datetime(2024, 7, 4, 12, tzinfo=UTC)
    add_recommendation(
        "app",
        138,
        250 * MI,
        workload=("shop", "Deployment", "new"),
        first_sample_at=t0,
        last_sample_at=t0 + timedelta(minutes=12),
    )
    db.session.execute(  # VPA's bounds 12 minutes in
        update(Recommendation).values(upper_bound_cpu=343196, upper_bound_memory=525358 * MI)
    )
    db.session.commit()
    page = logged_in(browser, live_url)
    page.goto(f"{live_url}/dashboard/workloads/shop/Deployment/new")
    row = page.locator("tr.container[data-name='app']")
    for cls in ("range-cpu", "range-memory"):
        assert row.locator(f"td.{cls}").inner_text() == "not enough history: 0.2 hours of 1"
    assert "343196" not in row.inner_text()
    assert "343196m" in row.locator("td.range-cpu").get_attribute("title")  # VPA's, on demand
    shot(page, "workload-young", database_url)
