"""What `rightsizer demo` leaves on the terminal: one status line while it starts (rewritten in
place on a terminal, one line per step elsewhere), then the table and the instructions, and nothing
after them until Ctrl-C. The service's log (its jobs log a line every few seconds) and the demo's
own go to a file, named in the instructions."""

from __future__ import annotations

import logging
import time
from pathlib import Path
from typing import TextIO

LOG_NAME = "rightsizer-demo.log"
CLEAR_TO_END = "\x1b[K"  # ANSI "erase in line": what is left of a longer status before it


class StatusLine:
    """One line of progress on `out`: on a terminal each update replaces the last (carriage
    return, erase the rest of the line); elsewhere (a pipe, a file) each new text is a line."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.tty = out.isatty()
        self.started = time.monotonic()
        self.text = ""

    def show(self, text: str) -> None:
        if self.tty:
            elapsed = time.monotonic() - self.started
            self.out.write(f"\r{text} ({elapsed:.0f}s){CLEAR_TO_END}")
        elif text != self.text:
            self.out.write(text + "\n")
        self.text = text
        self.out.flush()

    def done(self) -> None:
        """Removes the status line (on a terminal), so what follows starts at column 0."""
        if self.tty and self.text:
            self.out.write(f"\r{CLEAR_TO_END}")
            self.out.flush()
        self.text = ""


def log_to_file(path: Path) -> TextIO:
    """The demo process's log records (the simulator's) go to `path` instead of the terminal;
    returns the file, open for appending, for the service's own output too."""
    fh = path.open("a", encoding="utf-8")
    handler = logging.StreamHandler(fh)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    for h in list(root.handlers):
        root.removeHandler(h)
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    return fh


def close_log(fh: TextIO) -> None:
    """Closes the demo's log file, first taking its handler off the root logger for one that
    drops records: a thread still running (the in-process simulator's, daemon threads) then logs
    into nothing. Left on, its records would meet a closed file, and logging would print each
    failure's traceback to stderr, racing the interpreter's exit for that stream."""
    root = logging.getLogger()
    for h in list(root.handlers):
        if isinstance(h, logging.StreamHandler) and h.stream is fh:
            root.removeHandler(h)
    root.addHandler(logging.NullHandler())
    fh.close()
