"""A `rightsizer serve` that has just started sizes the first pods it is asked about: a review made
while a worker's cache makes its first load waits for it, not only the review that started the
load (app.webhook.cache).

Failed before: measured with 16 reviews sent as a new server came up, 15 allowed their pods
unsized ("webhook cache empty"): only each worker's first review waited for the first load."""

from __future__ import annotations

import json
import socket
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import requests
from flask import Flask

from tests.support.processes import AppProcess
from tests.support.reviews import add_policy, add_recommendation, app_pod, review

REVIEWS = 16


def wait_for_port(port: int, proc: AppProcess, timeout: float = 60.0) -> None:
    """Until the server's socket is listening (gunicorn's master binds it before any worker
    has loaded the app): the reviews then reach workers as they boot."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.proc.poll() is None, proc.log()
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.02)
    pytest.fail(f"rightsizer did not listen within {timeout}s:\n{proc.log()}")


def test_the_first_reviews_of_a_new_server_are_all_sized(
    app: Flask, database_url: str, tmp_path: Path
) -> None:
    add_policy()
    add_recommendation()
    served = AppProcess(
        "",
        database_url,
        tmp_path / "serve.log",
        RIGHTSIZER_WORKERS="2",
        RIGHTSIZER_THREADS="4",
        RIGHTSIZER_JOBS="false",
        RIGHTSIZER_WEBHOOK_REGISTER="false",
    )
    body = json.dumps(review(app_pod()))

    def post(_: int) -> dict[str, object]:
        answer = requests.post(
            f"{served.url}/mutate",
            data=body,
            headers={"Content-Type": "application/json"},
            timeout=30,
        )
        assert answer.status_code == 200
        response: dict[str, object] = answer.json()["response"]
        return response

    try:
        wait_for_port(served.port, served)
        with ThreadPoolExecutor(REVIEWS) as pool:
            answers = list(pool.map(post, range(REVIEWS)))
    finally:
        served.stop()
    assert all(a["allowed"] for a in answers)
    unsized = [a for a in answers if "patch" not in a]
    assert not unsized, f"{len(unsized)} of {REVIEWS} pods allowed unsized:\n{served.log()}"
    assert "webhook cache empty" not in served.log()
