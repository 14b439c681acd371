"""Reverse-mode automatic differentiation: the graph of `Node`s that ops record (`grad_fn`), the
backward engine (`backward`, `grad`, with `create_graph` for higher-order gradients), tensor hooks,
custom ops (`Function`), and grad mode (`no_grad`, `enable_grad`). `strata.autograd` is this module,
as `torch.autograd` is PyTorch's.

An op on tensors that require grad records a Node holding the closure that maps the output's gradient
to its inputs' gradients, and the inputs' own nodes (`next_functions`); a leaf that requires grad is
reached through its `AccumulateGrad` node. The engine orders the graph topologically from the roots,
runs each node once with the sum of the gradients that reached it (after the tensor's hooks), and
accumulates into `.grad` of leaves (`backward`) or hands the gradients back (`grad`). The closures are
written with strata ops, so with `create_graph=True` they record a graph of their own and the result
can be differentiated again. Saved state is dropped after a pass unless `retain_graph=True`; a second
pass through the freed graph raises RuntimeError, as in PyTorch.

Example:
    >>> import strata
    >>> x = strata.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
    >>> y = (x ** 3).sum()
    >>> (g,) = strata.autograd.grad(y, x, create_graph=True)   # 3 x**2
    >>> strata.autograd.grad(g.sum(), x)[0]                    # 6 x
    tensor([ 6., 12.])
"""

from __future__ import annotations

import functools
import itertools
import sys
import threading
import warnings
import weakref
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from strata import trace

if TYPE_CHECKING:
    from strata.framework.tensor import Tensor

class _ThreadState(threading.local):
    enabled = True  # grad mode, per thread (a class default: reading it is one attribute lookup)


_state = _ThreadState()

_FREED = ("Trying to backward through the graph a second time (or directly access saved tensors after they have "
          "already been freed). Saved intermediate values of the graph are freed when you call .backward() or "
          "autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if "
          "you need to access saved tensors after calling backward.")
NON_LEAF_GRAD_WARNING = (
    "The .grad attribute of a Tensor that is not a leaf Tensor is being accessed. Its .grad attribute won't be "
    "populated during autograd.backward(). If you indeed want the .grad field to be populated for a non-leaf "
    "Tensor, use .retain_grad() on the non-leaf Tensor. If you access the non-leaf Tensor by mistake, make sure "
    "you access the leaf Tensor instead. See github.com/pytorch/pytorch/pull/30531 for more information.")
CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter and its gradient "
    "which can cause a memory leak. We recommend using autograd.grad when creating the graph to avoid this. If you "
    "have to use this function, make sure to reset the .grad fields of your parameters to None after use to break "
    "the cycle and avoid the leak.")


# ----------------------------------------------------------------------------------------- grad mode
def is_grad_enabled() -> bool:
    """True unless inside `no_grad` (per thread, as in PyTorch)."""
    return _state.enabled


def _set_enabled(mode: bool) -> None:
    _state.enabled = bool(mode)


class _GradMode:
    _mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        _set_enabled(self._prev)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with type(self)():
                return fn(*args, **kwargs)
        return wrapper


