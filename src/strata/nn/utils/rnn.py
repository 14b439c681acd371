"""strata.nn.utils.rnn (torch.nn.utils.rnn): at run time `strata.framework.nn.utils.rnn` itself (see
strata/_subpackage.py); this file is what mypy and editors read."""

from strata.framework.nn.utils.rnn import *  # noqa: F403
