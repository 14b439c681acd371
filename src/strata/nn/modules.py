"""strata.nn.modules (torch.nn.modules): at run time `strata.framework.nn.modules` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.modules import *  # noqa: F403
