"""The runtime process's HIP side: serves strata's libamdhip64 (native/amdhip.c) for whole HIP programs.

`HipServer` is the CUDA bridge's `Server` (same pipes, wire format, memory, streams, events, managed memory
and error reporting) plus HIP modules: `__hipRegisterFatBinary` hands over the clang offload bundle
(`bundle.py`); at first use its code object for the current device's target is loaded with strata.hip
(`CodeObjectModule`, on an AMD device) and its kernels run on the CDNA engine. Kernel names, arguments and
`__device__` variables are looked up in the code object's metadata (the CUDA path reads a PTX parameter list
instead). `run(argv)` starts the program with both libraries' folders on its LD_LIBRARY_PATH.
"""

from __future__ import annotations

import enum
import os
import struct
import sys
import traceback
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strata import config, trace
from strata.cuda.bridge import server as cuda_server
from strata.cuda.device import current_device
from strata.errors import CudaError
from strata.hip.amd import CodeObjectKernel, CodeObjectModule
from strata.hip.bridge import bundle
from strata.hw.amdgpu.codeobject import parse
from strata.hw.amdgpu.errors import CodeObjectError


class HipOp(enum.IntEnum):
    """The requests only libamdhip64 sends (numbers above the CUDA bridge's `protocol.Op`; amdhip.c and
    amdhip_props.c use the same values)."""

    HIP_REGISTER = 70  # the offload bundle of __hipRegisterFatBinary -> module id
    HIP_ARCH = 71  # device index -> gcnArchName ("gfx942:sramecc+:xnack-")


@dataclass
class _HipImage:
    """A registered offload bundle: its entries by target id, loaded for the device's target at first use."""

    entries: dict[str, bytes]
    error: CudaError | None = None
    modules: dict[str, CodeObjectModule] = field(default_factory=dict)  # by gfx target


@dataclass
class HipServer(cuda_server.Server):
    """The CUDA bridge's server, also answering HIP modules' registrations, kernel lookups and launches."""

    hip_images: dict[int, _HipImage] = field(default_factory=dict)

    def _dispatch(self, op: int, body: bytes) -> None:
        if op not in HipOp._value2member_map_:
            super()._dispatch(op, body)
            return
        name, code, payload = HipOp(op).name, 0, b""
        try:
            payload = self._hip_register(body) if op == HipOp.HIP_REGISTER else self._hip_arch(body)
        except CudaError as e:
            code = e.code
            self._report(e)
            if config.settings().debug >= 1:
                self.err.append(f"strata: {name}: {e}\n")
        except Exception:  # noqa: BLE001 - a bug of ours: the program gets hipErrorUnknown and the traceback
            code = 999
            self.err.append(f"strata: internal error serving {name}:\n{traceback.format_exc()}")
        self._reply(code, payload)

    # --- HIP requests ----------------------------------------------------------------------------------
    def _hip_register(self, body: bytes) -> bytes:
        """A program's offload bundle (or, from hipModuleLoad/LoadData, a bundle or a bare code object)."""
        image = _HipImage({})
        try:
            if bytes(body[:4]) == b"\x7fELF":
                image.entries = {bundle.device_id(_processor(bytes(body))): bytes(body)}
            else:
                image.entries = bundle.parse(bytes(body))
        except CudaError as e:  # reported at first use, as a fat binary's error is
            image.error = e
            self.err.append(f"strata: {e.message}\n")
        h = self._new_handle()
        self.hip_images[h] = image
        return struct.pack("<Q", h)

    def _hip_arch(self, body: bytes) -> bytes:
        (d,) = struct.unpack("<i", body)
        return cuda_server.cuda.get_device_properties(d).gcnArchName.encode()

    def _hip_module(self, h: int) -> CodeObjectModule:
        image = self.hip_images[h]
        if image.error is not None:
            raise image.error
        arch = current_device().spec.arch
        module = image.modules.get(arch)
        if module is None:  # loaded at first use, as HIP's runtime does
            if current_device().spec.vendor != "amd":
                raise CudaError("cudaErrorNoKernelImageForDevice", f"[hip] this HIP program carries AMD code "
                                f"objects; it cannot run on {current_device().spec.product}: use an AMD device "
                                "(strata run --gpu mi300x)")
            with trace.span("L3", "__hipRegisterFatBinary", arch=arch):
                try:
                    module = image.modules[arch] = CodeObjectModule(bundle.pick(image.entries, arch))
                except CodeObjectError as e:
                    raise CudaError("cudaErrorInvalidKernelImage", str(e)) from None
        return module

    # --- the CUDA bridge's requests, for HIP modules ---------------------------------------------------
    def _func_info(self, body: bytes) -> bytes:
        (mid,) = struct.unpack_from("<Q", body)
        if mid not in self.hip_images:
            return super()._func_info(body)
        kernel = self._hip_module(mid).get_function(bytes(body[8:]).decode())
        fid = self._new_handle()
        self.kernels[fid] = kernel  # type: ignore[assignment]  # a CodeObjectKernel beside cuda.Kernels
        sizes = [a.size for a in kernel.args]
        return struct.pack(f"<QI{len(sizes)}I", fid, len(sizes), *sizes)

    def _symbol(self, body: bytes) -> bytes:
        (mid,) = struct.unpack_from("<Q", body)
        if mid not in self.hip_images:
            return super()._symbol(body)
        addr, size = self._hip_module(mid).get_global(bytes(body[8:]).decode())
        return struct.pack("<QQ", addr, size)

    def _launch(self, body: bytes, cooperative: bool = False) -> None:
        fid = struct.unpack_from("<Q", body)[0]
        kernel: Any = self.kernels.get(fid)
        if not isinstance(kernel, CodeObjectKernel):
            super()._launch(body, cooperative)
            return
        _, gx, gy, gz, bx, by, bz, shmem, stream = cuda_server.LAUNCH.unpack_from(body)
        try:
            if cooperative:
                raise CudaError("cudaErrorNotSupported", "[hip] cooperative launches of AMD code objects")
            args, pos = [], cuda_server.LAUNCH.size
            for a in kernel.args:  # each argument's bytes as they are (pointers, scalars, structs by value)
                args.append(np.frombuffer(bytes(body[pos: pos + a.size]), dtype=f"V{a.size}")[0])
                pos += a.size
            self.managed_to_device()
            kernel.launch((gx, gy, gz), (bx, by, bz), args, shared_mem=shmem, stream=self._stream(stream))
        except CudaError as e:
            self.pending = e
            self._report(e)
        except (TypeError, ValueError, KeyError) as e:
            self.pending = CudaError("cudaErrorInvalidValue", str(e))
            self.err.append(f"strata: kernel launch: {e}\n")

    def _func_set_attr(self, body: bytes) -> None:
        fid, value = struct.unpack("<qq", body)
        kernel: Any = self._handle(fid, self.kernels, "kernel")
        if not isinstance(kernel, CodeObjectKernel):
            super()._func_set_attr(body)
            return
        # LDS is 64 KiB per workgroup on CDNA whatever the attribute says: a value past what is left of it
        # beside the kernel's static LDS is an error, as on ROCm; anything up to it is already allowed
        room = kernel.attributes.max_dynamic_shared_size_bytes
        if not 0 <= value <= room:
            raise CudaError("cudaErrorInvalidValue", f"[hipFuncSetAttribute {kernel.name}] "
                            f"hipFuncAttributeMaxDynamicSharedMemorySize {value}: at most {room} bytes of dynamic "
                            "LDS are left beside the kernel's static LDS")

    def _occupancy(self, body: bytes) -> bytes:
        fid, block, smem = struct.unpack("<qqq", body)
        kernel: Any = self._handle(fid, self.kernels, "kernel")
        if not isinstance(kernel, CodeObjectKernel):
            return super()._occupancy(body)
        from strata.hw.occupancy import occupancy

        if block < 1:
            raise CudaError("cudaErrorInvalidValue", f"[occupancy] block size must be >= 1, got {block}")
        info = kernel.info
        try:
            occ = occupancy(current_device().spec, block, info.vgpr_count, info.group_segment_fixed_size + smem)
        except CudaError:
            return struct.pack("<i", 0)
        return struct.pack("<i", occ.blocks_per_sm)


