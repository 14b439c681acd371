"""strata.libs.dnn: the role of cuDNN / MIOpen. Deep-learning primitives as CUDA C++ kernels run by the
virtual GPU, behind cuDNN's operations with Pythonic arguments: a handle bound to a stream, C-contiguous
DeviceArrays (NCHW images, (batch, ..., features) rows), outputs passed in and written. float32
everywhere; float16 and bfloat16 too for activations, softmax, dropout, layer norm and RMS norm.

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

from strata.libs.dnn.attention import attention_backward, attention_forward
from strata.libs.dnn.conv import (
    conv2d_backward_bias,
    conv2d_backward_data,
    conv2d_backward_filter,
    conv2d_forward,
    conv2d_output_shape,
)
from strata.libs.dnn.handle import Handle, create_handle, destroy_handle, set_stream
from strata.libs.dnn.loss import (
    cross_entropy_backward,
    cross_entropy_forward,
    embedding_backward,
    embedding_forward,
)
from strata.libs.dnn.norm import (
    batch_norm_backward,
    batch_norm_forward_inference,
    batch_norm_forward_training,
    layer_norm_backward,
    layer_norm_forward,
    rms_norm_backward,
    rms_norm_forward,
)
from strata.libs.dnn.pointwise import (
    activation_backward,
    activation_forward,
    dropout_backward,
    dropout_forward,
    softmax_backward,
    softmax_forward,
)
from strata.libs.dnn.pooling import pooling_backward, pooling_forward

__all__ = [
    "Handle", "activation_backward", "activation_forward", "attention_backward", "attention_forward",
    "batch_norm_backward", "batch_norm_forward_inference", "batch_norm_forward_training", "conv2d_backward_bias",
    "conv2d_backward_data", "conv2d_backward_filter", "conv2d_forward", "conv2d_output_shape", "create_handle",
    "cross_entropy_backward", "cross_entropy_forward", "destroy_handle", "dropout_backward", "dropout_forward",
    "embedding_backward", "embedding_forward", "layer_norm_backward", "layer_norm_forward", "pooling_backward",
    "pooling_forward", "rms_norm_backward", "rms_norm_forward", "set_stream", "softmax_backward", "softmax_forward",
]
