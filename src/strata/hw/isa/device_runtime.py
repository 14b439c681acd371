"""The device runtime: the extern functions device code calls that the GPU's system software provides.

PTX declares them `.extern .func` and the linker resolves them against the device runtime library
(cudadevrt); here each is a builtin the JIT lowers a `call` to:

- `malloc` / `free` (device-side `new`/`delete` too): the device heap (`hw/heap.py`).
- CUDA Dynamic Parallelism, CDP2 (NVRTC with `-rdc=true`; `strata.cuda.compile` adds it when the
  source has `<<<` or calls the device runtime API): `__cudaCDP2GetParameterBufferV2` (a parameter
  buffer in device memory for a child launch), `__cudaCDP2LaunchDeviceV2` (the launch), `__cudaCDP2GetLastError`,
  `__cudaCDP2PeekAtLastError`, `__cudaCDP2StreamCreateWithFlags`, `__cudaCDP2StreamDestroy`,
  `__cudaCDP2GetDevice`, `__cudaCDP2DeviceGetAttribute`, `__cudaCDP2Malloc`, `__cudaCDP2Free`.

Device launches and when children run (CDP2's rules, which allow running them after the parent):
a launch is recorded with its grid, block, dynamic shared bytes, stream and a copy of its parameters;
when the parent grid has finished, its children run in launch order, each followed by its own
children (depth-first), then its tail launches (`cudaStreamTailLaunch`) in order. Fire-and-forget
launches (`cudaStreamFireAndForget`) may run any time after their launch; they run in launch order
with the per-block-stream and created-stream children. The parent's dispatch completes only after
all of them, as in CUDA. A child is a launch of the same program (its module), traced as an L0
`execute` span nested in its parent's, with `parent`, `depth` and `stream`; its counters fold into
the parent's `LaunchResult.counters` (the dispatch's work is the whole tree, which the timing model
prices), and `LaunchResult.children` lists each child (`ChildLaunch`) with its own counters.

Limits: nesting depth 24 (cudaErrorLaunchMaxDepthExceeded), cudaLimitDevRuntimePendingLaunchCount
launches recorded and not yet started (default 2048; past it cudaErrorLaunchPendingCountExceeded).
Errors come back to the kernel as cudaError_t values and the thread's last error, never as faults;
a fault inside a child stops the whole launch tree and is reported on the parent's stream.

Children run only for launches made through `VirtualGPU.launch` (which runs the tree); `engine.execute`
called directly runs one grid and drops the launches it recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Any

import numpy as np

from strata import trace
from strata.errors import CUDA_ERRORS
from strata.hw.heap import DeviceHeap
from strata.hw.isa.registry import LaneFault, Op
from strata.hw.memory import GLOBAL_BASE, LOCAL_WINDOW, SHARED_WINDOW, WINDOW_SIZE, DeviceMemory

MAX_DEPTH = 24  # CUDA's nesting limit for device launches
DEFAULT_PENDING_LAUNCHES = 2048  # cudaLimitDevRuntimePendingLaunchCount's default
# stream handles device code passes (cuda_runtime's values)
STREAM_NULL, STREAM_PER_THREAD, STREAM_TAIL, STREAM_FIRE_AND_FORGET = 0, 2, 3, 4
FIRST_CREATED_STREAM = 0x100
CUDA_STREAM_NON_BLOCKING = 1

# cudaError_t values the device runtime returns that strata.errors does not list
DEVICE_ERRORS = {"cudaErrorLaunchMaxDepthExceeded": 65, "cudaErrorLaunchPendingCountExceeded": 69}


def error_code(name: str) -> int:
    return DEVICE_ERRORS.get(name) or CUDA_ERRORS[name][0]


def uses_heap(module: Any) -> bool:
    """Whether a module calls the device heap (so its launches reserve the heap)."""
    return any(n in module.functions and not module.functions[n].has_body for n in HEAP_FUNCTIONS)


HEAP_FUNCTIONS = ("malloc", "free", "__cudaCDP2Malloc", "__cudaCDP2Free")


@dataclass
class ChildLaunch:
    """A launch device code made, after it ran: what the parent's `LaunchResult.children` lists."""

    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    stream: str  # 'per-block' | 'per-thread' | 'tail' | 'fire-and-forget' | 'created'
    depth: int  # 1 for a child of a host launch
    result: Any = field(default=None, repr=False)  # its engine LaunchResult (own counters plus its descendants')

    @property
    def children(self) -> list[ChildLaunch]:
        return list(getattr(self.result, "children", []) or [])


