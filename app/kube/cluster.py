"""The cluster as the jobs see it: informer caches plus the few direct reads (PodMetrics).

Pods are trimmed to the fields rightsizer reads and parsed once into frozen views
(app.core.pods.PodView: the jobs never read pod JSON) before they are cached; equal parts of pods
(labels, ownerReferences, containers) are kept once (`Shared`). Nodes are cached trimmed and read
as app.core.nodes.NodeView when the updater asks. Measured at 150000 pods
(benchmarks/recommender_scale.py, benchmarks/README.md): 386 MB kept by the
caches, no higher peak (the state arrives one object at a time); 1.8 KB per pod against 4.4 KB
unshared (benchmarks/pod_cache.py, results/pod-cache.txt).
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

import urllib3
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.core.nodes import NodeView
from app.core.owners import workload_of_pod
from app.core.pods import PodView
from app.core.recommend.podmetrics import PodMetrics, decode_pod_metrics_list
from app.core.sizing.node_fit import DaemonTemplate, daemon_template
from app.core.workload_key import WELL_KNOWN_GROUPS, WorkloadKey, kind_key
from app.kube.daemonsets import trim_daemonset
from app.kube.informer import Informer, Obj
from app.kube.node_views import NodeViews
from app.kube.scalable import ScalableKinds

log = logging.getLogger(__name__)

CONTROLLER_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")
POD_STATUS_FIELDS = (
    "phase",
    "conditions",
    "containerStatuses",
    "initContainerStatuses",
    "startTime",
)


# Added to every pod by the DefaultTolerationSeconds admission plugin; they concern nodes that are
# not Ready, which the updater never places a pod on: not worth their memory in the cache.
DEFAULT_TOLERATIONS = ("node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable")


def placement(spec: Obj) -> Obj:
    """What the updater's fit check reads of where a pod may run, when the pod has any."""
    out: Obj = {}
    tolerations = [
        t
        for t in spec.get("tolerations") or []
        if isinstance(t, dict) and t.get("key") not in DEFAULT_TOLERATIONS
    ]
    if tolerations:
        out["tolerations"] = tolerations
    if spec.get("nodeSelector"):
        out["nodeSelector"] = spec["nodeSelector"]
    node_affinity = ((spec.get("affinity") or {}).get("nodeAffinity")) or {}
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if required:
        out["affinity"] = {
            "nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": required}
        }
    return out


# The pod conditions the jobs read (PodView.condition): Ready, and the two of an in-place resize.
# The others (PodScheduled, Initialized, ContainersReady, PodReadyToStartContainers) are not kept;
# tests/kube/test_pod_cache.py fails when code asks for a condition missing here.
POD_CONDITIONS_READ = ("Ready", "PodResizePending", "PodResizeInProgress")
POD_METADATA_FIELDS = (
    "name",
    "namespace",
    "uid",
    "labels",
    "ownerReferences",
    "resourceVersion",
    "annotations",
    "deletionTimestamp",
)


class Shared:
    """Keeps one copy of equal JSON values: the pods of one ReplicaSet have the same labels,
    ownerReferences and containers, and each keeps a reference to that one copy. Shared values
    are never changed in place (nothing in rightsizer writes into a cached pod). The table is
    emptied when it reaches `limit` entries, so that values no pod holds any longer go too."""

    def __init__(self, limit: int = 65536) -> None:
        self.limit = limit
        self.table: dict[str, Any] = {}

    def __call__(self, value: Any) -> Any:
        if not value:
            return value
        key = json.dumps(value, sort_keys=True, separators=(",", ":"))
        found = self.table.get(key)
        if found is None:
            if len(self.table) >= self.limit:
                self.table.clear()
            self.table[key] = found = value
        return found


def _unshared(value: Any) -> Any:
    return value


