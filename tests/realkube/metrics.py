"""The real metrics-server on the real control plane, scraping the usage kwok emulates.

The chain, all on 127.0.0.1:

- kwok plays each node's kubelet `/metrics/resource` (its Metric `metrics-resource`, from kwok's
  module, tools/build.py) at `/metrics/nodes/{nodeName}/metrics/resource` on its server port.
  The cluster starts kwok with `--node-ip=127.0.0.1` and `--node-port` set to that port, so its
  node stages write the node's InternalIP 127.0.0.1 and `status.daemonEndpoints.kubeletEndpoint`.
- metrics-server (`--kubelet-use-node-status-port`, `--kubelet-preferred-address-types=InternalIP`,
  `--kubelet-insecure-tls`: kwok serves TLS with a throw-away certificate) scrapes
  `https://127.0.0.1:<that port>` at the path each node names in its annotation
  `metrics.k8s.io/resource-metrics-path` (metrics-server's scraper/client/resource/client.go reads
  it; kwokctl's node template sets it the same way): `RealCluster.add_node` sets it.
- kube-apiserver's aggregator reaches metrics-server through the APIService
  `v1beta1.metrics.k8s.io`, whose Service `kube-system/metrics-server` is of type ExternalName
  `127.0.0.1`: with `--enable-aggregator-routing=false` (the default) the aggregator resolves a
  Service with kube-aggregator's ResolveCluster, which for ExternalName uses the external name as
  the host and the APIService's port (kwokctl does the same). No Endpoints are involved (they may
  not be loopback addresses). TLS is verified: metrics-server's certificate names
  `metrics-server.kube-system.svc` (the name the aggregator checks) and its CA is the APIService's
  caBundle. The aggregator authenticates with the front-proxy client certificate
  (`front_proxy_flags`), so metrics-server sees the caller (X-Remote-User) and asks kube-apiserver
  whether it may read metrics (SubjectAccessReview), as in a cluster.

Usage: every pod's containers use what its annotations `kwok.x-k8s.io/usage-cpu` and
`kwok.x-k8s.io/usage-memory` say (1m and 1Mi without; kwok's ClusterResourceUsage
`usage-from-annotation`, `usage_annotations` for a pod template), unless a ResourceUsage named
after the pod says otherwise (`set_usage`; kwok watches them, `--enable-crds=ResourceUsage`). CPU
is a counter kwok integrates over time, so metrics-server shows a pod once it has scraped it twice
(`--metric-resolution=10s`, its least).
"""

from __future__ import annotations

import base64
import datetime as dt
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID
from kubernetes import client

from app.serving.certs import ensure, make_ca, service_names
from tests.support.json_bodies import plain

if TYPE_CHECKING:
    from tests.realkube.cluster import RealCluster

NAMESPACE, SERVICE = "kube-system", "metrics-server"
API_SERVICE = "v1beta1.metrics.k8s.io"
PATH_ANNOTATION = "metrics.k8s.io/resource-metrics-path"
KWOK_GROUP, KWOK_VERSION = "kwok.x-k8s.io", "v1alpha1"
FRONT_PROXY_CLIENT = "front-proxy-client"


def front_proxy_flags(directory: Path) -> list[str]:
    """kube-apiserver's flags for authenticating to aggregated API servers (a front-proxy CA and
    client certificate written under `directory`): without them the aggregator calls
    metrics-server anonymously and every read is refused (system:anonymous)."""
    pki = directory / "front-proxy"
    pki.mkdir(parents=True, exist_ok=True)
    now = dt.datetime.now(dt.UTC)
    ca_key, ca = make_ca(now, "front-proxy-ca")
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, FRONT_PROXY_CLIENT)]))
        .issuer_name(ca.subject)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))
        .not_valid_after(now + dt.timedelta(days=7))
        .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
        .sign(ca_key, hashes.SHA256())
    )
    ca_file, cert_file, key_file = pki / "ca.crt", pki / "client.crt", pki / "client.key"
    ca_file.write_bytes(ca.public_bytes(serialization.Encoding.PEM))
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(
        key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    )
    return [
        f"--requestheader-client-ca-file={ca_file}",
        f"--requestheader-allowed-names={FRONT_PROXY_CLIENT}",
        "--requestheader-username-headers=X-Remote-User",
        "--requestheader-group-headers=X-Remote-Group",
        "--requestheader-extra-headers-prefix=X-Remote-Extra-",
        f"--proxy-client-cert-file={cert_file}",
        f"--proxy-client-key-file={key_file}",
    ]


