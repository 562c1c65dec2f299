"""The API resources the simulator serves, as discovery and URL routing see them."""

from __future__ import annotations

import threading
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True, slots=True)
class ScalePaths:
    """A CustomResourceDefinition's `subresources.scale`: where Scale's fields live in the object
    (`.spec.replicas`, `.status.replicas`, `.status.selector` or None)."""

    spec_replicas: str
    status_replicas: str
    label_selector: str | None = None


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
    # Custom resources (a CustomResourceDefinition's): the paths of its scale subresource, its
    # singular name and categories as the definition names them.
    scale_paths: ScalePaths | None = None
    singular: str = ""
    categories: tuple[str, ...] = ()
    custom: bool = False

    # One resource is one (group, version, plural), whatever its definition says today: a
    # CustomResourceDefinition's update (a scale subresource added) must find the same objects.
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ResourceType):
            return NotImplemented
        return (self.group, self.version, self.plural) == (other.group, other.version, other.plural)

    def __hash__(self) -> int:
        return hash((self.group, self.version, self.plural))

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
        "apiextensions.k8s.io",
        "v1",
        "customresourcedefinitions",
        "CustomResourceDefinition",
        False,
        ("crd", "crds"),
    ),
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
CRD = _BY_KIND["CustomResourceDefinition"]


def groups(resources: tuple[ResourceType, ...] = RESOURCES) -> dict[str, list[str]]:
    """Named API groups and their versions, for `/apis` discovery."""
    out: dict[str, list[str]] = {}
    for r in resources:
        if r.group and r.version not in out.setdefault(r.group, []):
            out[r.group].append(r.version)
    return out


def api_resource_list(
    group: str, version: str, resources: tuple[ResourceType, ...] = RESOURCES
) -> dict[str, Any] | None:
    """The APIResourceList served at `/api/v1` or `/apis/{group}/{version}`."""
    found = [r for r in resources if r.group == group and r.version == version]
    if not found:
        return None
    items: list[dict[str, Any]] = []
    for r in found:
        verbs = ["get", "list"] if r.computed else _VERBS
        items.append(
            {
                "name": r.plural,
                "singularName": r.singular or r.kind.lower(),
                "namespaced": r.namespaced,
                "kind": r.kind,
                "verbs": verbs,
                "shortNames": list(r.short_names),
            }
        )
        if (r.group, r.plural) in _CATEGORY_ALL:
            items[-1]["categories"] = ["all"]
        elif r.categories:
            items[-1]["categories"] = list(r.categories)
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


class Registry:
    """The resources one API server serves: the built-in ones and those its
    CustomResourceDefinitions add (apiserver/crd.py), which come and go with them. Each simulated
    cluster has its own, so that a definition created in one never shows in another."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._custom: dict[tuple[str, str, str], ResourceType] = {}  # (group, version, plural)
        self._schemas: dict[tuple[str, str, str], dict[str, Any]] = {}  # openAPIV3Schema

    def all(self) -> tuple[ResourceType, ...]:
        with self._lock:
            return RESOURCES + tuple(self._custom.values())

    def stored(self) -> tuple[ResourceType, ...]:
        return tuple(r for r in self.all() if not r.computed)

    def lookup(self, group: str, version: str, plural: str) -> ResourceType | None:
        found = _BY_PATH.get((group, version, plural))
        if found is not None:
            return found
        with self._lock:
            return self._custom.get((group, version, plural))

    def by_kind(self, kind: str, api_version: str | None = None) -> ResourceType | None:
        """The stored resource of `kind`; with an apiVersion (an ownerReference's, a manifest's),
        only the one of that group and version."""
        builtin = _BY_KIND.get(kind)
        if builtin is not None and (api_version is None or builtin.api_version == api_version):
            return builtin
        with self._lock:
            for r in self._custom.values():
                if r.kind == kind and (api_version is None or r.api_version == api_version):
                    return r
        return None

    def by_group_kind(self, group: str, kind: str) -> ResourceType | None:
        with self._lock:
            return next(
                (r for r in self._custom.values() if (r.group, r.kind) == (group, kind)), None
            )

    def groups(self) -> dict[str, list[str]]:
        return groups(self.all())

    def serves(self, group: str, version: str) -> bool:
        return any(r.group == group and r.version == version for r in self.all())

    def api_resource_list(self, group: str, version: str) -> dict[str, Any] | None:
        return api_resource_list(group, version, self.all())

    def schema(self, rt: ResourceType) -> dict[str, Any]:
        """A custom resource's structural schema ({} for the built-in kinds)."""
        with self._lock:
            return self._schemas.get((rt.group, rt.version, rt.plural), {})

    def define(
        self,
        group: str,
        plural: str,
        served: list[ResourceType],
        schemas: dict[str, dict[str, Any]] | None = None,
    ) -> list[ResourceType]:
        """The resources of one definition (`<plural>.<group>`) are now `served`, with their
        schemas by version; returns those it served before and serves no more."""
        with self._lock:
            before = {k: r for k, r in self._custom.items() if (k[0], k[2]) == (group, plural)}
            for key in before:
                del self._custom[key]
                self._schemas.pop(key, None)
            for r in served:
                key = (r.group, r.version, r.plural)
                self._custom[key] = r
                self._schemas[key] = (schemas or {}).get(r.version, {})
            return [r for k, r in before.items() if k not in self._custom]
