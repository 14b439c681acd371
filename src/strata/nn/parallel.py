"""strata.nn.parallel (torch.nn.parallel): at run time `strata.framework.nn.parallel` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.parallel import *  # noqa: F403
