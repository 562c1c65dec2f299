"""Scheduler extenders called as kube-scheduler calls them (`extenders` of a
KubeSchedulerConfiguration; kubernetes pkg/scheduler/extender.go HTTPExtender, and
schedule_one.go findNodesThatPassExtenders and prioritizeNodes, re-derived):

- `filter`, after the scheduler's own filters, for the nodes that passed them, extender after
  extender: the nodes it leaves out fail with its message (FailedAndUnresolvableNodes as
  unresolvable: preemption would not help); an error fails the attempt unless the extender is
  `ignorable`, when it is skipped. No verb: every node passes.
- `prioritize`, when more than one node is feasible: `weight x score` per extender, summed, times
  MaxNodeScore / MaxExtenderPriority (100 / 10) added to the node's own score. An error is
  skipped whatever `ignorable` says (prioritizeNodes ignores prioritize errors).

The body is an ExtenderArgs: `{"Pod", "Nodes", "NodeNames"}` (the Go structs carry no json tags),
with only NodeNames when `nodeCacheCapable`, else only Nodes. HTTP POST to `urlPrefix/verb`,
`httpTimeout` (default 5 s: extender.go DefaultExtenderTimeout), TLS as its `tlsConfig` says
(`insecure`, `caData` base64, `caFile`).
"""

from __future__ import annotations

import base64
import json
import ssl
import urllib.request
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

MAX_NODE_SCORE = 100  # framework.MaxNodeScore
MAX_EXTENDER_PRIORITY = 10  # extenderv1.MaxExtenderPriority
DEFAULT_TIMEOUT = 5.0
KNOWN = {
    "urlPrefix",
    "filterVerb",
    "prioritizeVerb",
    "weight",
    "nodeCacheCapable",
    "ignorable",
    "httpTimeout",
    "tlsConfig",
    "enableHTTPS",
    "bindVerb",
    "preemptVerb",
    "managedResources",
}


class ExtenderError(Exception):
    pass


def _seconds(text: Any) -> float:
    """A Go duration as the configuration writes it ("5s", "500ms", "1m"), or a number."""
    if isinstance(text, int | float):
        return float(text)
    if isinstance(text, str):
        for suffix, factor in (("ms", 0.001), ("s", 1.0), ("m", 60.0)):
            if text.endswith(suffix):
                try:
                    return float(text[: -len(suffix)]) * factor
                except ValueError:
                    break
    raise ValueError(f"httpTimeout: not a duration: {text!r}")


