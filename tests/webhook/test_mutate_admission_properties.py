"""Property: whatever the pod, LimitRange, policy and recommendation, a pod that `POST /mutate`
patches is one kube-apiserver admits, and a pod it leaves unchanged for lack of a valid sizing
says why.

Each generated case goes the way a pod creation goes through kube-apiserver, with the simulated
cluster's own admission code (each part cites the Kubernetes source it follows):
API defaulting (`apiserver.podutil.default_resource_requests`) and LimitRanger's defaults
(`apiserver.limitranger.apply_defaults`), then the AdmissionReview through the Flask test
client to `/mutate`, the JSON Patch applied strictly, API defaulting again, pod validation
(`apiserver.validation.validate_pod`: requests <= limits, pod-level resources) and
LimitRanger's validation (`apiserver.limitranger.validate`: Container and Pod min, max and
maxLimitRequestRatio). The webhook's policies and recommendations are set in its cache and its
LimitRanges are the generated object parsed as the LimitRange informer parses it; the rest is the
real request path. 2,000 seeded cases per run.
"""

from __future__ import annotations

import base64
import copy
import json
import time
from pathlib import Path
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from app.core.policy import Policy
from app.core.quantity import amount as quantity_amount
from app.core.sizing.limitrange import parse_limit_range
from app.core.workload_key import WorkloadKey
from app.simulator.apiserver import limitranger, podutil, validation
from app.simulator.apiserver.errors import ApiError
from app.store.snapshot import build_snapshot
from app.webhook import webhook_of
from tests.support.generators import CPU, MEMORY, lr_objects, lr_pods, policies
from tests.support.pods import apply_strictly, rec, sized_containers

WORKLOAD = WorkloadKey("shop", "Deployment", "web")
OUTCOMES: dict[str, int] = {}


def admit(pod: dict[str, Any], limit_range: dict[str, Any]) -> None:
    """What kube-apiserver does to a pod after the mutating webhooks: raises ApiError (422/403)."""
    podutil.default_resource_requests(pod)
    meta = pod["metadata"]
    meta.setdefault("name", meta["generateName"] + "x7k2q")  # names are generated before validation
    validation.validate_pod(pod)
    limitranger.validate(pod, [limit_range])


def review(pod: dict[str, Any]) -> dict[str, Any]:
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": "705ab4f5-6393-11e8-b7cc-42010a800002",
            "kind": gvk,
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "namespace": "shop",
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
            "object": pod,
            "dryRun": False,
        },
    }


@pytest.fixture
def database_url(tmp_path: Path) -> str:
    """SQLite only: the webhook answers from its cache here, the database plays no part."""
    return f"sqlite:///{tmp_path / 'rightsizer.db'}"


@pytest.fixture
def hook_client(app: Flask, client: FlaskClient) -> FlaskClient:
    webhook_of(app).autostart = False  # the cache holds what each case sets, nothing else
    return client


@settings(
    max_examples=2000,
    deadline=None,
    derandomize=True,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.filter_too_much,
        HealthCheck.function_scoped_fixture,  # the app is the same for every case, by design
    ],
)
@given(p=lr_pods(), obj=lr_objects(), pol=policies(), data=st.data())
def test_a_pod_the_webhook_patches_is_admitted_and_one_it_leaves_says_why(
    app: Flask,
    hook_client: FlaskClient,
    p: dict[str, Any],
    obj: dict[str, Any],
    pol: Policy,
    data: st.DataObject,
) -> None:
    sent = copy.deepcopy(p)  # what the mutating webhooks are sent: defaulted by the API server
    podutil.default_resource_requests(sent)
    limitranger.apply_defaults(sent, [obj])
    names = [c["name"] for c in sized_containers(sent)]
    targets = data.draw(st.dictionaries(st.sampled_from(names), st.tuples(CPU, MEMORY), min_size=1))
    hook = webhook_of(app)
    hook.cache.snapshot = build_snapshot(
        [pol],
        [(WORKLOAD, name, rec(cpu, mem), ()) for name, (cpu, mem) in targets.items()],
        time.monotonic(),
    )
    items = parse_limit_range(obj, quantity_amount)
    hook.limit_ranges = lambda namespace: items

    r = hook_client.post("/mutate", data=json.dumps(review(sent)), content_type="application/json")
    assert r.status_code == 200, r.get_json()
    response = r.get_json()["response"]
    assert response["allowed"] is True
    note = (response.get("auditAnnotations") or {}).get("left-unchanged")
    if "patch" in response:
        assert note is None
        patched = apply_strictly(sent, json.loads(base64.b64decode(response["patch"])))
        try:
            admit(patched, obj)
        except ApiError as e:
            pytest.fail(f"the webhook produced a pod kube-apiserver refuses: {e.message}")
        outcome = "patched"
    elif note is not None:
        # Left as the user wrote it because no sizing passes; the answer names kube's refusal.
        assert note.startswith("unfit: ") and len(note) > len("unfit: ")
        outcome = "unfit"
    else:
        outcome = "unchanged"
    OUTCOMES[outcome] = OUTCOMES.get(outcome, 0) + 1


def test_the_property_sees_every_outcome(app: Flask, hook_client: FlaskClient) -> None:
    """Not vacuous: the generated cases are mostly patched, and some are left unfit."""
    if not OUTCOMES:  # run alone: run the property first
        test_a_pod_the_webhook_patches_is_admitted_and_one_it_leaves_says_why(app, hook_client)
    total = sum(OUTCOMES.values())
    assert OUTCOMES.get("patched", 0) > 0.3 * total, OUTCOMES
    assert OUTCOMES.get("unfit", 0) > 0, OUTCOMES
