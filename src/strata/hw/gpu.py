"""One virtual GPU: its catalogue entry, its HBM, and the engine that runs its kernels.

This is the device the kernel driver (L1) opens. Everything below the driver's interface is
hardware: memory, the loaded programs, and execution of launches.
"""

from __future__ import annotations

from strata import config, trace
from strata.hw.catalog import GPUSpec, get_spec
from strata.hw.engine import DEFAULT_STACK_BYTES, LaunchConfig, LaunchControl, LaunchResult, execute
from strata.hw.isa.device_runtime import DeviceRuntime, GridRuntime, run_children, uses_heap
from strata.hw.jit import Program
from strata.hw.memory import DeviceMemory
from strata.hw.ptx.ir import Module
from strata.hw.ptx.parser import parse_cached
from strata.hw.topology import register_memory


class VirtualGPU:
    """A virtual GPU modeled on a catalogue entry (default: H200).

    Example:
        >>> gpu = VirtualGPU("h100")
        >>> gpu.spec.sm_count, gpu.memory.capacity == gpu.spec.hbm_bytes
        (132, True)
    """

    def __init__(self, model: str = "h200") -> None:
        self.spec: GPUSpec = get_spec(model)
        self.memory = DeviceMemory(self.spec.hbm_bytes, uva=True)  # its own range of the unified address space
        register_memory(self.memory, self.spec)  # copy engines time peer transfers by the peer's model
        self.base_address = self.memory.base
        # the device runtime (heap, device launches); the driver gives it VRAM for its regions
        self.runtime = DeviceRuntime(self.memory, max_threads_per_block=self.spec.max_threads_per_block,
                                     max_block_dim=self.spec.max_block_dim,
                                     max_grid_dim=self.spec.max_grid_dim,
                                     max_shared_per_block=self.spec.shared_mem_per_block_optin)
        sp = self.spec
        self.runtime.attributes = {  # cudaDeviceAttr values device code may ask about
            1: sp.max_threads_per_block, 2: sp.max_block_dim[0], 3: sp.max_block_dim[1], 4: sp.max_block_dim[2],
            5: sp.max_grid_dim[0], 6: sp.max_grid_dim[1], 7: sp.max_grid_dim[2], 8: sp.shared_mem_per_block,
            10: sp.warp_size, 16: sp.sm_count, 39: sp.max_threads_per_sm, 75: sp.compute_capability[0],
            76: sp.compute_capability[1], 97: sp.shared_mem_per_block_optin}

    @staticmethod
    def parse(ptx: str) -> Module:
        """Parse PTX text (raises PTXSyntaxError with line and column); the same text parses once."""
        return parse_cached(ptx)

    def load(self, module: Module, global_addresses: dict[str, int]) -> Program:
        """JIT a parsed module whose variables live at `global_addresses` (UnsupportedInstruction
        if any instruction cannot run)."""
        return Program(module, global_addresses)

    def launch(self, program: Program, kernel: str, launch: LaunchConfig, *, control: LaunchControl | None = None,
               stack_bytes: int = DEFAULT_STACK_BYTES) -> LaunchResult:
        """Run a launch to completion (see `engine.execute`); `control` lets another thread cancel it,
        `stack_bytes` is the per-thread call stack (cudaLimitStackSize)."""
        s = config.settings()
        heap = program.__dict__.get("_uses_heap")
        if heap is None:  # (a property of the module: asked once per program, not per launch)
            heap = program.__dict__["_uses_heap"] = uses_heap(program.module)
        if heap:  # CUDA reserves the heap when a kernel that uses malloc is launched
            self.runtime.heap.ensure()

        def run(name: str, cfg: LaunchConfig, rt: GridRuntime) -> LaunchResult:
            return execute(program, name, cfg, self.memory, sm_count=self.spec.sm_count,
                           budget=s.launch_budget, chunk_lanes=s.chunk_lanes, timeout_s=s.kernel_timeout,
                           stack_bytes=stack_bytes, control=control, runtime=rt, clock_mhz=self.spec.clock_mhz)

        externs = program.__dict__.get("_calls_runtime")
        if externs is None:  # (only a call to a body-less function reaches the device runtime: asked once)
            externs = program.__dict__["_calls_runtime"] = any(not f.has_body
                                                               for f in program.module.functions.values())
        if not externs:  # nothing can record a launch or read the grid's runtime state: no GridRuntime to make
            with trace.span("L0", "execute", kernel=kernel, threads=launch.num_blocks * launch.threads_per_block) as ev:
                result = execute(program, kernel, launch, self.memory, sm_count=self.spec.sm_count,
                                 budget=s.launch_budget, chunk_lanes=s.chunk_lanes, timeout_s=s.kernel_timeout,
                                 stack_bytes=stack_bytes, control=control, runtime=None, clock_mhz=self.spec.clock_mhz)
                ev["thread_instructions"] = result.counters.total_thread_instructions
            return result
        with trace.span("L0", "execute", kernel=kernel, threads=launch.num_blocks * launch.threads_per_block) as ev:
            rt = self.runtime.grid()
            try:
                result = run(kernel, launch, rt)
            except BaseException:
                rt.discard()  # its device launches never start
                raise
            # device launches run after their parent grid, nested in its span (isa/device_runtime.py)
            run_children(rt, kernel, result, run, LaunchConfig)
            ev["thread_instructions"] = result.counters.total_thread_instructions
        return result
