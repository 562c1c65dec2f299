"""Kubernetes quantities -> rightsizer amounts: the pure parser of `app.core.quantity`, under the
names the callers in `app/kube`, `app/jobs` and `app/webhook` use.

One grammar everywhere: the one kube-apiserver accepts (`app.core.quantity`), with values at or
above int64 saturating as `Quantity.Value()` does.
"""

from __future__ import annotations

from app.core.quantity import amount as quantity_amount
from app.core.quantity import amount_float as quantity_float

__all__ = ["quantity_amount", "quantity_float"]
