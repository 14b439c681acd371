"""strata.libs.dnn: the role of cuDNN / MIOpen. Deep-learning primitives as CUDA C++ kernels run by the
virtual GPU, behind cuDNN's operations with Pythonic arguments: a handle bound to a stream, C-contiguous
float32 DeviceArrays (NCHW images, (batch, ..., features) rows), outputs passed in and written.

See docs/dnn.md for every routine, its cuDNN and MIOpen counterparts, and its limits.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> h = create_handle()
    >>> x = cuda.to_device(np.array([[0.0, np.log(3.0)]], np.float32))
    >>> y = cuda.empty((1, 2), np.float32)
    >>> softmax_forward(h, x, y)
    >>> np.round(y.get(), 6).tolist()
    [[0.25, 0.75]]
"""

from strata.libs.dnn.handle import Handle, create_handle, destroy_handle, set_stream
from strata.libs.dnn.pointwise import (
    activation_backward,
    activation_forward,
    dropout_backward,
    dropout_forward,
    softmax_backward,
    softmax_forward,
)

__all__ = ["Handle", "activation_backward", "activation_forward", "create_handle", "destroy_handle",
           "dropout_backward", "dropout_forward", "set_stream", "softmax_backward", "softmax_forward"]
