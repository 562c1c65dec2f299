"""The simulated cluster (app.simulator), loaded only by the commands that run it: `rightsizer sim`
and `rightsizer demo`.

The simulator is an optional part of rightsizer: the `simulator` extra installs what only it needs
(kubernetes-validate), and the image leaves it out. `rightsizer serve` never imports it: these
commands load it by name when they run (the import contract `serve-never-reaches-simulator` in
setup.cfg keeps every other import of it out of the service), and say which extra to install when
it is missing.
"""

from __future__ import annotations

import importlib
import importlib.util
from types import ModuleType

import click

EXTRA = "simulator"
# What only the simulator needs (setup.cfg's `simulator` extra). The simulator reads
# kubernetes-validate's schema files when it serves, long after it is imported: looked for first.
EXTRA_MODULES = ("kubernetes_validate",)


def load(module: str) -> ModuleType:
    """`app.simulator.<module>`, or a ClickException naming the extra when it is not installed:
    the simulator left out (the image), or its dependencies (`pip install rightsizer`)."""
    missing = next((m for m in EXTRA_MODULES if importlib.util.find_spec(m) is None), None)
    try:
        if missing is None:
            return importlib.import_module(f"app.simulator.{module}")
    except ModuleNotFoundError as error:
        missing = error.name
    raise click.ClickException(
        f"the simulated cluster is not installed (no module named {missing!r}): "
        f"install rightsizer with its `{EXTRA}` extra, e.g. pip install 'rightsizer[{EXTRA}]'"
    )


@click.command(
    "sim",
    add_help_option=False,  # `rightsizer sim --help` is the simulator's own
    context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False},
)
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
@click.pass_context
def sim(ctx: click.Context, args: tuple[str, ...]) -> None:
    """Serve a simulated Kubernetes cluster and write a kubeconfig for it (the `simulator`
    extra)."""
    command: click.Command = load("cli").sim_command
    # Not standalone: its errors (usage, ClickException, Ctrl-C's Abort) reach rightsizer's group,
    # which reports them and exits as for any other command.
    command.main(list(args), prog_name=ctx.command_path, standalone_mode=False)