def trim_pod(pod: Obj, share: Shared | None = None) -> Obj:
    """The fields rightsizer reads of a pod; with `share`, equal parts kept once (see Shared)."""
    keep: Callable[[Any], Any] = share if share is not None else _unshared
    meta = pod.get("metadata") or {}
    spec = pod.get("spec") or {}
    status = pod.get("status") or {}

    def containers(items: list[Obj] | None) -> list[Obj]:
        keep = ("name", "resources", "restartPolicy", "resizePolicy")
        return [{k: c[k] for k in keep if k in c} for c in items or []]

    trimmed_meta = {k: meta[k] for k in POD_METADATA_FIELDS if k in meta}
    for k in ("namespace", "labels", "ownerReferences", "annotations"):
        if k in trimmed_meta:
            trimmed_meta[k] = keep(trimmed_meta[k])
    trimmed_status = {k: status[k] for k in POD_STATUS_FIELDS if k in status}
    if "conditions" in trimmed_status:
        trimmed_status["conditions"] = [
            c
            for c in trimmed_status["conditions"] or []
            if isinstance(c, dict) and c.get("type") in POD_CONDITIONS_READ
        ]
    return {
        "metadata": trimmed_meta,
        "spec": {
            "nodeName": keep(spec.get("nodeName")),
            "containers": keep(containers(spec.get("containers"))),
            "initContainers": keep(containers(spec.get("initContainers"))),
            **({"resources": keep(spec["resources"])} if spec.get("resources") else {}),
            **{k: keep(v) for k, v in placement(spec).items()},
        },
        "status": trimmed_status,
    }


def pod_view(pod: Obj, share: Shared | None = None) -> PodView:
    """What the pod cache holds of a pod: its trimmed JSON, read once."""
    return PodView.parse(trim_pod(pod, share))


def trim_node(node: Obj) -> Obj:
    meta, spec, status = (
        node.get("metadata") or {},
        node.get("spec") or {},
        node.get("status") or {},
    )
    return {
        "metadata": {k: meta[k] for k in ("name", "labels", "resourceVersion") if k in meta},
        "spec": {k: spec[k] for k in ("unschedulable", "taints") if k in spec},
        "status": {
            k: status[k]
            for k in ("allocatable", "capacity", "conditions", "declaredFeatures")
            if k in status
        },
    }


def trim_daemon(obj: Obj) -> Obj:
    """A DaemonSet as trim_controller keeps a controller, and its pod template's requests and
    placement (app.kube.daemonsets.trim_daemonset): what its pods take on each node, for the
    recommendations that fit a node (app.core.sizing.node_fit)."""
    out = trim_controller(obj)
    out.setdefault("spec", {})["template"] = trim_daemonset(obj)["spec"]["template"]
    return out


def trim_controller(obj: Obj) -> Obj:
    """Only what owner resolution and existence checks need, the replicas (the updater's budget)
    and the selector (which workload a deleted pod's Prometheus history belongs to)."""
    meta = obj.get("metadata") or {}
    keep = ("name", "namespace", "uid", "ownerReferences", "resourceVersion")
    out: Obj = {"metadata": {k: meta[k] for k in keep if k in meta}}
    spec = obj.get("spec") or {}
    kept = {k: spec[k] for k in ("replicas", "selector") if k in spec}
    if kept:
        out["spec"] = kept
    return out


def _owners_moved(old: Obj | None, new: Obj | None) -> bool:
    """Whether a controller cache's event changes what the owner walk reads of it: the
    controller came or went, or its ownerReferences changed."""
    if old is None or new is None:
        return True
    return bool(_owner_refs(old) != _owner_refs(new))


def _owner_refs(obj: Obj) -> Any:
    meta = obj.get("metadata")
    return meta.get("ownerReferences") if isinstance(meta, Mapping) else None


