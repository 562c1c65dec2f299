"""How the CLI names a namespaced object: `NAMESPACE/NAME` (`shop/catalog`, as kubectl and
`--ref` write it), everywhere one is taken; the older form, two words `NAMESPACE NAME`, still
works. `*` is the namespace of a cluster default policy (`'*/default'`)."""

from __future__ import annotations

from collections.abc import Sequence

import click

METAVAR = "NAMESPACE/NAME"


def namespaced_name(value: str) -> tuple[str, str]:
    """`NAMESPACE/NAME` split in two; a usage error saying the form otherwise."""
    namespace, _, name = value.partition("/")
    if not namespace or not name or "/" in name:
        raise click.BadParameter(f"{value!r}: expected NAMESPACE/NAME, e.g. shop/frontend")
    return namespace, name


def object_ref(words: Sequence[str]) -> tuple[str, str]:
    """The words a command was given for one object: `NAMESPACE/NAME`, or `NAMESPACE NAME`."""
    if len(words) == 1:
        return namespaced_name(words[0])
    if len(words) == 2 and "/" not in words[0] and "/" not in words[1]:
        namespace, name = words
        if namespace and name:
            return namespace, name
    given = " ".join(words) or "nothing"
    raise click.BadParameter(
        f"got {given!r}: expected NAMESPACE/NAME, e.g. shop/frontend (or NAMESPACE NAME)"
    )
