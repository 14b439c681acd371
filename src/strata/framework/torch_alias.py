"""`import torch` answered by strata: a meta path finder that serves `torch` and its submodules from
strata's framework, so a PyTorch program runs unchanged on the virtual GPUs (`strata run --as-torch
script.py`, or `strata.install_torch_alias()` before the program's imports).

| the program imports | it gets |
|---|---|
| `torch` | a module that forwards to `strata` (tensors, dtypes, creation, math, `no_grad`, ...) |
| `torch.nn`, `torch.nn.functional`, `torch.nn.init`, ... | `strata.framework.nn` and its submodules |
| `torch.optim`, `torch.optim.lr_scheduler` | `strata.framework.optim` and its submodules |
| `torch.autograd` (`.functional`, `.gradcheck`) | `strata.framework.autograd` (`autograd_functional`, `gradcheck`) |
| `torch.cuda` | `strata.framework.cuda_api` (PyTorch's `torch.cuda` names; `strata.cuda` is the L3 API) |
| `torch.cuda.amp` | `strata.framework.cuda_amp` (autocast, GradScaler) |
| `torch.utils.data` (and `.dataloader`, `.dataset`, `.sampler`) | `strata.framework.data` |
| `torch.amp` | `strata.framework.amp_api` (autocast, GradScaler) |
| `torch.accelerator` | `strata.framework.accelerator` |
| `torch.sparse` | `strata.framework.sparse` (2-D COO matrices) |
| `torch.onnx` | `strata.framework.onnx_stub` (importable; export raises) |
| `torch.multiprocessing` | the standard library's `multiprocessing` |
| `torch.serialization` | `strata.framework.serialization` (add_safe_globals, ...) |
| `torch.distributions` (and its `.categorical`, `.normal`, ... modules) | `strata.framework.distributions` |
| `torch.distributed` | `strata.framework.distributed` (process groups, collectives, DDP) |
| `torch.backends.cudnn` / `.cuda` / `.mps`, `torch.version` | small stand-ins (flags, version strings) |
| other `torch.X` | `strata.X`, else `strata.framework.torch_extras` (legacy types, mm, Tensor methods) |

Submodules are resolved by name when first imported, so this file depends on no module's content.
Anything else under `torch.` fails with ModuleNotFoundError naming what the alias covers. The real
PyTorch cannot share a process with the alias: installing refuses when `torch` is already imported,
and once installed the finder answers every `torch` import first.

Example:
    >>> from strata.framework.torch_alias import resolve
    >>> resolve("torch.nn.functional"), resolve("torch.cuda"), resolve("torch._dynamo")
    ('strata.framework.nn.functional', 'strata.framework.cuda_api', None)
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from collections.abc import Sequence
from typing import Any

TORCH_API_VERSION = "2.13.0"

# torch.<key> (and everything under it) -> the strata module that answers it
_MAPPED: dict[str, str] = {
    "torch.nn": "strata.framework.nn",
    "torch.optim": "strata.framework.optim",
    "torch.autograd": "strata.framework.autograd",
    "torch.autograd.functional": "strata.framework.autograd_functional",  # a module in PyTorch's package
    "torch.autograd.gradcheck": "strata.framework.gradcheck",  # the module; torch.autograd.gradcheck is the function
    "torch.autograd.forward_ad": "strata.framework.forward_ad",
    "torch.cuda": "strata.framework.cuda_api",
    "torch.cuda.amp": "strata.framework.cuda_amp",
    "torch.utils.data": "strata.framework.data",
    # PyTorch's torch.utils.data is a package; strata's is one module answering for its submodules too
    "torch.utils.data.dataloader": "strata.framework.data",
    "torch.utils.data.dataset": "strata.framework.data",
    "torch.utils.data.sampler": "strata.framework.data",
    "torch.utils.data.distributed": "strata.framework.data",
    "torch.amp": "strata.framework.amp_api",
    "torch.accelerator": "strata.framework.accelerator",
    "torch.onnx": "strata.framework.onnx_stub",
    "torch.sparse": "strata.framework.sparse",
    "torch.serialization": "strata.framework.serialization",
    "torch.distributions": "strata.framework.distributions",
    "torch.distributions.categorical": "strata.framework.distributions",
    "torch.distributions.normal": "strata.framework.distributions",
    "torch.distributions.bernoulli": "strata.framework.distributions",
    "torch.distributions.uniform": "strata.framework.distributions",
    "torch.distributions.kl": "strata.framework.distributions",
    "torch.multiprocessing": "multiprocessing",  # PyTorch's is a re-export of the standard library's
    "torch.distributed": "strata.framework.distributed",
}
# modules the alias builds itself
_SYNTHETIC = ("torch", "torch.utils", "torch.backends", "torch.backends.cudnn", "torch.backends.cuda",
              "torch.backends.mps", "torch.version")
# attributes of `torch` that are submodules (imported on first access, as `import torch` makes them available)
_LAZY_CHILDREN = {"nn", "optim", "autograd", "cuda", "utils", "amp", "backends", "version", "accelerator", "onnx",
                  "distributed",
                  "sparse", "multiprocessing", "serialization", "distributions"}


def resolve(name: str) -> str | None:
    """The strata module that answers `import name` (None: synthetic, or not covered)."""
    for prefix in sorted(_MAPPED, key=len, reverse=True):
        if name == prefix or name.startswith(prefix + "."):
            return _MAPPED[prefix] + name[len(prefix):]
    return None


def _version() -> str:
    from strata import __version__  # NOTE: the top-level package; imported lazily (it imports this module)

    return f"{TORCH_API_VERSION}+strata.{__version__}"


class _LazyPackage(types.ModuleType):
    """A package module whose listed children import on first attribute access."""

    _children: frozenset[str] = frozenset()

    def __getattr__(self, name: str) -> Any:
        if name in self._children:
            return importlib.import_module(f"{self.__name__}.{name}")
        raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}")


class TorchModule(_LazyPackage):
    """`torch` under the alias: strata's names, plus the submodules and a few torch-only knobs."""

    _children = frozenset(_LAZY_CHILDREN)
    __strata__ = True

    def __getattr__(self, name: str) -> Any:
        if name in self._children:
            return importlib.import_module(f"torch.{name}")
        import strata  # NOTE: the top-level package, imported lazily (it imports this module)
        from strata.framework import torch_extras  # NOTE: imported lazily, as strata above

        if name in torch_extras.OVERRIDES:
            return torch_extras.OVERRIDES[name]
        try:
            return getattr(strata, name)
        except AttributeError:
            pass
        if name in _EXTRAS:
            return _EXTRAS[name]
        found = torch_extras.lookup(name)
        if found is not None:
            return found
        raise AttributeError(f"module 'torch' has no attribute {name!r} (this 'torch' is strata's alias; strata "
                             f"does not provide torch.{name})")

    def __dir__(self) -> list[str]:
        import strata  # NOTE: see __getattr__

        return sorted(set(dir(strata)) | set(self._children) | set(_EXTRAS) | set(self.__dict__))


