"""Dashboard pages over the test client: numbers match the API, filters, login, escaping."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta

import pytest
from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import delete, update

from app.core.quantity import amount
from app.store.extensions import db
from app.store.history import recommendation_history
from app.store.models import Recommendation, RecommendationPoint
from app.store.recommendations import save_all
from app.store.results import ContainerResult, CurrentRequests, results_from_model
from tests.support.tokens import TOKENS
from tests.support.usage import seed

PAGES = (
    "/dashboard/",
    "/dashboard/workloads",
    "/dashboard/scalers",
    "/dashboard/nodes",
    "/dashboard/events",
    "/dashboard/workloads/shop/Deployment/web",
)


def values(html: str, cls: str) -> list[int]:
    return [int(v) for v in re.findall(rf'class="num {cls}" data-value="(-?\d+)"', html)]


@pytest.fixture
def seeded(app: Flask) -> None:
    """The seeded workloads; shop's two seen with 2 pods at 1 core and 2Gi each."""
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


def test_every_page_renders(seeded: None, client: FlaskClient) -> None:
    for page in PAGES:
        resp = client.get(page)
        assert resp.status_code == 200, page
        assert "<nav>" in resp.get_data(as_text=True)


def test_numbers_match_the_api(seeded: None, client: FlaskClient) -> None:
    items = client.get("/api/v1/recommendations").get_json()["items"]
    cpu = sum(amount("cpu", c["target"]["cpu"]) for w in items for c in w["containers"])
    mem = sum(amount("memory", c["target"]["memory"]) for w in items for c in w["containers"])
    html = client.get("/dashboard/").get_data(as_text=True)
    assert f'id="total-target-cpu" data-value="{cpu}"' in html
    assert f'id="total-target-memory" data-value="{mem}"' in html
    savings = sum(w.get("estimatedSavings", {}).get("cpuCores", 0) for w in items)
    assert re.search(rf'id="savings-cpu" data-value="{round(savings * 1000)}"', html)
    table = client.get("/dashboard/workloads?sort=cpu").get_data(as_text=True)
    assert sorted(values(table, "target-cpu")) == values(table, "target-cpu")
    assert sum(values(table, "target-cpu")) == cpu


def test_namespace_and_mode_filters(seeded: None, client: FlaskClient) -> None:
    html = client.get("/dashboard/workloads?namespace=shop").get_data(as_text=True)
    assert html.count('class="workload"') == 2
    client.post(
        "/api/v1/policies", json={"name": "p", "namespace": "shop", "updateMode": "Initial"}
    )
    html = client.get("/dashboard/workloads?mode=Initial").get_data(as_text=True)
    assert html.count('class="workload"') == 2
    assert '<span class="sub">shop/p</span>' in html
    assert (
        client.get("/dashboard/workloads?mode=Off").get_data(as_text=True).count('class="workload"')
        == 1
    )


def test_login_with_a_cookie(app: Flask, anon: FlaskClient) -> None:
    resp = anon.get("/dashboard/workloads")
    assert resp.status_code == 302
    assert resp.headers["Location"].startswith("/dashboard/login?next=/dashboard/workloads")
    bad = anon.post("/dashboard/login", data={"token": "nope", "next": "/dashboard/workloads"})
    assert bad.status_code == 401
    ok = anon.post(
        "/dashboard/login", data={"token": TOKENS["reader"], "next": "https://evil.example/"}
    )
    assert ok.status_code == 302
    assert ok.headers["Location"] == "/dashboard/"
    cookie = ok.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/dashboard" in cookie
    assert anon.get("/dashboard/workloads").status_code == 200
    assert anon.get("/api/v1/policies").status_code == 401  # the cookie is the dashboard's only
    anon.post("/dashboard/logout")
    assert anon.get("/dashboard/workloads").status_code == 302


@pytest.mark.parametrize("app_config", [{"PUBLIC_READS": True}])
def test_public_reads_open_the_dashboard(anon: FlaskClient) -> None:
    assert anon.get("/dashboard/").status_code == 200
    assert anon.get("/").headers["Location"] == "/dashboard/"


def test_names_are_escaped(app: Flask, client: FlaskClient) -> None:
    from app.store.models import AuditEvent

    db.session.add(
        AuditEvent(
            actor="<script>alert(1)</script>",
            action="x",
            object_kind="Pod",
            object_ref="a/<img src=x onerror=alert(2)>",
            message="<b>hi</b>",
        )
    )
    db.session.commit()
    html = client.get("/dashboard/events").get_data(as_text=True)
    assert "<script>alert" not in html and "<img src=x" not in html and "<b>hi" not in html
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_unknown_workload_page_is_404(app: Flask, client: FlaskClient) -> None:
    resp = client.get("/dashboard/workloads/a/Deployment/b")
    assert resp.status_code == 404
    assert "no data for Deployment a/b" in resp.get_data(as_text=True)


