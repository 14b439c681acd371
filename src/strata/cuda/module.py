"""Modules and kernels: `compile` (NVRTC), `Module.from_ptx`, `Kernel.launch` and its `LaunchReport`.

The L3 contract later layers keep. A launch packs its arguments by the kernel's PTX parameter list
(as cuLaunchKernel does from the kernel image), validates the configuration against the device's
limits with CUDA's error names, and goes down through the runtime (L2) and driver (L1) to the
virtual GPU (L0).
"""

from __future__ import annotations

import sys
import threading
import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from strata import config, trace
from strata.cuda.compiler import compile_to_ptx
from strata.cuda.device import SYNCHRONIZE_HOOKS, Device, current_device
from strata.cuda.params import pack_arguments
from strata.errors import CudaError, InvalidLaunchConfig
from strata.hw.counters import Counters
from strata.hw.cp import DispatchRecord
from strata.hw.engine import LaunchConfig
from strata.hw.jit import register_pressure
from strata.hw.occupancy import occupancy, ptxas_registers
from strata.hw.perf import ModeledTime
from strata.hw.ptx.ir import Function, Param
from strata.hw.ptx.ir import Module as PTXModule
from strata.hw.ptx.parser import parse_cached
from strata.runtime import LoadedModule, Signal, Stream, completion_record, launch_kernel, load_module

Dim3 = int | tuple[int, ...]
MAX_PORTABLE_CLUSTER = 8  # blocks in a thread-block cluster without cudaFuncAttributeNonPortableClusterSizeAllowed
LAYERS = ("L3 strata.cuda (CUDA runtime API)", "L2 strata.runtime (stream -> AQL dispatch packet)",
          "L1 strata.driver (doorbell, interrupt)", "L0 strata.hw (command processor, PTX JIT + SIMT engine)")


def compile(source: str, *, options: Sequence[str] = (), name_expressions: Sequence[str] = (),
            name: str = "kernel.cu", headers: Mapping[str, str] | None = None) -> Module:  # noqa: A001
    """Compile CUDA C++ with NVRTC to PTX for compute_90 and return a Module.

    Args:
        source: CUDA C++ source text.
        options: extra NVRTC options (e.g. "-use_fast_math", "-DN=4").
        name_expressions: C++ names of template instantiations (or `__device__` template variables) to
            make loadable ("scale<float>").
        name: the file name NVRTC reports in diagnostics and `.loc` lines.
        headers: extra headers by include name, e.g. {"common.h": "..."} for `#include "common.h"`.
    Raises:
        CompileError: NVRTC rejected the source; `.log` holds NVRTC's log.

    Example:
        >>> m = compile('extern "C" __global__ void k(int* p) { *p = 7; }')
        >>> m.kernels
        ['k']
    """
    with trace.span("L3", "nvrtcCompileProgram", name=name):
        result = compile_to_ptx(source, options=options, name_expressions=name_expressions, name=name,
                                headers=headers)
    mod = Module.from_ptx(result.ptx)
    mod.lowered_names = dict(result.lowered_names)
    mod.compile_log = result.log
    return mod


_deferred: list[dict[tuple[int, int], LoadedModule]] = []  # unloads a device's own engine thread handed back
_deferred_lock = threading.Lock()


def _unload_all(loaded: dict[tuple[int, int], LoadedModule], wait: bool = True) -> None:
    """Free a module's variables and kernel objects on every device it is loaded on (cuModuleUnload).

    Waits for each device's queued work first (a queued launch may still use the module). With
    `wait=False`, or run from a device's engine thread (the garbage collector may drop a module there),
    which cannot wait for itself, a busy device's unload is handed to a later module call or synchronize
    instead."""
    for (index, generation), lm in list(loaded.items()):
        dev = Device._by_index.get(index)
        if dev is None or dev.context.generation != generation:
            loaded.pop((index, generation), None)  # a device reset already freed it
            continue
        if not wait and not dev.file.idle() or dev.file.cp.on_engine_thread():
            with _deferred_lock:
                _deferred.append(loaded)
            return
        dev.file.wait_idle()
        loaded.pop((index, generation), None)
        lm.unload()


def _unload_when_dropped(loaded: dict[tuple[int, int], LoadedModule]) -> None:
    """The finalizer of a dropped module: unloads at once where its devices are idle, else hands the
    unload to the next module call or synchronize. A finalizer may run where its thread holds a lock
    the device's engine needs (the garbage collector runs anywhere), so it must never wait."""
    _unload_all(loaded, wait=False)


