"""Imports point down the stack: hw(L0) <- driver <- runtime <- cuda/hip <- libs <- framework(L5).

Source of truth for the layer table. Parses every .py under src/strata with `ast` and fails on any
import of a higher layer, naming file:line. Leaves (config, errors, trace) may be imported by
anyone and may import only other leaves. A lazy import (inside a function, or under TYPE_CHECKING)
that breaks the order is allowed when its line, or the line above, carries a `# NOTE:` saying why;
those are listed as notes rather than failures.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = "strata"

# First component under `strata.` -> layer. Anything not listed (strata/__init__.py, strata/cli.py, ...)
# is the top-level framework surface, L5.
LAYERS: dict[str, int] = {
    "hw": 0,
    "driver": 1,
    "runtime": 2,
    "cuda": 3,
    "hip": 3,
    "storage": 3,  # cuFile's role: a CUDA library over the driver's storage DMA (nvidia-fs.ko's role is in L1)
    "libs": 4,
    "framework": 5,
    # torch.nn / torch.optim / torch.autograd's places: real packages over the framework (strata/_subpackage.py)
    "nn": 5,
    "optim": 5,
    "autograd": 5,
}
TOP = 5
LEAVES = frozenset({"config", "errors", "trace"})
LEAF = -1  # sentinel: importable by anyone


@dataclass(frozen=True)
class Finding:
    file: str
    line: int
    importer: str
    target: str
    importer_layer: int
    target_layer: int
    lazy: bool
    noted: bool

    def __str__(self) -> str:
        return (
            f"{self.file}:{self.line}: {self.importer} ({_describe(self.importer_layer)}) imports "
            f"{self.target} ({_describe(self.target_layer)}){' [lazy]' if self.lazy else ''}"
        )


def layer_of(module: str) -> int:
    """Layer of a dotted module name under `strata` (LEAF for leaves)."""
    parts = module.split(".")
    assert parts[0] == PACKAGE, module
    if len(parts) == 1:
        return TOP
    head = parts[1]
    if head in LEAVES:
        return LEAF
    return LAYERS.get(head, TOP)


def module_name(path: Path, src: Path = SRC) -> str:
    rel = path.relative_to(src).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def check_source(
    source: str, module: str, *, is_package: bool = False, file: str = "<string>"
) -> list[Finding]:
    """All imports in `source` (module `module`) that break the layer order, noted or not."""
    tree = ast.parse(source, filename=file)
    lines = source.splitlines()
    importer_layer = layer_of(module)
    package = module if is_package else module.rpartition(".")[0]
    findings: list[Finding] = []

    for node, lazy in _imports(tree):
        for target in _targets(node, package):
            if target.split(".")[0] != PACKAGE:
                continue
            target_layer = layer_of(target)
            if _allowed(importer_layer, target_layer):
                continue
            # The NOTE sits on the import's own line(s) or on a comment-only line just above it.
            window = lines[node.lineno - 1 : node.end_lineno or node.lineno]
            above = lines[node.lineno - 2].strip() if node.lineno >= 2 else ""
            noted = lazy and (any("# NOTE:" in ln for ln in window) or above.startswith("# NOTE:"))
            findings.append(
                Finding(file, node.lineno, module, target, importer_layer, target_layer, lazy, noted)
            )
    return findings


def check_tree(src: Path = SRC) -> list[Finding]:
    findings: list[Finding] = []
    for path in sorted((src / PACKAGE).rglob("*.py")):
        rel = str(path.relative_to(src.parent))
        findings += check_source(
            path.read_text(encoding="utf-8"),
            module_name(path, src),
            is_package=path.name == "__init__.py",
            file=rel,
        )
    return findings


# --- helpers ----------------------------------------------------------------------------------------


def _allowed(importer: int, target: int) -> bool:
    if target == LEAF:
        return True
    if importer == LEAF:
        return False  # leaves import only leaves
    return target <= importer


def _describe(layer: int) -> str:
    if layer == LEAF:
        return "leaf"
    names = [k for k, v in LAYERS.items() if v == layer]
    return f"L{layer} {'/'.join(names)}"


def _imports(tree: ast.AST) -> list[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Every import node with whether it is lazy (inside a function or an `if TYPE_CHECKING:`)."""
    found: list[tuple[ast.Import | ast.ImportFrom, bool]] = []

    def visit(node: ast.AST, lazy: bool) -> None:
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append((node, lazy))
            return
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            lazy = True
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.body:
                visit(stmt, True)
            for stmt in node.orelse:
                visit(stmt, lazy)
            return
        for child in ast.iter_child_nodes(node):
            visit(child, lazy)

    visit(tree, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _targets(node: ast.Import | ast.ImportFrom, package: str) -> list[str]:
    """Dotted modules an import statement reaches; `from strata import cuda` reaches strata.cuda."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if node.level:
        parts = package.split(".") if package else []
        base_parts = parts[: len(parts) - (node.level - 1)] if node.level > 1 else parts
        base = ".".join(base_parts)
        mod = f"{base}.{node.module}" if node.module else base
    else:
        mod = node.module or ""
    # Only the first component under `strata` decides the layer, so `from strata import X` is judged by X.
    if mod == PACKAGE:
        return [f"{PACKAGE}.{alias.name}" if alias.name != "*" else PACKAGE for alias in node.names]
    return [mod]


# --- tests ------------------------------------------------------------------------------------------


def test_no_upward_imports() -> None:
    findings = check_tree()
    notes = [f for f in findings if f.noted]
    errors = [f for f in findings if not f.noted]
    for f in notes:
        print(f"note (allowed by # NOTE:): {f}")
    assert not errors, (
        "upward imports (hw 0 < driver 1 < runtime 2 < cuda/hip 3 < libs 4 < framework 5; "
        "leaves import only leaves):\n"
        + "\n".join(map(str, errors))
        + ("\nnotes:\n" + "\n".join(map(str, notes)) if notes else "")
    )


def test_tree_is_scanned() -> None:
    # Guard against the checker silently passing because it found nothing.
    assert (SRC / PACKAGE / "errors.py").is_file()
    assert module_name(SRC / PACKAGE / "hw" / "ptx" / "parser.py") == "strata.hw.ptx.parser"
    assert module_name(SRC / PACKAGE / "cuda" / "__init__.py") == "strata.cuda"


@pytest.mark.parametrize(
    ("module", "source", "expected"),
    [
        # absolute upward import from L0 into L3
        ("strata.hw.engine", "import strata.cuda.compiler\n", ["strata.cuda.compiler"]),
        ("strata.hw.engine", "from strata.cuda import compile\n", ["strata.cuda"]),
        ("strata.hw.engine", "from strata import cuda\n", ["strata.cuda"]),
        ("strata.hw.engine", "import strata\n", ["strata"]),
        # relative upward imports
        ("strata.hw.ptx.parser", "from ...runtime import queue\n", ["strata.runtime"]),
        ("strata.driver.device", "from .. import libs\n", ["strata.libs"]),
        ("strata.cuda.module", "from ..framework.tensor import Tensor\n", ["strata.framework.tensor"]),
        # a leaf may not reach into a layer
        ("strata.trace.events", "from strata.hw.counters import Counters\n", ["strata.hw.counters"]),
        ("strata.config", "from strata import runtime\n", ["strata.runtime"]),
        # a lazy import without a NOTE still counts
        ("strata.hw.engine", "def f():\n    from strata.cuda import x\n", ["strata.cuda"]),
        # downward, same-layer and leaf imports are fine
        ("strata.cuda.module", "from strata.hw.ptx import parser\nfrom strata.runtime import q\n", []),
        ("strata.cuda.module", "from strata.hip import x\nfrom ..errors import CudaError\n", []),
        ("strata.hw.engine", "from strata import config, errors\nfrom strata.trace import record\n", []),
        ("strata.trace.events", "from strata.config import settings\nfrom ..storage import x\n", ["strata.storage"]),
        ("strata.storage.cufile", "from strata.driver import device\nfrom strata.cuda import memcpy\n", []),
        ("strata.cli", "from strata.framework import nn\nimport strata.cuda\nimport numpy\n", []),
        ("strata.hw.ptx.parser", "from . import ir\nfrom .ir import Module\n", []),
    ],
)
def test_checker_on_synthetic_source(module: str, source: str, expected: list[str]) -> None:
    findings = check_source(source, module)
    assert [f.target for f in findings if not f.noted] == expected


def test_checker_relative_import_from_package_init() -> None:
    # In strata/hw/__init__.py, `from . import x` is strata.hw.x and `from .. import cuda` is strata.cuda.
    found = check_source("from . import memory\nfrom .. import cuda\n", "strata.hw", is_package=True)
    assert [(f.target, f.line) for f in found] == [("strata.cuda", 2)]


def test_note_allows_lazy_upward_import_but_reports_it() -> None:
    src = (
        "def report():\n"
        "    from strata.cuda import x  # NOTE: only for pretty-printing; avoids a cycle at import time\n"
        "    # NOTE: the runtime registers itself lazily\n"
        "    import strata.runtime\n"
        "    import strata.libs\n"
    )
    found = check_source(src, "strata.hw.engine", file="src/strata/hw/engine.py")
    assert [(f.target, f.noted, f.line) for f in found] == [
        ("strata.cuda", True, 2),
        ("strata.runtime", True, 4),
        ("strata.libs", False, 5),
    ]
    assert str(found[2]) == (
        "src/strata/hw/engine.py:5: strata.hw.engine (L0 hw) imports strata.libs (L4 libs) [lazy]"
    )


def test_note_does_not_excuse_top_level_upward_import() -> None:
    found = check_source("from strata.cuda import x  # NOTE: please\n", "strata.hw.engine")
    assert [f.noted for f in found] == [False]


def test_type_checking_import_is_lazy() -> None:
    src = (
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from strata.runtime import Queue  # NOTE: annotation only\n"
        "    from strata.libs import blas\n"
    )
    found = check_source(src, "strata.driver.device")
    assert [(f.target, f.lazy, f.noted) for f in found] == [
        ("strata.runtime", True, True),
        ("strata.libs", True, False),
    ]


# --- no import cycles inside the framework (issue 16) ------------------------------------------------
# Imports at run time, top-level and function-local alike, must form a DAG among strata.framework's
# modules: a function-local import only delays a cycle, it does not remove it. Imports under
# `if TYPE_CHECKING:` never run and are left out. An import of an ancestor package (a submodule's
# `from strata.framework.nn import Module`) is not an edge: Python has loaded the package before it.

def runtime_imports(source: str, module: str, *, is_package: bool = False, known: frozenset[str]) -> set[str]:
    """The modules of `known` that `source` (module `module`) imports when it runs."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node.test):
            for stmt in node.orelse:
                visit(stmt)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            for target in _targets(node, package):
                names = [a.name for a in node.names] if isinstance(node, ast.ImportFrom) else []
                subs = [f"{target}.{n}" for n in names if f"{target}.{n}" in known]
                for t in subs or [target]:
                    if t in known and t != module and not module.startswith(t + "."):
                        found.add(t)
            return
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph(root: str = "strata.framework", src: Path = SRC) -> dict[str, set[str]]:
    """module -> the modules under `root` it imports at run time."""
    paths = {module_name(p, src): p for p in sorted((src / Path(*root.split("."))).rglob("*.py"))}
    known = frozenset(paths)
    return {m: runtime_imports(p.read_text(encoding="utf-8"), m, is_package=p.name == "__init__.py", known=known)
            for m, p in paths.items()}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle [a, b, ..., a], or None for a DAG (iterative depth-first search)."""
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for start in sorted(graph):
        if state.get(start):
            continue
        path: list[str] = [start]
        stack = [iter(sorted(graph[start]))]
        state[start] = 1
        while stack:
            nxt = next(stack[-1], None)
            if nxt is None:
                state[path.pop()] = 2
                stack.pop()
            elif state.get(nxt) == 1:
                return path[path.index(nxt):] + [nxt]
            elif not state.get(nxt):
                state[nxt] = 1
                path.append(nxt)
                stack.append(iter(sorted(graph.get(nxt, ()))))
    return None


def test_framework_never_imports_the_top_level_packages() -> None:
    # strata.nn / strata.optim / strata.autograd import the framework and then answer with its modules: a
    # framework module importing them (at run time) would re-enter the framework while it initialises.
    tops = frozenset(module_name(p) for name in ("nn", "optim", "autograd")
                     for p in (SRC / PACKAGE / name).rglob("*.py"))
    assert {"strata.nn", "strata.optim", "strata.autograd", "strata.autograd.functional"} <= tops
    found = {m: hits for m, p in ((module_name(p), p) for p in sorted((SRC / PACKAGE / "framework").rglob("*.py")))
             if (hits := runtime_imports(p.read_text(encoding="utf-8"), m, is_package=p.name == "__init__.py",
                                         known=tops))}
    assert not found, f"framework modules importing strata.nn/optim/autograd: {found}"
    assert runtime_imports("from strata import nn\n", "strata.framework.x", known=tops) == {"strata.nn"}


def test_framework_imports_form_a_dag() -> None:
    graph = import_graph()
    assert "strata.framework.ops" in graph["strata.framework.tensor_ops"]  # the graph is not empty
    cycle = find_cycle(graph)
    assert cycle is None, "import cycle in the framework (function-local imports included): " + " -> ".join(cycle)


def test_cycle_finder_finds_function_local_cycles() -> None:
    known = frozenset({"strata.framework.a", "strata.framework.b", "strata.framework.c"})
    a = runtime_imports("from strata.framework import b\n", "strata.framework.a", known=known)
    b = runtime_imports("def f():\n    from strata.framework import c\n", "strata.framework.b", known=known)
    c = runtime_imports("import strata.framework.a\n", "strata.framework.c", known=known)
    assert (a, b, c) == ({"strata.framework.b"}, {"strata.framework.c"}, {"strata.framework.a"})
    graph = {"strata.framework.a": a, "strata.framework.b": b, "strata.framework.c": c}
    assert find_cycle(graph) == ["strata.framework.a", "strata.framework.b", "strata.framework.c",
                                 "strata.framework.a"]
    # the same import under TYPE_CHECKING never runs: no edge, no cycle
    c2 = runtime_imports("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    import strata.framework.a\n",
                         "strata.framework.c", known=known)
    assert c2 == set() and find_cycle({**graph, "strata.framework.c": c2}) is None
    # an ancestor package is no edge
    nn = frozenset({"strata.framework.nn", "strata.framework.nn.modules"})
    assert runtime_imports("from strata.framework.nn import Module\n", "strata.framework.nn.modules", known=nn) == set()
