"""llvmlite glue: IR -> optimized x86 object code -> callable addresses, with a disk cache of objects.

The cache key follows the PTX cache's rule (everything that changes the output is in the key): the
module's PTX text, the kernel, where its variables live, the code generator's version, the LLVM
version and the host CPU's name and features. A hit loads the object file into a fresh MCJIT engine
without generating or optimizing any IR.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import tempfile
import threading
from pathlib import Path
from typing import Any

import llvmlite.binding as llvm  # type: ignore[import-untyped]

CODEGEN_VERSION = 1
_LOCK = threading.Lock()
_TM: Any = None
_GLUE_TM: Any = None
# A target machine is not safe to use from two threads at once (the background optimizer compiles beside the
# launching thread): each one's passes and emission run under its own lock.
_O3_LOCK = threading.Lock()
_O0_LOCK = threading.Lock()
# the line between a kernel's module and its glue module in the code generator's text (codegen._shared_block)
MODULE_SPLIT = "; strata: glue module follows"
_OBJECTS = b"strata-objects\n"  # an object blob holding several object files: this, then (length, bytes) each


def target_machine() -> Any:
    """The host's target machine for emitting objects (created once)."""
    global _TM
    with _LOCK:
        if _TM is None:
            _TM = _new_target_machine()
        return _TM


@functools.cache
def _host_cpu() -> tuple[str, str]:
    """(CPU name, feature string), asked of LLVM once per process (~4 ms each time)."""
    llvm.initialize_native_target()
    llvm.initialize_native_asmprinter()
    return llvm.get_host_cpu_name(), llvm.get_host_cpu_features().flatten()


def _new_target_machine(opt: int = 3) -> Any:
    name, features = _host_cpu()
    target = llvm.Target.from_default_triple()
    return target.create_target_machine(cpu=name, features=features, opt=opt, codemodel="jitdefault")


def _glue_machine() -> Any:
    """The target machine for glue and unoptimized code (opt 0: fast instruction selection and register
    allocation)."""
    global _GLUE_TM
    with _LOCK:
        if _GLUE_TM is None:
            _GLUE_TM = _new_target_machine(opt=0)
        return _GLUE_TM


def host_key() -> str:
    """LLVM version, CPU name and features: object code is only valid for the same triple."""
    ver = ".".join(map(str, llvm.llvm_version_info))
    name, features = _host_cpu()
    return f"llvm{ver}:{llvm.get_process_triple()}:{name}:{features}"


def compile_ir(text: str, *, optimize: bool = True) -> bytes:
    """Parse, verify, optimize (O3) and emit an object file; `optimize=False` emits at O0: no IR passes,
    LLVM's fast instruction selection and register allocation, 10 to 20 times quicker to compile and 2 to 7
    times slower to run (the executor's first code for a kernel: tiering.py). A text of two modules (the
    code generator's blocks that only call shared bodies follow MODULE_SPLIT) gives a blob of two objects
    (`objects`): the glue is always emitted at O0, since LLVM's cost per function, even a straight-line one
    of a dozen instructions, is about a millisecond at O3 and a fifth of that at O0."""
    if MODULE_SPLIT in text:
        main, glue = text.split(MODULE_SPLIT, 1)
        return _pack([compile_ir(main, optimize=optimize), _emit_unoptimized(glue)])
    if not optimize:
        return _emit_unoptimized(text)
    tm = target_machine()
    mod = _parse(text)
    with _O3_LOCK:
        return _optimize_and_emit(tm, mod)


def _optimize_and_emit(tm: Any, mod: Any) -> bytes:
    pto = llvm.create_pipeline_tuning_options(speed_level=3)
    # Loops stay rolled: unrolling, interleaving and SLP cost about 40% of the compile time and measured
    # nothing at run time (the lane loops are memory-bound; the vectorizer still makes them SIMD).
    pto.loop_unrolling = False
    pto.loop_interleaving = False
    pto.slp_vectorization = False
    pb = llvm.create_pass_builder(tm, pto)
    pm = pb.getModulePassManager()
    pm.run(mod, pb)
    return bytes(tm.emit_object(mod))


