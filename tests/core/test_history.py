"""How much history a recommendation has against what the updater needs (app.core.history)."""

from __future__ import annotations

from app.core.history import History, history


def test_the_message_says_hours_of_what_is_needed() -> None:
    assert history(1000.0, 1000.0 + 720, 3600).message() == "not enough history: 0.2 hours of 1"
    assert history(None, None, 3600).message() == "not enough history: 0 hours of 1"
    assert history(0.0, 5 * 3600, 24 * 3600).message() == "not enough history: 5 hours of 24"
    assert History(0.96 * 3600, 3600).message() == "not enough history: 0.96 hours of 1"
    assert History(12.4 * 3600, 48 * 3600).message() == "not enough history: 12 hours of 48"


def test_enough_is_the_updaters_rule_and_the_api_document() -> None:
    assert not history(0.0, 3599.0, 3600).enough
    assert history(0.0, 3600.0, 3600).enough
    assert history(0.0, 720.0, 3600).document() == {
        "hours": 0.2,
        "neededHours": 1.0,
        "enough": False,
    }
    assert history(5.0, 1.0, 3600).seconds == 0.0  # a clock that went back: no history