class no_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Context manager and decorator: ops inside record no graph (results don't require grad)."""

    _mode = False


class enable_grad(_GradMode):  # noqa: N801 - PyTorch's name
    """Context manager and decorator: re-enable recording inside `no_grad`."""

    _mode = True


class inference_mode(_GradMode):  # noqa: N801 - PyTorch's name
    """Context manager and decorator for inference: as `no_grad` (strata has no separate inference
    tensors, so `inference_mode()` and `no_grad()` behave alike); `inference_mode(False)` is a no-op."""

    def __init__(self, mode: bool = True) -> None:
        self.mode = bool(mode)

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        _set_enabled(self._prev and not self.mode)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with inference_mode(self.mode):
                return fn(*args, **kwargs)
        return wrapper


class set_grad_enabled(_GradMode):  # noqa: N801 - PyTorch's name
    """Turn recording on or off: as a call (`set_grad_enabled(False)`, effective at once, as in PyTorch),
    a context manager (`with set_grad_enabled(False):`, restored on exit) or a decorator."""

    def __init__(self, mode: bool) -> None:
        self._prev = is_grad_enabled()
        self._mode = bool(mode)
        _set_enabled(self._mode)

    def __enter__(self) -> None:
        _set_enabled(self._mode)

    def __call__(self, fn: Callable[..., Any]) -> Callable[..., Any]:
        _set_enabled(self._prev)  # used as a decorator: the call above must not leak
        mode = self._mode

        @functools.wraps(fn)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            with set_grad_enabled(mode):
                return fn(*args, **kwargs)
        return wrapper


# ----------------------------------------------------------------------------------------- recording
# The tensor class, told by tensor.py when it is defined: this module sits below it (tensor.py imports
# autograd), so it learns the type instead of importing it.
_tensor_type: Any = type(None)


def register_tensor_type(cls: type) -> None:
    """Called once by tensor.py: `cls` is what `record` and `Function.apply` treat as a tensor."""
    global _tensor_type
    _tensor_type = cls


def needs_grad(*ts: Any) -> bool:
    """True when grad mode is on and some tensor among `ts` requires grad."""
    for t in ts:  # (most ops record nothing: look at the tensors first, grad mode only when one requires grad)
        if isinstance(t, _tensor_type) and t._requires_grad:
            return _state.enabled
    return False


def record(out: Tensor, inputs: Sequence[Any], name: str, backward: Callable[[Tensor], Sequence[Any]]) -> Tensor:
    """Attach a Node `name` to `out` when grad mode is on and a tensor input requires grad; `backward`
    maps out's gradient to one gradient (or None) per input."""
    if needs_grad(*inputs):
        tensors = [t if isinstance(t, _tensor_type) else None for t in inputs]
        out._requires_grad = True
        out.grad_fn = Node(name, tensors, backward)
    return out


def fit(g: Tensor | None, like: Any) -> Tensor | None:
    """A gradient reduced to the shape and dtype of the input it belongs to (None for non-tensors and
    inputs that don't require grad)."""
    if g is None or not isinstance(like, _tensor_type) or not like.requires_grad:
        return None
    if g.shape != like.shape:
        g = g.sum_to_size(like.shape)
    return g.to(like.dtype) if g.dtype is not like.dtype else g


# ----------------------------------------------------------------------------------------- the graph
class Node:
    """One recorded op: `name()` like PyTorch's ('MulBackward0'), `next_functions`, and the closure
    `backward_fn(grad) -> grads per input` (None for inputs that don't need one)."""

    # hooks of the tensor this node produced (register_hook on a non-leaf), and retain_grad's target
    _pre_hooks: dict[int, Callable[[Tensor], Tensor | None]] | None = None
    _retained: weakref.ref | None = None

    def __init__(self, name: str, inputs: Sequence[Tensor | None],
                 backward_fn: Callable[[Tensor], Sequence[Tensor | None]]) -> None:
        self._name = name
        # edges are fixed now: an in-place op may later give an input tensor another grad_fn
        self.next_functions = tuple([(_edge(t) if t is not None and t._requires_grad else None, 0) for t in inputs])
        self.backward_fn: Callable[[Tensor], Sequence[Tensor | None]] | None = backward_fn

    def name(self) -> str:
        """The node's PyTorch-style name."""
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name} object>"


class SavedOutput:
    """An op's output as its own derivative reads it, kept without the reference cycle output -> grad_fn
    -> closure -> output, which only the cyclic garbage collector could break (so every recorded op left
    cyclic garbage, and its output's memory lived on until a collection). The closure holds the output's
    storage and layout and a weak reference to the node; `get()` rebuilds the tensor, and under
    create_graph gives it the node back as its grad_fn, so the derivative's own graph reaches through
    the output (PyTorch's SavedVariable does the same for outputs)."""

    __slots__ = ("_node", "_parts")

    def __init__(self, out: Tensor, node: Node) -> None:
        self._parts = (out._storage, out._shape, out._stride, out._offset, out.dtype, out._np)
        self._node = weakref.ref(node)

    def get(self) -> Tensor:
        """The output (an alias of its data; recorded as the node's output when grad mode is on)."""
        t = _tensor_type._rebuild(*self._parts)
        if _state.enabled:
            node = self._node()
            if node is not None:
                t._requires_grad = True
                t.grad_fn = node
        return t


