"""The patch metadata of a served kind, from the release's API schemas (schema.py): a cached
`path -> PatchMeta` lookup per (apiVersion, kind, release), for strategic merge patch and
server-side apply."""

from __future__ import annotations

import functools
from collections.abc import Callable

from app.simulator.apiserver import schema
from app.simulator.apiserver.schema import PatchMeta
from app.simulator.apiserver.version import KubeVersion

Lookup = Callable[[tuple[str, ...]], PatchMeta]


def _no_meta(_path: tuple[str, ...]) -> PatchMeta:
    return PatchMeta()


@functools.lru_cache(maxsize=128)
def lookup(api_version: str, kind: str, minor: int | None = None) -> Lookup:
    """How each field of `kind` merges (fields as name paths, lists crossed implicitly); a kind
    the schemas do not have merges every map and replaces every list."""
    defs = schema.definitions(minor if minor is not None else KubeVersion.parse(None).minor)
    group, _, version = api_version.rpartition("/")
    root = defs.name_for(group, version, kind)
    if root is None:
        return _no_meta

    @functools.lru_cache(maxsize=8192)
    def meta(path: tuple[str, ...]) -> PatchMeta:
        return defs.patch_meta(root, path)

    return meta
