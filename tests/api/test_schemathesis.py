"""Schemathesis generates requests from the OpenAPI document: none may get a 5xx, and every answer
must match the document. Run as admin (so writes reach validation) on a throw-away SQLite file."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any

import pytest
import schemathesis
from flask_migrate import upgrade
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from app import create_app
from tests.support.tokens import TOKEN_FILE, TOKENS

_dir = Path(tempfile.mkdtemp(prefix="rightsizer-schemathesis-"))
(_dir / "tokens").write_text(TOKEN_FILE)
APP = create_app(
    {
        "TESTING": True,
        "SQLALCHEMY_DATABASE_URI": f"sqlite:///{_dir}/db.sqlite",
        "AUTH_TOKEN_FILE": str(_dir / "tokens"),
        "JOBS": False,
    }
)
with APP.app_context():
    upgrade()

schema = schemathesis.openapi.from_wsgi("/api/v1/openapi.json", APP)
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


@pytest.mark.slow
@schema.parametrize()
@settings(max_examples=25, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_answers_match_the_document(case: schemathesis.Case[Any]) -> None:
    case.call_and_validate(headers={"Authorization": f"Bearer {TOKENS['admin']}"}, checks=CHECKS)