class AccumulateGrad:
    """The node of a leaf tensor that requires grad: adds incoming gradients into `.grad`. One per leaf
    (the leaf keeps a weak reference, the graph the node), so every edge to a leaf meets here."""

    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        """'torch::autograd::AccumulateGrad', as PyTorch names it."""
        return "torch::autograd::AccumulateGrad"

    def __repr__(self) -> str:
        return "<AccumulateGrad object>"


GraphNode = Node | AccumulateGrad


def _grad_accumulator(t: Tensor) -> AccumulateGrad:
    ref = t.__dict__.get("_grad_acc")
    acc = ref() if ref is not None else None
    if acc is None:
        acc = AccumulateGrad(t)
        t.__dict__["_grad_acc"] = weakref.ref(acc)
    return acc


def _edge(t: Tensor | None) -> GraphNode | None:
    if t is None:
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    return _grad_accumulator(t)


def _topological(roots: Sequence[GraphNode]) -> list[GraphNode]:
    """Nodes reachable from `roots` along next_functions, each before the nodes it feeds."""
    order: list[GraphNode] = []
    seen: set[int] = set()
    stack: list[tuple[GraphNode, bool]] = [(r, False) for r in reversed(roots)]
    while stack:
        node, done = stack.pop()
        if done:
            order.append(node)
            continue
        if id(node) in seen:
            continue
        seen.add(id(node))
        stack.append((node, True))
        for nxt, _ in node.next_functions:
            if nxt is not None and id(nxt) not in seen:
                stack.append((nxt, False))
    return order[::-1]


def iter_graph(root: Node) -> Iterator[GraphNode]:
    """Every node reachable from `root` (AccumulateGrad nodes of leaves included), roots first."""
    yield from _topological([root])


# ----------------------------------------------------------------------------------------- hooks
class RemovableHandle:
    """What `register_hook` returns: `remove()` takes the hook out (also a context manager)."""

    _ids = itertools.count()

    def __init__(self, hooks: dict[int, Any]) -> None:
        self._hooks = hooks
        self.id = next(RemovableHandle._ids)

    def remove(self) -> None:
        """Unregister the hook (a no-op the second time)."""
        self._hooks.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def register_hook(t: Tensor, hook: Callable[[Tensor], Tensor | None]) -> RemovableHandle:
    """`Tensor.register_hook`: `hook(grad)` runs when t's gradient is computed and may return a
    replacement; on a leaf before accumulation into `.grad`, on a non-leaf before its grad_fn runs."""
    if not t.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if t.grad_fn is not None:
        if t.grad_fn._pre_hooks is None:
            t.grad_fn._pre_hooks = {}
        hooks = t.grad_fn._pre_hooks
    else:
        hooks = t.__dict__.setdefault("_hooks", {})
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    return handle


def retain_grad(t: Tensor) -> None:
    """`Tensor.retain_grad`: fill a non-leaf's `.grad` during backward (a no-op on leaves)."""
    if not t.requires_grad:
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if t.grad_fn is None:
        return
    t._retains_grad = True
    t.grad_fn._retained = weakref.ref(t)


def _run_hooks(hooks: dict[int, Callable[[Tensor], Tensor | None]] | None, g: Tensor) -> Tensor:
    for hook in list((hooks or {}).values()):
        r = hook(g)
        if r is not None:
            g = r
    return g


# ----------------------------------------------------------------------------------------- the engine
def _as_tuple(x: Any) -> tuple:
    if x is None:
        return ()
    return tuple(x) if isinstance(x, list | tuple) else (x,)