def kwok_flags(cluster: RealCluster, port: int) -> list[str]:
    """kwok's flags for the metrics it emulates on its server `port` (see the module's doc)."""
    files = sorted((cluster.bins["kwok"] / "metrics").glob("*.yaml"))
    return [
        f"--node-port={port}",
        "--enable-crds=ResourceUsage",
        *(f"--config={f}" for f in files),
    ]


def start(cluster: RealCluster) -> None:
    """Installs kwok's ResourceUsage CRD (before kwok starts, so its first list finds it), starts
    metrics-server and registers its APIService. It turns Available within seconds
    (`wait_available`); nodes get scraped as `RealCluster.add_node` names their path."""
    from tests.realkube.cluster import free_port

    with cluster.api() as api:
        ext = client.ApiextensionsV1Api(api)
        for file in sorted((cluster.bins["kwok"] / "crds").glob("*.yaml")):
            crd = yaml.safe_load(file.read_text())
            ext.create_custom_resource_definition(crd)

            def established(name: str = crd["metadata"]["name"]) -> bool:
                return _condition(ext.read_custom_resource_definition(name), "Established")

            _wait(
                established,
                60,
                f"CRD {crd['metadata']['name']} Established",
                cluster,
            )
    port = free_port()
    names = [*service_names(SERVICE, NAMESPACE), "localhost", "127.0.0.1"]
    paths, _ = ensure(cluster.directory / "metrics-server-pki", names)
    cluster._spawn(
        "metrics-server",
        "--bind-address=127.0.0.1",
        f"--secure-port={port}",
        f"--tls-cert-file={paths.cert}",
        f"--tls-private-key-file={paths.key}",
        f"--kubeconfig={cluster.kubeconfig_path}",
        f"--authentication-kubeconfig={cluster.kubeconfig_path}",
        f"--authorization-kubeconfig={cluster.kubeconfig_path}",
        "--kubelet-use-node-status-port",
        "--kubelet-preferred-address-types=InternalIP",
        "--kubelet-insecure-tls",
        "--kubelet-request-timeout=5s",
        "--metric-resolution=10s",
    )
    service = {
        "metadata": {"name": SERVICE, "namespace": NAMESPACE},
        "spec": {"type": "ExternalName", "externalName": "127.0.0.1"},
    }
    api_service = {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": API_SERVICE},
        "spec": {
            "group": "metrics.k8s.io",
            "version": "v1beta1",
            "service": {"namespace": NAMESPACE, "name": SERVICE, "port": port},
            "caBundle": base64.b64encode(paths.ca.read_bytes()).decode(),
            "groupPriorityMinimum": 100,
            "versionPriority": 100,
        },
    }
    with cluster.api() as api:
        client.CoreV1Api(api).create_namespaced_service(NAMESPACE, plain(service))
        client.ApiregistrationV1Api(api).create_api_service(plain(api_service))


def resource_path(node: str) -> str:
    """Where kwok serves `node`'s emulated kubelet `/metrics/resource` (`RealCluster.add_node`
    names it in the node's PATH_ANNOTATION, as kwokctl does)."""
    return f"/metrics/nodes/{node}/metrics/resource"


def usage_annotations(cpu: str, memory: str) -> dict[str, str]:
    """Pod annotations kwok reads as each container's usage (a pod template's, for example)."""
    return {"kwok.x-k8s.io/usage-cpu": cpu, "kwok.x-k8s.io/usage-memory": memory}


