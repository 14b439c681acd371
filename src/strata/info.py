"""`strata info`: what this machine's stack is, layer by layer, in the spirit of
`torch.utils.collect_env`, `nvidia-smi` and `rocminfo`: the framework and libraries, the compilers
(NVRTC and the CUDA headers, nvcc and ptxas when installed), the virtual devices and their models,
Python and NumPy, and any real GPU driver on the machine (an NVIDIA or AMD device node, driver version
file or management library), which strata does not use but reports.

`collect()` returns the facts as a dict (`strata info --json` prints it); `format_info` lays it out.
The real-GPU probes take the file-system root and the PATH as arguments, so they can be pointed at a
fake tree.

Example:
    >>> facts = collect()
    >>> facts["L3"]["nvrtc"] >= "13.0", facts["real_gpu"]["detected"] in (True, False)
    (True, True)
"""

from __future__ import annotations

import ctypes.util
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

NVIDIA_NODES = ("dev/nvidiactl", "dev/nvidia-uvm")
NVIDIA_NODE = re.compile(r"^nvidia\d+$")
AMD_NODES = ("dev/kfd",)
VERSION_FILES = {"nvidia": "proc/driver/nvidia/version", "amdgpu": "sys/module/amdgpu/version"}
MANAGEMENT_LIBS = {"nvidia": "nvidia-ml", "amd": "rocm_smi64"}
MANAGEMENT_TOOLS = {"nvidia": "nvidia-smi", "amd": "rocm-smi"}


def collect(root: str | Path = "/", path: str | None = None) -> dict[str, Any]:
    """Every fact `strata info` shows, layer by layer (`root` and `path` point the real-GPU probes)."""
    import numpy as np

    from strata import __version__, config
    from strata.cuda.compiler import cuda_include_dir, nvrtc_version
    from strata.driver import list_devices
    from strata.framework import dtypes
    from strata.hip.compiler import include_dir as hip_include_dir
    from strata.hw.catalog import models

    settings = config.settings()
    include = cuda_include_dir()
    devices = []
    for n in list_devices():
        nvidia = n.arch.startswith("sm_")
        devices.append({"index": n.index, "product": n.product, "arch": n.arch,
                        "compute_capability": ".".join(map(str, n.compute_capability)) if nvidia else None,
                        "units": f"{n.spec.sm_count} {'SMs' if nvidia else 'CUs'}", "pci_bus_id": n.pci_bus_id,
                        "pci_id": f"{n.vendor_id:04x}:{n.device_id:04x}", "node": n.node_path})
    return {
        "strata": __version__,
        "L5": {"default_device": "cuda:0 (virtual)", "default_dtype": str(dtypes.get_default_dtype()),
               "dtypes": [d.name for d in dtypes.ALL]},
        "L4": {"libraries": ["blas (cuBLAS / rocBLAS role)", "dnn (cuDNN / MIOpen)", "solver (cuSOLVER / rocSOLVER)",
                             "rand (cuRAND / rocRAND)"]},
        "L3": {"nvrtc": ".".join(map(str, nvrtc_version())), "cuda_headers": str(include) if include else None,
               "cuda_headers_version": _cuda_header_version(include), "hip_headers": str(hip_include_dir()),
               "nvcc": _tool_version(settings.nvcc or shutil.which("nvcc", path=path)),
               "ptxas": _tool_version(shutil.which("ptxas", path=path))},
        "L1": {"devices": devices},
        "L0": {"models": list(models()), "chosen_by": "STRATA_DEVICES / STRATA_GPU (docs/config.md)",
               "executor": _executor(settings.executor, settings.native_after_ms, settings.native_opt)},
        "host": {"python": platform.python_version(), "numpy": np.__version__, "platform": platform.platform()},
        "real_gpu": detect_real_gpus(root, path),
    }


def detect_real_gpus(root: str | Path = "/", path: str | None = None) -> dict[str, Any]:
    """What real GPU driver this machine has: NVIDIA (/dev/nvidia*, /proc/driver/nvidia/version,
    libnvidia-ml, nvidia-smi) and AMD (/dev/kfd, /dev/dri/renderD*, amdgpu's module version,
    librocm_smi64, rocm-smi), each found item listed; `detected` if any device node or driver is there."""
    base = Path(root)
    found: dict[str, list[str]] = {"nvidia": [], "amd": []}
    dev = base / "dev"
    if dev.is_dir():
        for entry in sorted(dev.iterdir()):
            if NVIDIA_NODE.match(entry.name):
                found["nvidia"].append(f"/dev/{entry.name}")
    found["nvidia"] += [f"/{n}" for n in NVIDIA_NODES if (base / n).exists()]
    found["amd"] += [f"/{n}" for n in AMD_NODES if (base / n).exists()]
    dri = base / "dev" / "dri"
    if dri.is_dir() and found["amd"]:  # render nodes belong to any GPU; with /dev/kfd they are AMD's compute
        found["amd"] += [f"/dev/dri/{e.name}" for e in sorted(dri.iterdir()) if e.name.startswith("renderD")]
    versions = {}
    for vendor, file in (("nvidia", VERSION_FILES["nvidia"]), ("amd", VERSION_FILES["amdgpu"])):
        f = base / file
        if f.is_file():
            versions[vendor] = f.read_text(errors="replace").strip().splitlines()[0][:200]
            found[vendor].append(f"/{file}")
    libs = {}
    if Path(root).resolve() == Path("/"):  # the dynamic loader only knows the real root
        libs = {v: lib for v, name in MANAGEMENT_LIBS.items() if (lib := ctypes.util.find_library(name))}
    tools = {v: t for v, name in MANAGEMENT_TOOLS.items() if (t := shutil.which(name, path=path))}
    detected = any(found.values())
    return {"detected": detected, "nodes": found, "driver_versions": versions, "management_libraries": libs,
            "management_tools": tools}


