"""The Overview counts only what rightsizer would change (app.core.scope), says what it leaves out
and why, and keeps the pod minimum out of the risk list (its own small line)."""

from __future__ import annotations

import re

from flask import Flask
from flask.testing import FlaskClient

from tests.dashboard.scope_seed import HPA, MI, seed_scope


def attr(html: str, element_id: str, name: str) -> str:
    m = re.search(rf'id="{element_id}"[^>]*?{name}="([^"]*)"', html)
    assert m, (element_id, name)
    return m.group(1)


def test_savings_waste_and_risk_count_only_what_rightsizer_changes(
    app: Flask, client: FlaskClient
) -> None:
    seed_scope()
    html = client.get("/dashboard/").get_data(as_text=True)
    # CPU: log-agent frees 3 x 75m, api lacks 2 x 300m; frontend's (HPA) and kube-system's count 0.
    assert attr(html, "savings-cpu", "data-value") == str(3 * 75 - 2 * 300)
    # Memory: frontend frees 3 x 768Mi, log-agent is raised 3 x 186Mi, api lacks 2 x 512Mi.
    assert attr(html, "savings-memory", "data-value") == str((3 * 768 - 3 * 186 - 2 * 512) * MI)
    waste = re.findall(r'<tr class="waste" data-namespace="([^"]+)" data-name="([^"]+)"', html)
    assert ("kube-system", "node-agent") not in waste
    frontend = html[html.index('data-name="frontend"') :]
    assert re.search(r'class="num savings-cpu" data-value="0"', frontend)
    # Risk: only api's real shortfall; the pod minimum is a line of its own.
    risk = re.findall(r'<tr class="risk" data-namespace="([^"]+)" data-name="([^"]+)"', html)
    assert sorted(set(risk)) == [("shop", "api")]
    assert attr(html, "pod-minimum", "data-containers") == "1"
    assert attr(html, "pod-minimum", "data-memory") == str(3 * 186 * MI)
    assert "Not a risk: 1 container asks for less than the pod minimum it is recommended" in html
    # What is left out, with the reason.
    left = re.findall(
        r'<tr class="left-alone" data-namespace="([^"]+)" data-name="([^"]+)" '
        r'data-resources="([^"]+)">.*?<td>([^<]*)</td></tr>',
        html,
    )
    assert [(ns, name, res, why) for ns, name, res, why in left if ns == "shop"] == [
        ("shop", "frontend", "cpu", HPA)
    ]
    [(_, _, res, why)] = [row for row in left if row[0] == "kube-system"]
    assert res == "cpu and memory" and why.startswith("namespace kube-system is never sized")
    assert "1 workload under the policy" not in html  # no policy here: all are estimates
    assert "4 workloads as a default policy would (no policy governs them: an estimate)" in html


def test_a_workload_page_says_what_is_left_alone_and_on_what_basis(
    app: Flask, client: FlaskClient
) -> None:
    seed_scope()
    html = client.get("/dashboard/workloads/shop/Deployment/frontend").get_data(as_text=True)
    assert f'<span class="sub left-alone" data-resource="cpu">cpu left alone: {HPA}</span>' in html
    assert re.search(r'class="num savings-cpu muted" data-value="" title="[^"]+">left alone<', html)
    assert 'data-basis="defaultPolicy"' in html


def test_the_left_out_list_is_capped_and_says_how_many_more(
    app: Flask, client: FlaskClient
) -> None:
    from tests.dashboard.scope_seed import pods
    from tests.support.reviews import add_recommendation

    for i in range(33):  # a kube-system of many workloads
        add_recommendation("c", workload=("kube-system", "Deployment", f"w{i:02}"), **pods(1, 1, 1))
    html = client.get("/dashboard/").get_data(as_text=True)
    assert "Left out of the savings: 33 items rightsizer leaves alone" in html
    assert html.count('<tr class="left-alone"') == 30
    assert "And 3 more: each workload's page says what rightsizer leaves alone." in html
