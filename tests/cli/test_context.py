"""The CLI's connection: flags, then variables, then the context file, per setting; the file
is written 0600, keeps other contexts and never overwrites a broken one."""

from __future__ import annotations

import stat
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from hypothesis import given
from hypothesis import strategies as st

from app.cli import cli
from app.cli.context import (
    DEFAULT_SERVER,
    Config,
    Context,
    ContextError,
    config_path,
    load,
    parse_config,
    render_config,
    resolve,
    save,
)
from tests.support.tokens import TOKENS
from tests.support.users import app_config, live_url, token_file  # noqa: F401  (fixtures)

DEMO = Context("demo", "https://localhost:8443", "/certs/ca.crt", "demo-token")
OTHER = Context("prod", "https://rightsizer.example", "", "prod-token")
CONFIG = Config((DEMO, OTHER), "demo")
NO_FLAGS: dict[str, str | None] = {}


def test_the_current_context_gives_server_ca_and_token() -> None:
    conn = resolve(NO_FLAGS, {}, CONFIG, "cfg")
    assert (conn.server, conn.cacert, conn.token) == (DEMO.server, "/certs/ca.crt", "demo-token")
    assert conn.server_from == "context 'demo' in cfg"


def test_nothing_anywhere_is_the_default_server_without_token() -> None:
    conn = resolve(NO_FLAGS, {}, Config(), "cfg")
    assert (conn.server, conn.cacert, conn.token) == (DEFAULT_SERVER, "", "")
    assert conn.server_from == "the default"


def test_flags_win_over_variables_which_win_over_the_context() -> None:
    env = {"RIGHTSIZER_TOKEN": "env-token", "RIGHTSIZER_CACERT": "/env/ca.crt"}
    conn = resolve(NO_FLAGS, env, CONFIG, "cfg")
    assert (conn.server, conn.cacert, conn.token) == (DEMO.server, "/env/ca.crt", "env-token")
    assert conn.cacert_from == "RIGHTSIZER_CACERT"
    flags = {"token": "flag-token", "cacert": "/flag/ca.crt"}
    conn = resolve(flags, env, CONFIG, "cfg")
    assert (conn.cacert, conn.token, conn.cacert_from) == ("/flag/ca.crt", "flag-token", "--cacert")
    conn = resolve({"server": "https://localhost:8443/"}, {}, CONFIG, "cfg")
    assert conn.token == "demo-token" and conn.server_from == "--server"  # the same server


def test_a_context_token_never_goes_to_another_server() -> None:
    for flags, env in (
        ({"server": "https://elsewhere:8443"}, {}),
        ({}, {"RIGHTSIZER_SERVER": "https://elsewhere:8443"}),
    ):
        conn = resolve(flags, env, CONFIG, "cfg")
        assert (conn.server, conn.cacert, conn.token) == ("https://elsewhere:8443", "", "")
    conn = resolve({"server": "https://elsewhere:8443"}, {"RIGHTSIZER_TOKEN": "t"}, CONFIG, "c")
    assert conn.token == "t"


def test_another_context_by_flag_or_variable() -> None:
    assert resolve({"context": "prod"}, {}, CONFIG, "c").token == "prod-token"
    assert resolve({}, {"RIGHTSIZER_CONTEXT": "prod"}, CONFIG, "c").server == OTHER.server
    with pytest.raises(ContextError, match=r"cfg: no context 'test' \(contexts: demo, prod\)"):
        resolve({"context": "test"}, {}, CONFIG, "cfg")
    dangling = Config((OTHER,), "gone")
    with pytest.raises(ContextError, match="no context 'gone'"):
        resolve(NO_FLAGS, {}, dangling, "cfg")
    assert resolve({"server": "http://x:1"}, {}, dangling, "cfg").server == "http://x:1"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("- a\n", "cfg: must be a mapping"),
        ("contexts: {}\n", "cfg: contexts: must be a list"),
        ("contexts: [{name: a}]\n", r"cfg: contexts\[0\].server: required"),
        ("contexts: [{server: http://a}]\n", r"cfg: contexts\[0\].name: required"),
        ("contexts: [{name: a, server: x, user: me}]\n", r"contexts\[0\].user: unknown field"),
        ("contexts: [{name: a, server: x, token: 5}]\n", r"contexts\[0\].token: must be a string"),
        (
            "contexts: [{name: a, server: x}, {name: a, server: y}]\n",
            r"contexts\[1\].name: 'a' appears twice",
        ),
        ("current-context: [a]\n", "current-context: must be"),
        ("a: [\n", "cfg: not YAML"),
    ],
)
def test_a_bad_file_names_the_field(text: str, message: str) -> None:
    with pytest.raises(ContextError, match=message):
        parse_config(text, "cfg")


names = st.text(st.characters(codec="utf-8", categories=("L", "N", "P", "S")), min_size=1)


@given(
    st.lists(
        st.builds(Context, names, names, st.text(max_size=20), st.text(max_size=20)),
        unique_by=lambda c: c.name,
    ),
    st.text(max_size=10),
)
def test_render_and_parse_round_trip(contexts: list[Context], current: str) -> None:
    config = Config(tuple(contexts), current)
    assert parse_config(render_config(config), "cfg") == config


