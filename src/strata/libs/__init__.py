"""L4: math libraries as CUDA C++ kernels on the virtual GPU, behind APIs shaped like the vendors'.

`strata.libs.blas` plays cuBLAS / rocBLAS, `strata.libs.dnn` cuDNN / MIOpen, `strata.libs.solver`
cuSOLVER / rocSOLVER, `strata.libs.rand` cuRAND / rocRAND; `strata.libs.common` holds what they share
(compile-once kernel sets, the L4 trace span of a call, argument errors).
"""

from strata.libs import blas, dnn, rand, solver

__all__ = ["blas", "dnn", "rand", "solver"]
