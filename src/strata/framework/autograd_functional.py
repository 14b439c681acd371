"""`strata.autograd.functional` (torch.autograd.functional): derivatives of a whole function at a point,
built on `autograd.grad`: `vjp`, `jvp`, `jacobian`, `hessian`, `vhp`, `hvp`, with PyTorch's signatures,
tuple conventions, `create_graph` and `strict` semantics.

`inputs` is a Tensor or a tuple of Tensors; every result keeps that shape (a tuple in, a tuple out).
The function is evaluated on copies of the inputs that require grad (detached unless `create_graph` and
the input itself requires grad, in which case the result stays connected to the caller's graph). Without
`create_graph`, outputs and results are detached. An output that does not depend on an input gives
zeros, or a RuntimeError when `strict=True`.

The Jacobian is built one row per output element (a reverse pass each), as PyTorch does with
`vectorize=False`; `vectorize=True` is accepted and computes the same rows (strata has no vmap), and
`strategy="forward-mode"` (which PyTorch allows only with `vectorize=True`) likewise returns the same
values. `jvp` and `hvp` use the double-backward trick, as PyTorch does.

Example:
    >>> import strata
    >>> from strata.autograd.functional import jacobian, hessian
    >>> x = strata.tensor([1.0, 2.0])
    >>> jacobian(lambda t: t * t, x)
    tensor([[2., 0.],
            [0., 4.]])
    >>> hessian(lambda t: (t ** 3).sum(), x)
    tensor([[ 6.,  0.],
            [ 0., 12.]])
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from strata.framework.autograd import enable_grad, grad
from strata.framework.joining import stack
from strata.framework.tensor import Tensor

__all__ = ["hessian", "hvp", "jacobian", "jvp", "vhp", "vjp"]

_STRATEGIES = ("forward-mode", "reverse-mode")


def _as_tuple(x: Any, what: str, fn_name: str) -> tuple[bool, tuple[Tensor, ...]]:
    """(was it a tuple, the tensors as a tuple); TypeError for anything but a Tensor or a tuple of them."""
    is_tuple = isinstance(x, tuple)
    items = tuple(x) if is_tuple else (x,)
    for i, el in enumerate(items):
        if not isinstance(el, Tensor):
            where = f"The {what} given to {fn_name} must be either a Tensor or a tuple of Tensors but the"
            if is_tuple:
                raise TypeError(f"{where} value at index {i} has type {type(el)}.")
            raise TypeError(f"{where} given {what} has type {type(el)}.")
    return is_tuple, items


def _tuple_postprocess(res: Any, to_unpack: bool | tuple[bool, bool]) -> Any:
    """Unpack the tuples a non-tuple argument was wrapped in (one level, or two for nested results)."""
    if isinstance(to_unpack, tuple):
        if not to_unpack[1]:
            res = tuple(el[0] for el in res)
        if not to_unpack[0]:
            res = res[0]
    elif not to_unpack:
        res = res[0]
    return res


def _grad_preprocess(inputs: tuple[Tensor, ...], create_graph: bool, need_graph: bool) -> tuple[Tensor, ...]:
    """Copies of the inputs that require grad: still linked to the caller's graph only when the result
    must be differentiable (create_graph) and the input itself requires grad."""
    out = []
    for inp in inputs:
        if create_graph and inp.requires_grad:
            out.append(inp.view_as(inp))  # a new node over inp: gradients flow on to the caller's graph
        else:
            out.append(inp.detach().requires_grad_(need_graph))
    return tuple(out)


def _grad_postprocess(inputs: tuple[Any, ...], create_graph: bool) -> tuple[Any, ...]:
    """Detach the results unless they must stay differentiable (nested tuples handled)."""
    if isinstance(inputs[0], Tensor):
        return inputs if create_graph else tuple(t.detach() for t in inputs)
    return tuple(_grad_postprocess(t, create_graph) for t in inputs)


def _validate_v(v: tuple[Tensor, ...], other: tuple[Tensor, ...], is_other_tuple: bool) -> None:
    if len(other) != len(v):
        if is_other_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(other)} but got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for idx, (el_v, el_other) in enumerate(zip(v, other, strict=True)):
        if el_v.shape != el_other.shape:
            prepend = f"Entry {idx} in " if is_other_tuple else ""
            raise RuntimeError(f"{prepend}v has invalid size: should be {el_other.shape} but got {el_v.shape}.")


def _check_requires_grad(inputs: tuple[Tensor, ...], what: str, strict: bool) -> None:
    if not strict:
        return
    for i, inp in enumerate(inputs):
        if not inp.requires_grad:
            if what == "outputs":
                raise RuntimeError(f"Output {i} of the user-provided function does not require gradients. The "
                                   "outputs must be computed in a differentiable manner from the input when "
                                   "running in strict mode.")
            raise RuntimeError(f"The {what} of the user-provided function does not require gradients at index {i}. "
                               "This is not allowed in strict mode.")


def _autograd_grad(outputs: tuple[Tensor | None, ...], inputs: tuple[Tensor, ...], grad_outputs: tuple[Any, ...] | None,
                   create_graph: bool, retain_graph: bool | None = None) -> tuple[Tensor | None, ...]:
    """autograd.grad over the outputs that require grad only (the others contribute nothing); None for
    inputs they do not reach."""
    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    pairs = [(o, g) for o, g in zip(outputs, grad_outputs, strict=True) if o is not None and o.requires_grad]
    if not pairs:
        return (None,) * len(inputs)
    return grad([o for o, _ in pairs], inputs, [g for _, g in pairs], retain_graph=retain_graph,
                create_graph=create_graph, allow_unused=True)


def _fill_in_zeros(grads: tuple[Tensor | None, ...], refs: tuple[Tensor, ...], strict: bool, create_graph: bool,
                   stage: str) -> tuple[Tensor, ...]:
    """Zeros where an input got no gradient; in strict mode, a RuntimeError naming the input instead."""
    res: list[Tensor] = []
    for i, (g, ref) in enumerate(zip(grads, refs, strict=True)):
        if g is None:
            if strict:
                if stage == "back":
                    raise RuntimeError(f"The output of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                if stage == "back_trick":
                    raise RuntimeError(f"The gradient with respect to the input is independent of entry {i} in "
                                       "the grad_outputs when using the double backward trick to compute forward "
                                       "mode gradients. This is not allowed in strict mode.")
                if stage == "double_back":
                    raise RuntimeError(f"The jacobian of the user-provided function is independent of input {i}. "
                                       "This is not allowed in strict mode.")
                raise RuntimeError(f"The hessian of the user-provided function is independent of entry {i} in the "
                                   "grad_jacobian. This is not allowed in strict mode as it prevents from using the "
                                   "double backward trick to replace forward mode AD.")
            g = ref.detach().new_zeros(ref.shape)
        else:
            if strict and create_graph and not g.requires_grad and stage in ("back", "double_back"):
                what = "input" if stage == "back" else "jacobian"
                raise RuntimeError(f"The {what} of the user-provided function is independent of input {i}. This is "
                                   "not allowed in strict mode when create_graph=True.")
        res.append(g)
    return tuple(res)


def _single_element_v(outputs: tuple[Tensor, ...], role: str) -> tuple[None, ...]:
    if len(outputs) != 1 or outputs[0].numel() != 1:
        raise RuntimeError(f"The vector v can only be None if the {role} is a single Tensor with a single element.")
    return (None,)


def _prepare_v(v: Any, against: tuple[Tensor, ...], against_is_tuple: bool, create_graph: bool, fn_name: str,
               role: str = "input to the user-provided function") -> tuple[Any, ...]:
    """The vector of a product, as a tuple shaped like `against` (None only for one single-element tensor,
    which `role` names in the error)."""
    if v is None:
        return _single_element_v(against, role)
    _, t_v = _as_tuple(v, "v", fn_name)
    t_v = _grad_preprocess(t_v, create_graph=create_graph, need_graph=False)
    _validate_v(t_v, against, against_is_tuple)
    return t_v


def vjp(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], v: Tensor | tuple[Tensor, ...] | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), v^T J): the vector-Jacobian product of `func` at `inputs`.

    Args:
        func: takes the input tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        v: shaped as func's output; may be None when the output is one single-element Tensor.
        create_graph: keep the results differentiable (the graph is recorded).
        strict: raise when an output is independent of an input instead of returning zeros.

    Raises:
        TypeError: inputs or outputs are not Tensors. RuntimeError: v missing or misshapen, or a strict
            mode violation.
    """
    with enable_grad():
        is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "vjp")
        t_inputs = _grad_preprocess(t_inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*t_inputs)
        is_outputs_tuple, t_outputs = _as_tuple(outputs, "outputs of the user-provided function", "vjp")
        _check_requires_grad(t_outputs, "outputs", strict=strict)
        vs = _prepare_v(v, t_outputs, is_outputs_tuple, create_graph, "vjp", "user-provided function returns")
        grad_res = _autograd_grad(t_outputs, t_inputs, vs, create_graph=create_graph)
        vjp_res = _fill_in_zeros(grad_res, t_inputs, strict, create_graph, "back")
    out = _grad_postprocess(t_outputs, create_graph)
    res = _grad_postprocess(vjp_res, create_graph)
    return _tuple_postprocess(out, is_outputs_tuple), _tuple_postprocess(res, is_inputs_tuple)


