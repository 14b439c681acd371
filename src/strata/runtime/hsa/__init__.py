"""The HSA face of the runtime: ROCr's C API (`hsa_*`, `hsa_amd_*`) under snake_case names, over
strata's queues, signals and command processor, for users who want to submit packets by hand.

Names drop the `hsa_` prefix (`hsa_queue_create` -> `queue_create`, `hsa_amd_memory_pool_allocate`
-> `amd_memory_pool_allocate`); out-parameters become return values and a non-SUCCESS status becomes
`HsaError` whose `.status` is the hsa_status_t. Handles are objects with a `.handle` (signals may
also be passed as their integer handle, which is what packets carry). The memory-order suffixes
(`_relaxed`, `_scacquire`, `_screlease`, `_scacq_screl`) all exist; under Python's GIL they behave
alike. Timeouts are in seconds, not HSA's system-timestamp ticks. Layouts and semantics follow
the HSA runtime specification's; docs/hsa.md walks through a hand-submitted dispatch.

One module per concept, all re-exported here: `status` (hsa_status_t, HsaError, the enumerations and C
constants), `agent` (init/shut_down, agents and their attributes), `memory` (pools, allocation, host
views, copies), `signals`, `queues` (creation, indices, writing packets) and `loader` (executables and
symbols); `_runtime` holds the state init() creates.

Example:
    >>> init()
    >>> gpu = next(a for a in agents() if agent_get_info(a, "device") == DEVICE_TYPE_GPU)
    >>> agent_get_info(gpu, "queue_max_size"), agent_get_info(gpu, "queue_min_size")
    (131072, 64)
    >>> s = signal_create(1)
    >>> signal_wait_scacquire(s, SIGNAL_CONDITION_LT, 1, timeout_hint=0.01)  # nobody completes it
    1
    >>> signal_subtract_screlease(s, 1); signal_wait_scacquire(s, SIGNAL_CONDITION_LT, 1)
    0
    >>> signal_destroy(s); shut_down()
"""

from strata.runtime.hsa.agent import (
    Agent,
    agent_get_info,
    agents,
    init,
    iterate_agents,
    shut_down,
)
from strata.runtime.hsa.loader import (
    Executable,
    ExecutableSymbol,
    executable_create,
    executable_destroy,
    executable_freeze,
    executable_get_symbol_by_name,
    executable_load_code_object,
    executable_symbol_get_info,
    load_code_object,
)
from strata.runtime.hsa.memory import (
    MemoryPool,
    amd_agent_iterate_memory_pools,
    amd_memory_async_copy,
    amd_memory_pool_allocate,
    amd_memory_pool_free,
    amd_memory_pool_get_info,
    host_array,
    memory_copy,
    pool_get_info,
)
from strata.runtime.hsa.queues import (
    Queue,
    publish_header,
    queue_add_write_index_relaxed,
    queue_add_write_index_scacq_screl,
    queue_add_write_index_scacquire,
    queue_add_write_index_screlease,
    queue_cas_write_index_relaxed,
    queue_cas_write_index_scacq_screl,
    queue_cas_write_index_scacquire,
    queue_cas_write_index_screlease,
    queue_create,
    queue_destroy,
    queue_load_read_index_relaxed,
    queue_load_read_index_scacquire,
    queue_load_write_index_relaxed,
    queue_load_write_index_scacquire,
    queue_store_write_index_relaxed,
    queue_store_write_index_screlease,
    write_barrier_and_packet,
    write_barrier_or_packet,
    write_kernel_dispatch_packet,
)
from strata.runtime.hsa.signals import (
    Signal,
    amd_profiling_get_dispatch_time,
    signal_add_relaxed,
    signal_add_scacq_screl,
    signal_add_scacquire,
    signal_add_screlease,
    signal_and_relaxed,
    signal_and_scacq_screl,
    signal_and_scacquire,
    signal_and_screlease,
    signal_cas_relaxed,
    signal_cas_scacq_screl,
    signal_cas_scacquire,
    signal_cas_screlease,
    signal_create,
    signal_destroy,
    signal_exchange_relaxed,
    signal_exchange_scacq_screl,
    signal_exchange_scacquire,
    signal_exchange_screlease,
    signal_load_relaxed,
    signal_load_scacquire,
    signal_or_relaxed,
    signal_or_scacq_screl,
    signal_or_scacquire,
    signal_or_screlease,
    signal_silent_store_relaxed,
    signal_silent_store_screlease,
    signal_store_relaxed,
    signal_store_screlease,
    signal_subtract_relaxed,
    signal_subtract_scacq_screl,
    signal_subtract_scacquire,
    signal_subtract_screlease,
    signal_wait_relaxed,
    signal_wait_scacquire,
    signal_xor_relaxed,
    signal_xor_scacq_screl,
    signal_xor_scacquire,
    signal_xor_screlease,
)
from strata.runtime.hsa.status import (
    DEVICE_TYPE_CPU,
    DEVICE_TYPE_GPU,
    FENCE_SCOPE_AGENT,
    FENCE_SCOPE_NONE,
    FENCE_SCOPE_SYSTEM,
    KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS,
    PACKET_HEADER_BARRIER,
    PACKET_HEADER_SCACQUIRE_FENCE_SCOPE,
    PACKET_HEADER_SCRELEASE_FENCE_SCOPE,
    PACKET_HEADER_TYPE,
    PACKET_TYPE_AGENT_DISPATCH,
    PACKET_TYPE_BARRIER_AND,
    PACKET_TYPE_BARRIER_OR,
    PACKET_TYPE_INVALID,
    PACKET_TYPE_KERNEL_DISPATCH,
    PACKET_TYPE_VENDOR_SPECIFIC,
    PAGE,
    QUEUE_MIN_SIZE,
    QUEUE_TYPE_COOPERATIVE,
    QUEUE_TYPE_MULTI,
    QUEUE_TYPE_SINGLE,
    QUEUES_MAX,
    SIGNAL_CONDITION_EQ,
    SIGNAL_CONDITION_GTE,
    SIGNAL_CONDITION_LT,
    SIGNAL_CONDITION_NE,
    UINT32_MAX,
    UINT64_MAX,
    WAIT_STATE_ACTIVE,
    WAIT_STATE_BLOCKED,
    AgentFeature,
    AgentInfo,
    DeviceType,
    ExecutableSymbolInfo,
    GlobalFlag,
    HsaError,
    MemoryPoolInfo,
    PoolLocation,
    QueueType,
    Segment,
    SignalCondition,
    Status,
    SymbolKind,
    WaitState,
    packet_header,
    status_string,
)

