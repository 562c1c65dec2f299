"""docs/configuration.md documents every setting the code reads."""

from __future__ import annotations

from dataclasses import fields

from app.config import ENVIRONMENT, recommender_env_var
from app.core.recommend.settings import RecommenderSettings
from tests.support.markdown import read

CONFIGURATION = read("docs/configuration.md")


def test_every_environment_variable_is_documented() -> None:
    names = list(ENVIRONMENT) + [recommender_env_var(f.name) for f in fields(RecommenderSettings)]
    missing = [n for n in names if f"| `{n}` |" not in CONFIGURATION]
    assert missing == []
