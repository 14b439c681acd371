"""strata.optim: PyTorch's optimizers (`SGD`, `Adam`, `AdamW`, `Adadelta`, `Adagrad`, `RMSprop`, `Adamax`,
`NAdam`, `RAdam`, `LBFGS`)
and learning-rate schedulers (`strata.optim.lr_scheduler`), with torch.optim's names, signatures, defaults,
state dicts and errors. Updates run in place on the parameters: SGD and Adam(W) with fused kernels on
"cuda" and NumPy on "cpu"; the classic ones in framework tensor ops on both. See docs/framework.md.

Example:
    >>> import strata
    >>> w = strata.tensor([3.0], requires_grad=True)
    >>> opt = strata.optim.Adam([w], lr=0.5)
    >>> sched = strata.optim.lr_scheduler.StepLR(opt, step_size=1, gamma=0.5)
    >>> for _ in range(3):
    ...     opt.zero_grad()
    ...     (w * w).sum().backward()
    ...     _ = opt.step()
    ...     sched.step()
    >>> round(w.item(), 4), sched.get_last_lr()
    (2.1293, [0.0625])
"""

from strata.framework.optim import lr_scheduler
from strata.framework.optim.adadelta import Adadelta
from strata.framework.optim.adagrad import Adagrad
from strata.framework.optim.adam import Adam, AdamW
from strata.framework.optim.adamax import Adamax
from strata.framework.optim.lbfgs import LBFGS
from strata.framework.optim.nadam_radam import NAdam, RAdam
from strata.framework.optim.optimizer import Optimizer
from strata.framework.optim.rmsprop import RMSprop
from strata.framework.optim.schedulers_extra import SCHEDULERS as _SCHEDULERS
from strata.framework.optim.sgd import SGD

# the schedulers written beside lr_scheduler.py answer as torch.optim.lr_scheduler's (never replacing its own)
for _name, _cls in _SCHEDULERS.items():
    if not hasattr(lr_scheduler, _name):
        setattr(lr_scheduler, _name, _cls)
        lr_scheduler.__all__.append(_name)

__all__ = ["Adadelta", "Adagrad", "Adam", "AdamW", "Adamax", "LBFGS", "NAdam", "Optimizer", "RAdam", "RMSprop",
           "SGD", "lr_scheduler"]


def __getattr__(name: str) -> object:
    """A name strata.optim lacks: PyTorch's name in the error, so a program run with --as-torch says what is missing."""
    if name.startswith("__"):
        raise AttributeError(name)
    raise AttributeError(f"module 'torch.optim' has no attribute {name!r}: strata does not provide torch.optim.{name} "
                         "(see docs/torch-surface.md for what it covers)")
