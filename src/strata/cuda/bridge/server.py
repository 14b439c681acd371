"""The strata runtime process of a whole CUDA program: serves the replacement libcudart over two pipes.

`run(argv)` starts the program with the pipes' ends named in `STRATA_CUDART_FDS` and the library's folder
first on `LD_LIBRARY_PATH`, then answers its calls with `strata.cuda` on the virtual GPU until the program
exits. Device memory, modules, streams and events live here; handles the program sees are device
addresses or small integers. Device `printf` output is collected and sent back in the next reply, so the
library writes it to the program's own stdout in order with the program's output; a kernel fault's
report goes back the same way to its stderr, once. Why a process and not an embedded interpreter:
ARCHITECTURE.md ("Whole CUDA programs").
"""

from __future__ import annotations

import contextlib
import fcntl
import io
import mmap
import os
import select
import signal
import struct
import subprocess
import sys
import threading
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import numpy as np

import strata.cuda as cuda
from strata import config, trace
from strata.cuda import fatbin
from strata.cuda.bridge import link
from strata.cuda.bridge.protocol import ARENA_BYTES, LAUNCH, PROP_FIELDS, REPLY, REQUEST, STAGING_BYTES, Op
from strata.cuda.memcpy import memcpy_mapped
from strata.cuda.params import _VALUE_TYPES
from strata.driver.hostmem import HOST_MEMORY
from strata.errors import CudaError, DeviceFault, PTXSyntaxError, UnsupportedInstruction
from strata.hw.memory import GLOBAL_BASE, UVA_RANGE, UVA_SLOTS, share_device_memory

# Handlers of requests for the host libraries above L3 (cuRAND, ...): each library registers its own
# (`register_handler`), so this layer never imports upward; `strata run` imports them.
_HANDLERS: dict[int, Callable[[bytes], bytes | None]] = {}


def register_handler(op: Op, handler: Callable[[bytes], bytes | None]) -> None:
    """Serve requests `op` with `handler(body) -> reply payload`; it raises CudaError (or a subclass of
    ValueError/TypeError) for errors, as the built-in handlers do."""
    _HANDLERS[int(op)] = handler


_SERVING: list[Server] = []  # the Server answering requests in this process (one per `strata run`)


def stream_for(handle: int) -> cuda.Stream | None:
    """The strata stream behind a stream handle the program holds (None for the default stream), for the
    handlers of host libraries whose calls carry one (cublasSetStream).

    Raises:
        CudaError: cudaErrorInvalidResourceHandle for a handle that names no stream.
    """
    if handle in (0, 1, 2):  # default, cudaStreamLegacy, cudaStreamPerThread
        return None
    if not _SERVING:
        raise CudaError("cudaErrorInvalidResourceHandle", f"no stream {handle:#x}: no program is being served")
    return _SERVING[-1]._stream(handle)


class _Collector(io.TextIOBase):
    """Stands in for sys.stdout while serving: device printf output (written by engine threads) is kept
    until the next reply carries it to the program."""

    def __init__(self) -> None:
        self._parts: list[str] = []
        self._lock = threading.Lock()

    def write(self, s: str) -> int:
        with self._lock:
            self._parts.append(s)
        return len(s)

    def flush(self) -> None:
        pass

    def drain(self) -> bytes:
        with self._lock:
            text, self._parts = "".join(self._parts), []
        return text.encode()


_LIMIT_NAMES = {0: "cudaLimitStackSize", 2: "cudaLimitMallocHeapSize", 4: "cudaLimitDevRuntimePendingLaunchCount"}

# Requests that read or write device memory (managed memory goes to the device first) and requests that
# synchronize (managed memory comes back to the host after them).
_TOUCHES_DEVICE = frozenset({Op.HTOD, Op.DTOH, Op.DTOD, Op.MEMSET, Op.HTOD_SHM, Op.DTOH_SHM, Op.MEMCPY_PEER,
                             Op.CURAND_GENERATE, Op.CUBLAS_CALL, Op.MEMCPY_3D, Op.HTOD_MAPPED, Op.DTOH_MAPPED})
_SYNCHRONIZING = frozenset({Op.SYNC, Op.STREAM_SYNC, Op.EVENT_SYNC, Op.HTOD, Op.DTOH, Op.DTOD, Op.MEMSET,
                            Op.HTOD_SHM, Op.DTOH_SHM, Op.MEMCPY_3D, Op.HTOD_MAPPED, Op.DTOH_MAPPED})


@dataclass
class _Image:
    """A registered fat binary: its PTX (one per translation unit), loaded as one module at first use."""

    ptx: list[str]
    error: str | None = None
    module: cuda.Module | None = None


