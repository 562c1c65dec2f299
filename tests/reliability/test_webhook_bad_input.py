"""POST /mutate under thousands of generated bodies (tests/support/bodies.py): never a 5xx,
never an internal error; malformed bodies get 400 or 413 with a JSON error; the valid reviews
interleaved keep getting the right patch."""

from __future__ import annotations

import base64
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
import requests
from flask import Flask
from flask.testing import FlaskClient
from prometheus_client import REGISTRY

from tests.support.bodies import Body, Generator, good_pod
from tests.support.pods import amounts, apply_strictly
from tests.support.reviews import MI, add_policy, add_recommendation, refresh

COUNT = 3000


def metric(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def check_answer(body: Body, status: int, doc: Any) -> None:
    """What any answer to `body` must satisfy; raises with the body's kind on failure."""
    where = f"{body.kind} body {body.data[:120]!r}"
    assert status < 500, where
    assert isinstance(doc, dict), where
    if body.kind == "oversized":
        assert status == 413 and doc["error"] == "RequestEntityTooLarge", where
        return
    if body.kind == "valid":
        assert status == 200, (where, doc)
        response = doc["response"]
        assert response["uid"] == body.uid and response["allowed"] is True
        assert response["patchType"] == "JSONPatch", (where, doc)
        patched = apply_strictly(good_pod(), json.loads(base64.b64decode(response["patch"])))
        c = patched["spec"]["containers"][0]
        assert amounts(c, "requests") == {"cpu": 250, "memory": 256 * MI}, where
        assert amounts(c, "limits") == {"cpu": 500, "memory": 256 * MI}, where
        return
    assert status in (200, 400, 413), where
    if status == 200:
        assert doc["kind"] == "AdmissionReview" and doc["response"]["allowed"] is True, where
    else:
        assert set(doc) == {"error", "message"} and doc["message"], where


def test_generated_bodies_never_get_a_5xx_and_valid_ones_keep_their_patch(
    app: Flask, anon: FlaskClient
) -> None:
    add_policy()
    add_recommendation()
    refresh(app)
    errors_before = metric("rightsizer_webhook_failed_open_total", reason="internal_error")
    patched_before = metric("rightsizer_webhook_reviews_total", outcome="patched")
    statuses: Counter[tuple[str, int]] = Counter()
    bodies = Generator(seed=10).bodies(COUNT)
    for body in bodies:
        resp = anon.post("/mutate", data=body.data, content_type="application/json")
        check_answer(body, resp.status_code, resp.get_json(silent=True))
        statuses[(body.kind, resp.status_code)] += 1
    valid = sum(1 for b in bodies if b.kind == "valid")
    assert statuses[("valid", 200)] == valid == COUNT // 10
    assert statuses[("oversized", 413)] == sum(1 for b in bodies if b.kind == "oversized") > 0
    assert statuses[("random_bytes", 400)] > 0 and statuses[("truncated", 400)] > 0
    # Every mutation class reached the server, and none made the handler fail open on a bug.
    assert {k for k, _ in statuses} >= set(Generator.MUTATIONS)
    assert metric("rightsizer_webhook_failed_open_total", reason="internal_error") == errors_before
    assert metric("rightsizer_webhook_reviews_total", outcome="patched") >= patched_before + valid
    assert anon.get("/healthz").status_code == 200


SERVER_COUNT = 10_000


def rss_kib(pid: int) -> int:
    """Resident set size of a process, from /proc (Linux)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    raise AssertionError(f"no VmRSS for {pid}")


def worker_pids(master: int) -> list[int]:
    """gunicorn's workers: the children of its master process."""
    out: list[int] = []
    for task in Path(f"/proc/{master}/task").iterdir():
        out += [int(p) for p in (task / "children").read_text().split()]
    return out


@pytest.mark.e2e
def test_a_real_server_over_tls_takes_10000_bad_bodies_with_stable_memory(
    tmp_path: Path,
) -> None:
    """`rightsizer serve` (gunicorn, TLS, one worker) answers 10,000 generated bodies on one
    keep-alive connection: no 5xx, the same worker process throughout (none crashed and was
    replaced), its memory flat once warm, and every valid review interleaved patched right."""
    from flask_migrate import upgrade

    from app import create_app
    from app.serving.certs import ensure
    from tests.support.processes import AppProcess

    db_url = f"sqlite:///{tmp_path}/rightsizer.db"
    app = create_app({"SQLALCHEMY_DATABASE_URI": db_url, "JOBS": False})
    with app.app_context():
        upgrade()
        add_policy()
        add_recommendation()
        from app.store.extensions import db

        db.engine.dispose()
    paths, _ = ensure(tmp_path / "certs", ["localhost"])
    proc = AppProcess(
        str(tmp_path / "no-kubeconfig"),
        db_url,
        tmp_path / "app.log",
        ca_file=str(paths.ca),
        RIGHTSIZER_JOBS="false",
        RIGHTSIZER_TLS_CERT_FILE=paths.cert,
        RIGHTSIZER_TLS_KEY_FILE=paths.key,
        RIGHTSIZER_WEBHOOK_CACHE_REFRESH_SECONDS=1,
    )
    try:
        proc.wait_ready()
        [worker] = worker_pids(proc.proc.pid)
        session = requests.Session()  # verify= per call: REQUESTS_CA_BUNDLE beats Session.verify
        statuses: Counter[tuple[str, int]] = Counter()
        rss: dict[int, int] = {}
        generator = Generator(seed=11)
        for n in range(SERVER_COUNT // 1000):
            for body in generator.bodies(1000):
                if body.kind == "oversized":
                    # Answered 413 before the body is read, then the connection is closed: a
                    # client still sending may see the close instead. Either way no pod waits.
                    try:  # on a connection of its own: the server closes it after the 413
                        resp = requests.post(
                            f"{proc.url}/mutate", data=body.data, timeout=10, verify=proc.verify
                        )
                    except requests.ConnectionError:
                        statuses[("oversized", 413)] += 1
                        continue
                    assert resp.status_code == 413
                    statuses[("oversized", 413)] += 1
                    continue
                resp = session.post(
                    f"{proc.url}/mutate",
                    data=body.data,
                    headers={"Content-Type": "application/json"},
                    timeout=10,
                    verify=proc.verify,
                )
                check_answer(body, resp.status_code, resp.json())
                statuses[(body.kind, resp.status_code)] += 1
            rss[(n + 1) * 1000] = rss_kib(worker)
        assert sum(statuses.values()) == SERVER_COUNT
        assert statuses[("valid", 200)] == SERVER_COUNT // 10
        assert statuses[("oversized", 413)] == SERVER_COUNT // 1000 * 2
        assert {k for k, _ in statuses} >= set(Generator.MUTATIONS)
        assert not any(status >= 500 for _, status in statuses)
        assert proc.proc.poll() is None and worker_pids(proc.proc.pid) == [worker]
        # Memory: whatever the first 2,000 bodies took (allocator pools, the largest body seen)
        # is not leaked per request: the last 8,000 add less than 1 KiB per request.
        growth = rss[SERVER_COUNT] - rss[2000]
        assert growth < 8000, rss
        assert session.get(f"{proc.url}/healthz", timeout=5, verify=proc.verify).status_code == 200
        log = proc.log()
        assert "Traceback" not in log and "WORKER TIMEOUT" not in log, log[-2000:]
    finally:
        proc.stop()


def _with(change: Any) -> dict[str, Any]:
    from tests.support.bodies import review

    doc = review(good_pod(), "regression")
    change(doc["request"], doc["request"]["object"])
    return doc


def _set_request(key: str, value: Any) -> Any:
    return lambda req, obj: req.__setitem__(key, value)


def _set_meta(key: str, value: Any) -> Any:
    return lambda req, obj: obj["metadata"].__setitem__(key, value)


def _set_cpu(value: Any) -> Any:
    return lambda req, obj: obj["spec"]["containers"][0]["resources"]["requests"].update(cpu=value)


def _set_owner(key: str, value: Any) -> Any:
    return lambda req, obj: obj["metadata"]["ownerReferences"][0].__setitem__(key, value)


def _namespace_in_pod_only(value: Any) -> Any:
    def change(req: dict[str, Any], obj: dict[str, Any]) -> None:
        req["namespace"] = None
        obj["metadata"]["namespace"] = value

    return change


@pytest.mark.parametrize(
    "change",
    [
        _set_cpu("NaN"),
        _set_cpu("Infinity"),
        _set_cpu("-inf"),
        _set_meta("labels", 1.5),
        _set_meta("labels", {"pod-template-hash": ["5d9c7b8f4"]}),
        _set_meta("ownerReferences", 7),
        _set_meta("ownerReferences", "web"),
        _set_owner("name", {"a": 1}),
        _set_owner("kind", ["ReplicaSet"]),
        _namespace_in_pod_only(["shop"]),
    ],
    ids=[
        "cpu-NaN",
        "cpu-Infinity",
        "cpu-minus-inf",
        "labels-float",
        "hash-list",
        "owners-int",
        "owners-str",
        "owner-name-dict",
        "owner-kind-list",
        "namespace-list",
    ],
)
def test_found_by_the_generator_wrong_types_are_not_internal_errors(
    app: Flask, anon: FlaskClient, change: Any
) -> None:
    """Each of these made the handler raise (a traceback per request, counted as internal_error)
    before owners and quantities treated wrong types as absent or invalid."""
    add_policy()
    add_recommendation()
    refresh(app)
    before = metric("rightsizer_webhook_failed_open_total", reason="internal_error")
    resp = anon.post("/mutate", data=json.dumps(_with(change)), content_type="application/json")
    assert resp.status_code in (200, 400)
    assert metric("rightsizer_webhook_failed_open_total", reason="internal_error") == before
