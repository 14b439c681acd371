"""The copy engines' timing model: how long a DMA transfer takes on the modeled device timeline.

Host <-> device copies cross the host link from the catalogue (PCIe Gen5 x16 on H100/H200/MI300X,
64 GB/s per direction; Gen4 on A100). Pinned (page-locked) host memory streams at
`PINNED_EFFICIENCY` of the link; pageable memory goes through the driver's staging buffers at
`PAGEABLE_FACTOR` of that (measured on real systems: pinned ~0.8-0.9 x link, pageable
~0.35-0.5 x pinned). Device-to-device copies read and write HBM, so they move 2 x bytes at the
catalogue's achievable HBM bandwidth. Every transfer pays `SETUP_S` of engine time first. The
results are modeled figures, never measurements.

Example:
    >>> from strata.hw.catalog import get_spec
    >>> h200 = get_spec("h200")
    >>> round(256 * 2**20 / copy_seconds(h200, "HtoD", 256 * 2**20, pinned=True) / 1e9, 1)  # GB/s
    54.4
    >>> copy_seconds(h200, "HtoD", 1 << 20, pinned=False) > copy_seconds(h200, "HtoD", 1 << 20, pinned=True)
    True
"""

from __future__ import annotations

from strata.hw.catalog import GPUSpec

PINNED_EFFICIENCY = 0.85  # of the host link's per-direction rate [G, numbers.md §2.4 'model defaults']
PAGEABLE_FACTOR = 0.42  # pageable / pinned throughput [G, same source: 0.35-0.5]
SETUP_S = 2e-6  # per transfer: descriptor fetch, engine start, completion write [G]
FILL_BYTES_PER_WRITE = 1  # a memset writes its bytes once (no read)


def copy_seconds(spec: GPUSpec, kind: str, nbytes: int, *, pinned: bool = True) -> float:
    """Modeled engine time of one transfer; `kind` is 'HtoD', 'DtoH', 'DtoD' or 'fill'."""
    if kind in ("HtoD", "DtoH"):
        rate = spec.host_link[1] * PINNED_EFFICIENCY * (1.0 if pinned else PAGEABLE_FACTOR)
        return SETUP_S + nbytes / rate
    hbm = spec.hbm_bandwidth * spec.hbm_efficiency
    if kind == "DtoD":
        return SETUP_S + 2 * nbytes / hbm
    if kind == "fill":
        return SETUP_S + FILL_BYTES_PER_WRITE * nbytes / hbm
    raise ValueError(f"copy kind must be HtoD, DtoH, DtoD or fill, got {kind!r}")
