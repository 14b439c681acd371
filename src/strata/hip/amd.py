"""HIP C++ -> AMD machine code: the hipRTC/hipcc role for AMD devices, played by clang-19 and strata's own
AMD device header (`include_amd/hip/hip_runtime.h`), with no ROCm install.

Source of truth for how strata compiles HIP for an AMD device and launches the result:
`clang-19 -x hip --offload-arch=<arch> --cuda-device-only --no-gpu-bundle-output -nogpuinc -nogpulib -O3
-gline-tables-only -I<include_amd>` makes a code object (ELF, code object v5), cached on disk beside the PTX cache (key:
source, options, arch, clang version, the header's text). `CodeObjectModule` parses it at once (a
malformed one raises CodeObjectError, an instruction the CDNA engine lacks raises
UnsupportedAmdInstruction, both before any launch); a launch lays the kernarg segment out from the
metadata (explicit arguments, then the hidden ones: block counts, group sizes, grid dims) and queues
a dispatch packet naming the kernel's kernel object, which the command processor runs on the wave64
engine (`hw/amdgpu`). See docs/amd.md.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import shutil
import subprocess
import tempfile
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from strata import config, trace
from strata.cuda.compiler import CompileError
from strata.cuda.device import Device, current_device
from strata.cuda.memory import DeviceArray
from strata.cuda.module import FuncAttributes, LaunchReport, _dim3
from strata.errors import CudaError, InvalidLaunchConfig
from strata.hw.amdgpu import kernarg
from strata.hw.amdgpu.codeobject import CodeObject, KernelArg, parse
from strata.hw.amdgpu.executor import load_program
from strata.hw.amdgpu.occupancy import AmdOccupancy, kernel_occupancy
from strata.runtime.code_object import LoadedCodeObject, launch_code_object_kernel, load_code_object

CLANG = "clang-19"
ARCHS = ("gfx942", "gfx90a")
CACHE_FORMAT = 3  # 3: line tables naming the source by `name`


class ClangNotFound(CompileError):
    """clang-19 (with lld-19) is not installed: `make amd` or `apt-get install clang-19 lld-19 llvm-19`."""


@functools.cache
def include_dir() -> Path:
    """The directory holding strata's AMD `hip/hip_runtime.h`.

    Example:
        >>> (include_dir() / "hip" / "hip_runtime.h").is_file()
        True
    """
    return Path(__file__).resolve().parent / "include_amd"


@functools.cache
def header_digest() -> str:
    """SHA-256 of every file of strata's AMD device headers (part of the code-object cache key: a change to any
    of them, hip/amd_math.h included, recompiles)."""
    h = hashlib.sha256()
    for path in sorted(p for p in include_dir().rglob("*") if p.is_file()):
        h.update(path.relative_to(include_dir()).as_posix().encode() + b"\0" + path.read_bytes())
    return h.hexdigest()


def clang_path() -> str | None:
    """Path of clang-19, or None when it is not installed."""
    return shutil.which(CLANG)


@functools.cache
def clang_version() -> str:
    """clang's version line (part of the code-object cache key)."""
    path = clang_path()
    if path is None:
        raise ClangNotFound(f"{CLANG} is not installed; run `make amd` (or apt-get install clang-19 lld-19 llvm-19)")
    out = subprocess.run([path, "--version"], capture_output=True, text=True, check=False).stdout
    return out.splitlines()[0] if out else "unknown"


def clang_command(arch: str, options: Sequence[str] = ()) -> list[str]:
    """The clang command line strata compiles HIP with for `arch` (source from stdin). strata's device header is
    included first, as hipRTC and hipcc make HIP's device API available without an #include."""
    return [CLANG, "-x", "hip", f"--offload-arch={arch}", "--cuda-device-only", "--no-gpu-bundle-output",
            "-nogpuinc", "-nogpulib", "-mprintf-kind=buffered", "-O3", "-gline-tables-only", f"-I{include_dir()}",
            "-include", "hip/hip_runtime.h",
            *options]  # buffered printf: records in the hidden printf buffer (hostcall printf needs device libs)


