"""Issue 47 item 4 (kubernetes/autoscaler#3975, #6745; KRR's GroupedJob): short-lived Jobs are
learned as one workload per CronJob and per family of bare Jobs labelled
`rightsizer.io/job-family`, so the next Job's pods are sized at admission; the updater never
evicts or resizes a Job's pods. Against the simulated cluster through the official client (it
runs no Job controller: the tests create each Job's pods as the controller would)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from flask import Flask
from kubernetes import client

from app.core.workload_key import WorkloadKey
from app.kube.cluster import ClusterView
from app.simulator.testing import running_simulator
from app.store.extensions import db
from app.store.models import Policy, Recommendation
from tests.cli.live import Invoke, app_config, live_url, run, token_file  # noqa: F401
from tests.support.json_bodies import plain
from tests.support.pods import amounts, apply_strictly
from tests.support.recommender_runs import make_job as make_recommender
from tests.support.recommender_runs import step
from tests.support.reviews import MI, patch_of, post, refresh, review
from tests.support.updater_runs import LEADER, Clock, audit, deployment, settled, uids
from tests.support.updater_runs import make_job as make_updater

NS = "shop"
FAMILY = "rightsizer.io/job-family"
CRONJOB = WorkloadKey(NS, "CronJob", "report")
ETL = WorkloadKey(NS, "JobFamily", "etl")


def template(family: str | None = None) -> dict[str, Any]:
    return {
        "metadata": {"labels": {FAMILY: family} if family else {}},
        "spec": {
            "restartPolicy": "Never",
            "containers": [
                {
                    "name": "app",
                    "image": "example.com/etl:1",
                    "resources": {"requests": {"cpu": "1", "memory": "1Gi"}},
                }
            ],
        },
    }


def cronjob(api: Any) -> str:
    made = client.BatchV1Api(api).create_namespaced_cron_job(
        NS,
        plain(
            {
                "apiVersion": "batch/v1",
                "kind": "CronJob",
                "metadata": {"name": "report"},
                "spec": {
                    "schedule": "0 * * * *",
                    "jobTemplate": {"spec": {"template": template()}},
                },
            }
        ),
    )
    return str(made.metadata.uid)


def ref(kind: str, name: str, uid: str) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": kind, "name": name, "uid": uid, "controller": True}


def job_with_pod(
    api: Any, name: str, family: str | None = None, owner: Any = None, pods: int = 1
) -> None:
    """Job `name` (owned by `owner`, a reference, if given) and the `pods` pods its controller
    makes (a parallel Job's)."""
    meta: dict[str, Any] = {"name": name}
    if owner is not None:
        meta["ownerReferences"] = [owner]
    tmpl = template(family)
    job = client.BatchV1Api(api).create_namespaced_job(
        NS,
        plain(
            {"apiVersion": "batch/v1", "kind": "Job", "metadata": meta, "spec": {"template": tmpl}}
        ),
    )
    labels = {**tmpl["metadata"]["labels"], "job-name": name}
    for i in range(pods):
        client.CoreV1Api(api).create_namespaced_pod(
            NS,
            plain(
                {
                    "metadata": {
                        "name": f"{name}-x7k2p" + (f"{i}" if i else ""),
                        "labels": labels,
                        "ownerReferences": [ref("Job", name, job.metadata.uid)],
                    },
                    "spec": tmpl["spec"],
                }
            ),
        )


def delete_job(api: Any, name: str) -> None:
    client.CoreV1Api(api).delete_namespaced_pod(f"{name}-x7k2p", NS, grace_period_seconds=0)
    client.BatchV1Api(api).delete_namespaced_job(name, NS)


def stored(app: Flask) -> set[WorkloadKey]:
    with app.app_context():
        return {WorkloadKey(r.namespace, r.kind, r.name) for r in Recommendation.query.all()}


SCENARIO = {
    "nodes": [{"namePrefix": "node", "count": 2, "cpu": "8", "memory": "32Gi"}],
    "namespaces": [{"name": NS}],
    "workloads": [deployment("web", 2)],
}


def test_jobs_are_learned_per_cronjob_and_per_family_and_a_family_outlives_its_jobs(
    app: Flask,
) -> None:
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            uid = cronjob(api)
            job_with_pod(api, "report-28765430", owner=ref("CronJob", "report", uid))
            job_with_pod(api, "etl-1", family="etl")
            job_with_pod(api, "adhoc")  # a bare Job without the label: its own workload
            job = make_recommender(app, view, sim, gc_grace_seconds=600.0)
            wanted = {CRONJOB, ETL, WorkloadKey(NS, "Job", "adhoc")}
            for _ in range(10):  # the view may see the newest pod a run after its creation
                step(sim, job)
                if wanted <= set(job.model.rows):
                    break
            assert wanted <= set(job.model.rows)
            # the family's next Job, another name: the same workload, its history grows
            delete_job(api, "etl-1")
            job_with_pod(api, "etl-2", family="etl")
            step(sim, job)
            [row] = job.model.rows[ETL].values()
            seen = job.model.count[row]
            step(sim, job)
            assert job.model.count[row] > seen
            assert not any(w.kind == "Job" and w.name.startswith("etl") for w in stored(app))
            # no Job of the family left: its recommendation stays for the next one, past the
            # grace period after which a deleted Job's rows go
            delete_job(api, "etl-2")
            delete_job(api, "adhoc")
            for _ in range(3):
                step(sim, job, 400)
            assert ETL in stored(app) and CRONJOB in stored(app)
            assert WorkloadKey(NS, "Job", "adhoc") not in stored(app)
        finally:
            view.stop()


def recommendation(app: Flask, kind: str, name: str, cpu: int) -> None:
    now = datetime.now(UTC)
    with app.app_context():
        db.session.add(
            Recommendation(
                namespace=NS,
                kind=kind,
                name=name,
                container="app",
                target_cpu=cpu,
                target_memory=256 * MI,
                lower_bound_cpu=cpu // 2,
                lower_bound_memory=128 * MI,
                upper_bound_cpu=cpu * 2,
                upper_bound_memory=512 * MI,
                uncapped_target_cpu=cpu,
                uncapped_target_memory=256 * MI,
                sample_count=500,
                first_sample_at=now - timedelta(days=2),
                last_sample_at=now,
            )
        )
        db.session.commit()


def test_the_updater_never_evicts_or_resizes_a_job_s_pods(app: Flask) -> None:
    with running_simulator(SCENARIO) as sim:
        api = sim.api_client()
        view = ClusterView(sim.api_client()).start()
        try:
            assert view.wait_synced(30)
            uid = cronjob(api)
            # parallel Jobs, 4 pods each: budget and minReplicas would allow an update
            job_with_pod(api, "report-28765430", owner=ref("CronJob", "report", uid), pods=4)
            job_with_pod(api, "etl-1", family="etl", pods=4)
            job_with_pod(api, "adhoc", pods=4)
            with app.app_context():  # every workload of the namespace, Recreate
                db.session.add(Policy(name="all", namespace=NS, update_mode="Recreate"))
                db.session.commit()
            for kind, name in (("Deployment", "web"), ("CronJob", "report"), ("Job", "adhoc")):
                recommendation(app, kind, name, 100)  # 1 CPU requested: far outside the range
            recommendation(app, "JobFamily", "etl", 100)
            sim.advance(60)
            settled(sim, api, view)
            jobs_before = uids(api, "report") | uids(api, "etl") | uids(api, "adhoc")
            updater = make_updater(app, view, api, Clock(sim.now()))
            updater.run_once(LEADER)
            acted = [r for r in audit(app) if r.action in ("evict", "resize")]
            assert acted  # the Deployment's pod: the updater does act in this namespace
            assert all(r.object_ref.startswith(f"{NS}/web-") for r in acted), acted
            assert uids(api, "report") | uids(api, "etl") | uids(api, "adhoc") == jobs_before
            pods = client.CoreV1Api(api).list_namespaced_pod(NS).items
            for p in pods:
                if "job-name" in (p.metadata.labels or {}):
                    assert p.spec.containers[0].resources.requests["cpu"] == "1"
        finally:
            view.stop()


def family_pod(job: str = "etl-20240704") -> dict[str, Any]:
    tmpl = template("etl")
    return {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {
            "namespace": NS,
            "generateName": f"{job}-",
            "labels": {**tmpl["metadata"]["labels"], "job-name": job},
            "ownerReferences": [ref("Job", job, "u-1")],
        },
        "spec": tmpl["spec"],
    }


def test_a_new_job_of_a_family_is_sized_at_admission(app: Flask) -> None:
    with app.app_context():
        db.session.add(Policy(name="etl", namespace=NS, update_mode="Initial"))
        db.session.commit()
    recommendation(app, "JobFamily", "etl", 250)
    refresh(app)
    body = post(app.test_client(), review(family_pod())).get_json()
    patched = apply_strictly(family_pod(), patch_of(body["response"]))
    assert amounts(patched["spec"]["containers"][0], "requests") == {"cpu": 250, "memory": 256 * MI}


def test_policies_asking_what_cannot_be_done_for_jobs_are_told_so(
    app: Flask,
    run: Invoke,  # noqa: F811
) -> None:
    out = run(
        "policy",
        "apply",
        "-f",
        "-",
        stdin="name: report\nnamespace: shop\ntarget: {kind: CronJob, name: report}\n"
        "updateMode: Recreate\n",
    )
    assert out.exit_code == 0, out.stderr
    assert (
        "Warning: updateMode Recreate: rightsizer never evicts or resizes a CronJob's pods; each "
        "new Job's pods are sized at admission, as with Initial\n"
    ) in out.stderr
    out = run(
        "policy",
        "apply",
        "-f",
        "-",
        stdin="name: etl\nnamespace: shop\n"
        "target: {selector: {matchLabels: {rightsizer.io/job-family: etl}}}\n"
        "updateMode: InPlace\n",
    )
    assert out.exit_code == 0, out.stderr
    assert "Warning: updateMode InPlace: rightsizer never evicts or resizes the pods of a Job " in (
        out.stderr
    )
    # Initial is what the updater does for them anyway: nothing to say
    out = run(
        "policy",
        "set-mode",
        "shop/etl",
        "Initial",
    )
    assert out.exit_code == 0 and "never evicts" not in out.stderr
    # a family is no kind: refused, naming the field and the way to do it; nothing stored
    out = run(
        "policy",
        "apply",
        "-f",
        "-",
        stdin="name: etl2\nnamespace: shop\ntarget: {kind: JobFamily, name: etl}\n",
    )
    assert out.exit_code == 1
    assert "target.kind: a Job family is no kind: select its pods by their label" in out.stderr
    assert "nothing applied" in out.stderr
    assert run("policy", "get", "shop/etl2").exit_code == 1
