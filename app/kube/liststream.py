"""A LIST response read item by item as it arrives, never whole.

A LIST of 150000 pods is a response of hundreds of megabytes; `json.loads` of it holds the bytes,
their text and every parsed item at once, which was the informers' memory peak (2.45 GB against
1.9 GB kept). Here the body is decoded in chunks and each element of `items` is parsed on its own
(`JSONDecoder.raw_decode`, the same C scanner as `json.loads`) and handed over before the next is
read, so what the caller keeps of an item (a trimmed copy, a view) is all that stays: the peak is
one chunk and one item above what is kept. The list's other members (`metadata` with its
resourceVersion and continue token, `kind`, `apiVersion`) are parsed whole; they are small.
"""

from __future__ import annotations

import codecs
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from app.kube.responses import give_back

CHUNK = 1 << 16
_DECODER = json.JSONDecoder()
_WHITESPACE = " \t\n\r"


class _Reader:
    def __init__(self, chunks: Iterator[bytes]) -> None:
        self.chunks = chunks
        self.text = codecs.getincrementaldecoder("utf-8")()
        self.buf = ""
        self.pos = 0
        self.done = False

    def more(self) -> bool:
        """Reads the next chunk; False at the end of the body."""
        if self.done:
            return False
        chunk = next(self.chunks, None)
        if chunk is None:
            self.done = True
            self.buf = self.buf[self.pos :] + self.text.decode(b"", final=True)
        else:
            self.buf = self.buf[self.pos :] + self.text.decode(chunk)
        self.pos = 0
        return True

    def peek(self) -> str:
        """The next character that is not whitespace ("" at the end of the body)."""
        while True:
            while self.pos < len(self.buf) and self.buf[self.pos] in _WHITESPACE:
                self.pos += 1
            if self.pos < len(self.buf):
                return self.buf[self.pos]
            if not self.more():
                return ""

    def expect(self, char: str) -> None:
        found = self.peek()
        if found != char:
            raise ValueError(f"malformed LIST response: expected {char!r}, found {found!r}")
        self.pos += 1

    def value(self) -> Any:
        """One JSON value; reads on while the buffer ends inside it."""
        self.peek()
        while True:
            # A value must be followed by something (a comma, a bracket) unless the body ended:
            # a number cut at the end of a chunk would otherwise parse as a shorter one.
            try:
                obj, end = _DECODER.raw_decode(self.buf, self.pos)
                if end < len(self.buf) or self.done:
                    self.pos = end
                    return obj
            except json.JSONDecodeError:
                if self.done:
                    raise
            if not self.more():
                raise ValueError("malformed LIST response: truncated")


def read_list(chunks: Iterable[bytes], on_item: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Calls `on_item` with each element of the body's `items`, in order; returns the body's
    other members (`metadata`, `kind`, ...)."""
    r = _Reader(iter(chunks))
    rest: dict[str, Any] = {}
    r.expect("{")
    if r.peek() == "}":
        return rest
    while True:
        key = r.value()
        r.expect(":")
        if key == "items" and r.peek() == "[":
            r.expect("[")
            if r.peek() != "]":
                while True:
                    item = r.value()
                    if isinstance(item, dict):
                        on_item(item)
                    if r.peek() != ",":
                        break
                    r.pos += 1
            r.expect("]")
        else:
            rest[str(key)] = r.value()
        if r.peek() != ",":
            break
        r.pos += 1
    r.expect("}")
    return rest


def response_chunks(resp: Any, size: int = CHUNK) -> Iterator[bytes]:
    """The body of an urllib3 response (`_preload_content=False`) as it arrives; its connection
    given back once read, or closed if reading stopped midway (a malformed LIST)."""
    try:
        yield from resp.stream(size, decode_content=True)
    finally:
        give_back(resp)
