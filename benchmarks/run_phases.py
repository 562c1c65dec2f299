"""Where a recommender run's time goes: exclusive wall time per step, for the scale benchmark.

`Phases.wrap(owner, attribute, label)` replaces a method or function on one object (the job
instance, its cluster view, or the module whose global the job calls) with a timed one until
`restore()`; a generator's time is counted at each item it yields. Times are exclusive: a step
timed inside another (the estimation, a generator consumed by the save) is taken out of the
outer one, so the steps add up to what was timed and "other" is the rest of the run. A step
called in another thread (the PodMetrics LIST, read in the background while the run goes on) is
counted apart, under its label with BACKGROUND in front: its time overlaps the run's own steps,
so it is not part of their sum.
"""

from __future__ import annotations

import functools
import inspect
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

BACKGROUND = "[in the background] "


class Phases:
    def __init__(self) -> None:
        self.seconds: dict[str, float] = {}
        self._stack: list[float] = []  # time spent in nested timed steps, per open step
        self._wrapped: list[tuple[Any, str, Any]] = []
        self._thread = threading.get_ident()  # the run's: steps of other threads go apart

    def _timed(self, label: str, fn: Callable[[], Any]) -> Any:
        if threading.get_ident() != self._thread:
            began = time.perf_counter()
            try:
                return fn()
            finally:
                label = BACKGROUND + label
                spent = time.perf_counter() - began
                self.seconds[label] = self.seconds.get(label, 0.0) + spent
        self._stack.append(0.0)
        began = time.perf_counter()
        try:
            return fn()
        finally:
            spent = time.perf_counter() - began
            nested = self._stack.pop()
            self.seconds[label] = self.seconds.get(label, 0.0) + spent - nested
            if self._stack:
                self._stack[-1] += spent

    def wrap(self, owner: Any, attribute: str, label: str) -> None:
        """Times `owner.attribute` under `label`; nothing when the owner has no such attribute
        (an earlier commit's job, run side by side as a baseline, lacks later steps)."""
        original = getattr(owner, attribute, None)
        if original is None:
            return
        phases = self

        if inspect.isgeneratorfunction(original):

            @functools.wraps(original)
            def timed_generator(*args: Any, **kwargs: Any) -> Iterator[Any]:
                items = original(*args, **kwargs)
                while True:
                    try:
                        item = phases._timed(label, lambda: next(items))
                    except StopIteration:
                        return
                    yield item

            setattr(owner, attribute, timed_generator)
        else:

            @functools.wraps(original)
            def timed_call(*args: Any, **kwargs: Any) -> Any:
                return phases._timed(label, lambda: original(*args, **kwargs))

            setattr(owner, attribute, timed_call)
        self._wrapped.append((owner, attribute, original))

    def take(self) -> dict[str, float]:
        """The times so far, cleared for the next run."""
        out, self.seconds = self.seconds, {}
        return out

    def restore(self) -> None:
        for owner, attribute, original in reversed(self._wrapped):
            setattr(owner, attribute, original)
        self._wrapped.clear()


def recommender_phases(job: Any) -> Phases:
    """The steps of app.jobs.recommender.RecommenderJob._run, timed on `job` (and the module
    functions it calls: the save, the gauges' count)."""
    import app.jobs.recommender as module

    phases = Phases()
    phases.wrap(job.cluster, "pod_metrics", "PodMetrics fetched and parsed")  # in a thread
    phases.wrap(job, "_await_metrics", "PodMetrics waited for")
    phases.wrap(job.conditions, "live_pods", "live pods found (while PodMetrics are read)")
    phases.wrap(job, "_tune", "policies' strategies (tune)")
    phases.wrap(job, "_feed_metrics", "samples fed to the model")
    phases.wrap(job, "_feed_ooms", "OOM kills read")
    phases.wrap(job, "_forget_deleted_pods", "deleted pods forgotten")
    phases.wrap(job, "_forget_restarts", "restart counts forgotten")
    phases.wrap(job, "_results", "estimation (recommendations, checkpoints)")
    phases.wrap(module, "save_all", "rows and history saved")
    phases.wrap(job.conditions, "publish", "conditions computed and saved")
    phases.wrap(job, "_save_node_groups", "node groups saved")
    phases.wrap(job, "_collect_garbage", "gone workloads collected")
    phases.wrap(module, "count_recommendations", "gauges counted")
    return phases
