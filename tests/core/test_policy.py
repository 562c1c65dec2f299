"""Which policy governs a workload: workload > namespace selector > namespace > cluster selector >
cluster; the oldest among equals."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from app.core.policy import Policy, PolicyIndex, governing_policy
from app.core.selectors import CONTROLLER_LABELS, LabelSelector, Requirement, template_labels
from app.core.update_mode import UpdateMode
from app.core.workload_key import WorkloadKey

WEB = WorkloadKey("shop", "Deployment", "web")
CLUSTER = Policy("default", "*", created=1.0, id=1)
NAMESPACE = Policy("shop-wide", "shop", created=2.0, id=2)
OWN = Policy("web", "shop", "Deployment", "web", created=3.0, id=3)
OTHER_NS = Policy("ops", "ops", created=0.5, id=4)
OTHER_TARGET = Policy("db", "shop", "StatefulSet", "web", created=0.5, id=5)


def test_most_specific_wins() -> None:
    assert governing_policy([CLUSTER, NAMESPACE, OWN], WEB) is OWN
    assert governing_policy([CLUSTER, NAMESPACE], WEB) is NAMESPACE
    assert governing_policy([CLUSTER], WEB) is CLUSTER


def test_policies_for_something_else_do_not_apply() -> None:
    assert governing_policy([OTHER_NS, OTHER_TARGET], WEB) is None
    assert governing_policy([], WEB) is None


def test_oldest_wins_among_equals() -> None:
    newer = Policy("web-2", "shop", "Deployment", "web", created=9.0, id=9)
    assert governing_policy([newer, OWN], WEB) is OWN
    same_time = Policy("web-3", "shop", "Deployment", "web", created=3.0, id=1)
    assert governing_policy([OWN, same_time], WEB) is same_time  # then the lower id


def test_a_cluster_policy_with_a_target_never_applies() -> None:
    odd = Policy("odd", "*", "Deployment", "web")
    assert governing_policy([odd], WEB) is None


def test_auto_means_recreate() -> None:
    assert UpdateMode.of("Auto") is UpdateMode.RECREATE
    assert UpdateMode.of("InPlaceOrRecreate") is UpdateMode.IN_PLACE_OR_RECREATE


# --- selector policies -------------------------------------------------------------------------

TIER_WEB = LabelSelector((Requirement("tier", "In", frozenset({"web"})),))
SELECTING = Policy("tier-web", "shop", target_selector=TIER_WEB, created=5.0, id=6)
CLUSTER_SELECTING = Policy("all-web", "*", target_selector=TIER_WEB, created=0.1, id=7)
WEB_PODS = {"app": "web", "tier": "web", "pod-template-hash": "5d9c7b8f4"}


def test_a_named_target_beats_a_selector_which_beats_the_namespace() -> None:
    everything = [CLUSTER, CLUSTER_SELECTING, NAMESPACE, SELECTING, OWN]
    assert governing_policy(everything, WEB, WEB_PODS) is OWN
    assert governing_policy([CLUSTER, NAMESPACE, SELECTING], WEB, WEB_PODS) is SELECTING
    # A cluster default's selector only beats the cluster default without one.
    assert governing_policy([CLUSTER, NAMESPACE, CLUSTER_SELECTING], WEB, WEB_PODS) is NAMESPACE
    assert governing_policy([CLUSTER, CLUSTER_SELECTING], WEB, WEB_PODS) is CLUSTER_SELECTING


def test_a_selector_needs_the_pods_labels_and_matching_ones() -> None:
    assert governing_policy([NAMESPACE, SELECTING], WEB) is NAMESPACE  # labels unknown
    assert governing_policy([NAMESPACE, SELECTING], WEB, {"tier": "db"}) is NAMESPACE
    other_ns = WorkloadKey("ops", "Deployment", "web")
    assert governing_policy([SELECTING], other_ns, WEB_PODS) is None


def test_among_matching_selectors_the_oldest_wins_then_the_first_stored() -> None:
    app_web = LabelSelector((Requirement("app", "In", frozenset({"web"})),))
    older = Policy("zzz-old", "shop", target_selector=app_web, created=4.0, id=8)
    assert governing_policy([SELECTING, older], WEB, WEB_PODS) is older
    twin = Policy("aaa", "shop", target_selector=app_web, created=5.0, id=9)
    assert governing_policy([twin, SELECTING], WEB, WEB_PODS) is SELECTING  # same time: id 6


def test_labels_controllers_add_are_not_the_templates() -> None:
    hashed = LabelSelector((Requirement("pod-template-hash", "Exists"),))
    policy = Policy("by-hash", "shop", target_selector=hashed, created=1.0, id=10)
    assert governing_policy([policy], WEB, WEB_PODS) is None


LABEL = st.text(alphabet="abcxyz", min_size=1, max_size=3)


@given(
    st.dictionaries(LABEL, LABEL, max_size=5),
    st.dictionaries(st.sampled_from(sorted(CONTROLLER_LABELS)), LABEL, max_size=3),
    st.data(),
)
def test_a_selector_of_template_labels_selects_whatever_labels_controllers_add(
    template: dict[str, str], added: dict[str, str], data: st.DataObject
) -> None:
    """matchLabels taken from the template always match its pods; a key the template lacks
    (DoesNotExist) too; NotIn its own value never does; and controllers' labels change nothing."""
    chosen = data.draw(
        st.lists(st.sampled_from(sorted(template)), unique=True) if template else st.just([])
    )
    requirements = [Requirement(k, "In", frozenset({template[k]})) for k in chosen]
    requirements.append(Requirement("absent-key", "DoesNotExist"))
    selector = LabelSelector(tuple(requirements))
    pod_labels = {**template, **added}
    policy = Policy("p", "shop", target_selector=selector, created=1.0, id=1)
    assert governing_policy([policy], WEB, pod_labels) is policy
    if chosen:
        k = chosen[0]
        negated = LabelSelector((Requirement(k, "NotIn", frozenset({template[k]})),))
        other = Policy("n", "shop", target_selector=negated, created=1.0, id=2)
        assert governing_policy([other], WEB, pod_labels) is None
    assert selector.matches(template_labels(pod_labels)) == selector.matches(template)