@dataclass
class _Pending:
    kernel: str
    grid: tuple[int, int, int]
    block: tuple[int, int, int]
    shared_mem: int
    params: bytes
    stream: int


class DeviceRuntime:
    """One device's runtime state: its heap, the parameter-buffer pool, the pending-launch count."""

    def __init__(self, memory: DeviceMemory, *, max_threads_per_block: int = 1024,
                 max_block_dim: tuple[int, int, int] = (1024, 1024, 64),
                 max_grid_dim: tuple[int, int, int] = (2**31 - 1, 65535, 65535),
                 max_shared_per_block: int = 227 * 1024) -> None:
        self.memory = memory
        self.heap = DeviceHeap(memory)
        self.params = DeviceHeap(memory)  # launch parameter buffers (the launch pool), sized by the pending limit
        self.pending_limit = DEFAULT_PENDING_LAUNCHES
        self.pending = 0
        self.max_threads_per_block = max_threads_per_block
        self.max_block_dim = max_block_dim
        self.max_grid_dim = max_grid_dim
        self.max_shared_per_block = max_shared_per_block
        self.attributes: dict[int, int] = {}  # cudaDeviceAttr value -> value (cudaDeviceGetAttribute in device code)

    def set_reserve(self, reserve: Callable[[int], int]) -> None:
        """How the heap and the launch pool take their regions from device memory (the driver's VRAM)."""
        self.heap.reserve = reserve
        self.params.reserve = reserve

    def set_pending_limit(self, n: int) -> None:
        """cudaLimitDevRuntimePendingLaunchCount (like the heap size, fixed once the pool is reserved)."""
        from strata.errors import CudaError

        if n < 1:
            raise CudaError("cudaErrorInvalidValue", f"[set_limit] the pending launch count must be >= 1, got {n}")
        if self.params.reserved:
            raise CudaError("cudaErrorInvalidValue", "[set_limit] cudaLimitDevRuntimePendingLaunchCount cannot "
                            "change after a kernel that launches kernels ran on this device (reset it first)")
        self.pending_limit = int(n)

    def reset(self) -> None:
        """Device reset: the heap and the pool are forgotten, limits return to their defaults."""
        self.heap.reset()
        self.params.reset()
        self.pending_limit = DEFAULT_PENDING_LAUNCHES
        self.pending = 0

    def grid(self, depth: int = 0) -> GridRuntime:
        return GridRuntime(self, depth)


@dataclass
class GridRuntime:
    """The device runtime's view of one running grid: its recorded launches, its threads' last
    errors, the streams its threads created."""

    device: DeviceRuntime
    depth: int = 0
    pending: list[_Pending] = field(default_factory=list)
    last_error: dict[tuple[int, int], int] = field(default_factory=dict)  # (block, thread) -> cudaError_t
    streams: set[int] = field(default_factory=set)
    next_stream: int = FIRST_CREATED_STREAM
    # parameter buffer -> (kernel, grid, block, shared), between GetParameterBuffer and LaunchDevice
    buffers: dict[int, tuple[str, tuple[int, int, int], tuple[int, int, int], int]] = field(default_factory=dict)

    def finish(self) -> None:
        """The grid ended: parameter buffers its threads took but never launched go back to the pool."""
        if self.buffers:
            self.device.params.free(np.array(list(self.buffers), dtype=np.uint64))
            self.buffers.clear()

    def discard(self) -> None:
        """The grid faulted or was stopped: its recorded launches will never start."""
        self.finish()
        self.device.pending -= len(self.pending)
        self.pending = []


def grid_runtime(f: Any) -> GridRuntime:
    rt = getattr(f.chunk.launch, "runtime", None)
    if rt is None:  # an engine launched without a device (unit tests of the engine): a private runtime
        rt = DeviceRuntime(f.chunk.mem).grid()
        f.chunk.launch.runtime = rt
    return rt