class ClusterView:
    def __init__(self, api: client.ApiClient) -> None:
        self.api = api
        core, apps, batch = client.CoreV1Api(api), client.AppsV1Api(api), client.BatchV1Api(api)
        hpa = client.AutoscalingV2Api(api)
        shared = Shared()  # one per cache: the informer's thread is its only user
        self.pods = Informer(
            "pods", core.list_pod_for_all_namespaces, transform=lambda p: pod_view(p, shared)
        )
        self.controllers: dict[str, Informer[Obj]] = {
            "Deployment": Informer(
                "deployments", apps.list_deployment_for_all_namespaces, transform=trim_controller
            ),
            "ReplicaSet": Informer(
                "replicasets", apps.list_replica_set_for_all_namespaces, transform=trim_controller
            ),
            "StatefulSet": Informer(
                "statefulsets", apps.list_stateful_set_for_all_namespaces, transform=trim_controller
            ),
            "DaemonSet": Informer(
                "daemonsets", apps.list_daemon_set_for_all_namespaces, transform=trim_daemon
            ),
            "Job": Informer("jobs", batch.list_job_for_all_namespaces, transform=trim_controller),
            "CronJob": Informer(
                "cronjobs", batch.list_cron_job_for_all_namespaces, transform=trim_controller
            ),
        }
        self.hpas = Informer("hpas", hpa.list_horizontal_pod_autoscaler_for_all_namespaces)
        self.nodes = Informer("nodes", core.list_node, transform=trim_node)
        self._node_views = NodeViews(self.nodes)  # each node parsed once while unchanged
        self.custom = client.CustomObjectsApi(api)
        for inf in self.controllers.values():
            inf.counts = _owners_moved  # owners_version
        # Kinds beyond the six above are workloads when they have a /scale subresource: listed
        # in the background (at start, every 5 minutes, and when a new kind shows up).
        self.scalable = ScalableKinds(api)

    @property
    def informers(self) -> list[Informer[Any]]:
        return [self.pods, self.nodes, *self.controllers.values(), self.hpas]

    def start(self) -> ClusterView:
        for inf in self.informers:
            inf.start()
        self.scalable.start()
        return self

    def stop(self) -> None:
        self.scalable.stop()
        for inf in self.informers:  # signal every one first: their watches close together
            inf.stop(join=False)
        for inf in self.informers:
            inf.join(timeout=2)

    def wait_synced(self, timeout: float) -> bool:
        """The caches listed, and discovery tried once (until then no kind beyond the six is
        known to be a workload: a run now would key their pods by the wrong controller)."""
        deadline = time.monotonic() + timeout
        synced = all(inf.wait_synced(timeout) for inf in self.informers)
        return synced and self.scalable.wait_attempted(max(0.0, deadline - time.monotonic()))

    def stale(self) -> list[str]:
        """The caches not following the server right now (see Informer.live)."""
        return [inf.name for inf in self.informers if not inf.live()]

    def wait_live(self, timeout: float) -> list[str]:
        """Waits up to timeout for every cache to follow the server; returns those that do not
        (a watch is re-opened every few minutes: a run may start in that instant)."""
        deadline = time.monotonic() + timeout
        while (stale := self.stale()) and time.monotonic() < deadline:
            time.sleep(0.05)
        return stale

    def daemon_templates(self) -> list[DaemonTemplate]:
        """Every cached DaemonSet's pod template: what its pods request, where they may run."""
        return [t for obj in self.controllers["DaemonSet"].items() if (t := daemon_template(obj))]

    def lookup(self, namespace: str, kind: str, name: str) -> Obj | None:
        inf = self.controllers.get(kind)
        return inf.get(namespace, name) if inf else None

    def workload_of(self, pod: PodView) -> WorkloadKey | None:
        return workload_of_pod(pod.wire, lookup=self.lookup, scalable=self.scalable)

    def owners_version(self) -> tuple[int, ...]:
        """What the owner walk (`workload_of`) reads besides the pod, as counts that change
        after it does: each controller cache's full syncs and the events that add or remove a
        controller or change its ownerReferences (_owners_moved: a status update leaves it), and
        discovery's scalable kinds. Read before a walk, an equal reading later means the walk
        would answer the same for the same pod (app.core.owner_memo carries its answers across
        runs then)."""
        return (*(inf.changes for inf in self.controllers.values()), self.scalable.version)

    def node_views(self) -> list[NodeView]:
        """The cached nodes, read for the updater's fit check (a few thousand at most: read at
        each run; the scaler counts the JSON itself, app.core.scaling.proportional)."""
        return self._node_views.views()

    def workload_exists(self, w: WorkloadKey) -> bool:
        """From the caches for the six kinds; any other through its Scale (one GET). A Scale the
        API server cannot give now counts as existing: nothing is deleted on an error."""
        if w.kind in WELL_KNOWN_GROUPS:
            inf = self.controllers.get(w.kind)
            return inf is not None and inf.get(w.namespace, w.name) is not None
        try:
            return self.scale_of(w) is not None
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            log.warning("cannot read the scale of %s (%s): kept", w, e)
            return True

    def replicas_source(self, w: WorkloadKey) -> Obj | None:
        """What holds a workload's configured `spec.replicas`: its cached object, or for another
        scalable kind its Scale (None when it cannot be read now)."""
        if w.kind in WELL_KNOWN_GROUPS:
            return self.lookup(w.namespace, w.kind, w.name)
        try:
            return self.scale_of(w)
        except (ApiException, urllib3.exceptions.HTTPError) as e:
            log.warning("cannot read the scale of %s (%s)", w, e)
            return None

    def scale_of(self, w: WorkloadKey) -> Obj | None:
        """The autoscaling/v1 Scale of a workload of a scalable kind (its replicas); None for the
        six cached kinds, an unknown kind, or an object that does not exist."""
        if w.kind in WELL_KNOWN_GROUPS:
            return None
        return self.scalable.scale(w.namespace, w.group, w.resource_kind, w.name)

    def pod_metrics(self) -> list[PodMetrics]:
        """PodMetrics of every namespace, as metrics-server serves them: the fields the
        recommender reads, decoded from the raw JSON (app.core.recommend.podmetrics: about a
        third of json.loads' time for the 55 MB a 150,000-pod cluster sends each run)."""
        resp: Any = self.custom.list_cluster_custom_object(
            "metrics.k8s.io", "v1beta1", "pods", _preload_content=False
        )
        return decode_pod_metrics_list(resp.data)

    def node_metrics(self) -> list[Obj]:
        """NodeMetrics of every node, as raw JSON (a few thousand small objects); [] when the
        metrics API is not served (no metrics-server)."""
        try:
            resp: Any = self.custom.list_cluster_custom_object(
                "metrics.k8s.io", "v1beta1", "nodes", _preload_content=False
            )
        except ApiException as e:
            if e.status in (404, 503):
                return []
            raise
        items = json.loads(resp.data).get("items")
        return items if isinstance(items, list) else []

    def hpa_conflicts(self) -> dict[WorkloadKey, dict[str, str]]:
        """Workloads an HPA scales on CPU or memory: resizing them would fight the HPA."""
        out: dict[WorkloadKey, dict[str, str]] = {}
        for hpa in self.hpas.items():
            meta, spec = hpa.get("metadata") or {}, hpa.get("spec") or {}
            ref = spec.get("scaleTargetRef") or {}
            if not ref.get("kind") or not ref.get("name"):
                continue
            group = str(ref.get("apiVersion") or "").rpartition("/")[0]
            w = WorkloadKey(meta.get("namespace") or "", kind_key(group, ref["kind"]), ref["name"])
            for metric in spec.get("metrics") or []:
                src: dict[str, Any] = (
                    metric.get("resource") or metric.get("containerResource") or {}
                )
                res = src.get("name")
                if metric.get("type") in ("Resource", "ContainerResource") and res in (
                    "cpu",
                    "memory",
                ):
                    out.setdefault(w, {})[res] = (
                        f"HorizontalPodAutoscaler {meta.get('name')} scales it on {res}"
                    )
        return out


def workloads_with_pods(api: client.ApiClient, timeout: float = 30) -> set[WorkloadKey]:
    """The workloads that have pods now (what the recommender will learn), from one sync of the
    same caches the jobs use."""
    view = ClusterView(api).start()
    try:
        if not view.wait_synced(timeout):
            raise TimeoutError(f"caches not synced within {timeout:.0f}s")
        return {w for pod in view.pods.items() if (w := view.workload_of(pod)) is not None}
    finally:
        view.stop()
