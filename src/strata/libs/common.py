"""What every strata math library shares: compile-once kernel sets, the L4 trace event of a call,
argument checks in the vendors' style, and device pointers from arrays or addresses.

A library is CUDA C++ source compiled through L3 (NVRTC, the PTX disk cache) the first time one of its
kernels is needed, once per process; later calls reuse the loaded module. Each public library call
is an L4 trace span naming the API, the vendor functions it plays the role of (`cublasSgemm` /
`rocblas_sgemm`), and the kernel the library chose, linked by correlation id to the launches below.

Example:
    >>> import numpy as np
    >>> kernels = KernelSet("demo", 'extern "C" __global__ void fill(float* x, float v, int n) {'
    ...     ' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] = v; }')
    >>> import strata.cuda as cuda
    >>> x = cuda.empty(10, np.float32)
    >>> with library_call("demo.fill", cuda_name="none", rocm_name="none", kernel="fill"):
    ...     _ = kernels.get("fill")(1, 32, (x, np.float32(2), np.int32(10)))
    >>> x.get().tolist() == [2.0] * 10
    True
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np

from strata import trace
from strata.cuda import Device, DeviceArray, Kernel, LaunchReport, Module, compile, current_device
from strata.hip.amd import CodeObjectKernel, CodeObjectModule
from strata.hw.amdgpu.decoder import decode
from strata.libs import amd
from strata.runtime import Stream as RuntimeStream

# the vendors' libraries each strata library plays, (NVIDIA, AMD), by the prefix of its API names
LIBRARY_NAMES = {"blas": ("cuBLAS", "rocBLAS"), "dnn": ("cuDNN", "MIOpen"), "solver": ("cuSOLVER", "rocSOLVER"),
                 "rand": ("cuRAND", "rocRAND"), "sparse": ("cuSPARSE", "rocSPARSE")}


class LibraryError(ValueError):
    """A library call rejected its arguments; `.status` is the vendor's status name
    (e.g. 'CUBLAS_STATUS_INVALID_VALUE') and the message names the argument."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class KernelSet:
    """A library's CUDA C++ kernels, compiled on first use per kind of device and kept: NVRTC and the
    PTX cache for NVIDIA devices (the cuBLAS/cuDNN role), clang-19 for gfx942 code objects through
    `strata.libs.amd` for AMD devices (the rocBLAS/MIOpen role). `get` returns a kernel that launches
    on whichever device its stream (or the current device) belongs to."""

    def __init__(self, library: str, source: str, *, name_expressions: Sequence[str] = (),
                 options: Sequence[str] = ()) -> None:
        self.library = library
        self.source = source
        self.name_expressions = tuple(name_expressions)
        self.options = tuple(options)
        self._module: Module | None = None
        self._amd: dict[str, tuple[CodeObjectModule, dict[str, str]]] = {}
        self._kernels: dict[str, LibraryKernel] = {}
        self._lock = threading.Lock()

    @property
    def module(self) -> Module:
        """The NVRTC-compiled module (NVIDIA devices)."""
        with self._lock:
            if self._module is None:
                self._module = compile(self.source, options=self.options, name_expressions=self.name_expressions,
                                       name=f"strata_{self.library}.cu")
            return self._module

    def amd_module(self, arch: str = "gfx942") -> tuple[CodeObjectModule, dict[str, str]]:
        """The clang-compiled code object for an AMD `arch` and the mangled name of each name expression.

        Raises:
            ClangNotFound: clang-19 is absent (`make amd` installs it).
        """
        with self._lock:
            got = self._amd.get(arch)
            if got is None:
                # (the compile is traced at L3 as hiprtcCompileProgram, as NVRTC's is)
                got = self._amd[arch] = amd.compile_kernels(self.library, self.source,
                                                            name_expressions=self.name_expressions,
                                                            options=self.options, arch=arch)
            return got

    def kernel_for(self, name: str, device: Device) -> Kernel | CodeObjectKernel:
        """The kernel `name` compiled for `device`'s kind (a PTX Kernel or a code-object kernel)."""
        if device.spec.vendor == "amd":
            module, lowered = self.amd_module(device.spec.arch)
            return module.get_function(lowered.get(name, name))
        return self.module.get_function(name)

    def get(self, name: str) -> LibraryKernel:
        """The kernel `name` (or a name expression such as 'gemm_tiled<float>'); it is compiled for a
        device kind when first launched there."""
        k = self._kernels.get(name)
        if k is None:
            k = self._kernels[name] = LibraryKernel(self, name)
        return k


