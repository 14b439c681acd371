"""strata.nn.functional (torch.nn.functional): at run time `strata.framework.nn.functional` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.functional import *  # noqa: F403
