"""Which rightsizer the client commands talk to: flags, environment, then the context file.

The context file is to rightsizer's CLI what a kubeconfig is to kubectl, flattened: each context
holds a server URL, the CA that signed its certificate and a bearer token; `current-context` names
the one used by default. `rightsizer demo` writes one for the demo it starts.

    current-context: demo
    contexts:
    - name: demo
      server: https://localhost:8443
      certificate-authority: /home/me/rightsizer/certs/ca.crt
      token: 5f0c...

Its path is $RIGHTSIZER_CONFIG, else $XDG_CONFIG_HOME/rightsizer/config.yaml, else
~/.config/rightsizer/config.yaml. It is written with mode 0600, as it holds a token.

Each setting is taken from the first of: its flag (`--server`, `--cacert`, `--token`), its
variable (RIGHTSIZER_SERVER, RIGHTSIZER_CACERT, RIGHTSIZER_TOKEN), the context (`--context` or
RIGHTSIZER_CONTEXT, else `current-context`). A context's CA and token are used only for that
context's own server: a token is never sent to a server it was not written for.

Parsing, rendering and resolution are pure; `load` and `save` do the file I/O.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

DEFAULT_SERVER = "http://127.0.0.1:8080"
SERVER_VARIABLE = "RIGHTSIZER_SERVER"
CACERT_VARIABLE = "RIGHTSIZER_CACERT"
TOKEN_VARIABLE = "RIGHTSIZER_TOKEN"
CONTEXT_VARIABLE = "RIGHTSIZER_CONTEXT"
CONFIG_VARIABLE = "RIGHTSIZER_CONFIG"
# Client-side settings (docs/cli.md): variable -> default; flags win over them.
CLIENT_ENVIRONMENT = {
    SERVER_VARIABLE: DEFAULT_SERVER,
    CACERT_VARIABLE: "",
    TOKEN_VARIABLE: "",
    CONTEXT_VARIABLE: "",
    CONFIG_VARIABLE: "~/.config/rightsizer/config.yaml",
}
CONTEXT_FIELDS = ("name", "server", "certificate-authority", "token")


class ContextError(ValueError):
    """The context file cannot be used; the message names the file and the field."""


@dataclass(frozen=True)
class Context:
    name: str
    server: str
    certificate_authority: str = ""
    token: str = ""


@dataclass(frozen=True)
class Config:
    contexts: tuple[Context, ...] = ()
    current: str = ""

    def find(self, name: str) -> Context | None:
        return next((c for c in self.contexts if c.name == name), None)

    def with_context(self, context: Context, make_current: bool = True) -> Config:
        """This config with `context` added, or replacing the one of its name (in its place)."""
        if self.find(context.name) is None:
            contexts = (*self.contexts, context)
        else:
            contexts = tuple(context if c.name == context.name else c for c in self.contexts)
        return Config(contexts, context.name if make_current else self.current)


@dataclass(frozen=True)
class Connection:
    """What a client command uses, and where its server came from (for error messages)."""

    server: str
    cacert: str = ""
    token: str = ""
    server_from: str = "the default"
    cacert_from: str = ""


def config_path(env: Mapping[str, str]) -> Path:
    if env.get(CONFIG_VARIABLE):
        return Path(env[CONFIG_VARIABLE]).expanduser()
    base = env.get("XDG_CONFIG_HOME") or os.path.join(env.get("HOME") or "~", ".config")
    return Path(base).expanduser() / "rightsizer" / "config.yaml"


def parse_config(text: str, path: str) -> Config:
    """Raises ContextError naming the file and the field."""
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise ContextError(f"{path}: not YAML: {e}") from None
    if doc is None:
        return Config()
    if not isinstance(doc, dict):
        raise ContextError(f"{path}: must be a mapping with current-context and contexts")
    current = doc.get("current-context", "")
    current = "" if current is None else current
    if not isinstance(current, str):
        raise ContextError(f"{path}: current-context: must be a context's name")
    items = doc.get("contexts", [])
    items = [] if items is None else items
    if not isinstance(items, list):
        raise ContextError(f"{path}: contexts: must be a list")
    contexts = tuple(_context(item, f"{path}: contexts[{i}]") for i, item in enumerate(items))
    names = [c.name for c in contexts]
    for i, name in enumerate(names):
        if name in names[:i]:
            raise ContextError(f"{path}: contexts[{i}].name: {name!r} appears twice")
    return Config(contexts, current)


def _context(item: Any, where: str) -> Context:
    if not isinstance(item, dict):
        raise ContextError(f"{where}: must be a mapping of {', '.join(CONTEXT_FIELDS)}")
    for key in item:
        if key not in CONTEXT_FIELDS:
            raise ContextError(
                f"{where}.{key}: unknown field (expected {', '.join(CONTEXT_FIELDS)})"
            )
    values = {}
    for key in CONTEXT_FIELDS:
        value = item.get(key, "")
        value = "" if value is None else value
        if not isinstance(value, str):
            raise ContextError(f"{where}.{key}: must be a string")
        values[key] = value
    if not values["name"]:
        raise ContextError(f"{where}.name: required")
    if not values["server"]:
        raise ContextError(f"{where}.server: required (e.g. https://localhost:8443)")
    return Context(
        values["name"], values["server"], values["certificate-authority"], values["token"]
    )


def render_config(config: Config) -> str:
    contexts = []
    for c in config.contexts:
        item = {"name": c.name, "server": c.server}
        if c.certificate_authority:
            item["certificate-authority"] = c.certificate_authority
        if c.token:
            item["token"] = c.token
        contexts.append(item)
    doc = {"current-context": config.current, "contexts": contexts}
    return str(yaml.safe_dump(doc, sort_keys=False, default_flow_style=False))


def load(path: Path) -> Config:
    """The config at `path`; an absent file is an empty config."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return Config()
    except (OSError, UnicodeDecodeError) as e:
        raise ContextError(f"{path}: cannot read: {e}") from None
    return parse_config(text, str(path))


