"""A seeded generator of request bodies for POST /mutate: mostly broken, some valid.

Each body comes with what a correct server must answer: `valid` bodies are complete pod
AdmissionReviews (the test knows their patch), `oversized` ones exceed 3 MiB (413); every other
body may be answered 400 (not an AdmissionReview for a pod, or a pod kube-apiserver would never
send) or 200 (still a pod review after the mutation), never 5xx.
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from app.webhook.review import MAX_BODY_BYTES
from tests.support.pods import container, pod

UNICODE = ["🙂", "Ω", "名前", "\u202e", "\x00", "a\u0301", "\ud7ff", "ß", "İ", "\ufeff"]
ODD_VALUES: list[Any] = [
    None,
    0,
    -1,
    1.5e308,
    -(2**63),
    2**200,
    "",
    "x" * 5000,
    "-5",
    "1e999",
    "NaN",
    "🙂",
    [],
    {},
    [None],
    {"": None},
    True,
    False,
    [[[[[]]]]],
]


@dataclass(frozen=True)
class Body:
    kind: str  # valid, oversized, or the name of the mutation
    data: bytes
    uid: str | None = None  # for valid bodies: the uid the answer must echo


def review(obj: Any, uid: str, namespace: Any = "shop") -> dict[str, Any]:
    gvk = {"group": "", "version": "v1", "kind": "Pod"}
    return {
        "apiVersion": "admission.k8s.io/v1",
        "kind": "AdmissionReview",
        "request": {
            "uid": uid,
            "kind": gvk,
            "resource": {"group": "", "version": "v1", "resource": "pods"},
            "requestKind": gvk,
            "namespace": namespace,
            "operation": "CREATE",
            "userInfo": {"username": "system:serviceaccount:kube-system:replicaset-controller"},
            "object": obj,
            "dryRun": False,
        },
    }


def good_pod() -> dict[str, Any]:
    return pod(container("app", {"cpu": "1", "memory": "1Gi"}, {"cpu": "2", "memory": "1Gi"}))


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield prefix
    if isinstance(doc, dict):
        for k, v in doc.items():
            yield from _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            yield from _paths(v, (*prefix, i))


def _set(doc: Any, path: tuple[Any, ...], value: Any, delete: bool = False) -> Any:
    if not path:
        return value
    parent = doc
    for p in path[:-1]:
        parent = parent[p]
    if delete:
        del parent[path[-1]]
    else:
        parent[path[-1]] = value
    return doc


class Generator:
    def __init__(self, seed: int) -> None:
        self.rnd = random.Random(seed)
        self.n = 0

    def valid(self) -> Body:
        self.n += 1
        uid = f"valid-{self.n}"
        return Body("valid", json.dumps(review(good_pod(), uid)).encode(), uid)

    def _base(self) -> dict[str, Any]:
        self.n += 1
        return review(good_pod(), f"fuzz-{self.n}")

    def random_bytes(self) -> bytes:
        return self.rnd.randbytes(self.rnd.randint(0, 2000))

    def truncated(self) -> bytes:
        data = json.dumps(self._base()).encode()
        return data[: self.rnd.randint(0, len(data) - 1)]

    def wrong_type(self) -> bytes:
        doc = self._base()
        paths = list(_paths(doc))
        for _ in range(self.rnd.randint(1, 3)):
            path = self.rnd.choice(paths)
            doc = _set(doc, path, copy.deepcopy(self.rnd.choice(ODD_VALUES)))
            paths = list(_paths(doc))
        return json.dumps(doc).encode()

    def missing_field(self) -> bytes:
        doc = self._base()
        paths = [p for p in _paths(doc) if p and isinstance(p[-1], str)]
        for _ in range(self.rnd.randint(1, 3)):
            if not paths:
                break
            doc = _set(doc, self.rnd.choice(paths), None, delete=True)
            paths = [p for p in _paths(doc) if p and isinstance(p[-1], str)]
        return json.dumps(doc).encode()

    def unicode_names(self) -> bytes:
        def word() -> str:
            return "".join(self.rnd.choice(UNICODE) for _ in range(self.rnd.randint(1, 8)))

        doc = self._base()
        obj = doc["request"]["object"]
        where = self.rnd.choice(["ns", "container", "owner", "label", "annotation", "quantity"])
        if where == "ns":
            doc["request"]["namespace"] = word()
        elif where == "container":
            obj["spec"]["containers"][0]["name"] = word()
        elif where == "owner":
            obj["metadata"]["ownerReferences"][0]["name"] = word()
        elif where == "label":
            obj["metadata"]["labels"][word()] = word()
        elif where == "annotation":
            obj["metadata"]["annotations"] = {"rightsizer.io/updates": word()}
        else:
            obj["spec"]["containers"][0]["resources"]["requests"]["cpu"] = word()
        return json.dumps(doc, ensure_ascii=self.rnd.random() < 0.5).encode()

    def huge_array(self) -> bytes:
        doc = self._base()
        n = 20000 if self.rnd.random() < 0.05 else self.rnd.choice([200, 2000])
        what = self.rnd.choice(["containers", "owners", "items"])
        obj = doc["request"]["object"]
        if what == "containers":
            c = obj["spec"]["containers"][0]
            obj["spec"]["containers"] = [{**c, "name": f"c{i}"} for i in range(n // 10)]
        elif what == "owners":
            ref = obj["metadata"]["ownerReferences"][0]
            obj["metadata"]["ownerReferences"] = [ref] * (n // 4)
        else:
            obj["spec"]["volumes"] = [{"name": f"v{i}", "emptyDir": {}} for i in range(n)]
        return json.dumps(doc).encode()

    def deep_nesting(self) -> bytes:
        depth = self.rnd.choice([50, 400, 100_000])
        doc = self._base()
        inner: Any = "x"
        if depth <= 400:
            for _ in range(depth):
                inner = {"a": inner} if self.rnd.random() < 0.5 else [inner]
            _set(doc, self.rnd.choice(list(_paths(doc))), inner)
            return json.dumps(doc).encode()
        return b"[" * depth + b"]" * self.rnd.choice([0, depth])  # beyond any recursion limit

    def oversized(self) -> Body:
        doc = self._base()
        doc["request"]["object"]["metadata"]["annotations"] = {"x": "y" * MAX_BODY_BYTES}
        return Body("oversized", json.dumps(doc).encode())

    MUTATIONS = (
        "random_bytes",
        "truncated",
        "wrong_type",
        "missing_field",
        "unicode_names",
        "huge_array",
        "deep_nesting",
    )

    def bodies(self, count: int, valid_every: int = 10, oversized_every: int = 500) -> list[Body]:
        out: list[Body] = []
        for i in range(count):
            if i % valid_every == 0:
                out.append(self.valid())
            elif i % oversized_every == 1:
                out.append(self.oversized())
            else:
                kind = self.MUTATIONS[i % len(self.MUTATIONS)]
                data = getattr(self, kind)()
                out.append(Body("oversized" if len(data) > MAX_BODY_BYTES else kind, data))
        return out
