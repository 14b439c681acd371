"""Agents: `init`/`shut_down` of the runtime, the `Agent` handle (the host CPU and one per virtual
GPU), and what `agent_get_info` answers about each."""

from __future__ import annotations

import contextlib
import os
import platform
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, overload

from strata.driver import DeviceFile, DeviceNode, list_devices, open_device
from strata.driver.device import MAX_QUEUE_SIZE
from strata.errors import CudaError
from strata.runtime.hsa._runtime import _acquire, _destroy_queue, _destroy_signal, _release, _rt, _unload
from strata.runtime.hsa.status import (
    QUEUE_MIN_SIZE,
    QUEUES_MAX,
    UINT32_MAX,
    AgentFeature,
    AgentInfo,
    DeviceType,
    HsaError,
    QueueType,
    Status,
    _enum,
    _iterate,
)


@dataclass(frozen=True, eq=False)
class Agent:
    """hsa_agent_t: the host CPU, or one virtual GPU (`node` is its identity from the kernel driver)."""

    handle: int
    device_type: DeviceType
    node: DeviceNode | None = None

    @property
    def device(self) -> DeviceFile:
        """The opened GPU behind a GPU agent."""
        if self.node is None:
            raise HsaError(Status.ERROR_INVALID_AGENT, "[agent.device] the CPU agent has no GPU device")
        return open_device(self.node.index)

    def __repr__(self) -> str:
        what = "CPU" if self.node is None else f"GPU {self.node.arch} ({self.node.product})"
        return f"<hsa_agent {self.handle}: {what}>"


# --- starting and stopping the runtime -------------------------------------------------------------------


def init() -> None:
    """hsa_init: start the runtime (reference counted: each call needs a matching shut_down).

    Enumerates the agents: the host CPU and one GPU per present device (`STRATA_DEVICES`).
    """
    def make_agents() -> list[Agent]:
        nodes = list_devices()
        cpu = Agent(1, DeviceType.CPU)
        return [cpu, *(Agent(n.index + 2, DeviceType.GPU, n) for n in nodes)]

    _acquire(make_agents)


def shut_down() -> None:
    """hsa_shut_down: drop one reference; the last one destroys every queue, signal, executable and
    allocation the runtime made.

    Raises:
        HsaError: ERROR_NOT_INITIALIZED if the runtime is not initialized.
    """
    rt = _release()
    if rt is None:
        return
    for q in list(rt.queues.values()):
        _destroy_queue(rt, q)
    for cq in rt.copy_queues.values():
        cq.destroy()
    for s in list(rt.signals.values()):
        if s.queue is None:
            _destroy_signal(s)
    for exe in list(rt.executables):
        _unload(exe)
    for address, agent in rt.gpu_allocs.items():
        with contextlib.suppress(CudaError):  # a device reset already freed it
            agent.device.free(address)
    rt.host_allocs.clear()


# --- agents ----------------------------------------------------------------------------------------------


def agents() -> list[Agent]:
    """Every agent: the CPU first, then the GPUs by device index."""
    return list(_rt().agents)


@overload
def iterate_agents(callback: None = None, data: Any = None) -> list[Agent]: ...
@overload
def iterate_agents(callback: Callable[[Agent, Any], Status | None], data: Any = None) -> Status: ...
def iterate_agents(callback: Callable[[Agent, Any], Status | None] | None = None, data: Any = None) -> Any:
    """hsa_iterate_agents: without a callback, the list of agents; with one, call `callback(agent,
    data)` for each until it returns something other than SUCCESS/None, and return that status."""
    return _iterate(agents(), callback, data)


def agent_get_info(agent: Agent, attribute: AgentInfo | int | str) -> Any:
    """hsa_agent_get_info: one attribute of `agent`.

    Args:
        agent: from `agents()`.
        attribute: an `AgentInfo`, its value, or its name in any case ("name", "queue_max_size",
            "compute_unit_count", ...).

    Returns:
        Strings for NAME/VENDOR_NAME/PRODUCT_NAME/ISA/UUID, ints or tuples of ints otherwise; GPU values
        come from the device catalogue (`wavefront_size` is the warp size, `compute_unit_count` the SMs).

    Raises:
        HsaError: ERROR_INVALID_AGENT for a foreign agent, ERROR_INVALID_ARGUMENT for an attribute the
            agent does not have (a CPU has no wavefront size).
    """
    key = _enum(AgentInfo, attribute, "agent_get_info")
    info = _agent_info(_agent(agent))
    if key not in info:
        raise HsaError(Status.ERROR_INVALID_ARGUMENT, f"[agent_get_info] {agent!r} has no attribute {key.name}")
    return info[key]


