"""The HSA face loads an AMDGPU code object (the checked-in gfx942 saxpy) on an MI300X agent and
dispatches it by hand, as a ROCr program does: kernarg segment laid out from the metadata, hidden
arguments included, AQL packet, doorbell, completion signal."""

from __future__ import annotations

import struct
from pathlib import Path

import numpy as np
import pytest

from strata.runtime import hsa
from strata.runtime.hsa.status import HsaError, Status

HERE = Path(__file__).parent


@pytest.fixture
def mi300x_agent(monkeypatch: pytest.MonkeyPatch):  # noqa: ANN201
    hsa.init()  # reference counted: init, then drop it, so the next init sees the device list below
    hsa.shut_down()
    monkeypatch.setenv("STRATA_DEVICES", "mi300x")
    hsa.init()
    yield hsa.agents()[1]
    hsa.shut_down()


def test_hand_dispatch_of_a_code_object(mi300x_agent: hsa.Agent) -> None:
    gpu = mi300x_agent
    cpu = hsa.agents()[0]
    assert hsa.agent_get_info(gpu, "name") == "gfx942"
    vram = next(p for p in hsa.amd_agent_iterate_memory_pools(gpu)
                if hsa.pool_get_info(p, "segment") == hsa.Segment.GLOBAL)
    kpool = next(p for p in hsa.amd_agent_iterate_memory_pools(cpu)
                 if hsa.pool_get_info(p, "global_flags") & hsa.GlobalFlag.KERNARG_INIT)
    exe = hsa.load_code_object(gpu, (HERE / "saxpy.co").read_bytes())
    sym = hsa.executable_get_symbol_by_name(exe, "saxpy.kd", gpu)
    size = hsa.executable_symbol_get_info(sym, "kernarg_segment_size")
    assert size == 280 and hsa.executable_symbol_get_info(sym, "group_segment_size") == 0

    n = 1000
    rng = np.random.default_rng(5)
    x, y = rng.random(n, np.float32), rng.random(n, np.float32)
    d_x, d_y = (hsa.amd_memory_pool_allocate(vram, 4 * n) for _ in range(2))
    hsa.memory_copy(d_x, x.ctypes.data, 4 * n)
    hsa.memory_copy(d_y, y.ctypes.data, 4 * n)
    kernarg = hsa.amd_memory_pool_allocate(kpool, size)
    buf = hsa.host_array(kernarg)
    buf[:size] = 0
    struct.pack_into("<ifQQ", buf, 0, n, 0.5, d_x, d_y)  # explicit arguments at offsets 0, 4, 8, 16
    struct.pack_into("<III", buf, 24, 4, 1, 1)  # hidden_block_count_x/y/z
    struct.pack_into("<HHH", buf, 36, 256, 1, 1)  # hidden_group_size_x/y/z
    struct.pack_into("<H", buf, 88, 1)  # hidden_grid_dims

    queue = hsa.queue_create(gpu, 64, hsa.QUEUE_TYPE_SINGLE)
    done = hsa.signal_create(1)
    index = hsa.queue_add_write_index_scacq_screl(queue, 1)
    hsa.write_kernel_dispatch_packet(queue, index, kernel_object=hsa.executable_symbol_get_info(sym, "kernel_object"),
                                     kernarg_address=kernarg, grid=1024, workgroup=256, group_segment_size=0,
                                     completion_signal=done)
    hsa.publish_header(queue, index, hsa.packet_header(hsa.PACKET_TYPE_KERNEL_DISPATCH, barrier=True), setup=1)
    hsa.signal_store_screlease(queue.doorbell_signal, index)
    assert hsa.signal_wait_scacquire(done, hsa.SIGNAL_CONDITION_LT, 1, timeout_hint=30.0) == 0
    out = np.zeros(n, np.float32)
    hsa.memory_copy(out.ctypes.data, d_y, 4 * n)
    np.testing.assert_allclose(out, (0.5 * x.astype(np.float64) + y).astype(np.float32), rtol=1e-6)


def test_malformed_code_object_is_invalid_code_object(mi300x_agent: hsa.Agent) -> None:
    broken = bytearray((HERE / "saxpy.co").read_bytes())
    broken[18] = 62  # e_machine: x86-64
    with pytest.raises(HsaError) as e:
        hsa.load_code_object(mi300x_agent, bytes(broken))
    assert e.value.status == Status.ERROR_INVALID_CODE_OBJECT and "EM_AMDGPU" in str(e.value)
