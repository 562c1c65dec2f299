"""cluster-proportional-autoscaler 1.10 formulas, params parsing and cluster status from nodes.

Expected values are worked out by hand from the formulas in app/core/scaling/proportional.py.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from app.core.scaling.proportional import (
    INT32_MAX,
    ClusterStatus,
    LadderParams,
    LinearParams,
    ParamsError,
    cluster_status,
    is_schedulable,
    params_to_config,
    parse_params,
    parse_selector,
    parse_taint,
    replicas,
)


def status(
    nodes: int = 1, cores: int = 0, total_nodes: int = -1, total_cores: int = -1
) -> ClusterStatus:
    """Schedulable counts; totals default to the same (as `scaler preview` does)."""
    return ClusterStatus(
        total_nodes=nodes if total_nodes < 0 else total_nodes,
        schedulable_nodes=nodes,
        total_cores=cores if total_cores < 0 else total_cores,
        schedulable_cores=cores,
    )


def linear(**fields: Any) -> LinearParams | LadderParams:
    return parse_params({"linear": fields})


def ladder(**fields: Any) -> LinearParams | LadderParams:
    return parse_params({"ladder": fields})


# --- linear -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("cores", "expected"),
    [(0, 2), (1, 2), (4, 2), (6, 3), (11, 6), (21, 11), (40, 20)],
)
def test_linear_cores_per_replica_2_min_2_max_100(cores: int, expected: int) -> None:
    params = linear(coresPerReplica=2, min=2, max=100)
    assert replicas(params, status(nodes=1, cores=cores)) == expected


def test_linear_max_caps_the_result() -> None:
    assert replicas(linear(coresPerReplica=1, max=5), status(cores=100)) == 5


def test_linear_max_zero_means_no_maximum() -> None:
    assert replicas(linear(coresPerReplica=1, max=0), status(cores=1000)) == 1000


def test_linear_min_defaults_to_one_so_linear_never_scales_to_zero() -> None:
    params = linear(nodesPerReplica=10, min=0)
    assert isinstance(params, LinearParams) and params.min_replicas == 1
    assert replicas(params, status(nodes=0, cores=0)) == 1


def test_linear_prevent_single_point_failure_with_two_nodes_gives_two() -> None:
    params = linear(nodesPerReplica=4, preventSinglePointFailure=True)
    assert replicas(params, status(nodes=2, cores=8)) == 2


def test_linear_without_prevent_single_point_failure_two_nodes_give_one() -> None:
    assert replicas(linear(nodesPerReplica=4), status(nodes=2, cores=8)) == 1


def test_linear_prevent_single_point_failure_leaves_a_single_node_alone() -> None:
    params = linear(nodesPerReplica=4, preventSinglePointFailure=True)
    assert replicas(params, status(nodes=1, cores=4)) == 1


def test_linear_prevent_single_point_failure_applies_even_with_only_cores_per_replica() -> None:
    # nodesPerReplica absent: the node dimension yields 1, then is raised to 2 for 3 nodes.
    params = linear(coresPerReplica=100, preventSinglePointFailure=True)
    assert replicas(params, status(nodes=3, cores=12)) == 2


def test_linear_prevent_single_point_failure_overrides_max_as_cpa_does() -> None:
    params = linear(nodesPerReplica=1, max=1, preventSinglePointFailure=True)
    assert replicas(params, status(nodes=3, cores=3)) == 2


@pytest.mark.parametrize(
    ("cores", "nodes", "expected"),
    [
        (13, 4, 7),  # cores: ceil(13/2)=7 beats nodes: 4/1=4
        (4, 10, 10),  # nodes: 10 beats cores: 2
        (0, 0, 1),  # both 0, raised to min 1
    ],
)
def test_linear_the_larger_dimension_wins(cores: int, nodes: int, expected: int) -> None:
    params = linear(coresPerReplica=2, nodesPerReplica=1)
    assert replicas(params, status(nodes=nodes, cores=cores)) == expected


@pytest.mark.parametrize(
    ("cores", "nodes", "expected"),
    [
        (0, 0, 1),  # 0 and 0 -> min 1; one node or none: no single-point rule
        (1, 2, 2),  # ceil(0.5)=1, ceil(0.8)=1, two nodes -> 2
        (3, 4, 2),  # ceil(1.5)=2, ceil(1.6)=2
        (9, 5, 5),  # ceil(4.5)=5 beats ceil(2.0)=2
        (0, 3, 2),  # ceil(1.2)=2
        (8, 16, 7),  # 4 vs ceil(6.4)=7
    ],
)
def test_linear_fractional_nodes_per_replica(cores: int, nodes: int, expected: int) -> None:
    params = linear(
        coresPerReplica=2, nodesPerReplica=2.5, min=1, max=100, preventSinglePointFailure=True
    )
    assert replicas(params, status(nodes=nodes, cores=cores)) == expected


def test_linear_divides_in_float64_like_cpa() -> None:
    # 21 / 0.7 is 30.000000000000004 in binary floating point, so CPA asks for 31, not 30.
    assert replicas(linear(nodesPerReplica=0.7), status(nodes=21)) == 31
    assert replicas(linear(coresPerReplica=0.5), status(cores=3)) == 6


def test_linear_tiny_per_replica_saturates_at_int32() -> None:
    assert replicas(linear(coresPerReplica=1e-300), status(cores=5)) == INT32_MAX


@pytest.mark.parametrize(("include", "expected"), [(False, 3), (True, 5)])
def test_linear_include_unschedulable_counts_total_nodes(include: bool, expected: int) -> None:
    params = linear(nodesPerReplica=1, includeUnschedulableNodes=include)
    assert replicas(params, status(nodes=3, total_nodes=5)) == expected


@pytest.mark.parametrize(("include", "expected"), [(False, 12), (True, 20)])
def test_linear_include_unschedulable_counts_total_cores(include: bool, expected: int) -> None:
    params = linear(coresPerReplica=1, includeUnschedulableNodes=include)
    assert replicas(params, status(nodes=2, cores=12, total_nodes=4, total_cores=20)) == expected


def test_linear_single_point_rule_uses_the_counted_nodes() -> None:
    # One schedulable node of three: no bump unless unschedulable nodes are counted.
    base = {"nodesPerReplica": 10, "preventSinglePointFailure": True}
    assert replicas(linear(**base), status(nodes=1, total_nodes=3)) == 1
    counted = linear(**base, includeUnschedulableNodes=True)
    assert replicas(counted, status(nodes=1, total_nodes=3)) == 2


# --- ladder -----------------------------------------------------------------------------------

STEPS = [[1, 1], [2, 2], [3, 3], [4, 4], [10, 10], [20, 20]]


@pytest.mark.parametrize(
    ("cores", "expected"),
    [(0, 1), (6, 4), (19, 10), (40, 20), (1, 1), (4, 4), (9, 4), (10, 10), (20, 20)],
)
def test_ladder_takes_the_last_step_at_or_below(cores: int, expected: int) -> None:
    assert replicas(ladder(coresToReplicas=STEPS), status(nodes=0, cores=cores)) == expected


@pytest.mark.parametrize(("cores", "expected"), [(0, 0), (1, 0), (2, 0), (3, 3), (50, 3)])
def test_ladder_starting_at_zero_scales_to_zero(cores: int, expected: int) -> None:
    params = ladder(coresToReplicas=[[0, 0], [3, 3]])
    assert replicas(params, status(nodes=1, cores=cores)) == expected


@pytest.mark.parametrize(("nodes", "expected"), [(0, 0), (5, 0), (6, 1), (7, 1)])
def test_ladder_can_switch_a_feature_on_as_the_cluster_grows(nodes: int, expected: int) -> None:
    params = ladder(nodesToReplicas=[[0, 0], [6, 1]])
    assert replicas(params, status(nodes=nodes, cores=4 * nodes)) == expected


def test_ladder_below_the_first_step_uses_its_replicas_even_zero() -> None:
    params = ladder(coresToReplicas=[[1, 0], [3, 3]])
    assert replicas(params, status(cores=0)) == 0


def test_ladder_the_larger_of_cores_and_nodes_wins() -> None:
    params = ladder(
        coresToReplicas=[[1, 1], [64, 3], [512, 5]],
        nodesToReplicas=[[1, 1], [2, 2]],
    )
    assert replicas(params, status(nodes=100, cores=400)) == 3  # cores 3 vs nodes 2
    assert replicas(params, status(nodes=100, cores=10)) == 2  # cores 1 vs nodes 2


def test_ladder_steps_are_sorted_by_threshold() -> None:
    params = ladder(coresToReplicas=[[20, 20], [1, 1], [10, 10]])
    assert isinstance(params, LadderParams)
    assert params.cores_to_replicas == ((1, 1), (10, 10), (20, 20))
    assert replicas(params, status(cores=15)) == 10


def test_ladder_of_equal_thresholds_the_later_one_wins() -> None:
    assert replicas(ladder(coresToReplicas=[[5, 1], [5, 3]]), status(cores=5)) == 3


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({}, "ladder"),
        ({"coresToReplicas": None}, "ladder"),
        ({"coresToReplicas": []}, "ladder.coresToReplicas"),
    ],
)
def test_ladder_without_any_steps_is_rejected_not_scaled_to_zero(
    body: dict[str, Any], field: str
) -> None:
    # CPA would scale the target to 0 here; a typo must not take CoreDNS down.
    with pytest.raises(ParamsError) as err:
        parse_params({"ladder": body})
    assert err.value.field == field


def test_an_omitted_ladder_dimension_never_decides() -> None:
    assert replicas(ladder(nodesToReplicas=[[0, 3]]), status(nodes=10, cores=40)) == 3


@pytest.mark.parametrize(("include", "expected"), [(False, 1), (True, 2)])
def test_ladder_include_unschedulable_nodes(include: bool, expected: int) -> None:
    params = ladder(nodesToReplicas=[[0, 0], [2, 1], [4, 2]], includeUnschedulableNodes=include)
    assert replicas(params, status(nodes=2, total_nodes=4)) == expected


# --- params: accepted forms -------------------------------------------------------------------


def test_parses_every_linear_field() -> None:
    text = json.dumps(
        {
            "linear": {
                "coresPerReplica": 256,
                "nodesPerReplica": 16.5,
                "min": 2,
                "max": 50,
                "preventSinglePointFailure": True,
                "includeUnschedulableNodes": True,
            }
        }
    )
    assert parse_params(text) == LinearParams(
        cores_per_replica=256.0,
        nodes_per_replica=16.5,
        min_replicas=2,
        max_replicas=50,
        prevent_single_point_failure=True,
        include_unschedulable_nodes=True,
    )


def test_parses_every_ladder_field() -> None:
    raw = b'{"ladder": {"coresToReplicas": [[1, 1], [64, 3]], "nodesToReplicas": [[0, 0]],'
    raw += b' "includeUnschedulableNodes": true}}'
    assert parse_params(raw) == LadderParams(
        cores_to_replicas=((1, 1), (64, 3)),
        nodes_to_replicas=((0, 0),),
        include_unschedulable_nodes=True,
    )


def test_accepts_a_configmap_data_value_that_is_a_json_string() -> None:
    data = {"linear": '{"coresPerReplica": 2, "min": 1}'}
    assert parse_params(data) == LinearParams(cores_per_replica=2.0, min_replicas=1)


def test_field_names_match_case_insensitively_like_go() -> None:
    params = parse_params({"linear": {"CoresPerReplica": 4, "MIN": 3}})
    assert params == LinearParams(cores_per_replica=4.0, min_replicas=3)


def test_null_leaves_a_field_at_its_default_like_go() -> None:
    params = parse_params('{"linear": {"nodesPerReplica": 2, "max": null, "min": null}}')
    assert params == LinearParams(nodes_per_replica=2.0, min_replicas=1, max_replicas=0)


@pytest.mark.parametrize(
    "config",
    [
        {"linear": {"coresPerReplica": 2.5, "nodesPerReplica": 0, "min": 3, "max": 9}},
        {"linear": {"nodesPerReplica": 16, "preventSinglePointFailure": True}},
        {"ladder": {"coresToReplicas": [[0, 0], [3, 3]], "includeUnschedulableNodes": True}},
    ],
)
def test_params_to_config_round_trips(config: dict[str, Any]) -> None:
    params = parse_params(config)
    assert parse_params(params_to_config(params)) == params


def test_params_to_config_writes_whole_numbers_as_integers() -> None:
    out = params_to_config(linear(coresPerReplica=2, nodesPerReplica=2.5))
    cores = out["linear"]["coresPerReplica"]
    assert cores == 2 and isinstance(cores, int)
    assert out["linear"]["nodesPerReplica"] == 2.5
    assert out["linear"]["min"] == 1


# --- params: every rejection names its field --------------------------------------------------


def rejected(raw: Any) -> ParamsError:
    with pytest.raises(ParamsError) as info:
        parse_params(raw)
    err = info.value
    assert err.field in str(err)
    return err


@pytest.mark.parametrize(
    ("raw", "field"),
    [
        ('{"linear": {"coresPerReplica": 2', "params"),
        ("not json", "params"),
        ('{"linear": {"nodesPerReplica": NaN}}', "params"),
        ('{"linear": {"nodesPerReplica": Infinity}}', "params"),
        ({"linear": '{"coresPerReplica": '}, "linear"),
    ],
)
def test_rejects_invalid_json(raw: Any, field: str) -> None:
    err = rejected(raw)
    assert err.field == field
    assert "invalid JSON" in str(err)


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"linear": {"coresPerReplica": "2"}}, "linear.coresPerReplica"),
        ({"linear": {"coresPerReplica": True}}, "linear.coresPerReplica"),
        ({"linear": {"nodesPerReplica": [1]}}, "linear.nodesPerReplica"),
        ({"linear": {"nodesPerReplica": 1, "min": 1.5}}, "linear.min"),
        ({"linear": {"nodesPerReplica": 1, "min": 2.0}}, "linear.min"),
        ({"linear": {"nodesPerReplica": 1, "min": True}}, "linear.min"),
        ({"linear": {"nodesPerReplica": 1, "max": "10"}}, "linear.max"),
        (
            {"linear": {"nodesPerReplica": 1, "preventSinglePointFailure": "yes"}},
            "linear.preventSinglePointFailure",
        ),
        (
            {"linear": {"nodesPerReplica": 1, "includeUnschedulableNodes": 1}},
            "linear.includeUnschedulableNodes",
        ),
        ({"ladder": {"coresToReplicas": {"1": 1}}}, "ladder.coresToReplicas"),
        ({"ladder": {"coresToReplicas": [[1, "a"]]}}, "ladder.coresToReplicas[0][1]"),
        ({"ladder": {"coresToReplicas": [[1, 1], [1.5, 2]]}}, "ladder.coresToReplicas[1][0]"),
        ({"ladder": {"nodesToReplicas": [[True, 1]]}}, "ladder.nodesToReplicas[0][0]"),
        ({"ladder": {"nodesToReplicas": [5]}}, "ladder.nodesToReplicas[0]"),
        ({"ladder": {"nodesToReplicas": [[1]]}}, "ladder.nodesToReplicas[0]"),
        ({"ladder": {"nodesToReplicas": [[1, 2, 3]]}}, "ladder.nodesToReplicas[0]"),
        (
            {"ladder": {"includeUnschedulableNodes": "true"}},
            "ladder.includeUnschedulableNodes",
        ),
        ({"linear": [1, 2]}, "linear"),
        ({"ladder": 5}, "ladder"),
        ({"linear": None}, "linear"),
        ([{"linear": {}}], "params"),
    ],
)
def test_rejects_wrong_types(body: Any, field: str) -> None:
    assert rejected(body).field == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"linear": {"nodesPerReplica": 1e400}}, "linear.nodesPerReplica"),
        ({"linear": {"coresPerReplica": float("nan")}}, "linear.coresPerReplica"),
        ({"linear": {"coresPerReplica": 10**400}}, "linear.coresPerReplica"),
        ({"linear": {"nodesPerReplica": 1, "max": 2**31}}, "linear.max"),
        ({"linear": {"nodesPerReplica": 1, "min": 2**63}}, "linear.min"),
        ({"ladder": {"coresToReplicas": [[1, 2**31]]}}, "ladder.coresToReplicas[0][1]"),
    ],
)
def test_rejects_numbers_out_of_range(body: Any, field: str) -> None:
    assert rejected(body).field == field


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"linear": {"coresPerReplica": -1}}, "linear.coresPerReplica"),
        ({"linear": {"nodesPerReplica": -20}}, "linear.nodesPerReplica"),
        ({"linear": {"nodesPerReplica": 1, "min": -1}}, "linear.min"),
        ({"linear": {"nodesPerReplica": 1, "max": -1}}, "linear.max"),
        ({"ladder": {"coresToReplicas": [[-1, 1]]}}, "ladder.coresToReplicas[0][0]"),
        ({"ladder": {"nodesToReplicas": [[0, 0], [2, -200]]}}, "ladder.nodesToReplicas[1][1]"),
    ],
)
def test_rejects_negative_numbers(body: Any, field: str) -> None:
    err = rejected(body)
    assert err.field == field
    assert "negative" in str(err)


def test_rejects_max_below_min() -> None:
    err = rejected({"linear": {"nodesPerReplica": 1, "min": 100, "max": 50}})
    assert err.field == "linear.max"
    assert "min" in err.message


def test_rejects_max_below_the_default_min_is_impossible_but_max_equal_min_is_fine() -> None:
    assert linear(nodesPerReplica=1, min=5, max=5) == LinearParams(
        nodes_per_replica=1.0, min_replicas=5, max_replicas=5
    )


@pytest.mark.parametrize(
    "body",
    [
        {"min": 1, "max": 100},
        {"coresPerReplica": 0, "nodesPerReplica": 0},
        {},
    ],
)
def test_rejects_linear_without_either_per_replica_param(body: dict[str, Any]) -> None:
    err = rejected({"linear": body})
    assert err.field == "linear"
    assert "coresPerReplica" in err.message and "nodesPerReplica" in err.message


@pytest.mark.parametrize("raw", [{}, "{}"])
def test_rejects_params_without_a_mode_key(raw: Any) -> None:
    err = rejected(raw)
    assert err.field == "params"
    assert "got none" in err.message


def test_rejects_several_mode_keys_naming_them() -> None:
    err = rejected({"linear": {"nodesPerReplica": 1}, "ladder": {}})
    assert err.field == "params"
    assert "ladder, linear" in err.message


def test_rejects_an_unknown_mode_naming_it() -> None:
    err = rejected({"exponential": {"base": 2}})
    assert err.field == "exponential"
    assert "unknown mode" in err.message


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"linear": {"nodesPerReplica": 1, "bogus": 1}}, "linear.bogus"),
        (
            {"linear": {"nodesPerReplica": 1, "includeUnschedulableNode": True}},
            "linear.includeUnschedulableNode",
        ),
        ({"linear": {"nodesPerReplica": 1, "coresToReplicas": []}}, "linear.coresToReplicas"),
        (
            {"ladder": {"coresToReplicas": [], "preventSinglePointFailure": True}},
            "ladder.preventSinglePointFailure",
        ),
        ({"ladder": {"min": 1}}, "ladder.min"),
    ],
)
def test_rejects_unknown_fields_naming_them(body: Any, field: str) -> None:
    err = rejected(body)
    assert err.field == field
    assert "unknown field" in err.message


# --- cluster status ---------------------------------------------------------------------------


def test_cluster_status_rejects_impossible_counts() -> None:
    with pytest.raises(ValueError, match="total_nodes"):
        ClusterStatus(total_nodes=-1, schedulable_nodes=0, total_cores=0, schedulable_cores=0)
    with pytest.raises(ValueError, match="schedulable_nodes"):
        ClusterStatus(total_nodes=1, schedulable_nodes=2, total_cores=0, schedulable_cores=0)
    with pytest.raises(ValueError, match="schedulable_cores"):
        ClusterStatus(total_nodes=1, schedulable_nodes=1, total_cores=1, schedulable_cores=2)
    with pytest.raises(ValueError, match="total_cores"):
        ClusterStatus(total_nodes=1, schedulable_nodes=1, total_cores=True, schedulable_cores=0)


def node(
    name: str,
    cpu: str | None = "4",
    labels: dict[str, str] | None = None,
    unschedulable: bool = False,
    ready: str | None = "True",
    taints: list[dict[str, str]] | None = None,
) -> dict[str, Any]:
    conditions = [{"type": "MemoryPressure", "status": "False"}]
    if ready is not None:
        conditions.append({"type": "Ready", "status": ready})
    return {
        "metadata": {"name": name, "labels": labels or {}},
        "spec": {"unschedulable": unschedulable, "taints": taints or []},
        "status": {
            "allocatable": {} if cpu is None else {"cpu": cpu, "memory": "16Gi"},
            "capacity": {"cpu": "64"},
            "conditions": conditions,
        },
    }


def test_cores_are_summed_then_rounded_up() -> None:
    # 3 x 3.5 = 10.5 -> 11 cores; rounding each node up first would give 12.
    nodes = [node(f"n{i}", cpu="3500m") for i in range(3)]
    assert cluster_status(nodes) == ClusterStatus(3, 3, 11, 11)


def test_cores_use_allocatable_not_capacity_and_any_quantity_form() -> None:
    nodes = [node("a", cpu="2"), node("b", cpu="1500m"), node("c", cpu="5e-1")]
    assert cluster_status(nodes).total_cores == 4  # 2 + 1.5 + 0.5


def test_cordoned_and_not_ready_nodes_count_only_towards_totals() -> None:
    nodes = [
        node("ok", cpu="4"),
        node("cordoned", cpu="8", unschedulable=True),
        node("not-ready", cpu="16", ready="False"),
        node("unknown", cpu="32", ready="Unknown"),
        node("no-ready-condition", cpu="64", ready=None),
    ]
    assert cluster_status(nodes) == ClusterStatus(
        total_nodes=5, schedulable_nodes=1, total_cores=124, schedulable_cores=4
    )


def test_is_schedulable_needs_ready_and_not_cordoned() -> None:
    assert is_schedulable(node("a"))
    assert not is_schedulable(node("a", unschedulable=True))
    assert not is_schedulable(node("a", ready="False"))
    assert not is_schedulable({"metadata": {"name": "bare"}})


def test_node_without_allocatable_cpu_counts_as_a_node_with_no_cores() -> None:
    assert cluster_status([node("a", cpu=None), node("b", cpu="2")]) == ClusterStatus(2, 2, 2, 2)


def test_no_nodes_is_an_empty_cluster() -> None:
    assert cluster_status([]) == ClusterStatus(0, 0, 0, 0)


def test_malformed_cpu_quantity_names_the_node() -> None:
    with pytest.raises(ValueError, match="node bad: allocatable cpu"):
        cluster_status([node("bad", cpu="4 cores")])
    with pytest.raises(ValueError, match="node neg: allocatable cpu must not be negative"):
        cluster_status([node("neg", cpu="-1")])


POOL = [
    node("dns-1", cpu="2", labels={"pool": "dns", "zone": "a"}),
    node("dns-2", cpu="2", labels={"pool": "dns", "zone": "b"}),
    node("gpu-1", cpu="8", labels={"pool": "gpu", "gpu": "a100"}),
    node("plain", cpu="4", labels={}),
]


@pytest.mark.parametrize(
    ("selector", "nodes", "cores"),
    [
        (None, 4, 16),
        ("", 4, 16),
        ({"pool": "dns"}, 2, 4),
        ("pool=dns", 2, 4),
        ("pool==dns", 2, 4),
        ("pool = dns", 2, 4),
        ("pool=dns,zone=a", 1, 2),
        ("pool!=gpu", 3, 8),  # a node without the label matches key!=value
        ("gpu", 1, 8),
        ("!gpu", 3, 8),
        ("pool", 3, 12),
        ("pool=none", 0, 0),
        ({}, 4, 16),
    ],
)
def test_label_selector_filters_nodes(selector: Any, nodes: int, cores: int) -> None:
    result = cluster_status(POOL, selector=selector)
    assert (result.total_nodes, result.total_cores) == (nodes, cores)


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ("pool in (dns,gpu)", "set-based"),
        ("pool notin (gpu)", "set-based"),
        ("pool=dns,", "not a valid label key"),
        ("bad key=x", "not a valid label key"),
        ("pool=bad value", "not a valid value"),
        ({"pool": 5}, "not a valid value"),
        (42, "string or a mapping"),
    ],
)
def test_rejects_bad_selectors(selector: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_selector(selector)


TAINTED = [
    node("gpu", cpu="8", taints=[{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]),
    node("infra", cpu="4", taints=[{"key": "dedicated", "value": "infra", "effect": "NoExecute"}]),
    node("spot", cpu="2", taints=[{"key": "spot", "effect": "PreferNoSchedule"}]),
    node("plain", cpu="1"),
]


@pytest.mark.parametrize(
    ("skip", "nodes", "cores"),
    [
        ((), 4, 15),
        (("dedicated=gpu:NoSchedule",), 3, 7),
        (("dedicated",), 2, 3),
        (("dedicated:NoExecute",), 3, 11),
        (("dedicated=gpu:NoExecute",), 4, 15),  # right value, wrong effect
        (("spot=:PreferNoSchedule",), 3, 13),  # empty value matches a taint without one
        (({"key": "dedicated", "value": "infra"},), 3, 11),
        (("dedicated=gpu", "spot"), 2, 5),
    ],
)
def test_nodes_with_a_skipped_taint_are_left_out(skip: Any, nodes: int, cores: int) -> None:
    result = cluster_status(TAINTED, skip_taints=skip)
    assert (result.total_nodes, result.total_cores) == (nodes, cores)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("dedicated:NoWay", "effect must be one of"),
        ("", "not a valid taint key"),
        ("bad key", "not a valid taint key"),
        ({"key": "k", "value": 3}, "not a valid taint value"),
        (7, "string or a mapping"),
    ],
)
def test_rejects_bad_taints(spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_taint(spec)


def test_status_from_nodes_drives_the_formula() -> None:
    nodes = [node(f"n{i}", cpu="3920m") for i in range(3)] + [
        node("cordoned", cpu="3920m", unschedulable=True)
    ]
    measured = cluster_status(nodes)
    assert measured == ClusterStatus(4, 3, 16, 12)  # 15.68 -> 16, 11.76 -> 12
    assert replicas(linear(coresPerReplica=4), measured) == 3
    assert replicas(linear(coresPerReplica=4, includeUnschedulableNodes=True), measured) == 4
