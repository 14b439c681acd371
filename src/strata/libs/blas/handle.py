"""The BLAS handle (cublasHandle_t / rocblas_handle): the device and stream a library's kernels run on,
its workspace, and the kernel each call chose.

A handle is bound to the device that was current when it was created and to one stream of that device
(`None`: the default stream, legacy or per-thread as `STRATA_DEFAULT_STREAM` says). Every kernel of
every call on the handle is queued on that stream, so calls on one handle run in order and overlap
with other streams' work; results returned to the host (`dot`, `nrm2`, `asum`, `iamax`: host pointer
mode) wait for their own stream only.

Example:
    >>> import strata.cuda as cuda
    >>> s = cuda.Stream()
    >>> h = create_handle(s)
    >>> h.stream is s, h.last_kernel
    (True, None)
    >>> set_stream(h, None); h.stream is None
    True
    >>> destroy_handle(h)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from strata.cuda import Device, DeviceArray, Stream, current_device
from strata.libs.blas.checks import INVALID, NOT_INITIALIZED
from strata.libs.common import LibraryHandle, LibraryKernel, check_live_handle, check_stream


class Handle(LibraryHandle):
    """A BLAS library context: device, stream, workspace, `last_kernel` (the kernel, or kernels joined
    by '+', that the last call launched; None before any call and after a quick return) and
    `last_launches` (their LaunchReports: counters and modeled time, read once they completed)."""

    library = "blas"
    workspace_min = 1 << 16  # split-K partial products

    def __init__(self, device: Device, stream: Stream | None) -> None:
        super().__init__(device, stream)
        self._scratch: DeviceArray | None = None

    def launch(self, kernel: LibraryKernel, grid: Sequence[int] | int, block: Sequence[int] | int,
               args: Sequence[Any]) -> None:
        """Queue one kernel on the handle's stream."""
        self.last_launches.append(kernel.launch(tuple(grid) if not isinstance(grid, int) else grid,
                                                tuple(block) if not isinstance(block, int) else block, args,
                                                stream=self.queue()))

    def scratch(self) -> DeviceArray:
        """A small device buffer for reduction partials and results (4 KiB)."""
        if self._scratch is None:
            self._scratch = DeviceArray((4096,), np.uint8, self.device)
        return self._scratch

    def read(self, address: int, dtype: Any, count: int = 1) -> np.ndarray:
        """Copy `count` values back to the host on the handle's stream (waits for the stream's work)."""
        out = np.empty(count, dtype)
        self.device.context.memcpy_dtoh(out, address, self.queue(), asynchronous=False)
        return out


def create_handle(stream: Stream | None = None) -> Handle:
    """cublasCreate + cublasSetStream: a handle on the current device, its kernels queued on `stream`.

    Args:
        stream: a strata.cuda Stream of the current device, or None for the default stream.
    Returns:
        Handle.
    Raises:
        LibraryError: CUBLAS_STATUS_INVALID_VALUE if `stream` is not a stream of the current device.
    """
    device = current_device()
    check_stream("create_handle", stream, device, INVALID)
    return Handle(device, stream)


def destroy_handle(handle: Handle) -> None:
    """cublasDestroy: release the handle's workspace; later calls with it raise NOT_INITIALIZED."""
    check_handle(handle, "destroy_handle")
    for buf in (handle._workspace, handle._scratch):
        if buf is not None and not buf.freed:
            buf.free()
    handle._workspace = handle._scratch = None
    handle.destroyed = True


def set_stream(handle: Handle, stream: Stream | None) -> None:
    """cublasSetStream: later calls queue their kernels on `stream` (None: the default stream).

    Raises:
        LibraryError: CUBLAS_STATUS_INVALID_VALUE for a stream of another device.
    """
    check_handle(handle, "set_stream")
    check_stream("set_stream", stream, handle.device, INVALID)
    handle.stream = stream


def check_handle(handle: Any, routine: str) -> None:
    """Raise CUBLAS_STATUS_NOT_INITIALIZED unless `handle` is a live Handle."""
    check_live_handle(handle, Handle, routine, NOT_INITIALIZED)
