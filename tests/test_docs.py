"""The README documents every setting the code reads."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

from app.config import ENVIRONMENT, recommender_env_var
from app.core.recommend.settings import RecommenderSettings

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_every_environment_variable_is_documented() -> None:
    names = list(ENVIRONMENT) + [recommender_env_var(f.name) for f in fields(RecommenderSettings)]
    missing = [n for n in names if f"| `{n}` |" not in README]
    assert missing == []
