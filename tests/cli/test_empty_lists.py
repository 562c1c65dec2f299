"""Issue 49 item 7: `recommendations list -n shopp` (a typo) said "no recommendations yet"; a
namespace without any workload rightsizer knows now says so and names those that have some."""

from __future__ import annotations

from flask import Flask

from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401
from tests.support.usage import seed


def test_a_namespace_without_workloads_gets_a_hint_naming_those_with_some(
    app: Flask,
    run: Invoke,  # noqa: F811
) -> None:
    seed()  # shop and ops have workloads
    out = run("recommendations", "list", "-n", "shopp")
    assert out.exit_code == 0
    assert out.stdout == ""
    assert out.stderr == (
        "no workloads in namespace 'shopp': rightsizer knows of none there "
        "(namespaces with workloads: ops, shop); did you mean 'shop'?\n"
    )


def test_no_guess_when_nothing_is_close(app: Flask, run: Invoke) -> None:  # noqa: F811
    seed()
    out = run("recommendations", "list", "-n", "payments")
    assert out.stderr.endswith("(namespaces with workloads: ops, shop)\n")


def test_nothing_anywhere_is_no_recommendations_yet(run: Invoke) -> None:  # noqa: F811
    assert run("recommendations", "list").stderr == "no recommendations yet\n"
    out = run("recommendations", "list", "-n", "shop")
    assert out.stderr == "no recommendations yet, in any namespace\n"
