"""The kernarg segment of a code object v5 kernel: explicit arguments at the metadata's offsets, then
the hidden arguments the runtime fills (what HIP's CLR does before a dispatch).

Hidden arguments strata fills: block_count_x/y/z (u32), group_size_x/y/z (u16), remainder_x/y/z (u16,
the size of the last partial workgroup; 0 when the grid divides evenly), global_offset_x/y/z (0),
grid_dims (u16). hidden_printf_buffer is left zero here and filled by the engine at dispatch
(`hw/amdgpu/printf.py`: the buffer lives in device memory and is printed after the kernel). Others
(hostcall, heap, queue pointers, ...) are left zero; a kernel that needs one of those raises an error at
launch instead of reading a null pointer silently.
"""

from __future__ import annotations

from collections.abc import Sequence

from strata.errors import CudaError
from strata.hw.amdgpu.codeobject import KernelInfo

_ZERO_OK = {"hidden_global_offset_x", "hidden_global_offset_y", "hidden_global_offset_z", "hidden_none",
            "hidden_dynamic_lds_size", "hidden_private_base", "hidden_shared_base", "hidden_multigrid_sync_arg",
            "hidden_completion_action", "hidden_default_queue", "hidden_queue_ptr", "hidden_heap_v1",
            "hidden_printf_buffer", "hidden_hostcall_buffer"}


def build(kernel: KernelInfo, explicit: Sequence[bytes], grid: tuple[int, int, int], block: tuple[int, int, int],
          dynamic_lds: int = 0) -> bytes:
    """The kernarg bytes for a launch of `grid` workgroups of `block` work-items.

    Raises:
        TypeError: wrong number of explicit arguments or an argument of the wrong size.
    """
    args = kernel.explicit_args
    if len(explicit) != len(args):
        raise TypeError(f"[launch {kernel.name}] expects {len(args)} arguments, got {len(explicit)}")
    buf = bytearray(kernel.kernarg_segment_size)
    for i, (a, raw) in enumerate(zip(args, explicit, strict=True)):
        if len(raw) != a.size:
            raise TypeError(f"[launch {kernel.name}] argument {i} ({a.name or a.value_kind}) is {a.size} bytes, "
                            f"got {len(raw)}")
        buf[a.offset:a.offset + a.size] = raw
    dims = 3 if grid[2] > 1 or block[2] > 1 else 2 if grid[1] > 1 or block[1] > 1 else 1
    values = {}
    for d, axis in enumerate("xyz"):
        values[f"hidden_block_count_{axis}"] = grid[d]
        values[f"hidden_group_size_{axis}"] = block[d]
        values[f"hidden_remainder_{axis}"] = 0  # the grid is whole workgroups (HIP's launch counts them)
    values["hidden_grid_dims"] = dims
    values["hidden_dynamic_lds_size"] = dynamic_lds
    for a in kernel.args:
        if not a.value_kind.startswith("hidden_"):
            continue
        if a.value_kind in values:
            buf[a.offset:a.offset + a.size] = int(values[a.value_kind]).to_bytes(a.size, "little")
        elif a.value_kind not in _ZERO_OK:
            raise CudaError("cudaErrorNotSupported", f"[launch {kernel.name}] hidden kernel argument "
                            f"{a.value_kind} is not provided by strata's runtime")
    return bytes(buf)