__all__ = ["DEVICE_TYPE_CPU", "DEVICE_TYPE_GPU", "FENCE_SCOPE_AGENT", "FENCE_SCOPE_NONE", "FENCE_SCOPE_SYSTEM",
    "KERNEL_DISPATCH_PACKET_SETUP_DIMENSIONS", "PACKET_HEADER_BARRIER", "PACKET_HEADER_SCACQUIRE_FENCE_SCOPE",
    "PACKET_HEADER_SCRELEASE_FENCE_SCOPE", "PACKET_HEADER_TYPE", "PACKET_TYPE_AGENT_DISPATCH",
    "PACKET_TYPE_BARRIER_AND", "PACKET_TYPE_BARRIER_OR", "PACKET_TYPE_INVALID", "PACKET_TYPE_KERNEL_DISPATCH",
    "PACKET_TYPE_VENDOR_SPECIFIC", "PAGE", "QUEUES_MAX", "QUEUE_MIN_SIZE", "QUEUE_TYPE_COOPERATIVE", "QUEUE_TYPE_MULTI",
    "QUEUE_TYPE_SINGLE", "SIGNAL_CONDITION_EQ", "SIGNAL_CONDITION_GTE", "SIGNAL_CONDITION_LT", "SIGNAL_CONDITION_NE",
    "UINT32_MAX", "UINT64_MAX", "WAIT_STATE_ACTIVE", "WAIT_STATE_BLOCKED", "Agent", "AgentFeature", "AgentInfo",
    "DeviceType", "Executable", "ExecutableSymbol", "ExecutableSymbolInfo", "GlobalFlag", "HsaError", "MemoryPool",
    "MemoryPoolInfo", "PoolLocation", "Queue", "QueueType", "Segment", "Signal", "SignalCondition", "Status",
    "SymbolKind", "WaitState", "agent_get_info", "agents", "amd_agent_iterate_memory_pools", "amd_memory_async_copy",
    "amd_memory_pool_allocate", "amd_memory_pool_free", "amd_memory_pool_get_info", "amd_profiling_get_dispatch_time",
    "executable_create", "executable_destroy", "executable_freeze", "executable_get_symbol_by_name",
    "executable_load_code_object", "executable_symbol_get_info", "host_array", "init", "iterate_agents",
    "load_code_object", "memory_copy", "packet_header", "pool_get_info", "publish_header",
    "queue_add_write_index_relaxed", "queue_add_write_index_scacq_screl", "queue_add_write_index_scacquire",
    "queue_add_write_index_screlease", "queue_cas_write_index_relaxed", "queue_cas_write_index_scacq_screl",
    "queue_cas_write_index_scacquire", "queue_cas_write_index_screlease", "queue_create", "queue_destroy",
    "queue_load_read_index_relaxed", "queue_load_read_index_scacquire", "queue_load_write_index_relaxed",
    "queue_load_write_index_scacquire", "queue_store_write_index_relaxed", "queue_store_write_index_screlease",
    "shut_down", "signal_add_relaxed", "signal_add_scacq_screl", "signal_add_scacquire", "signal_add_screlease",
    "signal_and_relaxed", "signal_and_scacq_screl", "signal_and_scacquire", "signal_and_screlease",
    "signal_cas_relaxed", "signal_cas_scacq_screl", "signal_cas_scacquire", "signal_cas_screlease", "signal_create",
    "signal_destroy", "signal_exchange_relaxed", "signal_exchange_scacq_screl", "signal_exchange_scacquire",
    "signal_exchange_screlease", "signal_load_relaxed", "signal_load_scacquire", "signal_or_relaxed",
    "signal_or_scacq_screl", "signal_or_scacquire", "signal_or_screlease", "signal_silent_store_relaxed",
    "signal_silent_store_screlease", "signal_store_relaxed", "signal_store_screlease", "signal_subtract_relaxed",
    "signal_subtract_scacq_screl", "signal_subtract_scacquire", "signal_subtract_screlease", "signal_wait_relaxed",
    "signal_wait_scacquire", "signal_xor_relaxed", "signal_xor_scacq_screl", "signal_xor_scacquire",
    "signal_xor_screlease", "status_string", "write_barrier_and_packet", "write_barrier_or_packet",
    "write_kernel_dispatch_packet"]
