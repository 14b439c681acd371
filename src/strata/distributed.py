"""`import strata.distributed`: strata's torch.distributed, which lives in strata.framework.distributed
(this module makes it answer at the top of the package, as torch.distributed does at the top of torch)."""

import sys
from typing import TYPE_CHECKING

from strata.framework import distributed as _distributed

if TYPE_CHECKING:  # what type checkers see here: the package's names (at run time the module is replaced)
    from strata.framework.distributed import *  # noqa: F403

sys.modules[__name__] = _distributed
