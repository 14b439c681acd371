"""Container modules, as torch.nn's: `Sequential` (children called in order), `ModuleList` (an
indexable list of children), `ModuleDict` (a dict of children), and `ParameterList` /
`ParameterDict` (the same for parameters). Children are registered under their index ("0", "1", ...)
or key, so their parameters appear as "0.weight", "blocks.1.bias".

Example:
    >>> from strata.framework import nn
    >>> net = nn.Sequential(nn.Linear(4, 3), nn.ReLU())
    >>> len(net), type(net[0]).__name__, [k for k, _ in net.named_parameters()]
    (2, 'Linear', ['0.weight', '0.bias'])
"""

from __future__ import annotations

import operator
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from strata.framework.nn.module import Module, _indent, typename
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor


def _abs_index(idx: Any, size: int) -> int:
    i = operator.index(idx)
    if not -size <= i < size:
        raise IndexError(f"index {i} is out of range")
    return i % size


def _renumber(m: Module) -> None:
    """Give the children of a list-like container the keys "0".."n-1" again after a deletion."""
    m.__dict__["_modules"] = OrderedDict((str(i), v) for i, v in enumerate(m._modules.values()))


class _NumberedModules(Module):
    """What Sequential and ModuleList share: submodules in order, deleted by index or slice (the rest
    renumbered), counted and iterated."""

    def __delitem__(self, idx: Any) -> None:
        keys = list(self._modules)
        for key in (keys[idx] if isinstance(idx, slice) else [keys[_abs_index(idx, len(self))]]):
            delattr(self, key)
        _renumber(self)

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[Module]:
        return iter(self._modules.values())  # type: ignore[arg-type]