@dataclass
class Server:
    """Answers one program's runtime calls (see protocol.py for the wire format)."""

    rfd: int
    wfd: int
    images: dict[int, _Image] = field(default_factory=dict)
    kernels: dict[int, cuda.Kernel] = field(default_factory=dict)
    streams: dict[int, cuda.Stream] = field(default_factory=dict)
    events: dict[int, cuda.Event] = field(default_factory=dict)
    pending: CudaError | None = None  # a launch's error, for the requesting thread's next cudaGetLastError
    pendings: dict[int, CudaError] = field(default_factory=dict)  # other host threads' (by thread tag)
    thread: int = 0  # the tag of the host thread whose request is being served (its error is `pending`)
    reported: set[int] = field(default_factory=set)  # faults whose report the program already got
    out: _Collector = field(default_factory=_Collector)
    err: list[str] = field(default_factory=list)
    _next: int = 0x100
    arena: np.ndarray | None = None  # the host memory shared with the program (protocol.ARENA_BYTES)
    managed: dict[int, tuple[int, int]] = field(default_factory=dict)  # device address -> (arena offset, size)
    device_newer: bool = False  # managed memory: the device copy may be newer than the host's
    printf_fifo: int = 1 << 20  # cudaLimitPrintfFifoSize as the program set it
    device: int = 0  # the current device of the runtime process (the requesting thread's)

    def _switch(self, index: int) -> None:
        if 0 <= index < cuda.device_count():
            cuda.set_device(index)
            self.device = index
    arrays: dict[int, cuda.CudaArray] = field(default_factory=dict)
    box_stage: np.ndarray | None = None  # the staging buffer of pitched host-to-device boxes (_write_box)

    # --- managed memory: one copy on each side, moved at launches and synchronizing calls ----------
    def managed_to_device(self) -> None:
        """Before device work: the host's bytes of every managed allocation to the device (unless the
        device's copy is the newer one: host code may not touch managed memory while kernels run)."""
        if self.managed and not self.device_newer:
            for addr, (offset, size) in self.managed.items():
                cuda.memcpy(addr, self.shared(offset, size), size, cuda.MemcpyKind.HostToDevice)
        self.device_newer = bool(self.managed)

    def managed_to_host(self) -> None:
        """At a synchronizing call: the device's bytes back to the host side (once per round of work)."""
        if self.device_newer:
            cuda.synchronize()
            for addr, (offset, size) in self.managed.items():
                cuda.memcpy(self.shared(offset, size), addr, size, cuda.MemcpyKind.DeviceToHost)
            self.device_newer = False

    def shared(self, offset: int, count: int) -> np.ndarray:
        """`count` bytes of the shared arena at `offset` (what the program sees at its base + offset)."""
        if self.arena is None or offset + count > self.arena.nbytes:
            raise CudaError("cudaErrorInvalidValue", f"shared host range {offset:#x}+{count} is outside the arena")
        return self.arena[offset: offset + count]

    # --- the loop ---------------------------------------------------------------------------------
    def serve(self, child: subprocess.Popen | None = None) -> None:
        """Answer requests until the program closes its end (or exits, if `child` is given)."""
        saved = sys.stdout
        sys.stdout = self.out
        _SERVING.append(self)
        try:
            while True:
                if child is not None:
                    ready, _, _ = select.select([self.rfd], [], [], 0.2)
                    if not ready:
                        if child.poll() is not None:
                            return
                        continue
                head = self._read(REQUEST.size)
                if head is None:
                    return
                op, word, n = REQUEST.unpack(head)
                device, thread = word & 0xFFFF, word >> 16
                if thread != self.thread:  # CUDA keeps the last error per host thread
                    if self.pending is not None:  # (threads without one leave nothing behind)
                        self.pendings[self.thread] = self.pending
                    self.pending, self.thread = self.pendings.pop(thread, None), thread
                body = self._read(n) if n else b""
                if body is None:
                    return
                if device and device - 1 != self.device:  # each host thread of the program has its own device
                    self._switch(device - 1)
                self._dispatch(op, body)
        finally:
            sys.stdout = saved
            _SERVING.remove(self)

    def _read(self, n: int) -> bytes | None:
        buf = bytearray(n)
        view, got = memoryview(buf), 0
        while got < n:
            k = os.readv(self.rfd, [view[got:]])
            if k == 0:
                return None
            got += k
        return bytes(buf) if n < 4096 else buf  # type: ignore[return-value]

    def _dispatch(self, op: int, body: bytes) -> None:
        code, payload = 0, b""
        try:
            name = Op(op).name
        except ValueError:
            self._reply(1, b"", f"strata: unknown runtime request {op}\n")
            return
        if op in (Op.LAUNCH, Op.LAUNCH_COOP):
            self._pipelined_launch(body, cooperative=op == Op.LAUNCH_COOP)
            return
        try:
            if self.managed and op in _TOUCHES_DEVICE:
                self.managed_to_device()
            handler = _HANDLERS.get(op) or getattr(self, "_" + name.lower(), None)
            if handler is None:
                raise CudaError("cudaErrorNotSupported", f"{name}: no library registered to serve it")
            result = handler(body)
            payload = b"" if result is None else result
            if self.managed and op in _SYNCHRONIZING:
                self.managed_to_host()
        except CudaError as e:
            code = e.code
            self._report(e)
            if config.settings().debug >= 1 and code < 700:  # CUDA says only the code; STRATA_DEBUG says why
                self.err.append(f"strata: {name}: {e}\n")
        except fatbin.FatbinError as e:
            code = CudaError("cudaErrorNoKernelImageForDevice").code
            self.err.append(f"strata: {e}\n")
        except (PTXSyntaxError, UnsupportedInstruction) as e:
            code = CudaError("cudaErrorInvalidPtx").code
            self.err.append(f"strata: {type(e).__name__}: {e}\n")
        except (TypeError, ValueError, KeyError) as e:
            code = 1
            self.err.append(f"strata: {name}: {e}\n")
        except Exception:  # noqa: BLE001 - a bug of ours: the program gets cudaErrorUnknown and the traceback
            code = 999
            self.err.append(f"strata: internal error serving {name}:\n{traceback.format_exc()}")
        self._reply(code, payload)

    def _pipelined_launch(self, body: bytes, cooperative: bool) -> None:
        """A launch has no reply (pipelined): whatever goes wrong becomes the error the next cudaGetLastError
        returns. A reply sent here would be read as the answer to the program's next call, and every answer
        after it would arrive one call late."""
        try:
            self._launch(body, cooperative=cooperative)
        except (PTXSyntaxError, UnsupportedInstruction) as e:
            self.pending = CudaError("cudaErrorInvalidPtx", str(e))
            self.err.append(f"strata: kernel launch: {type(e).__name__}: {e}\n")
        except struct.error as e:  # a launch request shorter than its header
            self.pending = CudaError("cudaErrorInvalidValue", f"malformed launch request: {e}")
            self.err.append(f"strata: kernel launch: malformed request ({len(body)} bytes): {e}\n")
        except Exception:  # noqa: BLE001 - a bug of ours: cudaErrorUnknown and the traceback, as for other calls
            self.pending = CudaError("cudaErrorUnknown", "internal error serving a kernel launch")
            self.err.append(f"strata: internal error serving LAUNCH:\n{traceback.format_exc()}")

    def _reply(self, code: int, payload: bytes | bytearray | memoryview, extra_err: str = "") -> None:
        out = self.out.drain()
        err = ("".join(self.err) + extra_err).encode()
        self.err.clear()
        head = REPLY.pack(code, len(out), len(payload), len(err), 0)
        for part in (head, payload, out, err):
            if len(part):
                self._write(part)

    def _write(self, data: bytes | bytearray | memoryview) -> None:
        view = memoryview(data).cast("B")
        while len(view):
            k = os.write(self.wfd, view)
            view = view[k:]

    def _report(self, e: CudaError) -> None:
        """A fault's report goes to the program's stderr once; later calls only return its code."""
        if isinstance(e, DeviceFault | cuda.LaunchTimeout) or e.code >= 700:
            if id(e) in self.reported:
                return
            self.reported.add(id(e))
            self.err.append(f"========= strata: {type(e).__name__}: {e}\n")

    def _handle(self, h: int, table: dict[int, Any], what: str) -> Any:
        obj = table.get(h)
        if obj is None:
            raise CudaError("cudaErrorInvalidResourceHandle", f"no {what} {h:#x}")
        return obj

    def _stream(self, h: int) -> cuda.Stream | None:
        if h in (0, 1, 2):  # default, cudaStreamLegacy, cudaStreamPerThread
            return None
        return self._handle(h, self.streams, "stream")

    def _new_handle(self) -> int:
        self._next += 0x10
        return self._next

    # --- modules and launches ---------------------------------------------------------------------
    def _register(self, body: bytes) -> bytes:
        (count,), pos, ptx, image = struct.unpack_from("<I", body), 4, [], _Image([])
        try:
            entries_per_tu = []
            for _ in range(count):
                (n,) = struct.unpack_from("<Q", body, pos)
                entries_per_tu.append(fatbin.parse(bytes(body[pos + 8: pos + 8 + n])))
                pos += 8 + n
            props = cuda.get_device_properties()
            major, minor = props.major, props.minor
            arch = major * 10 + minor
            usable = [es for es in entries_per_tu if any(e.is_ptx and e.arch <= arch for e in es)]
            # With -rdc the device runtime library (libcudadevrt: PTX only for the newest GPU) comes along;
            # strata implements its functions itself, so units without usable PTX are left out when others
            # have some. A binary with none at all fails with pick_ptx's message (e.g. SASS only).
            ptx = [fatbin.pick_ptx(es, arch).text() for es in (usable or entries_per_tu) if es]
            image.ptx = ptx
        except fatbin.FatbinError as e:
            image.error = str(e)
            self.err.append(f"strata: {e}\n")
        h = self._new_handle()
        self.images[h] = image
        return struct.pack("<Q", h)

    def _register_ptx(self, body: bytes) -> bytes:
        h = self._new_handle()
        self.images[h] = _Image([bytes(body).decode("utf-8", errors="replace")])
        self._module(h)  # cuModuleLoadData JITs at once: a PTX error is its error
        return struct.pack("<Q", h)

    def _module(self, h: int) -> cuda.Module:
        image = self._handle(h, self.images, "fat binary")
        if image.error:
            raise CudaError("cudaErrorNoKernelImageForDevice", image.error)
        if image.module is None:  # loaded at first use, as CUDA's lazy module loading does
            with trace.span("L3", "__cudaRegisterFatBinary", units=len(image.ptx)):
                image.module = cuda.Module(link.link_ptx(image.ptx))
        return image.module

    def _func_info(self, body: bytes) -> bytes:
        (mid,) = struct.unpack_from("<Q", body)
        kernel = self._module(mid).get_function(bytes(body[8:]).decode())
        fid = self._new_handle()
        self.kernels[fid] = kernel
        sizes = [p.size for p in kernel.params]
        return struct.pack(f"<QI{len(sizes)}I", fid, len(sizes), *sizes)

    def _launch(self, body: bytes, cooperative: bool = False) -> None:
        fid, gx, gy, gz, bx, by, bz, shmem, stream = LAUNCH.unpack_from(body)
        try:
            kernel = self._handle(fid, self.kernels, "kernel")
            args: list[Any] = []
            pos = LAUNCH.size
            for p in kernel.params:
                raw = bytes(body[pos: pos + p.size])
                pos += p.size
                if p.type == "b8" and p.size > 1:
                    args.append(raw)
                else:
                    args.append(np.frombuffer(raw, dtype=_VALUE_TYPES[p.type])[0])
            self.managed_to_device()
            go = kernel.launch_cooperative if cooperative else kernel.launch
            go((gx, gy, gz), (bx, by, bz), args, shared_mem=shmem, stream=self._stream(stream))
        except CudaError as e:
            self.pending = e
            self._report(e)
        except (TypeError, ValueError, KeyError) as e:
            self.pending = CudaError("cudaErrorInvalidValue", str(e))
            self.err.append(f"strata: kernel launch: {e}\n")

    def _symbol(self, body: bytes) -> bytes:
        (mid,) = struct.unpack_from("<Q", body)
        addr, size = self._module(mid).get_global(bytes(body[8:]).decode())
        return struct.pack("<QQ", addr, size)

    def _func_attrs(self, body: bytes) -> bytes:
        a = self._handle(struct.unpack("<Q", body)[0], self.kernels, "kernel").attributes
        return struct.pack("<8q", a.num_regs, a.shared_size_bytes, a.const_size_bytes, a.local_size_bytes,
                           a.max_threads_per_block, a.max_dynamic_shared_size_bytes, a.ptx_version, a.binary_version)

    def _func_set_attr(self, body: bytes) -> None:
        fid, value = struct.unpack("<qq", body)
        self._handle(fid, self.kernels, "kernel").set_attribute("max_dynamic_shared_size_bytes", value)

    def _occupancy(self, body: bytes) -> bytes:
        fid, block, smem = struct.unpack("<qqq", body)
        kernel = self._handle(fid, self.kernels, "kernel")
        return struct.pack("<i", cuda.occupancy_max_active_blocks_per_multiprocessor(kernel, block, smem))

    def _limit(self, body: bytes) -> bytes:
        word, value = struct.unpack("<QQ", body)
        setting, which = word & 0xFFFFFFFF, word >> 32
        if which == 1:  # cudaLimitPrintfFifoSize: device printf output is not bounded here; kept for GetLimit
            if setting:
                self.printf_fifo = value
            return struct.pack("<Q", self.printf_fifo)
        name = _LIMIT_NAMES.get(which)
        if name is None:
            raise CudaError("cudaErrorInvalidValue", f"limit {which} is not modeled")
        dev = cuda.current_device()
        if setting:
            dev.set_limit(name, value)
        return struct.pack("<Q", dev.get_limit(name))

    # --- CUDA arrays and texture objects ----------------------------------------------------------
    def _array_create(self, body: bytes) -> bytes:
        x, y, z, w, kind, width, height, flags = struct.unpack("<8q", body)
        arr = cuda.malloc_array(cuda.create_channel_desc(x, y, z, w, kind), width, height, flags)
        h = self._new_handle()
        self.arrays[h] = arr
        return struct.pack("<Q", h)

    def _array3d_create(self, body: bytes) -> bytes:
        x, y, z, w, kind, width, height, depth, flags = struct.unpack("<9q", body)
        arr = cuda.malloc_3d_array(cuda.create_channel_desc(x, y, z, w, kind), (width, height, depth), flags)
        h = self._new_handle()
        self.arrays[h] = arr
        return struct.pack("<Q", h)

    def _memcpy_3d(self, body: bytes) -> np.ndarray | None:
        """A box copy (cudart.c's copy_3d_array: cudaMemcpy3D with an array, or a pitched 2-D/3-D copy): each
        side is a device pointer (mode 0), an array (1) or the program's host memory (2), packed as rows of the
        box's width in the shared staging area (the 19th value set) or after the 19 values of the request (source)
        and in the reply (destination)."""
        v = struct.unpack_from("<19q", body)
        (s_mode, s_ref, s_pitch, s_ysize, *s_pos), (d_mode, d_ref, d_pitch, d_ysize, *d_pos) = v[:7], v[7:14]
        width, height, depth, stream, staged = v[14:]
        elem = 1  # without an array, widths are in bytes
        if 1 in (s_mode, d_mode):
            elem = self._handle(s_ref if s_mode == 1 else d_ref, self.arrays, "CUDA array").format.texel_bytes
        row = width * elem
        box = row * max(height, 1) * max(depth, 1)
        host: np.ndarray | None = None
        if staged and 2 in (s_mode, d_mode):  # the packed box is in the shared staging area
            host = self.shared(0, box)
        elif s_mode == 2:
            host = np.frombuffer(body, np.uint8, count=box, offset=19 * 8)
        elif d_mode == 2:
            host = np.empty(box, np.uint8)

        def side(mode: int, ref: int, pitch: int, ysize: int) -> tuple[Any, Any]:
            if mode == 1:
                return self._handle(ref, self.arrays, "CUDA array"), None
            if mode == 2:
                return None, cuda.PitchedPtr(host, row, row, max(height, 1))
            return None, cuda.PitchedPtr(ref, pitch, pitch, ysize)

        if s_mode == 2 and d_mode == 0 and not stream and height > 1 and self._write_box(host, row, height, depth,
                                                                                         d_ref, d_pitch, d_ysize,
                                                                                         d_pos):
            return None
        src_array, src_ptr = side(s_mode, s_ref, s_pitch, s_ysize)
        dst_array, dst_ptr = side(d_mode, d_ref, d_pitch, d_ysize)
        kind = (cuda.MemcpyKind.HostToDevice if s_mode == 2 else cuda.MemcpyKind.DeviceToHost if d_mode == 2
                else cuda.MemcpyKind.DeviceToDevice)
        parms = cuda.Memcpy3DParms(src_array=src_array, src_pos=(0, 0, 0) if s_mode == 2 else tuple(s_pos),
                                   src_ptr=src_ptr, dst_array=dst_array,
                                   dst_pos=(0, 0, 0) if d_mode == 2 else tuple(d_pos), dst_ptr=dst_ptr,
                                   extent=(width, height, depth), kind=kind)
        cuda.memcpy_3d(parms, stream=self._stream(stream) if stream else None)
        return host if d_mode == 2 and not staged else None

    def _write_box(self, host: Any, row: int, height: int, depth: int, base: int, pitch: int, ysize: int,
                   pos: list[int]) -> bool:
        """A synchronous host-to-device box into pitched linear memory as two whole-span copies instead of one
        per row: read the span, lay the rows in, write it back. The padding between rows keeps its bytes: the
        device is idle meanwhile (synchronized first, and this process serves one request at a time)."""
        if pitch <= row or ysize < height:
            return False
        depth = max(depth, 1)
        slice_pitch = pitch * ysize
        start = base + pos[2] * slice_pitch + pos[1] * pitch + pos[0]
        span = (depth - 1) * slice_pitch + (height - 1) * pitch + row
        cuda.synchronize()
        if self.box_stage is None or self.box_stage.nbytes < span:  # kept: fresh pages cost a fault each
            self.box_stage = np.empty(span, np.uint8)
        stage = self.box_stage[:span]
        cuda.memcpy(stage, start, span, cuda.MemcpyKind.DeviceToHost)
        box = np.lib.stride_tricks.as_strided(stage, (depth, height, row), (slice_pitch, pitch, 1), writeable=True)
        box[...] = host.reshape(depth, height, row)
        cuda.memcpy(start, stage, span, cuda.MemcpyKind.HostToDevice)
        return True

    def _array_free(self, body: bytes) -> None:
        h = struct.unpack("<Q", body)[0]
        cuda.free_array(self._handle(h, self.arrays, "CUDA array"))
        del self.arrays[h]

    def _array_copy(self, body: bytes) -> None:
        h, woff, hoff, width, height, src, spitch = struct.unpack_from("<7q", body)
        arr = self._handle(h, self.arrays, "CUDA array")
        if src:
            cuda.memcpy_2d_to_array(arr, woff, hoff, src, spitch, width, height, cuda.MemcpyKind.DeviceToDevice)
        else:
            host = np.frombuffer(body, np.uint8, offset=56)
            cuda.memcpy_2d_to_array(arr, woff, hoff, host, spitch, width, height, cuda.MemcpyKind.HostToDevice)

    def _array_copy_out(self, body: bytes) -> np.ndarray | None:
        h, woff, hoff, width, height, dst, dpitch = struct.unpack("<7q", body)
        arr = self._handle(h, self.arrays, "CUDA array")
        if dst:
            cuda.memcpy_2d_from_array(dst, dpitch, arr, woff, hoff, width, height, cuda.MemcpyKind.DeviceToDevice)
            return None
        host = np.empty(width * height, np.uint8)
        cuda.memcpy_2d_from_array(host, width, arr, woff, hoff, width, height, cuda.MemcpyKind.DeviceToHost)
        return host

    def _surf_create(self, body: bytes) -> bytes:
        arr = self._handle(struct.unpack("<Q", body)[0], self.arrays, "CUDA array")
        return struct.pack("<Q", cuda.create_surface_object(arr))

    def _surf_destroy(self, body: bytes) -> None:
        cuda.destroy_surface_object(struct.unpack("<Q", body)[0])

    def _tex_create(self, body: bytes) -> bytes:
        q = struct.unpack_from("<19q", body)
        border = struct.unpack_from("<4d", body, 19 * 8)
        res_type, array, ptr, x, y, z, w, kind, size, width, height, pitch = q[:12]
        if res_type == 0:  # cudaResourceTypeArray
            res = cuda.ResourceDesc.from_array(self._handle(array, self.arrays, "CUDA array"))
        else:
            fmt = cuda.create_channel_desc(x, y, z, w, kind).format()
            if res_type == 2:  # cudaResourceTypeLinear
                res = cuda.ResourceDesc.linear(ptr, fmt.dtype, size, channels=fmt.channels)
            else:  # cudaResourceTypePitch2D
                res = cuda.ResourceDesc.pitch2d(ptr, fmt.dtype, width, height, pitch, channels=fmt.channels)
        desc = cuda.TextureDesc(address_mode=tuple(q[12:15]), filter_mode=q[15], read_mode=q[16],
                                normalized_coords=bool(q[17]), border_color=border, max_anisotropy=q[18])
        return struct.pack("<Q", cuda.create_texture_object(res, desc))

    def _tex_destroy(self, body: bytes) -> None:
        cuda.destroy_texture_object(struct.unpack("<Q", body)[0])

    def _last_error(self, body: bytes) -> None:
        (peek,) = struct.unpack("<I", body)
        e = self.pending
        if not peek:
            self.pending = None
        if e is not None:
            raise e

    def _unregister(self, body: bytes) -> None:
        pass

    # --- memory -----------------------------------------------------------------------------------
    def _malloc(self, body: bytes) -> bytes:
        return struct.pack("<Q", cuda.malloc(struct.unpack("<Q", body)[0]))

    def _malloc_pitch(self, body: bytes) -> bytes:
        width, height = struct.unpack("<QQ", body)
        return struct.pack("<QQ", *cuda.malloc_pitch(width, height))

    def _peer(self, body: bytes) -> None:
        enable, peer, flags = struct.unpack("<iii", body)
        if enable:
            cuda.device_enable_peer_access(peer, flags)
        else:
            cuda.device_disable_peer_access(peer)

    def _memcpy_peer(self, body: bytes) -> None:
        dst, dst_dev, src, src_dev, count = struct.unpack("<QQQQQ", body)
        cuda.memcpy_peer(dst, dst_dev, src, src_dev, count)

    def _free(self, body: bytes) -> None:
        addr = struct.unpack("<Q", body)[0]
        cuda.free(addr)
        self.managed.pop(addr, None)

    def _managed(self, body: bytes) -> None:
        addr, offset, size, from_device = struct.unpack("<QQQQ", body)
        host = self.shared(offset, size)  # inside the arena
        if from_device:  # a __managed__ variable: its initializer is in the module's device memory
            self.managed_to_host()
            cuda.memcpy(host, addr, size, cuda.MemcpyKind.DeviceToHost)
        self.managed[addr] = (offset, size)

    def _htod(self, body: bytes, host: np.ndarray | None = None) -> None:
        dst, stream = struct.unpack_from("<QQ", body)
        if host is None:
            host = np.frombuffer(body, np.uint8, offset=16)
        if stream:
            cuda.memcpy_async(dst, host, host.nbytes, cuda.MemcpyKind.HostToDevice, self._stream(stream))
        else:
            cuda.memcpy(dst, host, host.nbytes, cuda.MemcpyKind.HostToDevice)

    def _htod_shm(self, body: bytes) -> None:
        dst, stream, offset, count = struct.unpack("<QQQQ", body)
        self._htod(struct.pack("<QQ", dst, stream), self.shared(offset, count))

    def _dtoh_shm(self, body: bytes) -> None:
        src, count, stream, offset = struct.unpack("<QQQQ", body)
        self._copy_out(self.shared(offset, count), src, count, stream)

    def _htod_mapped(self, body: bytes) -> None:
        self._mapped(body, cuda.MemcpyKind.HostToDevice)

    def _dtoh_mapped(self, body: bytes) -> None:
        self._mapped(body, cuda.MemcpyKind.DeviceToHost)

    def _mapped(self, body: bytes, kind: cuda.MemcpyKind) -> None:
        """A pageable copy the program makes through its own mapping of device memory, one copy: the copy
        engine checks and times it in stream order; once earlier work there is done, the reply lets the
        program move the bytes (it blocks in cudaMemcpy meanwhile, as CUDA's pageable copies do)."""
        device, count, stream = struct.unpack("<QQQ", body)
        memcpy_mapped(device, count, kind, self._stream(stream) if stream else None)

    def _copy_out(self, host: np.ndarray, src: int, count: int, stream: int) -> None:
        if stream:
            cuda.memcpy_async(host, src, count, cuda.MemcpyKind.DeviceToHost, self._stream(stream))
        else:
            cuda.memcpy(host, src, count, cuda.MemcpyKind.DeviceToHost)

    def _dtoh(self, body: bytes) -> np.ndarray:
        src, count, stream = struct.unpack("<QQQ", body)
        host = np.empty(count, np.uint8)
        self._copy_out(host, src, count, stream)
        return host

    def _dtod(self, body: bytes) -> None:
        dst, src, count, stream = struct.unpack("<QQQQ", body)
        if stream:
            cuda.memcpy_async(dst, src, count, cuda.MemcpyKind.DeviceToDevice, self._stream(stream))
        else:
            cuda.memcpy(dst, src, count, cuda.MemcpyKind.DeviceToDevice)

    def _memset(self, body: bytes) -> None:
        ptr, value, count, stream = struct.unpack("<QQQQ", body)
        if stream:
            cuda.memset_async(ptr, value & 0xFF, count, self._stream(stream))
        else:
            cuda.memset(ptr, value & 0xFF, count)

    def _mem_info(self, body: bytes) -> bytes:
        return struct.pack("<QQ", *cuda.mem_get_info())

    def _pointer_kind(self, body: bytes) -> bytes:
        kind = cuda.pointer_get_attributes(struct.unpack("<Q", body)[0]).type
        return struct.pack("<I", kind == "device")

    # --- devices, streams, events -----------------------------------------------------------------
    def _props(self, body: bytes) -> bytes:
        (d,) = struct.unpack("<i", body)
        count = cuda.device_count()
        if d >= count or d < -1:
            raise CudaError("cudaErrorInvalidDevice", f"device {d}; there are {count}")
        p = cuda.get_device_properties(None if d < 0 else d)
        values = []
        for name, index in PROP_FIELDS:
            v: Any = count if name == "count" else getattr(p, name)
            values.append(int(v[index] if index is not None else v))
        return struct.pack(f"<{len(values)}q", *values) + p.name.encode()[:255].ljust(256, b"\0")

    def _set_device(self, body: bytes) -> None:
        (d,) = struct.unpack("<i", body)
        if not 0 <= d < cuda.device_count():
            raise CudaError("cudaErrorInvalidDevice", f"device {d}; there are {cuda.device_count()}")
        self._switch(d)

    def _sync(self, body: bytes) -> None:
        cuda.synchronize()

    def _reset(self, body: bytes) -> None:
        cuda.current_device().reset()
        self.streams.clear()
        self.events.clear()
        self.pending = None
        self.pendings.clear()

    def _stream_create(self, body: bytes) -> bytes:
        (flags,) = struct.unpack("<I", body)
        h = self._new_handle()
        self.streams[h] = cuda.Stream(non_blocking=bool(flags & 1))
        return struct.pack("<Q", h)

    def _stream_destroy(self, body: bytes) -> None:
        self._handle(struct.unpack("<Q", body)[0], self.streams, "stream")
        self.streams.pop(struct.unpack("<Q", body)[0])

    def _stream_sync(self, body: bytes) -> None:
        s = self._stream(struct.unpack("<Q", body)[0])
        (s or cuda.current_device()).synchronize()

    def _stream_query(self, body: bytes) -> None:
        s = self._stream(struct.unpack("<Q", body)[0])
        if not (s or cuda.current_device().context.stream(None)).query():
            raise CudaError("cudaErrorNotReady")

    def _stream_wait_event(self, body: bytes) -> None:
        sh, eh = struct.unpack("<QQ", body)
        s, e = self._stream(sh), self._handle(eh, self.events, "event")
        (s or cuda.current_device().context.stream(None)).wait_event(e)

    def _event_create(self, body: bytes) -> bytes:
        (flags,) = struct.unpack("<I", body)
        h = self._new_handle()
        self.events[h] = cuda.Event(timing=not flags & 2, blocking_sync=bool(flags & 1))
        return struct.pack("<Q", h)

    def _event_destroy(self, body: bytes) -> None:
        self._handle(struct.unpack("<Q", body)[0], self.events, "event")
        self.events.pop(struct.unpack("<Q", body)[0])

    def _event_record(self, body: bytes) -> None:
        eh, sh = struct.unpack("<QQ", body)
        self._handle(eh, self.events, "event").record(self._stream(sh))

    def _event_sync(self, body: bytes) -> None:
        self._handle(struct.unpack("<Q", body)[0], self.events, "event").synchronize()

    def _event_query(self, body: bytes) -> None:
        if not self._handle(struct.unpack("<Q", body)[0], self.events, "event").query():
            raise CudaError("cudaErrorNotReady")

    def _event_elapsed(self, body: bytes) -> bytes:
        a, b = struct.unpack("<QQ", body)
        ms = self._handle(a, self.events, "event").elapsed_time(self._handle(b, self.events, "event"))
        return struct.pack("<f", ms)


