"""Recommendations for the savings-scope pages (tests/dashboard/test_scope_pages.py and its
browser twin): one resource an HPA scales, kube-system, a DaemonSet recommended only the pod
minimum, and a real shortfall."""

from __future__ import annotations

from typing import Any

from tests.support.reviews import add_recommendation

MI = 2**20
HPA = "HorizontalPodAutoscaler frontend scales it on cpu"


def pods(n: int, cpu: int, memory: int) -> dict[str, Any]:
    return {
        "replicas": n,
        "requested_cpu_total": n * cpu,
        "requested_memory_total": n * memory,
        "current_cpu_request": cpu,
        "current_memory_request": memory,
    }


def seed_scope() -> None:
    # 3 pods of 1 core and 1Gi, recommended 250m and 256Mi; an HPA scales its CPU.
    add_recommendation(
        "web",
        250,
        256 * MI,
        workload=("shop", "Deployment", "frontend"),
        conflicts={"cpu": HPA},
        **pods(3, 1000, 1024 * MI),
    )
    # kube-system: never sized, whatever it would save or lack.
    add_recommendation(
        "agent",
        25,
        250 * MI,
        workload=("kube-system", "DaemonSet", "node-agent"),
        **pods(3, 100, 64 * MI),
    )
    # Recommended the pod minimum (25m, 250Mi): asks 64Mi, "lacks" 186Mi a pod, but only the floor.
    add_recommendation(
        "agent", 25, 250 * MI, workload=("data", "DaemonSet", "log-agent"), **pods(3, 100, 64 * MI)
    )
    # A real shortfall: 2 pods of 500m and 512Mi, recommended 800m and 1Gi from their usage.
    add_recommendation(
        "api", 800, 1024 * MI, workload=("shop", "Deployment", "api"), **pods(2, 500, 512 * MI)
    )