class Sequential(_NumberedModules):
    """Children called in order, each on the output of the previous one.

    Args:
        *args: modules, or a single OrderedDict of name -> module.
    """

    def __init__(self, *args: Any) -> None:
        super().__init__()
        if len(args) == 1 and isinstance(args[0], OrderedDict):
            for name, m in args[0].items():
                self.add_module(name, m)
        else:
            for i, m in enumerate(args):
                self.add_module(str(i), m)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)(OrderedDict(list(self._modules.items())[idx]))
        return list(self._modules.values())[_abs_index(idx, len(self))]

    def __setitem__(self, idx: int, module: Module) -> None:
        key = list(self._modules)[_abs_index(idx, len(self))]
        setattr(self, key, module)

    def __add__(self, other: Sequential) -> Sequential:
        if not isinstance(other, Sequential):
            raise ValueError(f"add operator supports only objects of Sequential class, but {type(other)} is given.")
        return Sequential(*self, *other)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, module: Module) -> Sequential:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def insert(self, index: int, module: Module) -> Sequential:
        """Insert a module before position `index`; returns self."""
        if not isinstance(module, Module):
            raise AssertionError(f"module should be of type: {Module}")
        n = len(self)
        if not -n <= index <= n:
            raise IndexError(f"Index out of range: {index}")
        items = list(self._modules.values())
        items.insert(index + n if index < 0 else index, module)
        self.__dict__["_modules"] = OrderedDict((str(i), m) for i, m in enumerate(items))
        return self

    def extend(self, sequential: Iterable[Module]) -> Sequential:
        """Append every module of an iterable; returns self."""
        for m in sequential:
            self.append(m)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module(s) at `key`."""
        v = self[key]
        del self[key]
        return v

    def forward(self, input: Any) -> Any:  # noqa: A002 - PyTorch's argument name
        """Call each child on the output of the previous one."""
        for m in self:
            input = m(input)
        return input


class ModuleList(_NumberedModules):
    """A list of modules, registered as children "0", "1", ...; indexable, iterable, appendable. It has
    no forward: the owner decides how to call them.

    Args:
        modules: an iterable of modules to start with.
    """

    def __init__(self, modules: Iterable[Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.extend(modules)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)([m for m in self._modules.values() if m is not None][idx])
        return self._modules[str(_abs_index(idx, len(self)))]

    def __setitem__(self, idx: int, module: Module) -> None:
        setattr(self, str(_abs_index(idx, len(self))), module)

    def __iadd__(self, modules: Iterable[Module]) -> ModuleList:
        return self.extend(modules)

    def __add__(self, other: Iterable[Module]) -> ModuleList:
        return ModuleList([*self, *other])

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def insert(self, index: int, module: Module) -> None:
        """Insert a module before position `index`."""
        items = list(self._modules.values())
        items.insert(index, module)
        self.__dict__["_modules"] = OrderedDict()
        for i, m in enumerate(items):
            self.add_module(str(i), m)

    def append(self, module: Module) -> ModuleList:
        """Add a module at the end; returns self."""
        self.add_module(str(len(self)), module)
        return self

    def pop(self, key: int | slice) -> Any:
        """Remove and return the module(s) at `key`."""
        v = self[key]
        del self[key]
        return v

    def extend(self, modules: Iterable[Module]) -> ModuleList:
        """Append every module of an iterable; returns self.

        Raises:
            TypeError: `modules` is not iterable.
        """
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleList.extend should be called with an iterable, but got "
                            + type(modules).__name__)
        for m in modules:
            self.append(m)
        return self

    def __repr__(self) -> str:
        # runs of identical children print once, as "(0-2): 3 x Linear(...)"
        reprs = [repr(m) for m in self]
        if not reprs:
            return f"{self._get_name()}()"
        lines: list[str] = []
        start = 0
        for i in range(1, len(reprs) + 1):
            if i < len(reprs) and reprs[i] == reprs[start]:
                continue
            label = f"({start}): " if i - 1 == start else f"({start}-{i - 1}): {i - start} x "
            lines.append(_indent(label + reprs[start], 2))
            start = i
        return f"{self._get_name()}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of modules (insertion-ordered), registered as children under their keys.

    Args:
        modules: a mapping, or an iterable of (key, module) pairs.
    """

    def __init__(self, modules: Mapping[str, Module] | None = None) -> None:
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __getitem__(self, key: str) -> Module:
        return self._modules[key]  # type: ignore[return-value]

    def __setitem__(self, key: str, module: Module) -> None:
        self.add_module(key, module)

    def __delitem__(self, key: str) -> None:
        del self._modules[key]

    def __len__(self) -> int:
        return len(self._modules)

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def clear(self) -> None:
        """Remove every module."""
        self._modules.clear()

    def pop(self, key: str) -> Module:
        """Remove and return the module at `key`."""
        v = self[key]
        del self[key]
        return v

    def keys(self) -> Any:
        """The keys."""
        return self._modules.keys()

    def items(self) -> Any:
        """(key, module) pairs."""
        return self._modules.items()

    def values(self) -> Any:
        """The modules."""
        return self._modules.values()

    def update(self, modules: Any) -> None:
        """Add (or replace) modules from a mapping or an iterable of (key, module) pairs.

        Raises:
            TypeError: `modules` is not iterable, or an element is not a pair.
        """
        if not isinstance(modules, Iterable):
            raise TypeError("ModuleDict.update should be called with an iterable of key/value pairs, but got "
                            + type(modules).__name__)
        if isinstance(modules, Mapping | ModuleDict):
            for k, m in modules.items():
                self[k] = m
            return
        for j, pair in enumerate(modules):
            if not isinstance(pair, Iterable):
                raise TypeError(f"ModuleDict update sequence element #{j} should be Iterable; is "
                                + type(pair).__name__)
            kv = list(pair)
            if len(kv) != 2:
                raise ValueError(f"ModuleDict update sequence element #{j} has length {len(kv)}; 2 is required")
            self[kv[0]] = kv[1]


def _param_line(key: str, p: Any, type_name: str) -> str:
    """One line of ParameterList / ParameterDict's printed form."""
    if not isinstance(p, Tensor):
        return f"  ({key}): Object of type: {type(p).__name__}"
    kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
    size = "x".join(str(s) for s in p.shape)
    dev = f" (GPU {p.get_device()})" if p.device.type == "cuda" else ""
    return f"  ({key}): {kind} containing: [{type_name} of size {size}{dev}]"


def _as_parameter(value: Any) -> Any:
    """Tensors stored in a ParameterList / ParameterDict become Parameters (other objects stay)."""
    if isinstance(value, Tensor) and not isinstance(value, Parameter):
        return Parameter(value)
    return value


