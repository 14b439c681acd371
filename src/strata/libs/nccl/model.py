"""The collectives' modeled time, after NCCL's bus-bandwidth model (nccl-tests' PERFORMANCE notes).

For a collective of S bytes on n ranks, the algorithm bandwidth is algbw = S / t and the bus bandwidth
busbw = algbw x factor, where the factor counts how much of S each rank's links must carry in the
ring: all_reduce 2(n-1)/n; all_gather, reduce_scatter, all_to_all (n-1)/n; broadcast, reduce,
send/recv 1. busbw is what compares across n with the link's speed. The model inverts it: a ring
reaches busbw = `RING_EFFICIENCY` x the per-GPU link rate of the topology (`hw/topology.py`), and
each of its steps pays the link latency:

    t = steps x latency + S x factor / (RING_EFFICIENCY x link rate)

The tree and NVLS (NVLink SHARP, the switch reduces) all-reduces have their own terms (`model`).

Example:
    >>> from strata.hw.catalog import get_spec
    >>> m = model("all_reduce", 256 << 20, [get_spec("h200")] * 8)
    >>> round(m.busbw / 1e9), round(m.algbw / 1e9)
    (378, 216)
    >>> round(model("all_reduce", 256 << 20, [get_spec("h200")] * 8, "nvls").busbw / 1e9)
    478
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from strata.hw.catalog import GPUSpec
from strata.hw.topology import collective_bandwidth, collective_latency, system_for
from strata.libs.nccl.types import NcclError

RING_EFFICIENCY = 0.85  # of the link rate a large ring collective sustains [G; see docs/distributed.md]
# NVLink SHARP (NCCL's NVLS): the NVSwitch reduces. Its fixed cost is NCCL's own tuning-table figure for
# NVLS over NVLink (25 us); its efficiency is a guess [G], set so that 8 H100/H200 land near nccl-tests'
# published ~480 GB/s busbw at large sizes, so the bench's comparison is a consistency check, not a prediction.
NVLS_LATENCY_S = 25e-6
NVLS_EFFICIENCY = 0.70
_NVLS_LINKS = frozenset({"NVLink4", "NVLink5"})  # third-generation NVSwitch onwards (Hopper): multimem reductions


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
    children, S for two ranks), so the tree wins small, latency-bound sizes and the ring large ones.

    `algorithm="nvls"` (all_reduce on an NVSwitch that reduces, `nvls_supported`): two steps, the switch
    summing each rank's shard as the rank reads it (reduce-scatter) and copying each reduced shard to
    every rank as its owner writes it once (all-gather). Each GPU's link carries S + S/n each way (its
    whole buffer up and its shard back, then its shard up and every shard back) instead of the ring's
    2(n-1)/n x S, for a fixed `NVLS_LATENCY_S`; at `NVLS_EFFICIENCY` of the link rate it beats the ring
    from about 11 MB on 8 H200s."""
    n = len(specs)
    factor = bus_factor(op, n)
    rate = collective_bandwidth(specs) * RING_EFFICIENCY
    latency = collective_latency(specs)
    if algorithm == "nvls" and op == "all_reduce":
        if not nvls_supported(specs):
            raise NcclError("ncclInvalidUsage", f"NVLS (NVLink SHARP) needs more than 2 GPUs on a third-generation "
                            f"NVSwitch (HGX H100/H200); these are {n} x {specs[0].name if specs else '-'}")
        seconds = NVLS_LATENCY_S + nbytes * (n + 1) / n / (collective_bandwidth(specs) * NVLS_EFFICIENCY)
        algbw = nbytes / seconds
        return CollectiveModel(op, nbytes, n, seconds, algbw, algbw * factor, seconds / 2, "nvls")
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


def nvls_supported(specs: Sequence[GPUSpec]) -> bool:
    """Whether these GPUs can run NVLS: more than two (as NCCL requires), all on one platform whose
    NVSwitch reduces in the switch (NVLink 4 onwards: HGX H100/H200; not HGX A100, not an xGMI mesh)."""
    system = system_for(specs)
    return len(specs) > 2 and system is not None and system.fabric == "nvswitch" and system.link_name in _NVLS_LINKS


ALGORITHMS = ("ring", "tree", "nvls")  # what strata models, in NCCL_ALGO's spelling, lower-cased
_NCCL_ONLY = ("collnetdirect", "collnetchain", "nvlstree", "pat")  # NCCL's other algorithms: none here


def allowed_algorithms(nccl_algo: str | None) -> tuple[str, ...] | None:
    """The algorithms NCCL_ALGO allows, as NCCL reads it ('Ring,Tree' those, '^NVLS' all but those;
    case-insensitive), among strata's; None when unset. NCCL's algorithms strata does not model may be
    named (they are never available here).

    Raises:
        NcclError: ncclInvalidArgument for a name NCCL does not know."""
    if not nccl_algo:
        return None
    exclude = nccl_algo.startswith("^")
    names = [a.strip().lower() for a in nccl_algo.lstrip("^").split(",") if a.strip()]
    bad = [a for a in names if a not in ALGORITHMS + _NCCL_ONLY]
    if bad or not names:
        raise NcclError("ncclInvalidArgument", f"NCCL_ALGO={nccl_algo!r}: expected a comma list of NCCL's algorithms "
                        f"(strata runs {', '.join(ALGORITHMS)}), optionally after '^' to exclude them")
    return tuple(a for a in ALGORITHMS if (a in names) != exclude)


def choose_algorithm(op: str, nbytes: int, specs: Sequence[GPUSpec], allowed: Sequence[str] | None = None) -> str:
    """NCCL's tuner in miniature: the algorithm with the smallest modeled time among those that apply
    (all_reduce: 'ring'; 'tree' from 3 ranks; 'nvls' where `nvls_supported`) and `allowed` (NCCL_ALGO's
    list; None: all). Other collectives run the ring whatever `allowed` says.

    Raises:
        NcclError: ncclInvalidUsage when `allowed` leaves no algorithm that applies (NCCL: "no algorithm
            available")."""
    if op != "all_reduce":
        return "ring"
    candidates = ["ring"] + (["tree"] if len(specs) >= 3 else []) + (["nvls"] if nvls_supported(specs) else [])
    usable = [a for a in candidates if allowed is None or a in allowed]
    if not usable:
        raise NcclError("ncclInvalidUsage", f"[all_reduce] NCCL_ALGO allows {', '.join(allowed or [])}, none of "
                        f"which runs on {len(specs)} x {specs[0].name if specs else '-'} (available: "
                        f"{', '.join(candidates)})")
    return min(usable, key=lambda a: model(op, nbytes, specs, a).seconds)