def _root_grads(outputs: tuple, grad_outputs: Any, create_graph: bool) -> list[Tensor]:
    gos = _as_tuple(grad_outputs) if grad_outputs is not None else (None,) * len(outputs)
    if len(gos) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(gos)} gradients")
    out = []
    for i, (t, g) in enumerate(zip(outputs, gos, strict=True)):
        if not t.requires_grad:
            raise RuntimeError(f"element {i} of tensors does not require grad and does not have a grad_fn")
        if g is None:
            if t.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if not t.dtype.is_floating_point:
                raise RuntimeError(f"grad can be implicitly created only for real scalar outputs but got "
                                   f"{t.dtype}")
            g = t.detach().new_ones(t.shape)
        elif tuple(g.shape) != tuple(t.shape):
            raise RuntimeError(f"Mismatch in shape: grad_output[{i}] has a shape of {g.shape} and output[{i}] has a "
                               f"shape of {t.shape}.")
        out.append(g if create_graph else g.detach())
    return out


def _execute(outputs: tuple, roots_g: list[Tensor], inputs: tuple | None, *, retain_graph: bool,
             create_graph: bool, accumulate: bool) -> list[Tensor | None]:
    """Run the graph from `outputs` (with gradients `roots_g`). With `accumulate`, leaves (or only
    `inputs`, when given) get `.grad` added to; without it, the gradients of `inputs` are returned."""
    roots = [_edge(t) for t in outputs]
    grads: dict[int, Tensor] = {}
    for root, rg in zip(roots, roots_g, strict=True):
        assert root is not None
        grads[id(root)] = grads[id(root)] + rg if id(root) in grads else rg
    order = _topological([r for r in roots if r is not None])
    capture: dict[int, list[int]] = {}
    if inputs is not None:
        for i, t in enumerate(inputs):
            capture.setdefault(id(_edge(t)), []).append(i)
    # a node runs only if some node after it still matters (everything does for a plain backward)
    needed: dict[int, bool] = {}
    for node in reversed(order):
        if inputs is None:
            needed[id(node)] = True
        else:
            needed[id(node)] = id(node) in capture or any(
                nxt is not None and needed.get(id(nxt), False) for nxt, _ in node.next_functions)
    captured: list[Tensor | None] = [None] * (len(inputs) if inputs is not None else 0)
    with enable_grad() if create_graph else no_grad():
        for node in order:
            g = grads.pop(id(node)) if id(node) in grads else None
            if g is None or not needed[id(node)]:
                continue
            if isinstance(node, AccumulateGrad):
                var = node.variable
                g = _run_hooks(var.__dict__.get("_hooks"), g)
                if accumulate and (inputs is None or id(node) in capture):
                    sole = _sole_owner(g)  # (its own statement: as an argument, g would be on the stack twice)
                    _accumulate(var, g, create_graph, sole=sole)
                for i in capture.get(id(node), ()):
                    captured[i] = g
                continue
            g = _run_hooks(node._pre_hooks, g)
            if node._retained is not None:
                kept = node._retained()
                if kept is not None:
                    _accumulate(kept, g, create_graph)
            for i in capture.get(id(node), ()):
                if accumulate:
                    t = inputs[i]  # type: ignore[index]
                    if not t.retains_grad:
                        _accumulate(t, g, create_graph)
                else:
                    captured[i] = g
            if not any(nxt is not None and needed[id(nxt)] for nxt, _ in node.next_functions):
                continue
            if node.backward_fn is None:
                raise RuntimeError(_FREED)
            if trace.recording():  # PyTorch's profiler name for running one node
                with trace.span("L5", f"autograd::engine::evaluate_function: {node.name()}"):
                    in_grads = node.backward_fn(g)
            else:
                in_grads = node.backward_fn(g)
            if not retain_graph:
                node.backward_fn = None
            for (nxt, _), ig in zip(node.next_functions, in_grads, strict=True):
                if nxt is None or ig is None:
                    continue
                key = id(nxt)
                grads[key] = grads[key] + ig if key in grads else ig
            del in_grads  # (the gradients live in `grads` alone: `_sole_owner` counts on it)
            ig = None
    return captured


def _refs_of_sole_local() -> int:
    """sys.getrefcount of an object that one local variable holds (the interpreter's own count)."""
    d = {0: object()}
    x = d.pop(0)
    return sys.getrefcount(x)


def _refs_of_sole_attribute() -> int:
    """sys.getrefcount of an object that one attribute holds."""
    class Holder:
        pass
    h = Holder()
    h.a = object()  # type: ignore[attr-defined]
    return sys.getrefcount(h.a)  # type: ignore[attr-defined]


