"""DistributedDataParallel: data parallelism over the ranks of a process group.

At construction rank 0's parameters and buffers are broadcast to every rank. During `backward`, a hook
on each parameter (`Tensor.register_hook`) notes its gradient; parameters are packed into buckets of up
to `bucket_cap_mb` (in reverse registration order, roughly the order gradients arrive), and when a
bucket's last gradient arrives the bucket is flattened, all-reduced with AVG over the group and
unpacked into the parameters' `.grad` while backward goes on, as PyTorch's reducer does. Inside
`no_sync()` nothing is reduced and gradients accumulate locally; the next synchronized backward reduces
the accumulated gradients.

How a bucket's gradients reach `.grad` exactly: a parameter's hook runs before the autograd engine adds
the gradient into `.grad`. Parameters whose hooks ran earlier in the bucket already hold their
accumulated gradient, which is what is reduced and written back in place. The parameter whose hook
completes the bucket contributes `.grad + grad` (the engine's own sum), its `.grad` is cleared and the
hook returns its reduced slice, which the engine then stores as the new `.grad`.

Every parameter that requires grad must receive a gradient in each synchronized backward (PyTorch's
`find_unused_parameters=False` contract); a bucket left incomplete raises at the next forward.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from strata.framework import joining
from strata.framework.autograd import no_grad
from strata.framework.distributed import api
from strata.framework.nn.module import Module
from strata.framework.tensor import Tensor


class _Bucket:
    def __init__(self, params: list[Tensor]) -> None:
        self.params = params
        self.ready: dict[int, Tensor] = {}


class DistributedDataParallel(Module):
    """torch.nn.parallel.DistributedDataParallel.

    Args:
        module: the model (reached again as `.module`).
        device_ids, output_device: accepted as PyTorch accepts them (the module already sits on its device).
        broadcast_buffers: broadcast rank 0's buffers at every forward.
        process_group: the group to reduce over (default: the whole job).
        bucket_cap_mb: bucket size limit in MiB.
        find_unused_parameters: must stay False (every parameter gets a gradient).
    """

    def __init__(self, module: Module, device_ids: Any = None, output_device: Any = None, dim: int = 0,
                 broadcast_buffers: bool = True, process_group: Any = None, bucket_cap_mb: float = 25.0,
                 find_unused_parameters: bool = False, check_reduction: bool = False,
                 gradient_as_bucket_view: bool = False, static_graph: bool = False) -> None:
        super().__init__()
        if not api.is_initialized():
            raise ValueError("Default process group has not been initialized, please make sure to call "
                             "init_process_group.")
        if find_unused_parameters:
            raise NotImplementedError("DistributedDataParallel(find_unused_parameters=True) is not supported by "
                                      "strata yet")
        self.module = module
        self.device_ids = device_ids
        self.broadcast_buffers = broadcast_buffers
        object.__setattr__(self, "_group", process_group)
        object.__setattr__(self, "_sync", True)
        with no_grad():
            for p in module.parameters():
                api.broadcast(p.detach(), self._root(), process_group)
            for b in module.buffers():
                api.broadcast(b.detach(), self._root(), process_group)
        params: list[Tensor] = [p for p in module.parameters() if p.requires_grad]
        buckets: list[_Bucket] = []
        cap = int(bucket_cap_mb * (1 << 20))
        current: list[Tensor] = []
        size = 0
        for t in reversed(params):
            nbytes = t.numel() * t.dtype.itemsize
            if current and (size + nbytes > cap or t.dtype is not current[0].dtype or t.device != current[0].device):
                buckets.append(_Bucket(current))
                current, size = [], 0
            current.append(t)
            size += nbytes
        if current:
            buckets.append(_Bucket(current))
        object.__setattr__(self, "_buckets", buckets)
        object.__setattr__(self, "reduced_buckets", 0)  # buckets all-reduced so far (tests and reports read it)
        for bucket in buckets:
            for t in bucket.params:
                t.register_hook(self._hook(bucket, t))

    def _root(self) -> int:
        g = self.__dict__.get("_group")
        return g.ranks[0] if g is not None else 0

    def _hook(self, bucket: _Bucket, param: Tensor) -> Any:
        def hook(grad: Tensor) -> Tensor | None:
            if not self.__dict__["_sync"]:
                return None
            bucket.ready[id(param)] = grad
            if len(bucket.ready) < len(bucket.params):
                return None
            return self._reduce(bucket, param, grad)

        return hook

    def _reduce(self, bucket: _Bucket, last: Tensor, grad: Tensor) -> Tensor:
        with no_grad():
            totals = []
            for p in bucket.params:
                if p is last:
                    total = grad.detach() if p.grad is None else p.grad + grad.detach()
                else:
                    assert p.grad is not None
                    total = p.grad
                totals.append(total.reshape(-1))
            flat = joining.cat(totals).contiguous()
            api.all_reduce(flat, api.ReduceOp.AVG, self.__dict__["_group"])
            out = grad
            offset = 0
            for p in bucket.params:
                piece = flat[offset:offset + p.numel()].reshape(p.shape)
                offset += p.numel()
                if p is last:
                    out = piece.clone()
                else:
                    assert p.grad is not None
                    p.grad.copy_(piece)
            last.grad = None  # the engine stores the returned, reduced gradient as the new .grad
        bucket.ready.clear()
        object.__setattr__(self, "reduced_buckets", self.__dict__["reduced_buckets"] + 1)
        return out

    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        for bucket in self.__dict__["_buckets"]:
            if bucket.ready and self.__dict__["_sync"]:
                raise RuntimeError("Expected to have finished reduction in the prior iteration before starting a "
                               "new one: some parameters received no gradient (find_unused_parameters is not "
                               "supported by strata)")
        if self.broadcast_buffers and self.__dict__["_sync"]:
            with no_grad():
                for b in self.module.buffers():
                    api.broadcast(b.detach(), self._root(), self.__dict__["_group"])
        return self.module(*inputs, **kwargs)

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Backward passes inside accumulate gradients locally without communication."""
        old = self.__dict__["_sync"]
        object.__setattr__(self, "_sync", False)
        try:
            yield
        finally:
            object.__setattr__(self, "_sync", old)
