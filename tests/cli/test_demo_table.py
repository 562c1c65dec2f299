"""The demo's table (app.cli.demo.requests_table): no recommendation shown for what rightsizer
leaves alone (the API's `excluded`), and the reason in the last column."""

from __future__ import annotations

from app.cli.demo import requests_table

HPA = "HorizontalPodAutoscaler frontend scales it on cpu"
NEVER = "namespace kube-system is never sized (the webhook configuration always keeps it out)"


def container(name: str, excluded: dict[str, str] | None = None) -> dict[str, object]:
    doc: dict[str, object] = {
        "name": name,
        "target": {"cpu": "93m", "memory": "250Mi"},
        "currentRequests": {"cpu": "500m", "memory": "512Mi"},
    }
    if excluded:
        doc["excluded"] = excluded
    return doc


def workload(ns: str, name: str, *containers: dict[str, object]) -> dict[str, object]:
    return {"namespace": ns, "kind": "Deployment", "name": name, "containers": list(containers)}


def test_what_rightsizer_leaves_alone_has_no_recommendation_and_says_why() -> None:
    table = requests_table(
        [
            workload(
                "kube-system", "coredns", container("coredns", {"cpu": NEVER, "memory": NEVER})
            ),
            workload("shop", "catalog", container("api")),
            workload("shop", "frontend", container("web", {"cpu": HPA})),
        ]
    )
    rows = [line.split() for line in table.splitlines()]
    assert rows[0][-2:] == ["LEFT", "ALONE"]
    assert rows[1][:6] == ["kube-system/Deployment/coredns", "coredns", "500m", "-", "512Mi", "-"]
    assert table.splitlines()[1].endswith(f"cpu and memory: {NEVER}")
    assert rows[2] == ["shop/Deployment/catalog", "api", "500m", "93m", "512Mi", "250Mi"]
    assert rows[3][:6] == ["shop/Deployment/frontend", "web", "500m", "-", "512Mi", "250Mi"]
    assert table.splitlines()[3].endswith(f"cpu: {HPA}")