# torch-level functions strata has no use for: accepted so programs run (performance knobs and the like)
def _compile(model: Any = None, **kwargs: Any) -> Any:
    """torch.compile: returns the model or function unchanged (strata has no graph compiler)."""
    if model is None:
        return lambda m: m
    return model


_matmul_precision = ["highest"]


def _set_float32_matmul_precision(precision: str) -> None:
    if precision not in ("highest", "high", "medium"):
        raise RuntimeError(f"Invalid precision {precision!r}; expected 'highest', 'high' or 'medium'")
    _matmul_precision[0] = precision


def _noop(*args: Any, **kwargs: Any) -> None:
    return None


def _inference_mode(mode: bool = True) -> Any:
    import strata  # NOTE: see TorchModule.__getattr__

    return strata.no_grad() if mode else strata.enable_grad()


def _is_tensor(obj: Any) -> bool:
    import strata  # NOTE: see TorchModule.__getattr__

    return isinstance(obj, strata.Tensor)


_EXTRAS: dict[str, Any] = {
    "compile": _compile,
    "set_float32_matmul_precision": _set_float32_matmul_precision,
    "get_float32_matmul_precision": lambda: _matmul_precision[0],
    "set_num_threads": _noop,
    "get_num_threads": lambda: 1,
    "use_deterministic_algorithms": _noop,
    "inference_mode": _inference_mode,
    "is_tensor": _is_tensor,
}


