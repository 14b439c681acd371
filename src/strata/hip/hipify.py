"""hipify: translate CUDA C++ source to HIP, driven by one data table (`cuda2hip.csv`, next to this file).

What it does, in the spirit of AMD's hipify-perl (docs/hipify.md has the details and the differences):
identifiers in code are renamed by whole-word lookup in the table (comments and string literals are left
alone, `hipify_lexer`); `#include <cuda_runtime.h>` and friends get their HIP headers; kernel launches
`kern<<<grid, block, shmem, stream>>>(args)` become `hipLaunchKernelGGL(kern, grid, block, shmem, stream, args)`
with missing `shmem`/`stream` filled with 0; each use of a name HIP lacks, or that CUDA or HIP deprecated, and
each CUDA-looking name the table does not know, gives a warning with its line number; and a report counts
what was converted, by name, category and API (`hipify_report`).

Example:
    >>> out, report = hipify('''#include <cuda_runtime.h>
    ... __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }
    ... int main() { float* d; cudaMalloc(&d, 64);  // cudaMalloc stays in comments
    ...   k<<<1, 16>>>(d); cudaThreadSynchronize(); return 0; }''')
    >>> print(out)
    #include <hip/hip_runtime.h>
    __global__ void k(float* x) { x[threadIdx.x] = 1.0f; }
    int main() { float* d; hipMalloc(&d, 64);  // cudaMalloc stays in comments
      hipLaunchKernelGGL(k, 1, 16, 0, 0, d); hipDeviceSynchronize(); return 0; }
    >>> report.converted, [(w.line, w.kind) for w in report.warnings]
    (4, [(4, 'deprecated_cuda')])
"""

from __future__ import annotations

import csv
import re
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from strata.hip.hipify_lexer import Scan, scan
from strata.hip.hipify_report import HipifyReport

TABLE_PATH = Path(__file__).with_name("cuda2hip.csv")

SUPPORT = ("full", "unsupported", "deprecated_cuda", "deprecated_hip", "removed_cuda")
# hipify-perl's statistics buckets (its @statNames), the allowed values of the table's category column.
CATEGORIES = (
    "error", "init", "version", "device", "context", "module", "library", "memory", "virtual_memory",
    "ordered_memory", "multicast", "unified", "stream", "event", "external_resource", "stream_memory", "execution",
    "graph", "occupancy", "texture", "surface", "tensor", "peer", "graphics", "driver_entry_point", "cpp",
    "coredump", "driver_interact", "profiler", "openGL", "D3D9", "D3D10", "D3D11", "VDPAU", "EGL", "thread",
    "complex", "device_library", "device_function", "device_type", "include", "include_cuda_main_header",
    "include_cuda_main_header_v2", "type", "literal", "numeric_literal", "define", "extern_shared", "kernel_launch",
)
# APIs whose HIP side is a HIP library that strata's HIP face does not provide (hipify still translates to it).
LIBRARY_APIS = {"blas": "hipBLAS", "rand": "hipRAND", "fft": "hipFFT", "dnn": "MIOpen", "cub": "hipCUB"}
APIS = ("runtime", "driver", "rtc", "complex", "device", *LIBRARY_APIS)
COLUMNS = ("cuda", "hip", "category", "api", "support", "face", "since", "note")
INCLUDE_CATEGORIES = ("include", "include_cuda_main_header", "include_cuda_main_header_v2")

LAUNCH_MACRO = "hipLaunchKernelGGL"
SYMBOL_MACRO = "HIP_SYMBOL"
# Runtime calls that take a __device__/__constant__ symbol, and which argument it is: hipify wraps it in
# HIP_SYMBOL(...) as hipify-perl does (on AMD's compiler HIP_SYMBOL takes the symbol's address).
SYMBOL_ARGUMENT = {"cudaMemcpyToSymbol": 0, "cudaMemcpyToSymbolAsync": 0, "cudaMemcpyFromSymbol": 1,
                   "cudaMemcpyFromSymbolAsync": 1, "cudaGetSymbolAddress": 1, "cudaGetSymbolSize": 1}
