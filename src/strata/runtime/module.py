"""Module loading (cuModuleLoadData / hipModuleLoadData): parse PTX, place its variables in device
memory with their initializers, and have the device JIT it."""

from __future__ import annotations

from dataclasses import dataclass, field

from strata import trace
from strata.driver.device import DeviceFile
from strata.errors import CudaError, PTXSyntaxError
from strata.hw.cp import KernelObject
from strata.hw.jit import Program, function_address
from strata.hw.ptx.ir import Module, VarDecl


@dataclass
class LoadedModule:
    """A module resident on a device: the JIT'd program and the addresses of its variables."""

    device: DeviceFile
    module: Module
    program: Program
    variables: dict[str, tuple[int, int]] = field(default_factory=dict)  # name -> (address, size)
    kernel_objects: dict[str, int] = field(default_factory=dict)  # kernel -> kernel_object handle

    def kernel_object(self, name: str, registers: int, registers_source: str) -> int:
        """The kernel_object handle AQL dispatch packets name (registered on first use, with the
        register count and segment sizes a code object's kernel descriptor carries)."""
        handle = self.kernel_objects.get(name)
        if handle is None:
            fn = self.module.functions.get(name)
            if fn is None or not fn.is_entry:
                raise CudaError("cudaErrorInvalidDeviceFunction", f"[dispatch] no kernel {name!r} in the module")
            handle = self.device.register_kernel(KernelObject(
                self.program, name, kernarg_segment_size(fn.params), self.program.shared_bytes(name, 0),
                registers, registers_source))
            self.kernel_objects[name] = handle
        return handle

    def unload(self) -> None:
        for handle in self.kernel_objects.values():
            self.device.unregister_kernel(handle)
        for addr, _ in self.variables.values():
            self.device.free(addr)
        self.variables.clear()
        self.kernel_objects.clear()


def kernarg_segment_size(params: list) -> int:
    """Bytes of the kernel-argument block: each parameter at its alignment, in order."""
    size = 0
    for p in params:
        size += -size % p.align + p.size
    return size


def load_module(device: DeviceFile, ptx: str) -> LoadedModule:
    """Load PTX text onto `device`. Raises PTXSyntaxError or UnsupportedInstruction."""
    with trace.span("L2", "module_load", bytes=len(ptx)):
        module = device.gpu.parse(ptx)
        decls: list[VarDecl] = [v for v in module.variables if v.space in ("global", "const")]
        for fn in module.functions.values():
            decls += [v for v in fn.variables if v.space in ("global", "const")]
        variables: dict[str, tuple[int, int]] = {}
        try:
            for v in decls:
                if v.extern or v.name in variables:
                    continue
                addr = device.alloc(max(v.size, 1), f".{v.space} {v.name}")
                device.fill(addr, 0, max(v.size, 1))  # C++: variables without initializers are zero
                variables[v.name] = (addr, v.size)
            for v in decls:
                if v.name in variables and v.init is not None:
                    addr, _ = variables[v.name]
                    init = bytearray(v.init)
                    for off, sym, add in v.relocs:
                        if sym in variables:
                            target = variables[sym][0]
                        elif sym in module.functions:
                            target = function_address(module, sym)
                        else:
                            raise PTXSyntaxError(f"initializer of {v.name!r} refers to unknown symbol {sym!r}", v.line)
                        size = {"b64": 8, "u64": 8, "s64": 8}.get(v.type, 4)
                        init[off:off + size] = ((target + add) & ((1 << (8 * size)) - 1)).to_bytes(size, "little")
                    device.write(addr, bytes(init))
            program = device.load_program(module, {k: a for k, (a, _) in variables.items()})
        except BaseException:
            for addr, _ in variables.values():
                device.free(addr)
            raise
        return LoadedModule(device, module, program, variables)
