"""L3: whole HIP programs on strata's virtual AMD GPUs: the replacement HIP runtime library
(`native/amdhip.c`, built by `build.py` as `libamdhip64.so.6`), the offload-bundle format clang embeds
(`bundle.py`) and the runtime process's HIP side (`server.py`, on top of the CUDA bridge's server and wire
protocol). `strata hipcc prog.hip -o prog` (`strata.hip.hipcc`) and `strata run ./prog` sit on top; see
docs/hip-programs.md.
"""