TEMPLATE_KERNEL_MACRO = "HIP_KERNEL_NAME"
MAIN_HEADER = "hip/hip_runtime.h"

_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_CUDA_LOOKING = re.compile(r"(?:cuda|cublas|cudnn|cufft)[A-Z]\w*|curand[A-Z_]\w*")
_CONFIG_TOKEN = re.compile(r">>>|[()\[\]{},]")
_PAREN = re.compile(r"[()]")
_SYMBOL_CALL = re.compile(r"cuda(?:Memcpy(?:To|From)Symbol(?:Async)?|GetSymbol(?:Address|Size))\s*\(")
_CUDA_HEADER = re.compile(r"^(?:cu|nv|cublas|cudnn|cufft|curand|cusparse|cusolver)\w*\.(?:h|hpp|cuh)$")


@dataclass(frozen=True, slots=True)
class Entry:
    """One row of `cuda2hip.csv` (see the column notes at the top of that file)."""

    cuda: str
    hip: str
    category: str
    api: str
    support: str
    face: str  # "yes" | "no" | "" (see the column notes)
    since: str
    note: str

    @property
    def library(self) -> str | None:
        """The HIP library that defines `hip` when it is not HIP proper (hipBLAS, MIOpen, ...), else None."""
        return LIBRARY_APIS.get(self.api)

    @property
    def is_header(self) -> bool:
        """True for `#include` path rows."""
        return self.category in INCLUDE_CATEGORIES


@dataclass(frozen=True)
class Table:
    """The loaded table: identifier rows and header rows, keyed by their CUDA name."""

    identifiers: dict[str, Entry]
    headers: dict[str, Entry]

    def __len__(self) -> int:
        return len(self.identifiers) + len(self.headers)

    def __iter__(self):  # noqa: ANN204 - a plain iterator over Entry
        yield from self.identifiers.values()
        yield from self.headers.values()


def load_table(path: str | Path | None = None) -> Table:
    """Read and validate the CUDA -> HIP table (by default the packaged `cuda2hip.csv`; cached).

    Args:
        path: another table in the same format, e.g. a user's extension of the packaged one.

    Returns:
        The `Table`.

    Raises:
        ValueError: a row breaks the format (bad column count, unknown support/category/api, a non-identifier
            CUDA name outside the include rows, a duplicate, a HIP name that contradicts the support flag, or a
            face flag where none belongs); the message names the file and line.
    """
    return _load_table(str(Path(path) if path is not None else TABLE_PATH))


@lru_cache(maxsize=8)
def _load_table(path: str) -> Table:
    identifiers: dict[str, Entry] = {}
    headers: dict[str, Entry] = {}
    with open(path, newline="", encoding="utf-8") as f:
        lines = [(n, line) for n, line in enumerate(f, 1) if line.strip() and not line.lstrip().startswith("#")]
    rows = csv.reader(line for _, line in lines)
    header = next(rows, None)
    if header != list(COLUMNS):
        raise ValueError(f"[hipify] {path}: the first row must be the column header, got {header}")
    for (lineno, _), row in zip(lines[1:], rows):
        where = f"[hipify] {path}:{lineno}"
        if len(row) != len(COLUMNS):
            raise ValueError(f"{where}: expected {len(COLUMNS)} columns, got {len(row)}: {row}")
        e = Entry(*(c.strip() for c in row))
        if e.support not in SUPPORT:
            raise ValueError(f"{where}: support must be one of {SUPPORT}, got {e.support!r}")
        if e.category not in CATEGORIES:
            raise ValueError(f"{where}: category must be a hipify-perl statName, got {e.category!r}")
        if e.api not in APIS:
            raise ValueError(f"{where}: api must be one of {APIS}, got {e.api!r}")
        if (e.support == "unsupported") != (e.hip == "") and not (e.is_header and e.support == "full"):
            raise ValueError(f"{where}: hip must be empty exactly when support is 'unsupported', got {e.hip!r}")
        produced = e.hip != "" and e.support != "unsupported"
        if e.face not in (("yes", "no") if produced and e.library is None else ("",)):
            raise ValueError(f"{where}: face must be yes/no for a HIP-proper name it produces, else empty; "
                             f"got {e.face!r}")
        if not e.is_header and (not _IDENTIFIER.fullmatch(e.cuda) or (e.hip and not _IDENTIFIER.fullmatch(e.hip))):
            raise ValueError(f"{where}: {e.cuda!r} -> {e.hip!r} is not an identifier mapping")
        target = headers if e.is_header else identifiers
        if e.cuda in target:
            raise ValueError(f"{where}: duplicate CUDA name {e.cuda!r}")
        target[e.cuda] = e
    return Table(identifiers=identifiers, headers=headers)


