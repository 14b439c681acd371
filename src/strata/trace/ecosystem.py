"""What each strata trace event is called in the CUDA ecosystem and in ROCm's.

strata's layers play the roles of real components (see ARCHITECTURE.md); a walk or report shows, beside
each event, the call or mechanism that does the same job on an NVIDIA stack (CUDA runtime, CUDA driver,
nvidia.ko, an SM) and on an AMD one (HIP, ROCr/HSA, amdgpu + KFD, a CU). Library events (L4) carry their
own `cuda=`/`rocm=` names, since they differ per routine and dtype.

Example:
    >>> counterparts("L3", "cudaLaunchKernel", {})
    ('cudaLaunchKernel', 'hipLaunchKernel')
    >>> counterparts("L4", "blas.gemm", {"cuda": "cublasSgemm", "rocm": "rocblas_sgemm"})
    ('cublasSgemm', 'rocblas_sgemm')
"""

from __future__ import annotations

from typing import Any

LAYER_ROLES: dict[str, tuple[str, str, str]] = {
    # layer: (strata package, CUDA ecosystem, ROCm ecosystem)
    "L5": ("strata (framework)", "PyTorch (ATen, CUDA backend)", "PyTorch (ATen, ROCm backend)"),
    "L4": ("strata.libs", "cuBLAS / cuDNN / cuSOLVER / cuRAND", "rocBLAS / MIOpen / rocSOLVER / rocRAND"),
    "L3": ("strata.cuda", "CUDA runtime API", "HIP runtime API"),
    "L2": ("strata.runtime", "CUDA driver API", "ROCr (HSA runtime)"),
    "L1": ("strata.driver", "nvidia.ko", "amdgpu + KFD"),
    "L0": ("strata.hw", "GPU (SMs, copy engines)", "GPU (CUs, SDMA engines)"),
}

