"""The Helm chart rendered offline with helm-python-sdk (Helm's own engine, no helm binary, no
cluster), the variants it must support, and lookups in what it renders."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import helm_python as helm  # the test extra helm-python-sdk: Helm's engine as a library
import yaml

CHART = Path(__file__).resolve().parents[2] / "helm" / "rightsizer"
RELEASE, NAMESPACE = "rs", "rightsizer"
FULLNAME = "rs-rightsizer"

Manifest = dict[str, Any]
Render = Callable[..., list[Manifest]]

# The variants the chart must support (issue 9), by name -> values.
POSTGRES_URL = "postgresql+psycopg://rightsizer:secret@postgres.db:5432/rightsizer"
VARIANTS: dict[str, dict[str, Any]] = {
    "defaults": {},
    "cert-manager": {"certManager": {"enabled": True}},
    "cert-manager-no-self-registration": {
        "certManager": {"enabled": True},
        "webhook": {"selfRegister": False},
    },
    "cert-manager-own-issuer": {
        "certManager": {"enabled": True, "issuerRef": {"name": "ca", "kind": "ClusterIssuer"}},
    },
    "self-registration-off": {"tls": {"selfManaged": False}, "webhook": {"selfRegister": False}},
    "existing-secret": {
        "tls": {"existingSecret": "my-tls", "caBundle": "Q0E="},
        "webhook": {"selfRegister": False},
    },
    "postgres-url": {"database": {"postgres": {"url": POSTGRES_URL}}, "replicaCount": 3},
    "sqlite-one-replica": {"replicaCount": 1, "database": {"type": "sqlite"}},
    "self-managed-certificates": {
        "tls": {"selfManaged": True},
        "excludedNamespaces": ["batch", "monitoring"],
    },
    "sqlite-emptydir": {
        "replicaCount": 1,
        "database": {"type": "sqlite", "sqlite": {"persistence": {"enabled": False}}},
        "migrations": {"initContainer": False},
    },
    "auth-static-tokens": {"auth": {"mode": "tokens", "tokens": {"secretName": "api-tokens"}}},
    "auth-public-reads-aggregated-roles": {
        "auth": {"publicReads": True, "userRoles": {"aggregateToDefaults": True}},
    },
    "water-level-scheduler": {
        "placement": {"scheduler": {"enabled": True, "extender": {"weight": 3}}},
    },
    "hard-anti-affinity-and-extras": {
        "podAntiAffinity": "hard",
        "settings": {"RIGHTSIZER_TARGET_CPU_PERCENTILE": 0.95},
        "extraEnv": [{"name": "TZ", "value": "UTC"}],
        "podAnnotations": {"example.com/team": "platform"},
        "priorityClassName": "system-cluster-critical",
        "tolerations": [{"key": "dedicated", "operator": "Exists", "effect": "NoSchedule"}],
    },
}


def render_chart(values: dict[str, Any] | None = None) -> list[Manifest]:
    """Every object the chart renders (NOTES.txt left out), parsed."""
    with helm.Chart.load(str(CHART)) as chart:
        files = chart.render(values or {}, name=RELEASE, namespace=NAMESPACE, is_install=True)
    docs: list[Manifest] = []
    for name, text in sorted(files.items()):
        if name.endswith("NOTES.txt"):
            continue
        docs.extend(d for d in yaml.safe_load_all(text) if d)
    return docs


def render_notes(values: dict[str, Any] | None = None) -> str:
    with helm.Chart.load(str(CHART)) as chart:
        files = chart.render(values or {}, name=RELEASE, namespace=NAMESPACE, is_install=True)
    return next(text for name, text in files.items() if name.endswith("NOTES.txt"))


def one(docs: list[Manifest], kind: str, name: str | None = None) -> Manifest:
    found = [
        d for d in docs if d["kind"] == kind and (name is None or d["metadata"]["name"] == name)
    ]
    assert len(found) == 1, f"expected one {kind} {name or ''}, found {len(found)}"
    return found[0]


def kinds(docs: list[Manifest]) -> set[str]:
    return {d["kind"] for d in docs}
