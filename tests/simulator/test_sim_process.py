"""`rightsizer sim` as a process of its own: what it does once the cluster is built."""

from __future__ import annotations

import gc
import signal
from pathlib import Path
from types import SimpleNamespace

import pytest

from app.simulator import cli as sim_cli


def test_the_cluster_built_at_start_up_is_left_out_of_the_collectors_walks(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The simulated cluster lives as long as the process, so `rightsizer sim` freezes it
    (gc.freeze): a full collection then skips it instead of walking every pod's objects in
    whichever request it interrupts (~0.2 s at 15,000 pods, which the recommender benchmark
    measured as its PodMetrics LIST). The test stops the command at once instead of serving."""
    stop_at_once = SimpleNamespace(wait=lambda: None, set=lambda: None)
    monkeypatch.setattr(sim_cli, "threading", SimpleNamespace(Event=lambda: stop_at_once))
    monkeypatch.setattr(signal, "signal", lambda *_: None)  # the SIGTERM handler stays
    command = sim_cli.sim_command.callback
    assert command is not None
    before = gc.get_freeze_count()
    try:
        command(None, "127.0.0.1", 0, 3, 20, 0.0, 1, str(tmp_path / "kubeconfig"), {}, None)
        frozen = gc.get_freeze_count()
    finally:
        gc.unfreeze()  # this test process keeps collecting what the simulator left
    assert frozen > before