def compile_to_code_object(source: str, *, arch: str = "gfx942", options: Sequence[str] = (),
                           name: str = "kernel.hip", cache: bool = True) -> bytes:
    """Compile HIP C++ device code to an AMDGPU code object (bytes).

    Raises:
        ClangNotFound: clang-19 is absent. CompileError: clang rejected the source (`.log` has its output).
    """
    if arch.split(":")[0] not in ARCHS:  # a target id may carry features, as for hipcc: gfx942:sramecc-
        raise CompileError(f"[hip compile] arch {arch!r} is not supported; expected one of {ARCHS} (optionally "
                           f"with :sramecc+/-, :xnack+/-)")
    version = clang_version()
    header = header_digest()
    key = hashlib.sha256(json.dumps([CACHE_FORMAT, source, clang_command(arch, options), version, name, header])
                         .encode())
    path = config.settings().cache_dir / f"{key.hexdigest()}.{arch}.co"
    if cache and path.is_file():
        trace.emit("L3", "hiprtc_cache_hit", arch=arch)
        return path.read_bytes()
    with trace.span("L3", "hiprtcCompileProgram", arch=arch, compiler=CLANG), \
            tempfile.TemporaryDirectory(prefix="strata-hip-") as tmp:
        src = Path(tmp) / os.path.basename(name)
        src.write_text(source, encoding="utf-8")
        out = Path(tmp) / "k.co"
        # the line table names the source as `name` (not the temporary directory it was compiled in)
        proc = subprocess.run([*clang_command(arch, options), "-fdebug-compilation-dir=.", src.name, "-o", str(out)],
                              capture_output=True, text=True, check=False, cwd=tmp)
        if proc.returncode != 0 or not out.is_file():
            first = next((ln for ln in proc.stderr.splitlines() if "error" in ln), proc.stderr.strip()[:200])
            raise CompileError(f"[hip compile {arch}] clang failed: {first}", proc.stderr)
        image = out.read_bytes()
    if cache:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp_path = path.with_suffix(f".{os.getpid()}.tmp")
            tmp_path.write_bytes(image)
            os.replace(tmp_path, path)
        except OSError:
            pass  # a read-only cache only costs a recompile
    return image


def compile_amd(source: str, *, arch: str = "gfx942", options: Sequence[str] = (),
                name: str = "kernel.hip") -> CodeObjectModule:
    """Compile HIP C++ for an AMD device and load it (hiprtcCompileProgram + hipModuleLoadData on ROCm).

    Raises:
        ClangNotFound, CompileError: as `compile_to_code_object`. CodeObjectError,
        UnsupportedAmdInstruction: the code object cannot run on the CDNA engine.
    """
    return CodeObjectModule(compile_to_code_object(source, arch=arch, options=options, name=name))


class CodeObjectModule:
    """A loaded AMDGPU code object (hipModule_t on ROCm): its kernels, decoded at creation; each device
    loads it at its first launch there."""

    def __init__(self, image: bytes) -> None:
        self.image = bytes(image)
        self.code_object: CodeObject = parse(self.image)
        # decode every kernel now, so an instruction the engine lacks fails here, not at launch (and loading
        # on a device reuses the programs)
        self._programs = {name: load_program(k) for name, k in self.code_object.kernels.items()}
        self._loaded: dict[tuple[int, int], LoadedCodeObject] = {}
        self._kernels: dict[str, CodeObjectKernel] = {}
        self._lock = threading.Lock()

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> CodeObjectModule:
        return cls(Path(path).read_bytes())

    @property
    def kernels(self) -> list[str]:
        return list(self.code_object.kernels)

    @property
    def arch(self) -> str:
        return self.code_object.processor

    def get_global(self, name: str) -> tuple[int, int]:
        """(device address, size) of a `__device__`/`__constant__` variable on the current device
        (hipModuleGetGlobal); the code object's initializers are there after loading.

        Raises:
            CudaError: cudaErrorInvalidSymbol if the code object defines no such variable."""
        variables = self.loaded(current_device()).variables
        if name not in variables:
            raise CudaError("cudaErrorInvalidSymbol", f"[get_global] no __device__/__constant__ variable {name!r} in "
                            f"the code object; variables: {sorted(variables)}")
        return variables[name]

    def get_function(self, name: str) -> CodeObjectKernel:
        """The kernel `name` (hipModuleGetFunction)."""
        k = self._kernels.get(name)
        if k is None:
            if name not in self.code_object.kernels:
                raise CudaError("cudaErrorInvalidDeviceFunction",
                                f"[get_function] no kernel named {name!r} in the code object; kernels: {self.kernels}")
            k = self._kernels[name] = CodeObjectKernel(self, name)
        return k

    def loaded(self, device: Device) -> LoadedCodeObject:
        """The code object as loaded on `device` (loaded again after a device reset)."""
        if device.spec.vendor != "amd":
            raise CudaError("cudaErrorNoKernelImageForDevice",
                            f"[launch] a {self.arch} code object cannot run on {device.spec.product} "
                            f"({device.spec.arch}); compile HIP for it with strata.hip.compile (NVRTC)")
        if device.spec.arch != self.arch:
            raise CudaError("cudaErrorNoKernelImageForDevice",
                            f"[launch] code object for {self.arch} cannot run on {device.spec.arch}")
        key = (device.index, device.context.generation)
        with self._lock:
            lc = self._loaded.get(key)
            if lc is None:
                lc = load_code_object(device.file, self.image, self.code_object, self._programs)
                for stale in [k for k in self._loaded if k[0] == device.index]:
                    del self._loaded[stale]
                self._loaded[key] = lc
        return lc


@dataclass(frozen=True)
class AmdFuncAttributes(FuncAttributes):
    """hipFuncAttributes of a code object's kernel, with its scalar and accumulation register counts."""

    sgprs: int = 0
    agprs: int = 0


