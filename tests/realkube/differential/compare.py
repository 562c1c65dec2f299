"""What of an answer is compared, and the list of known divergences.

An answer is reduced to a view: the status code; for an error, the Status's reason, message,
details (kind, name) and causes (reason, field, message); for an object, its metadata (name,
namespace, labels, annotations, generation, finalizers, owners), its spec (or the top-level
fields of kinds that have none: Events, MutatingWebhookConfigurations) and the status fields
rightsizer reads; for a list, the kind and the names of its items; for a Table, the column
names and the cells of each row; for a watch, each event's type and object (or error).

What legitimately differs is normalised away (NORMALISED, each with its reason): identities and
times the server assigns, what the ServiceAccount admission and controllers of a real cluster
add, numbers that are resourceVersions. Everything else that differs is a divergence, and each
must be listed in app/simulator/README.md's table between the `differential-divergences`
markers, as `| steps | field | why |` (steps and field are fnmatch patterns in backticks).
"""

from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.realkube.differential.backends import Outcome
from tests.realkube.differential.corpus import Step

README = Path(__file__).resolve().parents[3] / "app" / "simulator" / "README.md"
START, END = "<!-- differential-divergences:start -->", "<!-- differential-divergences:end -->"

# Normalised away, with why (field patterns over the flattened view).
NORMALISED: dict[str, str] = {
    "*.volumes": "the ServiceAccount admission plugin mounts a token volume (no tokens here)",
    "*.volumeMounts": "the same token volume's mount in each container",
    "*.nodeName": "which node the scheduler picked (different nodes in each cluster)",
    "*.serviceAccount": "the deprecated alias of serviceAccountName, set by the real conversion",
    "metadata.annotations.deployment.kubernetes.io/*": "written by the Deployment controller "
    "whenever it gets to it (timing)",
}
# Not in the view at all: uid, resourceVersion, creationTimestamp, managedFields and every other
# status field (what each cluster's kubelets and controllers wrote, and when).

# Table columns not compared: times (when each cluster did it) and where pods landed.
_AGE_COLUMNS = {"Age", "Duration", "Created At", "Node", "IP"}
_VERSION_NUMBERS = re.compile(r"(resource version: |current: |resourceVersion=?)\d+")


@dataclass(frozen=True)
class Divergence:
    step: str
    field: str
    simulated: Any
    real: Any

    def __str__(self) -> str:
        return f"{self.step} {self.field}: simulated {self.simulated!r}, real {self.real!r}"


def _message(text: Any) -> Any:
    if not isinstance(text, str):
        return text
    return _VERSION_NUMBERS.sub(r"\1N", text)


def _status(body: dict[str, Any]) -> dict[str, Any]:
    details = body.get("details") or {}
    causes = [
        {
            "reason": c.get("reason", ""),
            "field": c.get("field", ""),
            "message": _message(c.get("message", "")),
        }
        for c in details.get("causes") or []
    ]
    return {
        "status": body.get("status"),
        "reason": body.get("reason"),
        "message": _message(body.get("message")),
        "details": {"kind": details.get("kind"), "name": details.get("name"), "causes": causes},
    }


def _meta(meta: dict[str, Any]) -> dict[str, Any]:
    annotations = {
        k: v
        for k, v in (meta.get("annotations") or {}).items()
        if k != "kubectl.kubernetes.io/last-applied-configuration"
    }
    return {
        "name": meta.get("name"),
        "namespace": meta.get("namespace"),
        "labels": meta.get("labels") or {},
        "annotations": annotations,
        "generation": meta.get("generation"),
        "finalizers": meta.get("finalizers") or [],
        "owners": [(o.get("kind"), o.get("name")) for o in meta.get("ownerReferences") or []],
    }


_STATUS_READ = {
    "Pod": ("qosClass",),
    "PodDisruptionBudget": (
        "currentHealthy",
        "desiredHealthy",
        "disruptionsAllowed",
        "expectedPods",
    ),
    "Node": ("capacity", "allocatable"),
    "Namespace": ("phase",),
}
_TOP_LEVEL = {
    "Event": (
        "involvedObject",
        "reason",
        "message",
        "type",
        "count",
        "source",
        "firstTimestamp",
        "lastTimestamp",
    ),
    "MutatingWebhookConfiguration": ("webhooks",),
}