def _agent_info(agent: Agent) -> dict[AgentInfo, Any]:
    common = {AgentInfo.MACHINE_MODEL: 1, AgentInfo.DEFAULT_FLOAT_ROUNDING_MODE: 2,  # LARGE, NEAR
              AgentInfo.QUEUE_TYPE: QueueType.MULTI, AgentInfo.VERSION_MAJOR: 1, AgentInfo.VERSION_MINOR: 1,
              AgentInfo.DEVICE: agent.device_type, AgentInfo.ASIC_REVISION: 0}
    node = agent.node
    if node is None:
        return {**common, AgentInfo.NAME: f"host CPU ({platform.machine()})", AgentInfo.VENDOR_NAME: "CPU",
                AgentInfo.FEATURE: AgentFeature(0), AgentInfo.PROFILE: 1, AgentInfo.QUEUES_MAX: 0,
                AgentInfo.QUEUE_MIN_SIZE: 0, AgentInfo.QUEUE_MAX_SIZE: 0, AgentInfo.NODE: 0, AgentInfo.CHIP_ID: 0,
                AgentInfo.COMPUTE_UNIT_COUNT: os.cpu_count() or 1, AgentInfo.UUID: "CPU-XX",
                AgentInfo.PRODUCT_NAME: f"host CPU ({platform.machine()})"}
    spec = node.spec
    triple = "amdgcn-amd-amdhsa" if spec.vendor == "amd" else "nvptx64-nvidia-cuda"
    return {**common, AgentInfo.NAME: spec.arch, AgentInfo.VENDOR_NAME: "AMD" if spec.vendor == "amd" else "NVIDIA",
            AgentInfo.FEATURE: AgentFeature.KERNEL_DISPATCH, AgentInfo.PROFILE: 0,  # BASE
            AgentInfo.WAVEFRONT_SIZE: spec.warp_size, AgentInfo.WORKGROUP_MAX_DIM: spec.max_block_dim,
            AgentInfo.WORKGROUP_MAX_SIZE: spec.max_threads_per_block,
            # HSA counts the grid in work-items, CUDA in blocks
            AgentInfo.GRID_MAX_DIM: tuple(min(UINT32_MAX, g * b) for g, b in zip(spec.max_grid_dim,
                                                                               spec.max_block_dim)),
            AgentInfo.GRID_MAX_SIZE: UINT32_MAX, AgentInfo.FBARRIER_MAX_SIZE: 32, AgentInfo.QUEUES_MAX: QUEUES_MAX,
            AgentInfo.QUEUE_MIN_SIZE: QUEUE_MIN_SIZE, AgentInfo.QUEUE_MAX_SIZE: MAX_QUEUE_SIZE,
            AgentInfo.NODE: node.index + 1, AgentInfo.ISA: f"{triple}--{spec.arch}",
            AgentInfo.FAST_F16_OPERATION: True, AgentInfo.CHIP_ID: node.device_id,
            AgentInfo.COMPUTE_UNIT_COUNT: spec.sm_count, AgentInfo.PRODUCT_NAME: spec.product,
            AgentInfo.MAX_WAVES_PER_CU: spec.max_threads_per_sm // spec.warp_size,
            AgentInfo.NUM_SIMDS_PER_CU: spec.warp_alloc_granularity, AgentInfo.UUID: f"GPU-{node.pci_bus_id}"}


def _agent(agent: Any, *, gpu: bool = False, op: str = "") -> Agent:
    rt = _rt()
    if not isinstance(agent, Agent) or agent not in rt.agents:
        raise HsaError(Status.ERROR_INVALID_AGENT, f"[{op or 'agent'}] {agent!r} is not an agent of this runtime")
    if gpu and agent.node is None:
        raise HsaError(Status.ERROR_INVALID_AGENT, f"[{op}] needs a GPU agent, got the CPU agent")
    return agent
