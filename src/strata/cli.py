"""The `strata` command: `strata demo` runs the main job, `strata info` describes this stack, `strata smi`
shows the devices (like nvidia-smi)."""

from __future__ import annotations

import argparse
import platform
import shutil
import sys


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="strata", description="A GPU software stack in Python, on a virtual GPU.")
    sub = parser.add_subparsers(dest="command", required=True)
    demo = sub.add_parser("demo", help="compile and run SAXPY, a reduction and a tiled SGEMM on the virtual GPU")
    demo.add_argument("--gpu", help="virtual GPU model: h200 (default), h100, a100")
    demo.add_argument("--sgemm-size", type=int, default=1024, help="SGEMM matrix size (default 1024)")
    sub.add_parser("info", help="what this machine's stack is, layer by layer")
    smi_parser = sub.add_parser("smi", help="devices, memory, utilization, power, temperature, clocks and contexts")
    smi_parser.add_argument("--json", action="store_true", help="one JSON object per device instead of the table")
    args = parser.parse_args(argv)
    if args.command == "demo":
        from strata.demo import main as demo_main

        return demo_main(args.gpu, args.sgemm_size)
    if args.command == "smi":
        return smi(as_json=args.json)
    return info()


def info() -> int:
    import numpy as np

    from strata import __version__, config
    from strata.cuda.compiler import cuda_include_dir, nvrtc_version
    from strata.driver import list_devices
    from strata.hw.catalog import models

    s = config.settings()
    print(f"strata {__version__}")
    for n in list_devices():
        units = (f"cc {n.compute_capability[0]}.{n.compute_capability[1]}, {n.spec.sm_count} SMs"
                 if n.arch.startswith("sm_") else f"{n.spec.sm_count} CUs")
        print(f"  L1 device {n.index}: virtual {n.product} ({n.arch}, {units}) at "
              f"{n.pci_bus_id}, PCI {n.vendor_id:04x}:{n.device_id:04x}, {n.node_path}")
    print(f"  L0 models available: {', '.join(models())} (STRATA_DEVICES / STRATA_GPU choose)")
    print(f"  NVRTC {'.'.join(map(str, nvrtc_version()))}; CUDA headers: {cuda_include_dir()}")
    print(f"  nvcc: {s.nvcc or 'not found'}; ptxas: {shutil.which('ptxas') or 'not found'}")
    print(f"  Python {platform.python_version()}, NumPy {np.__version__}, {platform.platform()}")
    return 0


def smi(as_json: bool = False) -> int:
    """Print the `strata smi` table (or, with `as_json`, `smi_json()` as a JSON list) for every device."""
    import json

    from strata.smi import smi_json, smi_table

    print(json.dumps(smi_json(), indent=2) if as_json else smi_table())
    return 0


if __name__ == "__main__":
    sys.exit(main())
