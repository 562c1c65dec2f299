"""AdmissionReview on the wire (admission.k8s.io/v1 and v1beta1): reading one, answering one.

Only what the webhook uses is typed; the answer always echoes the request's apiVersion, kind and
uid, as kube-apiserver requires (a v1beta1 request gets a v1beta1 answer).
"""

from __future__ import annotations

import base64
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict

import orjson

API_VERSIONS = ("admission.k8s.io/v1", "admission.k8s.io/v1beta1")
MAX_BODY_BYTES = 3 * 1024 * 1024  # kube-apiserver's own limit for an object is 3 MiB


class ReviewResponse(TypedDict):
    uid: str
    allowed: bool
    patchType: NotRequired[Literal["JSONPatch"]]
    patch: NotRequired[str]
    auditAnnotations: NotRequired[dict[str, str]]


class AdmissionReviewAnswer(TypedDict):
    apiVersion: str
    kind: Literal["AdmissionReview"]
    response: ReviewResponse


class ReviewInvalid(ValueError):
    """Not an AdmissionReview we can answer: HTTP 400."""


@dataclass(frozen=True)
class PodReview:
    api_version: str
    uid: str
    operation: str
    namespace: str | None
    pod: dict[str, Any] | None  # the object; None when the operation carries none
    dry_run: bool


def _is_pod(request: dict[str, Any]) -> bool:
    resource, kind = request.get("resource"), request.get("kind")
    if isinstance(resource, dict) and resource.get("resource") is not None:
        return resource.get("group", "") == "" and resource.get("resource") == "pods"
    if isinstance(kind, dict) and kind.get("kind") is not None:
        return kind.get("group", "") == "" and kind.get("kind") == "Pod"
    obj = request.get("object")
    return isinstance(obj, dict) and obj.get("kind") == "Pod"


def parse_review(body: bytes) -> PodReview:
    """Raises ReviewInvalid saying what is wrong."""
    try:
        doc = json.loads(body)
    except (ValueError, RecursionError):  # UnicodeDecodeError is a ValueError
        raise ReviewInvalid("the body is not JSON") from None
    if not isinstance(doc, dict):
        raise ReviewInvalid("an AdmissionReview must be a JSON object")
    if doc.get("kind") != "AdmissionReview":
        raise ReviewInvalid("kind must be AdmissionReview")
    version = doc.get("apiVersion")
    if version not in API_VERSIONS:
        raise ReviewInvalid(f"apiVersion must be one of {', '.join(API_VERSIONS)}")
    request = doc.get("request")
    if not isinstance(request, dict):
        raise ReviewInvalid("request is missing")
    uid = request.get("uid")
    if not isinstance(uid, str) or not uid:
        raise ReviewInvalid("request.uid is missing")
    if not _is_pod(request) or request.get("subResource"):
        raise ReviewInvalid("this webhook admits pods only")
    operation = request.get("operation")
    if not isinstance(operation, str):
        raise ReviewInvalid("request.operation is missing")
    obj = request.get("object")
    if operation == "CREATE" and not isinstance(obj, dict):
        raise ReviewInvalid("request.object must be the pod")
    namespace = request.get("namespace")
    if namespace is not None and not isinstance(namespace, str):
        raise ReviewInvalid("request.namespace must be a string")
    return PodReview(
        api_version=version,
        uid=uid,
        operation=operation,
        namespace=namespace or None,
        pod=obj if isinstance(obj, dict) else None,
        dry_run=request.get("dryRun") is True,
    )


def answer(
    api_version: str,
    uid: str,
    patch: list[dict[str, Any]] | None = None,
    audit: dict[str, str] | None = None,
    *,
    encoded: str | None = None,
) -> AdmissionReviewAnswer:
    """Always allowed: rightsizer never refuses a pod. A patch only when it is not empty.

    `audit` becomes the response's `auditAnnotations`: kube-apiserver writes them, prefixed with
    the webhook's name, into the audit event of the pod's creation. `encoded`: `patch` as
    `encode_patch` gives it, when the caller has it already."""
    response: ReviewResponse = {"uid": uid, "allowed": True}
    if audit:
        response["auditAnnotations"] = audit
    if patch:
        response["patchType"] = "JSONPatch"
        response["patch"] = encoded if encoded is not None else encode_patch(patch)
    return {"apiVersion": api_version, "kind": "AdmissionReview", "response": response}


def dump(doc: Mapping[str, Any]) -> bytes:
    """An answer's JSON text, compact. orjson writes it in a tenth of the time of json.dumps;
    what orjson refuses (a string with a lone surrogate, which json.loads lets through from a
    `\\ud800` escape in a request's uid) is written by json.dumps, escaped."""
    try:
        return orjson.dumps(doc)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return json.dumps(doc, separators=(",", ":")).encode()


def encode_patch(patch: list[dict[str, Any]]) -> str:
    """The response's `patch`: the JSON Patch, base64-encoded."""
    return base64.b64encode(json.dumps(patch, separators=(",", ":")).encode()).decode("ascii")