class LibraryKernel:
    """One kernel of a KernelSet, launchable on NVIDIA and AMD devices alike: a launch resolves the
    device (the stream's, else the current one) and runs the kernel compiled for it."""

    def __init__(self, kernels: KernelSet, name: str) -> None:
        self.kernels = kernels
        self.name = name
        self._compiled: dict[str, Kernel | CodeObjectKernel] = {}  # by device architecture

    def __repr__(self) -> str:
        return f"<LibraryKernel {self.kernels.library}:{self.name}>"

    def on(self, device: Device | None = None) -> Kernel | CodeObjectKernel:
        """The compiled kernel for `device` (default: the current device)."""
        device = device if device is not None else current_device()
        k = self._compiled.get(device.spec.arch)
        if k is None:
            k = self._compiled[device.spec.arch] = self.kernels.kernel_for(self.name, device)
        return k

    def launch(self, grid: Any, block: Any, args: Sequence[Any], *, shared_mem: int = 0,
               stream: Any = None) -> LaunchReport:
        """Launch as `strata.cuda.Kernel.launch` does, on the stream's device."""
        device = current_device() if stream is None else Device(stream.context.device.index)
        kernel = self.on(device)
        _launched[kernel.name] = (self, device)
        if isinstance(kernel, Kernel):
            _launched[kernel.fn.name] = (self, device)  # the PTX entry's (mangled) name, as L0 reports it
        return kernel.launch(grid, block, args, shared_mem=shared_mem, stream=stream)

    def machine_code(self, device: Device | None = None) -> list[str]:
        """The kernel's instructions as compiled for `device`: gfx942 disassembly (llvm-objdump's text)
        on an AMD device, PTX opcodes on an NVIDIA one."""
        kernel = self.on(device)
        if isinstance(kernel, CodeObjectKernel):
            return [ins.text for ins in decode(kernel.info.code, kernel.name)]
        return [ins.full_opcode for ins in kernel.fn.body]

    def __call__(self, grid: Any, block: Any, args: Sequence[Any], shared_mem: int = 0,
                 stream: Any = None) -> LaunchReport:
        return self.launch(grid, block, args, shared_mem=shared_mem, stream=stream)

    def __getattr__(self, attr: str) -> Any:
        # attributes, set_attribute, ...: those of the kernel compiled for the current device
        if attr.startswith("_") or attr in ("kernels", "name"):
            raise AttributeError(attr)
        return getattr(self.on(), attr)


# the library kernels launched so far, by the name their launches carry in the trace (a mangled name
# for a code object, the name expression for PTX), for tools that walk a call down to its instructions
_launched: dict[str, tuple[LibraryKernel, Device]] = {}


def launched_kernel(name: str) -> tuple[LibraryKernel, Device] | None:
    """The library kernel (and the device it last ran on) that launched under `name` in this process."""
    return _launched.get(name)


@contextlib.contextmanager
def library_call(api: str, *, cuda_name: str, rocm_name: str, **args: Any) -> Iterator[dict[str, Any]]:
    """The L4 trace span of one library call; add `kernel=` (the choice made) to the yielded dict.

    The span carries both vendors' function names, and `platform` ('cuda' or 'rocm') and `library`
    (cuBLAS or rocBLAS, ...) by the kind of the current device: on an AMD device the call plays the
    ROCm library and its kernels are gfx942 code objects."""
    extra: dict[str, str] = {}
    if trace.recording():  # (the device is looked up only for the trace)
        amd_device = current_device().spec.vendor == "amd"
        family = LIBRARY_NAMES.get(api.split(".", 1)[0])
        extra["platform"] = "rocm" if amd_device else "cuda"
        if family is not None:
            extra["library"] = family[1] if amd_device else family[0]
    with trace.span("L4", api, cuda=cuda_name, rocm=rocm_name, **extra, **args) as ev:
        yield ev


