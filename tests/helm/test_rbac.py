"""The RBAC the chart grants is exactly what rightsizer's code calls, read from the code."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path
from typing import Any

import helm_python as helm
import pytest
import yaml

from tests.support.helm import CHART, FULLNAME, NAMESPACE, Manifest, one, render_chart
from tools import rbac
from tools.rbac import Permission, RbacError, required_permissions

# Method, then what calling it needs (group "-" is the core group), following the client's naming
# and its request paths.
METHODS = """
CoreV1Api.list_pod_for_all_namespaces
    - pods list
CoreV1Api.list_namespaced_pod
    - pods list
CoreV1Api.list_node
    - nodes list
CoreV1Api.read_node_status
    - nodes/status get
CoreV1Api.create_namespaced_pod_eviction
    - pods/eviction create
CoreV1Api.patch_namespaced_pod_resize
    - pods/resize patch
CoreV1Api.read_namespaced_pod_log
    - pods/log get
CoreV1Api.connect_post_namespaced_pod_exec
    - pods/exec create
CoreV1Api.connect_get_namespaced_pod_exec
    - pods/exec get
CoreV1Api.delete_collection_namespaced_pod
    - pods deletecollection
CoreV1Api.delete_namespaced_pod
    - pods delete
CoreV1Api.create_namespaced_event
    - events create
CoreV1Api.read_namespaced_secret
    - secrets get
CoreV1Api.replace_namespaced_secret
    - secrets update
CoreV1Api.patch_namespaced_config_map
    - configmaps patch
CoreV1Api.delete_namespace
    - namespaces delete
CoreV1Api.replace_namespace_finalize
    - namespaces/finalize update
CoreV1Api.create_namespaced_service_account_token
    - serviceaccounts/token create
CoreV1Api.patch_namespaced_replication_controller_scale
    - replicationcontrollers/scale patch
AppsV1Api.list_deployment_for_all_namespaces
    apps deployments list
AppsV1Api.read_namespaced_deployment_scale
    apps deployments/scale get
AppsV1Api.patch_namespaced_deployment_scale
    apps deployments/scale patch
AppsV1Api.replace_namespaced_deployment_scale
    apps deployments/scale update
AppsV1Api.patch_namespaced_stateful_set_scale
    apps statefulsets/scale patch
AppsV1Api.list_replica_set_for_all_namespaces
    apps replicasets list
BatchV1Api.list_cron_job_for_all_namespaces
    batch cronjobs list
AutoscalingV2Api.list_horizontal_pod_autoscaler_for_all_namespaces
    autoscaling horizontalpodautoscalers list
CoordinationV1Api.read_namespaced_lease
    coordination.k8s.io leases get
CoordinationV1Api.create_namespaced_lease
    coordination.k8s.io leases create
CoordinationV1Api.replace_namespaced_lease
    coordination.k8s.io leases update
PolicyV1Api.list_namespaced_pod_disruption_budget
    policy poddisruptionbudgets list
AdmissionregistrationV1Api.read_mutating_webhook_configuration
    admissionregistration.k8s.io mutatingwebhookconfigurations get
AdmissionregistrationV1Api.create_mutating_webhook_configuration
    admissionregistration.k8s.io mutatingwebhookconfigurations create
AdmissionregistrationV1Api.patch_mutating_webhook_configuration
    admissionregistration.k8s.io mutatingwebhookconfigurations patch
AdmissionregistrationV1Api.delete_mutating_webhook_configuration
    admissionregistration.k8s.io mutatingwebhookconfigurations delete
AuthenticationV1Api.create_token_review
    authentication.k8s.io tokenreviews create
AuthorizationV1Api.create_subject_access_review
    authorization.k8s.io subjectaccessreviews create
EventsV1Api.create_namespaced_event
    events.k8s.io events create
"""


def method_table() -> list[tuple[str, str, Permission]]:
    out = []
    lines = METHODS.strip().splitlines()
    for qualified, needed in zip(lines[::2], lines[1::2], strict=True):
        group, resource, verb = needed.split()
        api, method = qualified.split(".")
        out.append((api, method, ("" if group == "-" else group, resource, verb)))
    return out


@pytest.mark.parametrize(("api", "method", "needed"), method_table())
def test_method_names_map_to_group_resource_and_verb(
    api: str, method: str, needed: Permission
) -> None:
    assert rbac.permissions_of_method(api, method) == {needed}


@pytest.mark.parametrize("method", ["get_api_resources", "get_api_group", "get_code"])
def test_discovery_needs_no_rule(method: str) -> None:
    assert rbac.verb_of(method) is None


@pytest.mark.parametrize(
    ("path", "group", "resource", "namespaced"),
    [
        ("/api/v1/pods", "", "pods", False),
        ("/api/v1/namespaces/{namespace}/pods/{name}/eviction", "", "pods/eviction", True),
        ("/api/v1/namespaces/{name}", "", "namespaces", False),
        ("/api/v1/namespaces/{name}/status", "", "namespaces/status", False),
        ("/apis/apps/v1/namespaces/{namespace}/deployments/{name}", "apps", "deployments", True),
        ("/apis/metrics.k8s.io/v1beta1/nodes", "metrics.k8s.io", "nodes", False),
    ],
)  # fmt: skip
def test_request_paths_name_group_and_resource(
    path: str, group: str, resource: str, namespaced: bool
) -> None:
    assert rbac.endpoint_of_path(path) == rbac.Endpoint(group, resource, namespaced)


SAMPLE = """
from typing import Any

