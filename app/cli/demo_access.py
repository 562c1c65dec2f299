"""How a user reaches `rightsizer demo`: its port, an admin token, the CLI context, and the exact
commands it prints to right-size a workload.

The token goes through the server's ordinary static-token authentication (app/web/auth.py): a token
file of one line, `token,demo-admin,*`, written 0600 beside the demo's database and named by
RIGHTSIZER_AUTH_TOKEN_FILE. The context (app/cli/context.py) holds the server URL, the demo's CA
and that token, so the client commands need no flag.
"""

from __future__ import annotations

import errno
import secrets
import shlex
import shutil
import socket
import sys
from pathlib import Path

import click

from app.cli.context import Context, ContextError, load, save

TOKEN_FILE = "rightsizer-tokens.csv"
DEMO_USER = "demo-admin"
CONTEXT = "demo"
# The workload the printed walk-through right-sizes: the default scenario's over-provisioned one.
EXAMPLE = ("shop", "Deployment", "catalog")


def check_port(port: int) -> None:
    """Fails at once, naming the fix, when 127.0.0.1:`port` cannot be listened on."""
    with socket.socket() as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as gunicorn binds
        try:
            s.bind(("127.0.0.1", port))
        except OSError as e:
            if e.errno == errno.EADDRINUSE:
                why = f"port {port} is taken (another rightsizer demo, or another server)"
            elif e.errno == errno.EACCES:
                why = f"port {port} needs privileges this user does not have"
            else:
                why = f"cannot listen on 127.0.0.1:{port}: {e.strerror}"
            raise click.ClickException(
                f"{why}: choose another with `rightsizer demo --port PORT` or "
                "`make demo PORT=PORT` (0 picks any free port)"
            ) from None


def check_context_file(path: Path) -> None:
    """Fails before anything starts when the CLI's context file cannot be updated."""
    try:
        load(path)
    except ContextError as e:
        raise click.ClickException(
            f"{e}; the demo writes its context there: fix or move the file, or set "
            "RIGHTSIZER_CONFIG to another path"
        ) from None


def write_token_file(directory: Path) -> tuple[Path, str]:
    """A new admin token in a token file of its own (mode 0600); returns (file, token)."""
    token = secrets.token_urlsafe(32)
    path = directory / TOKEN_FILE
    path.unlink(missing_ok=True)
    path.touch(mode=0o600)
    path.write_text(
        f"# token,user,permissions: written by `rightsizer demo` (docs/api.md, Authentication)\n"
        f"{token},{DEMO_USER},*\n",
        encoding="utf-8",
    )
    return path, token


def write_context(path: Path, server: str, ca: Path, token: str) -> None:
    save(path, Context(CONTEXT, server, str(ca.resolve()), token))


def cli_command() -> str:
    """How this user runs the CLI: `rightsizer` when that is on PATH, else its path as typed
    (e.g. `.venv/bin/rightsizer` under `make demo`), else `python -m app.cli`."""
    argv0 = sys.argv[0]
    if Path(argv0).name == "rightsizer":
        found = shutil.which("rightsizer")
        if found and Path(found).resolve() == Path(argv0).resolve():
            return "rightsizer"
        return shlex.quote(argv0)
    return f"{shlex.quote(sys.executable)} -m app.cli"


def next_steps(server: str, ca: Path, kubeconfig: str, config: Path, cli: str, log: Path) -> str:
    """The walk-through printed once the demo is ready: every line a command to copy, or a
    comment (a block pasted whole into a shell runs as is)."""
    ns, kind, name = EXAMPLE
    q = shlex.quote
    columns = (
        "NAME:.metadata.name,STATUS:.status.phase,"
        "CPU:.spec.containers[0].resources.requests.cpu,"
        "MEMORY:.spec.containers[0].resources.requests.memory"
    )
    return "\n".join(
        [
            f"rightsizer is ready at {server} (its CA: {ca}).",
            f"The CLI now talks to it: context {CONTEXT!r} in {config} holds the server, the CA "
            "and an admin token.",
            "",
            f"Right-size {ns}/{name}, whose pods ask for far more than they use:",
            "",
            "# 1. its recommendation",
            f"{cli} recommendations list -n {ns}",
            "# 2. a Recreate policy: rightsizer evicts its pods, and they come back with the "
            "recommended requests",
            f"{cli} policy apply -f - <<'EOF'",
            f"name: {name}",
            f"namespace: {ns}",
            f"target: {{kind: {kind}, name: {name}}}",
            "updateMode: Recreate",
            "EOF",
            "# 3. watch its pods being replaced, one at a time (within a minute; Ctrl-C ends it)",
            f"KUBECONFIG={q(kubeconfig)} kubectl get pods -n {ns} -l app={name} -w "
            f"-o {q('custom-columns=' + columns)}",
            "# 4. back to recommendations only",
            f"{cli} policy set-mode {ns}/{name} Off",
            "",
            f"Dashboard:  {server}/dashboard/   (browsers do not know the demo's CA: import "
            f"{ca}, or accept the warning)",
            f"REST API:   curl --cacert {q(str(ca))} {server}/api/v1/recommendations",
            f"Cluster:    KUBECONFIG={q(kubeconfig)} kubectl get pods -A",
            "Policies:   docs/policies.md (every field, with examples)",
            f"Logs:       {log} (rightsizer's and the simulated cluster's)",
            "Ctrl-C stops the demo.",
        ]
    )
