"""Builds the real Kubernetes programs the real-cluster tests run, from Go modules, into a cache.

Each folder beside this file is a small Go module (test tooling only: nothing of it ships) whose
`tool` directives name the programs it builds:

- kube, kube133: kube-apiserver, kube-controller-manager, kube-scheduler, from k8s.io/kubernetes,
  the newest release and 1.33, the oldest rightsizer supports (their go.mod are written by
  tools/gomod.py);
- etcd: etcd, from go.etcd.io/etcd/server/v3;
- kwok: kwok (fake nodes and pod lifecycle, emulated kubelet metrics) and its stage, metric and
  resource-usage files, from sigs.k8s.io/kwok;
- metrics-server: metrics-server (the metrics.k8s.io API), from sigs.k8s.io/metrics-server;
- vpa: the Vertical Pod Autoscaler's recommender, updater and admission-controller, and its CRDs,
  from k8s.io/autoscaler/vertical-pod-autoscaler (the peer rightsizer is compared with,
  tests/realkube/vpa.py).

kwok, metrics-server and vpa are modules of their own because their k8s.io versions differ from
the release's. Binaries go to `$RIGHTSIZER_TOOLS_CACHE` (default `~/.cache/rightsizer/tools`), one
folder per module named by a hash of its go.mod and go.sum, so a changed pin builds anew and an
unchanged one is reused; nothing built is ever written into the checkout. go.sum pins every
module's hash: the Go toolchain refuses a download that does not match it.

    python3 tools/build.py            # builds what is missing, prints the folder of each module
    python3 tools/build.py --check    # exit 1 (and say what) if something is not built yet

Only the standard library: `make test` runs it before the virtualenv's tests.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

TOOLS = Path(__file__).resolve().parent
MODULES = ("etcd", "kube", "kube133", "kwok", "metrics-server", "vpa")


def cache_root() -> Path:
    default = Path.home() / ".cache" / "rightsizer" / "tools"
    return Path(os.environ.get("RIGHTSIZER_TOOLS_CACHE") or default)


def tools_of(module: str) -> list[str]:
    gomod = (TOOLS / module / "go.mod").read_text()
    block = re.search(r"^tool \(\n(.*?)^\)", gomod, re.MULTILINE | re.DOTALL)
    names = block.group(1).split() if block else re.findall(r"^tool (\S+)$", gomod, re.MULTILINE)
    if not names:
        raise SystemExit(f"error: tools/{module}/go.mod names no tool")
    return names


def required_version(module: str, path: str) -> str:
    found = re.search(
        rf"^\s*(?:require\s+)?{re.escape(path)} (v\S+)",
        (TOOLS / module / "go.mod").read_text(),
        re.MULTILINE,
    )
    return found.group(1) if found else "unknown"


def binary_name(package: str) -> str:
    """The name of a main package's binary (etcd's package is the module `server/v3`)."""
    return "etcd" if package.startswith("go.etcd.io/etcd/server") else package.rsplit("/", 1)[1]


def out_dir(module: str) -> Path:
    digest = hashlib.sha256()
    for name in ("go.mod", "go.sum"):
        digest.update((TOOLS / module / name).read_bytes())
    return cache_root() / f"{module}-{digest.hexdigest()[:16]}"


def ldflags(module: str) -> str:
    """The version each program reports (kube-apiserver's /version, `kwok --version`)."""
    if not module.startswith("kube"):
        return "-s -w"
    version = required_version(module, "k8s.io/kubernetes")
    major, minor = version.removeprefix("v").split(".")[:2]
    pkg = "k8s.io/component-base/version"
    flags = [
        f"-X {pkg}.gitVersion={version}",
        f"-X {pkg}.gitMajor={major}",
        f"-X {pkg}.gitMinor={minor}",
        f"-X {pkg}.gitTreeState=clean",
    ]
    return "-s -w " + " ".join(flags)


# Files of a module's own source copied into folders beside its binaries: (the Go module, the
# folder of its source they are in, {folder: entries}), an entry a file or a folder of YAML files.
# kwok's, from its kustomize folder:
# - stages (the lifecycle it plays): nodes turn Ready and keep a Lease renewed, so the node
#   lifecycle controller never marks them NotReady; pods turn Running, then Succeeded or gone;
# - metrics: the Metric emulating each node's kubelet `/metrics/resource` (served at
#   /metrics/nodes/{nodeName}/metrics/resource), and the ClusterResourceUsage giving every pod
#   the usage its kwok.x-k8s.io/usage-cpu and usage-memory annotations name (1m and 1Mi without);
# - crds: the ResourceUsage CRD (per-pod usage the tests set, read by kwok's --enable-crds; the
#   Metric and ClusterResourceUsage above are fixed, so they are --config files: kwok refuses a
#   kind given both ways).
# VPA's: the CRDs of VerticalPodAutoscaler and VerticalPodAutoscalerCheckpoint its release ships
# (deploy/vpa-v1-crd-gen.yaml, generated from its Go types by its own hack/ scripts).
MODULE_FILES: dict[str, tuple[str, str, dict[str, tuple[str, ...]]]] = {
    "kwok": (
        "sigs.k8s.io/kwok",
        "kustomize",
        {
            "stages": ("stage/node/fast", "stage/node/heartbeat-with-lease", "stage/pod/fast"),
            "metrics": ("metrics/resource", "metrics/usage"),
            "crds": ("crd/bases/kwok.x-k8s.io_resourceusages.yaml",),
        },
    ),
    "vpa": (
        "k8s.io/autoscaler/vertical-pod-autoscaler",
        "deploy",
        {"crds": ("vpa-v1-crd-gen.yaml",)},
    ),
}


def module_source(module: str, path: str) -> Path:
    """Where the Go module `path`, at the version tools/<module>/go.mod pins, is unpacked."""
    out = subprocess.run(
        ["go", "mod", "download", "-json", path],
        check=True,
        capture_output=True,
        text=True,
        cwd=TOOLS / module,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
    ).stdout
    return Path(json.loads(out)["Dir"])


def copy_module_files(module: str, directory: Path) -> None:
    """Each missing folder of MODULE_FILES[module], written whole or not at all (a folder built
    before a folder was added to the list gets it without a rebuild)."""
    path, under, folders = MODULE_FILES.get(module, ("", "", {}))
    missing = [name for name in folders if not (directory / name).is_dir()]
    if not missing:
        return
    root = module_source(module, path) / under
    for name in missing:
        partial = directory / f"{name}.partial"
        shutil.rmtree(partial, ignore_errors=True)
        partial.mkdir()
        for entry in folders[name]:
            source = root / entry
            files = [source] if source.is_file() else sorted(source.glob("*.yaml"))
            for file in files:
                if file.name != "kustomization.yaml":
                    shutil.copyfile(file, partial / file.name)
        partial.rename(directory / name)


def built(module: str) -> bool:
    directory = out_dir(module)
    files = [directory / binary_name(p) for p in tools_of(module)]
    folders = [directory / name for name in MODULE_FILES.get(module, ("", "", {}))[2]]
    return all(f.is_file() for f in files) and all(f.is_dir() for f in folders)


def binaries_built(module: str) -> bool:
    return all((out_dir(module) / binary_name(p)).is_file() for p in tools_of(module))


def build(module: str) -> Path:
    directory = out_dir(module)
    if binaries_built(module):
        copy_module_files(module, directory)
    if built(module):
        return directory
    partial = directory.with_name(directory.name + ".partial")
    partial.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    names = ", ".join(binary_name(p) for p in tools_of(module))
    print(
        f"building {names} (tools/{module}) into {directory}",
        file=sys.stderr,
        flush=True,
    )
    subprocess.run(
        [
            "go",
            "build",
            "-trimpath",
            "-ldflags",
            ldflags(module),
            "-o",
            f"{partial}/",
            *tools_of(module),
        ],
        check=True,
        cwd=TOOLS / module,
        env={**os.environ, "GOFLAGS": "-mod=readonly", "GOTOOLCHAIN": "local"},
    )
    if module == "etcd":  # go names the binary after the package's folder, `server`
        (partial / "server").rename(partial / "etcd")
    copy_module_files(module, partial)
    partial.rename(directory)
    print(
        f"built tools/{module} in {time.monotonic() - started:.0f} s", file=sys.stderr, flush=True
    )
    return directory


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        missing = [m for m in MODULES if not built(m)]
        for module in missing:
            print(f"not built: tools/{module} (run python3 tools/build.py)", file=sys.stderr)
        return 1 if missing else 0
    if argv:
        print("usage: python3 tools/build.py [--check]", file=sys.stderr)
        return 2
    for module in MODULES:
        print(f"{module}={build(module)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
