"""strata.nn.utils (torch.nn.utils): at run time `strata.framework.nn.utils` itself (see strata/_subpackage.py);
this file is what mypy and editors read."""

from strata.framework.nn.utils import *  # noqa: F403
from strata.framework.nn.utils import rnn as rnn
