"""What hipify did to one file: counts by name, category and API, warnings with line numbers, and the
statistics block in the form hipify-perl prints (`[HIPIFY] info: file '...' statistics:`), with the byte and
line measures hipify-clang adds.

Example:
    >>> r = HipifyReport("vadd.cu", total_lines=10, total_bytes=200)
    >>> r.count("cudaMalloc", "hipMalloc", "memory", "runtime", line=3, replaced_bytes=10)
    >>> r.converted, r.by_api["CUDA RT API"], r.conversion_percent
    (1, 1, 100.0)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

# How the statistics name each `api` value of the table (hipify-clang's "CONVERTED refs by API" labels).
API_LABELS = {
    "runtime": "CUDA RT API",
    "driver": "CUDA Driver API",
    "rtc": "CUDA RTC API",
    "complex": "cuComplex API",
    "device": "CUDA Device API",
    "blas": "cuBLAS API",
    "rand": "cuRAND API",
    "fft": "cuFFT API",
    "dnn": "cuDNN API",
    "cub": "CUB API",
}


@dataclass(frozen=True)
class HipifyWarning:
    """One warning: the 1-based source line, what kind it is, the CUDA name and the message text.

    `kind` is one of "unsupported", "deprecated_cuda", "removed_cuda", "deprecated_hip" (from the table's
    support column), "unknown" (a CUDA-looking name the table lacks) or "launch" (a launch left as written).
    """

    line: int
    kind: str
    name: str
    message: str

    def format(self, filename: str) -> str:
        """The warning line as hipify-perl writes it to stderr: `  file:line: warning: message`."""
        return f"  {filename}:{self.line}: warning: {self.message}"


@dataclass
class HipifyReport:
    """Statistics of one hipify run (or, from `merge`, of several: the `GLOBAL` block).

    Attributes:
        filename: the file name shown in the report and warnings.
        by_name: (cuda, hip) -> references converted (identity renames such as `__syncthreads` count too, as
            in hipify-perl; launches count as ('<<<>>>', 'hipLaunchKernelGGL')).
        by_category: hipify-perl statistics bucket -> references converted.
        by_api: API label ("CUDA RT API", "cuBLAS API", ...) -> references converted.
        unconverted: CUDA references left as written (unsupported names, unknown names, unparsed launches).
        warnings: in source order.
        changed_lines: 1-based source lines whose text changed.
    """

    filename: str = "<source>"
    total_lines: int = 0
    total_bytes: int = 0
    replaced_bytes: int = 0
    unconverted: int = 0
    elapsed_s: float = 0.0
    files: int = 1
    by_name: Counter[tuple[str, str]] = field(default_factory=Counter)
    by_category: Counter[str] = field(default_factory=Counter)
    by_api: Counter[str] = field(default_factory=Counter)
    warnings: list[HipifyWarning] = field(default_factory=list)
    changed_lines: set[int] = field(default_factory=set)

    def count(self, cuda: str, hip: str, category: str, api: str, *, n: int = 1, replaced_bytes: int = 0,
              line: int | None = None) -> None:
        """Record `n` converted references (`replaced_bytes` written in all; 0 when the text did not change),
        and `line` as changed when given."""
        self.by_name[(cuda, hip)] += n
        self.by_category[category] += n
        self.by_api[API_LABELS.get(api, api)] += n
        self.replaced_bytes += replaced_bytes
        if line is not None and replaced_bytes:
            self.changed_lines.add(line)

    def warn(self, line: int, kind: str, name: str, message: str, *, converted: bool) -> None:
        """Record a warning; a reference that was not converted also counts as unconverted."""
        self.warnings.append(HipifyWarning(line, kind, name, message))
        if not converted:
            self.unconverted += 1

    @property
    def converted(self) -> int:
        """Total references converted (hipify-perl's `CONVERTED refs count`)."""
        return sum(self.by_category.values())

    @property
    def conversion_percent(self) -> float:
        """converted / (converted + unconverted) * 100; 100 when the file has no CUDA references at all."""
        total = self.converted + self.unconverted
        return 100.0 * self.converted / total if total else 100.0

    def names(self) -> set[str]:
        """The HIP names this run wrote (or kept), without the launch macro pseudo-entry's CUDA side."""
        return {hip for (_, hip) in self.by_name}

    def format(self) -> str:
        """The statistics block, hipify-perl's layout with hipify-clang's extra measures, one item a line."""
        lines_pct = 100.0 * len(self.changed_lines) / self.total_lines if self.total_lines else 0.0
        bytes_pct = 100.0 * self.replaced_bytes / self.total_bytes if self.total_bytes else 0.0
        out = [
            f"[HIPIFY] info: file '{self.filename}' statistics:",
            f"  CONVERTED refs count: {self.converted}",
            f"  UNCONVERTED refs count: {self.unconverted}",
            f"  CONVERSION %: {self.conversion_percent:.1f}",
            f"  REPLACED bytes: {self.replaced_bytes}",
            f"  TOTAL bytes: {self.total_bytes}",
            f"  CHANGED lines of code: {len(self.changed_lines)}",
            f"  TOTAL lines of code: {self.total_lines}",
            f"  CODE CHANGED (in bytes) %: {bytes_pct:.1f}",
            f"  CODE CHANGED (in lines) %: {lines_pct:.1f}",
            f"  WARNINGS: {len(self.warnings)}",
            f"  TIME ELAPSED s: {self.elapsed_s:.3f}",
        ]
        for title, counter in (("type", self.by_category), ("API", self.by_api)):
            if counter:
                out.append(f"[HIPIFY] info: CONVERTED refs by {title}:")
                out += [f"  {k}: {v}" for k, v in sorted(counter.items(), key=lambda kv: (-kv[1], kv[0]))]
        if self.by_name:
            out.append("[HIPIFY] info: CONVERTED refs by names:")
            out += [f"  {c} => {h}: {n}" for (c, h), n in sorted(self.by_name.items())]
        return "\n".join(out)

    def format_warnings(self) -> str:
        """Every warning, one a line, as hipify-perl prints them."""
        return "\n".join(w.format(self.filename) for w in self.warnings)

    @classmethod
    def merge(cls, reports: list[HipifyReport]) -> HipifyReport:
        """The totals over several files (hipify-perl's final `GLOBAL` block).

        Changed lines are kept per file as (file index, line) pairs folded into distinct integers, so only
        their number is meaningful in the result.
        """
        total = cls(filename="GLOBAL", files=len(reports))
        for i, r in enumerate(reports):
            total.total_lines += r.total_lines
            total.total_bytes += r.total_bytes
            total.replaced_bytes += r.replaced_bytes
            total.unconverted += r.unconverted
            total.elapsed_s += r.elapsed_s
            total.by_name.update(r.by_name)
            total.by_category.update(r.by_category)
            total.by_api.update(r.by_api)
            total.warnings.extend(r.warnings)
            total.changed_lines.update((i << 32) | line for line in r.changed_lines)
        return total
