"""strata.nn.parameter (torch.nn.parameter): at run time `strata.framework.nn.parameter` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.parameter import *  # noqa: F403
