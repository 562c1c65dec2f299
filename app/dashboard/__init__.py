"""Server-rendered dashboard at /dashboard: overview, workloads, one workload, scalers, nodes,
audit trail. No front-end build: Jinja templates, inline SVG charts, one stylesheet.

Pages are reads, authorised like the API's reads (RIGHTSIZER_PUBLIC_READS, or a token). A browser
cannot send a bearer header, so /dashboard/login puts the token in an HttpOnly, SameSite=Strict
cookie scoped to /dashboard, checked exactly like the header on every page.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import groupby
from typing import Any

from flask import (
    Blueprint,
    Flask,
    current_app,
    g,
    redirect,
    render_template,
    request,
    url_for,
)
from flask.typing import ResponseReturnValue
from werkzeug.exceptions import HTTPException

from app.core.policy_warnings import never_sized_reasons
from app.core.scope import RESOURCES, pod_minimum_share
from app.core.update_mode import UPDATE_MODES
from app.core.workload_key import WorkloadKey
from app.dashboard import charts, data, fleet, format, nodes, placement
from app.dashboard.node_groups import node_groups
from app.dashboard.snippets import policy_document, resources_block
from app.dashboard.spread_chart import spread_chart
from app.settings import settings
from app.store import events as audit_events
from app.store.checkpoints import checkpoint_rows
from app.store.conditions import workload_conditions
from app.store.events import EventFilter
from app.store.extensions import db
from app.store.histograms import container_histograms
from app.store.history import latest_recommendations, recommendation_history
from app.store.models import Recommendation, RecommendationPoint
from app.store.node_spread import load_spread
from app.store.scalers import all_scalers
from app.store.session import to_unix
from app.web.auth import COOKIE, AuthError, authenticate, check

bp = Blueprint("dashboard", __name__, template_folder="templates", url_prefix="/dashboard")

# The API resource each page reads, for authorisation.
PAGE_RESOURCES = {
    "dashboard.overview": "recommendations",
    "dashboard.workloads": "recommendations",
    "dashboard.workload": "recommendations",
    "dashboard.nodes": "recommendations",
    "dashboard.scalers": "scalers",
    "dashboard.events": "events",
    "dashboard.fleet": "recommendations",
}
MODES = UPDATE_MODES


@dataclass(frozen=True)
class PageError:
    """What dashboard/error.html shows: the HTTP reason word and a sentence."""

    status: int
    error: str
    message: str


def error_page(e: PageError | AuthError) -> ResponseReturnValue:
    return render_template("dashboard/error.html", error=e), e.status


@bp.before_request
def authorise() -> ResponseReturnValue | None:
    resource = PAGE_RESOURCES.get(request.endpoint or "")
    if resource is None:
        return None  # login, logout
    try:
        g.user = check("list", resource, None, allow_cookie=True)
    except AuthError as e:
        if e.status == 401:
            return redirect(url_for("dashboard.login", next=request.full_path.rstrip("?")))
        return error_page(e)
    unknown = fleet.select()  # ?cluster=: the cluster the page shows
    if unknown:
        return error_page(PageError(400, "BadRequest", unknown))
    return None


@bp.teardown_request
def release_cluster(_error: BaseException | None) -> None:
    fleet.release()


@bp.url_defaults
def keep_cluster(endpoint: str, values: dict[str, Any]) -> None:
    """Every link of a page showing another cluster keeps showing it (not the fleet page's)."""
    wanted = g.get("cluster_ref")
    if wanted and endpoint != "dashboard.fleet" and "cluster" not in values:
        values["cluster"] = wanted


@bp.app_context_processor
def helpers() -> dict[str, Any]:
    return {
        "cpu": format.cpu_html,
        "memory": format.memory_html,
        "bound": format.bound,
        "cores": format.cores,
        "gib": format.gib,
        "user": g.get("user"),
        "cluster_choices": fleet.choices,
        "viewed_cluster": g.get("cluster_ref"),
    }


@bp.route("/login", methods=["GET", "POST"])
def login() -> ResponseReturnValue:
    target = request.values.get("next", "")
    if not target.startswith("/dashboard"):  # never redirect off-site
        target = url_for("dashboard.overview")
    if request.method == "GET":
        return render_template("dashboard/login.html", next=target, failed=False)
    token = request.form.get("token", "").strip()
    if not token or authenticate(token) is None:
        return render_template("dashboard/login.html", next=target, failed=True), 401
    resp = redirect(target)
    resp.set_cookie(
        COOKIE,
        token,
        httponly=True,
        samesite="Strict",
        secure=request.is_secure,
        path="/dashboard",
        max_age=8 * 3600,
    )
    return resp


@bp.post("/logout")
def logout() -> ResponseReturnValue:
    resp = redirect(url_for("dashboard.login"))
    resp.delete_cookie(COOKIE, path="/dashboard")
    return resp


@bp.get("/")
def overview() -> ResponseReturnValue:
    ws = data.workloads()
    t = data.totals(ws)
    prices = data.prices()
    cpu_chart = charts.comparison_chart(
        [
            ("requested", t.requested_cpu, format.read_cpu(t.requested_cpu)),
            ("recommended", t.recommended_cpu, format.read_cpu(t.recommended_cpu)),
        ]
    )
    memory_chart = charts.comparison_chart(
        [
            ("requested", t.requested_memory, format.read_memory(t.requested_memory)),
            ("recommended", t.recommended_memory, format.read_memory(t.recommended_memory)),
        ]
    )
    return render_template(
        "dashboard/overview.html",
        totals=t,
        prices=prices,
        cpu_chart=cpu_chart,
        memory_chart=memory_chart,
        waste=data.waste(ws, prices),
        risk=data.risk(ws, prices),
        raises=data.pod_minimum_raises(ws),
        pod_floor=pod_minimum_share(None, 1, settings().recommender.model),
        left_alone=data.left_alone(ws),
        bases=data.bases(ws),
    )


@bp.get("/workloads")
def workloads() -> ResponseReturnValue:
    namespace = request.args.get("namespace") or None
    mode = request.args.get("mode") or None
    sort = request.args.get("sort", "namespace")
    if sort not in data.SORTS:
        sort = "namespace"
    descending = request.args.get("order") == "desc"
    prices = data.prices()
    ws = data.workloads(namespace)
    if mode:
        ws = [w for w in ws if w.mode == mode]
    ws.sort(key=data.sort_key(sort, prices), reverse=descending)

    def sort_link(key: str) -> str:
        args: dict[str, Any] = {k: v for k, v in request.args.items() if k not in ("sort", "order")}
        args["sort"] = key
        if key == sort and not descending:
            args["order"] = "desc"
        return url_for("dashboard.workloads", **args)  # ?cluster= among them, if given

    return render_template(
        "dashboard/workloads.html",
        workloads=ws,
        prices=prices,
        namespaces=data.namespaces(),
        modes=MODES,
        namespace=namespace,
        mode=mode,
        sort=sort,
        descending=descending,
        sort_link=sort_link,
    )


@bp.get("/workloads/<namespace>/<kind>/<name>")
def workload(namespace: str, kind: str, name: str) -> ResponseReturnValue:
    matches = [w for w in data.workloads(namespace) if (w.kind, w.name) == (kind, name)]
    rows = checkpoint_rows(db.session, namespace, kind, name)
    key = WorkloadKey(namespace, kind, name)
    conditions = workload_conditions(db.session, namespace, kind, name).get(key, [])
    if not matches and not rows and not conditions:
        return error_page(PageError(404, "NotFound", f"no data for {kind} {namespace}/{name}"))
    w = matches[0] if matches else None
    targets = {c.name: c.target for c in w.containers} if w else {}
    histograms: list[dict[str, Any]] = []
    for row in rows:
        try:
            h = container_histograms(row, settings().recommender.model)
        except (ValueError, TypeError):
            histograms.append({"name": row.container, "cpu": None, "memory": None})
            continue
        target = targets.get(row.container)
        histograms.append(
            {
                "name": row.container,
                "cpu": charts.histogram_chart(
                    h.cpu.buckets,
                    format.cores_value,
                    target[0] / 1000 if target else None,
                    "target",
                ),
                "memory": charts.histogram_chart(
                    h.memory.buckets,
                    format.read_memory,
                    target[1] if target else None,
                    "target",
                    resource="memory",
                ),
            }
        )
    suggested = w.mode if w and w.mode != "Off" else "Initial"
    resources = {c.name: resources_block(c.target) for c in (w.containers if w else [])}
    # One policy for the workload, all its containers in it; none where rightsizer never sizes.
    cluster = settings().cluster
    never = never_sized_reasons(cluster.namespace, cluster.excluded_namespaces).get(namespace)
    policy = None
    if w and never is None:
        policy = policy_document(
            namespace,
            kind,
            name,
            [(c.name, tuple(r for r in RESOURCES if r not in c.conflicts)) for c in w.containers],
            suggested,
        )
    return render_template(
        "dashboard/workload.html",
        namespace=namespace,
        kind=kind,
        name=name,
        workload=w,
        prices=data.prices(),
        histograms=histograms,
        history=history_charts(
            recommendation_history(db.session, namespace, kind, name),
            latest_recommendations(db.session, namespace, kind, name),
        ),
        resources=resources,
        policy=policy,
        never_sized=never,
        suggested_mode=suggested,
        conditions=conditions,
        node_groups=node_groups(db.session, namespace, kind, name),  # _node_groups.html
    )


def history_charts(
    points: list[RecommendationPoint], live: list[Recommendation]
) -> list[dict[str, Any]]:
    """Per container, CPU and memory over time (hourly points, 8 days): the usage of each hour
    (50th and 90th percentile of the samples), the target, and what the pods requested then.
    The target and the requests end at the container's recommendation as of the recommender's
    last run (`live`, when newer than the last point): the history keeps a point an hour, so a
    resize would otherwise show only at the next hourly point, up to an hour later."""
    now = {r.container: r for r in live}
    out = []
    for container, group in groupby(points, key=lambda p: p.container):
        pts = [(to_unix(p.time) or 0.0, p) for p in group]
        row = now.get(container)

        def series(attr: str, pts: list[tuple[float, Any]] = pts, row: Any = row) -> Any:
            return _to_now([(t, getattr(p, attr)) for t, p in pts], row, attr)

        out.append(
            {
                "name": container,
                "points": len(pts),
                "cpu": charts.time_chart(
                    [
                        ("usage-p90", "usage p90", [(t, p.usage_cpu_p90) for t, p in pts]),
                        ("usage-p50", "usage p50", [(t, p.usage_cpu_p50) for t, p in pts]),
                        (
                            "requested",
                            "requested",
                            series("current_cpu_request"),
                        ),
                        ("target", "target", series("target_cpu")),
                    ],
                    format.read_cpu,
                    format.when,
                    resource="cpu",
                    live_after=pts[-1][0],
                ),
                "memory": charts.time_chart(
                    [
                        ("usage-p90", "usage p90", [(t, p.usage_memory_p90) for t, p in pts]),
                        ("usage-p50", "usage p50", [(t, p.usage_memory_p50) for t, p in pts]),
                        (
                            "requested",
                            "requested",
                            series("current_memory_request"),
                        ),
                        ("target", "target", series("target_memory")),
                    ],
                    format.read_memory,
                    format.when,
                    resource="memory",
                    live_after=pts[-1][0],
                ),
            }
        )
    return out


def _to_now(
    values: list[tuple[float, int | None]], row: Recommendation | None, attr: str
) -> list[tuple[float, int | None]]:
    """`values` with the live row's value of `attr` at its time, when newer than the last."""
    last = to_unix(row.updated_at) if row is not None else None
    if row is None or last is None or not values or last <= values[-1][0]:
        return values
    return [*values, (last, getattr(row, attr))]


@bp.get("/scalers")
def scalers() -> ResponseReturnValue:
    rows = all_scalers(db.session)
    return render_template("dashboard/scalers.html", scalers=rows)


@bp.get("/nodes", endpoint="nodes")
def nodes_page() -> ResponseReturnValue:
    levels = nodes.node_levels()
    return render_template(
        "dashboard/nodes.html",
        nodes=levels,
        spread=nodes.spread(levels),
        uneven=[u for r in ("cpu", "memory") if (u := nodes.unevenness_of_use(levels, r))],
        extender=placement.extender_view(),
        spread_chart=spread_chart(load_spread(db.session)),
        share=nodes.share,
        exact_cpu=format.cpu,
        exact_memory=format.memory,
    )


@bp.get("/events")
def events() -> ResponseReturnValue:
    page_size = 50
    action = request.args.get("action") or None
    kind = request.args.get("kind") or None
    token = request.args.get("continue")
    try:
        before_id = audit_events.decode_continue(token) if token else None
    except ValueError as e:
        return error_page(PageError(400, "BadRequest", str(e)))
    where = EventFilter(action=action, object_kind=kind, before_id=before_id)
    rows, more = audit_events.page(db.session, where, page_size)
    next_url = None
    if more:
        args: dict[str, Any] = {k: v for k, v in request.args.items() if k != "continue"}
        args["continue"] = audit_events.encode_continue(rows[-1].id)
        next_url = url_for("dashboard.events", **args)
    return render_template(
        "dashboard/events.html", events=rows, action=action, kind=kind, next_url=next_url
    )


@bp.get("/fleet", endpoint="fleet")
def fleet_page() -> ResponseReturnValue:
    return render_template("dashboard/fleet.html", fleet=fleet.view(), **fleet.page_args())


@bp.get("/<path:rest>")
def unknown_page(rest: str) -> ResponseReturnValue:
    """A path under /dashboard that is no page: with a trailing slash too many, the page it
    names (a permanent redirect, query kept); else a 404 page, in HTML like every other page
    (not the API's JSON error)."""
    path = request.path.rstrip("/")
    if path != request.path and path != bp.url_prefix:
        try:
            endpoint, _ = current_app.url_map.bind("").match(path, method="GET")
        except HTTPException:
            endpoint = None
        if endpoint and endpoint != "dashboard.unknown_page":
            query = request.query_string.decode()
            return redirect(path + ("?" + query if query else ""), code=308)
    return error_page(PageError(404, "NotFound", f"no dashboard page at {request.path}"))


def init_app(app: Flask) -> None:
    app.register_blueprint(bp)

    @app.get("/")
    def root() -> ResponseReturnValue:
        return redirect(url_for("dashboard.overview"))