def _run_deferred() -> None:
    """Unload the dropped modules whose devices are idle now; the others wait for a later call. Never waits
    for a device: the host thread here may be the one a running kernel waits on (a kernel spinning on a flag
    the host sets after its next launch), and a dropped module's unload is not worth a stall."""
    if _deferred:
        with _deferred_lock:
            pending = _deferred[:]
            _deferred.clear()
        for loaded in pending:
            _unload_all(loaded, wait=False)


SYNCHRONIZE_HOOKS.append(_run_deferred)  # cudaDeviceSynchronize also unloads modules dropped while busy


class Module:
    """A PTX module (cuModule), parsed and loaded onto the current device (JIT) when created; other
    devices load it at their first launch.

    `unload()` (cuModuleUnload) frees its `__device__`/`__constant__` variables and kernel objects on
    every device at once; dropping the last reference to the module (and to its kernels, which keep it
    alive) does the same. Using an unloaded module raises cudaErrorInvalidResourceHandle.

    Example:
        >>> ptx = ".version 8.0\\n.target sm_90\\n.address_size 64\\n.visible .entry k() { ret; }"
        >>> Module.from_ptx(ptx).get_function("k").name
        'k'
    """

    def __init__(self, ptx: str) -> None:
        self.ptx = ptx
        self.ir: PTXModule = parse_cached(ptx)
        self.lowered_names: dict[str, str] = {}
        self.compile_log = ""
        self._loaded: dict[tuple[int, int], LoadedModule] = {}
        self._kernels: dict[str, Kernel] = {}
        self._unloaded = False
        self._load_lock = threading.Lock()  # two threads' first launch on a device load the module once
        self._finalizer = weakref.finalize(self, _unload_when_dropped, self._loaded)
        self._finalizer.atexit = False  # at exit the devices close and take everything with them
        # cuModuleLoadData JITs at once, so an instruction the device lacks fails here, not at launch
        self.loaded(current_device())

    def unload(self) -> None:
        """cuModuleUnload / hipModuleUnload: free the module's device memory and kernel objects now.

        Raises:
            CudaError: cudaErrorInvalidResourceHandle if it was already unloaded."""
        self._check_loaded("unload")
        with trace.span("L3", "cuModuleUnload"):
            self._unloaded = True
            if self._finalizer.detach() is not None:
                _unload_all(self._loaded)  # a host call: waits for queued launches as cuModuleUnload does

    @property
    def is_unloaded(self) -> bool:
        return self._unloaded

    def _check_loaded(self, op: str) -> None:
        if self._unloaded:
            raise CudaError("cudaErrorInvalidResourceHandle", f"[{op}] the module (kernels {self.kernels}) was "
                            "unloaded; load it again to use it")

    @classmethod
    def from_ptx(cls, text: str) -> Module:
        """Load PTX text (cuModuleLoadData). Raises PTXSyntaxError with line and column, or
        UnsupportedInstruction naming opcode, kernel and PTX line."""
        return cls(text)

    @property
    def kernels(self) -> list[str]:
        return self.ir.kernels

    @property
    def const_bytes(self) -> int:
        """Bytes of `__constant__` variables the module declares."""
        return sum(v.size for v in self.ir.variables if v.space == "const" and not v.extern)

    def get_function(self, name: str) -> Kernel:
        """The kernel `name`, or a name expression given to `compile` (cuModuleGetFunction). The same
        Kernel object each time, so attributes set on it stay set."""
        self._check_loaded("get_function")
        k = self._kernels.get(name)
        if k is None:
            mangled = self.lowered_names.get(name, name)
            fn = self.ir.functions.get(mangled)
            if fn is None or not fn.is_entry:
                raise CudaError("cudaErrorInvalidDeviceFunction",
                                f"[get_function] no kernel named {name!r} in module; kernels: {self.kernels}")
            k = self._kernels[name] = Kernel(self, fn, name)
        return k

    def get_global(self, name: str) -> tuple[int, int]:
        """(device address, size in bytes) of a `__device__` or `__constant__` variable on the current
        device (cuModuleGetGlobal; the cudaMemcpyToSymbol path). `name` may be a name expression."""
        mangled = self.lowered_names.get(name, name)
        variables = self.loaded(current_device()).variables
        if mangled not in variables:
            names = sorted(self.lowered_names.get(n, n) for n in variables)
            raise CudaError("cudaErrorInvalidSymbol", f"[get_global] no __device__/__constant__ variable {name!r} "
                            f"in module; variables: {names}")
        return variables[mangled]

    def loaded(self, device: Device) -> LoadedModule:
        """The module as loaded on `device` (loaded again after a Device.reset()).

        Raises:
            CudaError: cudaErrorInvalidResourceHandle after `unload()`."""
        self._check_loaded("launch")
        _run_deferred()
        key = (device.index, device.context.generation)
        lm = self._loaded.get(key)
        if lm is None:
            with self._load_lock:
                lm = self._loaded.get(key)
                if lm is None:
                    lm = load_module(device.file, self.ptx)
                    for stale in [k for k in self._loaded if k[0] == device.index]:  # freed by a device reset
                        del self._loaded[stale]  # in place: the finalizer holds this dict
                    self._loaded[key] = lm
        return lm


