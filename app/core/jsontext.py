"""JSON text users send, read strictly and with its nesting bounded; no I/O.

Python's parser takes NaN, Infinity and -Infinity, which are not JSON (RFC 8259; Go's
encoding/json, which kube-apiserver and cluster-proportional-autoscaler decode with, refuses
them). It also recurses once per level of nesting: text nested about a thousand levels deep
raises RecursionError, and a document nested a little less parses but makes whatever walks it
recursively afterwards (a merge patch, a validator, the JSON encoder) raise it instead, at a
depth that depends on how deep the caller's stack already is. Every document users write here
is a few levels deep, so anything nested deeper than MAX_DEPTH is refused as it is read, with
the path where it goes too deep.
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 64  # levels of arrays and objects; a policy or scaler needs 6


class JsonTextError(ValueError):
    """Text that is not JSON, or nested deeper than allowed; `path` is where it goes too deep
    (keys and indexes from the top), empty when the text did not parse at all."""

    def __init__(self, message: str, path: tuple[str | int, ...] = ()) -> None:
        super().__init__(message)
        self.message, self.path = message, path


def loads(text: str | bytes, max_depth: int = MAX_DEPTH) -> Any:
    """The JSON value of `text`; JsonTextError saying what is wrong and where."""
    try:
        doc = json.loads(text, parse_constant=_not_json)
    except RecursionError:
        raise JsonTextError(f"nested more than {max_depth} levels deep") from None
    except UnicodeDecodeError as e:
        raise JsonTextError(f"not UTF-8 (byte {e.start})") from None
    except json.JSONDecodeError as e:
        raise JsonTextError(f"{e.msg} at line {e.lineno} column {e.colno}") from None
    except ValueError as e:  # a NaN or Infinity constant
        raise JsonTextError(str(e)) from None
    path = too_deep(doc, max_depth)
    if path is not None:
        where = field_path(path)
        raise JsonTextError(f"nested more than {max_depth} levels deep at {where}", path)
    return doc


def _not_json(constant: str) -> Any:
    raise ValueError(f"{constant} is not JSON")


def too_deep(doc: Any, max_depth: int = MAX_DEPTH) -> tuple[str | int, ...] | None:
    """The path of the first array or object nested more than `max_depth` levels deep (the
    top-level value is level 1), or None. Iterative: any depth is walked without recursion."""
    steps: list[tuple[int, str | int]] = [(-1, "")]  # (parent's index, key) of each container
    stack: list[tuple[Any, int, int]] = [(doc, 1, 0)]  # (value, its level, its index in steps)
    while stack:
        value, depth, index = stack.pop()
        if isinstance(value, dict):
            items: Any = value.items()
        elif isinstance(value, list):
            items = enumerate(value)
        else:
            continue
        if depth > max_depth:
            return _path_of(steps, index)
        for key, child in items:
            if isinstance(child, dict | list):
                steps.append((index, key))
                stack.append((child, depth + 1, len(steps) - 1))
    return None


def _path_of(steps: list[tuple[int, str | int]], index: int) -> tuple[str | int, ...]:
    path: list[str | int] = []
    while index > 0:
        index, key = steps[index]
        path.append(key)
    return tuple(reversed(path))


def field_path(path: tuple[str | int, ...], shown: int = 4) -> str:
    """`params.linear[0]...` : a path as the API names fields, its first `shown` steps only."""
    out = ""
    for step in path[:shown]:
        out += f"[{step}]" if isinstance(step, int) else (f".{step}" if out else step)
    if len(path) > shown:
        out += "..."
    return out or "the top level"
