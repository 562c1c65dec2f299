"""Issue 49 item 7: a policy is named NAMESPACE/NAME everywhere (`policy get shop/catalog`, as
`set-mode` and `events --ref` take it); the older two-word form keeps working."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401

POLICY = "name: catalog\nnamespace: shop\ntarget: {kind: Deployment, name: catalog}\n"


@pytest.fixture
def applied(run: Invoke, tmp_path: Path) -> Invoke:  # noqa: F811
    f = tmp_path / "p.yaml"
    f.write_text(POLICY + "---\nname: default\nnamespace: '*'\n")
    assert run("policy", "apply", "-f", str(f)).exit_code == 0
    return run


@pytest.mark.parametrize("words", [("shop/catalog",), ("shop", "catalog")])
def test_policy_get_takes_namespace_slash_name_and_the_old_form(
    applied: Invoke, words: tuple[str, ...]
) -> None:
    out = applied("policy", "get", *words, "-o", "json")
    assert out.exit_code == 0, out.output
    assert (json.loads(out.output)["namespace"], json.loads(out.output)["name"]) == (
        "shop",
        "catalog",
    )


def test_a_cluster_default_is_star_slash_name(applied: Invoke) -> None:
    out = applied("policy", "get", "*/default", "-o", "json")
    assert out.exit_code == 0, out.output
    assert json.loads(out.output)["namespace"] == "*"


@pytest.mark.parametrize("words", [("shop/catalog",), ("shop", "catalog")])
def test_policy_delete_takes_both_forms(applied: Invoke, words: tuple[str, ...]) -> None:
    out = applied("policy", "delete", *words)
    assert (out.exit_code, out.output) == (0, "policy shop/catalog deleted\n")


def test_policy_export_takes_namespace_slash_name(applied: Invoke) -> None:
    out = applied("policy", "export", "shop/catalog", "-o", "json")
    assert out.exit_code == 0, out.output
    [vpa] = json.loads(out.output)["items"]
    assert vpa["metadata"] == {"name": "catalog", "namespace": "shop"}


@pytest.mark.parametrize("words", [("shop",), ("shop/",), ("a/b/c",), ("shop/a", "b")])
def test_a_malformed_name_is_a_usage_error_showing_the_form(
    applied: Invoke, words: tuple[str, ...]
) -> None:
    out = applied("policy", "get", *words)
    assert out.exit_code == 2
    assert "expected NAMESPACE/NAME, e.g. shop/frontend" in out.output
