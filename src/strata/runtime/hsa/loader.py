"""Code objects: the `Executable` and `ExecutableSymbol` handles, loading PTX code objects for a GPU
agent, and the symbol attributes a hand-written dispatch needs (kernel object, kernarg layout,
segment sizes)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from strata.errors import OutOfMemoryError, PTXSyntaxError, UnsupportedInstruction
from strata.hw.amdgpu.errors import CodeObjectError
from strata.hw.jit import register_pressure
from strata.runtime.code_object import LoadedCodeObject
from strata.runtime.code_object import load_code_object as load_amdgpu_code_object
from strata.runtime.hsa._runtime import _rt, _unload
from strata.runtime.hsa.agent import Agent, _agent
from strata.runtime.hsa.status import ExecutableSymbolInfo, HsaError, Status, SymbolKind, _enum
from strata.runtime.module import LoadedModule, kernarg_segment_size, load_module


class Executable:
    """hsa_executable_t: code objects loaded for agents, then frozen."""

    def __init__(self) -> None:
        self.frozen = False
        self.modules: list[tuple[Agent, LoadedModule | LoadedCodeObject]] = []

    def __repr__(self) -> str:
        return f"<hsa_executable {'frozen' if self.frozen else 'unfrozen'}, {len(self.modules)} code object(s)>"


@dataclass(frozen=True, eq=False)
class ExecutableSymbol:
    """hsa_executable_symbol_t: a kernel or a module variable of a loaded code object."""

    executable: Executable
    agent: Agent
    name: str
    kind: SymbolKind
    module: LoadedModule | LoadedCodeObject


def executable_create() -> Executable:
    """hsa_executable_create_alt: an empty, unfrozen executable."""
    rt = _rt()
    exe = Executable()
    with rt.lock:
        rt.executables.append(exe)
    return exe


def executable_load_code_object(executable: Executable, agent: Agent, code_object: str | bytes) -> None:
    """hsa_executable_load_agent_code_object: load a code object (PTX text, strata's front end) for
    `agent`: its variables are placed in the agent's memory and the device JITs its kernels. `bytes`
    are an AMDGPU code object (ELF) for an AMD agent, run by the CDNA engine (docs/amd.md).

    Raises:
        HsaError: ERROR_FROZEN_EXECUTABLE, ERROR_INVALID_EXECUTABLE, ERROR_INVALID_AGENT (not a GPU),
            ERROR_INVALID_CODE_OBJECT (malformed PTX, or an instruction the virtual GPU lacks).
    """
    exe = _executable(executable, "executable_load_code_object")
    a = _agent(agent, gpu=True, op="executable_load_code_object")
    if exe.frozen:
        raise HsaError(Status.ERROR_FROZEN_EXECUTABLE, "[executable_load_code_object] the executable is frozen")
    try:
        loaded: LoadedModule | LoadedCodeObject
        if isinstance(code_object, bytes | bytearray):
            loaded = load_amdgpu_code_object(a.device, bytes(code_object))
        else:
            loaded = load_module(a.device, code_object)
    except (PTXSyntaxError, UnsupportedInstruction, CodeObjectError) as e:
        raise HsaError(Status.ERROR_INVALID_CODE_OBJECT, f"[executable_load_code_object] {e}") from e
    except OutOfMemoryError as e:
        raise HsaError(Status.ERROR_OUT_OF_RESOURCES, f"[executable_load_code_object] {e.message}") from e
    exe.modules.append((a, loaded))


def executable_freeze(executable: Executable, options: str = "") -> None:
    """hsa_executable_freeze: no more code objects may be loaded."""
    _executable(executable, "executable_freeze").frozen = True


def executable_destroy(executable: Executable) -> None:
    """hsa_executable_destroy: unload its code objects (their kernel objects stop being dispatchable)."""
    rt = _rt()
    exe = _executable(executable, "executable_destroy")
    _unload(exe)
    with rt.lock:
        rt.executables.remove(exe)


def _executable(executable: Executable, op: str) -> Executable:
    if not isinstance(executable, Executable) or executable not in _rt().executables:
        raise HsaError(Status.ERROR_INVALID_EXECUTABLE, f"[{op}] {executable!r} is not a live executable")
    return executable


def load_code_object(agent: Agent, code_object: str | bytes) -> Executable:
    """create + load_code_object + freeze in one call: the frozen executable of `code_object` on `agent`."""
    exe = executable_create()
    executable_load_code_object(exe, agent, code_object)
    executable_freeze(exe)
    return exe


def executable_get_symbol_by_name(executable: Executable, symbol_name: str, agent: Agent | None = None
                                  ) -> ExecutableSymbol:
    """hsa_executable_get_symbol_by_name: a kernel (`name` or ROCm's `name.kd`) or module variable.

    Raises:
        HsaError: ERROR_INVALID_SYMBOL_NAME if no code object loaded for `agent` defines it.
    """
    exe = _executable(executable, "executable_get_symbol_by_name")
    name = symbol_name.removesuffix(".kd")
    for a, loaded in exe.modules:
        if agent is not None and a is not agent:
            continue
        if isinstance(loaded, LoadedCodeObject):
            if name in loaded.programs:
                return ExecutableSymbol(exe, a, name, SymbolKind.KERNEL, loaded)
            continue
        fn = loaded.module.functions.get(name)
        if fn is not None and fn.is_entry:
            return ExecutableSymbol(exe, a, name, SymbolKind.KERNEL, loaded)
        if symbol_name in loaded.variables:
            return ExecutableSymbol(exe, a, symbol_name, SymbolKind.VARIABLE, loaded)
    raise HsaError(Status.ERROR_INVALID_SYMBOL_NAME,
                   f"[executable_get_symbol_by_name] no kernel or variable {symbol_name!r} in {exe!r}")


def executable_symbol_get_info(symbol: ExecutableSymbol, attribute: ExecutableSymbolInfo | int | str) -> Any:
    """hsa_executable_symbol_get_info: what a dispatch needs from a kernel's descriptor.

    KERNEL_OBJECT is the handle dispatch packets carry (registering the kernel with the device on
    first use, with a live-range register estimate); KERNARG_SEGMENT_SIZE/_ALIGNMENT describe the
    argument block (PTX parameters in order, each at its alignment); GROUP_SEGMENT_SIZE is static
    shared memory; PRIVATE_SEGMENT_SIZE the per-work-item local depot. Names may drop `KERNEL_`.

    Raises:
        HsaError: ERROR_INVALID_ARGUMENT for an attribute the symbol's kind does not have.
    """
    if isinstance(attribute, str) and f"KERNEL_{attribute.upper()}" in ExecutableSymbolInfo.__members__:
        attribute = f"KERNEL_{attribute}"
    key = _enum(ExecutableSymbolInfo, attribute, "executable_symbol_get_info")
    common = {ExecutableSymbolInfo.TYPE: symbol.kind, ExecutableSymbolInfo.NAME: symbol.name,
              ExecutableSymbolInfo.NAME_LENGTH: len(symbol.name), ExecutableSymbolInfo.AGENT: symbol.agent}
    if key in common:
        return common[key]
    loaded = symbol.module
    if isinstance(loaded, LoadedCodeObject):
        return _code_object_kernel_info(loaded, symbol.name, key)
    if symbol.kind == SymbolKind.VARIABLE and key in (ExecutableSymbolInfo.VARIABLE_ADDRESS,
                                                      ExecutableSymbolInfo.VARIABLE_SIZE):
        address, size = loaded.variables[symbol.name]
        return address if key == ExecutableSymbolInfo.VARIABLE_ADDRESS else size
    if symbol.kind != SymbolKind.KERNEL or key in (ExecutableSymbolInfo.VARIABLE_ADDRESS,
                                                   ExecutableSymbolInfo.VARIABLE_SIZE):
        raise HsaError(Status.ERROR_INVALID_ARGUMENT,
                       f"[executable_symbol_get_info] a {symbol.kind.name.lower()} symbol has no {key.name}")
    fn = loaded.module.functions[symbol.name]
    if key == ExecutableSymbolInfo.KERNEL_OBJECT:
        return loaded.kernel_object(symbol.name, register_pressure(fn), "estimate")
    if key == ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_SIZE:
        return kernarg_segment_size(fn.params)
    if key == ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_ALIGNMENT:
        return max([16, *(p.align for p in fn.params)])  # HSA: at least 16
    if key == ExecutableSymbolInfo.KERNEL_GROUP_SEGMENT_SIZE:
        return loaded.program.shared_bytes(symbol.name, 0)
    return loaded.program.functions[symbol.name].local_size  # KERNEL_PRIVATE_SEGMENT_SIZE


def _code_object_kernel_info(loaded: LoadedCodeObject, name: str, key: ExecutableSymbolInfo) -> Any:
    """A code object kernel's attributes, from its metadata and kernel descriptor."""
    k = loaded.programs[name].kernel
    values = {ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_SIZE: k.kernarg_segment_size,
              ExecutableSymbolInfo.KERNEL_KERNARG_SEGMENT_ALIGNMENT: max(16, k.kernarg_segment_align),
              ExecutableSymbolInfo.KERNEL_GROUP_SEGMENT_SIZE: k.group_segment_fixed_size,
              ExecutableSymbolInfo.KERNEL_PRIVATE_SEGMENT_SIZE: k.private_segment_fixed_size}
    if key == ExecutableSymbolInfo.KERNEL_OBJECT:
        return loaded.kernel_object(name)
    if key not in values:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[executable_symbol_get_info] a kernel symbol has no {key.name}")
    return values[key]