def run_children(rt: GridRuntime, parent: str, result: Any,
                 run: Callable[[str, Any, GridRuntime], Any], make_config: Callable[..., Any]) -> None:
    """Run the launches a finished grid recorded (see the module docstring for the order), each with
    its own children; fold their counters into `result` and list them in `result.children`."""
    rt.finish()
    if not rt.pending:
        return
    launches = [p for p in rt.pending if p.stream != STREAM_TAIL] + [p for p in rt.pending if p.stream == STREAM_TAIL]
    rt.pending = []
    children = list(getattr(result, "children", []) or [])
    for k, p in enumerate(launches):
        rt.device.pending -= 1
        child_rt = rt.device.grid(rt.depth + 1)
        cfg = make_config(p.grid, p.block, p.shared_mem, p.params)
        stream = _stream_name(p.stream)
        try:
            with trace.span("L0", "execute", kernel=p.kernel, parent=parent, depth=child_rt.depth, stream=stream,
                            device_launch=True, threads=cfg.num_blocks * cfg.threads_per_block) as ev:
                try:
                    r = run(p.kernel, cfg, child_rt)
                except BaseException:
                    child_rt.discard()
                    raise
                run_children(child_rt, p.kernel, r, run, make_config)
                ev["thread_instructions"] = r.counters.total_thread_instructions
        except BaseException:
            rt.device.pending -= len(launches) - k - 1  # the rest never start
            raise
        add_counters(result.counters, r.counters)
        children.append(ChildLaunch(p.kernel, p.grid, p.block, p.shared_mem, stream, child_rt.depth, r))
    result.children = children


def _stream_name(s: int) -> str:
    return {STREAM_NULL: "per-block", STREAM_PER_THREAD: "per-thread", STREAM_TAIL: "tail",
            STREAM_FIRE_AND_FORGET: "fire-and-forget"}.get(s, "created")


def add_counters(dst: Any, src: Any) -> None:
    """dst += src, field by field (ints add; dicts add per key)."""
    for fl in fields(dst):
        a, b = getattr(dst, fl.name), getattr(src, fl.name)
        if isinstance(a, dict):
            for k, v in b.items():
                a[k] = a.get(k, 0) + v
        elif isinstance(a, int | float):
            setattr(dst, fl.name, a + b)


# -- lowering: one builtin per extern function
Builtin = Callable[["_Call", Any, Any], None]


class _Call:
    """Argument and return access for one call site: per-lane bytes of `.param` slots."""

    def __init__(self, ctx: Any, args: list[str], rets: list[str]) -> None:
        self.args, self.rets = args, rets
        self.sizes = {n: ctx.param_vars.get(n, 8) for n in (*args, *rets)}

    def arg(self, f: Any, k: int, lanes: np.ndarray, fmt: str, count: int = 1) -> np.ndarray:
        dt = np.dtype(fmt)
        raw = f.param(self.args[k], self.sizes[self.args[k]])[lanes]
        v = np.ascontiguousarray(raw[:, : dt.itemsize * count]).view(dt)
        return v if count > 1 else v[:, 0]

    def ret(self, f: Any, lanes: np.ndarray, values: np.ndarray) -> None:
        if self.rets:
            store = f.param(self.rets[0], self.sizes[self.rets[0]])
            raw = np.ascontiguousarray(values).view(np.uint8).reshape(lanes.size, -1)
            store[lanes, : raw.shape[1]] = raw


def lower_builtin(ins: Any, ctx: Any, name: str, args: list[str], rets: list[str]) -> Op | None:
    """The op for a call to device-runtime function `name`, or None if the runtime has no such function."""
    impl = BUILTINS.get(name)
    if impl is None:
        return None
    call = _Call(ctx, args, rets)

    def run(f: Any, m: Any) -> None:
        lanes = np.flatnonzero(m) if m is not None else np.arange(f.chunk.n)
        if f.chunk.alive is not None:
            lanes = lanes[f.chunk.alive[lanes]]
        if lanes.size:
            impl(call, f, (lanes, ins))

    return Op(run, "control", exact=True)


