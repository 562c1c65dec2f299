"""The API resources the simulator serves, as discovery and URL routing see them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ResourceType:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    short_names: tuple[str, ...] = ()
    has_status: bool = True
    # Subresources beyond `status`, each served by a dedicated handler.
    subresources: tuple[str, ...] = ()
    # Served from the usage model rather than the store (metrics.k8s.io).
    computed: bool = False

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """`pods` or `leases.coordination.k8s.io`: how error messages name a resource."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def list_kind(self) -> str:
        return f"{self.kind}List"


_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]

# The kinds whose registry declares the "all" category (rest.CategoriesProvider in
# pkg/registry/core/pod/storage, apps/*/storage, batch/{job,cronjob}/storage,
# autoscaling/horizontalpodautoscaler/storage): what `kubectl get all` lists.
_CATEGORY_ALL = {
    ("", "pods"),
    ("apps", "deployments"),
    ("apps", "replicasets"),
    ("apps", "statefulsets"),
    ("apps", "daemonsets"),
    ("batch", "jobs"),
    ("batch", "cronjobs"),
    ("autoscaling", "horizontalpodautoscalers"),
}

RESOURCES: tuple[ResourceType, ...] = (
    ResourceType("", "v1", "namespaces", "Namespace", False, ("ns",)),
    ResourceType("", "v1", "nodes", "Node", False, ("no",)),
    ResourceType(
        "", "v1", "pods", "Pod", True, ("po",), subresources=("eviction", "resize", "log")
    ),
    ResourceType("", "v1", "events", "Event", True, ("ev",), has_status=False),
    ResourceType("", "v1", "limitranges", "LimitRange", True, ("limits",), has_status=False),
    ResourceType("", "v1", "configmaps", "ConfigMap", True, ("cm",), has_status=False),
    ResourceType("", "v1", "secrets", "Secret", True, has_status=False),
    ResourceType(
        "apps", "v1", "deployments", "Deployment", True, ("deploy",), subresources=("scale",)
    ),
    ResourceType("apps", "v1", "replicasets", "ReplicaSet", True, ("rs",), subresources=("scale",)),
    ResourceType(
        "apps", "v1", "statefulsets", "StatefulSet", True, ("sts",), subresources=("scale",)
    ),
    ResourceType("apps", "v1", "daemonsets", "DaemonSet", True, ("ds",)),
    ResourceType("apps", "v1", "controllerrevisions", "ControllerRevision", True, has_status=False),
    ResourceType("batch", "v1", "jobs", "Job", True),  # stored only: no Job controller
    ResourceType("batch", "v1", "cronjobs", "CronJob", True, ("cj",)),
    ResourceType(
        "autoscaling", "v2", "horizontalpodautoscalers", "HorizontalPodAutoscaler", True, ("hpa",)
    ),
    ResourceType("policy", "v1", "poddisruptionbudgets", "PodDisruptionBudget", True, ("pdb",)),
    ResourceType("coordination.k8s.io", "v1", "leases", "Lease", True, has_status=False),
    ResourceType(
        "admissionregistration.k8s.io",
        "v1",
        "mutatingwebhookconfigurations",
        "MutatingWebhookConfiguration",
        False,
        has_status=False,
    ),
    ResourceType(
        "metrics.k8s.io", "v1beta1", "pods", "PodMetrics", True, has_status=False, computed=True
    ),
    ResourceType(
        "metrics.k8s.io", "v1beta1", "nodes", "NodeMetrics", False, has_status=False, computed=True
    ),
)

_BY_PATH = {(r.group, r.version, r.plural): r for r in RESOURCES}
_BY_KIND = {r.kind: r for r in RESOURCES if not r.computed}


def lookup(group: str, version: str, plural: str) -> ResourceType | None:
    return _BY_PATH.get((group, version, plural))


def by_kind(kind: str) -> ResourceType | None:
    return _BY_KIND.get(kind)


POD = _BY_KIND["Pod"]
NODE = _BY_KIND["Node"]
NAMESPACE = _BY_KIND["Namespace"]
EVENT = _BY_KIND["Event"]
DEPLOYMENT = _BY_KIND["Deployment"]
REPLICASET = _BY_KIND["ReplicaSet"]
STATEFULSET = _BY_KIND["StatefulSet"]
DAEMONSET = _BY_KIND["DaemonSet"]
CONTROLLERREVISION = _BY_KIND["ControllerRevision"]
PDB = _BY_KIND["PodDisruptionBudget"]
WEBHOOKS = _BY_KIND["MutatingWebhookConfiguration"]
LIMITRANGE = _BY_KIND["LimitRange"]


def groups() -> dict[str, list[str]]:
    """Named API groups and their versions, for `/apis` discovery."""
    out: dict[str, list[str]] = {}
    for r in RESOURCES:
        if r.group and r.version not in out.setdefault(r.group, []):
            out[r.group].append(r.version)
    return out


def api_resource_list(group: str, version: str) -> dict[str, Any] | None:
    """The APIResourceList served at `/api/v1` or `/apis/{group}/{version}`."""
    found = [r for r in RESOURCES if r.group == group and r.version == version]
    if not found:
        return None
    items: list[dict[str, Any]] = []
    for r in found:
        verbs = ["get", "list"] if r.computed else _VERBS
        items.append(
            {
                "name": r.plural,
                "singularName": r.kind.lower(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": verbs,
                "shortNames": list(r.short_names),
            }
        )
        if (r.group, r.plural) in _CATEGORY_ALL:
            items[-1]["categories"] = ["all"]
        if r.has_status and not r.computed:
            items.append(
                {
                    "name": f"{r.plural}/status",
                    "singularName": "",
                    "namespaced": r.namespaced,
                    "kind": r.kind,
                    "verbs": ["get", "patch", "update"],
                }
            )
        for sub in r.subresources:
            # A subresource of another group's kind names that group and version, as
            # kube-apiserver's discovery does (kubectl drain looks for pods/eviction with
            # group policy to evict rather than delete).
            gv, kind, verbs = {
                "eviction": (("policy", "v1"), "Eviction", ["create"]),
                "scale": (("autoscaling", "v1"), "Scale", ["get", "patch", "update"]),
                "resize": (None, "Pod", ["get", "patch", "update"]),
                "log": (None, "Pod", ["get"]),
            }[sub]
            entry: dict[str, Any] = {
                "name": f"{r.plural}/{sub}",
                "singularName": "",
                "namespaced": r.namespaced,
            }
            if gv is not None:
                entry["group"], entry["version"] = gv
            items.append({**entry, "kind": kind, "verbs": verbs})
    return {
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": f"{group}/{version}" if group else version,
        "resources": items,
    }
