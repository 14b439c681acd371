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
from strata.cuda import DeviceArray, Kernel, Module, compile
from strata.runtime import Stream as RuntimeStream


class LibraryError(ValueError):
    """A library call rejected its arguments; `.status` is the vendor's status name
    (e.g. 'CUBLAS_STATUS_INVALID_VALUE') and the message names the argument."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class KernelSet:
    """A library's CUDA C++ kernels, compiled on first use (NVRTC, then the PTX cache) and kept."""

    def __init__(self, library: str, source: str, *, name_expressions: Sequence[str] = (),
                 options: Sequence[str] = ()) -> None:
        self.library = library
        self.source = source
        self.name_expressions = tuple(name_expressions)
        self.options = tuple(options)
        self._module: Module | None = None
        self._lock = threading.Lock()

    @property
    def module(self) -> Module:
        with self._lock:
            if self._module is None:
                self._module = compile(self.source, options=self.options, name_expressions=self.name_expressions,
                                       name=f"strata_{self.library}.cu")
            return self._module

    def get(self, name: str) -> Kernel:
        """The kernel `name` (or a name expression such as 'gemm_tiled<float>')."""
        return self.module.get_function(name)


@contextlib.contextmanager
def library_call(api: str, *, cuda_name: str, rocm_name: str, **args: Any) -> Iterator[dict[str, Any]]:
    """The L4 trace span of one library call; add `kernel=` (the choice made) to the yielded dict."""
    with trace.span("L4", api, cuda=cuda_name, rocm=rocm_name, **args) as ev:
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
