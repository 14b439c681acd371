"""`strata hipcc`: compile a HIP file to an AMDGPU code object from the shell, with the same clang-19 command
line and AMD device header as `strata.hip.compile(arch=...)` (`strata.hip.amd.clang_command`).

`strata hipcc [clang flags] k.hip -o k.co [--offload-arch=gfx942]`: the offload arch (default gfx942, target
features such as `:sramecc+:xnack-` allowed) picks the target; every other flag and the input files pass
through to clang unchanged. Without `-o` the code object is written beside the first input as `<stem>.co`.
The result loads with `strata.hip.amd.CodeObjectModule.from_file`.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path

from strata.hip.amd import ARCHS, CLANG, ClangNotFound, clang_command, clang_path

INSTALL_HINT = "run `make amd` (or `apt-get install clang-19 lld-19 llvm-19`)"
_SOURCE_SUFFIXES = (".hip", ".cpp", ".cc", ".cxx", ".cu", ".c")


def hipcc_command(argv: Sequence[str]) -> list[str]:
    """The clang command `strata hipcc argv` runs: strata's command line for the chosen arch, then `argv`
    without its `--offload-arch` (and with `-o <stem>.co` added when no output is named).

    Raises:
        ValueError: an unsupported `--offload-arch`, `--offload-arch` without a value, or no input file.

    Example:
        >>> hipcc_command(["k.hip", "-o", "k.co"])[:4]
        ['clang-19', '-x', 'hip', '--offload-arch=gfx942']
    """
    arch = "gfx942"
    rest: list[str] = []
    it = iter(argv)
    for a in it:
        if a == "--offload-arch":
            nxt = next(it, None)
            if nxt is None:
                raise ValueError("strata hipcc: --offload-arch needs a value, e.g. --offload-arch=gfx942")
            arch = nxt
        elif a.startswith("--offload-arch="):
            arch = a.split("=", 1)[1]
        else:
            rest.append(a)
    base = arch.split(":")[0]  # the target id may carry features: gfx942:sramecc+:xnack-
    if base not in ARCHS:
        raise ValueError(f"strata hipcc: --offload-arch={arch} is not supported; expected one of {ARCHS} "
                         "(optionally with :sramecc+/-, :xnack+/-)")
    sources = [a for a in rest if not a.startswith("-") and a.endswith(_SOURCE_SUFFIXES)]
    if not sources:
        raise ValueError(f"strata hipcc: no input file (expected a {'/'.join(_SOURCE_SUFFIXES)} file); "
                         "usage: strata hipcc [clang flags] k.hip -o k.co [--offload-arch=gfx942]")
    if "-o" not in rest and not any(a.startswith("-o") and len(a) > 2 for a in rest):
        rest += ["-o", str(Path(sources[0]).with_suffix(".co"))]
    return clang_command(arch, rest)


def main(argv: Sequence[str]) -> int:
    """Run `strata hipcc`: clang's own output and exit status; 2 for a usage error or a missing clang-19."""
    if any(a in ("-h", "--help") for a in argv):
        print(__doc__.strip())
        return 0
    try:
        cmd = hipcc_command(argv)
        path = clang_path()
        if path is None:
            raise ClangNotFound(f"strata hipcc: {CLANG} is not installed; {INSTALL_HINT}")
    except (ValueError, ClangNotFound) as e:
        print(e, file=sys.stderr)
        return 2
    return subprocess.run([path, *cmd[1:]], check=False).returncode
