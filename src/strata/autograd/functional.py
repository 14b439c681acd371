"""strata.autograd.functional (torch.autograd.functional): at run time
`strata.framework.autograd_functional` itself (see strata/_subpackage.py); this file is what mypy and
editors read."""

from strata.framework.autograd_functional import *  # noqa: F403
