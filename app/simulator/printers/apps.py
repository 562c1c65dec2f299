"""apps/v1 printers: deployments, replica sets, stateful sets, daemon sets, re-derived from
kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (printDeployment,
printReplicaSet, printStatefulSet, printDaemonSet, printControllerRevision and their column
definitions)."""

from __future__ import annotations

from app.simulator.printers.common import (
    AGE,
    CONTAINERS,
    IMAGES,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    format_label_selector,
    format_labels,
    integer,
    layout_containers,
    name,
    section,
    selector_string,
    wide_selector,
)


def deployment_cells(d: Obj, now: float) -> Cells:
    spec, status = section(d, "spec"), section(d, "status")
    names, images = layout_containers(spec)
    selector = selector_string(spec.get("selector"))
    return [
        name(d),
        f"{integer(status.get('readyReplicas'))}/{integer(spec.get('replicas'))}",
        integer(status.get("updatedReplicas")),
        integer(status.get("availableReplicas")),
        age(d, now),
        names,
        images,
        "<invalid>" if selector is None else selector,
    ]


DEPLOYMENTS = Printer(
    (
        NAME,
        Column("Ready", "string", "Ready replicas out of the desired replicas."),
        Column("Up-to-date", "string", "Replicas that run the current template."),
        Column("Available", "string", "Replicas ready for at least minReadySeconds."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide_selector("The label query over the deployment's pods."),
    ),
    deployment_cells,
)


def replicaset_cells(rs: Obj, now: float) -> Cells:
    spec, status = section(rs, "spec"), section(rs, "status")
    names, images = layout_containers(spec)
    return [
        name(rs),
        integer(spec.get("replicas")),
        integer(status.get("replicas")),
        integer(status.get("readyReplicas")),
        age(rs, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


REPLICASETS = Printer(
    (
        NAME,
        Column("Desired", "integer", "The replicas the spec asks for."),
        Column("Current", "integer", "The replicas that exist."),
        Column("Ready", "integer", "The replicas that are ready."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide_selector("The label query over the replica set's pods."),
    ),
    replicaset_cells,
)


def statefulset_cells(sts: Obj, now: float) -> Cells:
    spec, status = section(sts, "spec"), section(sts, "status")
    names, images = layout_containers(spec)
    ready = f"{integer(status.get('readyReplicas'))}/{integer(spec.get('replicas'))}"
    return [name(sts), ready, age(sts, now), names, images]


STATEFULSETS = Printer(
    (
        NAME,
        Column("Ready", "string", "Ready replicas out of the desired replicas."),
        AGE,
        CONTAINERS,
        IMAGES,
    ),
    statefulset_cells,
)


def daemonset_cells(ds: Obj, now: float) -> Cells:
    spec, status = section(ds, "spec"), section(ds, "status")
    names, images = layout_containers(spec)
    return [
        name(ds),
        integer(status.get("desiredNumberScheduled")),
        integer(status.get("currentNumberScheduled")),
        integer(status.get("numberReady")),
        integer(status.get("updatedNumberScheduled")),
        integer(status.get("numberAvailable")),
        format_labels(section(ds, "spec", "template", "spec").get("nodeSelector")),
        age(ds, now),
        names,
        images,
        format_label_selector(spec.get("selector")),
    ]


DAEMONSETS = Printer(
    (
        NAME,
        Column("Desired", "integer", "Nodes that should run the daemon pod."),
        Column("Current", "integer", "Nodes that run at least one daemon pod."),
        Column("Ready", "integer", "Nodes whose daemon pod is ready."),
        Column("Up-to-date", "integer", "Nodes that run the current template."),
        Column("Available", "integer", "Nodes whose daemon pod is available."),
        Column("Node Selector", "string", "The node labels the pods require."),
        AGE,
        CONTAINERS,
        IMAGES,
        wide_selector("The label query over the daemon set's pods."),
    ),
    daemonset_cells,
)


def controllerrevision_cells(cr: Obj, now: float) -> Cells:
    """printControllerRevision: the controller as `<kind>.<group>/<name>`, lower-cased."""
    ref = next(
        (r for r in cr["metadata"].get("ownerReferences") or [] if r.get("controller")), None
    )
    controller = "<none>"
    if ref is not None:
        group = ref.get("apiVersion", "").rpartition("/")[0]
        kind = f"{ref.get('kind', '')}.{group}" if group else ref.get("kind", "")
        controller = f"{kind.lower()}/{ref.get('name', '')}"
    return [name(cr), controller, integer(cr.get("revision")), age(cr, now)]


CONTROLLERREVISIONS = Printer(
    (
        NAME,
        Column("Controller", "string", "Controller of the object."),
        Column("Revision", "integer", "Revision of the ControllerRevision."),
        AGE,
    ),
    controllerrevision_cells,
)

PRINTERS = {
    "ControllerRevision": CONTROLLERREVISIONS,
    "Deployment": DEPLOYMENTS,
    "ReplicaSet": REPLICASETS,
    "StatefulSet": STATEFULSETS,
    "DaemonSet": DAEMONSETS,
}
