"""The native executor's runtime library: the helper functions every kernel's code calls, compiled once.

Every kernel module used to carry its own internal copies of the same helpers (the allocation lookup, the
warp summaries, sector and bank-conflict counts, the per-warp check and counting functions, the driver's
branch count and block bookkeeping), and LLVM optimized and emitted them again for each kernel: about a
quarter of SGEMM's compile time. Now a kernel module only declares them (`declare_shared`, called by the
code generator before it prints the module), and one object file defines them (`runtime_object`), built
once per process (or read from the disk cache, keyed like kernel objects) and linked into every kernel's
engine beside the kernel's own object.

The helpers themselves are the code generator's (codegen.py, warphelpers.py, driver.py), emitted here into
a module of their own with external linkage; their bodies are unchanged.
"""

from __future__ import annotations

import threading

from llvmlite import ir  # type: ignore[import-untyped]

# the helpers kernel modules declare and the runtime object defines (their names in the modules)
SHARED = ("alloc_lookup", "warp_summary", "sort_lanes", "global_counts", "warp_runs", "warp_sectors",
          "bank_conflicts", "warp_check_global", "warp_finish_global", "warp_finish_shared", "add_into",
          "count_taken", "after_block")
_LOCK = threading.Lock()
_OBJECT: bytes | None = None


def declare_shared(module: ir.Module) -> None:
    """Turn the module's definitions of the shared helpers into declarations (external: the runtime
    object resolves them when the kernel is linked)."""
    for name in SHARED:
        f = module.globals.get(name)
        if isinstance(f, ir.Function) and f.blocks:
            f.blocks = []
            f.linkage = ""


def _module_text() -> str:
    """The runtime module's IR: every shared helper, defined once, with external linkage."""
    from strata.hw.native import codegen as cg
    from strata.hw.native import driver, warphelpers

    class _Helpers(cg.KernelCodegen):
        def __init__(self) -> None:  # (only what the helper builders use)
            self.module = ir.Module(name="strata_native_runtime")
            self._helpers: dict[str, ir.Function] = {}

    g = _Helpers()
    for make in (g._alloc_lookup, g._summary_helper, g._sort_helper, g._global_helper, g._runs_helper,
                 g._sectors_helper, g._conflicts_helper):
        make()
    for build in (warphelpers.check_global, warphelpers.finish_global, warphelpers.finish_shared,
                  warphelpers.add_into):
        build(g)
    driver.count_taken_helper(g.module)
    driver.after_block_helper(g.module)
    driver.drive_helper(g.module, cg.CTX_BLOCKS)  # (not declared by kernels: the executor looks it up by name)
    missing = [n for n in SHARED if n not in g.module.globals]
    if missing:
        raise AssertionError(f"runtime helpers not built: {missing}")
    for name in (*SHARED, "drive"):
        g.module.globals[name].linkage = ""
    return str(g.module)


def runtime_object() -> bytes:
    """The runtime library's object code: built once per process, or read from the disk cache."""
    global _OBJECT
    with _LOCK:
        if _OBJECT is None:
            from strata.hw.native.compiler import cache_get, cache_key, cache_put, compile_ir

            key = cache_key({"runtime": 1})
            got = cache_get(key)
            if got is not None and got[1] is not None:
                _OBJECT = got[1]
            else:
                _OBJECT = compile_ir(_module_text())
                cache_put(key, {"runtime": True}, _OBJECT)
        return _OBJECT


def forget() -> None:
    """Forget the in-process runtime object (the next kernel link builds or loads it again)."""
    global _OBJECT
    with _LOCK:
        _OBJECT = None
