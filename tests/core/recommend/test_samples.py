"""Cluster JSON -> samples: PodMetrics parsing, requests, and OOM kills seen once."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from app.core.pods import ContainerResources, PodView
from app.core.quantity import amount_float
from app.core.recommend.samples import new_oom_kills, usage_from_metrics, watched_pods


def pod(
    restarts: int = 0, reason: str | None = None, limits: dict[str, str] | None = None
) -> PodView:
    status: dict[str, Any] = {"name": "app", "restartCount": restarts}
    if reason:
        status["lastState"] = {
            "terminated": {"reason": reason, "finishedAt": "2024-07-01T12:00:00Z"}
        }
    return PodView.parse(
        {
            "metadata": {"name": "web-1", "namespace": "shop", "uid": "u1"},
            "spec": {
                "containers": [
                    {
                        "name": "app",
                        "resources": {
                            "requests": {"cpu": "250m", "memory": "256Mi"},
                            "limits": limits or {},
                        },
                    },
                ],
                "initContainers": [
                    {
                        "name": "proxy",
                        "restartPolicy": "Always",
                        "resources": {"requests": {"cpu": "0.1"}},
                    },
                    {"name": "migrate", "resources": {"requests": {"cpu": "1"}}},
                ],
            },
            "status": {"containerStatuses": [status]},
        }
    )


def test_container_resources_include_sidecars_not_init_containers() -> None:
    res = pod(limits={"memory": "512Mi"}).resources()
    assert res == {
        "app": ContainerResources(250, 268_435_456, None, 536_870_912),
        "proxy": ContainerResources(100, None, None, None),
    }


def test_pod_metrics_usage() -> None:
    item = {
        "metadata": {"name": "web-1", "namespace": "shop"},
        "timestamp": "2024-07-01T00:00:00Z",
        "window": "30s",
        "containers": [
            {"name": "app", "usage": {"cpu": "123456789n", "memory": "1Mi"}},
            {"name": "bad", "usage": {"cpu": "lots", "memory": "1Mi"}},
            {"name": "cpu-only", "usage": {"cpu": "5m"}},
        ],
    }
    [app, cpu_only] = usage_from_metrics(item)
    assert app.time == 1_719_792_000.0
    assert app.cpu_cores == pytest.approx(0.123456789)
    assert app.memory_bytes == 1_048_576
    assert cpu_only.cpu_cores == pytest.approx(0.005)
    assert cpu_only.memory_bytes is None


def test_pod_metrics_without_timestamp_are_skipped() -> None:
    assert (
        usage_from_metrics(
            {"metadata": {"name": "x"}, "containers": [{"name": "a", "usage": {"cpu": "1"}}]}
        )
        == []
    )


def test_oom_kill_is_reported_once_at_the_request_as_vpa_takes_it() -> None:
    seen: dict[tuple[str, str, str], int] = {}
    [kill] = new_oom_kills(pod(1, "OOMKilled", {"memory": "512Mi"}), seen)
    # the request (256Mi), not the limit (512Mi): VPA's OOM observer reads the requests
    assert (kill.pod, kill.container, kill.memory_bytes) == ("web-1", "app", 268_435_456)
    assert kill.time == 1_719_835_200.0
    assert new_oom_kills(pod(1, "OOMKilled", {"memory": "512Mi"}), seen) == []  # same restart
    assert len(new_oom_kills(pod(2, "OOMKilled", {"memory": "512Mi"}), seen)) == 1  # a new one


def test_oom_without_limit_uses_the_request() -> None:
    [kill] = new_oom_kills(pod(3, "OOMKilled"), {})
    assert kill.memory_bytes == 268_435_456


def test_other_terminations_are_not_ooms() -> None:
    assert new_oom_kills(pod(1, "Error"), {}) == []
    assert new_oom_kills(pod(0), {}) == []


@given(
    st.one_of(
        st.builds(
            lambda digits, suffix: digits + suffix,
            st.text("0123456789", min_size=0, max_size=22),
            st.sampled_from(["n", "u", "m", "Ki", "Mi", "Gi", "", "k", "M", "e3", "x"]),
        ),
        st.sampled_from(["+5n", "-5n", "٣n", "1.5Ki", " 5n", "5n ", "n", "Ki", ""]),
    )
)
def test_metrics_quantities_read_as_amount_float_reads_them(text: str) -> None:
    """The plain forms metrics-server writes are read without Decimal arithmetic: the float is
    the same as amount_float's, and what it refuses is refused the same way."""
    item = {
        "metadata": {"name": "p"},
        "timestamp": "2024-07-01T00:00:00Z",
        "containers": [{"name": "a", "usage": {"cpu": text, "memory": text}}],
    }
    try:
        expected = amount_float(text)
    except ValueError:
        assert usage_from_metrics(item) == []
        return
    [u] = usage_from_metrics(item)
    assert (u.cpu_cores, u.memory_bytes) == (expected, expected)