# (layer, event name) -> (CUDA ecosystem name, ROCm ecosystem name)
_NAMES: dict[tuple[str, str], tuple[str, str]] = {
    ("L3", "cudaLaunchKernel"): ("cudaLaunchKernel", "hipLaunchKernel"),
    ("L3", "cudaMalloc"): ("cudaMalloc", "hipMalloc"),
    ("L3", "cudaFree"): ("cudaFree", "hipFree"),
    ("L3", "cudaMemcpy"): ("cudaMemcpy", "hipMemcpy"),
    ("L3", "cudaMemcpyAsync"): ("cudaMemcpyAsync", "hipMemcpyAsync"),
    ("L3", "cudaMemset"): ("cudaMemset", "hipMemset"),
    ("L3", "cudaMemsetAsync"): ("cudaMemsetAsync", "hipMemsetAsync"),
    ("L3", "cudaHostAlloc"): ("cudaHostAlloc", "hipHostMalloc"),
    ("L3", "cudaDeviceSynchronize"): ("cudaDeviceSynchronize", "hipDeviceSynchronize"),
    ("L3", "nvrtcCompileProgram"): ("nvrtcCompileProgram", "hiprtcCompileProgram"),
    ("L2", "cuLaunchKernel"): ("cuLaunchKernel", "hipModuleLaunchKernel"),
    ("L2", "cuModuleLoadData"): ("cuModuleLoadData", "hsa_executable_load_agent_code_object"),
    ("L2", "aql_kernel_dispatch"): ("pushbuffer method + GPFIFO entry (QMD)", "AQL kernel dispatch packet"),
    ("L2", "aql_barrier_and"): ("semaphore acquire (stream wait)", "AQL barrier-AND packet"),
    ("L2", "aql_barrier_or"): ("semaphore acquire (any)", "AQL barrier-OR packet"),
    ("L2", "aql_copy_HtoD"): ("copy-engine launch (cuMemcpyHtoDAsync)", "SDMA copy (hsa_amd_memory_async_copy)"),
    ("L2", "aql_copy_DtoH"): ("copy-engine launch (cuMemcpyDtoHAsync)", "SDMA copy (hsa_amd_memory_async_copy)"),
    ("L2", "aql_copy_DtoD"): ("copy-engine launch (cuMemcpyDtoDAsync)", "SDMA copy (hsa_amd_memory_async_copy)"),
    ("L2", "aql_fill"): ("copy-engine memset (cuMemsetD8Async)", "SDMA constant fill"),
    ("L2", "ctx_synchronize"): ("cuCtxSynchronize", "hsa_signal_wait_scacquire (all queues)"),
    ("L2", "signal_wait"): ("semaphore wait (cuEventSynchronize's blocking sync)", "hsa_signal_wait_scacquire"),
    ("L2", "stream_synchronize"): ("cuStreamSynchronize", "hsa_signal_wait_scacquire"),
    ("L1", "doorbell"): ("GPFIFO doorbell write (usermode work submit)", "queue doorbell write (KFD user queue)"),
    ("L1", "interrupt"): ("nvidia.ko interrupt (semaphore release)", "amdgpu IH ring -> KFD event"),
    ("L1", "vram_alloc"): ("nvidia.ko RM video-memory alloc", "AMDKFD_IOC_ALLOC_MEMORY_OF_GPU"),
    ("L1", "vram_free"): ("nvidia.ko RM free", "AMDKFD_IOC_FREE_MEMORY_OF_GPU"),
    ("L1", "create_queue"): ("channel + GPFIFO allocation", "AMDKFD_IOC_CREATE_QUEUE"),
    ("L1", "dma_HtoD"): ("copy engine (CE) host->device", "SDMA engine host->device"),
    ("L1", "dma_DtoH"): ("copy engine (CE) device->host", "SDMA engine device->host"),
    ("L1", "dma_DtoD"): ("copy engine (CE) device->device", "SDMA engine device->device"),
    ("L1", "dma_PtoP"): ("copy engine (CE) peer copy over NVLink", "SDMA engine peer copy over xGMI"),
    ("L1", "dma_fill"): ("copy engine (CE) memset", "SDMA constant fill"),
    ("L1", "device_reset"): ("GPU reset (nvidia-smi -r)", "amdgpu GPU reset"),
    # storage (strata.storage plays GPUDirect Storage; standard ROCm has no GDS, so a load bounces there)
    ("L3", "load_safetensors"): ("cuFileRead per tensor range (fastsafetensors)",
                                 "no GDS in ROCm: read() + hipMemcpy (bounce)"),
    ("L3", "save_safetensors"): ("cuFileWrite per tensor range", "no GDS in ROCm: hipMemcpy + write() (bounce)"),
    ("L3", "cuFileRead"): ("cuFileRead", "no GDS in ROCm: read() + hipMemcpy"),
    ("L3", "cuFileWrite"): ("cuFileWrite", "no GDS in ROCm: hipMemcpy + write()"),
    ("L3", "cuFileDriverOpen"): ("cuFileDriverOpen", "-"),
    ("L3", "cuFileDriverClose"): ("cuFileDriverClose", "-"),
    ("L3", "cuFileHandleRegister"): ("cuFileHandleRegister", "-"),
    ("L3", "cuFileHandleDeregister"): ("cuFileHandleDeregister", "-"),
    ("L3", "cuFileBufRegister"): ("cuFileBufRegister (pins BAR1 pages)", "-"),
    ("L3", "cuFileBufDeregister"): ("cuFileBufDeregister", "-"),
    ("L3", "posix_read_bounce"): ("cuFile compatibility mode: pread into a bounce buffer",
                                  "pread + hipMemcpy"),
    ("L1", "dma_nvme_to_device"): ("nvidia-fs.ko: NVMe DMA peer-to-peer into GPU memory",
                                   "no GDS in ROCm (amdgpu P2P needs a bounce)"),
    ("L1", "dma_device_to_nvme"): ("nvidia-fs.ko: NVMe DMA peer-to-peer from GPU memory",
                                   "no GDS in ROCm (amdgpu P2P needs a bounce)"),
    ("L1", "dma_nvme_to_host"): ("NVMe DMA into host memory (page cache / O_DIRECT buffer)",
                                 "NVMe DMA into host memory"),
    ("L0", "execute"): ("warps on SMs run SASS", "wavefronts on CUs run CDNA ISA"),
    ("L0", "kernel"): ("kernel on the SMs (Nsight Systems row)", "kernel on the CUs (rocprof row)"),
    ("L0", "barrier_and"): ("host engine waits on semaphores", "CP packet processor resolves the barrier"),
    ("L0", "barrier_or"): ("host engine waits on semaphores", "CP packet processor resolves the barrier"),
}


def counterparts(layer: str, name: str, args: dict[str, Any]) -> tuple[str, str]:
    """The (CUDA ecosystem, ROCm ecosystem) names of event `name` of `layer`; ("", "") when unknown."""
    if "cuda" in args or "rocm" in args:
        return str(args.get("cuda", "")), str(args.get("rocm", ""))
    if layer == "L5":
        return name, name  # an ATen op has one name in both builds of PyTorch
    return _NAMES.get((layer, name), ("", ""))
