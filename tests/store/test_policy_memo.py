"""Policies parsed once per row value (app.store.policy_codec.policy_from_row): a row read again
unchanged gives the same Policy without parsing it again; a row changed in any column, as an
edit by hand in SQL does without moving the version, is parsed anew; an invalid row is refused
at every read; the memo keeps at most PARSED_KEPT policies."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest

from app.documents.policy import PolicyInvalid, parse_policy
from app.store import policy_codec
from app.store.models import Policy as PolicyRow
from app.store.policy_codec import policy_columns, policy_from_row

DOC: dict[str, Any] = {
    "name": "web",
    "namespace": "shop",
    "target": {"kind": "Deployment", "name": "web"},
    "updateMode": "Initial",
    "containerPolicies": [{"containerName": "app", "minAllowed": {"cpu": "100m"}}],
}


def row(doc: dict[str, Any] = DOC, id_: int = 1) -> PolicyRow:
    return PolicyRow(**policy_columns(doc), id=id_, version=1)


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """The names of the policies parsed, in order, with an empty memo."""
    seen: list[str] = []
    real: Callable[..., Any] = parse_policy

    def counting(doc: Any, **kw: Any) -> Any:
        seen.append(doc.get("name"))
        return real(doc, **kw)

    monkeypatch.setattr(policy_codec, "parse_policy", counting)
    monkeypatch.setattr(policy_codec, "_PARSED", type(policy_codec._PARSED)())
    yield seen


def test_an_unchanged_row_is_parsed_once(parses: list[str]) -> None:
    first = policy_from_row(row())
    again = policy_from_row(row())  # another object with the same values (the next read)
    assert again is first
    assert parses == ["web"]


def test_a_row_edited_by_hand_is_parsed_anew(parses: list[str]) -> None:
    r = row()
    assert policy_from_row(r).update_mode == "Initial"
    r.update_mode = "Recreate"  # UPDATE policies SET update_mode = ... (version unchanged)
    assert policy_from_row(r).update_mode == "Recreate"
    r.container_policies = [{"containerName": "app", "minAllowed": {"cpu": "250m"}}]
    assert policy_from_row(r).container_policies[0].min_allowed.get("cpu") == 250
    assert parses == ["web", "web", "web"]


def test_an_invalid_row_is_refused_at_every_read(parses: list[str]) -> None:
    r = row()
    r.update_mode = "Sometimes"
    for _ in range(2):
        with pytest.raises(PolicyInvalid, match="updateMode"):
            policy_from_row(r)
    assert parses == ["web", "web"]


def test_the_memo_keeps_the_most_recently_read(
    parses: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(policy_codec, "PARSED_KEPT", 2)
    rows = [row({**DOC, "name": n}, i) for i, n in enumerate(["a", "b", "c"], 1)]
    for r in rows:
        policy_from_row(r)
    policy_from_row(rows[2])  # kept
    policy_from_row(rows[0])  # forgotten when "c" came
    assert parses == ["a", "b", "c", "a"]
    assert len(policy_codec._PARSED) == 2