def jvp(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], v: Tensor | tuple[Tensor, ...] | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), J v): the Jacobian-vector product of `func` at `inputs` (v shaped as the inputs;
    None allowed for one single-element input), by the double-backward trick.

    Raises:
        TypeError / RuntimeError: as `vjp`.
    """
    with enable_grad():
        is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "jvp")
        t_inputs = _grad_preprocess(t_inputs, create_graph=create_graph, need_graph=True)
        vs = _prepare_v(v, t_inputs, is_inputs_tuple, create_graph, "jvp")
        outputs = func(*t_inputs)
        is_outputs_tuple, t_outputs = _as_tuple(outputs, "outputs of the user-provided function", "jvp")
        _check_requires_grad(t_outputs, "outputs", strict=strict)
        # u -> J^T u is linear in u; differentiating it with respect to u along v gives J v
        grad_outputs = tuple(out.detach().new_zeros(out.shape).requires_grad_(True) for out in t_outputs)
        grad_inputs = _autograd_grad(t_outputs, t_inputs, grad_outputs, create_graph=True)
        _check_requires_grad(tuple(g for g in grad_inputs if g is not None), "grad_inputs", strict=strict)
        grad_res = _autograd_grad(grad_inputs, grad_outputs, vs, create_graph=create_graph)
        jvp_res = _fill_in_zeros(grad_res, t_outputs, strict, create_graph, "back_trick")
    out = _grad_postprocess(t_outputs, create_graph)
    res = _grad_postprocess(jvp_res, create_graph)
    return _tuple_postprocess(out, is_outputs_tuple), _tuple_postprocess(res, is_outputs_tuple)


def _one_hot(ref: Tensor, index: int) -> Tensor:
    """A tensor shaped and typed as `ref`, zero but for a 1 at flat `index` (a grad_outputs selecting one row)."""
    e = ref.detach().new_zeros(ref.numel())
    e[index] = 1.0
    return e.reshape(ref.shape)


def jacobian(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], create_graph: bool = False,
             strict: bool = False, vectorize: bool = False, strategy: str = "reverse-mode") -> Any:
    """The Jacobian of `func` at `inputs`: for one input and one output a Tensor shaped
    output.shape + input.shape; with tuples, result[i][j] is d output_i / d input_j (a tuple level
    dropped where func took or returned a single Tensor).

    Args:
        func: takes the input tensors, returns a Tensor or a tuple of Tensors.
        inputs: a Tensor or a tuple of Tensors.
        create_graph: keep the Jacobian differentiable.
        strict: raise when an output is independent of an input instead of returning zeros.
        vectorize: accepted; the rows are computed one by one either way (strata has no vmap).
        strategy: "reverse-mode" or "forward-mode" (the latter requires vectorize=True, as in PyTorch).

    Raises:
        ValueError: an unknown strategy, forward-mode without vectorize, or forward-mode with create_graph.
        TypeError / RuntimeError: as `vjp`.
    """
    if strategy not in _STRATEGIES:
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
                         f'function has more outputs than inputs, "forward-mode" tends to be more performant. '
                         f'Otherwise, prefer to use "reverse-mode". Got {strategy!r}.')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError("torch.autograd.functional.jacobian: `create_graph=True` and "
                                      "`strategy=\"forward-mode\"` are not supported together (yet). Please either "
                                      "set `create_graph=False` or `strategy=\"reverse-mode\"`.")
        if not vectorize:
            raise ValueError("torch.autograd.functional.jacobian: `strategy=\"forward-mode\"` requires "
                             "`vectorize=True`.")
    with enable_grad():
        is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "jacobian")
        t_inputs = _grad_preprocess(t_inputs, create_graph=create_graph, need_graph=True)
        outputs = func(*t_inputs)
        is_outputs_tuple, t_outputs = _as_tuple(outputs, "outputs of the user-provided function", "jacobian")
        _check_requires_grad(t_outputs, "outputs", strict=strict)
        jacobian_rows: list[tuple[Tensor, ...]] = []
        for i, out in enumerate(t_outputs):
            # rows[j]: one gradient per element of out, for input j
            rows: list[list[Tensor]] = [[] for _ in t_inputs]
            for k in range(out.numel()):
                vj = (_autograd_grad((out,), t_inputs, (_one_hot(out, k),), retain_graph=True,
                                     create_graph=create_graph) if out.requires_grad else (None,) * len(t_inputs))
                for j, (g, inp) in enumerate(zip(vj, t_inputs, strict=True)):
                    if g is None:
                        if strict:
                            raise RuntimeError(f"Output {i} of the user-provided function is independent of input "
                                               f"{j}. This is not allowed in strict mode.")
                        g = inp.detach().new_zeros(inp.shape)
                    elif strict and create_graph and not g.requires_grad:
                        raise RuntimeError(f"The jacobian of the user-provided function is independent of input "
                                           f"{j}. This is not allowed in strict mode when create_graph=True.")
                    rows[j].append(g)
            per_input = []
            for j, inp in enumerate(t_inputs):
                if rows[j]:
                    per_input.append(stack(rows[j]).reshape(*out.shape, *inp.shape))
                else:  # an empty output: an empty Jacobian of the right shape
                    per_input.append(inp.detach().new_zeros((*out.shape, *inp.shape)))
            jacobian_rows.append(tuple(per_input))
    res = _grad_postprocess(tuple(jacobian_rows), create_graph)
    return _tuple_postprocess(res, (is_outputs_tuple, is_inputs_tuple))


def hessian(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], create_graph: bool = False,
            strict: bool = False, vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode") -> Any:
    """The Hessian of a scalar `func` at `inputs`: input.shape + input.shape for one input; with a tuple,
    result[i][j] is d2 f / d input_i d input_j.

    Raises:
        RuntimeError: func does not return one single-element Tensor, or a strict mode violation.
        ValueError / TypeError: as `jacobian`.
    """
    is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in _STRATEGIES:
        raise ValueError(f'Expected strategy to be either "forward-mode" or "reverse-mode". Got '
                         f'{outer_jacobian_strategy!r}.')

    def ensure_single_output_function(*inp: Tensor) -> Tensor:
        out = func(*inp)
        is_out_tuple, t_out = _as_tuple(out, "outputs of the user-provided function", "hessian")
        _check_requires_grad(t_out, "outputs", strict=strict)
        if is_out_tuple or not isinstance(out, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if out.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should contain a single "
                               "element")
        return out.squeeze()

    def jac_func(*inp: Tensor) -> Any:
        jac = jacobian(ensure_single_output_function, inp, create_graph=True)
        _check_requires_grad(jac, "jacobian", strict=strict)
        return jac

    res = jacobian(jac_func, t_inputs, create_graph=create_graph, strict=strict, vectorize=vectorize,
                   strategy=outer_jacobian_strategy)
    return _tuple_postprocess(res, (is_inputs_tuple, is_inputs_tuple))


def _scalar_output(func: Callable[..., Any], t_inputs: tuple[Tensor, ...], strict: bool, fn_name: str) -> Tensor:
    outputs = func(*t_inputs)
    is_outputs_tuple, t_outputs = _as_tuple(outputs, "outputs of the user-provided function", fn_name)
    _check_requires_grad(t_outputs, "outputs", strict=strict)
    if is_outputs_tuple or not isinstance(outputs, Tensor):
        raise RuntimeError(f"The function given to {fn_name} should return a single Tensor")
    if outputs.numel() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {fn_name} should contain a single element")
    return outputs


def vhp(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], v: Tensor | tuple[Tensor, ...] | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), v^T H): the vector-Hessian product of a scalar `func` (v shaped as the inputs).

    Raises:
        RuntimeError: func does not return one single-element Tensor, v missing or misshapen, or a strict
            mode violation.
    """
    with enable_grad():
        is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "vhp")
        t_inputs = _grad_preprocess(t_inputs, create_graph=create_graph, need_graph=True)
        vs = _prepare_v(v, t_inputs, is_inputs_tuple, create_graph, "vhp")
        out = _scalar_output(func, t_inputs, strict, "vhp")
        jac = _autograd_grad((out,), t_inputs, None, create_graph=True)
        _check_requires_grad(tuple(g for g in jac if g is not None), "jacobian", strict=strict)
        grad_res = _autograd_grad(jac, t_inputs, vs, create_graph=create_graph)
        vhp_res = _fill_in_zeros(grad_res, t_inputs, strict, create_graph, "double_back")
    outputs = _grad_postprocess((out,), create_graph)
    res = _grad_postprocess(vhp_res, create_graph)
    return outputs[0], _tuple_postprocess(res, is_inputs_tuple)


