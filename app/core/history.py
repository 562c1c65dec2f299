"""How much usage history a recommendation has, against what the updater needs before it acts
(RIGHTSIZER_UPDATER_MIN_HISTORY_SECONDS): what a person is told instead of bounds that mean
nothing yet.

The bounds stay VPA's (app.core.recommend.estimator): the upper bound is the 95th percentile
times (1 + 1/confidence), the lower the median times (1 + 0.001/confidence)^-2, confidence being
the days of history (at most the samples over 1440 a day; both counted in the confidence
interval instead when RIGHTSIZER_CONFIDENCE_INTERVAL_*_SECONDS is not a day). With no history at
all the upper bound is unbounded (the API writes `unknown`); a few minutes later it is finite but
hundreds of times the target (1 + 1/0.003 days); it narrows as days go by (x2 after a day, x1.14
after a week).
One rule, continuous over time: the API keeps those numbers and says with them how much history
there is (`history`), and the dashboard and the CLI show "not enough history: N hours of M" while
the history is shorter than the updater needs (the LowConfidence condition's rule, the same span:
first to last sample).
"""

from __future__ import annotations

from dataclasses import dataclass

HOUR = 3600.0


def _hours(value: float) -> str:
    """0.2, 1, 1.5, 24: one decimal below 10 hours, whole hours above; no trailing .0."""
    text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
    return text.removesuffix(".0")


@dataclass(frozen=True)
class History:
    seconds: float  # from the first sample to the last
    needed_seconds: float  # what the updater needs before it acts

    @property
    def enough(self) -> bool:
        return self.seconds >= self.needed_seconds

    @property
    def hours(self) -> float:
        return self.seconds / HOUR

    @property
    def needed_hours(self) -> float:
        return self.needed_seconds / HOUR

    def message(self) -> str:
        """`not enough history: 0.2 hours of 1` (when not `enough`)."""
        shown = _hours(self.hours)
        if shown == _hours(self.needed_hours):  # 0.96 of 1 would read "1 hours of 1"
            shown = f"{self.hours:.2f}".rstrip("0")
        return f"not enough history: {shown} hours of {_hours(self.needed_hours)}"

    def document(self) -> dict[str, float | bool]:
        """The API's `history` of a container."""
        return {
            "hours": round(self.hours, 2),
            "neededHours": round(self.needed_hours, 2),
            "enough": self.enough,
        }


def history(first: float | None, last: float | None, needed_seconds: float) -> History:
    """The history between the first and the last sample (unix seconds; none: 0)."""
    span = last - first if first is not None and last is not None else 0.0
    return History(max(span, 0.0), needed_seconds)