from kubernetes import client, watch

from app.kube.informer import Informer


class Adapter:
    def __init__(self, api: Any) -> None:
        self.core = client.CoreV1Api(api)
        self._events = client.EventsV1Api(api)
        apps: Any = client.AppsV1Api(api)
        auth, custom = client.AuthenticationV1Api(api), client.CustomObjectsApi(api)
        self.custom = custom
        self.pods = Informer("pods", self.core.list_namespaced_pod, namespace="x")
        self.scale = {"Deployment": apps.patch_namespaced_deployment_scale}
        self.review = auth.create_token_review

    def run(self, api: Any) -> None:
        self._events.create_namespaced_event("ns", {})  # also a CoreV1Api name: the binding says
        for _ in watch.Watch().stream(self.core.list_node):
            pass
        self.core.list_namespaced_config_map("ns", watch=True, _preload_content=False)
        self.core.list_namespaced_secret("ns")
        client.PolicyV1Api(api).read_namespaced_pod_disruption_budget("a", "b")
        self.custom.list_cluster_custom_object("metrics.k8s.io", "v1beta1", "nodes")
        self.custom.get_namespaced_custom_object(
            group="autoscaling.k8s.io", version="v1", namespace="n", plural="vpas", name="x"
        )
        self.core.get_api_resources()

    def import_from_cluster(self) -> None:  # rbac: cli-only
        self.core.delete_namespace("x")

    def also_by_hand(self) -> None:
        self.core.read_namespaced_secret("a", "b")  # rbac: cli-only
