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

from app.core.recommend.estimator import Estimate
from app.core.resources import MAX_AMOUNT, Resources


def round_up_to_scale(value: int, scale: int) -> int:
    """The smallest multiple of `scale` at or above `value` (VPA `RoundUpToScale`), exactly."""
    if scale < 1:
        raise ValueError(f"scale must be greater than zero, got {scale}")
    if value >= MAX_AMOUNT:
        return MAX_AMOUNT
    rounded = -(-value // scale) * scale
    return min(rounded, MAX_AMOUNT)


def _round(r: Resources, cpu_scale: int, memory_scale: int) -> Resources:
    return Resources(round_up_to_scale(r.cpu, cpu_scale), round_up_to_scale(r.memory, memory_scale))


def rounded(est: Estimate, cpu_millicores: int, memory_bytes: int) -> Estimate:
    """Every amount rounded up to the settings' scales (1 leaves it as it is)."""
    return Estimate(
        _round(est.target, cpu_millicores, memory_bytes),
        _round(est.lower_bound, cpu_millicores, memory_bytes),
        _round(est.upper_bound, cpu_millicores, memory_bytes),
    )


def integer_cpu(est: Estimate) -> Estimate:
    """CPU rounded up to whole cores (VPA's IntegerCPUPostProcessor)."""
    return Estimate(
        _round(est.target, 1000, 1),
        _round(est.lower_bound, 1000, 1),
        _round(est.upper_bound, 1000, 1),
    )