@dataclass(frozen=True)
class HTTPExtender:
    url_prefix: str
    filter_verb: str = ""
    prioritize_verb: str = ""
    weight: int = 1
    node_cache_capable: bool = False
    ignorable: bool = False
    timeout: float = DEFAULT_TIMEOUT
    context: ssl.SSLContext | None = None

    @classmethod
    def parse(cls, config: Mapping[str, Any]) -> HTTPExtender:
        """One entry of a KubeSchedulerConfiguration's `extenders`; ValueError naming the field."""
        if not isinstance(config, Mapping):
            raise ValueError("an extender must be a mapping")
        unknown = sorted(set(config) - KNOWN)
        if unknown:
            raise ValueError(f"unknown field(s): {', '.join(unknown)}")
        prefix = config.get("urlPrefix")
        if not isinstance(prefix, str) or not prefix.startswith(("http://", "https://")):
            raise ValueError("urlPrefix: an http:// or https:// URL is required")
        if config.get("bindVerb") or config.get("preemptVerb"):
            raise ValueError("bindVerb, preemptVerb: not simulated")
        weight = config.get("weight", 1)
        if not isinstance(weight, int) or weight <= 0:
            raise ValueError("weight: a positive integer")  # validation.go: must be positive
        tls = config.get("tlsConfig") or {}
        if not isinstance(tls, Mapping):
            raise ValueError("tlsConfig: a mapping")
        context = None
        if prefix.startswith("https://"):
            context = ssl.create_default_context()
            if tls.get("caData"):
                context = ssl.create_default_context(
                    cadata=base64.b64decode(tls["caData"]).decode()
                )
            elif tls.get("caFile"):
                context = ssl.create_default_context(cafile=tls["caFile"])
            if tls.get("insecure"):
                context.check_hostname = False
                context.verify_mode = ssl.CERT_NONE
        return cls(
            prefix.rstrip("/"),
            str(config.get("filterVerb") or ""),
            str(config.get("prioritizeVerb") or ""),
            weight,
            bool(config.get("nodeCacheCapable", False)),
            bool(config.get("ignorable", False)),
            _seconds(config.get("httpTimeout", DEFAULT_TIMEOUT)),
            context,
        )

    def _send(self, verb: str, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]) -> Any:
        names = [n["metadata"]["name"] for n in nodes]
        args = {
            "Pod": pod,
            "Nodes": None if self.node_cache_capable else {"items": list(nodes)},
            "NodeNames": names if self.node_cache_capable else None,
        }
        req = urllib.request.Request(
            f"{self.url_prefix}/{verb}",
            data=json.dumps(args).encode(),
            headers={"Content-Type": "application/json"},
            method="POST",
        )
        try:
            with urllib.request.urlopen(req, timeout=self.timeout, context=self.context) as resp:
                return json.loads(resp.read())
        except (OSError, ValueError) as e:  # URLError, HTTPError, timeouts, bad JSON
            raise ExtenderError(f"extender {self.url_prefix}: {verb}: {e}") from e

    def filter(
        self, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]
    ) -> tuple[list[str], dict[str, str], dict[str, str]]:
        """(names that pass, failed: name -> message, failed and unresolvable)."""
        names = [n["metadata"]["name"] for n in nodes]
        if not self.filter_verb:
            return names, {}, {}
        result = self._send(self.filter_verb, pod, nodes)
        if not isinstance(result, dict):
            raise ExtenderError(f"extender {self.url_prefix}: filter: not an ExtenderFilterResult")
        got = {k.lower(): v for k, v in result.items()}  # encoding/json: any case
        if got.get("error"):
            raise ExtenderError(str(got["error"]))
        if self.node_cache_capable and got.get("nodenames") is not None:
            passed = [str(n) for n in got["nodenames"]]
        else:
            items = (got.get("nodes") or {}).get("items") or []
            passed = [str((n.get("metadata") or {}).get("name", "")) for n in items]
        known = set(names)
        for n in passed:
            if n not in known:
                raise ExtenderError(
                    f"extender {self.url_prefix} claims a filtered node {n!r} "
                    "which is not found in the input node list"
                )
        return (
            passed,
            dict(got.get("failednodes") or {}),
            dict(got.get("failedandunresolvablenodes") or {}),
        )

    def prioritize(
        self, pod: Mapping[str, Any], nodes: Sequence[Mapping[str, Any]]
    ) -> dict[str, int]:
        """Node name -> the extender's score (0 when it gives none)."""
        if not self.prioritize_verb:
            return {}
        result = self._send(self.prioritize_verb, pod, nodes)
        if not isinstance(result, list):
            raise ExtenderError(f"extender {self.url_prefix}: prioritize: not a HostPriorityList")
        out: dict[str, int] = {}
        for h in result:
            if isinstance(h, dict):
                got = {k.lower(): v for k, v in h.items()}
                if isinstance(got.get("host"), str) and isinstance(got.get("score"), int):
                    out[got["host"]] = got["score"]
        return out


def parse_extenders(configs: Any) -> list[HTTPExtender]:
    if configs is None:
        return []
    if not isinstance(configs, list | tuple):
        raise ValueError("a list of extenders")
    out = []
    for i, c in enumerate(configs):
        try:
            out.append(HTTPExtender.parse(c))
        except ValueError as e:
            raise ValueError(f"[{i}]: {e}") from None
    return out
