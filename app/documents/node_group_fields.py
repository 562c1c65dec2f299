"""The policy field that sizes a DaemonSet per node group (docs/policies.md, "Node groups"):

- `nodeGroupLabel`: a node label key (e.g. `node.kubernetes.io/instance-type`), validated as
  Kubernetes validates a label key (apimachinery's IsQualifiedName: an optional DNS-subdomain
  prefix and `/`, then at most 63 alphanumerics, `-`, `_` or `.`, starting and ending with an
  alphanumeric). The DaemonSets the policy governs get a recommendation per value of that label
  on their pods' nodes (app.core.node_groups); other workloads are sized as a whole, so a policy
  whose target names another kind than DaemonSet may not set it.

Stored as written, in the policy row's `node_group_label` column.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from app.core.node_groups import GROUPED_KINDS
from app.documents.fields import FieldError
from app.documents.selector import label_key_problem

NODE_GROUP_FIELDS = ("nodeGroupLabel",)


def parse_node_group_label(
    doc: Mapping[str, Any], target_kind: str | None, errors: list[FieldError]
) -> str | None:
    """The policy's grouping label (None when it has none); problems go to `errors`."""
    label = doc.get("nodeGroupLabel")
    if label is None:
        return None
    problem = label_key_problem(label)
    if problem is not None:
        errors.append(FieldError("nodeGroupLabel", f"must be a node label key: {problem}"))
        return None
    if target_kind is not None and target_kind not in GROUPED_KINDS:
        errors.append(
            FieldError(
                "nodeGroupLabel",
                f"only a DaemonSet's pods are sized per node group; target.kind is {target_kind}",
            )
        )
        return None
    return str(label)


def node_group_document(label: str | None) -> dict[str, Any]:
    """The field back from the column (nothing when not written)."""
    return {} if label is None else {"nodeGroupLabel": label}