def _object(body: dict[str, Any]) -> dict[str, Any]:
    kind = body.get("kind", "")
    out: dict[str, Any] = {"kind": kind, "apiVersion": body.get("apiVersion")}
    out["metadata"] = _meta(body.get("metadata") or {})
    if "spec" in body:
        out["spec"] = body["spec"]
    for key in _TOP_LEVEL.get(kind, ()):
        out[key] = body.get(key)
    status = body.get("status") or {}
    if isinstance(status, dict):
        out["status"] = {k: status.get(k) for k in _STATUS_READ.get(kind, ())}
    return out


def _table(body: dict[str, Any]) -> dict[str, Any]:
    columns = [c.get("name") for c in body.get("columnDefinitions") or []]
    keep = [i for i, c in enumerate(columns) if c not in _AGE_COLUMNS]
    rows = sorted(
        ([row.get("cells", [])[i] for i in keep] for row in body.get("rows") or []),
        key=lambda r: str(r[:1]),
    )
    return {"kind": "Table", "columns": columns, "rows": rows}


def _event(event: dict[str, Any]) -> dict[str, Any]:
    obj = event.get("object") or {}
    if event.get("type") == "ERROR":
        return {"type": "ERROR", "code": obj.get("code"), **_status(obj)}
    if event.get("type") == "BOOKMARK":
        return {"type": "BOOKMARK"}
    return {"type": event.get("type"), "name": (obj.get("metadata") or {}).get("name")}


def view(step: Step, outcome: Outcome) -> dict[str, Any]:
    out: dict[str, Any] = {"code": outcome.code}
    body = outcome.body
    if step.watch and isinstance(body, list):
        out["events"] = [_event(e) for e in body]
    elif not isinstance(body, dict):
        out["body"] = body
    elif body.get("kind") == "Status":
        out.update(_status(body))
    elif body.get("kind") == "Table":
        out.update(_table(body))
    elif str(body.get("kind", "")).endswith("List"):
        names = sorted((i.get("metadata") or {}).get("name", "") for i in body.get("items") or [])
        out.update({"kind": body.get("kind"), "items": names})
    else:
        out.update(_object(body))
    return out


def flatten(value: Any, prefix: str = "") -> dict[str, Any]:
    if isinstance(value, dict) and value:
        out: dict[str, Any] = {}
        for k, v in value.items():
            out.update(flatten(v, f"{prefix}.{k}" if prefix else str(k)))
        return out
    if isinstance(value, list) and value and any(isinstance(v, dict | list) for v in value):
        out = {}
        for i, v in enumerate(value):
            out.update(flatten(v, f"{prefix}[{i}]"))
        return out
    return {prefix: value}


def _prefixes(field: str) -> list[str]:
    """The field and each field it is inside of: `a.b[0].c` -> a, a.b, a.b[0], a.b[0].c."""
    cuts = [i for i, ch in enumerate(field) if ch in ".["] + [len(field)]
    return [field[:i] for i in cuts if i]


def _normalised(field: str) -> bool:
    return any(fnmatch.fnmatchcase(f, p) for f in _prefixes(field) for p in NORMALISED)


def divergences(step: Step, simulated: Outcome, real: Outcome) -> list[Divergence]:
    a, b = flatten(view(step, simulated)), flatten(view(step, real))
    out = []
    for field in sorted(set(a) | set(b)):
        if _normalised(field):
            continue
        if a.get(field) != b.get(field):
            out.append(Divergence(step.id, field, a.get(field), b.get(field)))
    return out


@dataclass(frozen=True)
class Listed:
    steps: str
    field: str
    why: str

    def matches(self, d: Divergence) -> bool:
        return fnmatch.fnmatchcase(d.step, self.steps) and fnmatch.fnmatchcase(d.field, self.field)


def listed(readme: Path = README) -> list[Listed]:
    """The divergence table of the simulator's README: `| `steps` | `field` | why |` rows
    between the markers."""
    text = readme.read_text()
    body = text[text.index(START) + len(START) : text.index(END)]
    rows = []
    for line in body.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 3 or not cells[0].startswith("`"):
            continue
        rows.append(Listed(cells[0].strip("`"), cells[1].strip("`"), cells[2]))
    return rows
