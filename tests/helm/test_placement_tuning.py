"""The chart's water-level placement tuning (placement.levels, .scoring, .filter): each value set
reaches rightsizer as the RIGHTSIZER_PLACEMENT_* setting app/config.py reads, an empty one passes
nothing (rightsizer's own default applies), what rightsizer would refuse the chart refuses, naming
the value, and values.yaml and docs/helm.md state each setting and its default as app/config.py
has them."""

from __future__ import annotations

import re
from functools import reduce
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest

from app.config import ENVIRONMENT, ConfigError, from_environment
from tests.support.helm import CHART, FULLNAME, Manifest, one, render_chart

DOCS = Path(__file__).resolve().parents[2] / "docs" / "helm.md"

# value under placement -> the setting it sets
TUNING = {
    "levels.intervalSeconds": "RIGHTSIZER_PLACEMENT_INTERVAL_SECONDS",
    "levels.refreshSeconds": "RIGHTSIZER_PLACEMENT_REFRESH_SECONDS",
    "levels.aheadHours": "RIGHTSIZER_PLACEMENT_AHEAD_HOURS",
    "scoring.windowWeights": "RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS",
    "scoring.minWeight": "RIGHTSIZER_PLACEMENT_MIN_WEIGHT",
    "scoring.aheadWeight": "RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT",
    "scoring.spreadWeight": "RIGHTSIZER_PLACEMENT_SPREAD_WEIGHT",
    "scoring.spreadMemoryWeight": "RIGHTSIZER_PLACEMENT_SPREAD_MEMORY_WEIGHT",
    "filter.threshold": "RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD",
}

# None of them rightsizer's default; strings as `--set` passes decimals.
SET = {
    "levels.intervalSeconds": 12,
    "levels.refreshSeconds": "2.5",
    "levels.aheadHours": 24,
    "scoring.windowWeights": [0.6, "0.3", 0.1],
    "scoring.minWeight": 0,
    "scoring.aheadWeight": 2.5,
    "scoring.spreadWeight": "1",
    "scoring.spreadMemoryWeight": 0.75,
    "filter.threshold": 0,
}


def placement(values: dict[str, Any]) -> dict[str, Any]:
    """{"levels.aheadHours": 3} as {"placement": {"levels": {"aheadHours": 3}}}."""
    tree: dict[str, Any] = {}
    for path, value in values.items():
        group, key = path.split(".")
        tree.setdefault(group, {})[key] = value
    return {"placement": tree}


def server_env(docs: list[Manifest]) -> dict[str, str]:
    spec = one(docs, "Deployment", FULLNAME)["spec"]["template"]["spec"]
    c = next(c for c in spec["containers"] if c["name"] == "rightsizer")
    return {e["name"]: e["value"] for e in c["env"] if "value" in e}


def tuning_env(docs: list[Manifest]) -> dict[str, str]:
    return {
        k: v
        for k, v in server_env(docs).items()
        if k.startswith("RIGHTSIZER_PLACEMENT_") and k != "RIGHTSIZER_PLACEMENT_SCHEDULER_NAME"
    }


def field(settings: Any, var: str) -> Any:
    """The Settings field `var` sets, by app/config.py's table."""
    return reduce(getattr, ENVIRONMENT[var][0].split("."), settings)


def as_setting(value: Any) -> str:
    return ",".join(str(v) for v in value) if isinstance(value, list) else str(value)


def test_every_value_set_reaches_the_server_as_the_setting_it_reads() -> None:
    assert set(TUNING.values()) <= set(ENVIRONMENT)  # a misspelt name in TUNING fails here
    e = tuning_env(render_chart(placement(SET)))
    assert set(e) == set(TUNING.values())  # and one in the chart here
    settings = from_environment(e)  # what the server makes of them
    for path, var in TUNING.items():
        expected = from_environment({var: as_setting(SET[path])})
        assert field(settings, var) == field(expected, var), path
        assert field(settings, var) != ENVIRONMENT[var][1], f"{path} is rightsizer's default"
    assert settings.placement.window_weights == (0.6, 0.3, 0.1)
    assert settings.placement.ahead_hours == 24 and settings.placement.filter_threshold == 0


def test_empty_values_pass_nothing_but_0_is_a_value() -> None:
    assert tuning_env(render_chart()) == {}
    empty = {path: None for path in TUNING} | {
        "levels.intervalSeconds": "",
        "scoring.windowWeights": [],
    }
    assert tuning_env(render_chart(placement(empty))) == {}
    # 0 turns the profiles (aheadHours) or the filter (threshold) off: never taken for empty
    zero = empty | {"levels.aheadHours": 0, "filter.threshold": 0}
    assert tuning_env(render_chart(placement(zero))) == {
        "RIGHTSIZER_PLACEMENT_AHEAD_HOURS": "0",
        "RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD": "0",
    }