class CodeObjectKernel:
    """A kernel of a code object (hipFunction_t). Call it or use `launch`."""

    def __init__(self, module: CodeObjectModule, name: str) -> None:
        self.module = module
        self.name = name
        self.info = module.code_object.kernels[name]

    @property
    def args(self) -> list[KernelArg]:
        return self.info.explicit_args

    @property
    def attributes(self) -> AmdFuncAttributes:
        """hipFuncGetAttributes from the code object: `num_regs` is VGPRs per work-item, static LDS,
        scratch per work-item, the kernel's max flat workgroup size; `sgprs` and `agprs` ride along.

        `binary_version` is the gfx major*10+minor (94 for gfx942), as HIP reports it."""
        k = self.info
        dev = current_device()
        return AmdFuncAttributes(
            num_regs=k.vgpr_count, shared_size_bytes=k.group_segment_fixed_size, const_size_bytes=0,
            local_size_bytes=k.private_segment_fixed_size,
            max_threads_per_block=min(k.max_flat_workgroup_size, dev.spec.max_threads_per_block),
            max_dynamic_shared_size_bytes=max(0, dev.spec.shared_mem_per_block_optin - k.group_segment_fixed_size),
            ptx_version=0, binary_version=int(self.module.arch[3:5]) if self.module.arch[3:5].isdigit() else 0,
            sgprs=k.sgpr_count, agprs=k.agpr_count)

    def occupancy(self, block_size: int, dynamic_lds: int = 0) -> AmdOccupancy:
        """Resident workgroups per CU of the current device for `block_size` work-items, from the kernel's
        VGPRs (AGPRs included), SGPRs and LDS (hipOccupancyMaxActiveBlocksPerMultiprocessor's answer)."""
        return kernel_occupancy(self.info, current_device().spec, block_size, dynamic_lds)

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0,
                 stream: Any = None) -> LaunchReport:
        return self.launch(grid, block, args, shared_mem=shared_mem, stream=stream)

    def launch(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0,
               stream: Any = None) -> LaunchReport:
        """Launch on the current device (an AMD one): `grid` workgroups of `block` work-items.

        Args:
            args: one per kernel argument: a DeviceArray or int address for pointers, NumPy scalars
                (or Python ints/floats, packed to the argument's size) for values.
        Raises:
            TypeError: wrong argument count or size. InvalidLaunchConfig: a workgroup over the limit.
        """
        device = current_device() if stream is None else Device(stream.context.device.index)
        g, b = _dim3(grid, "grid"), _dim3(block, "block")
        threads = b[0] * b[1] * b[2]
        with trace.span("L3", "hipModuleLaunchKernel", kernel=self.name, grid=g, block=b, shared_mem=shared_mem):
            if threads > self.info.max_flat_workgroup_size:
                raise InvalidLaunchConfig(message=f"[launch {self.name}] workgroup of {threads} work-items exceeds "
                                          f"the kernel's max_flat_workgroup_size {self.info.max_flat_workgroup_size}")
            explicit = [_pack(self.name, i, a, x) for i, (a, x) in enumerate(_pair(self.name, self.args, args))]
            segment = kernarg.build(self.info, explicit, g, b, shared_mem)
            loaded = self.module.loaded(device)
            signal = launch_code_object_kernel(device.context.stream(stream), loaded, self.name, g, b, shared_mem,
                                               segment)
        report = LaunchReport(self.name, device, g, b, shared_mem, self.info.vgpr_count, "code object", signal)
        if config.settings().launch_blocking:
            report.wait()
        return report


def _pair(kernel: str, params: list[KernelArg], args: Sequence[Any]) -> list[tuple[KernelArg, Any]]:
    if isinstance(args, DeviceArray | np.generic | int | float):
        args = (args,)
    if len(args) != len(params):
        raise TypeError(f"[launch {kernel}] expects {len(params)} arguments "
                        f"({', '.join(p.value_kind + ':' + str(p.size) for p in params)}), got {len(args)}")
    return list(zip(params, args, strict=True))


def _pack(kernel: str, i: int, p: KernelArg, a: Any) -> bytes:
    where = f"[launch {kernel}] argument {i} ({p.value_kind}, {p.size} bytes)"
    if isinstance(a, DeviceArray):
        if p.size != 8:
            raise TypeError(f"{where} is not a pointer; got a DeviceArray")
        return int(a.ptr).to_bytes(8, "little")
    if isinstance(a, np.generic):
        raw = a.tobytes()
        if len(raw) != p.size:
            raise TypeError(f"{where} expects {p.size} bytes, got numpy.{a.dtype.name} ({len(raw)} bytes)")
        return raw
    if isinstance(a, bool):
        raise TypeError(f"{where}: got bool")
    if isinstance(a, int):
        bits = 8 * p.size
        if not -(1 << (bits - 1)) <= a < (1 << bits):
            raise TypeError(f"{where}: {a} does not fit in {bits} bits")
        return (a & ((1 << bits) - 1)).to_bytes(p.size, "little")
    if isinstance(a, float) and p.size in (4, 8):
        return np.array(a, dtype=np.float32 if p.size == 4 else np.float64).tobytes()
    raise TypeError(f"{where} expects a NumPy scalar, int, float or DeviceArray, got {type(a).__name__}")