def hipify(
    source: str, *, filename: str = "<source>", launch_syntax: str = "hip", table: Table | None = None
) -> tuple[str, HipifyReport]:
    """Translate CUDA C++ source to HIP.

    Args:
        source: the CUDA source text.
        filename: the name warnings and the report show.
        launch_syntax: "hip" rewrites `<<<...>>>` launches to `hipLaunchKernelGGL(...)`; "cuda" keeps them
            (HIP's compilers accept both; hipify-perl's -cuda-kernel-execution-syntax).
        table: another table from `load_table(path)`; default the packaged one.

    Returns:
        (hip_source, report). Warnings are in `report.warnings` (line numbers refer to `source`).

    Raises:
        ValueError: `launch_syntax` is neither "hip" nor "cuda".
    """
    if launch_syntax not in ("hip", "cuda"):
        raise ValueError(f"[hipify] launch_syntax must be 'hip' or 'cuda', got {launch_syntax!r}")
    t0 = time.perf_counter()
    table = table if table is not None else load_table()
    s = scan(source)
    report = HipifyReport(filename=filename, total_bytes=len(source.encode()), total_lines=_count_lines(source))
    edits: list[tuple[int, int, str]] = []
    words = set(_IDENTIFIER.findall(s.masked))
    _rename_identifiers(s, words, table, edits, report)
    main_header = _rewrite_includes(s, table, edits, report)
    if launch_syntax == "hip":
        _rewrite_launches(s, edits, report)
    _wrap_symbols(s, edits, report)
    _warn_unknown(s, words, table, report)
    out = _apply(source, edits)
    main_header = main_header or any(d.path == MAIN_HEADER for d in s.includes)
    if not main_header and report.converted and "__global__" in s.masked:
        # hipify-perl adds the main header when it converted code with kernels but saw no CUDA main header.
        out = f'#include "{MAIN_HEADER}"\n' + out
    report.warnings.sort(key=lambda w: w.line)
    report.elapsed_s = time.perf_counter() - t0
    return out, report


def hipify_file(path: str | Path, *, launch_syntax: str = "hip") -> tuple[str, HipifyReport]:
    """`hipify` on a file's text, with the file's name in the report."""
    p = Path(path)
    return hipify(p.read_text(encoding="utf-8"), filename=str(p), launch_syntax=launch_syntax)


# --- the passes ----------------------------------------------------------------------------------------------