def set_usage(
    cluster: RealCluster,
    namespace: str,
    pod: str,
    cpu: str,
    memory: str,
    containers: list[str] | None = None,
) -> None:
    """From now on each of `containers` of pod namespace/pod (all, by default) uses `cpu` and
    `memory` (Kubernetes quantities), whatever its annotations say: the ResourceUsage named
    after the pod, created or replaced. The pod need not exist yet."""
    usage: dict[str, Any] = {"usage": {"cpu": {"value": cpu}, "memory": {"value": memory}}}
    if containers:
        usage["containers"] = containers
    body = {
        "apiVersion": f"{KWOK_GROUP}/{KWOK_VERSION}",
        "kind": "ResourceUsage",
        "metadata": {"name": pod, "namespace": namespace},
        "spec": {"usages": [usage]},
    }
    with cluster.api() as api:
        custom = client.CustomObjectsApi(api)
        try:
            custom.create_namespaced_custom_object(
                KWOK_GROUP, KWOK_VERSION, namespace, "resourceusages", body
            )
        except client.ApiException as e:
            if e.status != 409:
                raise
            custom.patch_namespaced_custom_object(
                KWOK_GROUP, KWOK_VERSION, namespace, "resourceusages", pod, {"spec": body["spec"]}
            )


def api_service_available(cluster: RealCluster) -> dict[str, Any] | None:
    """The APIService's Available condition (None before it has one)."""
    with cluster.api() as api:
        status = client.ApiregistrationV1Api(api).read_api_service(API_SERVICE).status
    for c in status.conditions or []:
        if c.type == "Available":
            return {"status": c.status, "reason": c.reason, "message": c.message}
    return None


def wait_available(cluster: RealCluster, timeout: float = 60) -> None:
    _wait(
        lambda: (api_service_available(cluster) or {}).get("status") == "True",
        timeout,
        lambda: f"APIService {API_SERVICE} Available (last: {api_service_available(cluster)})",
        cluster,
    )


def pod_metrics(cluster: RealCluster, namespace: str, pod: str) -> dict[str, Any] | None:
    """The PodMetrics metrics.k8s.io serves for the pod, or None while it serves none (404)."""
    with cluster.api() as api:
        try:
            found = cast(
                dict[str, Any],
                client.CustomObjectsApi(api).get_namespaced_custom_object(
                    "metrics.k8s.io", "v1beta1", namespace, "pods", pod
                ),
            )
            return found
        except client.ApiException as e:
            if e.status in (404, 503):
                return None
            raise


def node_metrics(cluster: RealCluster, node: str) -> dict[str, Any] | None:
    """The NodeMetrics metrics.k8s.io serves for the node, or None while it serves none. A node
    without pods has none: kwok's node usage is the sum of its pods', and metrics-server drops a
    node whose CPU or memory reads 0 (scraper/client/resource/decode.go)."""
    with cluster.api() as api:
        try:
            found = cast(
                dict[str, Any],
                client.CustomObjectsApi(api).get_cluster_custom_object(
                    "metrics.k8s.io", "v1beta1", "nodes", node
                ),
            )
            return found
        except client.ApiException as e:
            if e.status in (404, 503):
                return None
            raise


def wait_pod_metrics(
    cluster: RealCluster, namespace: str, pod: str, timeout: float = 120
) -> dict[str, Any]:
    """The pod's PodMetrics once metrics.k8s.io answers for it (two scrapes after it runs)."""
    found: dict[str, Any] = _wait(
        lambda: pod_metrics(cluster, namespace, pod),
        timeout,
        f"PodMetrics of {namespace}/{pod}",
        cluster,
    )
    return found


def _condition(obj: Any, kind: str) -> bool:
    return any(c.type == kind and c.status == "True" for c in obj.status.conditions or [])


def _wait(
    predicate: Callable[[], Any],
    timeout: float,
    what: str | Callable[[], str],
    cluster: RealCluster,
) -> Any:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        cluster._check_alive()
        found = predicate()
        if found:
            return found
        time.sleep(0.5)
    raise RuntimeError(
        f"timed out after {timeout}s waiting for {what() if callable(what) else what}\n"
        f"{cluster.logs('metrics-server', 'kwok', lines=30)}"
    )