_SOLE_LOCAL, _SOLE_ATTRIBUTE = _refs_of_sole_local(), _refs_of_sole_attribute()


def _sole_owner(g: Tensor) -> bool:
    """True when the engine's gradient `g` is seen by nothing else: no other reference to the tensor (the
    engine's local and this call's argument only) and no other tensor on its storage. Such a gradient
    can become a leaf's `.grad` as it is, as PyTorch's AccumulateGrad steals a gradient nothing else
    uses, instead of being copied."""
    # (+1: the reference this function's parameter holds)
    return sys.getrefcount(g) <= _SOLE_LOCAL + 1 and sys.getrefcount(g._storage) <= _SOLE_ATTRIBUTE


def _accumulate(t: Tensor, g: Tensor, create_graph: bool = False, sole: bool = False) -> None:
    """t.grad += g (the first time: g itself when the engine says nothing else sees it (`sole`) and it has
    t's dtype and a row-major layout, else a fresh copy; recorded when create_graph)."""
    old = t._grad
    if old is None and sole and not create_graph and g.grad_fn is None and not g._requires_grad and \
            g.dtype is t.dtype and g._shape == t._shape and g.is_contiguous() and g.device == t.device:
        t._grad = g
        return
    if not create_graph:
        g = g.detach()
    if g.dtype is not t.dtype:
        g = g.to(t.dtype)
    if old is None:
        t._grad = g if create_graph and g.requires_grad else g.clone()
    elif create_graph or old.requires_grad:
        t._grad = old + g
    else:
        old.add_(g)


def backward(tensors: Tensor | Sequence[Tensor], grad_tensors: Tensor | Sequence[Tensor | None] | None = None,
             retain_graph: bool | None = None, create_graph: bool = False,
             grad_variables: Any = None, inputs: Tensor | Sequence[Tensor] | None = None) -> None:
    """Accumulate the gradient of `tensors` (weighted by `grad_tensors`) into `.grad` of the leaves
    (or of `inputs` only) that require grad.

    Args:
        tensors: the roots (scalars, or any shape with `grad_tensors`).
        grad_tensors: d(loss)/d(root) per root; None for a scalar root means 1.
        retain_graph: keep the graph for another pass (default: `create_graph`).
        create_graph: record the backward pass itself, for higher-order gradients.
        inputs: accumulate only into these tensors.

    Raises:
        RuntimeError: a root does not require grad, a non-scalar root without a gradient, a shape
            mismatch, or a graph already freed by an earlier pass.
    """
    if grad_variables is not None:
        grad_tensors = grad_variables
    outs = _as_tuple(tensors)
    ins = _as_tuple(inputs) if inputs is not None else None
    if ins is not None and not ins:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    retain = create_graph if retain_graph is None else retain_graph
    if create_graph:
        warnings.warn(CREATE_GRAPH_WARNING, UserWarning, stacklevel=2)
    with trace.span("L5", "autograd::backward"):  # one call in a walk: the nodes it runs nest under it
        _execute(outs, _root_grads(outs, grad_tensors, create_graph), ins, retain_graph=retain,
                 create_graph=create_graph, accumulate=True)


