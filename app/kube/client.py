"""Connection to the cluster: in-cluster config, or a kubeconfig (RIGHTSIZER_KUBECONFIG first).

Every request has a timeout. The official client sends none by default, so a connection that goes
half-open (an API server or load balancer that vanished without a reset) blocks its caller for
good: an informer that never notices its watch is dead, a job stuck in one call. Calls that give
their own `_request_timeout` (watches: longer than their server-side timeout) keep it.

Every request also waits for a token of the client's rate limiter (app.kube.throttle: QPS and
burst as client-go's, defaults 5 and 10), each client its own, as each client-go client has.

A kubeconfig with a token gives the client a hook that re-applies the whole kubeconfig before
every request (the host, whose setter reads the proxy settings of the environment, and the token,
reloaded when it expires within 5 minutes): about a third of an eviction's client-side cost. It
runs at most once a second (`RefreshAtMost`): a token is still reloaded minutes before it expires.
"""

from __future__ import annotations

import logging
import math
import os
import threading
import time
from collections.abc import Callable
from typing import Any

from kubernetes import client, config
from kubernetes.client import rest

from app.kube.throttle import DEFAULT_BURST, DEFAULT_QPS, RateLimiter

log = logging.getLogger(__name__)

# (connect, read) seconds. Read is the longest silence between two bytes of an answer, not the
# whole answer: a LIST of 150000 pods streams for longer, and only a dead connection is silent.
DEFAULT_TIMEOUT = (10.0, 120.0)
IDLE_CONNECTIONS = 25  # kept per host at least (client-go's DefaultMaxIdleConnsPerHost)


class ClusterUnreachable(RuntimeError):
    pass


class RefreshAtMost:
    """The client's `refresh_api_key_hook`, called at most once every `every` seconds."""

    def __init__(
        self,
        hook: Callable[[Any], object],
        every: float = 1.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.hook, self.every, self.clock = hook, every, clock
        self._next = -math.inf
        self._lock = threading.Lock()  # requests come from several threads (informers, jobs)

    def __call__(self, configuration: Any) -> None:
        with self._lock:
            now = self.clock()
            if now >= self._next:
                self._next = now + self.every
                self.hook(configuration)
                # The loader's hook installs a new hook of its own each time: keep it, behind
                # this.
                fresh = configuration.refresh_api_key_hook
                if fresh is not self:
                    self.hook = fresh
                    configuration.refresh_api_key_hook = self


class _TimedREST(rest.RESTClientObject):
    """The client's REST layer with a default (connect, read) timeout for every request, each
    request sent once the rate limiter lets it."""

    def __init__(
        self,
        configuration: client.Configuration,
        timeout: tuple[float, float],
        limiter: RateLimiter,
    ) -> None:
        super().__init__(configuration)
        self.default_timeout = timeout
        self.limiter = limiter

    def request(self, method: str, url: str, *args: Any, **kwargs: Any) -> Any:
        if not kwargs.get("_request_timeout"):
            kwargs["_request_timeout"] = self.default_timeout
        self.limiter.wait()
        rest: Any = super()  # the client's REST layer is unannotated
        return rest.request(method, url, *args, **kwargs)


def api_client(
    kubeconfig: str | None = None,
    context: str | None = None,
    timeout: tuple[float, float] = DEFAULT_TIMEOUT,
    qps: float = DEFAULT_QPS,
    burst: int = DEFAULT_BURST,
) -> client.ApiClient:
    """The kubeconfig if given, else in-cluster config in a pod, else $KUBECONFIG or ~/.kube.
    Requests without a timeout of their own get `timeout` (connect, read) seconds; all of them
    wait for the client's rate limiter (`qps` a second, `burst` at once; qps 0: no limit)."""
    try:
        if kubeconfig:
            api = config.new_client_from_config(config_file=kubeconfig, context=context)
        elif os.environ.get("KUBERNETES_SERVICE_HOST"):
            cfg = client.Configuration()
            config.load_incluster_config(client_configuration=cfg)
            api = client.ApiClient(cfg)
        else:
            api = config.new_client_from_config(context=context)
    except (config.ConfigException, OSError) as e:
        where = kubeconfig or "in-cluster config or ~/.kube/config"
        raise ClusterUnreachable(f"no usable Kubernetes configuration ({where}): {e}") from None
    hook = api.configuration.refresh_api_key_hook
    if hook is not None:
        api.configuration.refresh_api_key_hook = RefreshAtMost(hook)
    api.rest_client.pool_manager.clear()
    # Connections kept for reuse: the official client keeps 5 per CPU (10 on 2 cores), fewer than
    # one client's long-lived watches (about ten informers) plus the updater's evictions in
    # flight, so each answer beyond that closed its connection ("Connection pool is full,
    # discarding connection") and the next request opened a new one. client-go keeps 25 idle
    # connections per host (DefaultMaxIdleConnsPerHost, k8s.io/apimachinery/pkg/util/net/http.go).
    api.configuration.connection_pool_maxsize = max(
        api.configuration.connection_pool_maxsize or 0, IDLE_CONNECTIONS
    )
    api.rest_client = _TimedREST(api.configuration, timeout, RateLimiter(qps, burst))
    built: client.ApiClient = api
    return built


def ensure_namespace(api: client.ApiClient, name: str) -> bool:  # rbac: cli-only
    """Creates the namespace if missing (what an installer does). True if it was created."""
    core: Any = client.CoreV1Api(api)  # Any: the stubs want a model; plain JSON works as well
    try:
        core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
        return True
    except client.exceptions.ApiException as e:
        if e.status == 409:
            return False
        raise
