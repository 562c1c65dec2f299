"""The real kubectl against the simulator: OpenAPI v3 (kubectl explain, server-side field
validation of kubectl apply) and the documents' HTTP behaviour; the official Python client's
fieldValidation too."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from kubernetes import client
from kubernetes.client.exceptions import ApiException

from app.simulator.simulator import Simulator
from tests.support.json_bodies import plain
from tests.support.kubectl import run_kubectl

POD_WITH_UNKNOWN_FIELD = """\
apiVersion: v1
kind: Pod
metadata: {name: %s, namespace: other}
spec:
  foo: bar
  containers:
  - {name: c, image: nginx:1.27, bogus: 1, resources: {requests: {cpu: 50m, memory: 64Mi}}}
"""


@pytest.fixture
def kubectl(sim: Simulator, tmp_path: Path):
    """kubectl with its own cache directory, so no document of another run is reused."""

    def run(*args: str, stdin: str | None = None, check: bool = True):
        cache = ["--cache-dir", str(tmp_path / "kube-cache")]
        if stdin is None:
            return run_kubectl(sim, *cache, *args, check=check)
        manifest = tmp_path / "manifest.yaml"
        manifest.write_text(stdin)
        return run_kubectl(
            sim, *cache, *[a if a != "-" else str(manifest) for a in args], check=check
        )

    return run


def _get(url: str, accept: str = "application/json") -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers={"Accept": accept})
    opener = urllib.request.build_opener(_NoRedirect)
    try:
        with opener.open(request, timeout=30) as resp:
            return resp.status, dict(resp.headers), resp.read()
    except urllib.error.HTTPError as e:
        return e.code, dict(e.headers), e.read()


class _NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args, **kwargs):
        return None


def test_kubectl_explain_reads_the_served_schema(kubectl) -> None:
    out = kubectl("explain", "pod.spec.containers.resources").stdout
    assert "FIELD: resources <ResourceRequirements>" in out
    assert "limits\t<map[string]Quantity>" in out
    assert "requests\t<map[string]Quantity>" in out
    deploy = kubectl("explain", "deployment.spec.strategy.rollingUpdate.maxSurge").stdout
    assert "GROUP:      apps" in deploy and "<IntOrString>" in deploy


def test_kubectl_apply_refuses_unknown_fields_as_kube_apiserver_does(
    kubectl, core: client.CoreV1Api
) -> None:
    done = kubectl("apply", "-f", "-", stdin=POD_WITH_UNKNOWN_FIELD % "strict", check=False)
    assert done.returncode == 1
    assert (
        'Error from server (BadRequest): error when creating "' in done.stderr
        and 'Pod in version "v1" cannot be handled as a Pod: strict decoding error: '
        'unknown field "spec.containers[0].bogus", unknown field "spec.foo"'
        in done.stderr
    ), done.stderr
    with pytest.raises(ApiException) as e:
        core.read_namespaced_pod("strict", "other")
    assert e.value.status == 404


def test_kubectl_apply_without_validation_drops_unknown_fields(kubectl, sim: Simulator) -> None:
    done = kubectl("apply", "--validate=false", "-f", "-", stdin=POD_WITH_UNKNOWN_FIELD % "loose")
    assert "pod/loose created" in done.stdout
    assert "Warning" not in done.stderr  # Ignore: dropped silently
    api = sim.api_client()
    resp = api.call_api("GET", sim.url + "/api/v1/namespaces/other/pods/loose", {})
    pod = json.loads(resp.read())  # raw: no client model drops fields on the way
    api.close()
    assert "foo" not in pod["spec"] and "bogus" not in pod["spec"]["containers"][0]
    assert pod["spec"]["containers"][0]["image"] == "nginx:1.27"


def test_kubectl_apply_warns_of_unknown_fields_when_asked(kubectl) -> None:
    done = kubectl("apply", "--validate=warn", "-f", "-", stdin=POD_WITH_UNKNOWN_FIELD % "warned")
    assert "pod/warned created" in done.stdout
    assert 'Warning: unknown field "spec.containers[0].bogus"' in done.stderr
    assert 'Warning: unknown field "spec.foo"' in done.stderr


def test_a_patch_is_validated_after_it_applies(kubectl, core: client.CoreV1Api) -> None:
    plain = POD_WITH_UNKNOWN_FIELD.replace("  foo: bar\n", "").replace(", bogus: 1", "")
    kubectl("apply", "-f", "-", stdin=plain % "patched")
    done = kubectl("patch", "pod", "patched", "-n", "other", "-p", '{"spec":{"nope":1}}')
    assert 'Warning: unknown field "spec.nope"' in done.stderr  # no directive: Warn
    with pytest.raises(ApiException) as e:  # kubectl patch has no --validate: the client has
        core.patch_namespaced_pod(
            "patched", "other", {"spec": {"nope": 1}}, field_validation="Strict"
        )
    assert e.value.status == 422
    message = json.loads(e.value.body)["message"]
    assert message.startswith(' "" is invalid: patch: Invalid value: ')
    assert message.endswith('strict decoding error: unknown field "spec.nope"')
    assert "nope" not in str(core.read_namespaced_pod("patched", "other").to_dict())


def test_strict_validation_over_http_and_the_python_client(
    sim: Simulator, core: client.CoreV1Api
) -> None:
    # The client's models refuse unknown fields and cannot hold duplicates: plain HTTP for those.
    body = (
        b'{"metadata":{"name":"py","name":"py"},"spec":{"containers":[{"name":"c","image":"x"}]}}'
    )
    url = sim.url + "/api/v1/namespaces/other/pods?fieldValidation=Strict"
    request = urllib.request.Request(url, body, {"Content-Type": "application/json"}, method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400
    answer = json.loads(refused.value.read())
    assert answer["message"].endswith('strict decoding error: duplicate field "metadata.name"')
    pod = {"metadata": {"name": "py"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    with pytest.raises(ApiException) as bad:
        core.create_namespaced_pod("other", plain(pod), field_validation="Loud")
    assert bad.value.status == 422
    assert 'fieldValidation: Unsupported value: "Loud"' in json.loads(bad.value.body)["message"]
    created = core.create_namespaced_pod("other", plain(pod), field_validation="Strict")
    assert created.metadata.name == "py"


def test_openapi_documents_are_cached_by_hash_and_json_only(sim: Simulator) -> None:
    status, headers, body = _get(sim.url + "/openapi/v3")
    assert status == 200
    paths = json.loads(body)["paths"]
    assert {"api/v1", "apis/apps/v1", "apis/policy/v1"} <= set(paths)
    url = paths["apis/apps/v1"]["serverRelativeURL"]
    status, headers, body = _get(sim.url + url)
    assert status == 200 and headers["Cache-Control"] == "public, immutable"
    assert json.loads(body)["openapi"] == "3.0.0"
    stale = url.split("?")[0] + "?hash=0123"
    status, headers, _ = _get(sim.url + stale)
    assert status == 301 and headers["Location"] == url
    status, headers, _ = _get(sim.url + url.split("?")[0])
    assert status == 200 and headers["Cache-Control"] == "no-cache, private"
    status, _, _ = _get(
        sim.url + url, accept="application/com.github.proto-openapi.spec.v3@v1.0+protobuf"
    )
    assert status == 406  # no protobuf v3 document: the simulator does not pretend to have one
