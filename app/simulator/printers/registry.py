"""Which printer prints which kind: kube-apiserver registers its printers per type
(pkg/printers/internalversion AddHandlers), metrics-server its own convertor; every other kind
gets apiserver's default table convertor (Name, Created At), and custom resources that of
apiextensions-apiserver (`pkg/registry/customresource/tableconvertor`: Name and, for a definition
without additionalPrinterColumns, Age)."""

from __future__ import annotations

from app.simulator.printers import (
    admissionregistration,
    apps,
    autoscaling,
    batch,
    coordination,
    core,
    metrics,
    policy,
)
from app.simulator.printers.common import AGE, DEFAULT, NAME, Column, Printer, age, name

_BY_GROUP: dict[str, dict[str, Printer]] = {
    "": core.PRINTERS,
    "apps": apps.PRINTERS,
    "batch": batch.PRINTERS,
    "autoscaling": autoscaling.PRINTERS,
    "policy": policy.PRINTERS,
    "coordination.k8s.io": coordination.PRINTERS,
    "admissionregistration.k8s.io": admissionregistration.PRINTERS,
    "metrics.k8s.io": metrics.PRINTERS,
}


# The groups kube-apiserver itself serves without printers of their own.
_BUILT_IN_DEFAULT = frozenset({"apiextensions.k8s.io"})
# A custom resource's columns: Name, then the definition's printer columns, by default Age (a
# "date" column the convertor prints as a human duration).
CUSTOM = Printer(
    (NAME, Column("Age", "date", AGE.description)),
    lambda obj, now: [name(obj), age(obj, now)],
)


def printer_for(group: str, kind: str) -> Printer:
    """The printer of `kind` in API group `group` ("" for core)."""
    if group not in _BY_GROUP and group not in _BUILT_IN_DEFAULT:
        return CUSTOM
    return _BY_GROUP.get(group, {}).get(kind, DEFAULT)
