"""kubectl apply (client-side and --server-side), the patches kubectl's other commands send, and
server-side apply through the official Python client, against the simulated API server: the
cluster state after each command read back with the Python client."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import run_kubectl

NS = "other"
APPLY = "application/apply-patch+yaml"


def manifest(
    replicas: int = 2, image: str = "nginx:1.27", env: list[dict[str, str]] | None = None
) -> dict[str, Any]:
    container: dict[str, Any] = {"name": "web", "image": image, "ports": [{"containerPort": 80}]}
    if env:
        container["env"] = env
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": "web", "namespace": NS, "labels": {"app": "web"}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": "web"}},
            "template": {
                "metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [container]},
            },
        },
    }


def write(tmp_path: Path, obj: dict[str, Any], name: str = "web.yaml") -> str:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def managers(dep: client.V1Deployment) -> set[tuple[str, str, str]]:
    return {
        (m.manager, m.operation, m.subresource or "") for m in dep.metadata.managed_fields or []
    }


def owned_by(dep: client.V1Deployment, manager: str, operation: str = "") -> dict[str, Any]:
    return next(
        m.fields_v1
        for m in dep.metadata.managed_fields
        if m.manager == manager and operation in ("", m.operation)
    )


def test_kubectl_apply_creates_then_changes_replicas_image_and_env(
    sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    out = run_kubectl(sim, "apply", "-f", write(tmp_path, manifest()))
    assert out.stdout.strip() == "deployment.apps/web created"
    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 2
    assert managers(dep) == {("kubectl-client-side-apply", "Update", "")}
    last = json.loads(dep.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"])
    assert last["spec"]["replicas"] == 2

    changed = manifest(3, "nginx:1.28", env=[{"name": "MODE", "value": "fast"}])
    out = run_kubectl(sim, "apply", "-f", write(tmp_path, changed))
    assert out.stdout.strip() == "deployment.apps/web configured"
    dep = apps.read_namespaced_deployment("web", NS)
    (container,) = dep.spec.template.spec.containers
    assert (dep.spec.replicas, container.image) == (3, "nginx:1.28")
    assert [(e.name, e.value) for e in container.env] == [("MODE", "fast")]
    assert [p.container_port for p in container.ports] == [80]
    assert dep.metadata.generation == 2
    sim.settle()
    assert len(client.CoreV1Api(apps.api_client).list_namespaced_pod(NS).items) == 3

    # Dropping the env from the manifest removes it: the three-way patch deletes what the
    # last applied configuration had and the new one has not.
    run_kubectl(sim, "apply", "-f", write(tmp_path, manifest(3, "nginx:1.28")))
    (container,) = apps.read_namespaced_deployment("web", NS).spec.template.spec.containers
    assert container.env is None
    assert run_kubectl(sim, "apply", "-f", write(tmp_path, manifest(3, "nginx:1.28"))).stdout == (
        "deployment.apps/web unchanged\n"
    )


def test_kubectl_server_side_apply_twice_and_a_conflict(
    sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    out = run_kubectl(sim, "apply", "--server-side", "-f", write(tmp_path, manifest()))
    assert out.stdout.strip() == "deployment.apps/web serverside-applied"
    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 2 and managers(dep) == {("kubectl", "Apply", "")}
    assert "f:replicas" in owned_by(dep, "kubectl")["f:spec"]

    run_kubectl(sim, "apply", "--server-side", "-f", write(tmp_path, manifest(4, "nginx:1.28")))
    dep = apps.read_namespaced_deployment("web", NS)
    assert (dep.spec.replicas, dep.spec.template.spec.containers[0].image) == (4, "nginx:1.28")

    other = write(tmp_path, manifest(5, "nginx:1.28"), "other.yaml")
    failed = run_kubectl(
        sim, "apply", "--server-side", "--field-manager=ci", "-f", other, check=False
    )
    assert failed.returncode == 1
    assert 'Apply failed with 1 conflict: conflict with "kubectl": .spec.replicas' in (
        failed.stderr
    )
    assert apps.read_namespaced_deployment("web", NS).spec.replicas == 4  # nothing changed

    run_kubectl(
        sim, "apply", "--server-side", "--field-manager=ci", "--force-conflicts", "-f", other
    )
    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 5
    assert "f:replicas" in owned_by(dep, "ci")["f:spec"]
    assert "f:replicas" not in owned_by(dep, "kubectl")["f:spec"]
    # Both applied the same image: they share it.
    for manager in ("ci", "kubectl"):
        containers = owned_by(dep, manager)["f:spec"]["f:template"]["f:spec"]["f:containers"]
        assert "f:image" in containers['k:{"name":"web"}']


def test_client_side_then_server_side_apply_migrates_ownership_to_kubectl(
    sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    run_kubectl(sim, "apply", "-f", write(tmp_path, manifest()))
    out = run_kubectl(sim, "apply", "--server-side", "-f", write(tmp_path, manifest(3)))
    assert "Warning" not in out.stderr, out.stderr
    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 3
    assert managers(dep) == {("kubectl", "Apply", ""), ("kubectl-last-applied", "Apply", "")}
    annotation = dep.metadata.annotations["kubectl.kubernetes.io/last-applied-configuration"]
    assert json.loads(annotation)["spec"]["replicas"] == 3


def test_kubectl_scale_label_annotate_set_image_patch_and_edit(
    sim: Simulator, apps: client.AppsV1Api, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_kubectl(sim, "apply", "--server-side", "-f", write(tmp_path, manifest()))
    run_kubectl(sim, "scale", "-n", NS, "deploy/web", "--replicas=4")
    # kubectl scale sets no field manager: the User-Agent's "kubectl", on the scale subresource.
    scaled = apps.read_namespaced_deployment("web", NS)
    assert ("kubectl", "Update", "scale") in managers(scaled)
    assert owned_by(scaled, "kubectl", "Update") == {"f:spec": {"f:replicas": {}}}
    run_kubectl(sim, "label", "-n", NS, "deploy/web", "tier=front")
    run_kubectl(sim, "annotate", "-n", NS, "deploy/web", "note=hi")
    run_kubectl(sim, "set", "image", "-n", NS, "deploy/web", "web=nginx:1.29")
    sidecar = {
        "spec": {"template": {"spec": {"containers": [{"name": "log", "image": "busybox"}]}}}
    }
    run_kubectl(sim, "patch", "-n", NS, "deploy/web", "-p", json.dumps(sidecar))
    editor = tmp_path / "editor.sh"
    editor.write_text("#!/bin/sh\nsed -i 's/replicas: 4/replicas: 6/' \"$1\"\n")
    editor.chmod(0o755)
    monkeypatch.setenv("KUBE_EDITOR", str(editor))
    run_kubectl(sim, "edit", "-n", NS, "deploy/web")

    dep = apps.read_namespaced_deployment("web", NS)
    assert dep.spec.replicas == 6
    assert dep.metadata.labels == {"app": "web", "tier": "front"}
    assert dep.metadata.annotations["note"] == "hi"
    # A strategic merge patch merges containers by name; the patched-in one comes first.
    images = [(c.name, c.image) for c in dep.spec.template.spec.containers]
    assert images == [("log", "busybox"), ("web", "nginx:1.29")]
    # The scale owned only the replicas, which kubectl-edit changed since: it is gone.
    assert managers(dep) == {
        ("kubectl", "Apply", ""),
        *((f"kubectl-{m}", "Update", "") for m in ("label", "annotate", "set", "patch", "edit")),
    }
    assert owned_by(dep, "kubectl-edit") == {"f:spec": {"f:replicas": {}}}
    # The applier lost what the others changed since.
    assert "f:replicas" not in owned_by(dep, "kubectl", "Apply")["f:spec"]


def test_kubectl_scale_with_a_precondition_updates_the_scale_as_kubectl(
    sim: Simulator, apps: client.AppsV1Api, tmp_path: Path
) -> None:
    """With --current-replicas kubectl GETs the scale and PUTs it back (kubectl
    `pkg/scale/scale.go` ScaleSimple) with UpdateOptions that name no field manager, as its
    PATCH without a precondition does: kube-apiserver records the User-Agent's "kubectl" for
    both, on the scale subresource. (No "kubectl-scale": `kubectl scale` has no
    --field-manager.)"""
    run_kubectl(sim, "apply", "-f", write(tmp_path, manifest()))
    refused = run_kubectl(
        sim, "scale", "-n", NS, "deploy/web", "--current-replicas=5", "--replicas=4", check=False
    )
    assert refused.returncode == 1
    assert "Expected replicas to be 5, was 2" in refused.stderr
    run_kubectl(sim, "scale", "-n", NS, "deploy/web", "--current-replicas=2", "--replicas=4")
    scaled = apps.read_namespaced_deployment("web", NS)
    assert scaled.spec.replicas == 4
    assert ("kubectl", "Update", "scale") in managers(scaled)
    assert owned_by(scaled, "kubectl", "Update") == {"f:spec": {"f:replicas": {}}}


def test_server_side_apply_through_the_python_client(
    sim: Simulator, apps: client.AppsV1Api
) -> None:
    body = manifest()
    created = apps.patch_namespaced_deployment_with_http_info(
        "web", NS, body, field_manager="tool", _content_type=APPLY
    )
    assert created[1] == 201  # apply creates
    with pytest.raises(ApiException) as e:  # apply needs a field manager
        apps.patch_namespaced_deployment("web", NS, body, _content_type=APPLY)
    assert e.value.status == 422
    assert json.loads(e.value.body)["message"] == (
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: '
        "is required for apply patch"
    )
    with pytest.raises(ApiException) as e:  # force only means something to apply
        apps.patch_namespaced_deployment("web", NS, {"spec": {"replicas": 1}}, force=True)
    assert e.value.status == 422 and "force: Forbidden" in json.loads(e.value.body)["message"]
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment(
            "web", NS, manifest(replicas=9), field_manager="other", _content_type=APPLY
        )
    status = json.loads(e.value.body)
    assert (e.value.status, status["reason"]) == (409, "Conflict")
    assert status["details"]["causes"] == [
        {
            "reason": "FieldManagerConflict",
            "message": 'conflict with "tool"',
            "field": ".spec.replicas",
        }
    ]
    apps.patch_namespaced_deployment(
        "web", NS, manifest(replicas=9), field_manager="other", force=True, _content_type=APPLY
    )
    assert apps.read_namespaced_deployment("web", NS).spec.replicas == 9


def test_an_applied_field_the_schema_does_not_declare_is_kubes_500(
    sim: Simulator, apps: client.AppsV1Api
) -> None:
    bad = manifest()
    bad["spec"]["replica"] = 3
    with pytest.raises(ApiException) as e:
        apps.patch_namespaced_deployment("web", NS, bad, field_manager="t", _content_type=APPLY)
    assert e.value.status == 500
    assert json.loads(e.value.body)["message"] == (
        "failed to create typed patch object (other/web; apps/v1, Kind=Deployment): "
        ".spec.replica: field not declared in schema"
    )
    with pytest.raises(ApiException) as e:
        apps.read_namespaced_deployment("web", NS)
    assert e.value.status == 404  # nothing was created


def test_kubectl_apply_a_pod_then_apply_it_server_side(
    sim: Simulator, core: client.CoreV1Api, tmp_path: Path
) -> None:
    """Only a pod's images may change; the server-side apply that takes a client-side applied
    pod over re-applies without the defaulted fields, which the defaulting brings back."""
    pod: dict[str, Any] = {
        "apiVersion": "v1",
        "kind": "Pod",
        "metadata": {"name": "p", "namespace": NS},
        "spec": {"containers": [{"name": "c", "image": "nginx:1.27"}]},
    }
    run_kubectl(sim, "apply", "-f", write(tmp_path, pod))
    pod["spec"]["containers"][0]["image"] = "nginx:1.28"
    run_kubectl(sim, "apply", "-f", write(tmp_path, pod))
    assert core.read_namespaced_pod("p", NS).spec.containers[0].image == "nginx:1.28"
    pod["spec"]["containers"][0]["image"] = "nginx:1.29"
    out = run_kubectl(sim, "apply", "--server-side", "-f", write(tmp_path, pod))
    assert out.stdout.strip() == "pod/p serverside-applied" and "Warning" not in out.stderr
    live = core.read_namespaced_pod("p", NS)
    assert live.spec.containers[0].image == "nginx:1.29"
    assert live.spec.dns_policy == "ClusterFirst"


def test_creates_record_their_manager_defaults_included(
    sim: Simulator, core: client.CoreV1Api, apps: client.AppsV1Api
) -> None:
    """Without fieldManager the manager is the User-Agent's product; the creator owns the fields
    defaulted at decoding too."""
    made = core.create_namespaced_config_map(
        NS, plain({"metadata": {"generateName": "cm-"}, "data": {"a": "1"}})
    )
    (entry,) = made.metadata.managed_fields
    assert (entry.manager, entry.operation) == ("OpenAPI-Generator", "Update")
    assert entry.fields_v1 == {
        "f:data": {".": {}, "f:a": {}},
        "f:metadata": {"f:generateName": {}},  # as in kube: not among the stripped fields
    }
    dep = apps.create_namespaced_deployment(NS, plain(manifest()), field_manager="maker")
    (entry,) = dep.metadata.managed_fields
    assert entry.manager == "maker"
    spec = entry.fields_v1["f:spec"]
    assert {"f:replicas", "f:revisionHistoryLimit", "f:strategy"} <= set(spec)
    assert "f:imagePullPolicy" in spec["f:template"]["f:spec"]["f:containers"]['k:{"name":"web"}']