def _cuda_header_version(include: Path | None) -> str | None:
    """CUDA_VERSION from cuda.h (e.g. 13000 -> "13.0"), or None."""
    header = include / "cuda.h" if include else None
    if header is None or not header.is_file():
        return None
    m = re.search(r"#define\s+CUDA_VERSION\s+(\d+)", header.read_text(errors="replace"))
    if not m:
        return None
    v = int(m.group(1))
    return f"{v // 1000}.{v % 1000 // 10}"


def _tool_version(exe: str | os.PathLike[str] | None) -> dict[str, str] | None:
    """{"path", "version"} of an NVIDIA command-line tool (its `--version` last line), or None."""
    if not exe:
        return None
    try:
        r = subprocess.run([str(exe), "--version"], capture_output=True, text=True, timeout=10, check=False)
        lines = [ln for ln in r.stdout.splitlines() if ln.strip()]
        version = lines[-1] if lines else f"exit status {r.returncode}"
    except (OSError, subprocess.TimeoutExpired) as e:
        version = f"not runnable ({type(e).__name__})"
    return {"path": str(exe), "version": version}


def _executor(asked: str, after_ms: int, opt: str = "auto") -> str:
    """The executor kernels run on (STRATA_EXECUTOR; native needs llvmlite), when native compiles and how."""
    from strata.hw.native import available

    if asked == "native" and not available():
        return "reference (STRATA_EXECUTOR=native, but llvmlite is not installed)"
    if asked == "native":
        when = (f"a kernel once the reference has spent {after_ms} ms on it" if after_ms
                else "each kernel at its first launch")
        how = {"auto": "at -O0, then at -O3 in the background once hot", "0": "at -O0 only",
               "3": "at -O3"}[opt]
        return f"native, compiling {when} (STRATA_NATIVE_AFTER_MS) {how} (STRATA_NATIVE_OPT)"
    return asked


def format_info(facts: dict[str, Any]) -> str:
    """The `strata info` text."""
    l3, host, real = facts["L3"], facts["host"], facts["real_gpu"]
    lines = [f"strata {facts['strata']}: a GPU software stack in Python, on virtual GPUs", ""]
    lines.append(f"L5 framework        strata (PyTorch's API); device \"cuda\" = {facts['L5']['default_device']}, "
                 f"default dtype {facts['L5']['default_dtype']}")
    lines.append("L4 math libraries   strata.libs: " + ", ".join(facts["L4"]["libraries"]))
    headers = l3["cuda_headers_version"]
    lines.append(f"L3 CUDA / HIP       NVRTC {l3['nvrtc']}; CUDA headers {headers or '?'} at "
                 f"{l3['cuda_headers'] or 'not found'}")
    lines.append(f"                    HIP headers (strata's, over CUDA's) at {l3['hip_headers']}")
    for tool in ("nvcc", "ptxas"):
        t = l3[tool]
        lines.append(f"                    {tool}: " + (f"{t['path']} ({t['version']})" if t else
                                                     "not installed (optional: register counts fall back to an "
                                                     "estimate)" if tool == "ptxas" else "not installed (optional)"))
    lines.append("L2 runtime          strata.runtime (CUDA driver API / ROCr roles), in this process")
    for d in facts["L1"]["devices"]:
        cc = f", cc {d['compute_capability']}" if d["compute_capability"] else ""
        lines.append(f"L1 device {d['index']:<10}virtual {d['product']} ({d['arch']}{cc}, {d['units']}) at "
                     f"{d['pci_bus_id']}, PCI {d['pci_id']}, {d['node']}")
    lines.append(f"L0 virtual GPUs     models: {', '.join(facts['L0']['models'])} (chosen by "
                 f"{facts['L0']['chosen_by']})")
    lines.append(f"                    executor: {facts['L0']['executor']}; STRATA_EXECUTOR, docs/executor.md")
    lines.append(f"host                Python {host['python']}, NumPy {host['numpy']}, {host['platform']}")
    if real["detected"]:
        for vendor in ("nvidia", "amd"):
            if real["nodes"][vendor]:
                version = real["driver_versions"].get(vendor)
                lines.append(f"real GPU            {vendor.upper()} driver detected: {', '.join(real['nodes'][vendor])}"
                             + (f" ({version})" if version else ""))
        lines.append("                    (strata does not use it: its devices are the virtual GPUs above)")
    else:
        lines.append("real GPU            none detected (no /dev/nvidia*, /dev/kfd or driver version file)")
    for vendor, lib in real["management_libraries"].items():
        lines.append(f"                    {vendor} management library: {lib}")
    for vendor, tool in real["management_tools"].items():
        lines.append(f"                    {vendor} management tool: {tool}")
    return "\n".join(lines)
