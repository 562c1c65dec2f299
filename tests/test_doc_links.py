"""The README stays a first page, and every relative link of the documents resolves to a file
(and to a heading of it when the link names one)."""

from __future__ import annotations

import pytest

from tests.support.markdown import ROOT, anchors, links, read

DOCUMENTS = sorted(
    ["README.md", "CONTRIBUTING.md", "benchmarks/README.md"]
    + [str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md")]
)


def test_the_readme_is_under_300_lines() -> None:
    assert len(read("README.md").splitlines()) < 300


def test_the_readme_links_every_reference_page() -> None:
    linked = {(ROOT / target.split("#")[0]).resolve() for target in links(read("README.md"))}
    pages = [ROOT / d for d in DOCUMENTS if d != "README.md"]
    assert [str(p.relative_to(ROOT)) for p in pages if p.resolve() not in linked] == []


@pytest.mark.parametrize("document", DOCUMENTS)
def test_every_relative_link_resolves(document: str) -> None:
    broken = []
    for target in links(read(document)):
        if "://" in target or target.startswith("mailto:"):
            continue
        path, _, anchor = target.partition("#")
        file = (ROOT / document).parent / path if path else ROOT / document
        if not file.exists():
            broken.append(f"{target}: no such file")
        elif anchor and file.suffix == ".md" and anchor not in anchors(file.read_text()):
            broken.append(f"{target}: no heading with that anchor")
    assert broken == []


def test_links_and_anchors_are_read_as_github_reads_them() -> None:
    text = (
        "# A title\n\n## `code` and: more\n\n[x](#code-and-more) [y](missing.md) `[c](span.md)`\n"
        "```\n[z](in-code.md)\n## not a heading\n```\n"
    )
    assert links(text) == ["#code-and-more", "missing.md"]
    assert anchors(text) == {"a-title", "code-and-more"}
