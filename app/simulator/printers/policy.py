"""policy/v1 printer: pod disruption budgets, re-derived from kubernetes/kubernetes
`pkg/printers/internalversion/printers.go` (printPodDisruptionBudget and its columns)."""

from __future__ import annotations

from app.simulator.printers.common import (
    AGE,
    NAME,
    Cells,
    Column,
    Obj,
    Printer,
    age,
    int_or_string,
    integer,
    name,
    section,
)


def pdb_cells(pdb: Obj, now: float) -> Cells:
    spec = section(pdb, "spec")
    min_available, max_unavailable = spec.get("minAvailable"), spec.get("maxUnavailable")
    return [
        name(pdb),
        "N/A" if min_available is None else int_or_string(min_available),
        "N/A" if max_unavailable is None else int_or_string(max_unavailable),
        integer(section(pdb, "status").get("disruptionsAllowed")),
        age(pdb, now),
    ]


PDBS = Printer(
    (
        NAME,
        Column("Min Available", "string", "Pods that must stay available (number or percent)."),
        Column("Max Unavailable", "string", "Pods that may be unavailable (number or percent)."),
        Column("Allowed Disruptions", "integer", "Evictions the budget allows right now."),
        AGE,
    ),
    pdb_cells,
)

PRINTERS = {"PodDisruptionBudget": PDBS}