"""


def write(tmp_path: Path, source: str) -> Path:
    path = tmp_path / "pkg" / "adapter.py"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(source))
    return tmp_path / "pkg"


def test_derivation_reads_calls_references_watches_and_custom_objects(tmp_path: Path) -> None:
    assert required_permissions(write(tmp_path, SAMPLE)) == {
        ("", "pods", "list"),
        ("", "pods", "watch"),  # handed to an Informer
        ("events.k8s.io", "events", "create"),
        ("apps", "deployments/scale", "patch"),  # referenced, called later
        ("authentication.k8s.io", "tokenreviews", "create"),
        ("", "nodes", "list"),
        ("", "nodes", "watch"),  # Watch().stream
        ("", "configmaps", "list"),
        ("", "configmaps", "watch"),  # watch=True
        ("", "secrets", "list"),  # no watch: listed once
        ("policy", "poddisruptionbudgets", "get"),
        ("metrics.k8s.io", "nodes", "list"),
        ("autoscaling.k8s.io", "vpas", "get"),
        # not: namespaces delete and secrets get (cli-only), discovery
    }


def test_an_ambiguous_method_on_an_unknown_object_is_an_error(tmp_path: Path) -> None:
    root = write(tmp_path, "def f(x):\n    x.create_namespaced_event('ns', {})\n")
    with pytest.raises(RbacError, match="exists in CoreV1Api, EventsV1Api"):
        required_permissions(root)


def test_a_custom_object_call_needs_literal_group_and_plural(tmp_path: Path) -> None:
    source = "from kubernetes import client\nc = client.CustomObjectsApi()\n"
    source += "def f(group):\n    c.list_cluster_custom_object(group, 'v1', 't')\n"
    with pytest.raises(RbacError, match="literal group and plural"):
        required_permissions(write(tmp_path, source))


# The code on this branch, and the chart -----------------------------------------------------------


def test_the_code_needs_what_the_jobs_do() -> None:
    """A floor, so that a derivation that silently finds nothing fails."""
    needed = required_permissions()
    assert {
        ("", "pods", "list"),
        ("", "pods", "watch"),
        ("", "nodes", "watch"),
        ("", "pods/eviction", "create"),
        ("", "pods/resize", "patch"),
        ("", "events", "create"),
        ("apps", "deployments/scale", "patch"),
        ("coordination.k8s.io", "leases", "get"),
        ("coordination.k8s.io", "leases", "create"),
        ("coordination.k8s.io", "leases", "update"),
        ("metrics.k8s.io", "pods", "list"),
    } <= needed


def test_the_chart_rules_file_is_generated_from_the_current_code() -> None:
    expected = rbac.render_chart_file(required_permissions())
    assert rbac.CHART_RBAC_FILE.read_text() == expected, (
        "helm/rightsizer/files/rbac.yaml is out of date: run `python tools/rbac.py --write`"
    )


def granted(rules: list[dict[str, Any]]) -> set[Permission]:
    return {
        (group, resource, verb)
        for rule in rules
        for group in rule["apiGroups"]
        for resource in rule["resources"]
        for verb in rule["verbs"]
    }


def role_rules(docs: list[Manifest]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    cluster = one(docs, "ClusterRole", FULLNAME)["rules"]
    role = one(docs, "Role", FULLNAME)
    assert role["metadata"]["namespace"] == NAMESPACE
    return cluster, role["rules"]


SECRETS = ("", "secrets")


@pytest.mark.parametrize("self_managed_tls", [False, True])
def test_the_chart_grants_exactly_what_the_code_calls(self_managed_tls: bool) -> None:
    """Secrets only when rightsizer keeps its certificates in one; otherwise it is mounted."""
    cluster, local = role_rules(render_chart({"tls": {"selfManaged": self_managed_tls}}))
    needed = required_permissions()
    assert {p[:2] for p in needed} >= {SECRETS}  # the certificate Secret calls are in the code
    if not self_managed_tls:
        needed = {p for p in needed if p[:2] != SECRETS}
    assert granted(cluster) | granted(local) == needed
    for group, resource, _ in granted(local):
        assert (group, resource.split("/")[0]) in rbac.NAMESPACE_LOCAL
    for group, resource, _ in granted(cluster):
        assert (group, resource.split("/")[0]) not in rbac.NAMESPACE_LOCAL
    for rule in cluster + local:
        if rule["resources"] == ["*/scale"]:
            # The one wildcard, as VPA's ClusterRole has it: the Scale of any kind discovery finds
            # (targets beyond the six well-known kinds: app/kube/scalable.py), read only.
            assert (rule["apiGroups"], rule["verbs"]) == (["*"], ["get"])
            continue
        assert "*" not in str(rule["apiGroups"] + rule["resources"] + rule["verbs"])


def test_bindings_give_the_roles_to_the_service_account() -> None:
    docs = render_chart()
    account = one(docs, "ServiceAccount", FULLNAME)["metadata"]["name"]
    for kind, role in (("ClusterRoleBinding", "ClusterRole"), ("RoleBinding", "Role")):
        binding = one(docs, kind, FULLNAME)
        assert binding["roleRef"] == {
            "apiGroup": "rbac.authorization.k8s.io",
            "kind": role,
            "name": FULLNAME,
        }
        assert binding["subjects"] == [
            {"kind": "ServiceAccount", "name": account, "namespace": NAMESPACE}
        ]
    spec = one(docs, "Deployment")["spec"]["template"]["spec"]
    assert spec["serviceAccountName"] == account


def test_owned_objects_are_granted_by_name(tmp_path: Path) -> None:
    """With the webhook's and certificates' calls in the code, rights on the objects rightsizer
    owns are limited to their names (create cannot be limited by name in Kubernetes)."""
    chart = tmp_path / "rightsizer"
    shutil.copytree(CHART, chart)
    lease, secret = ("coordination.k8s.io", "leases"), ("", "secrets")
    mwc = ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")
    perms: set[Permission] = {(*lease, v) for v in ("get", "create", "update")}
    perms |= {(*secret, v) for v in ("get", "create", "update")}
    perms |= {(*mwc, v) for v in ("get", "create", "patch", "delete")}
    perms |= {("authentication.k8s.io", "tokenreviews", "create")}
    (chart / "files" / "rbac.yaml").write_text(rbac.render_chart_file(perms))
    with helm.Chart.load(str(chart)) as c:
        files = c.render(
            {"webhook": {"configurationName": "rightsizer.example"}, "tls": {"selfManaged": True}},
            name="rs",
            namespace=NAMESPACE,
        )
    texts = [text for name, text in files.items() if not name.endswith("NOTES.txt")]
    docs = [d for text in texts for d in yaml.safe_load_all(text) if d]
    cluster, local = role_rules(docs)
    assert granted(cluster) | granted(local) == perms
    names = {"leases": "rs-rightsizer-leader", "secrets": "rs-rightsizer-tls"}
    names["mutatingwebhookconfigurations"] = "rightsizer.example"
    for rule in cluster + local:
        (resource,) = rule["resources"]
        if resource in names and rule["verbs"] != ["create"]:
            assert rule["resourceNames"] == [names[resource]]
        else:
            assert "resourceNames" not in rule
    assert {r["resources"][0] for r in local} == {"leases", "secrets"}


def test_rbac_can_be_left_to_the_cluster_admin() -> None:
    docs = render_chart({"rbac": {"create": False}})
    assert not {"ClusterRole", "Role", "ClusterRoleBinding", "RoleBinding"} & {
        d["kind"] for d in docs
    }


CUSTOM_CALLS = [
    ("list_cluster_custom_object('metrics.k8s.io', 'v1beta1', 'pods')", "metrics.k8s.io pods list"),
    ("list_custom_object_for_all_namespaces('a.io', 'v1', resource_plural='t')", "a.io t list"),
    ("get_namespaced_custom_object_scale('a.io', 'v1', 'ns', 't', 'n')", "a.io t/scale get"),
    (
        "patch_cluster_custom_object_status('a.io', 'v1', plural='t', name='n', body=0)",
        "a.io t/status patch",
    ),
    (
        "delete_collection_namespaced_custom_object('a.io', 'v1', 'ns', 't')",
        "a.io t deletecollection",
    ),
    ("replace_namespaced_custom_object('a.io', 'v1', 'ns', 't', 'n', {})", "a.io t update"),
]


@pytest.mark.parametrize(("call", "needed"), CUSTOM_CALLS)
def test_custom_object_calls_take_group_and_plural_from_the_call(
    tmp_path: Path, call: str, needed: str
) -> None:
    source = f"from kubernetes import client\nc = client.CustomObjectsApi()\nc.{call}\n"
    group, resource, verb = needed.split()
    assert required_permissions(write(tmp_path, source)) == {(group, resource, verb)}


# cli-only code ------------------------------------------------------------------------------------

CLI_ONLY_LIB = """
from kubernetes import client


