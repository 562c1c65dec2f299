"""What the shared endpoints of app.api (/readyz, /metrics) ask of the parts they may not import.

app.api, app.dashboard, app.webhook and app.jobs are independent of each other (import-linter), yet
/readyz must know whether the webhook can answer from its cache and /metrics must serve every
part's metrics. So each part registers here, and app/__init__.py (the composition root) creates
every part before the first request:

- `serve_from_cache(app, name, state)`: an in-process cache a part answers from without the
  database; `state()` is "fresh" when it can, else why not ("cache_empty", "cache_stale").
  app.webhook registers its cache; /readyz reads `cache_states(app)` when the database is down.
- `derived_metric(factory, source)`: a metric computed at scrape time from another one (the
  webhook cache's age from its last load time), registered in prometheus_client's default
  registry over `source`, and in each multiprocess scrape over the workers' merged values
  (`scrape_registry`).
- `observe_requests(app, observer)` / `request_observers(app)`: who counts the HTTP requests
  answered outside Flask's request handling (app.webhook's POST /mutate route, app.webhook.route):
  app.api.metrics registers its per-route counter, the route calls it for each request.
- Metrics defined at module level are in the default registry once their module is imported:
  the composition root imports every part, so all of them are served from the first scrape.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping

from flask import Flask
from prometheus_client import REGISTRY, CollectorRegistry, multiprocess
from prometheus_client.registry import Collector

CACHES = "rightsizer.caches"  # app.extensions key: name -> state of a cache served from
OBSERVERS = "rightsizer.request-observers"  # app.extensions key: list of RequestObserver
MULTIPROC_ENV = "PROMETHEUS_MULTIPROC_DIR"  # prometheus_client's multiprocess mode (gunicorn)

CacheState = Callable[[], str]
RequestObserver = Callable[[str, str, int, float], None]  # (route, method, status, seconds)
Derivation = Callable[[Collector], Collector]

_derived: list[Derivation] = []  # process-wide, as the default registry is


def serve_from_cache(app: Flask, name: str, state: CacheState) -> None:
    """`app` can answer `name`'s requests from an in-process cache while `state()` is "fresh"."""
    caches: dict[str, CacheState] = app.extensions.setdefault(CACHES, {})
    caches[name] = state


def cache_states(app: Flask) -> Mapping[str, str]:
    """The state of each registered cache, by name; empty when no part serves from one."""
    caches: dict[str, CacheState] = app.extensions.get(CACHES, {})
    return {name: state() for name, state in caches.items()}


def observe_requests(app: Flask, observer: RequestObserver) -> None:
    """`observer` is told of every request `app` answers without Flask's hooks."""
    request_observers(app).append(observer)


def request_observers(app: Flask) -> list[RequestObserver]:
    """The observers registered so far; the same list object later registrations extend."""
    observers: list[RequestObserver] = app.extensions.setdefault(OBSERVERS, [])
    return observers


def derived_metric(factory: Derivation, source: Collector) -> None:
    """Registers `factory(source)` in the default registry, and `factory` for multiprocess
    scrapes (where it reads the merged values instead). Called once per process, at import."""
    REGISTRY.register(factory(source))
    _derived.append(factory)


def scrape_registry() -> CollectorRegistry:
    """What one scrape serves: the default registry, or, under gunicorn with
    PROMETHEUS_MULTIPROC_DIR set, every worker's values merged, with the derived metrics over
    the merged values."""
    if not os.environ.get(MULTIPROC_ENV):
        return REGISTRY
    registry = CollectorRegistry()
    merged = multiprocess.MultiProcessCollector(registry)
    for factory in _derived:
        registry.register(factory(merged))
    return registry