def grad(outputs: Tensor | Sequence[Tensor], inputs: Tensor | Sequence[Tensor],
         grad_outputs: Tensor | Sequence[Tensor | None] | None = None, retain_graph: bool | None = None,
         create_graph: bool = False, only_inputs: bool = True, allow_unused: bool | None = None,
         is_grads_batched: bool = False, materialize_grads: bool = False) -> tuple[Tensor | None, ...]:
    """d(outputs)/d(inputs): the sum over outputs of grad_output^T * Jacobian, per input, without
    touching any `.grad`.

    Args:
        outputs: the differentiated tensors.
        inputs: the tensors to differentiate with respect to (leaves or not).
        grad_outputs: the vector in the vector-Jacobian product per output (None: 1 for a scalar).
        retain_graph: keep the graph for another pass (default: `create_graph`).
        create_graph: record the computation, so the result can be differentiated again.
        allow_unused: return None for an input the outputs don't depend on instead of raising.
        materialize_grads: return zeros instead of None for unused inputs (implies allow_unused).

    Returns:
        A tuple with one gradient per input.

    Raises:
        RuntimeError: an input does not require grad, an input is unused (without `allow_unused`),
            or one of `backward`'s errors.
    """
    if is_grads_batched:
        raise NotImplementedError("strata.autograd.grad: is_grads_batched=True is not supported")
    if allow_unused is None:
        allow_unused = materialize_grads
    elif materialize_grads and not allow_unused:
        raise ValueError("Expected allow_unused to be True or not passed when materialize_grads=True, but got: "
                         "allow_unused=False.")
    outs = _as_tuple(outputs)
    ins = _as_tuple(inputs)
    if not ins:
        raise RuntimeError("grad requires non-empty inputs.")
    for t in ins:
        if not t.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    retain = create_graph if retain_graph is None else retain_graph
    res = _execute(outs, _root_grads(outs, grad_outputs, create_graph), ins, retain_graph=retain,
                   create_graph=create_graph, accumulate=False)
    out: list[Tensor | None] = []
    for i, (t, g) in enumerate(zip(ins, res, strict=True)):
        if g is None:
            if materialize_grads:
                g = t.detach().new_zeros(t.shape)
            elif not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {i} appears to not have been used in the "
                                   "graph. Set allow_unused=True if this is the desired behavior.")
        elif g.dtype is not t.dtype:
            g = g.to(t.dtype)
        out.append(g)
    return tuple(out)


# ----------------------------------------------------------------------------------------- custom ops
class FunctionCtx:
    """The `ctx` of a custom `Function`: `save_for_backward`, `saved_tensors`, `needs_input_grad`,
    `mark_non_differentiable`, `set_materialize_grads`, `mark_dirty`; any other attribute may be set."""

    needs_input_grad: tuple[bool, ...] = ()
    materialize_grads = True

    def save_for_backward(self, *tensors: Tensor | None) -> None:
        """Keep tensors for `backward` (read them back as `ctx.saved_tensors`)."""
        self._saved: tuple | None = tensors

    @property
    def saved_tensors(self) -> tuple:
        """What `save_for_backward` kept.

        Raises:
            RuntimeError: after a backward pass freed the graph.
        """
        saved = self.__dict__.get("_saved", ())
        if saved is None:
            raise RuntimeError(_FREED)
        return saved

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Outputs that get no grad_fn (integer indices, masks)."""
        self._non_differentiable = {id(t) for t in tensors}

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Accepted for compatibility (in-place custom ops)."""

    def set_materialize_grads(self, value: bool) -> None:
        """Whether missing output gradients reach `backward` as zeros (default) or None."""
        self.materialize_grads = bool(value)


