"""The settings: one frozen, typed object built once from the RIGHTSIZER_* table (app/config.py),
overridable by name for tests, and read by nothing else through string keys."""

from __future__ import annotations

import ast
import dataclasses
import re
from pathlib import Path

import pytest

from app import create_app
from app.config import (
    ENVIRONMENT,
    LEAVES,
    MODEL_FIELD,
    OVERRIDES,
    ConfigError,
    flatten,
    from_environment,
    override,
)
from app.core.recommend.settings import RecommenderSettings
from app.settings import Settings, settings_of

APP = Path(__file__).parents[1] / "app"
SQLITE = "sqlite://"


def test_every_variable_fills_its_own_field_and_every_field_has_a_variable() -> None:
    filled = [field for field, _, _ in ENVIRONMENT.values()]
    assert len(filled) == len(set(filled))  # no two variables fill one field
    assert set(flatten(from_environment({}))) == LEAVES == set(filled) | {MODEL_FIELD}


def test_unset_variables_take_the_table_defaults() -> None:
    values = flatten(from_environment({}))
    for var, (field, default, _) in ENVIRONMENT.items():
        if var != "RIGHTSIZER_DATABASE_URL":  # made absolute, see below
            assert values[field] == default, var
    assert values[MODEL_FIELD] == RecommenderSettings()
    assert from_environment({}).database_url.endswith("/rightsizer.db")


def sample_text(var: str, default: object) -> tuple[str, object]:
    """A text the variable accepts (other than its default), and what it parses to."""
    if var == "RIGHTSIZER_AUTH_MODE":
        return "kubernetes", "kubernetes"
    if var == "RIGHTSIZER_DATABASE_URL":
        return "postgresql+psycopg://u@h/db", "postgresql+psycopg://u@h/db"
    if var == "RIGHTSIZER_MAX_CPU_BOOST":  # a CPU quantity, in millicores
        return "1500m", 1500
    if var == "RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS":
        return "1, 0, 2.5", (1.0, 0.0, 2.5)
    if var in ("RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD", "RIGHTSIZER_PLACEMENT_SPREAD_WEIGHT"):
        return "0.25", 0.25  # fractions
    if var == "RIGHTSIZER_TRACK":
        return "labelled, policies", frozenset({"labelled", "policies"})
    if var == "RIGHTSIZER_PROMETHEUS_HEADERS":
        return "X-Scope-OrgID=team-a, X-Other=1", (("X-Scope-OrgID", "team-a"), ("X-Other", "1"))
    if var == "RIGHTSIZER_CLUSTER_LABELS":
        return "env=prod, example.com/region=eu,", (("env", "prod"), ("example.com/region", "eu"))
    if var.endswith(("_METRIC", "_LABEL")) and var.startswith("RIGHTSIZER_PROMETHEUS_"):
        return "some_name", "some_name"  # Prometheus names: no dashes
    if default == "auto":
        return "false", False
    if isinstance(default, bool):
        return str(not default).lower(), not default
    if isinstance(default, int):
        return "7", 7
    if isinstance(default, float):
        return "2.5", 2.5
    if isinstance(default, frozenset):
        return "b, a,", frozenset({"a", "b"})
    return "some-text", "some-text"


# Variables that need another to be valid (app.config._check_prometheus).
PARTNERS = {
    "RIGHTSIZER_PROMETHEUS_USERNAME": {"RIGHTSIZER_PROMETHEUS_PASSWORD": "p"},
    "RIGHTSIZER_PROMETHEUS_PASSWORD": {"RIGHTSIZER_PROMETHEUS_USERNAME": "u"},
    "RIGHTSIZER_PROMETHEUS_PASSWORD_FILE": {"RIGHTSIZER_PROMETHEUS_USERNAME": "u"},
    "RIGHTSIZER_PROMETHEUS_CLIENT_CERT_FILE": {"RIGHTSIZER_PROMETHEUS_CLIENT_KEY_FILE": "k"},
    "RIGHTSIZER_PROMETHEUS_CLIENT_KEY_FILE": {"RIGHTSIZER_PROMETHEUS_CLIENT_CERT_FILE": "c"},
}


