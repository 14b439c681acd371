"""strata.nn, as torch.nn: `Module` and `Parameter`, the layers (Linear, Embedding, LayerNorm, RMSNorm,
Dropout, Conv2d, pooling, BatchNorm, activations), containers (Sequential, ModuleList, ModuleDict),
losses, `functional` (the ops behind the layers), `init` (weight initialisation) and `utils` (gradient
clipping). `import strata.nn as nn` and `from strata.nn import functional as F` work as with torch.

Example:
    >>> import strata
    >>> import strata.nn as nn
    >>> model = nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))
    >>> model(strata.ones(3, 4)).shape, sum(p.numel() for p in model.parameters())
    (strata.Size([3, 2]), 58)
"""

from strata.framework.nn import functional, init, parallel, utils
from strata.framework.nn.containers import ModuleDict, ModuleList, ParameterDict, ParameterList, Sequential
from strata.framework.nn.loss import CrossEntropyLoss, MSELoss, NLLLoss
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
from strata.framework.nn.parallel import DataParallel
from strata.framework.nn.parameter import Buffer, Parameter

__all__ = [
    "AvgPool2d", "BatchNorm1d", "BatchNorm2d", "Buffer", "Conv2d", "CrossEntropyLoss", "Dropout", "Embedding",
    "Flatten", "GELU", "Identity", "LayerNorm", "Linear", "LogSoftmax", "MSELoss", "MaxPool2d", "Module",
    "ModuleDict", "ModuleList", "NLLLoss", "Parameter", "ParameterDict", "ParameterList", "RMSNorm", "ReLU",
    "Sequential", "SiLU", "Sigmoid", "Softmax", "Tanh", "functional", "init", "utils",
    "DataParallel", "parallel",
]
