"""strata.nn.init (torch.nn.init): at run time `strata.framework.nn.init` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.init import *  # noqa: F403