def save(path: Path, context: Context) -> None:
    """Adds or replaces `context` and makes it current; the other contexts are kept. The file is
    replaced atomically and only ever exists with mode 0600 (its directory 0700 when created)."""
    config = load(path).with_context(context)  # a broken file raises: nothing is overwritten
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".config-", suffix=".tmp")  # mode 0600
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(render_config(config))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def _same_server(a: str, b: str) -> bool:
    return a.rstrip("/") == b.rstrip("/")


def resolve(
    flags: Mapping[str, str | None], env: Mapping[str, str], config: Config, path: str
) -> Connection:
    """The connection from flags (`server`, `cacert`, `token`, `context`; None: not given), the
    environment and the context file's config (read from `path`), in that order per setting."""
    chosen = flags.get("context") or env.get(CONTEXT_VARIABLE)
    wanted = chosen or config.current
    context = config.find(wanted) if wanted else None
    server = _given(flags.get("server"), "--server", env.get(SERVER_VARIABLE), SERVER_VARIABLE)
    if wanted and context is None and (chosen or server is None):
        known = ", ".join(c.name for c in config.contexts) or "none"
        raise ContextError(f"{path}: no context {wanted!r} (contexts: {known})")
    conn = Connection(DEFAULT_SERVER)
    where = f"context {wanted!r} in {path}"
    if context is not None:
        conn = Connection(
            context.server, context.certificate_authority, context.token, where, where
        )
    if server is not None:
        if context and _same_server(server[0], context.server):
            conn = replace(conn, server=server[0], server_from=server[1])
        else:  # the context's CA and token are not for this server
            conn = Connection(server[0], server_from=server[1])
    cacert = _given(flags.get("cacert"), "--cacert", env.get(CACERT_VARIABLE), CACERT_VARIABLE)
    if cacert is not None:
        conn = replace(conn, cacert=cacert[0], cacert_from=cacert[1])
    token = _given(flags.get("token"), "--token", env.get(TOKEN_VARIABLE), TOKEN_VARIABLE)
    if token is not None:
        conn = replace(conn, token=token[0])
    return conn


def _given(
    flag: str | None, flag_name: str, var: str | None, var_name: str
) -> tuple[str, str] | None:
    """(value, where from) of the flag if given, else of the variable if set, else None."""
    if flag is not None:
        return flag, flag_name
    if var:
        return var, var_name
    return None