def _rename_identifiers(s: Scan, words: set[str], table: Table, edits: list[tuple[int, int, str]],
                        report: HipifyReport) -> None:
    """Rename every table identifier in code (`words`: the identifiers the code uses); count it; warn on the
    ones not fully supported."""
    present = words.intersection(table.identifiers)
    if not present:
        return
    # A regex over just the names this file uses, as a trie (ab(?:c|d)) whose first characters SRE can skip
    # to at C speed; the word boundary in front is checked here (a leading \b would defeat that skip).
    names = re.compile(_trie_pattern(present) + r"\b")
    hits: Counter[str] = Counter()
    masked = s.masked
    for m in names.finditer(masked):
        at = m.start()
        if at and (masked[at - 1].isalnum() or masked[at - 1] == "_"):
            continue
        name = m.group()
        e = table.identifiers[name]
        if e.support != "full":
            line = s.line_of(m.start())
            report.warn(line, e.support, e.cuda, _message(e), converted=e.support != "unsupported")
            if e.support == "unsupported":
                continue
        hits[name] += 1
        if e.hip != name:
            edits.append((m.start(), m.end(), e.hip))
            report.changed_lines.add(s.line_of(m.start()))
    for name, n in hits.items():
        e = table.identifiers[name]
        report.count(e.cuda, e.hip, e.category, e.api, n=n, replaced_bytes=len(e.hip) * n if e.hip != name else 0)


def _trie_pattern(words: set[str]) -> str:
    """A regex matching exactly `words`, factored by common prefixes (faster than a flat alternation)."""
    trie: dict[str, Any] = {}
    for w in words:
        node = trie
        for ch in w:
            node = node.setdefault(ch, {})
        node[""] = {}

    def emit(node: dict[str, Any]) -> str:
        branches = [re.escape(ch) + emit(child) for ch, child in sorted(node.items()) if ch]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:
            return ("(?:" + body + ")?") if len(branches) == 1 else body + "?"
        return body

    return emit(trie)


def _rewrite_includes(s: Scan, table: Table, edits: list[tuple[int, int, str]], report: HipifyReport) -> bool:
    """Rewrite CUDA header names in include directives; return whether a CUDA main header was converted."""
    main = False
    for d in s.includes:
        e = table.headers.get(d.path)
        if e is None:
            if _CUDA_HEADER.match(d.path.rsplit("/", 1)[-1]):
                report.warn(d.line, "unknown", d.path, f"unconverted CUDA header: {d.path} (not in the table)",
                            converted=False)
            continue
        if e.support == "unsupported":
            report.warn(d.line, e.support, e.cuda, _message(e), converted=False)
            continue
        if e.support != "full":
            report.warn(d.line, e.support, e.cuda, _message(e), converted=True)
        main = main or e.category.startswith("include_cuda_main_header")
        if e.hip:
            edits.append((d.path_start, d.path_end, e.hip))
            report.count(e.cuda, e.hip, e.category, e.api, line=d.line, replaced_bytes=len(e.hip))
        else:  # HIP needs no such header: drop the directive
            edits.append((d.start, d.end, ""))
            report.count(e.cuda, "", e.category, e.api, line=d.line, replaced_bytes=1)
    return main


def _rewrite_launches(s: Scan, edits: list[tuple[int, int, str]], report: HipifyReport) -> None:
    """Rewrite `kern<<<g, b[, shmem[, stream]]>>>(args)` as `hipLaunchKernelGGL(kern, g, b, shmem, stream, args)`."""
    text = s.masked
    start = 0
    while (open_at := text.find("<<<", start)) >= 0:
        start = open_at + 3
        line = s.line_of(open_at)
        launch = _parse_launch(s, open_at)
        if isinstance(launch, str):
            report.warn(line, "launch", "<<<>>>", f"kernel launch not rewritten: {launch}", converted=False)
            continue
        fill = ", 0" * (4 - launch.n_config)
        has_args = text[launch.paren_open + 1 : launch.paren_close].strip() != ""
        prefix = LAUNCH_MACRO + "(" + (TEMPLATE_KERNEL_MACRO + "(" if launch.templated else "")
        edits.append((launch.name_start, launch.name_start, prefix))
        edits.append((launch.name_end, launch.config_start, (")" if launch.templated else "") + ", "))
        edits.append((launch.config_end, launch.paren_open + 1, fill + (", " if has_args else "")))
        report.count("<<<>>>", LAUNCH_MACRO, "kernel_launch", "runtime", line=line, replaced_bytes=len(prefix))
        start = launch.paren_close + 1


