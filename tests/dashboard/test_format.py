"""Quantities as a person reads them: cores and GiB for big amounts, the exact one in a title."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from app.dashboard.format import cpu_html, memory_html, read_cpu, read_memory
from tests.dashboard.test_pages import seeded  # noqa: F401  (fixture)


def test_big_amounts_read_in_cores_and_gib() -> None:
    assert read_cpu(15062) == "15.06 cores"
    assert read_cpu(1000) == "1 core" and read_cpu(1500) == "1.5 cores"
    assert read_cpu(250) == "250m"  # below a core, millicores read well
    assert read_memory(62659 * 2**20) == "61.19 GiB"
    assert read_memory(2**31) == "2 GiB"
    assert read_memory(380258472) == "363Mi"
    assert read_cpu(None) == read_memory(None) == "\u2013"
    assert read_memory(2**63 - 1) == "unknown"  # unbounded: no number at all


def test_the_exact_quantity_is_in_the_title() -> None:
    assert str(cpu_html(15062)) == '<span class="quantity" title="15062m">15.06 cores</span>'
    assert str(memory_html(62659 * 2**20)) == (
        '<span class="quantity" title="62659Mi">61.19 GiB</span>'
    )
    assert str(cpu_html(250)) == "250m"


@pytest.mark.usefixtures("seeded")
def test_pages_show_cores_and_gib(client: FlaskClient) -> None:
    html = client.get("/dashboard/workloads?namespace=shop").get_data(as_text=True)
    # all pods of each workload: 2 pods asking for 2Gi each
    cells = re.findall(r'class="num requested-memory" data-value="\d+">(.*?)</td>', html)
    assert cells and all(c == '<span class="quantity" title="4Gi">4 GiB</span>' for c in cells)
    assert "4294967296" not in re.sub(r'data-value="\d+"', "", html)