@pytest.mark.parametrize("var", sorted(ENVIRONMENT))
def test_each_variable_lands_in_its_field(var: str) -> None:
    field, default, _ = ENVIRONMENT[var]
    text, wanted = sample_text(var, default)
    assert wanted != default
    env = {var: text}
    if var in ("RIGHTSIZER_TLS_CERT_FILE", "RIGHTSIZER_TLS_KEY_FILE"):  # they go together
        env = {"RIGHTSIZER_TLS_CERT_FILE": text, "RIGHTSIZER_TLS_KEY_FILE": text}
    env.update(PARTNERS.get(var, {}))
    assert flatten(from_environment(env))[field] == wanted


def test_recommender_variables_fill_the_model_settings() -> None:
    settings = from_environment({"RIGHTSIZER_TARGET_CPU_PERCENTILE": "0.95"})
    assert settings.recommender.model.target_cpu_percentile == 0.95


def test_the_settings_are_frozen() -> None:
    settings = from_environment({})
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.auth.public_reads = True  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        settings.jobs = True  # type: ignore[misc]


def test_a_bad_value_is_an_error_naming_the_variable() -> None:
    with pytest.raises(ConfigError, match=r"RIGHTSIZER_UPDATER_MIN_REPLICAS='0' is not a valid"):
        from_environment({"RIGHTSIZER_UPDATER_MIN_REPLICAS": "0"})
    with pytest.raises(ConfigError, match="RIGHTSIZER_TLS_CERT_FILE and RIGHTSIZER_TLS_KEY_FILE"):
        from_environment({"RIGHTSIZER_TLS_CERT_FILE": "tls.crt"})
    with pytest.raises(ConfigError, match=r"RIGHTSIZER_MAX_CPU_BOOST='lots' .*CPU quantity"):
        from_environment({"RIGHTSIZER_MAX_CPU_BOOST": "lots"})
    with pytest.raises(ConfigError, match=r"RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS='1,2' .*three"):
        from_environment({"RIGHTSIZER_PLACEMENT_WINDOW_WEIGHTS": "1,2"})
    with pytest.raises(ConfigError, match=r"RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD='1.5'"):
        from_environment({"RIGHTSIZER_PLACEMENT_FILTER_THRESHOLD": "1.5"})
    for hours in ("25", "-1", "1.5", "nan"):
        with pytest.raises(ConfigError, match=r"RIGHTSIZER_PLACEMENT_AHEAD_HOURS=.*whole hours"):
            from_environment({"RIGHTSIZER_PLACEMENT_AHEAD_HOURS": hours})
    for weight in ("-1", "inf", "nan"):
        with pytest.raises(ConfigError, match=r"RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT=.*finite"):
            from_environment({"RIGHTSIZER_PLACEMENT_AHEAD_WEIGHT": weight})
    for labels in ("env", "env=prod,env=dev", "env=no spaces", "-bad=x"):
        with pytest.raises(ConfigError, match=r"RIGHTSIZER_CLUSTER_LABELS=.*key=value labels"):
            from_environment({"RIGHTSIZER_CLUSTER_LABELS": labels})


def test_create_app_builds_the_settings_once_with_the_overrides_on_top() -> None:
    app = create_app(
        {
            "TESTING": True,
            "SQLALCHEMY_DATABASE_URI": SQLITE,
            "PUBLIC_READS": True,  # typed
            "EXCLUDED_NAMESPACES": "batch,ci",  # as the environment would say it
            "WEBHOOK_TIMEOUT_SECONDS": 9,
        }
    )
    settings = settings_of(app)
    assert isinstance(settings, Settings)
    assert settings.auth.public_reads is True
    assert settings.cluster.excluded_namespaces == frozenset({"batch", "ci"})
    assert settings.cluster.left_alone == frozenset({"batch", "ci", "rightsizer"})
    assert settings.webhook.timeout_seconds == 9
    assert settings.database_url == SQLITE
    # Flask's and Flask-SQLAlchemy's own keys still reach app.config.
    assert app.config["TESTING"] is True
    assert app.config["SQLALCHEMY_DATABASE_URI"] == SQLITE
    assert app.config["SQLALCHEMY_ENGINE_OPTIONS"] == {"pool_pre_ping": True}


