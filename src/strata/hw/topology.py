"""System topologies: how the GPUs of one machine are joined, and what a byte costs between two of them.

The catalogue (`catalog.py`) describes one GPU; this module describes the boards they sit on. Two
8-GPU platforms are modeled, as they ship:

- **HGX H200** (and HGX H100, same fabric): each GPU has 18 NVLink 4 links (50 GB/s each, both
  directions together: 900 GB/s per GPU) into NVSwitch chips, so every pair of GPUs talks at the
  full per-GPU rate, 450 GB/s per direction. `nvidia-smi topo -m` prints `NV18` for every pair.
- **HGX A100**: 12 NVLink 3 links per GPU into NVSwitch (600 GB/s per GPU, 300 per direction), `NV12`.
- **MI300X platform** (AMD Instinct MI300X OAM x 8): each GPU has 7 Infinity Fabric (xGMI) links,
  one to each other GPU (a fully connected mesh), 896 GB/s aggregate per GPU, so 128 GB/s per link
  in both directions, 64 GB/s per direction per pair. RCCL drives all seven at once (one ring per
  link set), so a collective sees the aggregate; a single peer copy sees one link. `rocm-smi
  --showtopo` prints `XGMI` between GPUs.

GPUs of different vendors share no fabric: copies between them go through host memory over PCIe
(`SYS` in the matrix) and peer access is refused. Figures (all per direction unless said):
NVLink 4 900 GB/s per GPU (vendor H100/H200 tables; 18 x 50 GB/s in HGX H200 system descriptions);
NVLink 3 600 GB/s per A100 (vendor A100 table); MI300X seven xGMI links in a fully connected 8-GPU
node (ROCm MI300 architecture page), 896 GB/s aggregate (one spec database; another source says
448 GB/s, so the per-link rate is a judgement, marked [G] in `sources`). Efficiencies and latencies
are guesses [G], documented in docs/distributed.md.

Example:
    >>> from strata.hw.catalog import get_spec
    >>> h200 = get_spec("h200")
    >>> link_between(h200, h200).label, round(link_between(h200, h200).bandwidth / 1e9)
    ('NV18', 450)
    >>> mi = get_spec("mi300x")
    >>> link_between(mi, mi).label, round(link_between(mi, mi).bandwidth / 1e9)
    ('XGMI', 64)
    >>> round(collective_bandwidth([mi] * 8) / 1e9)
    448
    >>> system_for([h200] * 8).product
    'NVIDIA HGX H200 8-GPU'
"""

from __future__ import annotations

import weakref
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from strata.hw.catalog import GPUSpec
from strata.hw.memory import DeviceMemory

GB = 1e9
PEER_COPY_EFFICIENCY = 0.9  # of the pair's per-direction link rate a copy engine reaches [G]
PEER_SETUP_S = 3e-6  # per peer transfer: descriptor fetch, engine start, remote completion write [G]


@dataclass(frozen=True)
class SystemSpec:
    """One multi-GPU platform: which GPU, how many, and the fabric between them.

    `link_bandwidth` is bytes/s per direction of one link; `fabric` is 'nvswitch' (every pair at the
    GPU's full rate through switches) or 'mesh' (one direct link per pair)."""

    name: str
    product: str
    gpu: str  # catalogue key of the GPU model
    gpus: int
    fabric: str  # 'nvswitch' | 'mesh'
    link_name: str
    links_per_gpu: int
    link_bandwidth: float  # bytes/s per direction, one link
    link_latency_s: float  # one hop, GPU to GPU (NCCL's per-step latency term uses it)
    sources: Mapping[str, str] = field(default_factory=dict)

    @property
    def gpu_bandwidth(self) -> float:
        """All of one GPU's links together, bytes/s per direction."""
        return self.links_per_gpu * self.link_bandwidth

    @property
    def pair_bandwidth(self) -> float:
        """Bytes/s per direction between two GPUs: the whole GPU through switches, one link in a mesh."""
        return self.gpu_bandwidth if self.fabric == "nvswitch" else self.link_bandwidth

    @property
    def label(self) -> str:
        """The `nvidia-smi topo -m` / `rocm-smi --showtopo` word for a GPU pair."""
        return f"NV{self.links_per_gpu}" if self.fabric == "nvswitch" else "XGMI"


