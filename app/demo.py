"""The demos: the whole service against the built-in simulated cluster (`rightsizer demo`), and
a recorded usage trace learnt into the database (`rightsizer replay`), both through the same
model, repository and API that the service uses, so what they show is what it computes.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from flask import current_app
from flask_migrate import upgrade

from app.core.model import UsageModel, WorkloadKey
from app.core.trace import parse_trace, replay
from app.extensions import db
from app.repository import results_from_model, save_all

log = logging.getLogger(__name__)
DEMO_NAMESPACE = "rightsizer"


def load_trace(path: Path, workload: WorkloadKey) -> tuple[int, int]:
    """Migrates the database, replays the trace as `workload`, saves. Returns (rows, containers)."""
    upgrade()
    with path.open(encoding="utf-8", newline="") as fh:
        rows = parse_trace(fh)
    model = UsageModel(current_app.config["RECOMMENDER_SETTINGS"])
    replay(rows, model=model, workload=workload)
    saved, failed = save_all(
        db.session,
        results_from_model(model),
        datetime.now(UTC),
        current_app.config["CHECKPOINT_BATCH_SIZE"],
    )
    if failed:
        raise RuntimeError(f"{failed} recommendations could not be saved; see the log")
    log.info(
        "replayed %d rows of %s into %s: %d containers saved", len(rows), path, workload, saved
    )
    return len(rows), saved


# --- `rightsizer demo`: the whole service against the built-in simulated cluster ------------------


@dataclass
class DemoSettings:
    port: int = 8443
    sim_port: int = 6443
    speed: float = 1.0
    workdir: Path = field(default_factory=Path.cwd)


def demo_environment(sim_url: str, kubeconfig: str, certs: Any, s: DemoSettings) -> dict[str, str]:
    """rightsizer's settings for the demo: as a Helm install would set them, plus open reads."""
    return {
        "RIGHTSIZER_KUBECONFIG": kubeconfig,
        "RIGHTSIZER_PROMETHEUS_URL": sim_url,  # 8 days of history at start
        "RIGHTSIZER_NAMESPACE": DEMO_NAMESPACE,
        "RIGHTSIZER_JOBS": "true",
        "RIGHTSIZER_BIND": f"127.0.0.1:{s.port}",
        # No cluster DNS: the updater probes the webhook where the simulator routes its calls.
        "RIGHTSIZER_WEBHOOK_PROBE_ADDRESS": f"127.0.0.1:{s.port}",
        "RIGHTSIZER_TLS_CERT_FILE": str(certs.cert),
        "RIGHTSIZER_TLS_KEY_FILE": str(certs.key),
        "RIGHTSIZER_CERT_DIR": str(certs.directory),
        "RIGHTSIZER_WEBHOOK_REGISTER": "true",
        "RIGHTSIZER_PUBLIC_READS": "true",  # the demo is for looking around; writes need a token
        "RIGHTSIZER_ACCESS_LOG": "false",
    }


def requests_table(items: list[dict[str, Any]]) -> str:
    rows = [
        ("WORKLOAD", "CONTAINER", "CPU NOW", "CPU RECOMMENDED", "MEMORY NOW", "MEMORY RECOMMENDED")
    ]
    for item in items:
        for c in item["containers"]:
            now = c.get("currentRequests") or {}
            rows.append(
                (
                    f"{item['namespace']}/{item['kind']}/{item['name']}",
                    c["name"],
                    str(now.get("cpu", "-")),
                    c["target"]["cpu"],
                    _mib(now.get("memory")),
                    _mib(c["target"]["memory"]),
                )
            )
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return "\n".join("  ".join(v.ljust(w) for v, w in zip(r, widths, strict=True)) for r in rows)


def _mib(value: Any) -> str:
    if value is None:
        return "-"
    try:
        return f"{int(value) / 2**20:.0f}Mi"
    except ValueError:
        return str(value)
