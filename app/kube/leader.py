"""Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.

Every gunicorn worker of every replica runs an elector; the one holding the Lease runs the jobs.
A holder renews every `retry_period`; if it has not renewed for `renew_deadline` it stops leading.
Others take over only when the Lease record has not changed for `lease_duration` (timed on their
own clock, so clock skew between nodes does not matter). Since renew_deadline < lease_duration, a
holder always stops before anyone else can start.
"""

from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from kubernetes.client import ApiClient, CoordinationV1Api
from kubernetes.client.exceptions import ApiException
from urllib3.exceptions import HTTPError

log = logging.getLogger(__name__)


def micro_time(t: datetime) -> str:
    return t.strftime("%Y-%m-%dT%H:%M:%S.%fZ")


class LeaderElector:
    def __init__(
        self,
        api: ApiClient,
        name: str,
        namespace: str,
        identity: str,
        on_started: Callable[[], None],
        on_stopped: Callable[[], None],
        lease_duration: float = 15.0,
        renew_deadline: float = 10.0,
        retry_period: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if not retry_period < renew_deadline < lease_duration:
            raise ValueError("need retry_period < renew_deadline < lease_duration")
        self.api: Any = CoordinationV1Api(api)  # Any: called with _preload_content=False
        self.name, self.namespace, self.identity = name, namespace, identity
        self.on_started, self.on_stopped = on_started, on_stopped
        self.lease_duration, self.renew_deadline = lease_duration, renew_deadline
        self.retry_period, self.clock = retry_period, clock
        self.leading = threading.Event()
        self._stop = threading.Event()
        self._observed: tuple[Any, Any] | None = None  # (holder, renewTime) last seen
        self._observed_at = 0.0
        self._last_renew = 0.0
        self._thread: threading.Thread | None = None

    def is_leader(self) -> bool:
        """Leading, and renewed recently enough that nobody else can have taken over."""
        return self.leading.is_set() and self.clock() - self._last_renew < self.renew_deadline

    def start(self) -> LeaderElector:
        self._thread = threading.Thread(target=self._run, name="leader-election", daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stops campaigning; a leader stops its jobs and hands the Lease back at once."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=self.retry_period + 5)
        if self.leading.is_set():
            self._step_down("shutting down")
            self._release()

    def _run(self) -> None:
        while not self._stop.is_set():
            ok = self._try_acquire_or_renew()
            now = self.clock()
            if ok:
                self._last_renew = now
                if not self.leading.is_set():
                    log.info(
                        "became leader (lease %s/%s) as %s",
                        self.namespace,
                        self.name,
                        self.identity,
                    )
                    self.leading.set()
                    self.on_started()
            elif self.leading.is_set() and now - self._last_renew >= self.renew_deadline:
                self._step_down(f"could not renew for {self.renew_deadline:.0f}s")
            self._stop.wait(self.retry_period)

    def _step_down(self, why: str) -> None:
        log.warning("stopped leading (lease %s/%s): %s", self.namespace, self.name, why)
        self.leading.clear()
        self.on_stopped()

    def _spec(self, now: datetime, previous: dict[str, Any] | None) -> dict[str, Any]:
        spec = {
            "holderIdentity": self.identity,
            "leaseDurationSeconds": int(self.lease_duration),
            "renewTime": micro_time(now),
            "acquireTime": micro_time(now),
            "leaseTransitions": 0,
        }
        if previous:
            transitions = previous.get("leaseTransitions") or 0
            if previous.get("holderIdentity") == self.identity:
                spec["acquireTime"] = previous.get("acquireTime") or spec["acquireTime"]
                spec["leaseTransitions"] = transitions
            else:
                spec["leaseTransitions"] = transitions + 1
        return spec

    def _try_acquire_or_renew(self) -> bool:
        now = datetime.now(UTC)
        try:
            resp = self.api.read_namespaced_lease(self.name, self.namespace, _preload_content=False)
            lease = json.loads(resp.data)
        except ApiException as e:
            if e.status != 404:
                log.warning("reading lease %s/%s: HTTP %s", self.namespace, self.name, e.status)
                return False
            body = {
                "apiVersion": "coordination.k8s.io/v1",
                "kind": "Lease",
                "metadata": {"name": self.name, "namespace": self.namespace},
                "spec": self._spec(now, None),
            }
            return self._write(lambda: self.api.create_namespaced_lease(self.namespace, body))
        except (HTTPError, OSError, ValueError) as e:
            log.warning("reading lease %s/%s: %s", self.namespace, self.name, e)
            return False
        spec = lease.get("spec") or {}
        record = (spec.get("holderIdentity"), spec.get("renewTime"))
        local = self.clock()
        if record != self._observed:
            self._observed, self._observed_at = record, local
        holder = spec.get("holderIdentity")
        duration = spec.get("leaseDurationSeconds") or self.lease_duration
        if holder and holder != self.identity and local - self._observed_at < duration:
            return False  # somebody else holds a live lease
        lease["spec"] = self._spec(now, spec)
        return self._write(
            lambda: self.api.replace_namespaced_lease(self.name, self.namespace, lease)
        )

    def _write(self, call: Callable[[], Any]) -> bool:
        try:
            call()
            return True
        except ApiException as e:
            if e.status == 404:
                log.warning(
                    "cannot create lease %s/%s: namespace %s not found",
                    self.namespace,
                    self.name,
                    self.namespace,
                )
            elif e.status != 409:  # 409: someone else wrote first; not an error
                log.warning("writing lease %s/%s: HTTP %s", self.namespace, self.name, e.status)
            return False
        except (HTTPError, OSError) as e:
            log.warning("writing lease %s/%s: %s", self.namespace, self.name, e)
            return False

    def _release(self) -> None:
        """Empties the holder so the next candidate need not wait for the Lease to expire."""
        try:
            resp = self.api.read_namespaced_lease(self.name, self.namespace, _preload_content=False)
            lease = json.loads(resp.data)
            if (lease.get("spec") or {}).get("holderIdentity") != self.identity:
                return
            lease["spec"]["holderIdentity"] = None
            lease["spec"]["leaseDurationSeconds"] = 1
            self.api.replace_namespaced_lease(self.name, self.namespace, lease)
            log.info("released lease %s/%s", self.namespace, self.name)
        except (ApiException, HTTPError, OSError, ValueError) as e:
            log.warning("could not release lease %s/%s: %s", self.namespace, self.name, e)