def pointer(x: DeviceArray | int, what: str, status: str = "INVALID_VALUE") -> int:
    """The device address of a DeviceArray or an int address."""
    if isinstance(x, DeviceArray):
        if x.freed:
            raise LibraryError(status, f"{what} was freed")
        return x.ptr
    if isinstance(x, int | np.integer) and not isinstance(x, bool):
        return int(x)
    raise LibraryError(status, f"{what} must be a DeviceArray or a device address, got {type(x).__name__}")


class LibraryHandle:
    """What every library's handle holds (cublasHandle_t, cudnnHandle_t, cusolverDnHandle_t, cusparseHandle_t):
    its device, its stream (None: the device's default stream at call time), `last_kernel` (the kernels the
    last call launched, joined by '+'; None before any call) and `last_launches` (their LaunchReports), and
    whether it was destroyed. Each library subclasses it; `library` names the library in reprs and errors."""

    library = "library"
    workspace_min = 4096  # the smallest workspace allocated (bytes)

    def __init__(self, device: Device, stream: RuntimeStream | None) -> None:
        self.device = device
        self.stream = stream
        self.last_kernel: str | None = None
        self.last_launches: list[LaunchReport] = []
        self.destroyed = False
        self._workspace: DeviceArray | None = None

    def __repr__(self) -> str:
        state = " destroyed" if self.destroyed else ""
        return f"<{self.library}.Handle device={self.device.index} stream={self.stream!r}{state}>"

    def begin(self) -> None:
        """Start a library call: forget the previous call's kernels."""
        self.last_kernel = None
        self.last_launches = []

    def queue(self) -> RuntimeStream:
        """The stream kernels go to: the handle's, or the device's default stream at call time."""
        return self.stream if self.stream is not None else self.device.context.stream(None)

    def note(self, name: str) -> None:
        """Add a launched kernel's name to `last_kernel`."""
        self.last_kernel = name if self.last_kernel is None else f"{self.last_kernel}+{name}"

    def workspace(self, nbytes: int) -> DeviceArray:
        """A device buffer of at least `nbytes`, kept across calls and grown as needed."""
        if self._workspace is None or self._workspace.nbytes < nbytes:
            # the old buffer is dropped, not freed: calls queued before may still use it, and cudaFree would
            # wait for the whole device inside this library call; a dropped array is freed once it is idle
            self._workspace = DeviceArray((max(nbytes, self.workspace_min),), np.uint8, self.device)
        return self._workspace


def check_live_handle(handle: Any, cls: type[LibraryHandle], routine: str, status: str) -> None:
    """Raise LibraryError(status) unless `handle` is a live `cls` (each library's NOT_INITIALIZED check)."""
    if not isinstance(handle, cls):
        raise LibraryError(status, f"[{routine}] handle must be a {cls.library} Handle from create_handle, got "
                                   f"{type(handle).__name__}")
    if handle.destroyed:
        raise LibraryError(status, f"[{routine}] the handle was destroyed")


def check_stream(routine: str, stream: Any, device: Any, status: str) -> None:
    """Raise LibraryError(status) unless `stream` is None or a stream of `device` (a library handle's
    create/set_stream check, shared by every library)."""
    if stream is None:
        return
    if not isinstance(stream, RuntimeStream):
        raise LibraryError(status, f"[{routine}] stream must be a strata.cuda.Stream or None, got "
                                   f"{type(stream).__name__}")
    if stream.context is not device.context:
        raise LibraryError(status, f"[{routine}] the stream belongs to another device than the handle's "
                                   f"(device {device.index})")


def require(condition: bool, status: str, message: str) -> None:
    """Raise LibraryError(status, message) unless `condition`."""
    if not condition:
        raise LibraryError(status, message)
