"""The Python examples in the user docs run as written (README and docs/*.md)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["docs/cuda.md", "docs/runtime.md", "docs/blas.md", "docs/solver.md", "docs/dnn.md", "docs/libs.md",
         "docs/framework.md", "docs/trace.md", "docs/storage.md", "docs/faults.md", "docs/textures.md",
         "docs/device-runtime.md", "docs/cooperative.md", "docs/headers.md", "docs/mbarrier.md"]


def examples(page: str) -> list[str]:
    return re.findall(r"```python\n(.*?)```", (ROOT / page).read_text(), flags=re.S)


@pytest.mark.parametrize("page", PAGES)
def test_examples_run(page: str) -> None:
    blocks = examples(page)
    assert blocks, f"{page} has no python example"
    for code in blocks:
        exec(compile(code, page, "exec"), {"__name__": "__doc_example__"})