def _build(name: str) -> types.ModuleType:
    """The synthetic modules."""
    if name == "torch":
        mod: types.ModuleType = TorchModule("torch", "PyTorch's API served by strata (strata.install_torch_alias)")
        from strata.framework import torch_extras  # NOTE: lazily, as in TorchModule.__getattr__

        torch_extras.attach_tensor_methods()
        mod.__version__ = _version()  # type: ignore[attr-defined]
        return mod
    if name == "torch.utils":
        pkg = _LazyPackage("torch.utils")
        pkg._children = frozenset({"data"})
        return pkg
    if name.startswith("torch.backends."):
        return _backend(name)
    if name == "torch.version":
        mod = types.ModuleType("torch.version")
        mod.__version__ = _version()  # type: ignore[attr-defined]
        # cuda / hip follow the current device (strata.version): hip set and cuda None on an AMD device
        from strata.framework import version  # NOTE: lazily, like the other synthetic modules' parts

        mod.__dict__["__getattr__"] = version.attribute
        mod.git_version = "strata"  # type: ignore[attr-defined]
        return mod
    assert name == "torch.backends", name
    pkg = _LazyPackage("torch.backends")
    pkg._children = frozenset({"cudnn", "cuda", "mps"})
    return pkg


def _backend(name: str) -> types.ModuleType:
    """torch.backends.cudnn / .cuda / .mps: flags programs set (strata reads none of them; the library's
    kernels are deterministic and pick no algorithms) and the availability queries."""
    mod = types.ModuleType(name)
    if name == "torch.backends.cudnn":
        mod.__dict__.update(enabled=True, benchmark=False, deterministic=False, allow_tf32=True,
                            benchmark_limit=10, is_available=lambda: True, version=lambda: 91000,
                            flags=_flags_context(mod))
    elif name == "torch.backends.cuda":
        mod.__dict__.update(
            matmul=types.SimpleNamespace(allow_tf32=False, allow_fp16_reduced_precision_reduction=True,
                                         allow_bf16_reduced_precision_reduction=True),
            is_built=lambda: True, enable_flash_sdp=_noop, enable_mem_efficient_sdp=_noop, enable_math_sdp=_noop,
            flash_sdp_enabled=lambda: True, mem_efficient_sdp_enabled=lambda: True, math_sdp_enabled=lambda: True)
    else:
        mod.__dict__.update(is_available=lambda: False, is_built=lambda: False)
    return mod


def _flags_context(mod: types.ModuleType) -> Any:
    """torch.backends.cudnn.flags(enabled=..., benchmark=..., ...): sets the flags for a `with` body."""
    import contextlib

    @contextlib.contextmanager
    def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int = 10, deterministic: bool = False,
              allow_tf32: bool = True) -> Any:
        new = {"enabled": enabled, "benchmark": benchmark, "benchmark_limit": benchmark_limit,
               "deterministic": deterministic, "allow_tf32": allow_tf32}
        old = {k: getattr(mod, k) for k in new}
        mod.__dict__.update(new)
        try:
            yield
        finally:
            mod.__dict__.update(old)
    return flags


class _Loader(importlib.abc.Loader):
    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType | None:
        if spec.name in _SYNTHETIC:
            mod = _build(spec.name)
            mod.__path__ = []  # a package: submodule imports come back here
            return mod
        return None

    def exec_module(self, module: types.ModuleType) -> None:
        target = resolve(module.__name__)
        if target is not None:
            # the import system returns whatever sys.modules holds for the name after exec_module
            mod = sys.modules[module.__name__] = importlib.import_module(target)
            _bind_children(module.__name__, mod)
            if module.__name__ == "torch.cuda":  # torch.cuda.FloatTensor and friends (never replacing a name)
                from strata.framework import torch_extras  # NOTE: lazily, as in TorchModule.__getattr__

                for name, cls in torch_extras.CUDA_LEGACY.items():
                    if not hasattr(mod, name):
                        setattr(mod, name, cls)


