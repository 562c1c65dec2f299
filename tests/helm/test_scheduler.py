"""The chart's optional water-level scheduler (placement.scheduler): off by default; on, a second
kube-scheduler whose KubeSchedulerConfiguration names rightsizer's extender on its HTTPS Service,
verified with the CA of the webhook's certificate, with the RBAC a second scheduler needs, and the
server told its name (RIGHTSIZER_PLACEMENT_SCHEDULER_NAME)."""

from __future__ import annotations

from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.support.helm import FULLNAME, NAMESPACE, Manifest, one, render_chart, render_notes

NAME = f"{FULLNAME}-water-level"
ON = {"placement": {"scheduler": {"enabled": True}}}


def server_env(docs: list[Manifest]) -> dict[str, Any]:
    spec = one(docs, "Deployment", FULLNAME)["spec"]["template"]["spec"]
    c = next(c for c in spec["containers"] if c["name"] == "rightsizer")
    return {e["name"]: e.get("value") for e in c["env"]}


def scheduler_config(docs: list[Manifest]) -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load(one(docs, "ConfigMap", NAME)["data"]["config.yaml"])
    return config


def test_off_by_default() -> None:
    docs = render_chart()
    assert [d for d in docs if d["metadata"]["name"].startswith(NAME)] == []
    assert "RIGHTSIZER_PLACEMENT_SCHEDULER_NAME" not in server_env(docs)


def test_the_configuration_names_rightsizers_extender_over_https() -> None:
    docs = render_chart(ON)
    config = scheduler_config(docs)
    assert (config["apiVersion"], config["kind"]) == (
        "kubescheduler.config.k8s.io/v1",
        "KubeSchedulerConfiguration",
    )
    assert config["profiles"] == [{"schedulerName": "rightsizer-water-level"}]
    [extender] = config["extenders"]
    service = one(docs, "Service", FULLNAME)
    port = service["spec"]["ports"][0]["port"]
    assert extender["urlPrefix"] == f"https://{FULLNAME}.{NAMESPACE}.svc:{port}/scheduler"
    assert {k: extender[k] for k in ("filterVerb", "prioritizeVerb", "weight")} == {
        "filterVerb": "filter",
        "prioritizeVerb": "prioritize",
        "weight": 5,
    }
    assert extender["enableHTTPS"] is True
    assert extender["nodeCacheCapable"] is True and extender["ignorable"] is True
    assert "managedResources" not in extender
    # the CA file is the ca.crt of the Secret the server's certificate comes from
    spec = one(docs, "Deployment", NAME)["spec"]["template"]["spec"]
    [c] = spec["containers"]
    mounts = {m["name"]: m["mountPath"] for m in c["volumeMounts"]}
    volumes = {v["name"]: v for v in spec["volumes"]}
    ca = volumes["rightsizer-ca"]["secret"]
    assert extender["tlsConfig"] == {"caFile": f"{mounts['rightsizer-ca']}/ca.crt"}
    assert ca["items"] == [{"key": "ca.crt", "path": "ca.crt"}]
    server = one(docs, "Deployment", FULLNAME)["spec"]["template"]["spec"]
    tls = next(
        v for v in server["volumes"] if v.get("secret", {}).get("secretName") == ca["secretName"]
    )
    assert tls  # the same Secret the server mounts
    config_volume = volumes["config"]["configMap"]["name"]
    assert config_volume == NAME
    assert f"--config={mounts['config']}/config.yaml" in c["command"]


def test_the_server_is_told_the_schedulers_name() -> None:
    docs = render_chart({"placement": {"scheduler": {"enabled": True, "name": "water"}}})
    assert server_env(docs)["RIGHTSIZER_PLACEMENT_SCHEDULER_NAME"] == "water"
    assert scheduler_config(docs)["profiles"] == [{"schedulerName": "water"}]


