"""What a policy write warns about: a target rightsizer cannot act on, or that does not exist now.

The write itself succeeds (a policy may come before its namespace or workload, as a
VerticalPodAutoscaler may come before its Deployment); the answer carries these sentences as HTTP
`Warning` headers, as kube-apiserver answers a request that succeeded with something to say
(`299 - "text"`, RFC 7234 section 5.5, k8s.io/apiserver `pkg/warning`), and the CLI prints them.

- A namespace never sized (kube-system, rightsizer's own, RIGHTSIZER_EXCLUDED_NAMESPACES: the
  webhook configuration keeps their pods out and the updater leaves them alone): the policy will
  never act, whatever exists.
- A namespace, or a named workload, that the cluster says does not exist now.
- A cluster that could not be asked: said so, rather than silence read as "all is well".

Pure: the cluster's answers come in as `TargetFacts` (app.kube.targets asks).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from app.core.policy import CLUSTER_WIDE
from app.core.workload_key import WorkloadKey


@dataclass(frozen=True)
class TargetFacts:
    """What the cluster said of a policy's target; None: not asked, or it could not tell."""

    namespace_exists: bool | None = None
    workload_exists: bool | None = None
    unchecked: str | None = None  # why the cluster could not tell, when it could not


def policy_warnings(
    namespace: str,
    target: WorkloadKey | None,
    never_sized: Mapping[str, str],
    facts: TargetFacts | None,
) -> list[str]:
    """The warnings of a policy of `namespace` for `target` (None: a selector, or the whole
    namespace). `never_sized`: namespace -> why rightsizer leaves it alone."""
    if namespace == CLUSTER_WIDE:
        return []
    why = never_sized.get(namespace)
    if why is not None:
        return [f"namespace {namespace} is never sized ({why}): this policy will not act"]
    if facts is None:
        return []
    if facts.unchecked is not None:
        return [f"the target was not checked in the cluster: {facts.unchecked}"]
    if facts.namespace_exists is False:
        return [f"namespace {namespace} does not exist: this policy acts once it is created"]
    if target is not None and facts.workload_exists is False:
        return [
            f"{target.resource_kind} {namespace}/{target.name} does not exist: this policy acts "
            "once it is created"
        ]
    return []


def never_sized_reasons(own: str, excluded: frozenset[str]) -> dict[str, str]:
    """namespace -> why it is never sized, for `policy_warnings` (own: rightsizer's namespace)."""
    out = {ns: "excluded by RIGHTSIZER_EXCLUDED_NAMESPACES" for ns in excluded}
    out[own] = "rightsizer's own namespace"
    out["kube-system"] = "the webhook configuration always keeps it out"
    return out


def warning_header(text: str) -> str:
    """One `Warning` header value as kube-apiserver writes it: `299 - "text"`, the text a quoted
    string (backslash and double quote escaped; control characters, which a header cannot carry,
    as spaces)."""
    clean = "".join(" " if ord(c) < 32 or ord(c) == 127 else c for c in text)
    quoted = clean.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{quoted}"'


_WARNING = re.compile(r'\s*(\d{3}) +\S+ +"((?:[^"\\]|\\.)*)"(?: +"[^"]*")?\s*(?:,|$)')


def warning_texts(values: list[str]) -> list[str]:
    """The texts of `Warning` header values (several may share one value, comma-separated, as
    HTTP allows): what kubectl prints as `Warning: text`. A value not in that form is kept
    whole."""
    out = []
    for value in values:
        pos, found = 0, []
        while pos < len(value) and (m := _WARNING.match(value, pos)):
            found.append(re.sub(r"\\(.)", r"\1", m.group(2)))
            pos = m.end()
        out += found if found and pos >= len(value) else [value]
    return out
