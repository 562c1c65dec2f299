"""The VPA recommender's rounding of a recommendation, before the policy caps it.

Re-derived from kubernetes/autoscaler vertical-pod-autoscaler:
- pkg/recommender/model/types.go `ResourcesAsResourceList` and `RoundUpToScale`: every amount of
  the recommendation (target, lower and upper bound, uncapped target) is rounded up to a multiple
  of `--round-cpu-millicores` and `--round-memory-bytes` (here the settings
  `round_cpu_millicores`, `round_memory_bytes`); a zero amount stays zero.
- pkg/recommender/routines/cpu_integer_post_processor.go `IntegerCPUPostProcessor`: for the
  containers that opt in (VPA: the `vpa-post-processor.kubernetes.io/{container}_integerCPU`
  annotation; here a container policy's `integerCPU: true`) the CPU of all four is rounded up to
  whole cores, for kubelet's static CPU manager policy.
- main.go: the capping post-processor (minAllowed/maxAllowed) always comes last, so a bound the
  policy sets is kept exactly as written.

An amount saturated at int64 (an upper bound without history) stays saturated: it means
"unbounded", and rounding it up would overflow.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from app.core.recommend.estimator import Estimates
from app.core.resources import MAX_AMOUNT

Array = Any


def round_up_to_scale(value: int, scale: int) -> int:
    """The smallest multiple of `scale` at or above `value` (VPA `RoundUpToScale`), exactly."""
    return int(rounded_up(np.array([value], dtype=np.int64), scale)[0])


def rounded_up(values: Array, scale: Array | int) -> Array:
    """`round_up_to_scale` of each amount (int64), `scale` one for all or one per amount; an
    amount at MAX_AMOUNT, or whose multiple would pass it, saturates there."""
    scale = np.asarray(scale, dtype=np.int64)
    if (scale < 1).any():
        raise ValueError(f"scale must be greater than zero, got {scale.min()}")
    whole = -(-values // scale)  # ceiling division, exact on integers
    return np.where(whole > MAX_AMOUNT // scale, MAX_AMOUNT, whole * scale)


def rounded_rows(
    est: Estimates, cpu_scale: Array, memory_scale: Array, integer: Array
) -> Estimates:
    """Every amount rounded up to its row's scales (1 leaves it as it is), then CPU rounded up to
    whole cores where `integer` (VPA's IntegerCPUPostProcessor). Scales and `integer` are one per
    row."""
    cpu = rounded_up(est.cpu, np.asarray(cpu_scale, dtype=np.int64)[:, None])
    memory = rounded_up(est.memory, np.asarray(memory_scale, dtype=np.int64)[:, None])
    integer = np.asarray(integer, dtype=bool)
    if integer.any():
        cpu[integer] = rounded_up(cpu[integer], 1000)
    return Estimates(cpu, memory)