# A pod seen by a run: (name, uid: "" for none, its container's restart count, the last one an
# OOM kill). Counts of one uid never go down; a name without a uid may come back from zero.
_SEEN = st.tuples(
    st.sampled_from(["web-0", "web-1", "web-2"]),
    st.sampled_from(["", "u0", "u1", "u2", "u3"]),
    st.integers(0, 3),
    st.booleans(),
)


def _view(name: str, uid: str, restarts: int, oom: bool) -> PodView:
    status: dict[str, object] = {"name": "app", "restartCount": restarts}
    if oom:
        status["lastState"] = {
            "terminated": {"reason": "OOMKilled", "finishedAt": f"2026-01-01T00:0{restarts}:00Z"}
        }
    return PodView.parse(
        {
            "metadata": {"name": name, "namespace": "shop", "uid": uid},
            "spec": {
                "nodeName": "n1",
                "containers": [{"name": "app", "resources": {"limits": {"memory": "1Gi"}}}],
            },
            "status": {"phase": "Running", "containerStatuses": [status]},
        }
    )


@given(st.lists(st.lists(_SEEN, max_size=4), max_size=6))
def test_only_restarted_pods_are_read_and_the_same_kills_are_found(
    runs: list[list[tuple[str, str, int, bool]]],
) -> None:
    """Over runs of pods coming, restarting and going, reading only watched_pods finds the same
    OOM kills as reading every pod and keeping every count (the job before), and keeps the same
    counts but those of 0."""
    top: dict[str, int] = {}  # a uid's count never goes down
    seen: dict[tuple[str, str, str], int] = {}
    reference: dict[tuple[str, str, str], int] = {}
    for run in runs:
        pods: dict[str, PodView] = {}
        for name, uid, restarts, oom in run:
            if uid:
                restarts = top[uid] = max(restarts, top.get(uid, 0))
            if uid in {p.uid for p in pods.values()} - {""}:
                continue  # one pod per uid
            pods[name] = _view(name, uid, restarts, oom)
        live = {(p.namespace, p.uid or p.name) for p in pods.values()}
        for key in [k for k in reference if k[:2] not in live]:
            del reference[key]
        expected = [k for p in pods.values() for k in new_oom_kills(p, reference)]
        found = [k for p in watched_pods(pods.values(), seen) for k in new_oom_kills(p, seen)]
        assert found == expected
        assert all(seen.values())  # no count of 0 is kept
        assert {k: v for k, v in reference.items() if v} == seen


# raw_usages then parsed_columns (the recommender's feed: one loop per PodMetrics item, then the
# quantities parsed column-wise) against the reference they re-derive: usage_from_metrics'
# usages, of the containers the pod has, with their CPU request.
_quantity = st.one_of(
    st.sampled_from(["250m", "123456789n", "12u", "2048Ki", "3Mi", "1Gi", "7", "0.5", "bad", ""]),
    st.integers(0, 10**6),
)
_container_metrics = st.fixed_dictionaries(
    {"name": st.sampled_from(["app", "side", "gone"])},
    optional={"usage": st.fixed_dictionaries({}, optional={"cpu": _quantity, "memory": _quantity})},
)


