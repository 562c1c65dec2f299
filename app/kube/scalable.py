"""Which kinds have a `/scale` subresource (discovery), and the Scale of one object of them.

VPA finds targets beyond its well-known kinds through a RESTMapper over cached discovery and the
scale client (kubernetes/autoscaler `vertical-pod-autoscaler/pkg/target/controller_fetcher`:
isWellKnownOrScalable, getScaleForResource; the mapper is reset every 5 minutes). This is the same
with the official client: the API groups (`/apis`) and each group version's resources, keeping the
kinds that list a `<plural>/scale` subresource, refreshed every `refresh_seconds`, and sooner (at
most every `min_refresh_seconds`) when asked about a kind it does not know, so a definition
installed a moment ago is found. Discovery needs no RBAC rule; a Scale needs `get` on
`<resource>/scale` of any group (the chart grants `*/scale`, as VPA's ClusterRole does).

`__call__(group, kind)` answers from what was last listed and never calls the API server itself
when `background` is set (the webhook answers without calling it): a miss then wakes a thread
that lists again. A kind asked for in vain lists again at most once per `refresh_seconds`.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

log = logging.getLogger(__name__)
REFRESH_SECONDS = 300.0  # VPA's discoveryResetPeriod
MIN_REFRESH_SECONDS = 10.0


@dataclass(frozen=True)
class ScaleResource:
    """Where the Scale of a kind lives: /apis/{group}/{version}/[namespaces/{ns}/]{plural}."""

    group: str
    version: str
    plural: str
    namespaced: bool


class ScalableKinds:
    def __init__(
        self,
        api: client.ApiClient,
        refresh_seconds: float = REFRESH_SECONDS,
        min_refresh_seconds: float = MIN_REFRESH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        background: bool = False,
    ) -> None:
        self.api = api
        self.refresh_seconds, self.min_refresh_seconds = refresh_seconds, min_refresh_seconds
        self.clock = clock
        self.background = background
        self._kinds: dict[tuple[str, str], ScaleResource] = {}
        self._missed: dict[tuple[str, str], float] = {}  # kind -> when it was last asked in vain
        self._listed_at: float | None = None
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self.failing = False
        self.refreshes = 0  # discovery listings done (successful or not)
        self.version = 0  # bumped after each change of the kinds known (owners_version)
        self.attempted = threading.Event()  # set once the first listing was tried

    # --- discovery ----------------------------------------------------------------------------

    @property
    def listed(self) -> bool:
        """Whether discovery was listed once (until then nothing is known to be scalable)."""
        with self._lock:
            return bool(self._kinds) or (self._listed_at is not None and not self.failing)

    def __call__(self, group: str, kind: str) -> bool:
        return self.resource(group, kind) is not None

    def resource(self, group: str, kind: str) -> ScaleResource | None:
        with self._lock:
            found = self._kinds.get((group, kind))
            listed_at = self._listed_at
        if found is not None:
            return found
        with self._lock:
            # A kind that was missing already lists again only with the periodic refresh: a pod
            # of an unscalable controller (a workflow engine's) must not list per admission.
            missed = self._missed.get((group, kind))
            if missed is not None and self.clock() - missed < self.refresh_seconds:
                return None
            self._missed[(group, kind)] = self.clock()
        if self.background:
            self._wake.set()  # the refresher lists again, no sooner than min_refresh_seconds
            return None
        if listed_at is not None and self.clock() - listed_at < self.min_refresh_seconds:
            return None
        self.refresh()
        with self._lock:
            return self._kinds.get((group, kind))

    def refresh(self) -> bool:
        """Lists discovery again; False (keeping what it knew) when the API server cannot tell."""
        self.refreshes += 1
        try:
            kinds = self._discover()
        except (ApiException, urllib3.exceptions.HTTPError, ValueError) as e:
            if not self.failing:
                log.warning("cannot list the API's resources (%s): scalable kinds not updated", e)
            self.failing = True
            with self._lock:
                self._listed_at = self.clock()  # not again at once
            self.attempted.set()
            return False
        self.failing = False
        with self._lock:
            self._kinds, self._listed_at = kinds, self.clock()
            self.version += 1
        self.attempted.set()
        return True

    def wait_attempted(self, timeout: float) -> bool:
        """Whether the first listing was tried (successful or not) within `timeout` seconds."""
        return self.attempted.wait(timeout)

    def _discover(self) -> dict[tuple[str, str], ScaleResource]:
        out: dict[tuple[str, str], ScaleResource] = {}
        core: Any = client.CoreV1Api(self.api)
        listings = [("", "v1", _json(core.get_api_resources(_preload_content=False)))]
        apis: Any = client.ApisApi(self.api)
        custom: Any = client.CustomObjectsApi(self.api)
        groups = _json(apis.get_api_versions(_preload_content=False)).get("groups") or []
        for g in groups:
            for v in g.get("versions") or []:
                version = v.get("version")
                if not version:
                    continue
                resp = custom.get_api_resources(g["name"], version, _preload_content=False)
                listings.append((g["name"], version, _json(resp)))
        for group, version, listing in listings:
            resources = listing.get("resources") or []
            names = {r.get("name") for r in resources}
            for r in resources:
                plural, kind = r.get("name", ""), r.get("kind", "")
                if "/" in plural or f"{plural}/scale" not in names:
                    continue
                # The preferred version (listed first) wins, as the RESTMapper's first mapping.
                out.setdefault(
                    (group, kind), ScaleResource(group, version, plural, r["namespaced"])
                )
        return out

    # --- the background refresher (the webhook's) ---------------------------------------------

    def start(self) -> ScalableKinds:
        self.background = True
        self._thread = threading.Thread(target=self._run, name="scalable-kinds", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self._stop.set()
        self._wake.set()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.refresh()
            self._stop.wait(self.min_refresh_seconds)  # at most this often
            self._wake.wait(self.refresh_seconds)  # a miss, or the period
            self._wake.clear()

    # --- one object's Scale -------------------------------------------------------------------

    def scale(self, namespace: str, group: str, kind: str, name: str) -> dict[str, Any] | None:
        """The autoscaling/v1 Scale of one object of a scalable kind; None when the object (or
        the kind) does not exist. Other failures raise (ApiException, urllib3 errors)."""
        where = self.resource(group, kind)
        if where is None:
            return None
        custom: Any = client.CustomObjectsApi(self.api)
        core: Any = client.CoreV1Api(self.api)
        try:
            if where.group == "" and kind == "ReplicationController":  # the one core kind
                resp = core.read_namespaced_replication_controller_scale(
                    name, namespace, _preload_content=False
                )
            elif where.namespaced:
                # rbac: any-custom-resource
                resp = custom.get_namespaced_custom_object_scale(
                    where.group, where.version, namespace, where.plural, name,
                    _preload_content=False,
                )  # fmt: skip
            else:
                # rbac: any-custom-resource
                resp = custom.get_cluster_custom_object_scale(
                    where.group, where.version, where.plural, name, _preload_content=False
                )
        except ApiException as e:
            if e.status == 404:
                return None
            raise
        found: dict[str, Any] = _json(resp)
        return found


def _json(resp: Any) -> dict[str, Any]:
    data = json.loads(resp.data)
    return data if isinstance(data, dict) else {}
