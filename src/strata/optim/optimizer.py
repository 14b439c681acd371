"""strata.optim.optimizer (torch.optim.optimizer): at run time `strata.framework.optim.optimizer` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.optim.optimizer import *  # noqa: F403
