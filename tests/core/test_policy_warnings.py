"""What a policy write warns about, and the Warning header both ways (app.core.policy_warnings)."""

from __future__ import annotations

from app.core.policy_warnings import (
    TargetFacts,
    never_sized_reasons,
    policy_warnings,
    warning_header,
    warning_texts,
)
from app.core.workload_key import WorkloadKey

NEVER = never_sized_reasons("rightsizer", frozenset({"legacy"}))
WEB = WorkloadKey("shop", "Deployment", "web")
ROLLOUT = WorkloadKey("shop", "Rollout.argoproj.io", "canary")


def test_a_namespace_never_sized_is_warned_of_whatever_the_cluster_says() -> None:
    for ns, why in (
        ("kube-system", "the webhook configuration always keeps it out"),
        ("rightsizer", "rightsizer's own namespace"),
        ("legacy", "excluded by RIGHTSIZER_EXCLUDED_NAMESPACES"),
    ):
        [text] = policy_warnings(ns, None, NEVER, TargetFacts(True, True))
        assert text.startswith(f"namespace {ns} is never sized ({why}")
        assert text.endswith("this policy will not act")


def test_what_the_cluster_does_not_have_is_warned_of() -> None:
    assert policy_warnings("shop", WEB, NEVER, TargetFacts(True, True)) == []
    assert policy_warnings("shop", None, NEVER, TargetFacts(True, None)) == []
    assert policy_warnings("shop", WEB, NEVER, TargetFacts(False, None)) == [
        "namespace shop does not exist: this policy acts once it is created"
    ]
    assert policy_warnings("shop", ROLLOUT, NEVER, TargetFacts(True, False)) == [
        "Rollout shop/canary does not exist: this policy acts once it is created"
    ]
    assert policy_warnings("shop", WEB, NEVER, TargetFacts(unchecked="HTTP 403 Forbidden")) == [
        "the target was not checked in the cluster: HTTP 403 Forbidden"
    ]
    assert policy_warnings("*", None, NEVER, TargetFacts(False, None)) == []  # cluster default
    assert policy_warnings("shop", WEB, NEVER, None) == []  # not asked


def test_warning_headers_are_kube_apiservers_and_read_back() -> None:
    text = 'a "quoted" name, a back\\slash\nand a newline'
    header = warning_header(text)
    assert header == '299 - "a \\"quoted\\" name, a back\\\\slash and a newline"'
    assert warning_texts([header]) == [text.replace("\n", " ")]
    # Several in one value (HTTP folds repeated headers with commas), and one not in the form.
    joined = f"{warning_header('one, with a comma')}, {warning_header('two')}"
    assert warning_texts([joined, "garbage"]) == ["one, with a comma", "two", "garbage"]
