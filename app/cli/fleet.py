"""`rightsizer fleet`: the clusters of the fleet (docs/database.md).

`rightsizer fleet` lists every cluster with its workloads, savings and
risk as of when they were summed, and the totals across clusters (GET /api/v1/fleet).
"""

from __future__ import annotations

from typing import Any

import click

from app.cli.client import dump, table
from app.cli.session import Api, api_options


def _amounts(doc: dict[str, Any]) -> tuple[str, str]:
    return f"{doc['cpuCores']:g}", f"{doc['memoryGiB']:g}"


def _row(name: str, doc: dict[str, Any]) -> tuple[Any, ...]:
    short = doc["shortfall"]
    return (
        name,
        doc["workloads"],
        doc["containers"],
        doc["pods"],
        *_amounts(doc["estimatedSavings"]),
        *_amounts(short),
        short["containers"],
        doc.get("lastRecommendationUpdate") or "-",
        "summed now" if doc.get("computedBy") == "request" else doc.get("asOf") or "-",
    )


@click.command("fleet")
@click.option(
    "-o",
    "--output",
    type=click.Choice(["table", "json", "yaml"]),
    default="table",
    show_default=True,
    help="Output format.",
)
@api_options
def fleet(output: str, api: Api) -> None:
    """Every cluster of the database: its workloads, savings and risk, and the totals (savings
    and shortfall in cores and GiB over the pods seen; the server's own cluster marked *). AS OF
    is when each cluster's rightsizer summed them after its last recommender run ("summed now":
    it has not yet, the server summed its rows for this answer); the totals' is the oldest."""
    body = api.call("GET", "/fleet").json()
    if output != "table":
        click.echo(dump(body, output))
        return
    rows = [
        _row(f"{c['name'] or c['id'] or '(unclaimed)'}{' *' if c['self'] else ''}", c)
        for c in body["items"]
    ]
    rows.append(_row(f"TOTAL ({body['totals']['clusters']} clusters)", body["totals"]))
    heads = ("CLUSTER", "WORKLOADS", "CONTAINERS", "PODS", "SAVINGS CPU", "SAVINGS GIB")
    short = ("SHORT CPU", "SHORT GIB", "SHORT CONTAINERS", "LAST UPDATE", "AS OF")
    click.echo(table((*heads, *short), rows))
