"""`Optimizer`: the base of strata.optim, as torch.optim.Optimizer: parameter groups (dicts of params and
options, defaults filled in), per-parameter `state`, `zero_grad`, `add_param_group`, and `state_dict` /
`load_state_dict` in PyTorch's layout ({'state': {index: {...}}, 'param_groups': [{..., 'params': [index]}]}).

Subclasses implement `step`; their updates run in place on the parameters under no_grad: fused kernels on
"cuda" (kernels/optim.py), NumPy on "cpu". Step counts live on the host (0-dim float32 "cpu" tensors, as
PyTorch keeps them with capturable=False), so a step never waits for the GPU.

Example:
    >>> import strata
    >>> w = strata.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = strata.optim.SGD([{"params": [w], "lr": 0.5}], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step(); opt.zero_grad()
    >>> w.tolist(), w.grad, opt.param_groups[0]["lr"]
    ([0.0, 0.0], None, 0.5)
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from strata.framework import autograd, ops, profiling
from strata.framework import dtypes as dt
from strata.framework.device import CPU
from strata.framework.tensor import Tensor


class _RequiredParameter:
    """Marks a hyperparameter without a default (a group must give it)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required: Any = _RequiredParameter()

ParamsT = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]


class Optimizer:
    """Base class of optimizers (PyTorch's torch.optim.Optimizer).

    Args:
        params: an iterable of tensors, of (name, tensor) pairs, or of dicts each with "params" and
            per-group options overriding `defaults`.
        defaults: the default value of every option.

    Raises:
        TypeError: params is a single tensor, a set, or holds a non-tensor.
        ValueError: an empty parameter list, a non-leaf tensor, a parameter in two groups, or a group
            without a required option.
    """

    def __init_subclass__(cls, **kwargs: Any) -> None:
        """Each optimizer's step and zero_grad report L5 spans named as PyTorch's profiler names them."""
        super().__init_subclass__(**kwargs)
        profiling.instrument(cls, {"step": f"Optimizer.step#{cls.__name__}.step",
                                   "zero_grad": f"Optimizer.zero_grad#{cls.__name__}.zero_grad"})

    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None:
        self.defaults = defaults
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of Tensors or dicts, "
                            f"but got {_typename(params)}")
        self.state: defaultdict[Tensor, Any] = defaultdict(dict)
        self.param_groups: list[dict[str, Any]] = []
        groups: list[Any] = list(params)
        if len(groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    def __repr__(self) -> str:
        text = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):  # (a blank line between groups, as PyTorch prints)
            text += f"\nParameter Group {i}\n" + "".join(f"    {k}: {group[k]}\n" for k in sorted(group)
                                                           if k != "params")
        return text + ")"

    def add_param_group(self, param_group: dict[str, Any]) -> None:
        """Add a group of parameters (a dict with "params" and options; missing options take the defaults).

        Raises:
            TypeError, ValueError: as the constructor.
        """
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            plist: list[Any] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, but the ordering of "
                            "tensors in sets will change between runs. Please use a list instead.")
        else:
            plist = list(params)
        names = [p[0] for p in plist if isinstance(p, tuple)]
        tensors = [p[1] if isinstance(p, tuple) else p for p in plist]
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param names are missing")
            param_group["param_names"] = names
        for p in tensors:
            if not isinstance(p, Tensor):
                raise TypeError(f"optimizer can only optimize Tensors, but one of the params is {_typename(p)}")
            if not p.is_leaf:
                raise ValueError("can't optimize a non-leaf Tensor")
        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError(f"parameter group didn't specify a value of required optimization parameter {name}")
            param_group.setdefault(name, default)
        seen: set[int] = set()
        for group in self.param_groups:
            seen.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in seen for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the gradients of all parameters: to None (default), or to zeros in place."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is None:
                    continue
                if set_to_none:
                    p.grad = None
                else:
                    if p.grad.grad_fn is not None:
                        p.grad = p.grad.detach()
                    else:
                        p.grad.requires_grad_(False)
                    with autograd.no_grad():
                        p.grad.zero_()

    def _params_with_grad(self) -> Iterator[tuple[dict[str, Any], Tensor]]:
        """(group, parameter) for each parameter that has a gradient, group by group (what a step updates)."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    yield group, p

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Update the parameters once; `closure` (re-evaluating the loss) runs with grad enabled first and
        its result is returned."""
        raise NotImplementedError

    def _closure(self, closure: Callable[[], Any] | None) -> Any:
        if closure is None:
            return None
        with autograd.enable_grad():
            return closure()

    # -- checkpoints
    def state_dict(self) -> dict[str, Any]:
        """{'state': {param index: {name: value}}, 'param_groups': [{options..., 'params': [indices]}]}:
        parameters numbered in order over the groups; state tensors are the live ones (not copies)."""
        index: dict[int, int] = {}
        groups = []
        for group in self.param_groups:
            packed = {k: v for k, v in group.items() if k != "params"}
            for p in group["params"]:
                index.setdefault(id(p), len(index))
            packed["params"] = [index[id(p)] for p in group["params"]]
            groups.append(packed)
        state = {index[id(p)]: s for p, s in self.state.items() if id(p) in index}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict: dict[str, Any]) -> None:
        """Load a `state_dict()` (of an optimizer over the same parameter layout): options of every group and
        the per-parameter state, copied and converted to each parameter's device (and dtype, for floating
        state); step counts stay on the host.

        Raises:
            ValueError: the number of groups or of parameters in a group differs.
        """
        saved = state_dict["param_groups"]
        if len(saved) != len(self.param_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(self.param_groups, saved, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match the size of "
                             "optimizer's group")
        id_map = {i: p for s, g in zip(saved, self.param_groups, strict=True)
                  for i, p in zip(s["params"], g["params"], strict=True)}
        self.state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                p = id_map[k]
                self.state[p] = {name: _cast_state(p, name, x) for name, x in v.items()}
        new_groups = []
        for s, g in zip(saved, self.param_groups, strict=True):
            ng = {k: _copy_value(v) for k, v in s.items() if k not in ("params", "param_names")}
            ng["params"] = g["params"]
            if "param_names" in g:
                ng["param_names"] = g["param_names"]
            new_groups.append(ng)
        self.param_groups = new_groups

    def _step_tensor(self, state: dict[str, Any]) -> float:
        """Advance state['step'] (a host float32 tensor) by one and return the new count."""
        st = state["step"]
        if isinstance(st, Tensor):
            h = st._host()
            h[...] = h + 1
            return float(h)
        state["step"] = st + 1
        return float(state["step"])


def new_step() -> Tensor:
    """A fresh step count: tensor(0.) on the host, as PyTorch's state['step'] with capturable=False."""
    return ops.full((), 0.0, dt.float32, CPU)


def _cast_state(p: Tensor, name: str, value: Any) -> Any:
    if isinstance(value, Tensor):
        if name == "step":
            return value.detach().to(CPU, copy=True)
        target = p.dtype if value.dtype.is_floating_point and p.dtype.is_floating_point else value.dtype
        return value.detach().to(p.device, target, copy=True)
    if isinstance(value, dict):
        return {k: _cast_state(p, k, v) for k, v in value.items()}
    return value


def _copy_value(v: Any) -> Any:
    if isinstance(v, list):
        return [_copy_value(x) for x in v]
    if isinstance(v, dict):
        return {k: _copy_value(x) for k, x in v.items()}
    return v


def _typename(x: Any) -> str:
    if isinstance(x, Tensor):
        return {"float32": "torch.FloatTensor", "float64": "torch.DoubleTensor", "float16": "torch.HalfTensor",
                "bfloat16": "torch.BFloat16Tensor", "int64": "torch.LongTensor", "int32": "torch.IntTensor",
                "int16": "torch.ShortTensor", "int8": "torch.CharTensor", "uint8": "torch.ByteTensor",
                "bool": "torch.BoolTensor"}[x.dtype.name].replace("torch.", "torch.cuda." if x.is_cuda else "torch.")
    t = type(x)
    return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"


def check_grad(p: Tensor) -> Tensor:
    """p.grad (as p's dtype, on p's device), for an update kernel."""
    g = p.grad
    assert g is not None
    if g.device != p.device:
        raise RuntimeError(f"Expected all tensors to be on the same device, but found at least two devices, "
                           f"{p.device} and {g.device}!")
    if g.shape != p.shape:
        raise RuntimeError(f"the gradient of a parameter has shape {list(g.shape)}, expected {list(p.shape)}")
    return g