def make_namespace(api, name):  # rbac: cli-only
    client.CoreV1Api(api).create_namespace({"metadata": {"name": name}})


def again(api):  # rbac: cli-only
    make_namespace(api, "x")
"""


def package(tmp_path: Path, files: dict[str, str]) -> Path:
    root = tmp_path / "app"
    for name, source in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(textwrap.dedent(source))
    return root


def test_cli_only_functions_may_be_used_from_cli_modules(tmp_path: Path) -> None:
    cli = "from app.lib import make_namespace\n\ndef cmd(api):\n    make_namespace(api, 'demo')\n"
    root = package(
        tmp_path,
        {"lib.py": CLI_ONLY_LIB, "cli/__init__.py": cli, "cli/demo.py": cli, "sim/cli.py": cli},
    )
    assert rbac.cli_only_misuse(root) == []
    assert required_permissions(root) == set()  # and the service account is not given them


def test_a_server_side_use_of_cli_only_code_is_found(tmp_path: Path) -> None:
    server = """
    from app.lib import make_namespace as mk

    def start(api):
        mk(api, "rightsizer")
    """
    local = CLI_ONLY_LIB + "\n\ndef serve(api):\n    make_namespace(api, 'y')\n"
    root = package(tmp_path, {"lib.py": local, "jobs/startup.py": server})
    found = rbac.cli_only_misuse(root)
    assert [f.split(": ")[0].rsplit("/", 2)[-2:] for f in found] == [
        ["jobs", "startup.py:2"],
        ["jobs", "startup.py:5"],
        ["app", "lib.py:14"],
    ]
    assert "uses app.lib.make_namespace, which is `# rbac: cli-only`" in found[2]


def test_no_server_code_uses_cli_only_functions() -> None:
    """The rules left out of the chart for cli-only code are not needed by `rightsizer serve`."""
    assert rbac.cli_only_misuse() == []


def test_installer_and_uninstaller_rights_are_not_granted() -> None:
    """Creating namespaces (the demo) and deleting the webhook configuration (`rightsizer webhook
    uninstall`) run with the operator's credentials, never the service account's."""
    needed = required_permissions()
    assert ("", "namespaces", "create") not in needed
    mwc = ("admissionregistration.k8s.io", "mutatingwebhookconfigurations")
    assert (*mwc, "delete") not in needed
    assert {(*mwc, "get"), (*mwc, "create")} <= needed  # self-registration still works
    cli_only = {r.method for r in rbac.references(skip_cli_only=False)} - {
        r.method for r in rbac.references()
    }
    assert {"create_namespace", "delete_mutating_webhook_configuration"} <= cli_only
