"""Every number of the recommender, with the VPA recommender's defaults.

One frozen object instead of VPA's global flags; app/config.py fills it from RIGHTSIZER_* variables
(the variable for a field is RIGHTSIZER_ + the field name in upper case) as the recommender part of
the service's settings (app/settings.py).
"""

from __future__ import annotations

from dataclasses import dataclass, fields

DAY = 24 * 3600.0
MIB = 1024 * 1024


@dataclass(frozen=True)
class RecommenderSettings:
    # Histograms (cores for CPU, bytes for memory).
    cpu_histogram_max: float = 1000.0
    cpu_histogram_first_bucket: float = 0.01
    memory_histogram_max: float = 1e12
    memory_histogram_first_bucket: float = 1e7
    histogram_bucket_ratio: float = 1.05
    histogram_epsilon: float = 1e-4
    cpu_half_life_seconds: float = DAY
    memory_half_life_seconds: float = DAY
    # Aggregation.
    min_cpu_sample_weight: float = 0.1
    memory_aggregation_interval_seconds: float = DAY
    oom_min_bump_bytes: float = 100 * MIB
    oom_bump_ratio: float = 1.2
    # Estimation.
    target_cpu_percentile: float = 0.9
    target_memory_percentile: float = 0.9
    lower_bound_cpu_percentile: float = 0.5
    lower_bound_memory_percentile: float = 0.5
    upper_bound_cpu_percentile: float = 0.95
    upper_bound_memory_percentile: float = 0.95
    safety_margin_fraction: float = 0.15
    upper_bound_confidence_multiplier: float = 1.0
    upper_bound_confidence_exponent: float = 1.0
    lower_bound_confidence_multiplier: float = 0.001
    lower_bound_confidence_exponent: float = -2.0
    confidence_samples_per_day: float = 24 * 60  # one CPU sample a minute counts as a day
    # VPA's --confidence-interval-cpu and --confidence-interval-memory (kubernetes/autoscaler
    # #7843): the history that counts as a confidence of 1 for the CPU and the memory bounds.
    confidence_interval_cpu_seconds: float = DAY
    confidence_interval_memory_seconds: float = DAY
    pod_min_cpu_millicores: float = 25.0
    pod_min_memory_mb: float = 250.0
    # Rounding (app/core/recommend/rounding.py): every amount of a recommendation is rounded up to
    # a multiple of these, as VPA's --round-cpu-millicores and --round-memory-bytes do. VPA rounds
    # nothing by default; rightsizer rounds memory to whole MiB, so pods get "363Mi", not
    # "380258472" (at most 1 MiB more than the estimate).
    round_cpu_millicores: float = 1.0
    round_memory_bytes: float = float(MIB)

    def __post_init__(self) -> None:
        for f in fields(self):
            value = getattr(self, f.name)
            if f.name.endswith("_percentile") and not 0 < value <= 1:
                raise ValueError(f"{f.name} must be in (0, 1], got {value}")
            if f.name.endswith("_exponent"):
                continue
            if f.name.startswith("round_") and (value < 1 or value != int(value)):
                raise ValueError(f"{f.name} must be a whole number of at least 1, got {value}")
            if value < 0:
                raise ValueError(f"{f.name} must not be negative, got {value}")
