"""One AdmissionReview in, one answer out: the webhook's hot path, free of Flask.

It reads only the in-process cache (no database, no API server), and it fails open: whatever goes
wrong on our side (cache empty or stale, a bug) answers `allowed: true` without a patch, is logged
and counted, because a pod created unsized is better than a pod not created. Only a request that
is not an AdmissionReview for a pod gets an error status (400, or 413 when over 3 MiB); with
`failurePolicy: Ignore` kube-apiserver creates the pod anyway.

A pod with a request or limit that is not a valid quantity (`cpu: "-1"`) is answered `allowed:
true` without a patch, the reason in an audit annotation: mutating webhooks run before
kube-apiserver validates the pod, so its validation then refuses the pod with its own message,
and no webhook failure is logged for it (an error status would be one per such pod).

Pods of excluded namespaces (`kube-system`, rightsizer's own, `RIGHTSIZER_EXCLUDED_NAMESPACES`) are
left alone here too, not only by the configuration's namespaceSelector: a hand-edited or stale
MutatingWebhookConfiguration must not let rightsizer size its own pods or the control plane's.

`dryRun` requests get the same answer; only they are not counted in the audit trail's per-workload
mutation counts (app.webhook.audit), the webhook's one side effect, written in the background.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

from app.core.node_groups import target_node_name
from app.core.owners import Lookup, Scalable, workload_of_pod
from app.core.quantity import parse_amount
from app.core.sizing.boost import BoostOptions
from app.core.sizing.limitrange import LimitRangeItem
from app.core.sizing.patch import UNFIT, PodInvalid, PodPatch, QuantityInvalid
from app.core.sizing.patch_cache import NO_RECOMMENDATIONS, PatchCache
from app.web.error_body import error_body
from app.webhook.audit import MutationCounter
from app.webhook.cache import WebhookCache
from app.webhook.metrics import FAILED_OPEN, REVIEWS
from app.webhook.node_fit import NodeFit
from app.webhook.placement import Placement, placement_for
from app.webhook.review import (
    MAX_BODY_BYTES,
    PodReview,
    ReviewInvalid,
    answer,
    encode_patch,
    parse_review,
)
from app.webhook.sources import ClusterSources

log = logging.getLogger(__name__)

# seconds after a process's first review started its cache thread during which reviews wait for
# the cache's first load (app.webhook.cache)
FIRST_LOAD_WAIT = 1.0
WARN_EVERY = 10.0  # seconds between two log lines about failing open for the same reason

LimitRanges = Callable[[str], Sequence[LimitRangeItem]]  # namespace -> its LimitRange items
NodeLabels = Callable[[str], Mapping[str, str] | None]  # node name -> its labels (None: unknown)


class Webhook:
    """The /mutate logic. `limit_ranges` and `owner_lookup` come from informers when there are
    some (`sources` sets them in each process on its first review); without them LimitRanges are
    not applied and pods are resolved to workloads from their own ownerReferences only."""

    def __init__(
        self,
        cache: WebhookCache,
        *,
        autostart: bool = True,
        limit_ranges: LimitRanges | None = None,
        owner_lookup: Lookup | None = None,
        scalable: Scalable | None = None,
        sources: ClusterSources | None = None,
        mutations: MutationCounter | None = None,
        excluded_namespaces: Collection[str] = (),
        boost: BoostOptions | None = None,
        placement_scheduler: str = "",
    ) -> None:
        self.cache = cache
        self.boost = boost or BoostOptions()  # the CPU startup boost's cap
        self.patches = PatchCache(parse=parse_amount, boost=self.boost)
        self._encodings: dict[int, tuple[PodPatch, str]] = {}  # id -> (PodPatch, its encoding)
        self.autostart = autostart
        self.limit_ranges = limit_ranges
        self.owner_lookup = owner_lookup
        self.scalable = scalable  # which kinds have /scale (None: every controller counts)
        self.node_labels: NodeLabels | None = None  # a node's labels (DaemonSets per node group)
        self.node_sync: Callable[[float], bool] | None = None  # waits for the first listing
        self.node_fit: NodeFit | None = None  # caps a pod to fit a node (app.webhook.node_fit)
        self.sources = sources
        self.mutations = mutations  # pods patched, counted per workload for the audit trail
        self.excluded_namespaces = frozenset(excluded_namespaces)  # never sized, whatever is sent
        # `placement: waterLevel` pods get this scheduler (app.webhook.placement); "": off
        self.placement_scheduler = placement_scheduler
        self._last_warning = -WARN_EVERY

    def admit(self, body: bytes) -> tuple[int, dict[str, Any]]:
        """(HTTP status, JSON body) for a request body (read up to MAX_BODY_BYTES + 1)."""
        if len(body) > MAX_BODY_BYTES:
            REVIEWS.labels("too_large").inc()
            return 413, too_large()
        try:
            review = parse_review(body)
        except ReviewInvalid as e:
            REVIEWS.labels("invalid").inc()
            return 400, error_body("BadRequest", str(e))
        try:
            result, capped, placement = self._patch(review)
        except QuantityInvalid as e:
            REVIEWS.labels("invalid_quantity").inc()
            log.debug("review %s: pod left unchanged (invalid quantity): %s", review.uid, e)
            reason = {"left-unchanged": f"invalid-quantity: {e}"[:1024]}
            return 200, dict(answer(review.api_version, review.uid, None, reason))
        except PodInvalid as e:
            REVIEWS.labels("invalid").inc()
            return 400, error_body("BadRequest", f"request.object: {e}")
        except Exception:
            log.exception("webhook failed on review %s; allowing the pod unchanged", review.uid)
            FAILED_OPEN.labels("internal_error").inc()
            REVIEWS.labels("failed_open").inc()
            return 200, dict(answer(review.api_version, review.uid))
        if result is None:
            REVIEWS.labels("failed_open").inc()
            return 200, dict(answer(review.api_version, review.uid))
        unfit = result.reason == UNFIT
        REVIEWS.labels(
            "patched" if result.changed or placement else "unfit" if unfit else "unchanged"
        ).inc()
        if result.changed:
            log.debug("review %s: %s", review.uid, result.updates)
        elif result.detail:
            log.debug(
                "review %s: pod left unchanged (%s): %s", review.uid, result.reason, result.detail
            )
        # A pod left unsized because no sizing would pass the API server's checks says so in the
        # audit log of its creation (the webhook's answer), not only in a debug line here.
        audit = {"left-unchanged": f"{result.reason}: {result.detail}"[:1024]} if unfit else None
        if capped is not None and result.changed:  # sized below its recommendation: says why
            audit = {"capped-to-node": capped[:1024]}
        if placement is not None:  # the sizing patch is shared (cached): a new list
            audit = {**(audit or {}), "placement": placement.note[:1024]}
            operations = [*result.operations, *placement.operations]
            return 200, dict(answer(review.api_version, review.uid, operations, audit))
        encoded = self._encoded(result) if result.changed else None
        return 200, dict(
            answer(review.api_version, review.uid, result.operations, audit, encoded=encoded)
        )

    def _encoded(self, result: PodPatch) -> str:
        """The patch as the response carries it, encoded once per cached PodPatch (each entry
        keeps its PodPatch alive, so its id names no other)."""
        found = self._encodings.get(id(result))
        if found is not None and found[0] is result:
            return found[1]
        text = encode_patch(result.operations)
        if len(self._encodings) >= self.patches.size:
            self._encodings = {}
        self._encodings[id(result)] = (result, text)
        return text

    def start(self, wait: float = 0.0) -> None:
        """Starts this process's background threads unless they run (cheap when they do)."""
        self.cache.start(wait=wait)
        if self.sources is not None:
            self.sources.start(wait=wait)
            if self.sources.limit_ranges is not None and self.sources.owners is not None:
                self.limit_ranges = self.sources.limit_ranges
                self.owner_lookup = self.sources.owners
            if self.sources.nodes is not None and self.node_labels is None:
                self.node_labels, self.node_sync = (
                    self.sources.nodes,
                    self.sources.nodes.wait_synced,
                )
            nodes, daemons = self.sources.nodes, self.sources.daemonsets
            if nodes is not None and daemons is not None and self.node_fit is None:
                self.node_fit = NodeFit(nodes, daemons)
            kinds = self.sources.scalable
            if kinds is not None and kinds.listed:  # before its first listing: every kind counts
                self.scalable = kinds
            # pods are sized by the rules of the API server's release (pod-level resources)
            self.patches.release = self.sources.release

    def stop(self) -> None:
        self.cache.stop()
        if self.sources is not None:
            self.sources.stop()
        if self.mutations is not None:
            self.mutations.flush()

    def _warn_failing_open(self, state: str) -> None:
        """At most one line per WARN_EVERY seconds: at 1000 pods/s a line each would flood."""
        now = time.monotonic()
        if now - self._last_warning >= WARN_EVERY:
            self._last_warning = now
            log.warning(
                "webhook %s: allowing pods unchanged (counted in "
                "rightsizer_webhook_failed_open_total)",
                state.replace("_", " "),
            )

    def patch_for(self, review: PodReview) -> PodPatch | None:
        """The patch, or None when the cache cannot be trusted (counted as failed open)."""
        return self._patch(review)[0]

    def _patch(self, review: PodReview) -> tuple[PodPatch | None, str | None, Placement | None]:
        """patch_for's answer, why the pod's recommendations were capped to fit a node (None
        when they were not), and what sends it to the water-level scheduler (None: nothing)."""
        if review.operation != "CREATE" or review.pod is None:
            return PodPatch((), "not-a-create"), None, None
        if self.autostart:
            self.start(wait=FIRST_LOAD_WAIT)
        snapshot, state = self.cache.state()
        if snapshot is None:
            FAILED_OPEN.labels(state).inc()
            self._warn_failing_open(state)
            return None, None, None
        pod = review.pod
        meta = pod.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise PodInvalid("metadata is not an object")
        namespace = review.namespace or (meta or {}).get("namespace") or "default"
        if not isinstance(namespace, str):
            raise PodInvalid("metadata.namespace is not a string")
        if namespace in self.excluded_namespaces:
            return PodPatch((), "excluded-namespace"), None, None
        workload = workload_of_pod(pod, namespace, self.owner_lookup, self.scalable)
        if workload is None:
            return PodPatch((), "no-workload"), None, None
        labels = (meta or {}).get("labels")
        policy = snapshot.policy_for(workload, labels if isinstance(labels, dict) else {})
        if policy is None:
            return PodPatch((), "no-policy"), None, None
        recommendations = snapshot.recommendations.get(workload, NO_RECOMMENDATIONS)
        groups = snapshot.node_groups_of(workload, policy)
        if groups is not None:  # a DaemonSet sized per node group: the group of its node
            recommendations, _ = groups.for_node(self._node_of(pod), recommendations)
        capped = None
        if self.node_fit is not None:
            own = (workload.namespace, workload.name) if workload.kind == "DaemonSet" else None
            recommendations, capped = self.node_fit.cap(pod, recommendations, own)
        result = self.patches.build_patch(  # pods of one template: computed once
            pod,
            recommendations,
            policy,
            self.limit_ranges(namespace) if self.limit_ranges else (),
            excluded=snapshot.excluded.get(workload),
        )
        placement = placement_for(pod, policy, self.placement_scheduler, result.operations)
        if (result.changed or placement) and not review.dry_run and self.mutations is not None:
            self.mutations.count(
                workload,
                policy.name,
                bool(result.boosted),
                sized=result.changed,
                placed=placement is not None,
            )
        return result, capped, placement

    def _node_of(self, pod: dict[str, Any]) -> Mapping[str, str] | None:
        """The labels of the node the pod is for (the DaemonSet controller names it in the pod's
        node affinity: app.core.node_groups.target_node_name); None when unknown. While this
        process's node cache has not listed yet (its first seconds), a pod waits for it, at most
        FIRST_LOAD_WAIT: else the pods a rollout creates then would all get the DaemonSet-wide
        size, and the updater would replace them again."""
        node = target_node_name(pod)
        if node is None or self.node_labels is None:
            return None
        labels = self.node_labels(node)
        if labels is None and self.node_sync is not None and self.node_sync(FIRST_LOAD_WAIT):
            labels = self.node_labels(node)
        return labels


def too_large() -> dict[str, object]:
    return error_body(
        "RequestEntityTooLarge", f"an AdmissionReview is at most {MAX_BODY_BYTES} bytes"
    )
