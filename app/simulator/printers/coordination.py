"""coordination.k8s.io/v1 printer: leases, re-derived from kubernetes/kubernetes
`pkg/printers/internalversion/printers.go` (printLease and its columns)."""

from __future__ import annotations

from app.simulator.printers.common import AGE, NAME, Cells, Column, Obj, Printer, age, name, section


def lease_cells(lease: Obj, now: float) -> Cells:
    holder = section(lease, "spec").get("holderIdentity")
    return [name(lease), "" if holder is None else str(holder), age(lease, now)]


LEASES = Printer(
    (NAME, Column("Holder", "string", "The identity holding the lease."), AGE), lease_cells
)

PRINTERS = {"Lease": LEASES}
