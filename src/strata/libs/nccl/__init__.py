"""strata.libs.nccl: the role of NCCL (and RCCL, which keeps NCCL's API): collectives between the
virtual GPUs of this process, run as device kernels that copy and reduce over the modeled links.

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> comms = comm_init_all([0])
    >>> x = cuda.to_device(np.ones(8, np.float32))
    >>> work = all_reduce(x, x, 8, DataType.ncclFloat32, RedOp.ncclSum, comms[0])
    >>> x.get().sum(), work.done
    (np.float32(8.0), True)
    >>> comm_destroy(comms[0])
"""

from strata.libs.nccl.collectives import (
    Work,
    all_gather,
    all_reduce,
    all_to_all,
    all_to_allv,
    broadcast,
    recv,
    reduce,
    reduce_scatter,
    send,
)
from strata.libs.nccl.comm import (
    DEFAULT_TIMEOUT,
    Communicator,
    UniqueId,
    comm_abort,
    comm_destroy,
    comm_init_all,
    comm_init_rank,
    get_unique_id,
)
from strata.libs.nccl.group import group_end, group_start
from strata.libs.nccl.model import CollectiveModel, bus_factor, model
from strata.libs.nccl.types import DataType, NcclError, NcclTimeoutError, RedOp

__all__ = [
    "DEFAULT_TIMEOUT", "CollectiveModel", "Communicator", "DataType", "NcclError", "NcclTimeoutError", "RedOp",
    "UniqueId", "Work", "all_gather", "all_reduce", "all_to_all", "all_to_allv", "broadcast", "bus_factor",
    "comm_abort", "comm_destroy", "comm_init_all", "comm_init_rank", "get_unique_id", "group_end", "group_start",
    "model", "recv", "reduce", "reduce_scatter", "send",
]