def test_the_path(tmp_path: Path) -> None:
    assert config_path({"RIGHTSIZER_CONFIG": "/x/c.yaml", "HOME": "/h"}) == Path("/x/c.yaml")
    assert config_path({"XDG_CONFIG_HOME": "/xdg", "HOME": "/h"}) == Path(
        "/xdg/rightsizer/config.yaml"
    )
    assert config_path({"HOME": "/h"}) == Path("/h/.config/rightsizer/config.yaml")


def test_save_is_0600_keeps_other_contexts_and_replaces_its_own(tmp_path: Path) -> None:
    path = tmp_path / "new" / "config.yaml"
    save(path, OTHER)
    save(path, DEMO)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert load(path) == Config((OTHER, DEMO), "demo")
    moved = Context("demo", "https://localhost:9443", "/c/ca.crt", "new-token")
    save(path, moved)
    assert load(path) == Config((OTHER, moved), "demo")
    assert [p.name for p in path.parent.iterdir()] == ["config.yaml"]  # no temporary file left


def test_save_never_overwrites_a_file_it_cannot_read(tmp_path: Path) -> None:
    path = tmp_path / "config.yaml"
    path.write_text("contexts: [{name: mine, server: x, colour: red}]\n")
    with pytest.raises(ContextError, match="colour: unknown field"):
        save(path, DEMO)
    assert "colour" in path.read_text()


# The CLI, against a real server ------------------------------------------------------------------


@pytest.fixture
def cli_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Callable[..., Result]:
    config = tmp_path / "cli.yaml"
    monkeypatch.setenv("RIGHTSIZER_CONFIG", str(config))

    def invoke(*args: str, env: dict[str, str] | None = None) -> Result:
        return CliRunner().invoke(cli, list(args), env=env or {}, catch_exceptions=False)

    return invoke


def test_the_cli_reads_the_context_file(
    live_url: str,  # noqa: F811
    cli_run: Callable[..., Result],
    tmp_path: Path,
) -> None:
    save(tmp_path / "cli.yaml", Context("demo", live_url, "", TOKENS["reader"]))
    out = cli_run("policy", "list", "-o", "json")
    assert (out.exit_code, out.stdout) == (0, "[]\n"), out.output
    policy = tmp_path / "p.yaml"
    policy.write_text("name: web\nnamespace: shop\n")
    as_admin = {"RIGHTSIZER_TOKEN": TOKENS["admin"]}  # the variable wins over the context
    assert cli_run("policy", "apply", "-f", str(policy), env=as_admin).exit_code == 0
    denied = cli_run("policy", "set-mode", "shop/web", "Recreate")  # the context's reader
    assert "bob may not patch policies in namespace shop (403 Forbidden)" in denied.stderr
    refused = cli_run("policy", "list", env={"RIGHTSIZER_TOKEN": "not-a-token"})
    assert "the bearer token is not valid (401 Unauthorized): the token was refused" in (
        refused.stderr
    )
    other_url = live_url.replace("127.0.0.1", "localhost")  # not the context's server URL
    elsewhere = cli_run("policy", "list", "--server", other_url)
    assert "no token was sent; pass --token, set RIGHTSIZER_TOKEN" in elsewhere.stderr


def test_set_mode_patches_only_the_mode(
    live_url: str,  # noqa: F811
    cli_run: Callable[..., Result],
    tmp_path: Path,
) -> None:
    save(tmp_path / "cli.yaml", Context("demo", live_url, "", TOKENS["admin"]))
    policy = tmp_path / "p.yaml"
    policy.write_text(
        "name: web\nnamespace: shop\ntarget: {kind: Deployment, name: web}\nupdateMode: Recreate\n"
        "minReplicas: 3\n"
    )
    assert cli_run("policy", "apply", "-f", str(policy)).exit_code == 0
    out = cli_run("policy", "set-mode", "shop/web", "Off")
    assert out.stdout == "policy shop/web: updateMode Recreate -> Off\n", out.output
    got = cli_run("policy", "get", "shop", "web").stdout
    assert "updateMode: 'Off'" in got and "minReplicas: 3" in got and "version: 2" in got
    missing = cli_run("policy", "set-mode", "shop/nope", "Recreate")
    assert missing.exit_code == 1
    assert "no policy 'nope' in namespace 'shop': `rightsizer policy list`" in missing.stderr
    bad = cli_run("policy", "set-mode", "shop", "Recreate")
    assert bad.exit_code == 2 and "expected NAMESPACE/NAME" in bad.stderr
    unknown = cli_run("policy", "set-mode", "shop/web", "Sometimes")
    assert unknown.exit_code == 2 and "'Sometimes' is not one of" in unknown.stderr


def test_bad_settings_are_named_before_any_request(
    cli_run: Callable[..., Result], tmp_path: Path
) -> None:
    out = cli_run("policy", "list", "--server", "localhost:8443")
    assert "server 'localhost:8443' (from --server) is not a URL" in out.stderr
    out = cli_run("policy", "list", env={"RIGHTSIZER_CACERT": str(tmp_path / "none.crt")})
    assert "the CA file" in out.stderr and "(from RIGHTSIZER_CACERT) does not exist" in out.stderr
    (tmp_path / "cli.yaml").write_text("contexts: {}\n")
    out = cli_run("policy", "list")
    assert out.exit_code == 1 and "cli.yaml: contexts: must be a list" in out.stderr
    out = cli_run("policy", "list", env={"RIGHTSIZER_API_URL": "http://127.0.0.1:9"})
    assert "RIGHTSIZER_API_URL is no longer read; set RIGHTSIZER_SERVER" in out.stderr
