"""`strata.autograd.gradcheck` / `gradgradcheck` (torch.autograd's): compare the gradients autograd computes
with central finite differences, for the inputs that require grad.

The analytical Jacobian comes from `autograd_functional.jacobian` (one reverse pass per output element); the
numerical one perturbs each input element by +-eps in fresh tensors (no in-place writes), so it runs on any
device. Pass float64 inputs: float32 differences are too coarse for the default tolerances (PyTorch warns
about this too).

Example:
    >>> import strata
    >>> from strata.autograd import gradcheck
    >>> x = strata.tensor([0.5, -1.0, 2.0], dtype=strata.float64, requires_grad=True)
    >>> gradcheck(lambda t: (t * t).sin(), (x,))
    True
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Sequence
from typing import Any

from strata.framework.autograd import grad as autograd_grad
from strata.framework.autograd import no_grad
from strata.framework.autograd_functional import jacobian
from strata.framework.joining import stack
from strata.framework.random import randn_like
from strata.framework.tensor import Tensor

__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


class GradcheckError(RuntimeError):
    """The analytical and numerical gradients disagree (PyTorch's torch.autograd.gradcheck.GradcheckError)."""


def _outputs(out: Any) -> tuple[Tensor, ...]:
    items = out if isinstance(out, tuple | list) else (out,)
    return tuple(o for o in items if isinstance(o, Tensor))


def _numerical(func: Callable[..., Any], args: list[Any], index: int, eps: float) -> list[Tensor]:
    """d outputs / d args[index] by central differences, one tensor per output, shaped out.shape + in.shape."""
    base = args[index].detach()
    columns: list[list[Tensor]] = []
    for k in range(base.numel()):
        delta = base.new_zeros(base.numel())
        delta[k] = eps
        delta = delta.reshape(base.shape)
        # grad mode stays on: gradgradcheck's function calls autograd.grad on its inputs
        plus = _outputs(func(*[(base + delta).requires_grad_() if i == index else a for i, a in enumerate(args)]))
        minus = _outputs(func(*[(base - delta).requires_grad_() if i == index else a for i, a in enumerate(args)]))
        columns.append([((p - m) / (2 * eps)).detach() for p, m in zip(plus, minus, strict=True)])
    result = []
    for o in range(len(columns[0]) if columns else 0):
        col = stack([c[o] for c in columns])  # (in numel, *out.shape)
        out_shape = tuple(col.shape[1:])
        flat = col.reshape(base.numel(), -1).transpose(0, 1)
        result.append(flat.reshape(*out_shape, *base.shape))
    return result


def gradcheck(func: Callable[..., Any], inputs: Tensor | Sequence[Any], *, eps: float = 1e-6, atol: float = 1e-5,
              rtol: float = 1e-3, raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False, check_batched_grad: bool = False,
              check_batched_forward_grad: bool = False, check_forward_ad: bool = False,
              check_backward_ad: bool = True, fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check autograd's gradients of `func` at `inputs` against finite differences.

    Args:
        func: takes the inputs, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a sequence of arguments; those that are Tensors with requires_grad are checked.
        eps: the finite-difference step. atol, rtol: the tolerances of the comparison.
        raise_exception: raise GradcheckError on a mismatch (else return False).
        The remaining PyTorch options are accepted; forward-mode and batched checks are not supported.

    Returns:
        True when every (output, input) Jacobian matches.

    Raises:
        ValueError: no input requires grad. GradcheckError: a mismatch (with raise_exception).
        NotImplementedError: check_forward_ad / check_batched_grad / check_batched_forward_grad.
    """
    if check_forward_ad or check_batched_grad or check_batched_forward_grad:
        raise NotImplementedError("strata.autograd.gradcheck: forward-mode AD and batched gradient checks are not "
                                  "supported (strata has neither forward AD nor vmap)")
    args = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    checked = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if not checked:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but none of the them "
                         "have requires_grad=True.")
    for i in checked:
        if args[i].dtype.itemsize < 8 and args[i].dtype.is_floating_point:
            warnings.warn(f"Input #{i} requires gradient and is not a double precision floating point. This check "
                          "will likely fail if all the inputs are not of double precision floating point.",
                          UserWarning, stacklevel=2)

    def of_checked(*xs: Tensor) -> Any:
        full = list(args)
        for i, x in zip(checked, xs, strict=True):
            full[i] = x
        outs = _outputs(func(*full))
        return tuple(o for o in outs if o.dtype.is_floating_point)

    analytical = jacobian(of_checked, tuple(args[i] for i in checked))  # [output][input]
    for pos, i in enumerate(checked):
        numerical = _numerical(lambda *a: of_checked(*[a[j] for j in checked]), args, i, eps)
        for o, num in enumerate(numerical):
            ana = analytical[o][pos]
            if not (ana - num).abs().le(atol + rtol * num.abs()).all().item():
                if not raise_exception:
                    return False
                raise GradcheckError(f"Jacobian mismatch for output {o} with respect to input {i},\n"
                                     f"numerical:{num}\nanalytical:{ana}\n")
    return True


def gradgradcheck(func: Callable[..., Any], inputs: Tensor | Sequence[Any],
                  grad_outputs: Tensor | Sequence[Tensor] | None = None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False, raise_exception: bool = True,
                  nondet_tol: float = 0.0, check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False, check_rev_over_rev: bool = True,
                  fast_mode: bool = False, masked: bool = False) -> bool:
    """Check second derivatives: `gradcheck` of the map (inputs, grad_outputs) -> d(outputs . grad_outputs)/d inputs.
    grad_outputs default to random normal tensors shaped as the outputs (requiring grad).

    Raises:
        As `gradcheck`.
    """
    args = [inputs] if isinstance(inputs, Tensor) else list(inputs)
    checked = [i for i, a in enumerate(args) if isinstance(a, Tensor) and a.requires_grad]
    if grad_outputs is None:
        with no_grad():
            outs = [o for o in _outputs(func(*args)) if o.dtype.is_floating_point]
        gos = [randn_like(o).requires_grad_(True) for o in outs]
    else:
        gos = [grad_outputs] if isinstance(grad_outputs, Tensor) else list(grad_outputs)
    n = len(args)

    def new_func(*all_args: Any) -> tuple[Tensor, ...]:
        ins, g = list(all_args[:n]), all_args[n:]
        outs = [o for o in _outputs(func(*ins)) if o.dtype.is_floating_point and o.requires_grad]
        res = autograd_grad(outs, [ins[i] for i in checked], list(g[:len(outs)]), create_graph=True,
                            allow_unused=True)
        return tuple(r for r in res if r is not None)

    return gradcheck(new_func, (*args, *gos), eps=eps, atol=atol, rtol=rtol, raise_exception=raise_exception)
