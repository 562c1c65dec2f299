"""admissionregistration.k8s.io/v1 printer: mutating webhook configurations, re-derived from
kubernetes/kubernetes `pkg/printers/internalversion/printers.go` (printMutatingWebhook)."""

from __future__ import annotations

from app.simulator.printers.common import AGE, NAME, Cells, Column, Obj, Printer, age, items, name


def webhooks_cells(config: Obj, now: float) -> Cells:
    return [name(config), len(items(config.get("webhooks"))), age(config, now)]


MUTATING_WEBHOOKS = Printer(
    (NAME, Column("Webhooks", "integer", "How many webhooks the configuration holds."), AGE),
    webhooks_cells,
)

PRINTERS = {"MutatingWebhookConfiguration": MUTATING_WEBHOOKS}