def _bind_children(name: str, mod: types.ModuleType) -> None:
    """When a mapped torch module is a plain module (no __path__) but PyTorch's is a package with mapped
    children (torch.cuda.amp, torch.utils.data.dataloader), the import system could not find them under
    it: load them now, so `import torch.cuda.amp` finds them in sys.modules and `torch.cuda.amp` resolves."""
    if hasattr(mod, "__path__"):
        return
    for child in _MAPPED:
        if child.rpartition(".")[0] == name and child not in sys.modules:
            sub = sys.modules[child] = importlib.import_module(_MAPPED[child])
            if not hasattr(mod, child.rpartition(".")[2]):
                setattr(mod, child.rpartition(".")[2], sub)


class TorchAliasFinder(importlib.abc.MetaPathFinder):
    """Answers `torch` and `torch.*` imports with strata's modules (see the module docstring)."""

    _loader = _Loader()

    def find_spec(self, fullname: str, path: Sequence[str] | None = None,
                  target: types.ModuleType | None = None) -> importlib.machinery.ModuleSpec | None:
        if fullname != "torch" and not fullname.startswith("torch."):
            return None
        if fullname in _SYNTHETIC:
            return importlib.util.spec_from_loader(fullname, self._loader, is_package=True)
        target_name = resolve(fullname)
        if target_name is None:
            covered = ", ".join(["torch", *sorted(_MAPPED), *_SYNTHETIC[1:]])
            raise ModuleNotFoundError(f"No module named {fullname!r}: strata's torch alias covers {covered}",
                                      name=fullname)
        if importlib.util.find_spec(target_name) is None:
            raise ModuleNotFoundError(f"No module named {fullname!r}: strata's torch alias maps it to {target_name}, "
                                      "which does not exist", name=fullname)
        return importlib.util.spec_from_loader(fullname, self._loader)


def is_installed() -> bool:
    """True when `import torch` is answered by strata in this process."""
    return any(isinstance(f, TorchAliasFinder) for f in sys.meta_path)


def install_torch_alias() -> None:
    """Make `import torch` (and `torch.nn`, `torch.optim`, `torch.cuda`, `torch.utils.data`, ...)
    resolve to strata's modules in this process, so PyTorch code runs unchanged on strata.

    Raises:
        RuntimeError: the real PyTorch is already imported in this process.

    Example:
        >>> import strata
        >>> strata.install_torch_alias()    # doctest: +SKIP
        >>> import torch                    # doctest: +SKIP
        >>> torch.__version__               # doctest: +SKIP
        '2.13.0+strata.0.1.0'
    """
    if is_installed():
        return
    real = [n for n in sys.modules if n == "torch" or n.startswith("torch.")]
    if real and not getattr(sys.modules.get("torch"), "__strata__", False):
        torch = sys.modules.get("torch")
        where = f" {getattr(torch, '__version__', '')} from {getattr(torch, '__file__', '?')}" if torch else ""
        raise RuntimeError(f"[install_torch_alias] the real PyTorch{where} is already imported in this process, "
                           "so `import torch` cannot be served by strata; install the alias before anything "
                           "imports torch (or run the program with `strata run --as-torch program.py`)")
    sys.meta_path.insert(0, TorchAliasFinder())


def uninstall_torch_alias() -> None:
    """Undo `install_torch_alias` and forget the aliased `torch` modules (for tests and tools)."""
    sys.meta_path[:] = [f for f in sys.meta_path if not isinstance(f, TorchAliasFinder)]
    if getattr(sys.modules.get("torch"), "__strata__", False):
        for n in [n for n in sys.modules if n == "torch" or n.startswith("torch.")]:
            del sys.modules[n]
