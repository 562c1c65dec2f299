"""The workload page's charts in headless Chromium, over eight days of hourly history: axes
with round ticks and units, a zero line, a legend, p50 and p90 told apart, the requests as of
the last run. Screenshots go to tests/artifacts/ (look at them)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

import pytest
from flask import Flask
from sqlalchemy import delete, update

from app.store.extensions import db
from app.store.models import Recommendation, RecommendationPoint
from tests.support.screenshots import shot
from tests.support.tokens import TOKENS
from tests.support.usage import NOW, seed

pytestmark = pytest.mark.browser
PAGE = "/dashboard/workloads/shop/Deployment/web"


@pytest.fixture
def history(app: Flask) -> None:
    """shop/web over 8 days: daily usage waves (p50 below p90), 4 cores requested, resized to
    2500m ten minutes after the last hourly point; a target near 3 cores."""
    seed()
    db.session.execute(delete(RecommendationPoint))
    start = NOW - timedelta(days=8)
    for hour in range(8 * 24):
        wave = 1 + math.sin(2 * math.pi * hour / 24)
        db.session.add(
            RecommendationPoint(
                namespace="shop",
                kind="Deployment",
                name="web",
                container="main",
                time=start + timedelta(hours=hour),
                target_cpu=2800 + 10 * (hour % 7),
                target_memory=3 * 2**30,
                current_cpu_request=4000,
                current_memory_request=6 * 2**30,
                usage_cpu_p50=int(800 + 600 * wave),
                usage_cpu_p90=int(1400 + 900 * wave),
                usage_memory_p50=int(1.5 * 2**30 + 2**29 * wave),
                usage_memory_p90=int(2 * 2**30 + 2**29 * wave),
            )
        )
    last = start + timedelta(hours=8 * 24 - 1)
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(current_cpu_request=2500, target_cpu=2800, updated_at=last + timedelta(minutes=10))
    )
    db.session.commit()


def test_history_charts_read_like_charts(
    browser: Any, history: None, live_url: str, database_url: str
) -> None:
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    context.add_cookies(
        [{"name": "rightsizer_token", "value": TOKENS["reader"], "url": f"{live_url}/dashboard/"}]
    )
    page = context.new_page()
    page.goto(f"{live_url}{PAGE}")
    cpu = page.locator(".history-cpu svg")
    memory = page.locator(".history-memory svg")
    # amounts on round ticks, in the unit a person reads, from a zero line
    assert cpu.locator("text.y-tick").all_text_contents() == [
        "0",
        "1 core",
        "2 cores",
        "3 cores",
        "4 cores",
        "5 cores",
    ]
    assert memory.locator("text.y-tick").all_text_contents() == [
        "0",
        "2 GiB",
        "4 GiB",
        "6 GiB",
        "8 GiB",
    ]
    assert cpu.locator("line.zero").count() == 1
    # time: a tick a day, labelled with the date
    days = cpu.locator("text.x-tick").all_text_contents()
    assert len(days) == 8 and all(len(d.split()) == 2 for d in days), days
    # a legend naming every line
    legend = " ".join(cpu.locator("g.legend-svg text").all_text_contents())
    for name in ("usage p50", "usage p90", "target", "requested per pod"):
        assert name in legend
    # p50 and p90 drawn differently, the band between them
    style = "e => [getComputedStyle(e).stroke, getComputedStyle(e).strokeDasharray]"
    p50 = cpu.locator("polyline.usage-p50").evaluate(style)
    p90 = cpu.locator("polyline.usage-p90").evaluate(style)
    assert p50 != p90 and p50[0] != p90[0] and p50[1] != p90[1]
    assert cpu.locator("polygon.usage-band").count() == 1
    # the resize to 2500m shows now, not at the next hourly point
    requested = cpu.locator("circle.point.requested")
    assert requested.last.get_attribute("data-value") == "2500"
    assert "live" in (requested.last.get_attribute("class") or "")
    assert requested.nth(requested.count() - 2).get_attribute("data-value") == "4000"
    # the usage histograms: round amounts under the bars, the target named at its line
    for cls, unit in (
        ("histogram-cpu", ("m", "core", "cores")),
        ("histogram-memory", ("Mi", "GiB")),
    ):
        ticks = page.locator(f".{cls} svg text.x-tick").all_text_contents()
        assert len(ticks) >= 2 and all(t.endswith(unit) for t in ticks), ticks
        assert page.locator(f".{cls} svg text.marker-label").text_content().startswith("target ")
    shot(page, "workload-history", database_url)
    cpu.screenshot(path=str(shot_path("workload-history-cpu", database_url)))
    context.close()


def shot_path(name: str, database_url: str) -> Any:
    from tests.support.screenshots import ARTIFACTS

    ARTIFACTS.mkdir(exist_ok=True)
    db_name = "postgres" if database_url.startswith("postgresql") else "sqlite"
    return ARTIFACTS / f"{name}-{db_name}.png"