def test_an_unknown_or_bad_override_is_an_error_naming_it() -> None:
    with pytest.raises(ConfigError, match="PUBLIC_READ"):
        create_app({"SQLALCHEMY_DATABASE_URI": SQLITE, "PUBLIC_READ": True})
    with pytest.raises(ConfigError, match="WEBHOOK_TIMEOUT_SECONDS='31'"):
        create_app({"SQLALCHEMY_DATABASE_URI": SQLITE, "WEBHOOK_TIMEOUT_SECONDS": "31"})


def test_override_replaces_the_settings_and_keeps_the_rest() -> None:
    app = create_app({"TESTING": True, "SQLALCHEMY_DATABASE_URI": SQLITE, "NAMESPACE": "ops"})
    before = settings_of(app)
    after = override(app, {"API_MAX_BODY_BYTES": 200})
    assert settings_of(app) is after and after.api.max_body_bytes == 200
    assert before.api.max_body_bytes == 1024 * 1024  # the old object is untouched
    assert dataclasses.replace(after, api=before.api) == before


def test_every_override_name_is_the_variable_without_its_prefix() -> None:
    for key, var in OVERRIDES.items():
        assert var == f"RIGHTSIZER_{key}" or (key, var) == (
            "SQLALCHEMY_DATABASE_URI",
            "RIGHTSIZER_DATABASE_URL",
        )


def string_key_reads(tree: ast.AST) -> list[str]:
    """`x.config[...]`, `x.config.get(...)`, and subscripts or .get() with a settings name."""
    names = set(OVERRIDES) | {"RECOMMENDER_SETTINGS"}
    found = []
    for node in ast.walk(tree):
        target: ast.AST | None = None
        key: ast.AST | None = None
        if isinstance(node, ast.Subscript):
            target, key = node.value, node.slice
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "get"
            and node.args
        ):
            target, key = node.func.value, node.args[0]
        if target is None:
            continue
        reads_config = isinstance(target, ast.Attribute) and target.attr == "config"
        named = isinstance(key, ast.Constant) and key.value in names
        if reads_config or named:
            assert isinstance(node, ast.expr)  # a subscript or a call
            found.append(f"line {node.lineno}: {ast.unparse(node)}")
    return found


def test_nothing_outside_app_config_reads_settings_by_string_key() -> None:
    offenders = {
        str(path.relative_to(APP.parent)): reads
        for path in sorted(APP.rglob("*.py"))
        if path != APP / "config.py"
        and (reads := string_key_reads(ast.parse(path.read_text(), str(path))))
    }
    assert offenders == {}


def test_the_scan_finds_the_reads_it_forbids() -> None:
    code = 'a = app.config["X"]\nb = current_app.config.get("Y")\nc = cfg["KUBECONFIG"]\n'
    assert len(string_key_reads(ast.parse(code))) == 3


@pytest.mark.parametrize(
    ("env", "named"),
    [
        (
            {
                "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN": "t",
                "RIGHTSIZER_PROMETHEUS_USERNAME": "u",
                "RIGHTSIZER_PROMETHEUS_PASSWORD": "p",
            },
            "RIGHTSIZER_PROMETHEUS_BEARER_TOKEN and RIGHTSIZER_PROMETHEUS_USERNAME are exclusive",
        ),
        ({"RIGHTSIZER_PROMETHEUS_USERNAME": "u"}, "needs RIGHTSIZER_PROMETHEUS_PASSWORD"),
        ({"RIGHTSIZER_PROMETHEUS_CLIENT_KEY_FILE": "k"}, "go together"),
        ({"RIGHTSIZER_TRACK": "all,policies"}, "RIGHTSIZER_TRACK='all,policies' is not a valid"),
        ({"RIGHTSIZER_PROMETHEUS_HEADERS": "no-equals"}, "RIGHTSIZER_PROMETHEUS_HEADERS"),
        ({"RIGHTSIZER_PROMETHEUS_POD_LABEL": "pod-name"}, "Prometheus label name"),
        ({"RIGHTSIZER_TRACK_LABEL": "-bad"}, "RIGHTSIZER_TRACK_LABEL"),
    ],
)
def test_prometheus_and_tracking_settings_that_cannot_work_are_refused(
    env: dict[str, str], named: str
) -> None:
    with pytest.raises(ConfigError, match=re.escape(named)):
        from_environment(env)