def _malloc(call: _Call, f: Any, at: Any) -> None:
    lanes, _ = at
    rt = grid_runtime(f)
    call.ret(f, lanes, rt.device.heap.malloc(call.arg(f, 0, lanes, "<u8")))


def _free(call: _Call, f: Any, at: Any) -> None:
    lanes, ins = at
    addrs = call.arg(f, 0, lanes, "<u8")
    bad = grid_runtime(f).device.heap.free(addrs)
    if bad.size:
        a = int(addrs[bad[0]])
        raise LaneFault(int(lanes[bad[0]]), ins, f"free({a:#x}): not a block device malloc returned, or already freed "
                        f"(address is {f.chunk.mem.describe_nearest(a)})", "cudaErrorLaunchFailure", address=a,
                        reason="invalid free")


def _thread_keys(f: Any, lanes: np.ndarray) -> list[tuple[int, int]]:
    chunk = f.chunk
    lpb = chunk.lanes_per_block
    return [(chunk.first_block + int(n) // lpb, int(n) % lpb) for n in lanes]


def _set_errors(f: Any, lanes: np.ndarray, codes: np.ndarray) -> None:
    rt = grid_runtime(f)
    for key, c in zip(_thread_keys(f, lanes), codes.tolist(), strict=True):
        if c:
            rt.last_error[key] = int(c)


def _get_last_error(call: _Call, f: Any, at: Any) -> None:
    lanes, _ = at
    rt = grid_runtime(f)
    codes = np.array([rt.last_error.pop(k, 0) for k in _thread_keys(f, lanes)], dtype=np.uint32)
    call.ret(f, lanes, codes)


def _peek_last_error(call: _Call, f: Any, at: Any) -> None:
    lanes, _ = at
    rt = grid_runtime(f)
    call.ret(f, lanes, np.array([rt.last_error.get(k, 0) for k in _thread_keys(f, lanes)], dtype=np.uint32))


def _get_device(call: _Call, f: Any, at: Any) -> None:
    lanes, ins = at
    _store(f, lanes, ins, call.arg(f, 0, lanes, "<u8"), np.zeros(lanes.size, dtype=np.uint32))
    call.ret(f, lanes, np.zeros(lanes.size, dtype=np.uint32))


def _device_attribute(call: _Call, f: Any, at: Any) -> None:
    """`cudaDeviceGetAttribute(&value, attr, device)` in device code (device 0: the one running it)."""
    lanes, ins = at
    table = grid_runtime(f).device.attributes
    attrs = call.arg(f, 1, lanes, "<u4")
    devices = call.arg(f, 2, lanes, "<i4")
    ok = np.array([int(a) in table for a in attrs.tolist()], dtype=bool) & (devices == 0)
    okl = np.flatnonzero(ok)
    values = np.array([table.get(int(a), 0) for a in attrs.tolist()], dtype=np.int32)
    _store(f, lanes[okl], ins, call.arg(f, 0, lanes, "<u8")[okl], values[okl])
    codes = np.where(ok, 0, error_code("cudaErrorInvalidValue")).astype(np.uint32)
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, codes)


def _device_malloc(call: _Call, f: Any, at: Any) -> None:
    """cudaMalloc in device code: a block of the device heap."""
    lanes, ins = at
    ptrs = grid_runtime(f).device.heap.malloc(call.arg(f, 1, lanes, "<u8"))
    _store(f, lanes, ins, call.arg(f, 0, lanes, "<u8"), ptrs)
    codes = np.where(ptrs == 0, error_code("cudaErrorMemoryAllocation"), 0).astype(np.uint32)
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, codes)


def _device_free(call: _Call, f: Any, at: Any) -> None:
    _free(call, f, at)
    lanes, _ = at
    call.ret(f, lanes, np.zeros(lanes.size, dtype=np.uint32))


def _stream_create(call: _Call, f: Any, at: Any) -> None:
    lanes, ins = at
    rt = grid_runtime(f)
    flags = call.arg(f, 1, lanes, "<u4")
    ok = flags == CUDA_STREAM_NON_BLOCKING  # device code must ask for a non-blocking stream
    handles = np.zeros(lanes.size, dtype=np.uint64)
    for i in np.flatnonzero(ok).tolist():
        handles[i] = rt.next_stream
        rt.streams.add(rt.next_stream)
        rt.next_stream += 1
    okl = np.flatnonzero(ok)
    _store(f, lanes[okl], ins, call.arg(f, 0, lanes, "<u8")[okl], handles[okl])
    codes = np.where(ok, 0, error_code("cudaErrorInvalidValue")).astype(np.uint32)
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, codes)


