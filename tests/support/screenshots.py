"""Browser screenshots for people to look at, in tests/artifacts/ (not committed)."""

from __future__ import annotations

from pathlib import Path

ARTIFACTS = Path(__file__).parents[1] / "artifacts"


def shot(page: object, name: str, database_url: str) -> None:
    ARTIFACTS.mkdir(exist_ok=True)
    db_name = "postgres" if database_url.startswith("postgresql") else "sqlite"
    page.screenshot(path=str(ARTIFACTS / f"{name}-{db_name}.png"), full_page=True)  # type: ignore[attr-defined]
