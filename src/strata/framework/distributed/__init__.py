"""strata.distributed: torch.distributed for strata (process groups, collectives on tensors,
DistributedDataParallel, and the launcher behind `strata run --nproc N`). See docs/distributed.md.

Under `strata run --as-torch` it answers `import torch.distributed`, and DistributedDataParallel answers
as torch.nn.parallel.DistributedDataParallel.
"""

from strata.framework.distributed.api import (
    Backend,
    GroupMember,
    ProcessGroup,
    ReduceOp,
    Work,
    all_gather,
    all_gather_into_tensor,
    all_reduce,
    all_to_all,
    all_to_all_single,
    barrier,
    broadcast,
    destroy_process_group,
    get_backend,
    get_rank,
    get_world_size,
    init_process_group,
    is_available,
    is_gloo_available,
    is_initialized,
    is_nccl_available,
    new_group,
    recv,
    reduce,
    reduce_scatter_tensor,
    send,
)
from strata.framework.distributed.ddp import DistributedDataParallel
from strata.framework.distributed.store import DistStoreError, TCPStore
from strata.framework.distributed.transport import DistBackendError

__all__ = [
    "Backend", "DistBackendError", "DistStoreError", "DistributedDataParallel", "GroupMember", "ProcessGroup",
    "ReduceOp", "TCPStore", "Work", "all_gather", "all_gather_into_tensor", "all_reduce", "all_to_all",
    "all_to_all_single", "barrier", "broadcast", "destroy_process_group", "get_backend", "get_rank", "get_world_size",
    "init_process_group", "is_available", "is_gloo_available", "is_initialized", "is_nccl_available", "new_group",
    "recv", "reduce", "reduce_scatter_tensor", "send",
]