@given(
    st.lists(_container_metrics, max_size=4),
    st.sampled_from(["2024-07-01T12:00:00Z", "2024-07-01T12:00:30.5Z", "not a time", None]),
    st.dictionaries(
        st.sampled_from(["app", "side"]),
        st.builds(ContainerResources, st.one_of(st.none(), st.integers(0, 4000))),
    ),
)
def test_parsed_columns_are_the_usages_of_the_pods_containers(
    containers: list[dict[str, Any]], timestamp: Any, resources: dict[str, ContainerResources]
) -> None:
    import json

    from app.core.recommend.podmetrics import decode_pod_metrics_list
    from app.core.recommend.samples import parsed_columns, raw_usages
    from app.core.workload_key import WorkloadKey

    body = {"items": [{"metadata": {"name": "p", "namespace": "n"}, "containers": containers}]}
    if timestamp is not None:
        body["items"][0]["timestamp"] = timestamp
    # the item three times, as three pods of one LIST: the columns of more than one value
    (item,) = decode_pod_metrics_list(json.dumps(body).encode())
    w = WorkloadKey("n", "Deployment", "web")
    raw: list[Any] = []
    for _ in range(3):
        raw_usages(w, item, resources, raw)
    expected = [
        (w, u.pod, u.container, u.time, u.cpu_cores, (r.cpu_request or 0) / 1000.0, u.memory_bytes)
        for u in usage_from_metrics(item)
        if (r := resources.get(u.container)) is not None
    ]
    columns = tuple(zip(*raw, strict=True)) if raw else ((),) * 7
    parsed = parsed_columns(columns)  # type: ignore[arg-type]
    assert list(zip(*parsed.columns, strict=True)) == expected * 3
    # the daily profiles' columns: workload, pod, time, cores, bytes of each sample kept
    assert [list(c) for c in parsed.profiled] == [
        [x[i] for x in expected * 3] for i in (0, 1, 3, 4, 6)
    ]


_metrics_text = st.one_of(
    st.builds(
        lambda digits, suffix: digits + suffix,
        st.text("0123456789", min_size=0, max_size=17),
        st.sampled_from(["n", "u", "m", "Ki", "Mi", "Gi", "", "k", "e3"]),
    ),
    st.sampled_from(["+5n", "5n ", " 5n", "1 2n", "n", "Ki", "٣n", "5nn", "5n5n", "0.5"]),
)


@given(
    st.one_of(
        # one plain form throughout (read at once), now and then something else among them
        st.builds(
            lambda suffix, numbers: [f"{x}{suffix}" for x in numbers],
            st.sampled_from(["n", "u", "m", "Ki", "Mi", "Gi", ""]),
            st.lists(st.integers(0, 10**16), min_size=1, max_size=8),
        ),
        st.lists(
            st.one_of(_metrics_text, st.integers(0, 10**6), st.just(None), st.just("ABSENT")),
            max_size=8,
        ),
    ),
    st.integers(0, 8),
    st.one_of(st.none(), _metrics_text),
)
@example(["1n"], 1, "n")  # an empty number among plain ones
@example(["1Ki", "2Ki"], 1, "3 4Ki")  # a separator inside a value
@example(["12n"], 0, "5nn")  # a suffix twice
@example(["7"], 1, "7e3")  # an exponent among bare numbers
@example(["1n"], 1, str(10**15) + "n")  # 16 digits: read by amount_float
@example(["1n"], 1, "0" * 18 + "7n")  # leading zeros: 19 digits, a small number
@example(["1"], 1, "9" * 25)  # past int64: numpy's parser saturates; read value by value
@example(["1Ki"], 0, " 2Ki")  # a value that starts with the separator
def test_a_column_of_quantities_reads_as_each_value_alone(
    column: list[Any], at: int, odd: Any
) -> None:
    """quantities reads a column as _amount reads each value (the same float, the same
    refusals), whether the column is read at once or value by value."""
    from app.core.recommend.podmetrics import ABSENT
    from app.core.recommend.samples import quantities

    column = [ABSENT if v == "ABSENT" else v for v in column]
    if odd is not None:
        column.insert(min(at, len(column)), odd)
    expected: list[Any] = []
    refused = set()
    for i, value in enumerate(column):
        if value is ABSENT:
            expected.append(None)
            continue
        try:
            expected.append(amount_float(value))
        except ValueError:
            expected.append(None)
            refused.add(i)
    amounts, errors = quantities(column)
    assert amounts == expected
    assert all(type(a) is float for a in amounts if a is not None)
    assert set(errors) == refused
