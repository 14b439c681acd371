"""The collectives' modeled time, after NCCL's bus-bandwidth model (nccl-tests' PERFORMANCE notes).

For a collective of S bytes on n ranks, the algorithm bandwidth is algbw = S / t and the bus bandwidth
busbw = algbw x factor, where the factor counts how much of S each rank's links must carry in the
ring: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce,
send/recv 1. busbw is what compares across n with the link's speed. The model inverts it: a ring
reaches busbw = `RING_EFFICIENCY` x the per-GPU link rate of the topology (`hw/topology.py`), and
each of its steps pays the link latency:

    t = steps x latency + S x factor / (RING_EFFICIENCY x link rate)

Example:
    >>> from strata.hw.catalog import get_spec
    >>> m = model("all_reduce", 256 << 20, [get_spec("h200")] * 8)
    >>> round(m.busbw / 1e9), round(m.algbw / 1e9)
    (378, 216)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strata.hw.catalog import GPUSpec
from strata.hw.topology import collective_bandwidth, collective_latency

RING_EFFICIENCY = 0.85  # of the link rate a large ring collective sustains [G; see docs/distributed.md]


def bus_factor(op: str, n: int) -> float:
    """nccl-tests' busbw / algbw factor of `op` on `n` ranks."""
    if n <= 1:
        return 1.0
    if op == "all_reduce":
        return 2 * (n - 1) / n
    if op in ("all_gather", "reduce_scatter", "all_to_all"):
        return (n - 1) / n
    return 1.0


def ring_steps(op: str, n: int) -> int:
    """How many dependent steps the ring takes (each pays the link latency once)."""
    if n <= 1:
        return 1
    return {"all_reduce": 2 * (n - 1), "all_to_all": 1, "send_recv": 1}.get(op, n - 1)


@dataclass(frozen=True)
class CollectiveModel:
    """Modeled figures of one collective: seconds, algbw and busbw (bytes/s), and the step time."""

    op: str
    nbytes: int
    nranks: int
    seconds: float
    algbw: float
    busbw: float
    step_seconds: float


def model(op: str, nbytes: int, specs: Sequence[GPUSpec]) -> CollectiveModel:
    """Model one collective of `nbytes` (nccl-tests' S: the per-rank buffer for all_reduce, broadcast and
    reduce; the whole gathered/scattered buffer for all_gather and reduce_scatter) on these GPUs."""
    n = len(specs)
    factor = bus_factor(op, n)
    rate = collective_bandwidth(specs) * RING_EFFICIENCY
    steps = ring_steps(op, n)
    latency = collective_latency(specs)
    seconds = steps * latency + (nbytes * factor / rate if n > 1 else nbytes / rate)
    algbw = nbytes / seconds if seconds else 0.0
    return CollectiveModel(op, nbytes, n, seconds, algbw, algbw * factor, seconds / steps)