class Function:
    """A custom differentiable op: subclass with `forward(ctx, *args)` and `backward(ctx, *grads)`
    (static methods; or `forward(*args)` plus `setup_context(ctx, inputs, output)`), call `.apply`.

    `forward` runs without recording; `apply` gives each floating output a node named
    `<ClassName>Backward` whose closure calls `backward`. With several outputs, each output's node
    calls `backward` with zeros (or None) for the others, so `backward` must be linear in its grads.

    Example:
        >>> import strata
        >>> class Cube(strata.autograd.Function):
        ...     @staticmethod
        ...     def forward(ctx, x):
        ...         ctx.save_for_backward(x)
        ...         return x * x * x
        ...     @staticmethod
        ...     def backward(ctx, g):
        ...         (x,) = ctx.saved_tensors
        ...         return g * 3 * x * x
        >>> x = strata.tensor([1.0, 2.0], requires_grad=True)
        >>> Cube.apply(x).sum().backward()
        >>> x.grad
        tensor([ 3., 12.])
    """

    @staticmethod
    def forward(ctx: Any, *args: Any, **kwargs: Any) -> Any:
        """The computation (override)."""
        raise NotImplementedError("You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx: Any, inputs: tuple, output: Any) -> Any:
        """Optional: save state when `forward` does not take ctx (override)."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx: Any, *grad_outputs: Any) -> Any:
        """The gradients of the inputs given those of the outputs (override)."""
        raise NotImplementedError("You must implement either the backward or vjp method for your custom "
                                  "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @classmethod
    def apply(cls, *args: Any, **kwargs: Any) -> Any:
        """Run `forward` and, when grad mode is on and a tensor input requires grad, record the op."""
        Tensor = _tensor_type  # noqa: N806 - the class, as tensor.py registered it
        ctx = FunctionCtx()
        ctx.needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
        with no_grad():
            if cls.setup_context is not Function.setup_context:
                out = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, out)
            else:
                out = cls.forward(ctx, *args, **kwargs)
        if not (is_grad_enabled() and any(ctx.needs_input_grad)):
            return out
        single = not isinstance(out, tuple)
        outs = list((out,) if single else out)
        skip = ctx.__dict__.get("_non_differentiable", set())
        slots = [i for i, o in enumerate(outs)
                 if isinstance(o, Tensor) and o.dtype.is_floating_point and id(o) not in skip]
        inputs = [a if isinstance(a, Tensor) else None for a in args]
        name = f"{cls.__name__}Backward"
        for i in slots:
            o = outs[i]
            if any(o is a for a in args):  # forward returned an input: the output is a new alias of it
                o = o._view(o.shape, o.stride(), o._offset)
            o._requires_grad = True
            o.grad_fn = Node(name, inputs, _custom_backward(cls, ctx, i, outs, args, name))
            outs[i] = o
        return outs[0] if single else tuple(outs)


def _custom_backward(cls: type[Function], ctx: FunctionCtx, index: int, outs: list, args: tuple,
                     name: str) -> Callable[[Tensor], Sequence[Tensor | None]]:
    shapes = [(o.shape, o.dtype, o.device) if hasattr(o, "shape") else None for o in outs]

    def bw(g: Tensor) -> Sequence[Tensor | None]:
        gs: list[Any] = []
        for j, meta in enumerate(shapes):
            if j == index:
                gs.append(g)
            elif meta is not None and ctx.materialize_grads:
                gs.append(g.new_zeros(meta[0]).to(meta[2], meta[1]))
            else:
                gs.append(None)
        res = cls.backward(ctx, *gs)
        res = res if isinstance(res, tuple) else (res,)
        if len(res) < len(args) or any(r is not None for r in res[len(args):]):
            raise RuntimeError(f"function {name} returned an incorrect number of gradients (expected {len(args)}, "
                               f"got {len(res)})")
        return [fit(r, a) for r, a in zip(res[:len(args)], args, strict=True)]
    return bw


def _warn_non_leaf_grad() -> None:
    warnings.warn(NON_LEAF_GRAD_WARNING, UserWarning, stacklevel=3)


class _VariableMeta(type):
    def __instancecheck__(cls, obj: Any) -> bool:
        return isinstance(obj, _tensor_type)


class Variable(metaclass=_VariableMeta):
    """The pre-0.4 wrapper, as PyTorch keeps it: `Variable(t, requires_grad=...)` is a tensor sharing t's data
    (a new leaf), and every tensor is an instance of Variable.

    Example:
        >>> import strata
        >>> v = strata.autograd.Variable(strata.ones(2), requires_grad=True)
        >>> v.requires_grad, isinstance(strata.zeros(1), strata.autograd.Variable)
        (True, True)
    """

    def __new__(cls, data: Any = None, requires_grad: bool = False, volatile: bool = False) -> Any:
        if data is None:
            data = _tensor_type([])
        if not isinstance(data, _tensor_type):
            raise TypeError(f"Variable data has to be a tensor, but got {type(data).__name__}")
        if volatile:
            warnings.warn("volatile was removed and now has no effect. Use `with torch.no_grad():` instead.",
                          UserWarning, stacklevel=2)
        return data.detach().requires_grad_(requires_grad)


def __getattr__(name: str) -> Any:
    """`strata.autograd.forward_ad` (torch.autograd's submodule), imported on first use: it computes with tensors,
    which this module does not import."""
    if name == "forward_ad":
        import importlib

        return importlib.import_module("strata.framework.forward_ad")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["Function", "FunctionCtx", "Variable", "backward", "enable_grad", "grad", "is_grad_enabled", "no_grad",
           "set_grad_enabled"]
