"""Resizes a Kubernetes release is known to refuse, so the updater evicts at once instead.

From kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateContainerResize):
in 1.33, unless a container's memory resizePolicy is RestartContainer, a resize may neither add
a memory limit ("implicitly decreasing the memory limit from 'max'") nor lower one. 1.34 dropped
both checks (kubernetes/kubernetes PR 133012, "Support reducing memory limits": the kubelet
checks usage instead; v1.34.4's validateContainerResize only refuses removing requests or
limits). Sending such a resize to 1.33 only earns a 422, run after run.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ResizeCheck:
    """One container of a planned resize: its memory limit before and after, and its memory
    resizePolicy (None: not set, i.e. NotRequired)."""

    name: str
    memory_limit_before: int | None
    memory_limit_after: int | None
    memory_restart_policy: str | None = None


def known_refusal(minor: int | None, containers: list[ResizeCheck]) -> str | None:
    """Why Kubernetes 1.`minor` would refuse the resize, or None when it may accept it (or the
    version is unknown: then the API server's answer decides)."""
    if minor is None:
        return None
    for c in containers:
        if c.memory_restart_policy not in (None, "", "NotRequired"):
            continue
        before, after = c.memory_limit_before, c.memory_limit_after
        if minor >= 34:
            continue
        if after is not None and before is None:
            return (
                f"Kubernetes 1.{minor} refuses to add a memory limit to container {c.name} in "
                "place (resizePolicy NotRequired)"
            )
        if after is not None and before is not None and after < before:
            return (
                f"Kubernetes 1.{minor} refuses to lower the memory limit of container {c.name} "
                "in place (resizePolicy NotRequired)"
            )
    return None