# --- the index the jobs and the webhook find policies with -------------------------------------

NAMESPACES = ("shop", "ops", "*")
KINDS = ("Deployment", "StatefulSet")
NAMES = ("web", "db", "api")
SELECTORS = (TIER_WEB, LabelSelector((Requirement("app", "In", frozenset({"web", "api"})),)))


@st.composite
def policy_lists(draw: st.DrawFn) -> list[Policy]:
    """Policies of every kind (named targets, selectors, namespace-wide, cluster defaults, and a
    cluster default naming a target, which never applies) with ties in age and id; names unique
    per namespace, as stored."""
    out = []
    for i in range(draw(st.integers(0, 12))):
        namespace = draw(st.sampled_from(NAMESPACES))
        shape = draw(st.sampled_from(("named", "selector", "namespace")))
        target: dict[str, object] = {}
        if shape == "named":
            target = {"target_kind": draw(st.sampled_from(KINDS))}
            target["target_name"] = draw(st.sampled_from(NAMES))
        elif shape == "selector":
            target = {"target_selector": draw(st.sampled_from(SELECTORS))}
        created = float(draw(st.integers(0, 3)))
        ident = draw(st.integers(0, 3))
        out.append(Policy(f"p-{i}", namespace, **target, created=created, id=ident))  # type: ignore[arg-type]
    return out


@given(
    policy_lists(),
    st.sampled_from(NAMESPACES[:2]),
    st.sampled_from(KINDS),
    st.sampled_from(NAMES),
    st.sampled_from((None, {}, WEB_PODS, {"app": "api"})),
)
def test_the_index_answers_as_the_scan_of_all_policies(
    policies: list[Policy], namespace: str, kind: str, name: str, labels: dict[str, str] | None
) -> None:
    w = WorkloadKey(namespace, kind, name)
    assert PolicyIndex(policies).governing(w, labels) is governing_policy(policies, w, labels)


def test_the_index_reads_only_a_workloads_candidates(monkeypatch: pytest.MonkeyPatch) -> None:
    """One policy per workload, as VPA's one VerticalPodAutoscaler per Deployment: finding every
    workload's policy reads each policy about once, where the scan read them all for each
    workload (15,000 workloads: 225 million reads a pass, 14 s)."""
    workloads = [WorkloadKey(f"ns-{i % 3}", "Deployment", f"w-{i}") for i in range(300)]
    policies = [
        Policy(f"p-{i}", w.namespace, w.kind, w.name, id=i) for i, w in enumerate(workloads)
    ]
    policies.append(CLUSTER)
    reads = []
    specificity = Policy.specificity

    def counted(self: Policy, w: WorkloadKey, labels: object = None) -> int | None:
        reads.append(self)
        return specificity(self, w, labels)  # type: ignore[arg-type]

    monkeypatch.setattr(Policy, "specificity", counted)
    index = PolicyIndex(policies)
    assert [index.governing(w) for w in workloads] == policies[:-1]
    assert len(reads) == 2 * len(workloads)  # its own and the cluster default
