"""Issue 47 item 5 (krr#337, kubernetes/autoscaler#5146): `rightsizer export --format
kustomize|helm-values|patch DIR` writes the recommended requests the REST API reports as files
for manifests kept in git, the same bytes on a rerun; `--git` commits them on a branch with the
API's evidence. The real API served over HTTP, real kubectl (kustomize) and real git."""

from __future__ import annotations

import os
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
import requests
import yaml
from flask import Flask

from app.documents.gitops import HEADER
from app.store.extensions import db
from app.store.models import Recommendation
from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401
from tests.support.tokens import TOKENS

NOW = datetime(2024, 7, 4, tzinfo=UTC)
MI = 2**20


def add(
    ns: str,
    kind: str,
    name: str,
    container: str,
    cpu: int,
    memory_mi: int,
    *,
    hours: float = 192.0,
    current: tuple[int, int] | None = (500, 512),
    pods: int = 2,
) -> None:
    """A stored recommendation: millicores and MiB, `hours` of history, `pods` live pods each
    requesting `current` (millicores, MiB)."""
    row = Recommendation(
        namespace=ns,
        kind=kind,
        name=name,
        container=container,
        target_cpu=cpu,
        target_memory=memory_mi * MI,
        lower_bound_cpu=cpu // 2,
        lower_bound_memory=memory_mi * MI // 2,
        upper_bound_cpu=cpu * 2,
        upper_bound_memory=memory_mi * MI * 2,
        uncapped_target_cpu=cpu,
        uncapped_target_memory=memory_mi * MI,
        sample_count=int(hours * 60),
        first_sample_at=NOW - timedelta(hours=hours),
        last_sample_at=NOW,
        updated_at=NOW,
        reason="vpa: CPU p90 of usage; confidence 8.0 days",
    )
    if current is not None:
        row.current_cpu_request, row.current_memory_request = current[0], current[1] * MI
        row.replicas = pods
        row.requested_cpu_total = current[0] * pods
        row.requested_memory_total = current[1] * MI * pods
    db.session.add(row)
    db.session.commit()


def seed() -> None:
    add("shop", "Deployment", "catalog", "api", 93, 250)
    add("shop", "Deployment", "catalog", "envoy", 20, 64, current=(100, 128))
    add("shop", "CronJob", "report", "job", 200, 300, current=None)
    add("shop", "Deployment", "young", "app", 50, 100, hours=0.2)  # less than the hour needed
    add("kube-system", "Deployment", "coredns", "coredns", 30, 40)  # never sized
    add("shop", "JobFamily", "etl", "app", 100, 100)  # no manifest of its own


CATALOG_PATCH = HEADER + (
    "apiVersion: apps/v1\n"
    "kind: Deployment\n"
    "metadata:\n"
    "  name: catalog\n"
    "  namespace: shop\n"
    "spec:\n"
    "  template:\n"
    "    spec:\n"
    "      containers:\n"
    "      - name: api\n"
    "        resources:\n"
    "          requests:\n"
    "            cpu: 93m\n"
    "            memory: 250Mi\n"
    "      - name: envoy\n"
    "        resources:\n"
    "          requests:\n"
    "            cpu: 20m\n"
    "            memory: 64Mi\n"
)


@pytest.fixture
def out_dir(tmp_path: Path) -> Path:
    d = tmp_path / "export"
    d.mkdir()
    return d


