"""L3: whole CUDA programs on strata: the replacement CUDA runtime library (`native/cudart.c`, built by
`build.py`), the wire protocol it speaks (`protocol.py`) and the strata runtime process that serves it
(`server.py`). `strata run ./prog` and `strata nvcc` (`strata.cuda.nvcc`) sit on top; see docs/programs.md.
"""
