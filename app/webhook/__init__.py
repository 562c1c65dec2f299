"""The mutating admission webhook: POST /mutate, fed by an in-process cache of the database.

`init_app` builds one `Webhook` per application (in `app.extensions["rightsizer.webhook"]`);
`webhook_of(app)` returns it. With a cluster at hand (RIGHTSIZER_WEBHOOK_WATCH_CLUSTER) its
`ClusterSources` watch LimitRanges and controllers, and plug them in as `webhook.limit_ranges` and
`webhook.owner_lookup`.
"""

from __future__ import annotations

import atexit
from collections.abc import Callable, Sequence
from typing import Any

from flask import Blueprint, Flask, Response, current_app, request
from flask.typing import ResponseReturnValue

from app.core.placement.windows import NodeLevel
from app.core.sizing.boost import BoostOptions
from app.kube.binds import BindWatch
from app.kube.client import api_client
from app.settings import settings_of
from app.store import audit as audit_trail
from app.store.node_levels import load_node_levels
from app.store.policies import InvalidPolicyLog
from app.store.session import own_session
from app.store.snapshot import RowMemo, Snapshot, load_snapshot
from app.web.probes import request_observers, serve_from_cache
from app.webhook.audit import ACTOR, MutationCount, MutationCounter
from app.webhook.cache import WebhookCache
from app.webhook.extender import Extender, ExtenderRoute
from app.webhook.handler import Webhook
from app.webhook.levels import LevelsCache
from app.webhook.route import MutateRoute
from app.webhook.sources import ClusterSources, should_watch

EXTENSION = "rightsizer.webhook"
EXTENDER = "rightsizer.extender"

bp = Blueprint("webhook", __name__)


def webhook_of(app: Flask) -> Webhook:
    hook: Webhook = app.extensions[EXTENSION]
    return hook


@bp.post("/mutate")
def mutate() -> ResponseReturnValue:
    """Reached only when the app's WSGI callable is not the one init_app wrapped (MutateRoute
    answers POST /mutate before Flask); the rule also makes other methods a 405."""
    route = MutateRoute(current_app.wsgi_app, webhook_of(current_app), ())
    status, body = route.answer(request.environ)
    return Response(body, status, mimetype="application/json")


def init_app(app: Flask) -> None:
    settings = settings_of(app)
    config = settings.webhook
    invalid = InvalidPolicyLog("webhook")
    memo = RowMemo()  # what the last reload built from each row (a forked worker: its copy)

    def load() -> Snapshot:
        with app.app_context(), own_session() as session:
            return load_snapshot(session, invalid=invalid, memo=memo)

    def store(counts: Sequence[MutationCount]) -> None:
        events = [
            audit_trail.Event(
                "mutate",
                c.workload.kind,
                f"{c.workload.namespace}/{c.workload.name}",
                c.message(),
                c.details(),
                c.admitted,
            )
            for c in counts
        ]
        with app.app_context(), own_session() as session:
            audit_trail.save_events(session, ACTOR, events)

    mutations = MutationCounter(store, interval=config.audit_interval_seconds)
    cache = WebhookCache(
        load,
        interval=config.cache_refresh_seconds,
        max_age=config.cache_max_age_seconds,
        periodic=[mutations.maybe_flush],
    )
    sources = None
    kubeconfig = settings.cluster.kubeconfig
    if should_watch(config.watch_cluster, kubeconfig):
        sources = ClusterSources(kubeconfig)
    # Tests drive refresh() themselves; a server starts the threads on its first review.
    hook = Webhook(
        cache,
        autostart=not app.testing,
        sources=sources,
        mutations=mutations,
        excluded_namespaces=settings.cluster.never_sized,
        boost=BoostOptions(config.max_cpu_boost or None),
        placement_scheduler=config.placement_scheduler,
    )
    app.extensions[EXTENSION] = hook
    # /readyz (app.api.health) keeps a pod ready through a database outage while this is fresh.
    serve_from_cache(app, "webhook", lambda: hook.cache.state()[1])
    if not app.testing:
        # A worker's last counts, on a clean exit (a failed write is logged, the counts are lost).
        atexit.register(mutations.flush)
    app.register_blueprint(bp)
    app.wsgi_app = MutateRoute(app.wsgi_app, hook, request_observers(app))  # type: ignore[method-assign]
    init_extender(app, hook)


def init_extender(app: Flask, hook: Webhook) -> None:
    """The scheduler extender (app.webhook.extender) on the same server, ahead of Flask."""

    def load() -> list[NodeLevel]:
        with app.app_context(), own_session() as session:
            return load_node_levels(session)

    settings = settings_of(app)
    levels = LevelsCache(
        load, settings.placement.options(), interval=settings.placement.refresh_seconds
    )
    watch = None
    kubeconfig = settings.cluster.kubeconfig
    if should_watch(settings.webhook.watch_cluster, kubeconfig):

        def watch(
            bound: Callable[[dict[str, Any]], None], gone: Callable[[dict[str, Any]], None]
        ) -> object:
            return BindWatch(api_client(kubeconfig or None), bound, gone).start()

    extender = Extender(hook, levels, autostart=not app.testing, watch_binds=watch)
    app.extensions[EXTENDER] = extender
    app.wsgi_app = ExtenderRoute(app.wsgi_app, extender, request_observers(app))  # type: ignore[method-assign]


def extender_of(app: Flask) -> Extender:
    found: Extender = app.extensions[EXTENDER]
    return found
