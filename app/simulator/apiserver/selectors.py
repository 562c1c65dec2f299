"""Label selectors (query-string and LabelSelector object forms) and field selectors."""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from app.simulator.apiserver.errors import bad_request

Labels = Mapping[str, str]


@dataclass(frozen=True, slots=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: frozenset[str] = frozenset()

    def matches(self, labels: Labels) -> bool:
        if self.op == "exists":
            return self.key in labels
        if self.op == "!":
            return self.key not in labels
        if self.op in ("=", "in"):
            return labels.get(self.key) in self.values
        # "!=" and "notin" match objects without the key, as in apimachinery.
        return labels.get(self.key) not in self.values


Selector = tuple[Requirement, ...]

_KEY = r"[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?"
_VALUE = r"([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?"
_SET_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s+(?P<op>in|notin)\s*\((?P<vals>[^)]*)\)\s*$")
_EQ_RE = re.compile(rf"^\s*(?P<key>{_KEY})\s*(?P<op>==|=|!=)\s*(?P<val>{_VALUE})\s*$")
_EXISTS_RE = re.compile(rf"^\s*(?P<neg>!?)\s*(?P<key>{_KEY})\s*$")


def _split_top_level(text: str) -> list[str]:
    """Split on commas outside parentheses (`a in (x,y),b` is two requirements)."""
    parts: list[str] = []
    cur: list[str] = []
    depth = 0
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append("".join(cur))
            cur = []
        else:
            cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_label_selector(text: str | None) -> Selector:
    """Parse `labelSelector=` as kube-apiserver does; bad syntax is a 400 like the real one."""
    if not text or not text.strip():
        return ()
    reqs: list[Requirement] = []
    for part in _split_top_level(text):
        if m := _SET_RE.match(part):
            vals = frozenset(v.strip() for v in m["vals"].split(",") if v.strip())
            reqs.append(Requirement(m["key"], m["op"], vals))
        elif m := _EQ_RE.match(part):
            op = "!=" if m["op"] == "!=" else "="
            reqs.append(Requirement(m["key"], op, frozenset([m["val"]])))
        elif m := _EXISTS_RE.match(part):
            reqs.append(Requirement(m["key"], "!" if m["neg"] else "exists"))
        else:
            raise bad_request(
                f"unable to parse requirement: {part.strip()!r}: invalid label selector"
            )
    return tuple(reqs)


def from_label_selector_object(sel: Mapping[str, Any] | None) -> Selector | None:
    """A `metav1.LabelSelector`; None (no selector) matches nothing, `{}` matches everything."""
    if sel is None:
        return None
    reqs = [
        Requirement(k, "=", frozenset([str(v)])) for k, v in (sel.get("matchLabels") or {}).items()
    ]
    ops = {"In": "in", "NotIn": "notin", "Exists": "exists", "DoesNotExist": "!"}
    for expr in sel.get("matchExpressions") or []:
        op = ops.get(expr.get("operator", ""))
        if op is None:
            raise bad_request(f"{expr.get('operator')!r} is not a valid label selector operator")
        reqs.append(Requirement(expr["key"], op, frozenset(expr.get("values") or [])))
    return tuple(reqs)


def matches(selector: Selector | None, labels: Labels | None) -> bool:
    if selector is None:
        return False
    labels = labels or {}
    return all(r.matches(labels) for r in selector)


def selector_string(sel: Mapping[str, Any]) -> str:
    """The string form of a LabelSelector, as `Scale.status.selector` carries it."""
    parts = [f"{k}={v}" for k, v in sorted((sel.get("matchLabels") or {}).items())]
    for e in sel.get("matchExpressions") or []:
        vals = ",".join(sorted(e.get("values") or []))
        parts.append(
            {
                "In": f"{e['key']} in ({vals})",
                "NotIn": f"{e['key']} notin ({vals})",
                "Exists": e["key"],
                "DoesNotExist": f"!{e['key']}",
            }[e["operator"]]
        )
    return ",".join(parts)


# --- field selectors ----------------------------------------------------------------------------

FieldGetter = Callable[[Mapping[str, Any]], str]


def _path(*keys: str) -> FieldGetter:
    def get(obj: Mapping[str, Any]) -> str:
        cur: Any = obj
        for k in keys:
            cur = cur.get(k) if isinstance(cur, Mapping) else None
        if isinstance(cur, bool):
            return "true" if cur else "false"
        return "" if cur is None else str(cur)

    return get


_COMMON = {
    "metadata.name": _path("metadata", "name"),
    "metadata.namespace": _path("metadata", "namespace"),
}
_FIELDS: dict[str, dict[str, FieldGetter]] = {
    "pods": {
        "spec.nodeName": _path("spec", "nodeName"),
        "spec.restartPolicy": _path("spec", "restartPolicy"),
        "spec.schedulerName": _path("spec", "schedulerName"),
        "spec.serviceAccountName": _path("spec", "serviceAccountName"),
        "status.phase": _path("status", "phase"),
        "status.podIP": _path("status", "podIP"),
        "status.nominatedNodeName": _path("status", "nominatedNodeName"),
    },
    "nodes": {"spec.unschedulable": _path("spec", "unschedulable")},
    # kubernetes/kubernetes pkg/registry/core/event/strategy.go ToSelectableFields: the
    # involvedObject fields, reason, type, reportingComponent (the reportingController), and
    # source (source.component, else the reportingController).
    "events": {
        f"involvedObject.{f}": _path("involvedObject", f)
        for f in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")
    }
    | {
        "reason": _path("reason"),
        "type": _path("type"),
        "reportingComponent": _path("reportingComponent"),
        "source": lambda e: _path("source", "component")(e) or _path("reportingComponent")(e),
    },
    "namespaces": {"status.phase": _path("status", "phase")},
}


@dataclass(frozen=True, slots=True)
class FieldRequirement:
    field: str
    value: str
    negate: bool
    getter: FieldGetter

    def matches(self, obj: Mapping[str, Any]) -> bool:
        return (self.getter(obj) == self.value) != self.negate


def parse_field_selector(text: str | None, plural: str) -> tuple[FieldRequirement, ...]:
    if not text or not text.strip():
        return ()
    fields = _COMMON | _FIELDS.get(plural, {})
    reqs = []
    for part in text.split(","):
        m = re.match(r"^\s*([^=!\s]+)\s*(==|=|!=)\s*(\S*)\s*$", part)
        if not m:
            raise bad_request(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, value = m.groups()
        getter = fields.get(field)
        if getter is None:
            raise bad_request(f"field label not supported: {field}")
        if field == "metadata.namespace" and plural in ("nodes", "namespaces"):
            getter = _path("metadata", "namespace")
        reqs.append(FieldRequirement(field, value, op == "!=", getter))
    return tuple(reqs)


def fields_match(reqs: tuple[FieldRequirement, ...], obj: Mapping[str, Any]) -> bool:
    return all(r.matches(obj) for r in reqs)
