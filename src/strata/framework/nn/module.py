"""`Module`: the base class of layers and models, as torch.nn.Module. Assigning a Parameter, a Module
or a registered buffer to an attribute registers it; the registries drive `parameters()`,
`named_modules()`, `state_dict()` / `load_state_dict()`, `to()` / `cuda()` / `half()`, `train()` /
`eval()`, `zero_grad()` and the printed tree.

Moving or casting a module (`to`, `cuda`, `float`, ...) replaces each parameter's data in place, so the
Parameter objects an optimizer holds (and weights tied between modules) stay the same objects.

Example:
    >>> import strata
    >>> from strata.framework.nn import Module, Parameter
    >>> class Scale(Module):
    ...     def __init__(self) -> None:
    ...         super().__init__()
    ...         self.w = Parameter(strata.ones(2))
    ...         self.register_buffer("steps", strata.zeros((), dtype=strata.int64))
    ...     def forward(self, x):
    ...         return x * self.w
    >>> m = Scale()
    >>> list(m.state_dict()), m(strata.tensor([1.0, 2.0])).tolist()
    (['w', 'steps'], [1.0, 2.0])
"""

from __future__ import annotations

import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterator, Mapping
from typing import Any, NamedTuple

from strata.framework import autograd
from strata.framework import dtypes as dt
from strata.framework.device import canonical
from strata.framework.nn.parameter import Buffer, Parameter
from strata.framework.tensor import Tensor

_TORCH_TYPE = {"float32": "Float", "float64": "Double", "float16": "Half", "bfloat16": "BFloat16", "int64": "Long",
               "int32": "Int", "int16": "Short", "int8": "Char", "uint8": "Byte", "bool": "Bool"}


def typename(obj: Any) -> str:
    """PyTorch's `torch.typename`: 'torch.FloatTensor' for tensors, else the qualified type name."""
    if isinstance(obj, Tensor):
        cuda = "cuda." if obj.device.type == "cuda" else ""
        return f"torch.{cuda}{_TORCH_TYPE[obj.dtype.name]}Tensor"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


class _IncompatibleKeys(NamedTuple):
    missing_keys: list[str]
    unexpected_keys: list[str]

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return f"_IncompatibleKeys(missing_keys={self.missing_keys}, unexpected_keys={self.unexpected_keys})"

    def __str__(self) -> str:
        return self.__repr__()


_hook_ids = itertools.count()


class RemovableHandle:
    """Returned by the `register_*_hook` methods: `remove()` unregisters the hook (also on leaving a
    `with` block)."""

    def __init__(self, *registries: dict[int, Any]) -> None:
        self.id = next(_hook_ids)
        self._registries = registries

    def remove(self) -> None:
        """Unregister the hook (idempotent)."""
        for r in self._registries:
            r.pop(self.id, None)

    def __enter__(self) -> RemovableHandle:
        return self

    def __exit__(self, *exc: object) -> None:
        self.remove()


def _quoted(keys: list[str]) -> str:
    return ", ".join(f'"{k}"' for k in keys)


def _indent(text: str, spaces: int) -> str:
    """Indent every line of `text` after the first (children print nested under their parent)."""
    first, *rest = text.split("\n")
    return "\n".join([first] + [" " * spaces + line for line in rest])


