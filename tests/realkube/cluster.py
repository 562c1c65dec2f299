"""A real Kubernetes control plane on 127.0.0.1, built from Go modules (tools/build.py), as
envtest starts one: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok.

kube-apiserver runs with its default admission plugins (so LimitRanger, ResourceQuota,
ServiceAccount and MutatingAdmissionWebhook are the real ones), authorization `Node,RBAC`, a static
token for the admin (group system:masters) and a service-account signing key, so TokenRequest
tokens authenticate as the ServiceAccounts they name. kwok plays the kubelets of the nodes made by
`add_node` (annotation kwok.x-k8s.io/node=fake): nodes turn Ready, pods scheduled to them Running.
Every process logs to a file in the cluster's directory; `logs()` returns their tails for a failing
test's message.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import requests
import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from kubernetes import client, config

from app.serving.certs import ensure
from tests.realkube import metrics
from tests.realkube.kubelet import ResizeKubelet
from tests.support.json_bodies import plain

ROOT = Path(__file__).resolve().parents[2]
ADMIN_TOKEN = "rightsizer-realkube-admin"
SERVICE_CIDR = "10.96.0.0/16"
# Every request's verb, resource, user and answer (no bodies), once it is answered: what the RBAC
# tests read to find the calls a ServiceAccount was refused.
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived, ResponseStarted]
rules:
- level: Metadata
"""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


def built_tools() -> dict[str, Path] | str:
    """Each module's folder of binaries, or why they are not there (tools/build.py --check)."""
    check = subprocess.run(
        ["python3", str(ROOT / "tools" / "build.py"), "--check"], capture_output=True, text=True
    )
    if check.returncode:
        return check.stderr.strip()
    out = subprocess.run(
        ["python3", str(ROOT / "tools" / "build.py")], capture_output=True, text=True, check=True
    )
    return {k: Path(v) for k, v in (line.split("=", 1) for line in out.stdout.split())}


# The releases the tests run against: the tools module that builds each (tools/build.py), and the
# feature gates that release needs for what rightsizer uses (in-place resize is on by default from
# 1.33, beta there; pod-level resources are alpha in 1.33, beta and on from 1.34).
RELEASES = {"1.37": "kube", "1.33": "kube133"}
FEATURE_GATES = {"kube133": "PodLevelResources=true"}


def pinned_release(module: str) -> str:
    """The k8s.io/kubernetes version tools/<module>/go.mod requires."""
    gomod = (ROOT / "tools" / module / "go.mod").read_text()
    found = re.search(r"k8s\.io/kubernetes (v\S+)", gomod)
    assert found, module
    return found.group(1)


