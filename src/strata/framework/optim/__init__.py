"""strata.optim: PyTorch's optimizers (`SGD`, `Adam`, `AdamW`) and learning-rate schedulers
(`strata.optim.lr_scheduler`), with torch.optim's names, signatures, defaults, state dicts and errors.
Updates run in place on the parameters: fused kernels on "cuda", NumPy on "cpu". See docs/framework.md.

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
from strata.framework.optim.adam import Adam, AdamW
from strata.framework.optim.optimizer import Optimizer
from strata.framework.optim.sgd import SGD

__all__ = ["Adam", "AdamW", "Optimizer", "SGD", "lr_scheduler"]