class LaunchReport:
    """What one launch did: counters, modeled time on the device, and the emulation's wall time.

    A launch returns as soon as its packet is queued; reading `counters`, `modeled` or
    `wall_time_s` waits for the kernel to complete (and raises the context's sticky error if it
    faulted). `done` says whether it completed; `wait()` waits explicitly.
    """

    def __init__(self, kernel: str, device: Device, grid: tuple[int, int, int], block: tuple[int, int, int],
                 shared_mem: int, registers: int, registers_source: str, signal: Signal) -> None:
        self.kernel = kernel
        self.device = device.name
        self.grid, self.block, self.shared_mem = grid, block, shared_mem
        self.registers, self.registers_source = registers, registers_source
        self.layers: tuple[str, ...] = LAYERS
        self._context = device.context
        self._signal: Signal | None = signal
        self._record: DispatchRecord | None = None

    @property
    def done(self) -> bool:
        return self._record is not None or (self._signal is not None and self._signal.done)

    def wait(self) -> LaunchReport:
        """Block until the kernel completed; raises DeviceFault/LaunchTimeout if it (or an earlier
        launch on the device) faulted."""
        if self._record is None:
            assert self._signal is not None
            self._context.wait(self._signal)
            self._record = completion_record(self._signal)
            if self._record is None or self._record.result is None:
                raise CudaError("cudaErrorUnknown", f"[launch {self.kernel}] completed without a dispatch record")
            self._signal = None  # the signal can go back to the runtime
        return self

    @property
    def counters(self) -> Counters:
        rec = self.wait()._record
        assert rec is not None and rec.result is not None
        return rec.result.counters

    @property
    def children(self) -> list[Any]:
        """The kernels this launch's threads launched (dynamic parallelism), in the order they ran:
        each has `kernel`, `grid`, `block`, `shared_mem`, `stream` ('per-block', 'tail',
        'fire-and-forget', 'created', ...), `depth`, `result.counters` and its own `children`.
        `counters` of this report include theirs (see docs/device-runtime.md).

        Example:
            >>> import numpy as np, strata.cuda as cuda
            >>> mod = cuda.compile('''__global__ void c(int* x) { x[threadIdx.x] += 1; }
            ... extern "C" __global__ void p(int* x) { if (threadIdx.x == 0) c<<<1, 4>>>(x); }''')
            >>> x = cuda.zeros(4, np.int32)
            >>> r = mod.get_function("p")(1, 32, (x,))
            >>> [(k.kernel, k.stream, k.depth) for k in r.children], x.get().tolist()
            ([('_Z1cPi', 'per-block', 1)], [1, 1, 1, 1])
        """
        rec = self.wait()._record
        assert rec is not None and rec.result is not None
        return list(rec.result.children)

    @property
    def executor(self) -> str:
        """Which executor ran the kernel: 'native' (compiled to CPU code) or 'reference' (see docs/executor.md)."""
        rec = self.wait()._record
        assert rec is not None and rec.result is not None
        return rec.result.executor

    @property
    def modeled(self) -> ModeledTime:
        rec = self.wait()._record
        assert rec is not None and rec.modeled is not None
        return rec.modeled

    @property
    def wall_time_s(self) -> float:
        """Host seconds the emulator spent executing the kernel (not device time)."""
        rec = self.wait()._record
        assert rec is not None
        return rec.wall_s

    @property
    def modeled_time_s(self) -> float:
        return self.modeled.seconds

    @property
    def device_start(self) -> float:
        """Modeled device time (s) the kernel started at on the device timeline."""
        rec = self.wait()._record
        assert rec is not None
        return rec.start

    @property
    def device_end(self) -> float:
        rec = self.wait()._record
        assert rec is not None
        return rec.end

    def __str__(self) -> str:
        c = self.counters
        return (f"{self.kernel}<<<{self.grid}, {self.block}, {self.shared_mem}>>> on virtual {self.device}: "
                f"{c.total_thread_instructions:,} thread-instructions, SIMT efficiency {c.simt_efficiency:.0%}, "
                f"{c.global_bytes:,} global bytes (coalescing {c.coalescing_efficiency:.0%}); "
                f"{self.modeled}; emulated in {self.wall_time_s * 1e3:.1f} ms wall")

    def __repr__(self) -> str:
        state = "done" if self.done else "queued"
        return f"<LaunchReport {self.kernel}<<<{self.grid}, {self.block}>>> {state}>"


