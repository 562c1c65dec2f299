"""For tests elsewhere in rightsizer: a simulated cluster in a background thread.

from app.simulator.testing import running_simulator

with running_simulator() as sim:             # bundled default scenario, frozen clock
    api = kubernetes.client.CoreV1Api(sim.api_client())
    ...
    sim.advance(3600)                        # an hour later: OOMs, restarts, new usage
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

from app.simulator.scenarios.scenario import Scenario
from app.simulator.simulator import Simulator

# A minimal scenario for tests that want an empty cluster with room for pods.
EMPTY: dict[str, Any] = {
    "nodes": [{"namePrefix": "node", "count": 3, "cpu": "4", "memory": "16Gi"}]
}


@contextmanager
def running_simulator(
    scenario: Scenario | str | os.PathLike[str] | Mapping[str, Any] | None = None, **options: Any
) -> Iterator[Simulator]:
    """Start a simulator on a free port, yield it, and stop it afterwards.

    `scenario` is a Scenario, a YAML path, a mapping in the scenario format, or None for the
    bundled default. Options are Simulator's: nodes/pods (scale mode), speed (default 0: the
    clock moves only with `advance`), seed, kubeconfig_path, service_urls, watch_window,
    bookmark_interval, version (the Kubernetes release served and whose rules apply: "1.33",
    the default, to "1.36").
    """
    sim = Simulator(scenario, **options)
    sim.start()
    try:
        yield sim
    finally:
        sim.stop()
