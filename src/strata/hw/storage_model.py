"""The storage timing model: how long moving file bytes from an NVMe drive into device memory takes on
the modeled timeline, on GPUDirect Storage's direct path and on the host bounce path. The source of
truth for strata's storage figures; they are modeled, never measured.

Direct (GDS) path: the drive DMAs straight into GPU memory over PCIe peer-to-peer, so its rate is the
slower of the drive and the GPU's BAR1/P2P window (~0.9 x the host link) [G, numbers.md §3.3 'model
defaults']. Bounce path: the drive fills a host buffer, the CPU copies it into pinned memory, and the
copy engine moves it over the link; the three steps add up, as in numbers.md §3.3 (bounce = NVMe + host
memcpy + pinned H2D, without overlap). Each I/O request pays `REQUEST_OVERHEAD_S` (submission and
completion, "10s of µs" per request [G, §3.3]).

Example:
    >>> from strata.hw.catalog import get_spec
    >>> h200 = get_spec("h200")
    >>> direct = gds_read_seconds(h200, 1 << 30, requests=64)
    >>> round((1 << 30) / direct / 1e9, 2)  # GB/s: the Gen4 x4 drive is the bottleneck
    6.94
    >>> bounce_read_seconds(h200, 1 << 30, requests=64) > direct
    True
"""

from __future__ import annotations

from dataclasses import dataclass

from strata.hw.catalog import GPUSpec
from strata.hw.dma import copy_seconds


@dataclass(frozen=True)
class NvmeSpec:
    """One NVMe drive (or a striped set seen as one): sequential rates in bytes/s."""

    name: str
    read_bandwidth: float
    write_bandwidth: float


# One PCIe Gen4 x4 drive: ~7 GB/s sequential read (numbers.md §3.4: "7 GB/s x 4" drives = 28 GB/s in
# fastsafetensors' baseline; §3.3: a single local NVMe measured 6.62 GiB/s through GDS). Writes are
# slower on typical Gen4 drives [G].
NVME_GEN4_X4 = NvmeSpec("NVMe PCIe Gen4 x4", 7.0e9, 5.0e9)
# A Gen5 x4 drive: ~13-14 GB/s (numbers.md §3.3: 53 of ~58 GB/s over four Gen5 drives) [D].
NVME_GEN5_X4 = NvmeSpec("NVMe PCIe Gen5 x4", 14.0e9, 10.0e9)
DEFAULT_NVME = NVME_GEN4_X4

P2P_EFFICIENCY = 0.9  # GPU BAR1 / peer-to-peer window as a fraction of the host link [G, numbers.md §3.3]
REQUEST_OVERHEAD_S = 20e-6  # per I/O request: submission + completion ("10s of µs") [G, numbers.md §3.3]
HOST_MEMCPY_BANDWIDTH = 10e9  # one CPU thread copying page cache -> pinned buffer, bytes/s [G]
MAX_DIRECT_IO_SIZE = 16 << 20  # cuFile's max_direct_io_size_kb 16384 (numbers.md §3.1, gdscheck -p)


def gds_read_seconds(spec: GPUSpec, nbytes: int, *, requests: int = 1, nvme: NvmeSpec = DEFAULT_NVME) -> float:
    """Modeled time of reading `nbytes` from the drive straight into device memory in `requests` I/Os:
    requests x overhead + bytes / min(drive, P2P efficiency x host link)."""
    rate = min(nvme.read_bandwidth, P2P_EFFICIENCY * spec.host_link[1])
    return requests * REQUEST_OVERHEAD_S + nbytes / rate


def gds_write_seconds(spec: GPUSpec, nbytes: int, *, requests: int = 1, nvme: NvmeSpec = DEFAULT_NVME) -> float:
    """Modeled time of writing `nbytes` of device memory to the drive directly (cuFileWrite)."""
    rate = min(nvme.write_bandwidth, P2P_EFFICIENCY * spec.host_link[1])
    return requests * REQUEST_OVERHEAD_S + nbytes / rate


def nvme_read_seconds(nbytes: int, *, requests: int = 1, nvme: NvmeSpec = DEFAULT_NVME) -> float:
    """Modeled time of the drive alone delivering `nbytes` into host memory."""
    return requests * REQUEST_OVERHEAD_S + nbytes / nvme.read_bandwidth


def host_memcpy_seconds(nbytes: int) -> float:
    """Modeled time of the CPU copying `nbytes` between host buffers (page cache -> pinned staging)."""
    return nbytes / HOST_MEMCPY_BANDWIDTH


def bounce_read_seconds(spec: GPUSpec, nbytes: int, *, requests: int = 1, nvme: NvmeSpec = DEFAULT_NVME) -> float:
    """Modeled time of the bounce path: drive -> host, host memcpy into pinned memory, pinned H2D copy
    (one copy-engine transfer per request), added without overlap."""
    setup = copy_seconds(spec, "HtoD", 0, pinned=True)
    h2d = copy_seconds(spec, "HtoD", nbytes, pinned=True) + (max(requests, 1) - 1) * setup
    return nvme_read_seconds(nbytes, requests=requests, nvme=nvme) + host_memcpy_seconds(nbytes) + h2d
