"""Which printer prints which kind: kube-apiserver registers its printers per type
(pkg/printers/internalversion AddHandlers), metrics-server its own convertor; every other kind
gets apiserver's default table convertor (Name, Created At)."""

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
from app.simulator.printers.common import DEFAULT, Printer

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


def printer_for(group: str, kind: str) -> Printer:
    """The printer of `kind` in API group `group` ("" for core)."""
    return _BY_GROUP.get(group, {}).get(kind, DEFAULT)
