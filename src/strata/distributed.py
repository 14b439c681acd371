"""`import strata.distributed`: strata's torch.distributed, which lives in strata.framework.distributed
(this module makes it answer at the top of the package, as torch.distributed does at the top of torch)."""

import sys

from strata.framework import distributed as _distributed

sys.modules[__name__] = _distributed