def _stream_destroy(call: _Call, f: Any, at: Any) -> None:
    lanes, _ = at
    rt = grid_runtime(f)
    codes = np.zeros(lanes.size, dtype=np.uint32)
    for i, h in enumerate(call.arg(f, 0, lanes, "<u8").tolist()):
        if h in rt.streams:
            rt.streams.discard(h)  # work already launched into it still runs (CUDA: destroy is deferred)
        else:
            codes[i] = error_code("cudaErrorInvalidResourceHandle")
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, codes)


def _get_parameter_buffer(call: _Call, f: Any, at: Any) -> None:
    """`__cudaCDP2GetParameterBufferV2(func, gridDim, blockDim, sharedMem)` -> a buffer for the
    child's parameters, or NULL (and the thread's last error) when the launch would be invalid."""
    lanes, _ = at
    rt = grid_runtime(f)
    dev = rt.device
    program = f.chunk.launch.program
    funcs = call.arg(f, 0, lanes, "<u8")
    grids = call.arg(f, 1, lanes, "<u4", 3)
    blocks = call.arg(f, 2, lanes, "<u4", 3)
    shared = call.arg(f, 3, lanes, "<u4")
    sizes = np.zeros(lanes.size, dtype=np.uint64)
    codes = np.zeros(lanes.size, dtype=np.uint32)
    names = [""] * lanes.size
    for i in range(lanes.size):
        name, err = _check_launch(program, dev, int(funcs[i]), tuple(grids[i].tolist()), tuple(blocks[i].tolist()),
                                  int(shared[i]))
        names[i] = name
        if err:
            codes[i] = error_code(err)
        else:
            sizes[i] = max(param_bytes(program.module.functions[name]), 1)
    if not dev.params.reserved:
        dev.params.set_limit(dev.pending_limit * 4096 + 64 * 1024)  # CUDA's 4 KB parameter limit per launch
    ok = np.flatnonzero(codes == 0)
    bufs = np.zeros(lanes.size, dtype=np.uint64)
    if ok.size:
        bufs[ok] = dev.params.malloc(sizes[ok])
        codes[ok] = np.where(bufs[ok] == 0, error_code("cudaErrorLaunchPendingCountExceeded"), 0)
        for i in ok.tolist():
            if bufs[i]:
                g, b = grids[i].tolist(), blocks[i].tolist()
                rt.buffers[int(bufs[i])] = (names[i], (g[0], g[1], g[2]), (b[0], b[1], b[2]), int(shared[i]))
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, bufs)