def test_its_pods_are_not_the_servers() -> None:
    """The Service and the server's Deployment must not select the scheduler's pods."""
    docs = render_chart(ON)
    labels = one(docs, "Deployment", NAME)["spec"]["template"]["metadata"]["labels"]
    for selector in (
        one(docs, "Service", FULLNAME)["spec"]["selector"],
        one(docs, "Deployment", FULLNAME)["spec"]["selector"]["matchLabels"],
    ):
        assert not set(selector.items()) <= set(labels.items())


def test_the_upstream_image_of_the_clusters_release_or_the_tag_given() -> None:
    docs = render_chart(ON)
    [c] = one(docs, "Deployment", NAME)["spec"]["template"]["spec"]["containers"]
    repository, tag = c["image"].rsplit(":", 1)
    assert repository == "registry.k8s.io/kube-scheduler"
    assert tag.startswith("v1.") and tag.count(".") == 2
    tagged = render_chart(
        {"placement": {"scheduler": {"enabled": True, "image": {"tag": "v1.33.2"}}}}
    )
    [c] = one(tagged, "Deployment", NAME)["spec"]["template"]["spec"]["containers"]
    assert c["image"] == "registry.k8s.io/kube-scheduler:v1.33.2"


def test_rbac_is_a_second_schedulers_and_its_own_lease() -> None:
    docs = render_chart(ON)
    account = one(docs, "ServiceAccount", NAME)["metadata"]["name"]
    subject = [{"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}]
    bound = {
        (d["kind"], d["metadata"].get("namespace"), d["roleRef"]["name"])
        for d in docs
        if d["kind"] in ("ClusterRoleBinding", "RoleBinding") and d["subjects"] == subject
    }
    assert bound == {
        ("ClusterRoleBinding", None, "system:kube-scheduler"),
        ("ClusterRoleBinding", None, "system:volume-scheduler"),
        ("RoleBinding", "kube-system", "extension-apiserver-authentication-reader"),
        ("RoleBinding", NAMESPACE, NAME),
    }
    election = scheduler_config(docs)["leaderElection"]
    assert election["leaderElect"] is True
    assert (election["resourceNamespace"], election["resourceName"]) == (NAMESPACE, NAME)
    role = one(docs, "Role", NAME)
    assert role["metadata"]["namespace"] == NAMESPACE
    assert role["rules"] == [
        {"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["create"]},
        {
            "apiGroups": ["coordination.k8s.io"],
            "resources": ["leases"],
            "resourceNames": [NAME],
            "verbs": ["get", "update"],
        },
    ]
    assert (
        one(docs, "Deployment", NAME)["spec"]["template"]["spec"]["serviceAccountName"] == account
    )
    without = render_chart({**ON, "rbac": {"create": False}})
    assert not [d for d in without if d["kind"].endswith(("Role", "RoleBinding"))]


def test_a_changed_configuration_restarts_the_scheduler() -> None:
    def checksum(values: dict[str, Any]) -> str:
        deployment = one(render_chart(values), "Deployment", NAME)
        return str(deployment["spec"]["template"]["metadata"]["annotations"]["checksum/config"])

    weighted = {"placement": {"scheduler": {"enabled": True, "extender": {"weight": 2}}}}
    assert checksum(ON) != checksum(weighted)


@pytest.mark.parametrize(
    ("scheduler", "message"),
    [
        (
            {"name": "Water_Level"},
            'placement.scheduler.name "Water_Level" must be a scheduler name',
        ),
        ({"name": "default-scheduler"}, "cannot be default-scheduler"),
        ({"extender": {"weight": 0}}, "extender.weight must be a positive whole number"),
    ],
)
def test_values_that_cannot_work_are_refused(scheduler: dict[str, Any], message: str) -> None:
    with pytest.raises(helm.HelmRenderError, match=message):
        render_chart({"placement": {"scheduler": {"enabled": True, **scheduler}}})


def test_the_notes_name_the_scheduler_only_when_it_runs() -> None:
    assert "water-level scheduler" not in render_notes()
    notes = render_notes(ON)
    assert 'The water-level scheduler "rightsizer-water-level" runs as deployment/' in notes
    assert f"kubectl -n {NAMESPACE} rollout status deployment/{NAME}" in notes
