"""The workload of each pod, found once per pod template in a run instead of once per pod.

`workload_of_pod` (app/core/owners.py) reads, of a pod, only its namespace, its controller
reference, its `pod-template-hash` label (when the ReplicaSet is not cached) and its
`rightsizer.io/job-family` label (a bare Job's family, app.core.job_families); every other
step reads the cached controllers. Pods that agree on those have the same workload for as
long as the caches do not move, so a memo kept for one run (the recommender's: 150,000 pods,
a few thousand templates) answers as the walk would, and so does the next run's, handed
the answers while the caches have not moved (`version`: ClusterView.owners_version, counts of
the controller caches' events and of discovery's changes). A pod without a controller
reference (the walk's answer is then None, at once), or whose owner fields are not plain
strings, is resolved on its own, memoised by its view only.
"""

from __future__ import annotations

from collections.abc import Callable

from app.core.job_families import FAMILY_LABEL
from app.core.pods import PodView
from app.core.workload_key import WorkloadKey

MemoKey = tuple[str, str | None, str | None, str | None, str | None, str | None]


def memo_key(pod: PodView) -> MemoKey | None:
    """What of the pod its workload depends on; None when the pod has no controller reference
    or a field is not what the API sends (plain dicts, lists and strings: the check is by exact
    type, as this runs for every pod of every run)."""
    meta = pod.wire.get("metadata")
    if type(meta) is not dict:
        return None
    refs = meta.get("ownerReferences")
    if type(refs) is not list:
        return None
    for ref in refs:
        if type(ref) is not dict:
            return None  # the walk skips it: leave it to the walk
        if ref.get("controller"):
            break
    else:
        return None
    labels = meta.get("labels")
    if labels is not None and type(labels) is not dict:
        return None
    key = (
        pod.namespace,
        ref.get("apiVersion"),
        ref.get("kind"),
        ref.get("name"),
        labels.get("pod-template-hash") if labels else None,
        labels.get(FAMILY_LABEL) if labels else None,
    )
    for field in key:
        if field is not None and type(field) is not str:
            return None
    return key


class WorkloadMemo:
    """`resolve` (the cluster's owner walk) asked once per memo key; forgotten with the memo.
    A pod view asked about again (the run reads each pod twice: its metrics, its conditions)
    gets its answer by identity, without reading its fields again.

    `keys`, when given, holds the workload keys already in use (each mapped to itself): an
    answer equal to one of them is handed back as that very object, and a new one is added. The
    recommender passes its model's keys, so the lookups keyed by workload in every sample's path
    find their key by identity instead of comparing it field by field (a walk builds a new,
    equal key each run).

    `earlier`, the memo of the previous run, lends the memo keys of the pod views it was asked
    about: a view the informer kept (the same object: its fields did not change) has the same
    memo key, so it is not read again. Its answers carry over too, by view and by memo key, when
    `version` (what the walk reads besides the pod: ClusterView.owners_version, read before this
    run asks anything) equals the earlier memo's: no owner cache nor discovery moved since that
    memo was built, so a walk would answer the same. Otherwise every answer is this memo's own
    (an unchanged pod's workload moves when its owners do: a ReplicaSet adopted or orphaned).
    `release` lets go of the earlier memo's views once the run no longer asks."""

    def __init__(
        self,
        resolve: Callable[[PodView], WorkloadKey | None],
        keys: dict[WorkloadKey, WorkloadKey] | None = None,
        earlier: WorkloadMemo | None = None,
        version: object = None,
    ) -> None:
        self.resolve = resolve
        self.keys = keys
        self.version = version
        carried = earlier is not None and version is not None and earlier.version == version
        self.known: dict[MemoKey, WorkloadKey | None] = (
            earlier.known if carried and earlier is not None else {}
        )
        # by the view's id: the view (its id is its own while it is held), its answer, its memo
        # key. Three maps, not a tuple per view: the tuples, 150,000 of them, were most of what
        # a run leaves for the first collection after it (the recommender pauses the collector
        # during a run: app.core.gcpause), and a map is one object to it
        self.views: dict[int, PodView] = {}
        self.answers: dict[int, WorkloadKey | None] = {}
        self.memo_keys: dict[int, MemoKey | None] = {}
        # the earlier memo's views, their memo keys and, when carried, their answers
        self.earlier: tuple[
            dict[int, PodView], dict[int, MemoKey | None], dict[int, WorkloadKey | None] | None
        ] = (
            (earlier.views, earlier.memo_keys, earlier.answers if carried else None)
            if earlier is not None
            else ({}, {}, None)
        )

    def release(self) -> None:
        self.earlier = ({}, {}, None)

    def _resolve(self, pod: PodView) -> WorkloadKey | None:
        w = self.resolve(pod)
        if w is not None and self.keys is not None:
            w = self.keys.setdefault(w, w)
        return w

    def __call__(self, pod: PodView) -> WorkloadKey | None:
        i = id(pod)
        if self.views.get(i) is pod:  # the view is held: its id is still its own
            return self.answers[i]
        views, keys, answers = self.earlier
        if views.get(i) is pod:
            key = keys[i]
            if answers is not None:  # the same view, owners unchanged: the same answer
                self.views[i] = pod
                w = self.answers[i] = answers[i]
                self.memo_keys[i] = key
                return w
        else:
            key = memo_key(pod)
        if key is None:
            w = self._resolve(pod)
        elif key in self.known:
            w = self.known[key]
        else:
            w = self.known[key] = self._resolve(pod)
        self.views[i] = pod
        self.answers[i] = w
        self.memo_keys[i] = key
        return w