def param_bytes(fn: Any) -> int:
    """Bytes of a kernel's packed parameters (each aligned to its alignment)."""
    off = 0
    for p in fn.params:
        off = -(-off // p.align) * p.align + p.size
    return off


def _check_launch(program: Any, dev: DeviceRuntime, func: int, grid: tuple[int, ...], block: tuple[int, ...],
                  shared: int) -> tuple[str, str | None]:
    from strata.hw.jit import function_at

    name = function_at(program.module, func) or ""
    fn = program.module.functions.get(name)
    if fn is None or not fn.is_entry or name not in program.functions:
        return "", "cudaErrorInvalidDeviceFunction"
    threads = block[0] * block[1] * block[2]
    if min(*grid, *block) < 1 or threads > dev.max_threads_per_block \
            or any(b > m for b, m in zip(block, dev.max_block_dim, strict=True)) \
            or any(g > m for g, m in zip(grid, dev.max_grid_dim, strict=True)):
        return name, "cudaErrorInvalidConfiguration"
    if program.shared_bytes(name, shared) > dev.max_shared_per_block:
        return name, "cudaErrorInvalidValue"
    return name, None


def _launch_device(call: _Call, f: Any, at: Any) -> None:
    """`__cudaCDP2LaunchDeviceV2(parameterBuffer, stream)`: record the launch (it runs after the grid)."""
    lanes, _ = at
    rt = grid_runtime(f)
    dev = rt.device
    program = f.chunk.launch.program
    mem = f.chunk.mem
    bufs = call.arg(f, 0, lanes, "<u8")
    streams = call.arg(f, 1, lanes, "<u8")
    codes = np.zeros(lanes.size, dtype=np.uint32)
    for i, (buf, stream) in enumerate(zip(bufs.tolist(), streams.tolist(), strict=True)):
        info = rt.buffers.pop(buf, None)
        if info is None:
            codes[i] = error_code("cudaErrorInvalidValue")
            continue
        if stream not in (STREAM_NULL, STREAM_PER_THREAD, STREAM_TAIL, STREAM_FIRE_AND_FORGET) \
                and stream not in rt.streams:
            codes[i] = error_code("cudaErrorInvalidResourceHandle")
        elif rt.depth + 1 > MAX_DEPTH:
            codes[i] = error_code("cudaErrorLaunchMaxDepthExceeded")
        elif dev.pending >= dev.pending_limit:
            codes[i] = error_code("cudaErrorLaunchPendingCountExceeded")
        if not codes[i]:
            name, grid, block, shared = info
            params = mem.read(buf, param_bytes(program.module.functions[name]))
            rt.pending.append(_Pending(name, grid, block, shared, params, stream))
            dev.pending += 1
        dev.params.free(np.array([buf], dtype=np.uint64))  # the parameters are copied; the buffer is free again
    _set_errors(f, lanes, codes)
    call.ret(f, lanes, codes)


def _store(f: Any, lanes: np.ndarray, ins: Any, addrs: np.ndarray, values: np.ndarray) -> None:
    """Store each lane's value at its generic address (local, shared or global), with memcheck."""
    chunk = f.chunk
    values = np.ascontiguousarray(values)
    size = values.dtype.itemsize
    raw = values.view(np.uint8).reshape(-1, size)
    for i, (lane, a) in enumerate(zip(lanes.tolist(), addrs.tolist(), strict=True)):
        if LOCAL_WINDOW <= a < LOCAL_WINDOW + WINDOW_SIZE and chunk.local is not None \
                and a - LOCAL_WINDOW + size <= chunk.local.shape[1]:
            o = a - LOCAL_WINDOW
            chunk.local[lane, o:o + size] = raw[i]
        elif SHARED_WINDOW <= a < SHARED_WINDOW + WINDOW_SIZE and a - SHARED_WINDOW + size <= chunk.shared_limit:
            o = int(chunk.shared_base[lane]) + a - SHARED_WINDOW
            chunk.shared[o:o + size] = raw[i]
        else:
            fault = chunk.mem.check(np.array([a], dtype=np.uint64), size) if a >= GLOBAL_BASE else True
            if fault is not None:
                raise LaneFault(lane, ins, f"device runtime call wrote through a bad pointer {a:#x}",
                                "cudaErrorIllegalAddress", address=a, size=size, reason="out of bounds",
                                nearest=chunk.mem.describe_nearest(a))
            chunk.mem.write(a, raw[i].tobytes())


BUILTINS: dict[str, Builtin] = {
    "malloc": _malloc,
    "free": _free,
    "__cudaCDP2Malloc": _device_malloc,
    "__cudaCDP2Free": _device_free,
    "__cudaCDP2GetLastError": _get_last_error,
    "__cudaCDP2PeekAtLastError": _peek_last_error,
    "__cudaCDP2GetDevice": _get_device,
    "__cudaCDP2DeviceGetAttribute": _device_attribute,
    "__cudaCDP2StreamCreateWithFlags": _stream_create,
    "__cudaCDP2StreamDestroy": _stream_destroy,
    "__cudaCDP2GetParameterBufferV2": _get_parameter_buffer,
    "__cudaCDP2LaunchDeviceV2": _launch_device,
}
# the public names hand-written PTX may use for the same entry points
BUILTINS.update({"cudaGetParameterBufferV2": _get_parameter_buffer, "cudaLaunchDeviceV2": _launch_device,
                 "cudaGetLastError": _get_last_error, "cudaPeekAtLastError": _peek_last_error})