@dataclass(frozen=True)
class _Launch:
    name_start: int  # the kernel expression: [name_start, name_end)
    name_end: int
    templated: bool
    config_start: int  # the <<<...>>> contents without surrounding blanks: [config_start, config_end)
    config_end: int
    paren_open: int  # the argument list's ( and )
    paren_close: int
    n_config: int


def _parse_launch(s: Scan, open_at: int) -> _Launch | str:
    """Locate the parts of the launch whose `<<<` is at `open_at`, or say why it cannot."""
    text, src = s.masked, s.source
    blank = " \t\r\n"  # real blanks only (checked in the source), so no comment is ever dropped
    # The kernel expression before <<<: an identifier, maybe qualified (ns::k), maybe with template arguments.
    name_end = open_at
    while name_end > 0 and src[name_end - 1] in blank:
        name_end -= 1
    j = name_end
    while j > 0 and text[j - 1] in blank:  # a comment between the kernel and <<< stays where it is
        j -= 1
    templated = j > 0 and text[j - 1] == ">"
    if templated:
        depth, j = 0, j - 1
        while j >= 0:
            depth += {">": 1, "<": -1}.get(text[j], 0)
            if depth == 0:
                break
            j -= 1
        if j < 0:
            return "unbalanced template arguments before <<<"
    while j > 0 and (text[j - 1].isalnum() or text[j - 1] in "_:"):
        j -= 1
    if not _IDENTIFIER.match(text, j):
        return "no kernel name before <<<"
    # The configuration, up to >>> at bracket depth 0, split on top-level commas.
    depth, commas, close_at = 0, 0, -1
    for t in _CONFIG_TOKEN.finditer(text, open_at + 3):
        c = t.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0 and c == ",":
            commas += 1
        elif depth == 0 and c == ">>>":
            close_at = t.start()
            break
    if close_at < 0:
        return "no closing >>>"
    if not 1 <= commas <= 3:
        return f"expected 2 to 4 launch parameters, got {commas + 1}"
    config_start, config_end = open_at + 3, close_at
    while src[config_start] in blank:
        config_start += 1
    while src[config_end - 1] in blank:
        config_end -= 1
    p = close_at + 3
    while p < len(text) and src[p] in blank:
        p += 1
    if p >= len(text) or text[p] != "(":
        return "no argument list after >>>"
    depth, q = 0, -1
    for t in _PAREN.finditer(text, p):
        depth += 1 if t.group() == "(" else -1
        if depth == 0:
            q = t.start()
            break
    if q < 0:
        return "unbalanced argument list"
    return _Launch(j, name_end, templated, config_start, config_end, p, q, commas + 1)


def _wrap_symbols(s: Scan, edits: list[tuple[int, int, str]], report: HipifyReport) -> None:
    """Wrap the symbol argument of cudaMemcpyToSymbol and friends in HIP_SYMBOL(...) (hipify-perl does too)."""
    for m in _SYMBOL_CALL.finditer(s.masked):
        if m.start() > 0 and (s.masked[m.start() - 1].isalnum() or s.masked[m.start() - 1] == "_"):
            continue
        args = _split_arguments(s.masked, m.end() - 1)
        index = SYMBOL_ARGUMENT[m.group().rstrip("( \t\r\n")]
        if args is None or index >= len(args):
            continue
        a, b = args[index]
        while a < b and s.masked[a].isspace():
            a += 1
        while b > a and s.masked[b - 1].isspace():
            b -= 1
        if a == b or s.masked.startswith(SYMBOL_MACRO, a):
            continue
        edits.append((a, a, SYMBOL_MACRO + "("))
        edits.append((b, b, ")"))
        report.changed_lines.add(s.line_of(a))


