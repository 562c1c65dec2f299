"""What a trace holds, as `recommend --from-csv` reports it: counts, span, interval and gaps."""

from __future__ import annotations

import pytest

from app.core.recommend.trace import parse_trace
from app.core.recommend.trace_summary import duration, summarize

HEADER = "timestamp,pod,container,cpu,memory,event\n"


def trace(*rows: str) -> str:
    return HEADER + "".join(r + "\n" for r in rows)


def test_counts_span_and_interval() -> None:
    s = summarize(
        parse_trace(
            trace(
                "0,a,app,0.1,1000,",
                "60,a,app,,1000,",
                "120,a,app,0.1,,",
                "120,b,side,0.1,1000,",
                "150,a,app,,5000,oom",
            ).splitlines()
        )
    )
    assert (s.rows, s.cpu_samples, s.memory_samples, s.ooms) == (5, 3, 3, 1)
    assert (s.pods, s.containers) == (2, ("app", "side"))
    assert (s.first, s.last, s.interval, s.gaps) == (0, 150, 60, ())


def test_a_gap_is_longer_than_three_usual_intervals_per_container() -> None:
    rows = [f"{60 * m},a,app,0.1,1000," for m in (0, 1, 2, 3, 6, 7, 17, 18)]
    rows += [f"{60 * m},b,app,0.1,1000," for m in range(0, 19)]  # pod b never stops
    s = summarize(parse_trace(trace(*rows).splitlines()))
    assert s.interval == 60
    assert [(g.pod, g.container, g.start, g.end) for g in s.gaps] == [("a", "app", 420, 1020)]


def test_one_sample_has_no_interval_and_no_gap() -> None:
    s = summarize(parse_trace(trace("5,a,app,0.1,1000,").splitlines()))
    assert (s.interval, s.gaps, s.span_days) == (None, (), 0)


@pytest.mark.parametrize(
    ("seconds", "text"),
    [(45, "45s"), (300, "5m"), (330, "5m30s"), (12000, "3h20m"), (3 * 86400, "3.0 days")],
)
def test_durations_read_as_a_person_reads_them(seconds: float, text: str) -> None:
    assert duration(seconds) == text
