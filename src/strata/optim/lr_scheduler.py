"""strata.optim.lr_scheduler (torch.optim.lr_scheduler): at run time `strata.framework.optim.lr_scheduler` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.optim.lr_scheduler import *  # noqa: F403
