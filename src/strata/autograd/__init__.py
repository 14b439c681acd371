"""strata.autograd, as torch.autograd: `backward`, `grad`, custom ops (`Function`, whose ctx has
`save_for_backward`, `needs_input_grad`, `mark_non_differentiable`, `set_materialize_grads`), grad mode
(`no_grad`, `enable_grad`, `set_grad_enabled`, `inference_mode`, `is_grad_enabled`), `gradcheck` and
`gradgradcheck` (finite differences), `functional` (jacobian, hessian, vjp, jvp, vhp, hvp), `forward_ad` (dual
tensors: make_dual, unpack_dual, dual_level) and the legacy `Variable`. At run time
this name is `strata.framework.autograd` itself, and `strata.autograd.functional` is
`strata.framework.autograd_functional` (see strata/_subpackage.py); the imports below are what mypy and
editors read.

Example:
    >>> import strata, strata.autograd
    >>> x = strata.tensor([1.0, 2.0], requires_grad=True)
    >>> strata.autograd.grad((x * x).sum(), x)
    (tensor([2., 4.]),)
    >>> strata.autograd.functional.jacobian(lambda t: t.sum(), x)
    tensor([1., 1.])
"""

import strata.framework.autograd as _impl
from strata._subpackage import answer_with as _answer_with
from strata.framework import autograd_functional as functional
from strata.framework import forward_ad as forward_ad
from strata.framework.autograd import Function as Function
from strata.framework.autograd import FunctionCtx as FunctionCtx
from strata.framework.autograd import Variable as Variable
from strata.framework.autograd import backward as backward
from strata.framework.autograd import enable_grad as enable_grad
from strata.framework.autograd import grad as grad
from strata.framework.autograd import inference_mode as inference_mode
from strata.framework.autograd import is_grad_enabled as is_grad_enabled
from strata.framework.autograd import no_grad as no_grad
from strata.framework.autograd import set_grad_enabled as set_grad_enabled
from strata.framework.gradcheck import GradcheckError as GradcheckError
from strata.framework.gradcheck import gradcheck as gradcheck
from strata.framework.gradcheck import gradgradcheck as gradgradcheck

__all__ = ["Function", "FunctionCtx", "GradcheckError", "Variable", "backward", "enable_grad", "forward_ad",
           "functional", "grad", "gradcheck", "gradgradcheck", "inference_mode", "is_grad_enabled", "no_grad",
           "set_grad_enabled"]

_answer_with(__name__, _impl, {"functional": functional, "forward_ad": forward_ad})