def test_unknown_dashboard_pages_are_html_404_pages(anon: FlaskClient) -> None:
    for path in ("/dashboard/nope", "/dashboard/workloads/shop", "/dashboard/workloads/a/b/c/d/"):
        resp = anon.get(path)
        assert resp.status_code == 404, path
        assert resp.mimetype == "text/html", path
        html = resp.get_data(as_text=True)
        assert "<nav>" in html and f"no dashboard page at {path}" in html


def test_a_trailing_slash_leads_to_the_page(seeded: None, client: FlaskClient) -> None:
    resp = client.get("/dashboard/workloads/?namespace=shop")
    assert resp.status_code == 308
    assert resp.headers["Location"] == "/dashboard/workloads?namespace=shop"
    resp = client.get("/dashboard/workloads/shop/Deployment/web/", follow_redirects=True)
    assert resp.status_code == 200 and "Deployment shop/web" in resp.get_data(as_text=True)
    assert client.get("/dashboard/nodes/").headers["Location"] == "/dashboard/nodes"


def test_a_continue_token_not_from_a_page_is_a_400_error_page(
    app: Flask, client: FlaskClient
) -> None:
    resp = client.get("/dashboard/events?continue=garbage")
    assert resp.status_code == 400
    assert resp.mimetype == "text/html"
    html = resp.get_data(as_text=True)
    assert "<nav>" in html and "not a token from a previous page of this list" in html


def test_overview_savings_over_the_real_pods_match_the_api(
    seeded: None, client: FlaskClient
) -> None:
    """shop/web's three pods ask for 1 core/1Gi, 250m/250Mi and 250m/250Mi; shop/db's two for
    1 core/2Gi each: the overview, the workloads page and the API say the same savings, over
    those pods, in cores, GiB and money."""
    for name, pods, cpu, memory, typical in (
        ("web", 3, 1500, 1524 * 2**20, (250, 250 * 2**20)),
        ("db", 2, 2000, 2**32, (1000, 2**31)),
    ):
        db.session.execute(
            update(Recommendation)
            .where(Recommendation.namespace == "shop", Recommendation.name == name)
            .values(
                replicas=pods,
                requested_cpu_total=cpu,
                requested_memory_total=memory,
                current_cpu_request=typical[0],
                current_memory_request=typical[1],
            )
        )
    db.session.commit()
    items = client.get("/api/v1/recommendations").get_json()["items"]
    totals = [w["estimatedSavings"] for w in items if "estimatedSavings" in w]
    assert len(totals) == 2
    html = client.get("/dashboard/").get_data(as_text=True)
    cpu_shown = re.search(r'id="savings-cpu" data-value="(-?\d+)"', html)
    memory_shown = re.search(r'id="savings-memory" data-value="(-?\d+)"', html)
    money = re.search(r'id="savings-money" data-value="(-?[\d.]+)"', html)
    assert cpu_shown and memory_shown and money
    assert int(cpu_shown.group(1)) == round(sum(t["cpuCores"] for t in totals) * 1000)
    gib = sum(t["memoryGiB"] for t in totals)
    assert int(memory_shown.group(1)) / 2**30 == pytest.approx(gib, abs=0.002)
    # the default prices: 0.04 a core-hour, 0.005 a GiB-hour, 730 hours a month
    cores = int(cpu_shown.group(1)) / 1000
    assert float(money.group(1)) == pytest.approx(
        (cores * 0.04 + int(memory_shown.group(1)) / 2**30 * 0.005) * 730, abs=0.01
    )
    # web's pods ask for less than the 587m recommended (3 x 587m > 1500m): a risk, listed
    assert 'class="risk" data-namespace="shop" data-name="web" data-container="main" ' in html
    table = client.get("/dashboard/workloads").get_data(as_text=True)
    web = table.split('data-name="web"')[2]  # ops/web first, then shop/web
    assert f'class="num savings-cpu bad" data-value="{1500 - 3 * 587}"' in web


