"""The backends of the op table: each module registers its kernels for the ops `op_table` declares
(`cpu`: NumPy on host memory; `cuda`: the framework's CUDA C++ kernels on the virtual GPU). Importing
this package registers both."""

from strata.framework.backends import cpu, cuda

__all__ = ["cpu", "cuda"]
