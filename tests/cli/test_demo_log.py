"""The demo's log file (app.cli.demo_terminal): records go to the file, and once it is closed a
thread that still logs (the in-process simulator's daemon threads, at Ctrl-C) writes nothing
anywhere, in particular no "--- Logging error ---" traceback onto stderr."""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest

from app.cli.demo_terminal import close_log, log_to_file


@pytest.fixture
def root_handlers() -> Iterator[None]:
    root = logging.getLogger()
    handlers, level = list(root.handlers), root.level
    yield
    for h in list(root.handlers):
        root.removeHandler(h)
    for h in handlers:
        root.addHandler(h)
    root.setLevel(level)


def test_records_go_to_the_file_then_nowhere_once_it_is_closed(
    tmp_path: Path, root_handlers: None, capfd: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "demo.log"
    fh = log_to_file(path)
    logging.getLogger("app.simulator").info("tick")
    close_log(fh)

    def late() -> None:  # a daemon thread of the simulator, after the demo closed its log
        logging.getLogger("app.simulator").warning("served a watch")

    t = threading.Thread(target=late)
    t.start()
    t.join()

    assert fh.closed
    assert "tick" in path.read_text()
    assert "served a watch" not in path.read_text()
    out, err = capfd.readouterr()
    assert "Logging error" not in err and "served a watch" not in err
    assert out == ""