def _parse(text: str) -> Any:
    # Each module in a context of its own: an LLVM context is not thread-safe, and the background optimizer
    # parses while the launching thread may parse another kernel's -O0 module (the module holds its context).
    mod = llvm.parse_assembly(text, context=llvm.create_context())
    mod.triple = llvm.get_process_triple()
    mod.verify()
    return mod


def _emit_unoptimized(text: str) -> bytes:
    """O0: the module as written, through fast instruction selection (SROA, instcombine and simplifycfg
    before it measured no faster at run time and twice the compile time)."""
    tm, mod = _glue_machine(), _parse(text)
    with _O0_LOCK:
        return bytes(tm.emit_object(mod))


def _pack(objs: list[bytes]) -> bytes:
    return _OBJECTS + b"".join(len(o).to_bytes(8, "little") + o for o in objs)


def objects(blob: bytes) -> list[bytes]:
    """The object files of a blob compile_ir returned (one, or those _pack joined)."""
    if not blob.startswith(_OBJECTS):
        return [blob]
    out, at = [], len(_OBJECTS)
    while at < len(blob):
        n = int.from_bytes(blob[at: at + 8], "little")
        out.append(blob[at + 8: at + 8 + n])
        at += 8 + n
    return out


class LoadedObject:
    """An object file linked into its own MCJIT engine with the runtime library; `address(name)` of its
    functions."""

    def __init__(self, obj: bytes) -> None:
        from strata.hw.native.runtime import runtime_object

        lib = runtime_object()  # the helpers the kernel's code calls (runtime.py), linked beside it
        with _LOCK:
            tm = _new_target_machine()  # an engine owns (and frees) its target machine: one each
            empty = llvm.parse_assembly("")
            empty.triple = llvm.get_process_triple()
            self.engine = llvm.create_mcjit_compiler(empty, tm)
            self.engine.add_object_file(llvm.ObjectFileRef.from_data(lib))
            for part in objects(obj):
                self.engine.add_object_file(llvm.ObjectFileRef.from_data(part))
            self.engine.finalize_object()

    def address(self, name: str) -> int:
        addr = int(self.engine.get_function_address(name))
        if not addr:
            raise KeyError(name)
        return addr


def _source_digest() -> str:
    here = Path(__file__).resolve().parent
    h = hashlib.sha256(str(CODEGEN_VERSION).encode())
    for path in sorted(here.glob("*.py")):  # (the lowering lives in several modules; the manifest's fields too)
        h.update(path.read_bytes())
    return h.hexdigest()


# Read when this module is imported, beside the code generator's own modules (the executor imports them
# together), not at the first compile: a process whose sources were edited on disk after it imported them
# would otherwise file objects its old code made under the new code's key, and another process would load
# them into code that lays ctx and counters out otherwise (a crash seen while the sources were being edited).
_DIGEST = _source_digest()


def codegen_digest() -> str:
    """A hash of the code generator's own source: any change to it invalidates cached objects."""
    return _DIGEST


def cache_key(parts: dict[str, Any]) -> str:
    blob = json.dumps({**parts, "codegen": codegen_digest(), "host": host_key()}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def cache_dir() -> Path:
    from strata import config

    return config.settings().cache_dir / "native"


def cache_get(key: str) -> tuple[dict[str, Any], bytes | None] | None:
    """(manifest, object bytes or None for a cached 'unsupported') or None on a miss."""
    d = cache_dir()
    try:
        manifest = json.loads((d / f"{key}.json").read_text())
        if manifest.get("reason"):
            return manifest, None
        return manifest, (d / f"{key}.o").read_bytes()
    except (OSError, ValueError):
        return None


def cache_has(key: str) -> bool:
    """Whether the cache holds an entry for `key` (an object, or a recorded reason it cannot compile)."""
    return (cache_dir() / f"{key}.json").is_file()


def cache_put(key: str, manifest: dict[str, Any], obj: bytes | None) -> None:
    """Write atomically (rename), so concurrent processes never see half a file; errors are ignored
    (the cache is an optimization)."""
    d = cache_dir()
    try:
        d.mkdir(parents=True, exist_ok=True)
        if obj is not None:
            _atomic(d / f"{key}.o", obj)
        _atomic(d / f"{key}.json", json.dumps(manifest).encode())
    except OSError:
        pass


def _atomic(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
