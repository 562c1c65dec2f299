"""CPU startup boost (VPA 1.7's alpha CPUStartupBoost), no I/O: what the webhook gives a new
pod's CPU on top of its sizing, and when and to what the updater brings it back.

Re-derived from kubernetes/autoscaler vertical-pod-autoscaler 1.7:
- pkg/admission-controller/resource/pod/patch/resource_updates.go (applyCPUStartupBoost,
  calculateBoostedCPUValue, capStartupBoostToContainerLimit, getContainerStartupBoostPolicy):
  the boost of a container is its own (or the `*`) container policy's, else the policy's; Factor
  multiplies the base request, Quantity adds to it (VPA adds, whatever types.go says); the base
  is the request being set, else the pod's own; `--max-allowed-cpu-boost` caps the result; with
  RequestsAndLimits the limit keeps its ratio to the request, with RequestsOnly the request stays
  1m below the limit; containers with mode Off are not boosted, even in updateMode Off (which
  boosts).
- pkg/utils/vpa/api.go (GetExpiredStartupCPUBoostAnnotations, getContainerCPUStartupBoostDuration):
  a boost expires when the pod is Ready and, unless its duration is 0, more than
  `durationSeconds` have passed since its Ready condition's lastTransitionTime.
- pkg/updater/inplace/resource_updates.go: the boosted containers are resized in place.

rightsizer differs where VPA could hurt: the boost never lowers a request (VPA's max cap and its
limit - 1m could), it stays within the LimitRanges and pod-level resources as every value the
webhook sets (app.core.sizing.values.resize; a pod the boost would make unacceptable keeps its
sizing without it), and the unboosted values are those the webhook computed, kept in one
annotation (BOOST_ANNOTATION) rather than VPA's one per container.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from app.core.bodies import ContainerResize, ResizeBody
from app.core.pods import PodView
from app.core.policy import Policy
from app.core.quantity import amount_or_none
from app.core.recommendation import policy_for_container
from app.core.resources import format_cpu
from app.core.sizing.values import Bounds, Slot, resize
from app.core.update_policy import FACTOR, StartupBoost
from app.core.wire import section

BOOST_ANNOTATION = "rightsizer.io/startup-boost"

# Per container, what it holds without the boost: {"requests": {"cpu": m}, "limits": {"cpu": m}}
Unboosted = dict[str, dict[str, dict[str, int]]]


def boost_for(policy: Policy, container: str) -> StartupBoost | None:
    """The container's boost: its container policy's (own entry, else `*`), else the policy's;
    None for a container whose mode is Off."""
    cp = policy_for_container(list(policy.container_policies), container)
    if cp.mode == "Off":
        return None
    names = {c.container_name for c in policy.container_policies}
    entry = container if container in names else "*" if "*" in names else None
    own = policy.container_boosts.get(entry) if entry is not None else None
    return own or policy.startup_boost


def has_boost(policy: Policy) -> bool:
    """The policy boosts some container (VPA's HasStartupBoost)."""
    return policy.startup_boost is not None or bool(policy.container_boosts)


def boosted_cpu(base: int, boost: StartupBoost, max_boost: int | None = None) -> int:
    """The boosted request in millicores: never below `base`, at most `max_boost` unless the base
    is already higher."""
    factor, added = (boost.factor or 1, 0) if boost.type == FACTOR else (1, boost.quantity or 0)
    value = base * factor + added
    if max_boost is not None:
        value = min(value, max_boost)
    return max(value, base)


@dataclass(frozen=True)
class BoostOptions:
    """The webhook's part: RIGHTSIZER_MAX_CPU_BOOST in millicores (None: no cap)."""

    max_cpu: int | None = None


def recorded(annotations: Mapping[str, Any]) -> Unboosted:
    """The annotation's entries (an earlier pass's, or the one the pod was created with); garbage
    reads as none."""
    text = annotations.get(BOOST_ANNOTATION)
    if not text:
        # nearly every pod: no annotation. json.loads("") raised and was caught for each, 5-10
        # us a pod in every updater run (the boosts it removes), and as much in the webhook
        return {}
    try:
        doc = json.loads(text)
    except (ValueError, TypeError, RecursionError):
        return {}
    if not isinstance(doc, dict):
        return {}
    out: Unboosted = {}
    for name, entry in doc.items():
        if not isinstance(entry, dict):
            continue
        values: dict[str, dict[str, int]] = {}
        for part in ("requests", "limits"):
            cpu = amount_or_none("cpu", section(entry, part).get("cpu"))
            values[part] = {"cpu": cpu} if cpu is not None else {}
        if values["requests"]:
            out[str(name)] = values
    return out


def annotation_value(unboosted: Unboosted) -> str:
    doc = {
        name: {s: {r: format_cpu(v) for r, v in vals.items()} for s, vals in entry.items() if vals}
        for name, entry in sorted(unboosted.items())
    }
    return json.dumps(doc, sort_keys=True, separators=(",", ":"))


def apply_boost(
    slots: Sequence[Slot],
    policy: Policy,
    bounds: Bounds,
    annotations: Mapping[str, Any],
    options: BoostOptions,
) -> Unboosted:
    """Raises the CPU of each boosted container (regular containers, as VPA boosts) on top of
    what sizing left in `slots`; returns what each holds without the boost."""
    previous = recorded(annotations)
    out: Unboosted = {}
    for slot in slots:
        boost = boost_for(policy, slot.name) if slot.list_name == "containers" else None
        if boost is None:
            continue
        if slot.name in previous:  # a re-invocation: the pod carries the boost already
            base = previous[slot.name]
        else:
            request, limit = slot.final("cpu")
            base = {
                "requests": {"cpu": request} if request is not None else {},
                "limits": {"cpu": limit} if limit is not None else {},
            }
        base_request = base["requests"].get("cpu", 0)
        want = boosted_cpu(base_request, boost, options.max_cpu)
        if want <= base_request or want <= 0:
            continue
        saved = (dict(slot.new_requests), dict(slot.new_limits), list(slot.notes))
        resize(slot, "cpu", want, bounds)
        _keep_below_limit(slot, base_request)
        got = slot.new_requests.get("cpu")
        if got is None or got <= base_request:
            slot.new_requests, slot.new_limits, slot.notes = saved  # no room to boost
            continue
        slot.notes.append(f"cpu boosted at start ({boost.type})")
        out[slot.name] = base
    return out


def _keep_below_limit(slot: Slot, base: int) -> None:
    """RequestsOnly: a boosted request stays 1m below the limit (VPA keeps the QoS class so),
    and never below what it was."""
    if slot.scale_limit:
        return
    _, limit = slot.before("cpu")
    request = slot.new_requests.get("cpu")
    if limit and request is not None and request >= limit and limit > 1:
        slot.new_requests["cpu"] = max(base, limit - 1)


def revert_boost(slots: Sequence[Slot], unboosted: Unboosted) -> None:
    """Puts the boosted containers back to their unboosted CPU (when the boost would make the pod
    unacceptable to kube-apiserver)."""
    for slot in slots:
        entry = unboosted.get(slot.name)
        if entry is None:
            continue
        for part, target in (("requests", slot.new_requests), ("limits", slot.new_limits)):
            have = slot.requests if part == "requests" else slot.limits
            value = entry[part].get("cpu")
            if value is None or have.get("cpu") == value:
                target.pop("cpu", None)
            else:
                target["cpu"] = value
        slot.notes = [n for n in slot.notes if not n.startswith("cpu boosted")]


# --- the updater's part ---------------------------------------------------------------------


def boosted(pod: PodView) -> Unboosted:
    """The pod's boosted containers, with what each holds without the boost."""
    meta = pod.wire.get("metadata")
    # plain dicts as parsed go without the ABC checks (read for every pod of every updater run)
    if type(meta) is not dict and not isinstance(meta, Mapping):
        return {}
    annotations = meta.get("annotations")
    if type(annotations) is not dict and not isinstance(annotations, Mapping):
        return {}
    return recorded(annotations)


def boost_duration(policy: Policy, container: str) -> int:
    """VPA's getContainerCPUStartupBoostDuration: the container policy's, else the policy's, else
    0 (a pod boosted under a policy that dropped its boost is brought down at once)."""
    boost = boost_for(policy, container)
    return boost.duration_seconds if boost is not None else 0


def expired(pod: PodView, policy: Policy, now: float) -> list[str]:
    """The boosted containers whose boost is over: the pod is Ready, and its duration (0: at once)
    has passed since it became Ready."""
    ready = pod.condition("Ready")
    if ready is None or not pod.is_running:
        return []
    since = ready.since
    out = []
    for name in sorted(boosted(pod)):
        duration = boost_duration(policy, name)
        if duration == 0 or (since is not None and now - since > duration):
            out.append(name)
    return out


def unboost_body(pod: PodView, containers: Sequence[str]) -> tuple[ResizeBody, dict[str, Any]]:
    """The resize that removes the boost of `containers`, and the audit details (before/after)."""
    entries = boosted(pod)
    resources = pod.resources()
    resizes = []
    before: dict[str, Any] = {}
    after: dict[str, Any] = {}
    for name in containers:
        entry, current = entries.get(name), resources.get(name)
        if entry is None or current is None:
            continue
        resizes.append(ContainerResize(name, dict(entry["requests"]), dict(entry["limits"])))
        before[name] = {
            "requests": {"cpu": current.cpu_request} if current.cpu_request is not None else {},
            "limits": {"cpu": current.cpu_limit} if current.cpu_limit is not None else {},
        }
        after[name] = {"requests": dict(entry["requests"]), "limits": dict(entry["limits"])}
    return ResizeBody(tuple(resizes)), {"before": before, "after": after, "boost": "removed"}


def remaining(pod: PodView, removed: Sequence[str]) -> str | None:
    """The annotation once `removed` are unboosted; None when nothing is left (remove it)."""
    left = {n: v for n, v in boosted(pod).items() if n not in removed}
    return annotation_value(left) if left else None
