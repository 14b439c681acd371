"""Devices as the CUDA runtime presents them: `Device(i)`, `Device(model="h100")`, the current device.

Each Device wraps an opened virtual GPU (L1) and its primary context (L2).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from typing import Any

from strata import config, trace
from strata.driver import DeviceFile, open_device, opened_devices
from strata.driver.telemetry import memory_clock_mhz
from strata.errors import CudaError
from strata.hw.catalog import GPUSpec, get_spec
from strata.hw.topology import link_between
from strata.runtime import Context, primary_context

# Work that waits for the device and was handed over by finalizers, which must never wait (the modules
# of strata.cuda.module register theirs); cudaDeviceSynchronize runs it once the device is idle.
SYNCHRONIZE_HOOKS: list[Callable[[], None]] = []


class Device:
    """A virtual GPU. Device 0 is a virtual H200 unless `STRATA_DEVICES`/`STRATA_GPU` say otherwise.

    `Device(i)` is present device i; `Device(model="h100")` is the first opened or present device of
    that model, or a new virtual device of that model if none is present.

    Example:
        >>> d = Device(model="h100")
        >>> d.name, d.multiProcessorCount, (d.major, d.minor)
        ('NVIDIA H100 80GB HBM3 (SXM5)', 132, (9, 0))
    """

    _by_index: dict[int, Device] = {}
    _open_lock = threading.RLock()  # two threads' first Device(i) must make one object

    def __new__(cls, index: int | str | None = None, *, model: str | None = None) -> Device:
        if isinstance(index, str):
            index, model = None, index
        with cls._open_lock:
            if index is None:
                model = get_spec(model or config.settings().devices[0]).name
                index = _index_for_model(model)
            dev = cls._by_index.get(index)
            if dev is None:
                dev = super().__new__(cls)
                dev._init(open_device(index, model))
                cls._by_index[index] = dev
        return dev

    def _init(self, file: DeviceFile) -> None:
        self.index = file.index
        self.file = file
        self.spec: GPUSpec = file.gpu.spec
        self.context: Context = primary_context(file)  # streams, sticky errors; survives reset()

    # -- cudaDeviceProp names: every field of `properties()` is also an attribute
    def properties(self) -> DeviceProperties:
        """cudaGetDeviceProperties for this device (fixed for the device's life, so computed once)."""
        props = self.__dict__.get("_properties")
        if props is None:
            props = self.__dict__["_properties"] = device_properties(self.file)
        return props

    def __getattr__(self, name: str) -> Any:
        if name in _PROPERTY_NAMES:
            return getattr(self.properties(), name)
        raise AttributeError(f"'Device' object has no attribute {name!r}")

    @property
    def pciBusId(self) -> str:  # noqa: N802 - as cudaDeviceGetPCIBusId prints it
        return self.file.pci_bus_id

    # -- whole-device operations
    def synchronize(self) -> None:
        """cudaDeviceSynchronize: wait for all work; raises a sticky fault (DeviceFault, ...)."""
        with trace.span("L3", "cudaDeviceSynchronize", device=self.index):
            self.context.synchronize()
        for hook in SYNCHRONIZE_HOOKS:
            hook()

    def reset(self) -> None:
        """cudaDeviceReset: drop queued work, free all memory and modules, clear a sticky error.
        DeviceArrays and loaded modules of this device become invalid; other devices are untouched.
        Peer access this device enabled ends with its context, as in CUDA."""
        with trace.span("L3", "cudaDeviceReset", device=self.index):
            self.context.reset()
            self.file.gpu.memory.peers.clear()

    # -- limits (cudaDeviceSetLimit / cudaDeviceGetLimit)
    def set_limit(self, limit: str, value: int) -> None:
        """cudaDeviceSetLimit. Supported: 'stack_size' (cudaLimitStackSize: bytes of call stack per
        thread for later launches, default 1024, at most 512 KiB; deep recursion past it faults with
        "stack overflow"); 'malloc_heap_size' (cudaLimitMallocHeapSize: bytes of the device heap that
        device malloc/new use, default 8 MiB; fixed once a kernel that uses malloc was launched,
        cudaErrorInvalidValue after, until reset); 'dev_runtime_pending_launch_count'
        (cudaLimitDevRuntimePendingLaunchCount: device launches that may wait to run, default 2048).

        Example:
            >>> import strata.cuda as cuda
            >>> dev = cuda.Device(0); dev.reset(); dev.set_limit("cudaLimitMallocHeapSize", 1 << 20)
            >>> dev.get_limit("malloc_heap_size")
            1048576
        """
        which = _LIMITS.get(limit)
        runtime = self.file.gpu.runtime
        if which == "stack_size":
            self.file.set_stack_size(int(value))
        elif which == "malloc_heap_size":
            runtime.heap.set_limit(int(value))
        elif which == "dev_runtime_pending_launch_count":
            runtime.set_pending_limit(int(value))
        else:
            raise CudaError("cudaErrorInvalidValue", f"[set_limit] unsupported limit {limit!r} (supported: "
                            f"{', '.join(repr(k) for k in _LIMITS)})")

    def get_limit(self, limit: str) -> int:
        """cudaDeviceGetLimit: the current value of a limit `set_limit` accepts."""
        which = _LIMITS.get(limit)
        runtime = self.file.gpu.runtime
        if which == "stack_size":
            return int(self.file.stack_bytes)
        if which == "malloc_heap_size":
            return int(runtime.heap.limit)
        if which == "dev_runtime_pending_launch_count":
            return int(runtime.pending_limit)
        raise CudaError("cudaErrorInvalidValue", f"[get_limit] unsupported limit {limit!r} (supported: "
                        f"{', '.join(repr(k) for k in _LIMITS)})")

    # -- peer access (cudaDeviceCanAccessPeer / cudaDeviceEnablePeerAccess / cudaDeviceDisablePeerAccess)
    def can_access_peer(self, peer: Device | int) -> bool:
        """cudaDeviceCanAccessPeer: whether kernels on this device could access `peer`'s memory.

        The answer comes from the system topology (`hw/topology.py`): GPUs of one vendor share a
        fabric (NVLink through NVSwitch, an Infinity Fabric mesh); a device is not its own peer, and an
        NVIDIA and an AMD GPU meet only through host memory."""
        other = _as_device(peer, "can_access_peer")
        return other is not self and link_between(self.spec, other.spec).p2p

    def enable_peer_access(self, peer: Device | int, flags: int = 0) -> None:
        """cudaDeviceEnablePeerAccess (with this device current): kernels on this device may then read
        and write `peer`'s memory through its unified addresses; the bytes travel over the interconnect
        and are counted in `peer_traffic()`. One direction only, as in CUDA.

        Raises:
            CudaError: cudaErrorInvalidValue (flags != 0), cudaErrorInvalidDevice (a device is not its
                own peer), cudaErrorPeerAccessUnsupported (different vendors),
                cudaErrorPeerAccessAlreadyEnabled."""
        other = _as_device(peer, "enable_peer_access")
        if flags != 0:
            raise CudaError("cudaErrorInvalidValue", f"[enable_peer_access] flags must be 0, got {flags}")
        if other is self:
            raise CudaError("cudaErrorInvalidDevice", f"[enable_peer_access] device {self.index} cannot be its "
                            "own peer")
        if not self.can_access_peer(other):
            raise CudaError("cudaErrorPeerAccessUnsupported",
                            f"[enable_peer_access] device {self.index} ({self.spec.vendor}) cannot access device "
                            f"{other.index} ({other.spec.vendor}): no shared interconnect")
        mem, peer_mem = self.file.gpu.memory, other.file.gpu.memory
        if peer_mem.slot in mem.peers:
            raise CudaError("cudaErrorPeerAccessAlreadyEnabled",
                            f"[enable_peer_access] device {self.index} already accesses device {other.index}")
        with trace.span("L3", "cudaDeviceEnablePeerAccess", device=self.index, peer=other.index):
            mem.enable_peer(peer_mem)

    def disable_peer_access(self, peer: Device | int) -> None:
        """cudaDeviceDisablePeerAccess: kernels on this device fault on `peer`'s addresses again.

        Raises:
            CudaError: cudaErrorPeerAccessNotEnabled if access was not enabled."""
        other = _as_device(peer, "disable_peer_access")
        mem, peer_mem = self.file.gpu.memory, other.file.gpu.memory
        if peer_mem.slot not in mem.peers:
            raise CudaError("cudaErrorPeerAccessNotEnabled",
                            f"[disable_peer_access] device {self.index} does not access device {other.index}")
        with trace.span("L3", "cudaDeviceDisablePeerAccess", device=self.index, peer=other.index):
            mem.disable_peer(peer_mem)

    def peer_traffic(self) -> dict[int, int]:
        """Bytes this device has moved over the interconnect to or from each peer's memory, by peer device
        index: what its kernels read or wrote there, and the peer copies its copy engines ran
        (`cudaMemcpyPeer(Async)`, a collective's copy-engine steps), so the figure does not depend on
        which engine moved the bytes."""
        by_slot = dict(self.file.gpu.memory.peer_bytes)
        return {d.index: by_slot[d.file.gpu.memory.slot] for d in list(Device._by_index.values())
                if d.file.gpu.memory.slot in by_slot}

    @property
    def error(self) -> BaseException | None:
        """The sticky error of this device's context, if a kernel faulted (cudaPeekAtLastError)."""
        return self.context.error

    def __repr__(self) -> str:
        return f"<strata.cuda.Device {self.index}: virtual {self.spec.product}>"


def _as_device(device: Device | int, op: str) -> Device:
    if isinstance(device, Device):
        return device
    if isinstance(device, bool) or not isinstance(device, int) or \
            not 0 <= device < max(device_count(), len(Device._by_index)):
        raise CudaError("cudaErrorInvalidDevice", f"[{op}] no device {device!r}: {device_count()} device(s) present")
    return Device(device)


def device_can_access_peer(device: Device | int, peer: Device | int) -> bool:
    """cudaDeviceCanAccessPeer(&can, device, peer)."""
    return _as_device(device, "device_can_access_peer").can_access_peer(peer)


def device_enable_peer_access(peer: Device | int, flags: int = 0) -> None:
    """cudaDeviceEnablePeerAccess: the current device may access `peer`'s memory."""
    current_device().enable_peer_access(peer, flags)


def device_disable_peer_access(peer: Device | int) -> None:
    """cudaDeviceDisablePeerAccess for the current device."""
    current_device().disable_peer_access(peer)


_LIMITS = {"stack_size": "stack_size", "cudaLimitStackSize": "stack_size",
           "malloc_heap_size": "malloc_heap_size", "cudaLimitMallocHeapSize": "malloc_heap_size",
           "dev_runtime_pending_launch_count": "dev_runtime_pending_launch_count",
           "cudaLimitDevRuntimePendingLaunchCount": "dev_runtime_pending_launch_count",
           # the HIP names (strata.hip.Device is this class): hipLimit_t
           "hipLimitStackSize": "stack_size", "hipLimitMallocHeapSize": "malloc_heap_size"}


def _index_for_model(model: str) -> int:
    for f in opened_devices():
        if f.gpu.spec.name == model:
            return f.index
    present = config.settings().devices
    opened = {f.index for f in opened_devices()}
    for i, m in enumerate(present):
        if m == model and i not in opened:
            return i
    return max([len(present) - 1, *opened]) + 1


@dataclass(frozen=True)
class DeviceProperties:
    """cudaDeviceProp / hipDeviceProp_t: the fields programs read, from the device catalogue.

    Rates in kHz and widths in bits, as CUDA reports them.

    Example:
        >>> p = get_device_properties(0)
        >>> p.name, p.warpSize, p.maxThreadsPerBlock, p.sharedMemPerBlock, p.sharedMemPerBlockOptin
        ('NVIDIA H200 (SXM)', 32, 1024, 49152, 232448)
    """

    name: str
    totalGlobalMem: int  # noqa: N815 - cudaDeviceProp field names throughout
    sharedMemPerBlock: int  # noqa: N815
    sharedMemPerBlockOptin: int  # noqa: N815
    sharedMemPerMultiprocessor: int  # noqa: N815
    reservedSharedMemPerBlock: int  # noqa: N815
    regsPerBlock: int  # noqa: N815
    regsPerMultiprocessor: int  # noqa: N815
    warpSize: int  # noqa: N815
    maxThreadsPerBlock: int  # noqa: N815
    maxThreadsDim: tuple[int, int, int]  # noqa: N815
    maxGridSize: tuple[int, int, int]  # noqa: N815
    maxThreadsPerMultiProcessor: int  # noqa: N815
    maxBlocksPerMultiProcessor: int  # noqa: N815
    multiProcessorCount: int  # noqa: N815
    clockRate: int  # noqa: N815 - kHz
    memoryClockRate: int  # noqa: N815 - kHz
    memoryBusWidth: int  # noqa: N815 - bits
    l2CacheSize: int  # noqa: N815
    totalConstMem: int  # noqa: N815
    major: int
    minor: int
    pciDomainID: int  # noqa: N815
    pciBusID: int  # noqa: N815
    pciDeviceID: int  # noqa: N815
    asyncEngineCount: int  # noqa: N815 - copy engines that run beside compute
    concurrentKernels: int  # noqa: N815
    cooperativeLaunch: int  # noqa: N815 - cudaDevAttrCooperativeLaunch: launch_cooperative is supported
    unifiedAddressing: int  # noqa: N815
    managedMemory: int  # noqa: N815
    canMapHostMemory: int  # noqa: N815
    integrated: int
    computeMode: int  # noqa: N815
    ECCEnabled: int  # noqa: N815
    gcnArchName: str  # noqa: N815 - HIP's field: the gfx target on AMD, the sm_ arch on NVIDIA


_PROPERTY_NAMES = frozenset(f.name for f in fields(DeviceProperties))
TOTAL_CONST_MEM = 65536  # 64 KiB of __constant__ memory on every modeled GPU
# the target features ROCm appends to gcnArchName: MI300X/MI250X run with ECC on LDS/caches (sramecc+) and
# without XNACK page-fault replay (xnack-), as shipped
AMD_TARGET_FEATURES = {"gfx942": ":sramecc+:xnack-", "gfx90a": ":sramecc+:xnack-"}


def device_properties(file: DeviceFile) -> DeviceProperties:
    spec = file.gpu.spec
    domain, bus, device_fn = file.pci_bus_id.split(":")
    mem_clock = memory_clock_mhz(spec)
    return DeviceProperties(
        name=spec.product, totalGlobalMem=spec.hbm_bytes, sharedMemPerBlock=spec.shared_mem_per_block,
        sharedMemPerBlockOptin=spec.shared_mem_per_block_optin, sharedMemPerMultiprocessor=spec.shared_mem_per_sm,
        reservedSharedMemPerBlock=spec.smem_reserved_per_block, regsPerBlock=spec.regs_per_block,
        regsPerMultiprocessor=spec.regs_per_sm, warpSize=spec.warp_size, maxThreadsPerBlock=spec.max_threads_per_block,
        maxThreadsDim=spec.max_block_dim, maxGridSize=spec.max_grid_dim,
        maxThreadsPerMultiProcessor=spec.max_threads_per_sm, maxBlocksPerMultiProcessor=spec.max_blocks_per_sm,
        multiProcessorCount=spec.sm_count, clockRate=int(spec.clock_mhz * 1000),
        memoryClockRate=int(mem_clock * 1000), memoryBusWidth=int(round(spec.hbm_bandwidth / (mem_clock * 1e6) / (
            4 if spec.vendor == "amd" else 2) * 8)),
        l2CacheSize=spec.l2_bytes, totalConstMem=TOTAL_CONST_MEM, major=spec.compute_capability[0],
        minor=spec.compute_capability[1], pciDomainID=int(domain, 16), pciBusID=int(bus, 16),
        pciDeviceID=int(device_fn.split(".")[0], 16), asyncEngineCount=2, concurrentKernels=1, cooperativeLaunch=1,
        unifiedAddressing=1,
        managedMemory=0, canMapHostMemory=0, integrated=0, computeMode=0, ECCEnabled=1,
        gcnArchName=spec.arch + AMD_TARGET_FEATURES.get(spec.arch, "") if spec.vendor == "amd" else spec.arch)


def device_count() -> int:
    """cudaGetDeviceCount: the virtual GPUs present (STRATA_DEVICES)."""
    return len(config.settings().devices)


def devices_of_model(n: int, model: str | None = None) -> list[Device]:
    """n devices of one model (default: device 0's), e.g. the ranks of a ring of peers: the present or already
    opened devices of that model in index order, then new ones opened after them (strata adds virtual devices
    on demand). Devices of other models are skipped (an MI300X opened beside H200s has no peer path to them).

    Example:
        >>> len({d.spec.name for d in devices_of_model(2)})
        1
    """
    model = model or Device(0).spec.name
    opened = {f.index for f in opened_devices()} | set(Device._by_index)
    out: list[Device] = []
    i = 0
    while len(out) < n:
        if i < device_count() or i in opened:
            if Device(i).spec.name == model:
                out.append(Device(i))
        else:
            open_device(i, model)
            out.append(Device(i))
        i += 1
    return out


def is_available() -> bool:
    """Whether a CUDA device is present (torch.cuda.is_available): always a virtual GPU here unless
    STRATA_DEVICES lists none."""
    return device_count() > 0


def get_device_properties(device: int | Device | None = None) -> DeviceProperties:
    """cudaGetDeviceProperties (default: the current device)."""
    dev = current_device() if device is None else device if isinstance(device, Device) else Device(device)
    return dev.properties()


def get_device() -> int:
    """cudaGetDevice: the index of the current device."""
    return current_device().index


_explicit: Device | None = None  # set by set_device; otherwise device 0 of STRATA_DEVICES/STRATA_GPU
_default: dict[str, Device] = {}  # default model -> its Device (the lookup runs on every launch)


def current_device() -> Device:
    """The device calls go to: set by `set_device`, else the default device."""
    if _explicit is not None:
        return _explicit
    model = config.settings().devices[0]
    dev = _default.get(model)
    if dev is None:
        dev = _default[model] = Device()
    return dev


def set_device(device: Device | int | str) -> Device:
    """cudaSetDevice: make `device` (a Device, an index or a model name) current for later calls.
    An index must name a present device (cudaErrorInvalidDevice otherwise)."""
    global _explicit
    if isinstance(device, int) and not 0 <= device < max(device_count(), len(Device._by_index)):
        raise CudaError("cudaErrorInvalidDevice",
                        f"[set_device] device {device} does not exist: {device_count()} device(s) present")
    _explicit = device if isinstance(device, Device) else Device(device)
    return _explicit


def synchronize() -> None:
    """cudaDeviceSynchronize on the current device."""
    current_device().synchronize()
