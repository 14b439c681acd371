"""strata.nn, as torch.nn: modules and layers, `functional`, `init`, `parameter`, `parallel`, `utils` (clipping,
`utils.rnn` packing). At run time this name is `strata.framework.nn` itself (see strata/_subpackage.py); the
imports below are what mypy and editors read.

Example:
    >>> import strata.nn as nn
    >>> isinstance(nn.Linear(2, 3), nn.Module)
    True
"""

import strata.framework.nn as _impl
from strata._subpackage import answer_with as _answer_with
from strata.framework.nn import *  # noqa: F403 - the layers, as torch.nn exports them
from strata.framework.nn import functional as functional
from strata.framework.nn import init as init
from strata.framework.nn import modules as modules
from strata.framework.nn import parallel as parallel
from strata.framework.nn import parameter as parameter
from strata.framework.nn import utils as utils

__all__ = _impl.__all__

_answer_with(__name__, _impl)
