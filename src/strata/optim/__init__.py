"""strata.optim, as torch.optim: the optimizers and `lr_scheduler`. At run time this name is
`strata.framework.optim` itself (see strata/_subpackage.py); the imports below are what mypy and editors read.

Example:
    >>> import strata, strata.optim
    >>> w = strata.zeros(2, requires_grad=True)
    >>> type(strata.optim.SGD([w], lr=0.1)).__name__
    'SGD'
"""

import strata.framework.optim as _impl
from strata._subpackage import answer_with as _answer_with
from strata.framework.optim import *  # noqa: F403 - the optimizers, as torch.optim exports them
from strata.framework.optim import lr_scheduler as lr_scheduler
from strata.framework.optim import optimizer as optimizer

__all__ = _impl.__all__

_answer_with(__name__, _impl)