def _processor(code_object: bytes) -> str:
    """The gfx target of a bare code object (hipModuleLoadData), from its ELF header and metadata.

    Raises:
        CudaError: cudaErrorInvalidKernelImage (hipErrorInvalidImage) for a malformed one."""
    try:
        return parse(code_object).processor
    except CodeObjectError as e:
        raise CudaError("cudaErrorInvalidKernelImage", f"[hipModuleLoadData] {e}") from None


def run(argv: list[str]) -> int:
    """Run the HIP program `argv` under strata (an AMD device unless STRATA_GPU/STRATA_DEVICES choose);
    returns its exit status as `strata.cuda.bridge.server.run` does.

    Raises:
        BuildError: a runtime library could not be built.
    """
    from strata.cuda.bridge.build import library_dir as cudart_dir
    from strata.hip.bridge.build import library_dir

    lib = os.pathsep.join([str(library_dir()), str(cudart_dir())])
    return cuda_server.run(argv, lib, server_type=HipServer)


def run_program(program: str, argv: list[str]) -> int:
    """`strata run` of a HIP program: a .hip file is built with `strata hipcc` into a cache first. Without
    STRATA_GPU or STRATA_DEVICES (`--gpu`, `--devices`) it runs on an MI300X, as a HIP program built for
    gfx942 needs; returns its exit status (2 when it cannot be built)."""
    from pathlib import Path

    from strata.cuda.bridge.build import BuildError
    from strata.hip.amd import ClangNotFound
    from strata.hip.hipcc import HipccError, compile_program

    if not os.environ.get("STRATA_GPU") and not os.environ.get("STRATA_DEVICES"):
        os.environ["STRATA_GPU"] = "mi300x"
    try:
        exe = compile_program(Path(program)) if program.endswith(".hip") else Path(program)
        return run([str(exe) if "/" in str(exe) else f"./{exe}", *argv])
    except (ClangNotFound, BuildError, HipccError) as e:
        print(f"strata run: {e}", file=sys.stderr)
        return 2
