"""One cluster the corpus is replayed against, through the official client's own transport:
each step's answer (status code and parsed body, or a watch's events) as an Outcome."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode

from kubernetes import client

from tests.realkube.differential.corpus import LR_NS, NS, Step


@dataclass
class Outcome:
    code: int
    body: Any  # the parsed JSON answer; for a watch, the list of its events


class Backend:
    """`settle` waits until the cluster's controllers have caught up (pods Running and Ready,
    budgets counted); it differs per cluster, the requests do not."""

    def __init__(self, name: str, api: client.ApiClient, settle: Callable[[], None]) -> None:
        self.name = name
        self.api = api
        self._settle = settle
        self.marks: dict[str, str] = {}
        self.versions: dict[str, list[str]] = {}  # path -> resourceVersions seen, oldest first

    def run(self, step: Step) -> Outcome | None:
        if step.settle:
            self._settle()
            return None
        query = dict(step.query)
        if step.rv_from:
            rv = int(self.marks[step.rv_from]) + step.rv_ahead
            query["resourceVersion"] = str(rv)
        body = step.body
        if step.stale_rv:
            seen = self.versions.get(step.path) or ["1"]
            body = json.loads(json.dumps(body))
            body["metadata"]["resourceVersion"] = seen[0]
        outcome = self._request(step, query, body)
        self._remember(step, outcome)
        return outcome

    def _request(self, step: Step, query: dict[str, str], body: Any) -> Outcome:
        path = step.path + ("?" + urlencode(query) if query else "")
        headers = {"Accept": step.accept}
        data: Any = None
        if body is not None:
            headers["Content-Type"] = step.content_type
            data = body
        verb, url, headers, _, _ = self.api.param_serialize(
            step.method, path, header_params=headers, auth_settings=["BearerToken"]
        )
        resp = self.api.rest_client.request(
            verb, url, headers=headers, body=data, _request_timeout=60
        )
        raw = resp.read() if hasattr(resp, "read") else resp.data
        text = raw.decode() if isinstance(raw, bytes) else str(raw)
        if step.watch and resp.status == 200:
            events = [json.loads(line) for line in text.splitlines() if line.strip()]
            return Outcome(resp.status, events)
        try:
            parsed = json.loads(text) if text else None
        except ValueError:
            parsed = {"unparsed": text[:200]}
        return Outcome(resp.status, parsed)

    def _remember(self, step: Step, outcome: Outcome) -> None:
        body = outcome.body
        if not isinstance(body, dict):
            return
        rv = (body.get("metadata") or {}).get("resourceVersion")
        if not rv:
            return
        if step.mark:
            self.marks[step.mark] = rv
        name = (body.get("metadata") or {}).get("name")
        if outcome.code in (200, 201) and name and step.method in ("POST", "PATCH", "PUT", "GET"):
            base = step.path if step.method != "POST" else f"{step.path}/{name}"
            base = base.split("/resize")[0]
            self.versions.setdefault(base, []).append(rv)


def wait_until(
    check: Callable[[], bool], what: str, timeout: float = 90, details: Any = None
) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():
            return
        time.sleep(0.3)
    raise AssertionError(f"not settled after {timeout}s: {what} {details or ''}")


def kubelet_resources_reported(core: client.CoreV1Api) -> bool:
    """Every running container of the corpus's pods carries the resources it runs with, as the
    harness's kubelet stand-in (tests/realkube/kubelet.py) writes them: kube-apiserver refuses a
    resize of a pod whose running containers' statuses have none ("Pod running on node without
    support for resize")."""
    return all(
        s.resources is not None
        for ns in (NS, LR_NS)
        for pod in core.list_namespaced_pod(ns).items
        for s in pod.status.container_statuses or []
        if s.state and s.state.running
    )


def real_settle(api: client.ApiClient) -> Callable[[], None]:
    """The real control plane: the namespaces' default ServiceAccounts exist (pods need them),
    every pod of the corpus is Running and Ready on a kwok node, every budget has observed its
    generation and counts the pods it selects."""
    core = client.CoreV1Api(api)
    policy = client.PolicyV1Api(api)
    last: dict[str, Any] = {}

    def namespaces_ready() -> bool:
        for ns in (NS, LR_NS):
            try:
                core.read_namespaced_service_account("default", ns)
            except client.ApiException:
                return False
        return True

    def pods_ready() -> bool:
        for ns in (NS, LR_NS):
            try:
                pods = core.list_namespaced_pod(ns).items
            except client.ApiException:
                return False
            for pod in pods:
                if pod.metadata.deletion_timestamp:
                    return False
                ready = any(
                    c.type == "Ready" and c.status == "True" for c in pod.status.conditions or []
                )
                if pod.status.phase != "Running" or not ready:
                    return False
        return True

    def workloads_observed() -> bool:
        apps = client.AppsV1Api(api)
        try:
            deployments = apps.list_namespaced_deployment(NS).items
        except client.ApiException:
            return True
        return all(
            (d.status.observed_generation or 0) >= d.metadata.generation
            and "deployment.kubernetes.io/revision" in (d.metadata.annotations or {})
            for d in deployments
        )

    def budgets_counted() -> bool:
        try:
            budgets = policy.list_namespaced_pod_disruption_budget(NS).items
        except client.ApiException:
            return True
        last["budgets"] = [(b.metadata.name, b.metadata.generation, b.status) for b in budgets]
        return all(
            (b.status.observed_generation or 0) >= b.metadata.generation
            and b.status.current_healthy > 0
            for b in budgets
        )

    def settle() -> None:
        wait_until(namespaces_ready, "default ServiceAccounts")
        wait_until(pods_ready, "pods Running and Ready")
        wait_until(workloads_observed, "Deployments observed by their controller")
        wait_until(lambda: kubelet_resources_reported(core), "running containers' resources")
        wait_until(budgets_counted, "budgets observed", details=last)

    return settle
