"""A Prometheus `GET /api/v1/query_range` over the usage model, for the cAdvisor series a
history provider reads: `rate(container_cpu_usage_seconds_total{...}[w])` and
`container_memory_working_set_bytes{...}`. The rate is the usage at each evaluation instant
(the model has no sub-sample detail to average). Series exist while a container runs, so they
cover a scenario's history; series of pods deleted since are gone (the simulator keeps none).
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any

from app.simulator.control.cluster import SimCluster
from app.simulator.workload.clock import parse_rfc3339
from app.simulator.workload.usage import observed

MAX_POINTS = 11_000
CPU = "container_cpu_usage_seconds_total"
MEMORY = "container_memory_working_set_bytes"


class PromError(Exception):
    """A query Prometheus would refuse: answered 400 with errorType bad_data."""


@dataclass(frozen=True, slots=True)
class Matcher:
    label: str
    op: str
    value: str

    def matches(self, labels: dict[str, str]) -> bool:
        actual = labels.get(self.label, "")
        if self.op == "=":
            return actual == self.value
        if self.op == "!=":
            return actual != self.value
        found = re.fullmatch(self.value, actual) is not None
        return found if self.op == "=~" else not found


@dataclass(frozen=True, slots=True)
class Query:
    metric: str
    matchers: tuple[Matcher, ...]


_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")
_QUERY = re.compile(
    r"^\s*(?:(?P<fn>rate|irate)\s*\(\s*)?(?P<metric>[a-zA-Z_:][a-zA-Z0-9_:]*)\s*"
    r"(?:\{(?P<matchers>[^}]*)\})?\s*(?:\[(?P<range>[^\]]+)\])?\s*(?P<close>\))?\s*$"
)
_MATCHER = re.compile(r'\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*(=~|!~|!=|=)\s*"((?:[^"\\]|\\.)*)"\s*')


def parse_query(text: str) -> Query:
    m = _QUERY.match(text)
    if not m or bool(m["fn"]) != bool(m["close"]):
        raise PromError(
            f"unsupported query {text!r}: this simulator serves rate({CPU}{{...}}"
            f"[range]) and {MEMORY}{{...}}"
        )
    metric = m["metric"]
    if metric == CPU and not (m["fn"] and m["range"]):
        raise PromError(f"{CPU} is a counter: query rate({CPU}{{...}}[5m])")
    if metric == MEMORY and (m["fn"] or m["range"]):
        raise PromError(f"{MEMORY} is a gauge: query it without rate() or a range")
    if metric not in (CPU, MEMORY):
        raise PromError(f"unknown series {metric!r}: this simulator serves {CPU} and {MEMORY}")
    if m["range"] and not _DURATION.match(m["range"].strip()):
        raise PromError(f"bad duration {m['range']!r}")
    matchers = []
    rest = m["matchers"] or ""
    for part in filter(str.strip, _split_matchers(rest)):
        mm = _MATCHER.fullmatch(part)
        if not mm:
            raise PromError(f"unexpected label matcher {part.strip()!r}")
        value = json.loads(f'"{mm[3]}"')
        if mm[2] in ("=~", "!~"):
            try:
                re.compile(value)
            except re.error as e:
                raise PromError(f"invalid regular expression {value!r}: {e}") from None
        matchers.append(Matcher(mm[1], mm[2], value))
    return Query(metric, tuple(matchers))


def _split_matchers(text: str) -> list[str]:
    parts: list[str] = []
    cur: list[str] = []
    quoted = escaped = False
    for ch in text:
        if escaped:
            escaped = False
        elif ch == "\\":
            escaped = True
        elif ch == '"':
            quoted = not quoted
        elif ch == "," and not quoted:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def parse_time(text: str, name: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    try:
        return parse_rfc3339(text)
    except ValueError:
        raise PromError(
            f'invalid parameter "{name}": cannot parse "{text}" to a valid timestamp'
        ) from None


def parse_step(text: str) -> float:
    try:
        return float(text)
    except ValueError:
        pass
    if not _DURATION.match(text):
        raise PromError(f'invalid parameter "step": cannot parse "{text}" to a valid duration')
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    return sum(int(n) * units[u] for n, u in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", text))


def query_range(cluster: SimCluster, params: dict[str, str]) -> dict[str, Any]:
    for required in ("query", "start", "end", "step"):
        if not params.get(required):
            raise PromError(f'invalid parameter "{required}": missing')
    start = parse_time(params["start"], "start")
    end = parse_time(params["end"], "end")
    step = parse_step(params["step"])
    if end < start:
        raise PromError('invalid parameter "end": end timestamp must not be before start time')
    if step <= 0:
        raise PromError(
            'invalid parameter "step": zero or negative query resolution step '
            "widths are not accepted. Try a positive integer"
        )
    if (end - start) / step > MAX_POINTS:
        raise PromError(
            "exceeded maximum resolution of 11,000 points per timeseries. Try "
            "decreasing the query resolution (?step=XX)"
        )
    query = parse_query(params["query"])
    now = cluster.now()
    times = [start + i * step for i in range(math.floor((end - start) / step) + 1)]
    times = [t for t in times if t <= now]
    with cluster.runtime_lock:
        pods = list(cluster.runtime.values())
    result = []
    for prt in pods:
        for c in prt.containers:
            labels = {
                "namespace": prt.namespace,
                "pod": prt.name,
                "container": c.name,
                "node": prt.node,
                "instance": prt.node,
                "job": "kubelet",
                "metrics_path": "/metrics/cadvisor",
            }
            if not all(m.matches(labels | {"__name__": query.metric}) for m in query.matchers):
                continue
            values = []
            for t in times:
                use = observed(c.profile, c.key, c.life, t, c.cpu_limit, c.memory_limit)
                if use is not None:
                    values.append([t, _fmt(use[0] if query.metric == CPU else use[1])])
            if values:
                if query.metric == MEMORY:
                    labels = {"__name__": MEMORY, **labels}
                result.append({"metric": labels, "values": values})
    return {"status": "success", "data": {"resultType": "matrix", "result": result}}


def _fmt(value: float) -> str:
    return repr(float(value)) if not float(value).is_integer() else str(int(value))
