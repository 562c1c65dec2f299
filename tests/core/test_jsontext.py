"""JSON text users send: strict JSON, nesting bounded at MAX_DEPTH with the path named."""

from __future__ import annotations

import pytest

from app.core.jsontext import MAX_DEPTH, JsonTextError, loads, too_deep


def arrays(levels: int) -> str:
    return "[" * levels + "]" * levels


def test_nesting_up_to_the_limit_is_read() -> None:
    doc = loads(arrays(MAX_DEPTH))
    assert too_deep(doc) is None


@pytest.mark.parametrize("levels", [MAX_DEPTH + 1, 900, 5000, 200_000])
def test_deeper_nesting_is_refused_however_deep(levels: int) -> None:
    with pytest.raises(JsonTextError, match=f"nested more than {MAX_DEPTH} levels deep"):
        loads(arrays(levels))


def test_the_path_where_it_goes_too_deep_is_named() -> None:
    text = '{"ok": [1, {"x": 2}], "params": {"steps": [' + arrays(MAX_DEPTH) + "]}}"
    with pytest.raises(JsonTextError) as err:
        loads(text)
    assert err.value.path[:4] == ("params", "steps", 0, 0)
    assert err.value.message.endswith("at params.steps[0][0]...")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"a": NaN}', "NaN is not JSON"),
        ("[Infinity]", "Infinity is not JSON"),
        (b"\xff", "not UTF-8 (byte 0)"),
        ('{"a" 1}', "Expecting ':' delimiter at line 1 column 6"),
    ],
)
def test_what_is_not_json_says_why(text: str | bytes, message: str) -> None:
    with pytest.raises(JsonTextError) as err:
        loads(text)
    assert err.value.message == message