def _split_arguments(text: str, paren: int) -> list[tuple[int, int]] | None:
    """The (start, end) spans of the top-level arguments of the call whose `(` is at `paren`, or None."""
    spans, depth, start = [], 0, paren + 1
    for k in range(paren, len(text)):
        c = text[k]
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
            if depth == 0:
                spans.append((start, k))
                return spans
        elif c == "," and depth == 1:
            spans.append((start, k))
            start = k + 1
    return None


def _warn_unknown(s: Scan, words: set[str], table: Table, report: HipifyReport) -> None:
    """Warn on CUDA-looking identifiers in code that the table does not know (hipify-perl flags `cuda[A-Z]...`)."""
    unknown = {w for w in words if _CUDA_LOOKING.fullmatch(w) and w not in table.identifiers}
    if not unknown:
        return
    for m in re.finditer(_trie_pattern(unknown) + r"\b", s.masked):
        if m.start() and (s.masked[m.start() - 1].isalnum() or s.masked[m.start() - 1] == "_"):
            continue
        report.warn(s.line_of(m.start()), "unknown", m.group(),
                    f"unconverted CUDA identifier: {m.group()} (not in the table)", converted=False)


def _message(e: Entry) -> str:
    product = "CUDNN" if e.api == "dnn" else "CUDA"
    since = f" since {product} {e.since}" if e.since else ""
    note = f" ({e.note})" if e.note else ""
    if e.support == "unsupported":
        return f"unsupported HIP identifier: {e.cuda}{note}"
    if e.support == "deprecated_cuda":
        return f"deprecated CUDA identifier: {e.cuda}{since}{note}"
    if e.support == "removed_cuda":
        return f"removed CUDA identifier: {e.cuda}{since}{note}"
    hip_since = f" since HIP {e.since}" if e.since else ""
    return f"deprecated HIP identifier: {e.hip} (for {e.cuda}){hip_since}{note}"


def _apply(source: str, edits: list[tuple[int, int, str]]) -> str:
    """Apply non-overlapping (start, end, text) edits; insertions at a position go before a replacement there."""
    out, pos = [], 0
    for a, b, text in sorted(edits, key=lambda e: (e[0], e[1])):
        assert a >= pos, "hipify edits overlap"
        out.append(source[pos:a])
        out.append(text)
        pos = b
    out.append(source[pos:])
    return "".join(out)


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if not text or text.endswith("\n") else 1)


# --- the `strata hipify` command ------------------------------------------------------------------------------


def main(files: Sequence[str], *, output: str | None = None, print_stats: bool = False, no_output: bool = False,
         quiet_warnings: bool = False, launch_syntax: str = "hip") -> int:
    """Run hipify on files the way `strata hipify` does; return the exit status.

    Each file's HIP text goes to `output` (one file only) or to stdout; warnings and, with `print_stats`, the
    statistics (and a GLOBAL block for several files) go to stderr. `no_output` with `print_stats` is
    hipify-perl's -examine.

    Raises:
        ValueError: `output` given with more than one input file.
    """
    if output is not None and len(files) != 1:
        raise ValueError(f"[hipify] -o takes one input file, got {len(files)}")
    reports = []
    for name in files:
        try:
            text, report = hipify_file(name, launch_syntax=launch_syntax)
        except OSError as e:
            print(f"[HIPIFY] error: cannot read {name}: {e.strerror or e}", file=sys.stderr)
            return 1
        reports.append(report)
        if not quiet_warnings and report.warnings:
            print(report.format_warnings(), file=sys.stderr)
        if not no_output:
            if output is not None:
                Path(output).write_text(text, encoding="utf-8")
            else:
                sys.stdout.write(text)
        if print_stats:
            print(report.format(), file=sys.stderr)
    if print_stats and len(reports) > 1:
        print(HipifyReport.merge(reports).format(), file=sys.stderr)
    return 0
