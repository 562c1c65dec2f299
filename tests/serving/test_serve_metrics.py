"""`rightsizer serve` with several gunicorn workers: every scrape of /metrics counts the requests
of all workers (prometheus_client's multiprocess mode, set up by serve itself)."""

from __future__ import annotations

import os
import re
from pathlib import Path

import pytest
import requests
from prometheus_client.parser import text_string_to_metric_families

from app.serving.prepare import metrics_directory
from tests.support.processes import AppProcess


def healthz_count(text: str) -> float:
    return sum(
        s.value
        for family in text_string_to_metric_families(text)
        for s in family.samples
        if s.name == "rightsizer_http_requests_total" and s.labels.get("route") == "/healthz"
    )


def worker_pids(master: int) -> list[int]:
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return [int(p) for p in children]


@pytest.mark.skipif(not Path("/proc/self/task").exists(), reason="reads /proc")
def test_every_scrape_counts_the_requests_of_every_worker(tmp_path: Path) -> None:
    app = AppProcess(
        "",
        f"sqlite:///{tmp_path}/rs.db",
        tmp_path / "serve.log",
        RIGHTSIZER_WORKERS="3",
        RIGHTSIZER_JOBS="false",
    )
    try:
        app.wait_ready()
        found = re.search(r"metrics of all workers merged through (\S+)", app.log())
        assert found, app.log()
        merged = Path(found.group(1))
        workers = worker_pids(app.proc.pid)
        assert len(workers) == 3
        for pid in workers:
            environ = Path(f"/proc/{pid}/environ").read_bytes().split(b"\0")
            assert f"PROMETHEUS_MULTIPROC_DIR={merged}".encode() in environ

        sent = 60
        for _ in range(sent):  # a new connection each: the workers share them out
            assert requests.get(f"{app.url}/healthz", timeout=5).status_code == 200
        answered_by = {int(m) for m in re.findall(r"_(\d+)\.db", " ".join(os.listdir(merged)))}
        assert answered_by <= set(workers)
        for _ in range(6):  # whichever worker answers the scrape sees all the requests
            text = requests.get(f"{app.url}/metrics", timeout=5).text
            assert healthz_count(text) == sent
    finally:
        app.stop()


def test_a_given_directory_is_emptied_of_an_earlier_runs_files(tmp_path: Path) -> None:
    given = tmp_path / "prom"
    given.mkdir()
    (given / "counter_123.db").write_bytes(b"old")
    (given / "keep.txt").write_text("not a metrics file")
    assert metrics_directory({"PROMETHEUS_MULTIPROC_DIR": str(given)}) == given
    assert sorted(p.name for p in given.iterdir()) == ["keep.txt"]

    env: dict[str, str] = {}
    made = metrics_directory(env)
    assert made.is_dir() and not list(made.iterdir())
    assert env == {"PROMETHEUS_MULTIPROC_DIR": str(made)}