class Module:
    """Base class of all layers and models (torch.nn.Module).

    Subclasses call `super().__init__()` first, assign parameters, buffers and submodules as
    attributes, and define `forward`; calling the module runs the forward pre-hooks, `forward`, then
    the forward hooks.

    Attributes:
        training: True in training mode (`train()`), False after `eval()`.
    """

    training: bool
    _parameters: dict[str, Parameter | None]
    _buffers: dict[str, Tensor | None]
    _modules: dict[str, Module | None]

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if args or kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword argument "
                            f"'{next(iter(kwargs))}'" if kwargs else
                            f"{type(self).__name__}.__init__() takes 1 positional argument but {len(args) + 1} "
                            f"were given")
        d = self.__dict__
        d["training"] = True
        d["_parameters"] = OrderedDict()
        d["_buffers"] = OrderedDict()
        d["_non_persistent_buffers_set"] = set()
        d["_modules"] = OrderedDict()
        d["_forward_pre_hooks"] = OrderedDict()
        d["_forward_pre_hooks_with_kwargs"] = set()
        d["_forward_hooks"] = OrderedDict()
        d["_forward_hooks_with_kwargs"] = set()

    forward: Callable[..., Any]

    def _missing_forward(self, *args: Any, **kwargs: Any) -> Any:
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required "forward" function')

    forward = _missing_forward

    # -- registration
    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is state but not a parameter (running statistics, masks); it moves with
        `to()` and, when `persistent`, goes into `state_dict()`.

        Raises:
            AttributeError: before `Module.__init__()`.
            TypeError, KeyError: a bad name, or a value that is neither a Tensor nor None.
        """
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(torch Tensor or None required)")
        if isinstance(tensor, Buffer):
            persistent = tensor.persistent
            tensor = Tensor(tensor._storage, tensor.shape, tensor.stride(), tensor.storage_offset(), tensor.dtype,
                            tensor.requires_grad)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a parameter (or reserve the name with None).

        Raises:
            AttributeError: before `Module.__init__()`.
            TypeError: `param` is not a Parameter (or None). ValueError: it is not a graph leaf.
        """
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(torch.nn.Parameter or None required)")
        if param is not None and param.grad_fn is not None:
            raise ValueError(f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be created "
                             f"explicitly. To express '{name}' as a function of another Tensor, compute the value in "
                             "the forward() method.")
        self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module (or reserve the name with None).

        Raises:
            TypeError: `module` is not a Module. KeyError: a bad or taken name.
        """
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"{typename(module)} is not a Module subclass")
        self._check_name("module", name, self._modules)
        self._modules[name] = module

    register_module = add_module

    def _check_name(self, kind: str, name: Any, registry: dict[str, Any]) -> None:
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."' + (f", got: {name}" if kind == "module" else ""))
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in registry:
            raise KeyError(f"attribute '{name}' already exists")

    # -- attribute protocol
    def __getattr__(self, name: str) -> Any:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                return d[registry][name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value: Any) -> None:
        d = self.__dict__
        params, buffers, modules = d.get("_parameters"), d.get("_buffers"), d.get("_modules")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            self._forget(name, keep="_parameters")
            self.register_parameter(name, value)
        elif params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(torch.nn.Parameter or None expected)")
            params[name] = None
        elif isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            self._forget(name, keep="_modules")
            modules[name] = value
        elif modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(torch.nn.Module or None expected)")
            modules[name] = None
        elif isinstance(value, Buffer) or (buffers is not None and name in buffers):
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(torch.nn.Buffer, torch.Tensor or None expected)")
            if buffers is None:
                raise AttributeError("cannot assign buffer before Module.__init__() call")
            persistent = name not in self._non_persistent_buffers_set
            self._forget(name, keep="_buffers")
            self.register_buffer(name, value, persistent)
        else:
            object.__setattr__(self, name, value)

    def _forget(self, name: str, keep: str) -> None:
        """Drop `name` from the instance dict and from the registries other than `keep`."""
        d = self.__dict__
        d.pop(name, None)
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry != keep:
                d[registry].pop(name, None)
        if keep != "_buffers":
            d["_non_persistent_buffers_set"].discard(name)

    def __delattr__(self, name: str) -> None:
        d = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            if registry in d and name in d[registry]:
                del d[registry][name]
                d["_non_persistent_buffers_set"].discard(name)
                return
        object.__delattr__(self, name)

    def __dir__(self) -> list[str]:
        names = set(dir(type(self))) | set(self.__dict__)
        names |= set(self._parameters) | set(self._modules) | set(self._buffers)
        return sorted(n for n in names if not n[:1].isdigit())

    # -- calling
    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        for hid, hook in list(self._forward_pre_hooks.items()):
            if hid in self._forward_pre_hooks_with_kwargs:
                res = hook(self, args, kwargs)
                if res is not None:
                    if not (isinstance(res, tuple) and len(res) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of (new_args, new_kwargs), "
                                           f"but got {res}.")
                    args, kwargs = res
            else:
                res = hook(self, args)
                if res is not None:
                    args = res if isinstance(res, tuple) else (res,)
        out = self.forward(*args, **kwargs)
        for hid, hook in list(self._forward_hooks.items()):
            if hid in self._forward_hooks_with_kwargs:
                res = hook(self, args, kwargs, out)
            else:
                res = hook(self, args, out)
            if res is not None:
                out = res
        return out

    def register_forward_pre_hook(self, hook: Callable[..., Any], *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Run `hook(module, args)` before each forward; a non-None result replaces the args
        (`hook(module, args, kwargs) -> (args, kwargs)` with `with_kwargs=True`)."""
        handle = RemovableHandle(self._forward_pre_hooks)
        self._forward_pre_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_pre_hooks.move_to_end(handle.id, last=False)
        return handle

    def register_forward_hook(self, hook: Callable[..., Any], *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Run `hook(module, args, output)` after each forward; a non-None result replaces the output."""
        handle = RemovableHandle(self._forward_hooks)
        self._forward_hooks[handle.id] = hook
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if prepend:
            self._forward_hooks.move_to_end(handle.id, last=False)
        return handle

    # -- traversal
    def named_modules(self, memo: set[Any] | None = None, prefix: str = "",
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Module]]:
        """(name, module) for this module and every descendant, depth first; a module reached twice is
        given once unless `remove_duplicate=False`."""
        if memo is None:
            memo = set()
        if id(self) in memo:
            return
        if remove_duplicate:
            memo.add(id(self))
        yield prefix, self
        for name, child in self._modules.items():
            if child is not None:
                yield from child.named_modules(memo, f"{prefix}.{name}" if prefix else name, remove_duplicate)

    def modules(self) -> Iterator[Module]:
        """This module and every descendant."""
        for _, m in self.named_modules():
            yield m

    def named_children(self) -> Iterator[tuple[str, Module]]:
        """(name, module) for the direct children (each once)."""
        seen: set[int] = set()
        for name, child in self._modules.items():
            if child is not None and id(child) not in seen:
                seen.add(id(child))
                yield name, child

    def children(self) -> Iterator[Module]:
        """The direct children."""
        for _, m in self.named_children():
            yield m

    def _named_members(self, registry: str, prefix: str, recurse: bool,
                       remove_duplicate: bool) -> Iterator[tuple[str, Any]]:
        seen: set[int] = set()
        owners = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) if recurse else [(prefix, self)]
        for owner_prefix, owner in owners:
            for name, value in owner.__dict__[registry].items():
                if value is None or id(value) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(value))
                yield (f"{owner_prefix}.{name}" if owner_prefix else name), value

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True) -> Iterator[tuple[str, Parameter]]:
        """(dotted name, parameter) pairs; a parameter shared by several modules (tied weights) is given
        once, under its first name, unless `remove_duplicate=False`."""
        yield from self._named_members("_parameters", prefix, recurse, remove_duplicate)

    def parameters(self, recurse: bool = True) -> Iterator[Parameter]:
        """The parameters (each once), for an optimizer."""
        for _, p in self.named_parameters(recurse=recurse):
            yield p

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True) -> Iterator[tuple[str, Tensor]]:
        """(dotted name, buffer) pairs, persistent or not."""
        yield from self._named_members("_buffers", prefix, recurse, remove_duplicate)

    def buffers(self, recurse: bool = True) -> Iterator[Tensor]:
        """The buffers."""
        for _, b in self.named_buffers(recurse=recurse):
            yield b

    def get_submodule(self, target: str) -> Module:
        """The descendant at dotted path `target` ("" is self).

        Raises:
            AttributeError: no such submodule.
        """
        mod: Module = self
        if target == "":
            return mod
        for item in target.split("."):
            if not hasattr(mod, item):
                raise AttributeError(f"{mod._get_name()} has no attribute `{item}`")
            nxt = getattr(mod, item)
            if not isinstance(nxt, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
            mod = nxt
        return mod

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at dotted path `target`."""
        mod_path, _, name = target.rpartition(".")
        mod = self.get_submodule(mod_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{mod._get_name()} has no attribute `{name}`")
        p = getattr(mod, name)
        if not isinstance(p, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return p

    def apply(self, fn: Callable[[Module], Any]) -> Module:
        """Call fn on every child (recursively), then on self; returns self (e.g. for weight init)."""
        for child in self.children():
            child.apply(fn)
        fn(self)
        return self

    # -- modes and gradients
    def train(self, mode: bool = True) -> Module:
        """Set training mode on self and every descendant; returns self.

        Raises:
            ValueError: `mode` is not a bool.
        """
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for child in self.children():
            child.train(mode)
        return self

    def eval(self) -> Module:
        """`train(False)`: Dropout passes input through, BatchNorm uses its running statistics."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad on every parameter; returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the `.grad` of every parameter: to None (default), or to zeros in place."""
        for p in self.parameters():
            if p.grad is None:
                continue
            if set_to_none:
                p.grad = None
            else:
                with autograd.no_grad():
                    p.grad.grad_fn = None  # detach in place: a grad built with create_graph leaves its graph
                    p.grad.requires_grad_(False)
                    p.grad.zero_()

    # -- state dict
    def _save_to_state_dict(self, destination: dict[str, Any], prefix: str, keep_vars: bool) -> None:
        for name, p in self._parameters.items():
            if p is not None:
                destination[prefix + name] = p if keep_vars else p.detach()
        for name, b in self._buffers.items():
            if b is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = b if keep_vars else b.detach()

    def state_dict(self, *, destination: Any = None, prefix: str = "", keep_vars: bool = False) -> Any:
        """An OrderedDict from dotted names to the parameters and persistent buffers (detached unless
        `keep_vars`); tied weights appear under every name that holds them."""
        if destination is None:
            destination = OrderedDict()
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, child in self._modules.items():
            if child is not None:
                child.state_dict(destination=destination, prefix=f"{prefix}{name}.", keep_vars=keep_vars)
        return destination

    def _load_from_state_dict(self, state_dict: Mapping[str, Any], prefix: str, local_metadata: dict[str, Any],
                              strict: bool, missing_keys: list[str], unexpected_keys: list[str],
                              error_msgs: list[str], assign: bool = False) -> None:
        """Load this module's own entries (no children) from `state_dict`, collecting problems."""
        persistent = {k: v for k, v in self._buffers.items() if k not in self._non_persistent_buffers_set}
        local = {k: v for k, v in itertools.chain(self._parameters.items(), persistent.items()) if v is not None}
        for name, current in local.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            value = state_dict[key]
            if not isinstance(value, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected torch.Tensor or Tensor-like '
                                  f"object from checkpoint but received {type(value)}")
                continue
            if tuple(value.shape) != tuple(current.shape):
                error_msgs.append(f"size mismatch for {key}: copying a param with shape torch.Size("
                                  f"{list(value.shape)}) from checkpoint, the shape in current model is "
                                  f"torch.Size({list(current.shape)}).")
                continue
            try:
                with autograd.no_grad():
                    if assign:
                        if isinstance(current, Parameter):
                            setattr(self, name, Parameter(value.detach(), current.requires_grad))
                        else:
                            setattr(self, name, value)
                    else:
                        current.copy_(value)
            except Exception as e:  # noqa: BLE001 - reported the way PyTorch reports it
                error_msgs.append(f'While copying the parameter named "{key}", whose dimensions in the model are '
                                  f"torch.Size({list(current.shape)}) and whose dimensions in the checkpoint are "
                                  f"torch.Size({list(value.shape)}), an exception occurred : {e.args}.")
        if strict:
            for key in state_dict:
                if key.startswith(prefix):
                    head = key[len(prefix):].split(".", 1)[0]
                    if head not in self._modules and head not in local:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict: Mapping[str, Any], strict: bool = True,
                        assign: bool = False) -> _IncompatibleKeys:
        """Copy parameters and buffers from `state_dict` into this module (in place, converting dtype and
        device; with `assign=True` the module takes the given tensors instead).

        Returns:
            A named tuple (missing_keys, unexpected_keys).

        Raises:
            TypeError: `state_dict` is not a mapping.
            RuntimeError: shape mismatches, or (with strict=True) missing or unexpected keys; the message
                lists them all, as PyTorch's does.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing: list[str] = []
        unexpected: list[str] = []
        errors: list[str] = []
        state = OrderedDict(state_dict)

        def load(module: Module, prefix: str) -> None:
            module._load_from_state_dict(state, prefix, {}, True, missing, unexpected, errors, assign)
            for name, child in module._modules.items():
                if child is not None:
                    load(child, f"{prefix}{name}.")

        load(self, "")
        if strict:
            if unexpected:
                errors.insert(0, f"Unexpected key(s) in state_dict: {_quoted(unexpected)}. ")
            if missing:
                errors.insert(0, f"Missing key(s) in state_dict: {_quoted(missing)}. ")
        if errors:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(type(self).__name__,
                                                                                   "\n\t".join(errors)))
        return _IncompatibleKeys(missing, unexpected)

    # -- device and dtype
    def _apply(self, fn: Callable[[Tensor], Tensor]) -> Module:
        """Replace every parameter's data (and grad's) with fn of it, keeping the Parameter objects, and
        every buffer with fn of it; children first."""
        for child in self.children():
            child._apply(fn)
        with autograd.no_grad():
            for p in self._parameters.values():
                if p is None:
                    continue
                new = fn(p)
                if new is not p:
                    p.data = new
                if p.grad is not None:
                    g = fn(p.grad)
                    if g is not p.grad:
                        p.grad.data = g
            for name, b in self._buffers.items():
                if b is not None:
                    self._buffers[name] = fn(b)
        return self

    def to(self, *args: Any, **kwargs: Any) -> Module:
        """Move and/or cast parameters and buffers in place: `to(device)`, `to(dtype)`,
        `to(device, dtype)`, `to(tensor)`, `to(device=, dtype=, non_blocking=)`. A dtype applies to
        floating-point tensors only; returns self.

        Raises:
            TypeError: a dtype that is not floating point.
        """
        device: Any = kwargs.pop("device", None)
        dtype: Any = kwargs.pop("dtype", None)
        kwargs.pop("non_blocking", None)
        kwargs.pop("memory_format", None)
        if kwargs:
            raise TypeError(f"to() received an invalid combination of arguments: {sorted(kwargs)}")
        for a in args:
            if isinstance(a, Tensor):
                device, dtype = a.device, a.dtype
            elif isinstance(a, dt.dtype):
                dtype = a
            elif isinstance(a, bool):
                continue  # non_blocking given positionally
            else:
                device = a
        if dtype is not None:
            dtype = dt.as_dtype(dtype)
            if not dtype.is_floating_point:
                raise TypeError(f"nn.Module.to only accepts floating point or complex dtypes, but got desired "
                                f"dtype=torch.{dtype.name}")
        target = canonical(device) if device is not None else None

        def convert(t: Tensor) -> Tensor:
            return t.to(device=target, dtype=dtype if t.is_floating_point() else None)

        return self._apply(convert)

    def cuda(self, device: Any = None) -> Module:
        """Move everything to a CUDA device (the current one if None); returns self."""
        return self._apply(lambda t: t.cuda(device))

    def cpu(self) -> Module:
        """Move everything to host memory; returns self."""
        return self._apply(lambda t: t.cpu())

    def _cast(self, dtype: dt.dtype) -> Module:
        return self._apply(lambda t: t.to(dtype) if t.is_floating_point() else t)

    def float(self) -> Module:
        """Cast floating-point parameters and buffers to float32."""
        return self._cast(dt.float32)

    def double(self) -> Module:
        """Cast floating-point parameters and buffers to float64."""
        return self._cast(dt.float64)

    def half(self) -> Module:
        """Cast floating-point parameters and buffers to float16."""
        return self._cast(dt.float16)

    def bfloat16(self) -> Module:
        """Cast floating-point parameters and buffers to bfloat16."""
        return self._cast(dt.bfloat16)

    # -- printing
    def _get_name(self) -> str:
        return type(self).__name__

    def extra_repr(self) -> str:
        """The text inside this module's parentheses when printed (its configuration); override it."""
        return ""

    def __repr__(self) -> str:
        own = self.extra_repr().split("\n") if self.extra_repr() else []
        kids = [f"({name}): {_indent(repr(m), 2)}" for name, m in self._modules.items()]
        if not own and not kids:
            return f"{self._get_name()}()"
        if len(own) == 1 and not kids:
            return f"{self._get_name()}({own[0]})"
        body = "\n  ".join(own + kids)
        return f"{self._get_name()}(\n  {body}\n)"
