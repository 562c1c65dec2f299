"""A policy's `target`: one workload (`kind`, `name`, and `apiVersion` for a kind beyond the six
rightsizer knows by name), or every workload of the namespace whose pod template matches a label
`selector`.

A workload of another kind is any controller with a `/scale` subresource (an Argo Rollout, an
OpenShift DeploymentConfig, an operator's custom resource), found as VPA finds it (app.core.owners):
its target names the group through `apiVersion` (`argoproj.io/v1alpha1`), and it is stored and
matched as its GroupKind, `Rollout.argoproj.io` (app.core.workload_key.kind_key). The document
keeps `apiVersion` and `selector` as written (the policy's `target_options` column).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from app.core.job_families import FAMILY_KIND, FAMILY_LABEL
from app.core.policy import CLUSTER_WIDE, TARGET_KINDS
from app.core.selectors import LabelSelector
from app.core.workload_key import WELL_KNOWN_GROUPS, WorkloadKey, kind_key
from app.documents.fields import FieldError, unknown_fields
from app.documents.selector import parse_selector

TARGET_FIELDS = {"kind", "name", "apiVersion", "selector"}
_DNS_SUBDOMAIN = re.compile(
    r"(?=.{1,253}\Z)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*"
)
_KIND = re.compile(r"[A-Za-z]([-A-Za-z0-9]{0,61}[A-Za-z0-9])?")  # a DNS-1035 label, any case
_VERSION = re.compile(r"[a-z]([-a-z0-9]{0,61}[a-z0-9])?")


@dataclass(frozen=True)
class Target:
    kind: str | None = None  # a WorkloadKey's kind
    name: str | None = None
    selector: LabelSelector | None = None
    options: dict[str, Any] | None = None  # apiVersion and selector as written, for the row


def parse_target(doc: Any, namespace: Any, errors: list[FieldError]) -> Target:
    """The target of a policy document (absent: the whole namespace, or the cluster)."""
    if doc is None:
        return Target()
    if not isinstance(doc, dict):
        errors.append(
            FieldError("target", "must be an object with kind and name, or with a selector")
        )
        return Target()
    errors += unknown_fields(doc, TARGET_FIELDS, "target")
    if "selector" in doc:
        for key in sorted({"kind", "name", "apiVersion"} & set(doc)):
            errors.append(
                FieldError(
                    f"target.{key}",
                    "a target is one workload (kind and name) or a selector, not both",
                )
            )
        selector = parse_selector(doc["selector"], "target.selector", errors)
        return Target(selector=selector, options={"selector": doc["selector"]})
    return _workload(doc, namespace, errors)


def _workload(doc: dict[str, Any], namespace: Any, errors: list[FieldError]) -> Target:
    kind, name, api_version = doc.get("kind"), doc.get("name"), doc.get("apiVersion")
    group = _group(api_version, errors)
    if kind in TARGET_KINDS:
        if group is not None and group != WELL_KNOWN_GROUPS[str(kind)]:
            errors.append(
                FieldError(
                    "target.apiVersion",
                    f"a {kind} is {WELL_KNOWN_GROUPS[str(kind)]}/v1; another group's kind of the "
                    "same name is not a target rightsizer can tell apart",
                )
            )
    elif not isinstance(kind, str) or not _KIND.fullmatch(kind):
        errors.append(
            FieldError(
                "target.kind",
                f"must be one of {', '.join(TARGET_KINDS)}, or the kind of a controller with a "
                "/scale subresource together with its target.apiVersion",
            )
        )
    elif api_version is None and kind == FAMILY_KIND:
        errors.append(
            FieldError(
                "target.kind",
                f"a Job family is no kind: select its pods by their label, target.selector "
                f'{{matchLabels: {{{FAMILY_LABEL}: NAME}}}} (docs/policies.md, "Job families")',
            )
        )
    elif api_version is None:
        errors.append(
            FieldError(
                "target.kind",
                f"must be one of {', '.join(TARGET_KINDS)}; a {kind} is a target only with its "
                "target.apiVersion (any controller with a /scale subresource is, e.g. "
                "apiVersion argoproj.io/v1alpha1 for an Argo Rollout)",
            )
        )
    if not isinstance(name, str) or not _DNS_SUBDOMAIN.fullmatch(name):
        errors.append(FieldError("target.name", "required: the workload's name"))
    if namespace == CLUSTER_WIDE:
        errors.append(
            FieldError(
                "target",
                "a cluster default (namespace '*') cannot have a target naming a workload "
                "(a selector can)",
            )
        )
    options = {"apiVersion": api_version} if api_version is not None else None
    if not isinstance(kind, str) or not isinstance(name, str):
        return Target(options=options)
    return Target(kind_key(group or "", kind), name, options=options)


def _group(api_version: Any, errors: list[FieldError]) -> str | None:
    """The group of `group/version` (or "" for `v1`); None when absent or bad (reported)."""
    if api_version is None:
        return None
    if isinstance(api_version, str):
        group, _, version = api_version.rpartition("/")
        if _VERSION.fullmatch(version) and (group == "" or _DNS_SUBDOMAIN.fullmatch(group)):
            return group
    errors.append(
        FieldError("target.apiVersion", "must be group/version (e.g. argoproj.io/v1alpha1) or v1")
    )
    return None


def target_columns(doc: dict[str, Any]) -> dict[str, Any]:
    """The policy row's target columns for a valid document."""
    target = parse_target(doc.get("target"), doc.get("namespace"), [])
    return {
        "target_kind": target.kind,
        "target_name": target.name,
        "target_options": target.options,
    }


def target_document(
    kind: str | None, name: str | None, options: dict[str, Any] | None
) -> dict[str, Any] | None:
    """The target as written, from the row's columns."""
    options = options or {}
    if kind:
        doc: dict[str, Any] = {"kind": WorkloadKey("", kind, "").resource_kind, "name": name}
        if "apiVersion" in options:
            doc["apiVersion"] = options["apiVersion"]
        return doc
    if "selector" in options:
        return {"selector": options["selector"]}
    return None
