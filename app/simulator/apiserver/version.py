"""Which Kubernetes version the simulated API server is (`/version`), and so which rules it applies.

The resize subresource's rules differ between releases (see endpoints/resize.py); every
version-dependent rule asks `KubeVersion.at_least`. Only the releases whose rules are modelled
are accepted: a version the simulator cannot be faithful to is refused, not guessed.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

DEFAULT_VERSION = "1.33"
SUPPORTED_MINORS = range(33, 37)  # 1.33 .. 1.36: the releases whose resize rules are modelled
_FORMAT = re.compile(r"^v?1\.(\d+)(?:\.(\d+))?$")


@dataclass(frozen=True, order=True)
class KubeVersion:
    minor: int
    patch: int = 1

    @classmethod
    def parse(cls, text: str | None) -> KubeVersion:
        """ "1.34", "v1.34.2" -> KubeVersion; ValueError for anything else or unsupported."""
        m = _FORMAT.match(str(text if text is not None else DEFAULT_VERSION).strip())
        if m is None:
            raise ValueError(f"Kubernetes version {text!r}: expected 1.MINOR or 1.MINOR.PATCH")
        minor, patch = int(m.group(1)), int(m.group(2) or 1)
        if minor not in SUPPORTED_MINORS:
            raise ValueError(
                f"Kubernetes version {text!r}: the simulator models 1.{SUPPORTED_MINORS[0]} to "
                f"1.{SUPPORTED_MINORS[-1]}"
            )
        return cls(minor, patch)

    def at_least(self, minor: int) -> bool:
        return self.minor >= minor

    @property
    def pod_level_resize(self) -> bool:
        """InPlacePodLevelResourcesVerticalScaling (KEP-5419) with the release's default gates:
        alpha, off, in 1.35; beta, on, from 1.36 (pkg/features/kube_features.go)."""
        return self.at_least(36)

    def declared_features(self) -> list[str]:
        """What the simulated kubelets of this release declare in a node's
        status.declaredFeatures (NodeDeclaredFeatures, beta and on from 1.36): of the features
        the simulator's rules read, InPlacePodLevelResourcesVerticalScaling where it is on
        (k8s.io/component-helpers nodedeclaredfeatures/features/inplacepodresize)."""
        return ["InPlacePodLevelResourcesVerticalScaling"] if self.pod_level_resize else []

    def document(self) -> dict[str, str]:
        """The body of GET /version, as kube-apiserver serves it."""
        return {
            "major": "1",
            "minor": str(self.minor),
            "gitVersion": f"v1.{self.minor}.{self.patch}-sim",
            "platform": "linux/amd64",
            "goVersion": "go1.24",
            "compiler": "gc",
            "gitCommit": "",
            "gitTreeState": "clean",
            "buildDate": "2025-01-01T00:00:00Z",
        }