class ParameterList(Module):
    """A list of parameters, registered as "0", "1", ...; plain tensors are wrapped in Parameter.

    Args:
        values: an iterable of tensors to start with.
    """

    def __init__(self, values: Iterable[Any] | None = None) -> None:
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def __getitem__(self, idx: Any) -> Any:
        if isinstance(idx, slice):
            return type(self)([self[i] for i in range(len(self))[idx]])
        return getattr(self, str(_abs_index(idx, len(self))))

    def __setitem__(self, idx: int, param: Any) -> None:
        setattr(self, str(_abs_index(idx, len(self))), _as_parameter(param))

    def __len__(self) -> int:
        return self._size

    def __iter__(self) -> Iterator[Any]:
        return (self[i] for i in range(len(self)))

    def __iadd__(self, parameters: Iterable[Any]) -> ParameterList:
        return self.extend(parameters)

    def __dir__(self) -> list[str]:
        return [k for k in super().__dir__() if not k.isdigit()]

    def append(self, value: Any) -> ParameterList:
        """Add a parameter at the end; returns self."""
        self._size += 1
        setattr(self, str(self._size - 1), _as_parameter(value))
        return self

    def extend(self, values: Iterable[Any]) -> ParameterList:
        """Append every value of an iterable; returns self.

        Raises:
            TypeError: `values` is not iterable (or is a single tensor).
        """
        if not isinstance(values, Iterable) or isinstance(values, Tensor):
            raise TypeError("ParameterList.extend should be called with an iterable, but got "
                            + type(values).__name__)
        for v in values:
            self.append(v)
        return self

    def extra_repr(self) -> str:
        return "\n".join(_param_line(str(i), p, f"torch.{p.dtype.name}" if isinstance(p, Tensor) else "")
                         for i, p in enumerate(self))

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterList should not be called.")


class ParameterDict(Module):
    """A dict of parameters registered under their (string) keys; plain tensors are wrapped in Parameter.

    Args:
        parameters: a mapping, or an iterable of (key, tensor) pairs.
    """

    def __init__(self, parameters: Any = None) -> None:
        super().__init__()
        self._keys: dict[str, None] = {}
        if parameters is not None:
            self.update(parameters)

    def __getitem__(self, key: str) -> Any:
        return getattr(self, key)

    def __setitem__(self, key: str, value: Any) -> None:
        self._keys[key] = None
        setattr(self, key, _as_parameter(value))

    def __delitem__(self, key: str) -> None:
        del self._keys[key]
        delattr(self, key)

    def __len__(self) -> int:
        return len(self._keys)

    def __iter__(self) -> Iterator[str]:
        return iter(self._keys)

    def __contains__(self, key: object) -> bool:
        return key in self._keys

    def keys(self) -> Any:
        """The keys."""
        return self._keys.keys()

    def items(self) -> Any:
        """(key, parameter) pairs."""
        return ((k, self[k]) for k in self._keys)

    def values(self) -> Any:
        """The parameters."""
        return (self[k] for k in self._keys)

    def get(self, key: str, default: Any = None) -> Any:
        """self[key], or `default` when absent."""
        if key not in self._keys:
            return default
        return self[key]

    def pop(self, key: str) -> Any:
        """Remove and return the parameter at `key`."""
        v = self[key]
        del self[key]
        return v

    def clear(self) -> None:
        """Remove every parameter."""
        for k in list(self._keys):
            del self[k]

    def update(self, parameters: Any) -> None:
        """Add (or replace) parameters from a mapping or an iterable of (key, tensor) pairs.

        Raises:
            TypeError: `parameters` is not iterable.
        """
        if not isinstance(parameters, Iterable):
            raise TypeError("ParametersDict.update should be called with an iterable of key/value pairs, but got "
                            + type(parameters).__name__)
        pairs = parameters.items() if isinstance(parameters, Mapping | ParameterDict) else parameters
        for k, v in pairs:
            self[k] = v

    def extra_repr(self) -> str:
        return "\n".join(_param_line(k, p, typename(p)) for k, p in self.items())

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("ParameterDict should not be called.")
