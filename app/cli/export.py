"""`rightsizer policy export`: policies as VerticalPodAutoscaler objects, for users who go back to
VPA (or keep both in git). The mapping is app.documents.vpa's, the inverse of `policy import`:
`rightsizer policy export | rightsizer policy import -f -` gives the same policies back."""

from __future__ import annotations

import json
from urllib.parse import quote

import click
import yaml

from app.cli.names import METAVAR, object_ref
from app.cli.session import Api, api_options, fail
from app.documents.vpa import NotExportable, PolicyInvalid, vpa_from_policy


@click.command("export")
@click.argument("ref", nargs=-1, metavar=f"[{METAVAR}]")
@click.option("-n", "--namespace", "only", help="Only the policies of this namespace.")
@click.option(
    "-o", "--output", type=click.Choice(["yaml", "json"]), default="yaml", show_default=True
)
@api_options
def export_vpas(ref: tuple[str, ...], only: str | None, output: str, api: Api) -> None:
    """Write policies as VerticalPodAutoscaler objects: one (NAMESPACE/NAME), a namespace's
    (-n), or all. Policies VPA cannot express (namespace-wide, cluster defaults) are named on
    stderr and left out."""
    namespace, name = object_ref(ref) if ref else (None, None)
    if name is not None:
        path = f"/policies/{quote(str(namespace), safe='*')}/{quote(name, safe='')}"
        policies = [api.call("GET", path).json()]
    else:
        params = {"namespace": only} if only else {}
        policies = api.call("GET", "/policies", params=params).json()["items"]
    out = []
    for doc in policies:
        try:
            out.append(vpa_from_policy(doc))
        except NotExportable as e:
            if name is not None:
                fail(str(e))
            click.echo(f"warning: {e}; left out", err=True)
        except PolicyInvalid as e:
            click.echo(f"warning: policy {doc.get('namespace')}/{doc.get('name')}: {e}", err=True)
    if output == "json":
        click.echo(json.dumps({"apiVersion": "v1", "kind": "List", "items": out}, indent=2))
    elif out:
        click.echo(yaml.safe_dump_all(out, sort_keys=False), nl=False)
