"""Per-launch counters of the virtual GPU, the facts the timing model and the reports read.

The engine fills one `Counters` per launch; counts are exact (not sampled) for the lanes that ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields

# Instruction classes, as a profiler groups them (Nsight Compute's pipe utilisation, roughly).
INSTRUCTION_CLASSES: tuple[str, ...] = (
    "fp32", "fp64", "fp16", "integer", "sfu", "memory", "control", "sync", "atomic", "tensor",
)


@dataclass
class Counters:
    """What one launch did. `thread_instructions[c]` counts lanes that issued an instruction of
    class c; `warp_instructions[c]` counts warps with at least one such lane."""

    thread_instructions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INSTRUCTION_CLASSES, 0))
    warp_instructions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(INSTRUCTION_CLASSES, 0))
    flops: dict[str, int] = field(default_factory=lambda: {"fp32": 0, "fp64": 0, "fp16": 0, "tensor": 0})
    # flops['tensor'] split by the catalogue peak that prices it ('tensor_bf16', 'tensor_tf32', 'int8', ...)
    tensor_flops: dict[str, int] = field(default_factory=dict)
    global_load_bytes: int = 0
    global_store_bytes: int = 0
    global_load_sectors: int = 0  # 32-byte sectors the warps' loads touched
    global_store_sectors: int = 0
    # sectors the same requests would touch if perfectly coalesced: each request's distinct bytes / 32,
    # rounded up (a broadcast of one word to 32 lanes needs one sector, as does 32 lanes reading it)
    global_load_ideal_sectors: int = 0
    global_store_ideal_sectors: int = 0
    global_load_requests: int = 0  # warp-level load instructions
    global_store_requests: int = 0
    shared_load_bytes: int = 0
    shared_store_bytes: int = 0
    shared_requests: int = 0  # warp-level shared memory instructions
    shared_bank_conflicts: int = 0  # extra wavefronts beyond one per request
    local_bytes: int = 0
    atomic_ops: int = 0
    barriers: int = 0  # bar.sync executions per block
    branches: int = 0  # warp-level branch executions
    divergent_branches: int = 0  # warp-level branches whose lanes went both ways
    threads_launched: int = 0
    blocks_launched: int = 0

    @property
    def total_thread_instructions(self) -> int:
        return sum(self.thread_instructions.values())

    @property
    def total_warp_instructions(self) -> int:
        return sum(self.warp_instructions.values())

    @property
    def simt_efficiency(self) -> float:
        """Active lanes per issued warp instruction, over 32 (1.0 = no divergence, full warps)."""
        w = self.total_warp_instructions
        return self.total_thread_instructions / (32 * w) if w else 1.0

    @property
    def global_bytes(self) -> int:
        return self.global_load_bytes + self.global_store_bytes

    @property
    def coalescing_efficiency(self) -> float:
        """Sectors perfectly coalesced requests would touch over the sectors they did, in [0, 1]
        (1.0 = perfectly coalesced; lanes sharing an address, a broadcast, cost nothing extra).

        Not lane bytes over sector bytes: that exceeds 1 as soon as lanes of a warp read the same bytes.
        """
        sectors = self.global_load_sectors + self.global_store_sectors
        ideal = self.global_load_ideal_sectors + self.global_store_ideal_sectors
        return min(ideal / sectors, 1.0) if sectors else 1.0

    def add(self, other: Counters) -> None:
        """Add `other`'s counts into these (per-class dicts key by key): one launch's counters from the parts
        that ran on different host threads.

        >>> a, b = Counters(barriers=1), Counters(barriers=2)
        >>> b.thread_instructions["fp32"] = 3
        >>> a.add(b); (a.barriers, a.thread_instructions["fp32"])
        (3, 3)
        """
        for f in fields(self):
            mine, theirs = getattr(self, f.name), getattr(other, f.name)
            if isinstance(mine, dict):
                for k, v in theirs.items():
                    mine[k] = mine.get(k, 0) + v
            else:
                setattr(self, f.name, mine + theirs)

    def as_dict(self) -> dict[str, object]:
        d: dict[str, object] = {k: v for k, v in self.__dict__.items()}
        d["simt_efficiency"] = self.simt_efficiency
        d["coalescing_efficiency"] = self.coalescing_efficiency
        d["total_thread_instructions"] = self.total_thread_instructions
        return d