SYSTEMS: dict[str, SystemSpec] = {s.name: s for s in (
    SystemSpec("hgx-h200", "NVIDIA HGX H200 8-GPU", "h200", 8, "nvswitch", "NVLink4", 18, 25 * GB, 1.0e-6,
               {"link_bandwidth": "18 x 50 GB/s = 900 GB/s per GPU, both directions [S5,S6]; 25 GB/s per "
                                  "direction per link [D]",
                "link_latency_s": "[G] ~1 us GPU-to-GPU through NVSwitch"}),
    SystemSpec("hgx-h100", "NVIDIA HGX H100 8-GPU", "h100", 8, "nvswitch", "NVLink4", 18, 25 * GB, 1.0e-6,
               {"link_bandwidth": "NVLink4 900 GB/s per GPU [S1,S3]; 18 links [S6]"}),
    SystemSpec("hgx-a100", "NVIDIA HGX A100 8-GPU", "a100", 8, "nvswitch", "NVLink3", 12, 25 * GB, 1.5e-6,
               {"link_bandwidth": "NVLink3 600 GB/s per GPU ('300+300') [S1,S2]; 12 links [D]"}),
    SystemSpec("mi300x-platform", "AMD Instinct MI300X Platform (8 x OAM)", "mi300x", 8, "mesh", "xGMI", 7,
               64 * GB, 1.5e-6,
               {"links_per_gpu": "[P3] seven Infinity Fabric links, fully connected 8-GPU system",
                "link_bandwidth": "[S11] 896 GB/s aggregate = 7 x 128 GB/s both directions -> 64 GB/s per "
                                  "direction [D]; [S12] says 448 aggregate: conflicting, 896 taken [G]",
                "link_latency_s": "[G]"}),
)}


@dataclass(frozen=True)
class Link:
    """The path between two GPUs: the matrix label, bytes/s per direction, latency, and whether kernels
    and copy engines may reach across it (peer-to-peer)."""

    label: str  # 'X', 'NV18', 'NV12', 'XGMI', 'SYS'
    bandwidth: float
    latency_s: float
    p2p: bool


def system_of(spec: GPUSpec) -> SystemSpec | None:
    """The 8-GPU platform a GPU model ships in (None if none is modeled)."""
    for s in SYSTEMS.values():
        if s.gpu == spec.name:
            return s
    return None


def system_for(specs: Sequence[GPUSpec]) -> SystemSpec | None:
    """The platform these GPUs form: all one model and no more than the platform holds, else None."""
    if not specs or len({s.name for s in specs}) != 1:
        return None
    system = system_of(specs[0])
    return system if system is not None and len(specs) <= system.gpus else None


def link_between(a: GPUSpec, b: GPUSpec, *, same: bool = False) -> Link:
    """The path from GPU `a` to GPU `b` (`same=True`: they are one GPU).

    Two GPUs of one vendor share the fabric of their platforms (the slower one's, if models differ:
    an H100 next to an A100 talks NVLink 3); GPUs of different vendors only meet through host memory."""
    if same:
        return Link("X", a.hbm_bandwidth * a.hbm_efficiency, 0.0, True)
    sa, sb = system_of(a), system_of(b)
    if a.vendor != b.vendor or sa is None or sb is None:
        rate = min(a.host_link[1], b.host_link[1])
        return Link("SYS", rate, 5e-6, False)
    slow = sa if sa.pair_bandwidth <= sb.pair_bandwidth else sb
    return Link(slow.label, slow.pair_bandwidth, max(sa.link_latency_s, sb.link_latency_s), True)


def peer_copy_seconds(a: GPUSpec, b: GPUSpec, nbytes: int) -> float:
    """Modeled copy-engine time of one `nbytes` transfer from GPU `a` to GPU `b` over their link."""
    link = link_between(a, b)
    return PEER_SETUP_S + link.latency_s + nbytes / (link.bandwidth * PEER_COPY_EFFICIENCY)


def collective_bandwidth(specs: Sequence[GPUSpec]) -> float:
    """Bytes/s per direction one GPU can feed into a ring collective over these GPUs: the slowest
    GPU's whole fabric (NVSwitch gives every ring edge the full rate; on an xGMI mesh RCCL runs
    rings over all links at once); host links when the GPUs share no fabric."""
    if len(specs) < 2:
        return specs[0].hbm_bandwidth * specs[0].hbm_efficiency if specs else 0.0
    rates = []
    for s in specs:
        system = system_of(s)
        if system is None or any(t.vendor != s.vendor for t in specs):
            rates.append(min(t.host_link[1] for t in specs))
        else:
            rates.append(system.gpu_bandwidth)
    return min(rates)


def collective_latency(specs: Sequence[GPUSpec]) -> float:
    """Per-step latency of a ring collective over these GPUs (the slowest link's)."""
    if len(specs) < 2:
        return 0.0
    return max(link_between(specs[i], specs[(i + 1) % len(specs)]).latency_s for i in range(len(specs)))


def topo_matrix(specs: Sequence[GPUSpec]) -> list[list[str]]:
    """The `nvidia-smi topo -m` matrix of these GPUs: `matrix[i][j]` labels the path from i to j."""
    return [[link_between(a, b, same=i == j).label for j, b in enumerate(specs)] for i, a in enumerate(specs)]


# Which GPU model each device memory belongs to, so a copy engine can time a transfer to a peer it only
# knows by address (the memory of a dropped device leaves this map with it).
_MODEL_OF: weakref.WeakKeyDictionary[DeviceMemory, GPUSpec] = weakref.WeakKeyDictionary()


def register_memory(memory: DeviceMemory, spec: GPUSpec) -> None:
    """Record that `memory` is the HBM of a `spec` GPU (VirtualGPU does this when it is built)."""
    _MODEL_OF[memory] = spec


def spec_of_memory(memory: DeviceMemory) -> GPUSpec | None:
    """The GPU model whose HBM `memory` is, if registered."""
    return _MODEL_OF.get(memory)