class Kernel:
    """A kernel in a module (cuFunction). Call it or use `launch`."""

    def __init__(self, module: Module, fn: Function, name: str) -> None:
        self.module = module
        self.fn = fn
        self.name = name
        self._regs: tuple[int, str] | None = None
        self.max_dynamic_shared_size_bytes: int | None = None  # None: CUDA's default opt-in limit
        # launch shapes that passed _validate, per device and context generation (every input of the check)
        self._validated: set[tuple[Any, ...]] = set()

    @property
    def attributes(self) -> FuncAttributes:
        """cudaFuncGetAttributes on the current device."""
        device = current_device()
        regs, _ = self.registers()
        static_smem = self.module.loaded(device).program.shared_bytes(self.fn.name, 0)
        return FuncAttributes(
            num_regs=regs, shared_size_bytes=static_smem, const_size_bytes=self.module.const_bytes,
            local_size_bytes=self.local_bytes(), max_threads_per_block=self.max_threads_per_block(device),
            max_dynamic_shared_size_bytes=self._dynamic_limit(device, static_smem),
            ptx_version=self.module.ir.version[0] * 10 + self.module.ir.version[1],
            binary_version=device.major * 10 + device.minor)

    def set_attribute(self, attribute: str, value: int) -> None:
        """cudaFuncSetAttribute. Supported: 'max_dynamic_shared_size_bytes' (opt in above 48 KiB of
        dynamic shared memory, up to sharedMemPerBlockOptin minus the kernel's static shared memory)."""
        if attribute != "max_dynamic_shared_size_bytes":
            raise CudaError("cudaErrorInvalidValue", f"[set_attribute] unsupported attribute {attribute!r} "
                            "(supported: 'max_dynamic_shared_size_bytes')")
        device = current_device()
        static_smem = self.module.loaded(device).program.shared_bytes(self.fn.name, 0)
        limit = device.spec.shared_mem_per_block_optin - static_smem
        if not 0 <= value <= limit:
            raise CudaError("cudaErrorInvalidValue",
                            f"[set_attribute {self.name}] max_dynamic_shared_size_bytes must be in 0..{limit} "
                            f"(sharedMemPerBlockOptin {device.spec.shared_mem_per_block_optin} - static "
                            f"{static_smem}), got {value}")
        self.max_dynamic_shared_size_bytes = value

    def local_bytes(self) -> int:
        """Local memory per thread (the function's local depot)."""
        device = current_device()
        jf = self.module.loaded(device).program.functions.get(self.fn.name)
        return int(getattr(jf, "local_size", 0))

    def max_threads_per_block(self, device: Device) -> int:
        """The largest block this kernel can launch with: the device limit, `__launch_bounds__`,
        and registers (when ptxas counted them)."""
        limit = device.spec.max_threads_per_block
        maxntid = self.fn.directives.get("maxntid") or self.fn.directives.get("reqntid")
        if maxntid:
            limit = min(limit, int(np.prod(maxntid)))
        regs, source = self.registers()
        if source == "ptxas" and regs:
            limit = min(limit, device.spec.regs_per_block // (-(-regs // 8) * 8) // 32 * 32)
        return limit

    def _static_smem(self, device: Device) -> int:
        return int(self.module.loaded(device).program.shared_bytes(self.fn.name, 0))

    def _dynamic_limit(self, device: Device, static_smem: int) -> int:
        if self.max_dynamic_shared_size_bytes is not None:
            return self.max_dynamic_shared_size_bytes
        return max(0, device.spec.shared_mem_per_block - static_smem)

    @property
    def params(self) -> list[Param]:
        return self.fn.params

    def __call__(self, grid: Dim3, block: Dim3, args: Sequence[Any], shared_mem: int = 0,
                 stream: Stream | None = None) -> LaunchReport:
        return self.launch(grid, block, args, shared_mem=shared_mem, stream=stream)

    def launch(self, grid: Dim3, block: Dim3, args: Sequence[Any], *, shared_mem: int = 0,
               stream: Stream | None = None, cluster_dims: Dim3 | None = None) -> LaunchReport:
        """Launch on the current device: `kernel<<<grid, block, shared_mem, stream>>>(*args)`.

        Returns as soon as the dispatch packet is queued (STRATA_LAUNCH_BLOCKING=1: after it ran).

        Args:
            grid, block: an int or a tuple of up to 3 ints.
            args: one per PTX parameter: a DeviceArray or int for pointers, NumPy scalars for values.
            shared_mem: dynamic shared memory per block, bytes.
            stream: the stream to queue on (default: the default stream).
            cluster_dims: thread-block cluster dims, as cudaLaunchKernelEx's
                cudaLaunchAttributeClusterDimension (default: the kernel's `__cluster_dims__`, if any).
        Raises:
            TypeError: wrong argument count or type (names the parameter).
            InvalidLaunchConfig: grid/block/shared memory outside the device's limits.
            DeviceFault, LaunchTimeout: the sticky error of an earlier faulted launch on this device.
        """
        return self._launch(grid, block, args, shared_mem, stream, cooperative=False, cluster_dims=cluster_dims)

    def launch_cooperative(self, grid: Dim3, block: Dim3, args: Sequence[Any], *, shared_mem: int = 0,
                           stream: Stream | None = None) -> LaunchReport:
        """cudaLaunchCooperativeKernel: launch with every block of the grid resident at once, so the
        kernel may synchronize the whole grid with cooperative groups' `this_grid().sync()`.

        The grid must fit on the device at once: at most `max_cooperative_blocks(block, shared_mem)`
        blocks (the occupancy calculator's blocks per SM times the SM count), as CUDA requires.

        Example:
            >>> import numpy as np, strata.cuda as cuda
            >>> k = cuda.compile('''
            ... #include <cooperative_groups.h>
            ... extern "C" __global__ void k(int* x) {
            ...   cooperative_groups::grid_group g = cooperative_groups::this_grid();
            ...   atomicAdd(x, 1); g.sync(); x[1 + g.thread_rank()] = x[0]; }''').get_function("k")
            >>> x = cuda.to_device(np.zeros(1 + 4 * 64, np.int32))
            >>> _ = k.launch_cooperative(4, 64, (x,)); int(x.get()[1:].min())  # every thread saw all 256
            256

        Raises:
            CudaError: cudaErrorCooperativeLaunchTooLarge when the grid has more blocks than fit at once.
            TypeError, InvalidLaunchConfig: as `launch`.
        """
        return self._launch(grid, block, args, shared_mem, stream, cooperative=True)

    def _launch(self, grid: Dim3, block: Dim3, args: Sequence[Any], shared_mem: int, stream: Stream | None, *,
                cooperative: bool, cluster_dims: Dim3 | None = None) -> LaunchReport:
        device = current_device() if stream is None else _device_of(stream)
        settings = config.settings()
        g, b = _dim3(grid, "grid"), _dim3(block, "block")
        regs, source = self.registers()
        api = "cudaLaunchCooperativeKernel" if cooperative else "cudaLaunchKernel"
        with trace.span("L3", api, kernel=self.name, grid=g, block=b, shared_mem=shared_mem):
            checked = (device.index, device.context.generation, g, b, shared_mem, self.max_dynamic_shared_size_bytes)
            if checked not in self._validated:  # (a loop's launches check one shape once)
                self._validate(device, g, b, shared_mem, regs)
                if len(self._validated) > 64:
                    self._validated.clear()
                self._validated.add(checked)
            cluster = self._cluster(g, cluster_dims)
            if cooperative:
                self._check_coresident(device, g, b, shared_mem, regs)
            params = pack_arguments(self.name, self.fn.params, args)
            loaded = self.module.loaded(device)
            signal = launch_kernel(device.context.stream(stream), loaded, self.fn.name,
                                   LaunchConfig(g, b, shared_mem, params, cluster=cluster), registers=regs,
                                   registers_source=source,
                                   blocking=settings.launch_blocking, cooperative=cooperative)
        report = LaunchReport(self.name, device, g, b, shared_mem, regs, source, signal)
        if settings.debug >= 1:
            print(f"[strata] {report.wait()}", file=sys.stderr)
        return report

    def max_cooperative_blocks(self, block: Dim3, shared_mem: int = 0, device: Device | None = None) -> int:
        """The most blocks of `block` threads (and `shared_mem` dynamic bytes) one cooperative launch may
        have on `device` (default: the current one): the occupancy calculator's resident blocks per SM
        times the SM count (0 if such a block cannot run at all)."""
        device = device or current_device()
        b = _dim3(block, "block")
        try:
            per_sm = occupancy(device.spec, b[0] * b[1] * b[2], self.registers()[0],
                               self._static_smem(device) + shared_mem).blocks_per_sm
        except InvalidLaunchConfig:
            per_sm = 0
        return per_sm * device.spec.sm_count

    def _check_coresident(self, device: Device, g: tuple[int, int, int], b: tuple[int, int, int],
                          shared_mem: int, regs: int) -> None:
        limit = self.max_cooperative_blocks(b, shared_mem, device)
        blocks = g[0] * g[1] * g[2]
        if blocks > limit:
            raise CudaError("cudaErrorCooperativeLaunchTooLarge",
                            f"[launch_cooperative {self.name}] grid of {blocks} blocks exceeds the {limit} that can "
                            f"be resident at once on {device.name}: {limit // device.spec.sm_count} blocks of "
                            f"{b[0] * b[1] * b[2]} threads per SM ({regs} registers/thread, "
                            f"{self._static_smem(device) + shared_mem} bytes of shared memory per block) x "
                            f"{device.spec.sm_count} SMs")

    def registers(self) -> tuple[int, str]:
        """Registers per thread: `ptxas -v` when ptxas is present, else an estimate from the PTX."""
        if self._regs is None:
            n = ptxas_registers(self.module.ptx, self.fn.name)
            self._regs = (n, "ptxas") if n is not None else (register_pressure(self.fn), "estimate")
        return self._regs

    def _cluster(self, g: tuple[int, int, int], cluster_dims: Dim3 | None) -> tuple[int, int, int]:
        """The launch's cluster dims ((0, 0, 0): the kernel's own), checked against the grid and the kernel's
        `__cluster_dims__` (InvalidLaunchConfig cudaErrorInvalidClusterSize)."""
        compiled = self.fn.directives.get("reqnctapercluster")
        fixed = _dim3(tuple(compiled[:3]), "__cluster_dims__") if compiled else None
        dims = _dim3(cluster_dims, "cluster_dims") if cluster_dims is not None else fixed
        if dims is None:
            return (0, 0, 0)
        why = ""
        if fixed is not None and dims != fixed:
            why = f"the kernel was compiled with __cluster_dims__{fixed}"
        elif any(n % c for n, c in zip(g, dims, strict=True)):
            why = f"the grid {g} is not a whole number of clusters"
        elif dims[0] * dims[1] * dims[2] > MAX_PORTABLE_CLUSTER:
            why = f"a portable cluster holds at most {MAX_PORTABLE_CLUSTER} blocks"
        if why:
            raise InvalidLaunchConfig("cudaErrorInvalidClusterSize",
                                      f"[launch {self.name}] cluster dims {dims}: {why}")
        return (0, 0, 0) if cluster_dims is None else dims

    def _validate(self, device: Device, g: tuple[int, int, int], b: tuple[int, int, int], shared_mem: int,
                  regs: int) -> None:
        spec = device.spec
        threads = b[0] * b[1] * b[2]
        for axis, (n, lim) in enumerate(zip(b, spec.max_block_dim, strict=True)):
            if n > lim:
                raise InvalidLaunchConfig(message=f"[launch {self.name}] blockDim.{'xyz'[axis]}={n} exceeds "
                                          f"the device limit {lim}")
        if threads > spec.max_threads_per_block:
            raise InvalidLaunchConfig(message=f"[launch {self.name}] {threads} threads per block exceeds "
                                      f"maxThreadsPerBlock={spec.max_threads_per_block}")
        for axis, (n, lim) in enumerate(zip(g, spec.max_grid_dim, strict=True)):
            if n > lim:
                raise InvalidLaunchConfig(message=f"[launch {self.name}] gridDim.{'xyz'[axis]}={n} exceeds "
                                          f"the device limit {lim}")
        maxntid = self.fn.directives.get("maxntid") or self.fn.directives.get("reqntid")
        if maxntid and threads > int(np.prod(maxntid)):
            raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources",
                                      f"[launch {self.name}] {threads} threads per block exceeds the kernel's "
                                      f"__launch_bounds__ of {int(np.prod(maxntid))}")
        if shared_mem < 0:
            raise InvalidLaunchConfig("cudaErrorInvalidValue", f"[launch {self.name}] dynamic shared memory "
                                      f"must be >= 0 bytes, got {shared_mem}")
        limit = self._dynamic_limit(device, self._static_smem(device))
        if shared_mem > limit:
            how = ("raise it with kernel.set_attribute('max_dynamic_shared_size_bytes', n), up to "
                   f"sharedMemPerBlockOptin={spec.shared_mem_per_block_optin} minus static shared memory"
                   if self.max_dynamic_shared_size_bytes is None else "set by max_dynamic_shared_size_bytes")
            raise InvalidLaunchConfig("cudaErrorInvalidValue",
                                      f"[launch {self.name}] dynamic shared memory {shared_mem} bytes exceeds "
                                      f"the kernel's limit of {limit} bytes ({how})")
        if regs * threads > spec.regs_per_block and self.registers()[1] == "ptxas":
            raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources",
                                      f"[launch {self.name}] {threads} threads x {regs} registers = "
                                      f"{regs * threads} exceeds regsPerBlock={spec.regs_per_block}")
        local = self.local_bytes()
        if local > 512 * 1024:  # CUDA's local memory per thread
            raise InvalidLaunchConfig("cudaErrorLaunchOutOfResources",
                                      f"[launch {self.name}] {local:,} bytes of local memory per thread exceeds "
                                      "the limit of 524,288 (512 KiB)")


