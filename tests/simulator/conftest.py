"""Fixtures: a simulated cluster per test (the shared `sim`, on the SMALL scenario), reached only
through the official client."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from kubernetes import client

from app.simulator.simulator import Simulator
from tests.support.simulators import SMALL


@pytest.fixture(scope="module")
def scenario() -> dict[str, Any]:
    return SMALL


@pytest.fixture
def api_client(sim: Simulator) -> Iterator[client.ApiClient]:
    c = sim.api_client()
    yield c
    c.close()


@pytest.fixture
def module_api(module_sim: Simulator) -> Iterator[client.ApiClient]:
    """A client of the module's simulated cluster (`module_sim`, on the module's `scenario`)."""
    c = module_sim.api_client()
    yield c
    c.close()


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)
