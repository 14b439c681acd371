"""strata.nn, as torch.nn: `Module` and `Parameter`, the layers (Linear, Embedding, LayerNorm, RMSNorm,
Dropout, Conv1d/2d, transposed convolutions, pooling (with adaptive), padding, PixelShuffle, BatchNorm,
every activation), recurrent layers (RNN, LSTM, GRU and their cells), attention and transformer modules,
containers (Sequential, ModuleList, ModuleDict), losses, `functional` (the ops behind the layers), `init`
(weight initialisation), `parallel` (DataParallel) and `utils` (gradient clipping).
`import strata.nn as nn` and `from strata.nn import functional as F` work as with torch.

The layers beyond the first set live in their own modules (activation.py, conv_extra.py, layers_extra.py,
loss_extra.py, rnn.py, transformer.py, init_extra.py); their functional forms and initialisers are bound
into `functional` and `init` below, so `F.conv_transpose2d` and `nn.init.orthogonal_` answer as in torch.

Example:
    >>> import strata
    >>> import strata.nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model(strata.ones(3, 4)).shape, sum(p.numel() for p in model.parameters())
    (strata.Size([3, 2]), 58)
"""

from collections.abc import Callable, Mapping

from strata.framework.nn import (
    activation,
    conv_extra,
    functional,
    init,
    init_extra,
    layers_extra,
    loss_extra,
    norm_extra,
    parallel,
    sampling,
    utils,
)
from strata.framework.nn.activation import (
    CELU,
    ELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    Mish,
    PReLU,
    ReLU6,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanhshrink,
    Threshold,
)
from strata.framework.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from strata.framework.nn.conv_extra import Conv1d, ConvTranspose1d, ConvTranspose2d
from strata.framework.nn.layers_extra import (
    AdaptiveAvgPool1d,
    AdaptiveAvgPool2d,
    AdaptiveMaxPool1d,
    AdaptiveMaxPool2d,
    CircularPad1d,
    CircularPad2d,
    ConstantPad1d,
    ConstantPad2d,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    PixelShuffle,
    PixelUnshuffle,
    ReflectionPad1d,
    ReflectionPad2d,
    ReplicationPad1d,
    ReplicationPad2d,
    Unflatten,
    Upsample,
    UpsamplingBilinear2d,
    UpsamplingNearest2d,
    ZeroPad1d,
    ZeroPad2d,
)
from strata.framework.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
from strata.framework.nn.loss_extra import BCELoss, BCEWithLogitsLoss, HuberLoss, KLDivLoss, L1Loss, SmoothL1Loss
from strata.framework.nn.module import Module
from strata.framework.nn.modules import (
    GELU,
    AvgPool2d,
    BatchNorm1d,
    BatchNorm2d,
    Conv2d,
    Dropout,
    Embedding,
    Flatten,
    Identity,
    LayerNorm,
    Linear,
    LogSoftmax,
    MaxPool2d,
    ReLU,
    RMSNorm,
    Sigmoid,
    SiLU,
    Softmax,
    Tanh,
)
from strata.framework.nn.norm_extra import (
    AvgPool1d,
    CosineSimilarity,
    GroupNorm,
    InstanceNorm1d,
    InstanceNorm2d,
    MaxPool1d,
    PairwiseDistance,
)
from strata.framework.nn.parallel import DataParallel
from strata.framework.nn.parameter import Buffer, Parameter
from strata.framework.nn.rnn import GRU, LSTM, RNN, GRUCell, LSTMCell, RNNBase, RNNCell, RNNCellBase
from strata.framework.nn.transformer import (
    MultiheadAttention,
    Transformer,
    TransformerDecoder,
    TransformerDecoderLayer,
    TransformerEncoder,
    TransformerEncoderLayer,
)


def _bind(module: object, names: Mapping[str, object]) -> None:
    """Add functions defined beside `module` to it (and to its __all__), never replacing its own."""
    exported = getattr(module, "__all__", None)
    for name, fn in names.items():
        if not hasattr(module, name):
            setattr(module, name, fn)
            if isinstance(exported, list) and name not in exported:
                exported.append(name)


for _extra in (activation, conv_extra, layers_extra, loss_extra, norm_extra, sampling):
    _bind(functional, _extra.FUNCTIONAL)
_bind(init, init_extra.INIT)


def _missing(torch_name: str) -> Callable[[str], object]:
    def __getattr__(name: str) -> object:  # noqa: N807 - a module's __getattr__ (PEP 562)
        if name.startswith("__"):
            raise AttributeError(name)
        raise AttributeError(f"module '{torch_name}' has no attribute {name!r}: strata does not provide "
                             f"{torch_name}.{name} (see docs/torch-surface.md for what it covers)")
    return __getattr__


for _module, _torch_name in ((functional, "torch.nn.functional"), (init, "torch.nn.init")):
    if "__getattr__" not in vars(_module):  # a name strata lacks says so under PyTorch's name
        setattr(_module, "__getattr__", _missing(_torch_name))  # noqa: B010 - PEP 562 hook on a module object

__all__ = [
    "AvgPool1d", "CosineSimilarity", "GroupNorm", "InstanceNorm1d", "InstanceNorm2d", "MaxPool1d", "PairwiseDistance",
    "AdaptiveAvgPool1d", "AdaptiveAvgPool2d", "AdaptiveMaxPool1d", "AdaptiveMaxPool2d", "AvgPool2d", "BCELoss",
    "BCEWithLogitsLoss", "BatchNorm1d", "BatchNorm2d", "Buffer", "CELU", "CircularPad1d", "CircularPad2d",
    "ConstantPad1d", "ConstantPad2d", "Conv1d", "Conv2d", "ConvTranspose1d", "ConvTranspose2d", "CrossEntropyLoss",
    "DataParallel", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "ELU", "Embedding", "Flatten", "GELU", "GLU",
    "GRU", "GRUCell", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh", "HuberLoss", "Identity", "KLDivLoss",
    "L1Loss", "LSTM", "LSTMCell", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid", "LogSoftmax", "MSELoss",
    "MaxPool2d", "Mish", "Module", "ModuleDict", "ModuleList", "MultiheadAttention", "NLLLoss", "PReLU", "Parameter",
    "ParameterDict", "ParameterList", "PixelShuffle", "PixelUnshuffle", "RMSNorm", "RNN", "RNNBase", "RNNCell",
    "RNNCellBase", "ReLU", "ReLU6", "ReflectionPad1d", "ReflectionPad2d", "ReplicationPad1d", "ReplicationPad2d",
    "SELU", "Sequential", "SiLU", "Sigmoid", "SmoothL1Loss", "Softmax", "Softmax2d", "Softmin", "Softplus",
    "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold", "Transformer", "TransformerDecoder",
    "TransformerDecoderLayer", "TransformerEncoder", "TransformerEncoderLayer", "Unflatten", "Upsample",
    "UpsamplingBilinear2d", "UpsamplingNearest2d", "ZeroPad1d", "ZeroPad2d", "functional", "init", "parallel", "utils",
]


def __getattr__(name: str) -> object:
    """A name strata.nn lacks: PyTorch's name in the error, so a program run with --as-torch says what is missing."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"module 'torch.nn' has no attribute {name!r}: strata does not provide torch.nn.{name} "
                         "(see docs/torch-surface.md for what it covers)")
