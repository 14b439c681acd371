"""The user docs stand alone: they never point into the developers' reference folder (`../shared`),
which users don't have, nor cite its files by name; the facts are carried into the docs themselves."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
DOCS = sorted([REPO / "README.md", REPO / "ARCHITECTURE.md", *(REPO / "docs").glob("*.md")])
# the reference folder, and its files by name (docs/amd.md is ours: only a path into reference/ counts)
FORBIDDEN = re.compile(r"\.\./shared|shared/reference|reference/(numbers|apis|amd|cuda-programs)\.md|"
                       r"\bnumbers\.md|\bapis\.md|cuda-programs\.md|STYLE\.md")


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_doc_does_not_point_into_the_reference_folder(doc: Path) -> None:
    hits = [f"{doc.name}:{i}: {line.strip()}" for i, line in enumerate(doc.read_text().splitlines(), 1)
            if FORBIDDEN.search(line)]
    assert not hits, "docs must state the facts themselves:\n" + "\n".join(hits)
