"""Trace parsing: every malformed input is rejected with its line and column."""

from __future__ import annotations

from typing import Any, cast

import pytest

from app.core.recommend.trace import TraceError, TraceRow, parse_timestamp, parse_trace

HEADER = "timestamp,container,cpu,memory"


def parse(*lines: str) -> list[TraceRow]:
    return parse_trace(list(lines))


@pytest.mark.parametrize(
    ("lines", "line", "column", "message"),
    [
        ((), 1, None, "empty file"),
        (("",), 1, None, "empty file"),
        (("time,container,cpu,memory",), 1, None, "missing timestamp"),
        (("timestamp,container,cpu,memory,gpu",), 1, None, "unknown gpu"),
        ((HEADER,), 1, None, "no samples"),
        ((HEADER, "1700000000,app,abc,100"), 2, "cpu", "'abc' is not a number"),
        ((HEADER, "1700000000,app,0.1,1e9", "1700000060,app,0.1,-5"), 3, "memory", "negative"),
        ((HEADER, "1700000000,app,-0.1,5"), 2, "cpu", "negative"),
        ((HEADER, "1700000000,app,nan,5"), 2, "cpu", "finite"),
        ((HEADER, "yesterday,app,0.1,5"), 2, "timestamp", "neither unix seconds"),
        ((HEADER, "2024-07-01T00:00:00,app,0.1,5"), 2, "timestamp", "no time zone"),
        ((HEADER, "1700000000,,0.1,5"), 2, "container", "required"),
        ((HEADER, "1700000000,app,,"), 2, "cpu", "needs cpu, memory or both"),
        ((HEADER, "1700000000,app,0.1"), 2, None, "expected 4 fields, found 3"),
        ((HEADER, "1700000060,app,0.1,5", "1700000000,app,0.1,5"), 3, "timestamp", "out of order"),
        ((HEADER, "1700000000,app,0.1,5", "1700000000,app,0.2,5"), 3, "timestamp", "duplicate"),
        ((HEADER + ",event", "1700000000,app,0.1,5,crash"), 2, "event", "unknown event"),
        ((HEADER + ",event", "1700000000,app,,,oom"), 2, "memory", "required"),
    ],
)
def test_bad_input(lines: tuple[str, ...], line: int, column: str | None, message: str) -> None:
    with pytest.raises(TraceError, match=message) as err:
        parse(*lines)
    assert err.value.line == line
    assert err.value.column == column
    assert str(err.value).startswith(f"line {line}")


def test_series_are_ordered_per_pod_and_container() -> None:
    rows = parse(
        HEADER + ",pod",
        "1700000060,app,0.1,5,a",
        "1700000000,app,0.1,5,b",  # another pod: its own series
        "1700000000,sidecar,0.1,5,a",  # another container: its own series
    )
    assert [(r.pod, r.container) for r in rows] == [("a", "app"), ("b", "app"), ("a", "sidecar")]


def test_optional_columns_and_defaults() -> None:
    [r] = parse("container,timestamp,memory,cpu,cpu_request", "app,1700000000,,0.25,0.5")
    assert (r.pod, r.cpu, r.memory, r.cpu_request, r.event) == ("pod-0", 0.25, None, 0.5, None)


def test_blank_lines_are_skipped() -> None:
    assert len(parse(HEADER, "", "1700000000,app,0.1,5", "")) == 1


@pytest.mark.parametrize(
    ("text", "unix"),
    [
        ("1700000000", 1_700_000_000.0),
        ("1700000000.5", 1_700_000_000.5),
        ("2024-07-01T00:00:00Z", 1_719_792_000.0),
        ("2024-07-01T02:00:00+02:00", 1_719_792_000.0),
    ],
)
def test_timestamps(text: str, unix: float) -> None:
    assert parse_timestamp(text) == unix


def _rows(start: int, hours: int, cpu: float) -> list[str]:
    return [
        f"{start + 60 * i},app,{cpu + (i % 7) / 100},{(300 + i % 11) * 2**20}"
        for i in range(hours * 60)
    ]


def _replay(lines: list[str]) -> dict[str, Any]:
    from app.core.recommend.trace import recommendations_json, replay

    return recommendations_json(replay(parse("timestamp,container,cpu,memory", *lines)))


@pytest.mark.parametrize(("gap_days", "expires"), [(9, True), (8, True), (7, False)])
def test_history_before_a_gap_of_the_idle_limit_or_more_expires(
    gap_days: int, expires: bool
) -> None:
    """VPA's isExpired: no CPU sample for the memory aggregation window (8 days) or more."""
    before = _rows(1_700_000_000, 24, 0.8)
    after = _rows(1_700_000_000 + 24 * 3600 - 60 + gap_days * 86400, 3, 0.2)
    assert (_replay(before + after) == _replay(after)) is expires


def test_a_container_idle_at_the_end_of_the_trace_is_dropped() -> None:
    """The job drops it at its next run; so does the replay, on the trace's own clock."""
    start = 1_700_000_000
    app = _rows(start, 2, 0.5)
    sidecar = [line.replace(",app,", ",sidecar,") for line in _rows(start + 9 * 86400, 2, 0.1)]
    names = [c["name"] for c in _replay(app + sidecar)["containers"]]
    assert names == ["sidecar"]


def test_an_oom_kill_may_come_after_later_samples_and_counts_when_fresh() -> None:
    """The recommender reads OOM events after the metrics of its run: a trace may list a kill
    after samples taken later than it. One a minute before the last sample, just before a
    memory window's end (kubernetes/autoscaler #8548), raises the memory target; one more than a
    day before it is too old and changes nothing."""
    start = 1_700_000_000
    rows = _rows(start, 25, 0.5)  # 300-310 MiB, to start + 25 h
    last = start + 25 * 3600 - 60
    header = "timestamp,container,cpu,memory,event"
    plain = [line + "," for line in rows]

    def memory(*extra: str) -> str:
        from app.core.recommend.trace import recommendations_json, replay

        out = recommendations_json(replay(parse_trace([header, *plain, *extra])))
        [c] = cast(list[dict[str, Any]], out["containers"])
        return str(c["target"]["memory"])

    assert parse_trace([header, *plain, f"{last - 60},app,,2147483648,oom"])[-1].event == "oom"
    assert memory() != memory(f"{last - 60},app,,2147483648,oom")  # fresh: 2.4 GiB needed
    assert memory() == memory(f"{last - 86400 - 60},app,,2147483648,oom")  # too old
    with pytest.raises(TraceError, match="out of order"):  # samples stay in order
        parse_trace([header, *plain, f"{last - 60},app,0.1,5,"])
