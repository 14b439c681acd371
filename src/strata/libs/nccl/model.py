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
    algorithm: str = "ring"


def tree_depth(n: int) -> int:
    """Levels below the root of the binary tree over n ranks (rank r's parent is (r-1)//2)."""
    return max(0, (n).bit_length() - 1)


def model(op: str, nbytes: int, specs: Sequence[GPUSpec], algorithm: str = "ring") -> CollectiveModel:
    """Model one collective of `nbytes` (nccl-tests' S: the per-rank buffer for all_reduce, broadcast and
    reduce; the whole gathered/scattered buffer for all_gather and reduce_scatter) on these GPUs.

    `algorithm="tree"` (all_reduce only): a reduce up a binary tree then a broadcast down it, pipelined:
    2 x depth steps of latency, and a busy inner rank moves 3 x S each way (from two children and to
    its parent going up, from its parent and to two children going down; 2 x S at a root of two
    children, S for two ranks), so the tree wins small, latency-bound sizes and the ring large ones."""
    n = len(specs)
    factor = bus_factor(op, n)
    rate = collective_bandwidth(specs) * RING_EFFICIENCY
    latency = collective_latency(specs)
    if algorithm == "tree" and op == "all_reduce" and n > 1:
        steps = 2 * tree_depth(n)
        seconds = steps * latency + {2: 1, 3: 2}.get(n, 3) * nbytes / rate
    else:
        steps = ring_steps(op, n)
        seconds = steps * latency + (nbytes * factor / rate if n > 1 else nbytes / rate)
    algbw = nbytes / seconds if seconds else 0.0
    tree = algorithm == "tree" and op == "all_reduce" and n > 1
    return CollectiveModel(op, nbytes, n, seconds, algbw, algbw * factor, seconds / max(steps, 1),
                           "tree" if tree else "ring")


def choose_algorithm(op: str, nbytes: int, specs: Sequence[GPUSpec]) -> str:
    """NCCL's tuner in miniature: the algorithm with the smaller modeled time ('tree' only for all_reduce)."""
    if op != "all_reduce" or len(specs) < 3:
        return "ring"
    ring, tree = model(op, nbytes, specs, "ring"), model(op, nbytes, specs, "tree")
    return "tree" if tree.seconds < ring.seconds else "ring"