@pytest.mark.parametrize(
    "app_config",
    [
        {
            "PUBLIC_READS": True,
            "PRICE_PER_CORE_HOUR": "1",
            "PRICE_PER_GIB_HOUR": "0",
            "CURRENCY": "EUR ",
        }
    ],
)
def test_prices_and_currency_are_settings(seeded: None, anon: FlaskClient) -> None:
    items = anon.get("/api/v1/recommendations").get_json()["items"]
    cores = sum(w.get("estimatedSavings", {}).get("cpuCores", 0) for w in items)
    html = anon.get("/dashboard/").get_data(as_text=True)
    money = re.search(r'id="savings-money" data-value="(-?[\d.]+)">([^<]+)<', html)
    assert money
    assert float(money.group(1)) == pytest.approx(cores * 730, abs=0.01)
    assert money.group(2).startswith(("EUR ", "-EUR "))


def test_recommendation_over_time_is_drawn_from_the_history(
    app: Flask, client: FlaskClient
) -> None:
    page = "/dashboard/workloads/shop/Deployment/web"
    seed()
    html = client.get(page).get_data(as_text=True)
    assert 'id="no-history"' not in html  # seeding saved one point
    m = seed()  # the same model saved again at the same time: still one point
    start = datetime(2024, 7, 4, tzinfo=UTC)
    for hours, cpu_request in ((1, 1000), (2, 1000), (5, 800)):
        results = [
            ContainerResult(
                r.workload,
                r.container,
                r.recommendation,
                r.checkpoint,
                CurrentRequests(cpu_request, 2**31, 2),
            )
            for r in results_from_model(m)
        ]
        save_all(db.session, results, start + timedelta(hours=hours), batch_size=10)
    stored = recommendation_history(db.session, "shop", "Deployment", "web")
    assert len(stored) == 4
    html = client.get(page).get_data(as_text=True)
    assert "(4 points)" in html

    def circles(cls: str, resource: str) -> list[int]:
        pattern = rf'<circle class="point {cls}" data-resource="{resource}" data-value="(\d+)"'
        return [int(v) for v in re.findall(pattern, html)]

    assert circles("target", "cpu") == [p.target_cpu for p in stored]
    assert circles("target", "memory") == [p.target_memory for p in stored]
    assert circles("requested", "cpu") == [1000, 1000, 800]  # unknown at the first point
    assert circles("requested", "memory") == [2**31] * 3
    assert html.count('<polyline class="history target"') == 2
    # another workload's page shows its own points only
    html = client.get("/dashboard/workloads/ops/Deployment/web").get_data(as_text=True)
    own = recommendation_history(db.session, "ops", "Deployment", "web")
    assert [p.name for p in own] == ["web"] * 4 and {p.namespace for p in own} == {"ops"}
    assert circles("target", "cpu") == [p.target_cpu for p in own]


def test_a_resize_shows_at_once_not_at_the_next_hourly_point(
    app: Flask, client: FlaskClient
) -> None:
    m = seed()
    start = datetime(2024, 7, 4, tzinfo=UTC)
    for hours in (1, 2):
        results = [
            ContainerResult(
                r.workload,
                r.container,
                r.recommendation,
                r.checkpoint,
                CurrentRequests(1000, 2**31, 2),
            )
            for r in results_from_model(m)
        ]
        save_all(db.session, results, start + timedelta(hours=hours), batch_size=10)
    # the pods resized to 800m; the recommender's next run, ten minutes later, saw them (no
    # history point: the last is less than an hour old)
    db.session.execute(
        update(Recommendation)
        .where(Recommendation.namespace == "shop", Recommendation.name == "web")
        .values(current_cpu_request=800, updated_at=start + timedelta(hours=2, minutes=10))
    )
    db.session.commit()
    stored = recommendation_history(db.session, "shop", "Deployment", "web")
    assert stored[-1].current_cpu_request == 1000
    html = client.get("/dashboard/workloads/shop/Deployment/web").get_data(as_text=True)
    pattern = r'<circle class="point requested( live)?" data-resource="cpu" data-value="(\d+)"'
    requested = [(live, int(v)) for live, v in re.findall(pattern, html)]
    assert requested[-2:] == [("", 1000), (" live", 800)]
    assert "requested 800m at 2024-07-04 02:10 UTC" in html


def test_overview_bars_start_at_a_zero_line(seeded: None, client: FlaskClient) -> None:
    html = client.get("/dashboard/").get_data(as_text=True)
    assert html.count('<line class="zero" x1="200" x2="200"') == 2  # CPU and memory
    bars = re.findall(r'<rect class="bar[^"]*" x="([\d.]+)"', html)
    assert len(bars) == 4 and {float(x) for x in bars} == {200.0}


def test_empty_history_says_so(app: Flask, client: FlaskClient) -> None:
    seed()
    db.session.execute(delete(RecommendationPoint))
    db.session.commit()
    html = client.get("/dashboard/workloads/shop/Deployment/web").get_data(as_text=True)
    assert 'id="no-history"' in html