def test_the_values_are_passed_whether_or_not_the_chart_runs_the_scheduler() -> None:
    values = placement({"levels.aheadHours": 3})
    values["placement"]["scheduler"] = {"enabled": True}
    e = server_env(render_chart(values))
    assert e["RIGHTSIZER_PLACEMENT_AHEAD_HOURS"] == "3"
    assert e["RIGHTSIZER_PLACEMENT_SCHEDULER_NAME"] == "rightsizer-water-level"


@pytest.mark.parametrize(
    ("path", "value", "needs"),
    [
        ("levels.intervalSeconds", 0, "must be a number more than 0"),
        ("levels.refreshSeconds", "soon", "must be a number more than 0"),
        ("levels.aheadHours", 25, "must be a whole number of hours from 0 to 24"),
        ("levels.aheadHours", 6.5, "must be a whole number of hours from 0 to 24"),
        ("levels.aheadHours", -1, "must be a whole number of hours from 0 to 24"),
        ("scoring.windowWeights", [0, 0, 0], "must be three numbers"),
        ("scoring.windowWeights", [0.5, 0.5], "must be three numbers"),
        ("scoring.windowWeights", [0.5, -0.1, 0.6], "must be three numbers"),
        ("scoring.minWeight", -1, "must be a number, 0 or more"),
        ("scoring.aheadWeight", True, "must be a number, 0 or more"),
        ("scoring.spreadWeight", 1.5, "must be a number from 0 to 1"),
        ("scoring.spreadMemoryWeight", -0.3, "must be a number, 0 or more"),
        ("filter.threshold", -0.1, "must be a number from 0 to 1"),
    ],
)
def test_what_rightsizer_would_refuse_is_refused_naming_the_value(
    path: str, value: Any, needs: str
) -> None:
    var = TUNING[path]
    with pytest.raises(ConfigError):  # rightsizer itself would not start with it
        from_environment({var: as_setting(value)})
    with pytest.raises(helm.HelmRenderError) as caught:
        render_chart(placement({path: value}))
    message = str(caught.value)
    assert f"placement.{path} (" in message and needs in message and var in message


def test_a_value_also_given_in_settings_is_refused() -> None:
    values = placement({"levels.aheadHours": 3})
    values["settings"] = {"RIGHTSIZER_PLACEMENT_AHEAD_HOURS": "4"}
    with pytest.raises(helm.HelmRenderError, match=r"placement\.levels\.aheadHours and settings\."):
        render_chart(values)
    # through settings alone it still passes, as before
    del values["placement"]
    assert tuning_env(render_chart(values)) == {"RIGHTSIZER_PLACEMENT_AHEAD_HOURS": "4"}


# Documentation ----------------------------------------------------------------------------------


def shown(default: Any) -> str:
    """A default as values.yaml and docs/helm.md show it: 30, 0.8, [0.5, 0.3, 0.2]."""
    if isinstance(default, tuple):
        return "[" + ", ".join(shown(d) for d in default) + "]"
    if isinstance(default, float) and default.is_integer():
        return str(int(default))
    return str(default)


def value_comments() -> dict[str, str]:
    """Each value of values.yaml (dotted path) -> its comment lines above it, joined."""
    comments: dict[str, str] = {}
    stack: list[tuple[int, str]] = []
    pending: list[str] = []
    for line in (CHART / "values.yaml").read_text().splitlines():
        text = line.strip()
        if text.startswith("#"):
            pending.append(text.lstrip("#").strip().removeprefix("-- "))
            continue
        key = re.match(r"( *)([A-Za-z0-9_]+):", line)
        if key:
            indent = len(key.group(1))
            stack = [(i, k) for i, k in stack if i < indent] + [(indent, key.group(2))]
            comments[".".join(k for _, k in stack)] = " ".join(pending)
        pending = []
    return comments


@pytest.mark.parametrize("path", sorted(TUNING))
def test_values_yaml_states_each_setting_and_rightsizers_default(path: str) -> None:
    var = TUNING[path]
    comment = value_comments()[f"placement.{path}"]
    assert f"({var}; empty: rightsizer's default, {shown(ENVIRONMENT[var][1])})" in comment


@pytest.mark.parametrize("path", sorted(TUNING))
def test_docs_state_each_setting_and_rightsizers_default(path: str) -> None:
    var = TUNING[path]
    rows = [line for line in DOCS.read_text().splitlines() if f"| `placement.{path}` |" in line]
    assert len(rows) == 1, path
    cells = [c.strip() for c in rows[0].strip("|").split("|")]
    assert cells[1:3] == [f"`{var}`", f"`{shown(ENVIRONMENT[var][1])}`"]
