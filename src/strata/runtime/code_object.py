"""Code object loading (hsa_executable_load_agent_code_object / hipModuleLoadData on ROCm): the image is
placed in device memory, each kernel is decoded for the CDNA engine, and its kernel object (descriptor,
kernarg size, group segment, registers) is registered with the command processor on first dispatch."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from strata import trace
from strata.driver.device import DeviceFile
from strata.errors import CudaError
from strata.hw.amdgpu.codeobject import CodeObject, parse
from strata.hw.amdgpu.executor import AmdProgram, load_program
from strata.hw.amdgpu.occupancy import vgprs_per_wave
from strata.hw.cp import KernelObject
from strata.runtime.context import Stream
from strata.runtime.signals import Signal


@dataclass
class LoadedCodeObject:
    """A code object resident on a device: its image's address and its kernels' programs."""

    device: DeviceFile
    code_object: CodeObject
    image_address: int
    programs: dict[str, AmdProgram]
    kernel_objects: dict[str, int] = field(default_factory=dict)

    @property
    def variables(self) -> dict[str, tuple[int, int]]:
        """Its `__device__`/`__constant__` variables: name -> (device address, size)."""
        return {n: (self.image_address + v, size) for n, (v, size) in self.code_object.variables.items()}

    def kernel_object(self, name: str) -> int:
        """The kernel_object handle dispatch packets name (registered on first use)."""
        handle = self.kernel_objects.get(name)
        if handle is None:
            prog = self.programs.get(name)
            if prog is None:
                raise CudaError("cudaErrorInvalidDeviceFunction", f"[dispatch] no kernel {name!r} in the code object; "
                                f"kernels: {sorted(self.programs)}")
            k = prog.kernel
            handle = self.device.register_kernel(KernelObject(
                prog, name, k.kernarg_segment_size, k.group_segment_fixed_size, vgprs_per_wave(k), "code object",
                kind="amdgcn"))
            self.kernel_objects[name] = handle
        return handle

    def unload(self) -> None:
        for handle in self.kernel_objects.values():
            self.device.unregister_kernel(handle)
        self.kernel_objects.clear()
        self.device.free(self.image_address)


def load_code_object(device: DeviceFile, image: bytes, parsed: CodeObject | None = None,
                     decoded: dict[str, AmdProgram] | None = None) -> LoadedCodeObject:
    """Load an AMDGPU code object onto `device`. `parsed`/`decoded`: the image already parsed and its
    kernels already decoded (a module that checked them at creation), so loading does not redo it.

    Raises:
        CodeObjectError: malformed image. UnsupportedAmdInstruction: an instruction the engine lacks.
    """
    with trace.span("L2", "code_object_load", bytes=len(image)):
        co = parsed if parsed is not None else parse(image)
        if decoded is not None:  # per load: the image's address differs (s_getpc_b64 reads it)
            programs = {name: dataclasses.replace(p) for name, p in decoded.items()}
        else:
            programs = {name: load_program(k) for name, k in co.kernels.items()}
        # the PT_LOAD segments at their virtual addresses, .bss zeroed: code, descriptors and global variables
        # keep the offsets the linker gave them, so PC-relative references (s_getpc_b64 + offset) resolve
        size = max(co.image_size, 1)
        addr = device.alloc(size, "code object")
        device.fill(addr, 0, size)
        for vaddr, offset, filesz, _memsz in co.segments or [(0, 0, len(co.image), len(co.image))]:
            device.write(addr + vaddr, co.image[offset:offset + filesz])
        for where, patch in co.relocated(addr):  # e.g. tables of function pointers
            device.write(addr + where, patch)
        for prog in programs.values():
            prog.image_base = addr
        return LoadedCodeObject(device, co, addr, programs)


def launch_code_object_kernel(stream: Stream, loaded: LoadedCodeObject, kernel: str, grid: tuple[int, int, int],
                              block: tuple[int, int, int], dynamic_lds: int, kernarg: bytes) -> Signal:
    """Queue a dispatch of `kernel` with its full kernarg segment (explicit and hidden arguments)."""
    with trace.span("L2", "hsa_kernel_dispatch", kernel=kernel, grid=grid, block=block):
        handle = loaded.kernel_object(kernel)
        group = loaded.programs[kernel].kernel.group_segment_fixed_size + dynamic_lds
        return stream.launch(handle, grid, block, group, kernarg)
