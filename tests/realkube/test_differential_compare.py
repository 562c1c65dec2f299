"""The differential test's comparison, without a cluster: what is normalised away, what is a
divergence, and the README's list read as the test reads it."""

from __future__ import annotations

from pathlib import Path

from tests.realkube.differential import corpus
from tests.realkube.differential.backends import Outcome
from tests.realkube.differential.compare import Divergence, divergences, listed

STEP = corpus.Step("pod-get", "GET", "/api/v1/namespaces/diff/pods/p")


def _pod(**spec: object) -> dict[str, object]:
    return {
        "kind": "Pod",
        "apiVersion": "v1",
        "metadata": {"name": "p", "uid": "u1", "resourceVersion": "7"},
        "spec": {"containers": [{"name": "c", "image": "x:1"}], **spec},
        "status": {"qosClass": "BestEffort", "phase": "Running"},
    }


def test_identities_and_normalised_fields_do_not_diverge() -> None:
    a = _pod(nodeName="sim-node-0")
    b = _pod(nodeName="kwok-node-1", volumes=[{"name": "kube-api-access-x"}])
    b["metadata"] = {"name": "p", "uid": "u2", "resourceVersion": "912"}
    assert divergences(STEP, Outcome(200, a), Outcome(200, b)) == []


def test_a_different_field_or_code_is_a_divergence() -> None:
    a, b = _pod(priority=0), _pod(priority=1)
    assert divergences(STEP, Outcome(200, a), Outcome(200, b)) == [
        Divergence("pod-get", "spec.priority", 0, 1)
    ]
    status = {"kind": "Status", "reason": "Conflict", "message": "m", "details": {}}
    found = divergences(STEP, Outcome(200, a), Outcome(409, status))
    assert Divergence("pod-get", "code", 200, 409) in found


def test_the_readme_table_is_read_with_its_patterns(tmp_path: Path) -> None:
    readme = tmp_path / "README.md"
    readme.write_text(
        "intro\n<!-- differential-divergences:start -->\n| steps | field | why |\n|---|---|---|\n"
        "| `job-*` | `spec.*` | stored only |\n<!-- differential-divergences:end -->\n"
    )
    (row,) = listed(readme)
    assert row.matches(Divergence("job-get", "spec.backoffLimit", None, 6))
    assert not row.matches(Divergence("pod-get", "spec.backoffLimit", None, 6))


def test_the_corpus_is_seeded_and_large_enough() -> None:
    a, b = corpus.generate(), corpus.generate()
    assert [(s.id, s.body) for s in a] == [(s.id, s.body) for s in b]
    assert len([s for s in a if not s.settle]) >= 200
    assert corpus.generate(seed=1) != a
