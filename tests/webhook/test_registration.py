"""The MutatingWebhookConfiguration: its content, schema, and create-or-update through the
official client against a fake API server."""

from __future__ import annotations

import base64
from typing import Any

import kubernetes_validate
import pytest
from kubernetes import client

from app.config import from_environment
from app.kube.webhook_config import (
    WEBHOOK_NAME,
    WebhookRegistration,
    register_webhook,
    unregister_webhook,
    webhook_configuration,
)
from app.serving.registration import registration
from tests.support.fake_registrations import FakeApiServer

CA = b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
REG = WebhookRegistration(namespace="rightsizer-system", excluded_namespaces=("batch",))


def api_client(fake: FakeApiServer) -> client.ApiClient:
    cfg = client.Configuration()
    cfg.host = fake.url
    return client.ApiClient(cfg)


def test_configuration_says_what_the_issue_asks() -> None:
    doc = webhook_configuration(REG, CA)
    kubernetes_validate.validate(doc, "1.37.0", strict=True)
    [hook] = doc["webhooks"]
    assert hook["name"] == WEBHOOK_NAME
    assert hook["rules"] == [
        {
            "operations": ["CREATE"],
            "apiGroups": [""],
            "apiVersions": ["v1"],
            "resources": ["pods"],
            "scope": "Namespaced",
        }
    ]
    assert hook["sideEffects"] == "None"
    assert hook["admissionReviewVersions"] == ["v1"]
    assert hook["failurePolicy"] == "Ignore"
    assert hook["timeoutSeconds"] == 5
    assert hook["reinvocationPolicy"] == "IfNeeded"
    assert hook["namespaceSelector"]["matchExpressions"] == [
        {
            "key": "kubernetes.io/metadata.name",
            "operator": "NotIn",
            "values": ["batch", "kube-system", "rightsizer-system"],
        }
    ]
    assert hook["clientConfig"]["service"] == {
        "name": "rightsizer",
        "namespace": "rightsizer-system",
        "path": "/mutate",
        "port": 443,
    }
    assert base64.b64decode(hook["clientConfig"]["caBundle"]) == CA


def test_url_instead_of_service() -> None:
    reg = WebhookRegistration(url="https://10.0.0.5:8443/mutate", timeout_seconds=3)
    hook = webhook_configuration(reg, CA)["webhooks"][0]
    kubernetes_validate.validate(webhook_configuration(reg, CA), "1.37.0", strict=True)
    assert set(hook["clientConfig"]) == {"url", "caBundle"}
    assert hook["timeoutSeconds"] == 3


def test_registration_from_settings() -> None:
    cfg = from_environment(
        {
            "RIGHTSIZER_NAMESPACE": "ops",
            "RIGHTSIZER_EXCLUDED_NAMESPACES": "b,a",
            "RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS": "10",
            "RIGHTSIZER_WEBHOOK_SERVICE": "rs",
        }
    )
    reg = registration(cfg)
    assert (reg.namespace, reg.service, reg.timeout_seconds) == ("ops", "rs", 10)
    assert reg.excluded() == ["a", "b", "kube-system", "ops"]


def test_timeout_outside_what_kubernetes_accepts_is_a_config_error() -> None:
    from app.config import ConfigError

    with pytest.raises(ConfigError, match="RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS"):
        from_environment({"RIGHTSIZER_WEBHOOK_TIMEOUT_SECONDS": "31"})


def test_create_then_unchanged_then_update_then_delete() -> None:
    with FakeApiServer() as fake:
        api = api_client(fake)
        assert register_webhook(api, REG, CA) == "created"
        stored: dict[str, Any] = fake.objects["rightsizer"]
        assert stored["webhooks"][0]["failurePolicy"] == "Ignore"
        version = stored["metadata"]["resourceVersion"]

        assert register_webhook(api, REG, CA) == "unchanged"  # despite the server's defaults
        assert fake.objects["rightsizer"]["metadata"]["resourceVersion"] == version

        new_ca = CA.replace(b"MIIB", b"MIIC")
        assert register_webhook(api, REG, new_ca) == "updated"
        hook = fake.objects["rightsizer"]["webhooks"][0]
        assert base64.b64decode(hook["clientConfig"]["caBundle"]) == new_ca

        assert unregister_webhook(api, "rightsizer") is True
        assert unregister_webhook(api, "rightsizer") is False
        assert fake.objects == {}


def test_a_lost_race_is_retried() -> None:
    with FakeApiServer() as fake:
        fake.conflicts_to_inject = 2
        assert register_webhook(api_client(fake), REG, CA) == "created"
        assert [v for v, _ in fake.requests].count("POST") == 3


def test_endless_conflicts_give_up_with_an_error() -> None:
    with FakeApiServer() as fake:
        fake.conflicts_to_inject = 10
        with pytest.raises(RuntimeError, match="kept changing"):
            register_webhook(api_client(fake), REG, CA, attempts=3)