def run(argv: list[str], lib_dir: str, server_type: type[Server] = Server) -> int:
    """Run the native program `argv` with strata's CUDA runtime; returns its exit status (128 + signal
    number if a signal killed it; 1 if a kernel it never synchronized with faulted and it exited 0).
    `lib_dir` goes first on the program's LD_LIBRARY_PATH (folders separated by os.pathsep); `server_type`
    answers its calls (strata.hip.bridge's subclass serves HIP programs too)."""
    to_server_r, to_server_w = os.pipe()
    to_prog_r, to_prog_w = os.pipe()
    with contextlib.suppress(OSError):  # a deeper pipe lets more launches queue without the program waiting
        fcntl.fcntl(to_server_w, fcntl.F_SETPIPE_SZ, 1 << 20)
    arena_fd = os.memfd_create("strata-host-arena", 0)  # inherited by the program, which maps it too
    os.ftruncate(arena_fd, ARENA_BYTES)
    arena = mmap.mmap(arena_fd, ARENA_BYTES)
    env = dict(os.environ)
    env["STRATA_CUDART_FDS"] = f"{to_server_w},{to_prog_r}"
    env["STRATA_CUDART_SHM"] = f"{arena_fd},{ARENA_BYTES}"
    fds = [to_server_w, to_prog_r, arena_fd]
    vram_fd = share_device_memory()  # the program maps device memory too: its pageable copies move once
    if vram_fd is not None:
        env["STRATA_CUDART_VRAM"] = f"{vram_fd},{GLOBAL_BASE},{UVA_SLOTS * UVA_RANGE}"
        fds.append(vram_fd)
    env["LD_LIBRARY_PATH"] = os.pathsep.join(filter(None, [lib_dir, env.get("LD_LIBRARY_PATH")]))
    sys.stdout.flush()
    sys.stderr.flush()
    old_int = signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the program's to handle
    try:
        try:
            child = subprocess.Popen(argv, env=env, pass_fds=fds)
        except OSError as e:
            print(f"strata run: cannot start {argv[0]}: {e}", file=sys.stderr)
            return 127
        finally:
            os.close(to_server_w)
            os.close(to_prog_r)
            os.close(arena_fd)
        view = np.frombuffer(arena, np.uint8)
        server = server_type(to_server_r, to_prog_w, arena=view)
        # The arena's heap (cudaMallocHost memory) is pinned for the copy engines: asynchronous copies from
        # and to it return at once and overlap kernels, as in CUDA. The staging area is not: the program
        # reuses it for its next copy, so copies through it complete before they return.
        heap = int(view.ctypes.data) + STAGING_BYTES
        pin_token = HOST_MEMORY.register(heap, ARENA_BYTES - STAGING_BYTES)
        with contextlib.suppress(BrokenPipeError):  # the program died mid-reply; its status says why
            server.serve(child)
        status = child.wait()
        tail = server.out.drain()  # printf of kernels the program never synchronized with
        if tail:
            sys.stdout.buffer.write(tail)
            sys.stdout.flush()
    finally:
        signal.signal(signal.SIGINT, old_int)
        os.close(to_server_r)
        os.close(to_prog_w)
    try:
        return _finish(status, server)
    finally:  # copies into the arena have completed (or failed) by now
        HOST_MEMORY.unregister(heap, pin_token)


def _finish(status: int, server: Server) -> int:
    """The exit status `strata run` reports once the program has exited with `status`."""
    from strata.runtime import contexts

    failed = None
    for ctx in contexts():  # wait for the work it left queued (it may copy into the arena)
        if status < 0:  # killed: its queued work is dropped, as a GPU driver tears the context down
            ctx.interrupted()
        try:
            ctx.synchronize()
        except CudaError as e:
            if id(e) not in server.reported and failed is None:
                failed = e
    if status < 0:
        return 128 - status
    if failed is not None:
        print(f"strata run: a kernel or copy of the program failed after its last synchronization:\n"
              f"{type(failed).__name__}: {failed}", file=sys.stderr)
        return status or 1
    return status