def hvp(func: Callable[..., Any], inputs: Tensor | tuple[Tensor, ...], v: Tensor | tuple[Tensor, ...] | None = None,
        create_graph: bool = False, strict: bool = False) -> tuple[Any, Any]:
    """(func(*inputs), H v): the Hessian-vector product of a scalar `func` (v shaped as the inputs), by the
    double-backward trick over the gradient, as PyTorch computes it.

    Raises:
        RuntimeError: as `vhp`.
    """
    with enable_grad():
        is_inputs_tuple, t_inputs = _as_tuple(inputs, "inputs", "hvp")
        t_inputs = _grad_preprocess(t_inputs, create_graph=create_graph, need_graph=True)
        vs = _prepare_v(v, t_inputs, is_inputs_tuple, create_graph, "hvp")
        out = _scalar_output(func, t_inputs, strict, "hvp")
        jac = _autograd_grad((out,), t_inputs, None, create_graph=True)
        _check_requires_grad(tuple(g for g in jac if g is not None), "jacobian", strict=strict)
        # w -> H^T w as a function of w, differentiated along v: H v
        grad_jac = tuple(inp.detach().new_zeros(inp.shape).requires_grad_(True) for inp in t_inputs)
        double_back = _autograd_grad(jac, t_inputs, grad_jac, create_graph=True)
        _check_requires_grad(tuple(g for g in double_back if g is not None), "hessian", strict=strict)
        grad_res = _autograd_grad(double_back, grad_jac, vs, create_graph=create_graph)
        hvp_res = _fill_in_zeros(grad_res, t_inputs, strict, create_graph, "double_back_trick")
    outputs = _grad_postprocess((out,), create_graph)
    res = _grad_postprocess(hvp_res, create_graph)
    return outputs[0], _tuple_postprocess(res, is_inputs_tuple)
