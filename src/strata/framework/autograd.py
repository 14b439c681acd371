"""Reverse-mode automatic differentiation: the graph of `Node`s that ops record (`grad_fn`), the
backward pass, and grad mode (`no_grad`, `enable_grad`).

An op on tensors that require grad records a Node holding the closure that maps the output's gradient
to its inputs' gradients, and the inputs' own nodes (`next_functions`). `backward` orders the graph
topologically from the root, runs each node once with the sum of the gradients that reached it, and
accumulates into `.grad` of leaves that require grad. Saved state is dropped after a backward unless
`retain_graph=True`; a second backward through the freed graph raises RuntimeError, as in PyTorch.

Example:
    >>> import strata
    >>> x = strata.tensor([1.0, 2.0], requires_grad=True)
    >>> (x * x).sum().backward()
    >>> x.grad
    tensor([2., 4.])
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from strata.framework.tensor import Tensor

_state = threading.local()


def is_grad_enabled() -> bool:
    """True unless inside `no_grad` (per thread, as in PyTorch)."""
    return getattr(_state, "enabled", True)


def set_grad_enabled(mode: bool) -> None:
    """Turn gradient recording on or off for this thread."""
    _state.enabled = bool(mode)


class _GradMode:
    _mode = True

    def __enter__(self) -> None:
        self._prev = is_grad_enabled()
        set_grad_enabled(self._mode)

    def __exit__(self, *exc: object) -> None:
        set_grad_enabled(self._prev)

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


class Node:
    """One recorded op: `name()` like PyTorch's ('MulBackward0'), `next_functions`, and the closure
    `backward_fn(grad) -> grads per input` (None for inputs that don't need one)."""

    def __init__(self, name: str, inputs: Sequence[Tensor | None],
                 backward_fn: Callable[[Tensor], Sequence[Tensor | None]]) -> None:
        self._name = name
        # edges are fixed now: an in-place op may later give an input tensor another grad_fn
        self.next_functions = tuple((_edge(t) if t is not None and t.requires_grad else None, 0) for t in inputs)
        self.backward_fn: Callable[[Tensor], Sequence[Tensor | None]] | None = backward_fn

    def name(self) -> str:
        """The node's PyTorch-style name."""
        return self._name

    def __repr__(self) -> str:
        return f"<{self._name} object>"


class AccumulateGrad:
    """The node of a leaf tensor that requires grad: adds incoming gradients into `.grad`."""

    next_functions: tuple = ()

    def __init__(self, variable: Tensor) -> None:
        self.variable = variable

    def name(self) -> str:
        """'torch::autograd::AccumulateGrad', as PyTorch names it."""
        return "torch::autograd::AccumulateGrad"


def _edge(t: Tensor | None) -> Node | AccumulateGrad | None:
    if t is None:
        return None
    if t.grad_fn is not None:
        return t.grad_fn
    return AccumulateGrad(t)


def _topological(root: Node) -> list[Node]:
    """Nodes reachable from `root` along next_functions, each before the nodes it feeds."""
    order: list[Node] = []
    seen: set[int] = set()
    stack: list[tuple[Node, bool]] = [(root, False)]
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
            if isinstance(nxt, Node) and id(nxt) not in seen:
                stack.append((nxt, False))
    return order[::-1]


def backward(tensor: Tensor, gradient: Tensor | None = None, retain_graph: bool | None = None) -> None:
    """Compute d(tensor)/d(leaf) for every leaf requiring grad and accumulate it into `.grad`.

    Raises:
        RuntimeError: `tensor` does not require grad, a non-scalar without `gradient`, or a graph
            already freed by an earlier backward.
    """
    if not tensor.requires_grad:
        raise RuntimeError("element 0 of tensors does not require grad and does not have a grad_fn")
    if gradient is None:
        if tensor.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        gradient = tensor.detach().new_ones(tensor.shape)
    elif tuple(gradient.shape) != tuple(tensor.shape):
        raise RuntimeError(f"Mismatch in shape: grad_output[0] has a shape of {gradient.shape} and output[0] has a "
                           f"shape of {tensor.shape}.")
    if tensor.grad_fn is None:  # a leaf
        _accumulate(tensor, gradient)
        return
    grads: dict[int, Tensor] = {id(tensor.grad_fn): gradient}
    with no_grad():
        for node in _topological(tensor.grad_fn):
            g = grads.pop(id(node), None)
            if g is None:
                continue
            if node.backward_fn is None:
                raise RuntimeError("Trying to backward through the graph a second time (or directly access saved "
                                   "tensors after they have already been freed). Saved intermediate values of the "
                                   "graph are freed when you call .backward() or autograd.grad(). Specify "
                                   "retain_graph=True if you need to backward through the graph a second time or if "
                                   "you need to access saved tensors after calling backward.")
            in_grads = node.backward_fn(g)
            if not retain_graph:
                node.backward_fn = None
            for (nxt, _), ig in zip(node.next_functions, in_grads, strict=True):
                if nxt is None or ig is None:
                    continue
                if isinstance(nxt, AccumulateGrad):
                    _accumulate(nxt.variable, ig)
                else:
                    key = id(nxt)
                    grads[key] = grads[key] + ig if key in grads else ig


def _accumulate(leaf: Tensor, g: Tensor) -> None:
    g = g.detach()
    if g.dtype is not leaf.dtype:
        g = g.to(leaf.dtype)
    leaf.grad = g.clone() if leaf.grad is None else leaf.grad + g


def iter_graph(root: Node) -> Iterator[Node]:
    """Every node reachable from `root`, roots first (for inspection and tests)."""
    yield from _topological(root)
