"""L2: the system runtime. User-mode queues of AQL packets, signals, module loading, and the
CUDA-driver-style contexts, streams and events built on them (the role of the CUDA driver API and
of ROCr). `strata.runtime.hsa` is the same machinery under HSA's names.
"""

from strata.runtime.context import Context, Event, Stream, completion_record, contexts, primary_context
from strata.runtime.launch import launch_kernel
from strata.runtime.module import LoadedModule, load_module
from strata.runtime.queue import UserQueue
from strata.runtime.signals import Condition, Signal

__all__ = ["Condition", "Context", "Event", "LoadedModule", "Signal", "Stream", "UserQueue", "completion_record",
           "contexts", "launch_kernel", "load_module", "primary_context"]
