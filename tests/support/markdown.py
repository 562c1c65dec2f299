"""The repository's Markdown documents as tests read them: a file's text, one of its sections by
title, its relative links, and the anchors GitHub gives its headings."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

_FENCE = re.compile(r"^(```|~~~)")
_HEADING = re.compile(r"^(#{1,6}) (.*?)\s*#*\s*$")
_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")


def read(path: str) -> str:
    """The text of `path`, relative to the repository's root (`docs/cli.md`)."""
    return (ROOT / path).read_text()


def section(path: str, title: str) -> str:
    """The body of the `## title` section of `path`: from after its heading to the next heading
    of the same or a higher level (code blocks are not headings)."""
    lines = read(path).splitlines(keepends=True)
    start, level = None, 0
    for i, (line, in_code) in enumerate(_with_code_state(lines)):
        match = None if in_code else _HEADING.match(line)
        if match is None:
            continue
        if start is None:
            if match.group(2) == title:
                start, level = i + 1, len(match.group(1))
        elif len(match.group(1)) <= level:
            return "".join(lines[start:i])
    if start is None:
        raise AssertionError(f"{path} has no section {title!r}")
    return "".join(lines[start:])


def headings(text: str) -> list[str]:
    """The headings' titles, in order, outside code blocks."""
    lines = text.splitlines(keepends=True)
    found = []
    for line, in_code in _with_code_state(lines):
        match = None if in_code else _HEADING.match(line)
        if match:
            found.append(match.group(2))
    return found


def anchors(text: str) -> set[str]:
    """The anchors GitHub makes of the headings: lower case, punctuation but `-` and `_` dropped,
    spaces as `-`; a repeated one gets `-1`, `-2`, ..."""
    seen: dict[str, int] = {}
    out = set()
    for title in headings(text):
        slug = re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")
        n = seen.get(slug, 0)
        seen[slug] = n + 1
        out.add(slug if n == 0 else f"{slug}-{n}")
    return out


def links(text: str) -> list[str]:
    """The targets of the Markdown links outside code blocks and code spans."""
    lines = text.splitlines(keepends=True)
    found = []
    for line, in_code in _with_code_state(lines):
        if not in_code:
            found += _LINK.findall(re.sub(r"`[^`]*`", "", line))
    return found


def _with_code_state(lines: list[str]) -> list[tuple[str, bool]]:
    """Each line with whether it belongs to a fenced code block (fences included)."""
    out, in_code = [], False
    for line in lines:
        if _FENCE.match(line):
            out.append((line, True))
            in_code = not in_code
        else:
            out.append((line, in_code))
    return out