def files(d: Path) -> dict[str, str]:
    return {
        p.relative_to(d).as_posix(): p.read_text()
        for p in sorted(d.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(d).parts
    }


def test_patch_writes_a_strategic_merge_patch_per_workload_and_reruns_change_nothing(
    app: Flask,
    run: Invoke,  # noqa: F811
    out_dir: Path,
) -> None:
    seed()
    out = run("export", "--format", "patch", str(out_dir))
    assert out.exit_code == 0, out.stderr
    written = files(out_dir)
    assert sorted(written) == ["shop/cronjob-report.yaml", "shop/deployment-catalog.yaml"]
    assert written["shop/deployment-catalog.yaml"] == CATALOG_PATCH
    report = yaml.safe_load(written["shop/cronjob-report.yaml"])
    assert report["apiVersion"] == "batch/v1"
    [job] = report["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
    assert job == {"name": "job", "resources": {"requests": {"cpu": "200m", "memory": "300Mi"}}}
    # what rightsizer would not set is named, not written
    assert "left out: shop/Deployment/young container app: not enough history" in out.stderr
    assert "left out: kube-system/Deployment/coredns container coredns: cpu: namespace" in (
        out.stderr
    )
    assert "left out: shop/JobFamily/etl: a Job family has no manifest of its own" in out.stderr
    assert out.stdout == f"{out_dir}: 2 files for 2 workloads (2 changed)\n"
    again = run("export", "--format", "patch", str(out_dir))
    assert again.stdout == f"{out_dir}: 2 files for 2 workloads (0 changed)\n"
    assert files(out_dir) == written


def test_kustomize_patches_apply_to_the_user_s_manifests(
    app: Flask,
    run: Invoke,  # noqa: F811
    tmp_path: Path,
) -> None:
    seed()
    out = run("export", "--format", "kustomize", str(tmp_path / "rightsizer"), "-n", "shop")
    assert out.exit_code == 2  # the directory must exist
    (tmp_path / "rightsizer").mkdir()
    out = run("export", "--format", "kustomize", str(tmp_path / "rightsizer"), "-n", "shop")
    assert out.exit_code == 0, out.stderr
    assert "coredns" not in out.stderr  # -n shop: only that namespace was read
    # the user's overlay: their manifests, the export as a component
    (tmp_path / "catalog.yaml").write_text(
        yaml.safe_dump(
            {
                "apiVersion": "apps/v1",
                "kind": "Deployment",
                "metadata": {"name": "catalog", "namespace": "shop"},
                "spec": {
                    "selector": {"matchLabels": {"app": "catalog"}},
                    "template": {
                        "metadata": {"labels": {"app": "catalog"}},
                        "spec": {
                            "containers": [
                                {
                                    "name": "api",
                                    "image": "shop/api:1",
                                    "resources": {
                                        "requests": {"cpu": "500m", "memory": "512Mi"},
                                        "limits": {"memory": "1Gi"},
                                    },
                                },
                                {"name": "envoy", "image": "envoy:1"},
                            ]
                        },
                    },
                },
            }
        )
    )
    (tmp_path / "kustomization.yaml").write_text(
        "resources: [catalog.yaml]\ncomponents: [rightsizer]\n"
    )
    built = subprocess.run(
        ["kubectl", "kustomize", str(tmp_path)], capture_output=True, text=True, check=True
    )
    [deployment] = list(yaml.safe_load_all(built.stdout))
    api, envoy = deployment["spec"]["template"]["spec"]["containers"]
    assert api == {
        "name": "api",
        "image": "shop/api:1",
        "resources": {"requests": {"cpu": "93m", "memory": "250Mi"}, "limits": {"memory": "1Gi"}},
    }
    assert envoy["image"] == "envoy:1"
    assert envoy["resources"] == {"requests": {"cpu": "20m", "memory": "64Mi"}}


def test_helm_values_hold_each_container_s_resources(
    app: Flask,
    run: Invoke,  # noqa: F811
    out_dir: Path,
) -> None:
    seed()
    out = run("export", "--format", "helm-values", str(out_dir))
    assert out.exit_code == 0, out.stderr
    assert list(files(out_dir)) == ["values.yaml"]
    text = (out_dir / "values.yaml").read_text()
    assert text.startswith(HEADER)
    assert yaml.safe_load(text) == {
        "rightsizer": {
            "shop": {
                "CronJob": {"report": {"job": {"requests": {"cpu": "200m", "memory": "300Mi"}}}},
                "Deployment": {
                    "catalog": {
                        "api": {"requests": {"cpu": "93m", "memory": "250Mi"}},
                        "envoy": {"requests": {"cpu": "20m", "memory": "64Mi"}},
                    }
                },
            }
        }
    }
    # another format in the same directory replaces the earlier export's files
    out = run("export", "--format", "patch", str(out_dir))
    assert out.exit_code == 0, out.stderr
    assert sorted(files(out_dir)) == ["shop/cronjob-report.yaml", "shop/deployment-catalog.yaml"]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-C", str(repo), *args], capture_output=True, text=True, check=True
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for var, value in (
        ("GIT_AUTHOR_NAME", "t"),
        ("GIT_AUTHOR_EMAIL", "t@example.com"),
        ("GIT_COMMITTER_NAME", "t"),
        ("GIT_COMMITTER_EMAIL", "t@example.com"),
        ("GIT_CONFIG_GLOBAL", os.devnull),
    ):
        monkeypatch.setenv(var, value)
    r = tmp_path / "repo"
    r.mkdir()
    git(r, "init", "-q", "-b", "main")
    (r / "app.yaml").write_text("kind: Deployment\n")
    (r / "rightsizer").mkdir()
    git(r, "add", "app.yaml")
    git(r, "commit", "-q", "-m", "manifests")
    return r


def test_git_commits_on_a_branch_with_the_api_s_evidence_leaving_the_work_tree_alone(
    app: Flask,
    run: Invoke,  # noqa: F811
    live_url: str,  # noqa: F811
    repo: Path,
) -> None:
    seed()
    (repo / "app.yaml").write_text("kind: Deployment  # being edited\n")  # the user's work
    head = git(repo, "rev-parse", "HEAD")
    out = run("export", "--format", "kustomize", str(repo / "rightsizer"), "--git")
    assert out.exit_code == 0, out.stderr
    assert git(repo, "rev-parse", "HEAD") == head  # still on main, untouched
    assert git(repo, "symbolic-ref", "--short", "HEAD") == "main\n"
    assert git(repo, "status", "--porcelain") == " M app.yaml\n?? rightsizer/\n"
    branch = "rightsizer/recommendations"
    assert out.stdout.endswith(f"{branch}: {git(repo, 'rev-parse', branch)}")
    assert git(repo, "ls-tree", "-r", "--name-only", branch).split() == [
        "app.yaml",
        "rightsizer/kustomization.yaml",
        "rightsizer/shop/cronjob-report.yaml",
        "rightsizer/shop/deployment-catalog.yaml",
    ]
    assert git(repo, "show", f"{branch}:rightsizer/shop/deployment-catalog.yaml") == CATALOG_PATCH
    # the evidence: the API's own numbers for the workload
    catalog = requests.get(
        f"{live_url}/api/v1/recommendations/shop/Deployment/catalog",
        headers={"Authorization": f"Bearer {TOKENS['admin']}"},
        timeout=30,
    ).json()
    saved = catalog["estimatedSavings"]
    message = git(repo, "log", "-1", "--format=%B", branch)
    assert message.startswith("rightsizer: recommended requests of 2 workloads (kustomize)\n\n")
    assert (
        f"shop/Deployment/catalog: estimated savings {saved['cpuCores']:g} cores, "
        f"{saved['memoryGiB']:g} GiB over its live pods (2); savings basis defaultPolicy\n"
    ) in message
    # (500m-93m + 100m-20m) and (512Mi-250Mi + 128Mi-64Mi), each over 2 pods
    assert saved == {"cpuCores": 0.974, "memoryGiB": 0.637}
    assert (
        "  api: cpu 500m -> 93m (lower bound 46m, upper bound 186m); "
        "memory 512Mi -> 250Mi (lower bound 125Mi, upper bound 500Mi)\n"
        "    history 192 h (1 h needed), 11520 samples\n"
        "    vpa: CPU p90 of usage; confidence 8.0 days\n"
    ) in message
    assert "  job: cpu 200m (lower bound 100m" in message  # no current request: none shown
    assert "shop/CronJob/report: savings basis defaultPolicy\n" in message
    assert "\nLeft out:\n" in message
    assert (
        "\n  shop/Deployment/young container app: not enough history (0.2 hours of 1)\n" in message
    )

    # a rerun with the same recommendations commits nothing
    again = run("export", "--format", "kustomize", str(repo / "rightsizer"), "--git")
    assert again.stdout.endswith(f"no change: nothing committed on {branch}\n")
    # a workload gone and one changed: the next commit has exactly that
    Recommendation.query.filter_by(kind="CronJob").delete()
    Recommendation.query.filter_by(container="api").update({"target_cpu": 120})
    db.session.commit()
    third = run("export", "--format", "kustomize", str(repo / "rightsizer"), "--git")
    assert third.exit_code == 0, third.stderr
    changed = git(repo, "diff", "--name-status", f"{branch}~1", branch).splitlines()
    assert changed == [
        "M\trightsizer/kustomization.yaml",
        "D\trightsizer/shop/cronjob-report.yaml",
        "M\trightsizer/shop/deployment-catalog.yaml",
    ]
    assert not (repo / "rightsizer" / "shop" / "cronjob-report.yaml").exists()


def test_git_on_the_current_branch_commits_dir_alone(
    app: Flask,
    run: Invoke,  # noqa: F811
    repo: Path,
) -> None:
    seed()
    (repo / "other.yaml").write_text("x: 1\n")
    git(repo, "add", "other.yaml")  # staged by the user: not part of the commit
    out = run("export", "--format", "patch", str(repo / "rightsizer"), "--git", "--branch", "main")
    assert out.exit_code == 0, out.stderr
    assert git(repo, "show", "--name-only", "--format=", "HEAD").split() == [
        "rightsizer/shop/cronjob-report.yaml",
        "rightsizer/shop/deployment-catalog.yaml",
    ]
    assert git(repo, "status", "--porcelain") == "A  other.yaml\n"


def test_bad_input_names_the_option_and_writes_nothing(
    app: Flask,
    run: Invoke,  # noqa: F811
    tmp_path: Path,
    repo: Path,
) -> None:
    target = tmp_path / "out"
    target.mkdir()
    out = run("export", "--format", "kustomise", str(target))
    assert out.exit_code == 2
    assert "Invalid value for '--format': 'kustomise' is not one of" in out.stderr
    a_file = tmp_path / "f.yaml"
    a_file.write_text("x: 1\n")
    out = run("export", "--format", "patch", str(a_file))
    assert out.exit_code == 2
    assert "Invalid value for 'DIR'" in out.stderr and "is a file" in out.stderr
    # no recommendations at all
    out = run("export", "--format", "patch", str(target))
    assert (out.exit_code, out.stderr) == (
        1,
        "error: no recommendations to export; nothing written\n",
    )
    seed()
    out = run("export", "--format", "patch", str(target), "-n", "payments")
    assert out.stderr == (
        "error: no recommendations to export in namespace 'payments'; nothing written\n"
    )
    # --git outside a repository
    out = run("export", "--format", "patch", str(target), "--git")
    assert out.exit_code == 1
    assert out.stderr.startswith(f"error: --git: DIR {target} is not in a git work tree")
    assert out.stderr.endswith("; nothing written\n")
    out = run("export", "--format", "patch", str(repo / "rightsizer"), "--git", "--branch", "a..b")
    assert out.stderr == "error: --branch: 'a..b' is not a valid git branch name; nothing written\n"
    assert files(target) == {}
    assert files(repo / "rightsizer") == {}
    # a directory holding someone else's files
    (target / "deployment.yaml").write_text("kind: Deployment\n")
    out = run("export", "--format", "patch", str(target))
    assert out.exit_code == 1
    assert out.stderr == (
        f"error: DIR {target} holds files `rightsizer export` did not write (deployment.yaml): "
        "give an empty directory, or one an earlier export wrote; nothing written\n"
    )
    assert files(target) == {"deployment.yaml": "kind: Deployment\n"}
    assert git(repo, "branch", "--list").split() == ["*", "main"]


def test_a_component_cannot_hold_two_namespaces_workload_of_one_name(
    app: Flask,
    run: Invoke,  # noqa: F811
    out_dir: Path,
) -> None:
    seed()
    add("ops", "Deployment", "catalog", "api", 10, 10)
    out = run("export", "--format", "kustomize", str(out_dir))
    assert out.exit_code == 1
    assert out.stderr.endswith(
        "error: --format kustomize: Deployment/catalog is in namespaces ops and shop: a "
        "kustomize component targets patches by kind and name; export one namespace at a time "
        "(-n NAMESPACE); nothing written\n"
    )
    assert files(out_dir) == {}
    out = run("export", "--format", "kustomize", str(out_dir), "-n", "ops")
    assert out.exit_code == 0, out.stderr
    assert yaml.safe_load((out_dir / "kustomization.yaml").read_text())["patches"] == [
        {"path": "ops/deployment-catalog.yaml", "target": {"kind": "Deployment", "name": "catalog"}}
    ]