def launch_cooperative_kernel(kernel: Kernel, grid: Dim3, block: Dim3, args: Sequence[Any], shared_mem: int = 0,
                              stream: Stream | None = None) -> LaunchReport:
    """cudaLaunchCooperativeKernel(func, gridDim, blockDim, args, sharedMem, stream): `kernel.launch_cooperative`
    in the runtime API's spelling; every block is resident at once, so `cg::this_grid().sync()` works.

    Example:
        >>> import numpy as np, strata.cuda as cuda
        >>> k = cuda.compile('''
        ... #include <cooperative_groups.h>
        ... extern "C" __global__ void k(int* x) { x[0] = cooperative_groups::this_grid().is_valid(); }
        ... ''').get_function("k")
        >>> x = cuda.zeros(1, np.int32)
        >>> _ = cuda.launch_cooperative_kernel(k, 2, 32, (x,)); int(x.get()[0])
        1

    Raises:
        CudaError: cudaErrorCooperativeLaunchTooLarge when the grid has more blocks than fit at once.
    """
    return kernel.launch_cooperative(grid, block, args, shared_mem=shared_mem, stream=stream)


@dataclass(frozen=True)
class FuncAttributes:
    """cudaFuncAttributes / hipFuncAttributes of a kernel on a device."""

    num_regs: int
    shared_size_bytes: int  # static shared memory per block
    const_size_bytes: int
    local_size_bytes: int  # per thread
    max_threads_per_block: int
    max_dynamic_shared_size_bytes: int
    ptx_version: int  # e.g. 88 for PTX ISA 8.8
    binary_version: int  # e.g. 90 for sm_90


def _device_of(stream: Stream) -> Device:
    return Device(stream.context.device.index)


def _dim3(v: Dim3, what: str) -> tuple[int, int, int]:
    if type(v) is int and v >= 1:  # (the common case, on every launch)
        return v, 1, 1
    t = (v,) if isinstance(v, int | np.integer) else tuple(v)
    if not 1 <= len(t) <= 3:
        raise InvalidLaunchConfig(message=f"[launch] {what} must be an int or a tuple of 1 to 3 ints, got {v!r}")
    dims = []
    for x in t:
        if not isinstance(x, int | np.integer) or int(x) < 1:
            raise InvalidLaunchConfig(message=f"[launch] {what} dimensions must be positive ints, got {v!r}")
        dims.append(int(x))
    dims += [1] * (3 - len(dims))
    return dims[0], dims[1], dims[2]