@dataclass
class RealCluster:
    directory: Path
    bins: dict[str, Path]
    kube: str = "kube"  # the tools module of the release (RELEASES)
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)
    kubelet: ResizeKubelet | None = None
    port: int = 0

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def kubeconfig_path(self) -> str:
        return str(self.directory / "admin.kubeconfig")

    @property
    def audit_log(self) -> Path:
        return self.directory / "audit.log"

    def audit_events(self, user: str) -> list[dict[str, Any]]:
        """The audit events of the requests `user` made, in order."""
        if not self.audit_log.exists():
            return []
        events = (json.loads(line) for line in self.audit_log.read_text().splitlines() if line)
        return [e for e in events if e.get("user", {}).get("username") == user]

    @property
    def ca_file(self) -> Path:
        return self.directory / "pki" / "ca.crt"

    def binary(self, name: str) -> str:
        module = {
            "etcd": "etcd",
            "kwok": "kwok",
            "metrics-server": "metrics-server",
            # the Vertical Pod Autoscaler's programs (tests/realkube/vpa.py)
            "recommender": "vpa",
            "updater": "vpa",
            "admission-controller": "vpa",
        }.get(name, self.kube)
        return str(self.bins[module] / name)

    def start(self) -> None:
        self.directory.mkdir(parents=True, exist_ok=True)
        pki = self.directory / "pki"
        paths, _ = ensure(pki, ["localhost", "127.0.0.1", "kubernetes", "kubernetes.default.svc"])
        sa_key = self.directory / "sa.key"
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        sa_key.write_bytes(
            key.private_bytes(
                serialization.Encoding.PEM,
                serialization.PrivateFormat.PKCS8,
                serialization.NoEncryption(),
            )
        )
        audit_policy = self.directory / "audit-policy.yaml"
        audit_policy.write_text(AUDIT_POLICY)
        tokens = self.directory / "tokens.csv"
        tokens.write_text(f'{ADMIN_TOKEN},admin,admin,"system:masters"\n')
        etcd_port, etcd_peer = free_port(), free_port()
        self._spawn(
            "etcd",
            f"--data-dir={self.directory / 'etcd'}",
            f"--listen-client-urls=http://127.0.0.1:{etcd_port}",
            f"--advertise-client-urls=http://127.0.0.1:{etcd_port}",
            f"--listen-peer-urls=http://127.0.0.1:{etcd_peer}",
            f"--initial-advertise-peer-urls=http://127.0.0.1:{etcd_peer}",
            f"--initial-cluster=default=http://127.0.0.1:{etcd_peer}",
            "--unsafe-no-fsync",
            "--quota-backend-bytes=4294967296",
        )
        self.port = free_port()
        self._spawn(
            "kube-apiserver",
            f"--etcd-servers=http://127.0.0.1:{etcd_port}",
            "--bind-address=127.0.0.1",
            "--advertise-address=127.0.0.1",
            "--endpoint-reconciler-type=none",  # loopback may not be an Endpoint
            f"--secure-port={self.port}",
            f"--tls-cert-file={paths.cert}",
            f"--tls-private-key-file={paths.key}",
            f"--client-ca-file={paths.ca}",
            f"--token-auth-file={tokens}",
            "--authorization-mode=Node,RBAC",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
            f"--service-account-key-file={sa_key}",
            f"--service-account-signing-key-file={sa_key}",
            "--allow-privileged=true",
            "--enable-priority-and-fairness=false",
            *self._feature_gates(),
            f"--audit-policy-file={audit_policy}",
            f"--audit-log-path={self.audit_log}",
            "--audit-log-format=json",
            "--audit-log-mode=blocking",
            *metrics.front_proxy_flags(self.directory),
        )
        self._write_kubeconfig()
        self._wait_healthy()
        common = [
            f"--kubeconfig={self.kubeconfig_path}",
            f"--authentication-kubeconfig={self.kubeconfig_path}",
            f"--authorization-kubeconfig={self.kubeconfig_path}",
            "--leader-elect=false",
            "--bind-address=127.0.0.1",
        ]
        self._spawn(
            "kube-controller-manager",
            *common,
            f"--secure-port={free_port()}",
            f"--service-account-private-key-file={sa_key}",
            f"--root-ca-file={paths.ca}",
            f"--service-cluster-ip-range={SERVICE_CIDR}",
            "--use-service-account-credentials=false",
            "--concurrent-deployment-syncs=10",
            "--concurrent-replicaset-syncs=10",
        )
        self._spawn(
            "kube-scheduler", *common, f"--secure-port={free_port()}", *self._feature_gates()
        )
        metrics.start(self)
        kwok_port = free_port()
        self._spawn(
            "kwok",
            f"--kubeconfig={self.kubeconfig_path}",
            "--manage-all-nodes=false",
            "--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake",
            "--node-ip=127.0.0.1",
            "--cidr=10.244.0.0/16",
            f"--server-address=127.0.0.1:{kwok_port}",
            "--node-lease-duration-seconds=40",
            *(f"--config={f}" for f in sorted((self.bins["kwok"] / "stages").glob("*.yaml"))),
            *metrics.kwok_flags(self, kwok_port),
        )
        self._wait_default_service_account()
        # what kwok does not play of the kubelet: in-place resize (tests.realkube.kubelet)
        self.kubelet = ResizeKubelet(config.new_client_from_config(self.kubeconfig_path)).start()

    def _feature_gates(self) -> list[str]:
        gates = FEATURE_GATES.get(self.kube)
        return [f"--feature-gates={gates}"] if gates else []

    def _spawn(self, name: str, *args: str) -> None:
        log = (self.directory / f"{name}.log").open("ab")
        self.procs[name] = subprocess.Popen(
            [self.binary(name), *args],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            cwd=self.directory,
        )

    def _write_kubeconfig(self) -> None:
        doc = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": [
                {
                    "name": "real",
                    "cluster": {"server": self.server, "certificate-authority": str(self.ca_file)},
                }
            ],
            "users": [{"name": "admin", "user": {"token": ADMIN_TOKEN}}],
            "contexts": [{"name": "real", "context": {"cluster": "real", "user": "admin"}}],
            "current-context": "real",
        }
        Path(self.kubeconfig_path).write_text(yaml.safe_dump(doc))

    def _check_alive(self) -> None:
        for name, proc in self.procs.items():
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{self.logs(name)}")

    def _wait_healthy(self, timeout: float = 120) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            try:
                answer = requests.get(
                    f"{self.server}/readyz",
                    headers={"Authorization": f"Bearer {ADMIN_TOKEN}"},
                    verify=str(self.ca_file),
                    timeout=2,
                )
                if answer.status_code == 200:
                    return
            except requests.RequestException:
                pass
            time.sleep(0.3)
        raise RuntimeError(f"kube-apiserver not ready after {timeout}s:\n{self.logs()}")

    def _wait_default_service_account(self, timeout: float = 120) -> None:
        """Pods need the namespace's `default` ServiceAccount (the ServiceAccount admission
        plugin refuses them without it): controller-manager makes it."""
        deadline = time.monotonic() + timeout
        with self.api() as api:
            core = client.CoreV1Api(api)
            while time.monotonic() < deadline:
                self._check_alive()
                try:
                    core.read_namespaced_service_account("default", "default")
                    return
                except client.ApiException:
                    time.sleep(0.3)
        raise RuntimeError(f"no default ServiceAccount after {timeout}s:\n{self.logs()}")

    @contextmanager
    def api(self) -> Iterator[client.ApiClient]:
        api = config.new_client_from_config(self.kubeconfig_path)
        try:
            yield api
        finally:
            api.close()

    def add_node(
        self,
        name: str,
        cpu: str = "8",
        memory: str = "32Gi",
        pods: str = "110",
        labels: dict[str, str] | None = None,
    ) -> None:
        """A node kwok plays the kubelet of, scraped by metrics-server."""
        node = {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {
                "name": name,
                "annotations": {
                    "kwok.x-k8s.io/node": "fake",
                    "node.alpha.kubernetes.io/ttl": "0",
                    # where metrics-server reads its kubelet's /metrics/resource (kwok serves it)
                    metrics.PATH_ANNOTATION: metrics.resource_path(name),
                },
                "labels": {
                    "kubernetes.io/hostname": name,
                    "kubernetes.io/os": "linux",
                    "type": "kwok",
                    **(labels or {}),
                },
            },
            "status": {
                "allocatable": {"cpu": cpu, "memory": memory, "pods": pods},
                "capacity": {"cpu": cpu, "memory": memory, "pods": pods},
            },
        }
        with self.api() as api:
            client.CoreV1Api(api).create_node(plain(node))

    def wait_nodes_ready(self, count: int, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        with self.api() as api:
            core = client.CoreV1Api(api)
            while time.monotonic() < deadline:
                ready = [
                    n
                    for n in core.list_node().items
                    if any(
                        c.type == "Ready" and c.status == "True" for c in n.status.conditions or []
                    )
                ]
                if len(ready) >= count:
                    return
                time.sleep(0.3)
        raise RuntimeError(f"fewer than {count} nodes Ready after {timeout}s:\n{self.logs('kwok')}")

    def service_account_kubeconfig(self, namespace: str, name: str, path: Path) -> Path:
        """A kubeconfig authenticating as ServiceAccount namespace/name (a TokenRequest token)."""
        with self.api() as api:
            answer: Any = client.CoreV1Api(api).create_namespaced_service_account_token(
                name, namespace, plain({"spec": {"expirationSeconds": 86400}})
            )
        doc = yaml.safe_load(Path(self.kubeconfig_path).read_text())
        doc["users"] = [{"name": "admin", "user": {"token": answer.status.token}}]
        path.write_text(yaml.safe_dump(doc))
        return path

    def delete_webhook_configuration(self, name: str) -> None:
        """So a test's webhook, once its server is stopped, is not called for the next tests'
        pods (failurePolicy Ignore would let them through, after a failed call each)."""
        with self.api() as api:
            try:
                client.AdmissionregistrationV1Api(api).delete_mutating_webhook_configuration(name)
            except client.ApiException as e:
                if e.status != 404:
                    raise

    def logs(self, *names: str, lines: int = 40) -> str:
        parts = []
        for name in names or tuple(self.procs):
            log = self.directory / f"{name}.log"
            text = log.read_text(errors="replace").splitlines()[-lines:] if log.exists() else []
            parts.append(f"--- {name} ---\n" + "\n".join(text))
        return "\n".join(parts)

    def stop(self) -> None:
        if self.kubelet is not None:
            self.kubelet.stop()
        for proc in reversed(list(self.procs.values())):
            if proc.poll() is None:
                os.killpg(proc.pid, 15)
        for proc in self.procs.values():
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        shutil.rmtree(self.directory / "etcd", ignore_errors=True)
