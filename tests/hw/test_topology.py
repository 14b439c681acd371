"""System topologies: the fabric between GPUs, peer answers from it, peer copies timed on the link."""

import numpy as np
import pytest

import strata.cuda as cuda
from strata import trace
from strata.hw.catalog import get_spec
from strata.hw.topology import SYSTEMS, collective_bandwidth, link_between, peer_copy_seconds, system_for, topo_matrix


def test_platform_figures_follow_the_catalogue_sources() -> None:
    h200 = SYSTEMS["hgx-h200"]
    # 900 GB/s per GPU both directions, the H200 catalogue's NVLink figure
    assert 2 * h200.gpu_bandwidth == get_spec("h200").gpu_link[1]
    assert h200.pair_bandwidth == h200.gpu_bandwidth  # NVSwitch: every pair at full rate
    mi = SYSTEMS["mi300x-platform"]
    assert 2 * mi.gpu_bandwidth == get_spec("mi300x").gpu_link[1]
    assert mi.pair_bandwidth == mi.gpu_bandwidth / 7  # a mesh: one link per pair
    assert system_for([get_spec("h200")] * 8) is h200
    assert system_for([get_spec("h200")] * 9) is None
    assert system_for([get_spec("h200"), get_spec("mi300x")]) is None


def test_matrix_labels_as_nvidia_smi_and_rocm_smi() -> None:
    h, m = get_spec("h200"), get_spec("mi300x")
    assert topo_matrix([h, h, m]) == [["X", "NV18", "SYS"], ["NV18", "X", "SYS"], ["SYS", "SYS", "X"]]
    assert topo_matrix([m, m])[0][1] == "XGMI"
    assert topo_matrix([h, get_spec("a100")])[0][1] == "NV12"  # the slower fabric
    assert not link_between(h, m).p2p and link_between(m, m).p2p
    assert collective_bandwidth([m] * 8) == pytest.approx(448e9)


def test_peer_copy_time_follows_the_link_not_hbm() -> None:
    h, m = get_spec("h200"), get_spec("mi300x")
    n = 256 << 20
    # H200 through NVSwitch: ~450 GB/s per direction; one MI300X xGMI link: 64 GB/s
    assert 400e9 < n / peer_copy_seconds(h, h, n) < 450e9
    assert 50e9 < n / peer_copy_seconds(m, m, n) < 64e9


def test_can_access_peer_answers_from_the_topology() -> None:
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")
    amd = cuda.Device(model="mi300x")
    assert d0.can_access_peer(d1) and d1.can_access_peer(d0)
    assert not d0.can_access_peer(amd) and not cuda.device_can_access_peer(amd, d0)
    with pytest.raises(cuda.CudaError) as info:
        d0.enable_peer_access(amd)
    assert info.value.name == "cudaErrorPeerAccessUnsupported"


def test_memcpy_peer_is_one_copy_over_the_link_on_the_device_timeline() -> None:
    d0 = cuda.current_device()
    d1 = cuda.Device(model="h100" if d0.spec.name != "h100" else "a100")
    host = np.arange(1 << 16, dtype=np.float32)
    x0 = cuda.to_device(host)
    y1 = cuda.DeviceArray(host.shape, np.float32, d1)
    with trace.record() as rec:
        cuda.memcpy_peer(y1, d1, x0, d0, x0.nbytes)
    np.testing.assert_array_equal(y1.get(), host)
    dma = [e for e in rec.events if e.name.startswith("dma_")]
    assert [e.name for e in dma] == ["dma_PtoP"]  # no staging through the host
    ev = dma[0]
    want = peer_copy_seconds(d0.spec, d1.spec, x0.nbytes)
    assert ev.device_end - ev.device_start == pytest.approx(want)
    # the async form orders after work queued on the source device and lands on the destination stream
    s = cuda.Stream(device=d1)
    z1 = cuda.DeviceArray(host.shape, np.float32, d1)
    cuda.memcpy_peer_async(z1, d1, x0, d0, x0.nbytes, s)
    s.synchronize()
    np.testing.assert_array_equal(z1.get(), host)


def test_strata_smi_topo_prints_the_matrix() -> None:
    import os
    import subprocess
    import sys

    env = dict(os.environ, STRATA_DEVICES="h200,h200,mi300x")
    out = subprocess.run([sys.executable, "-m", "strata.cli", "smi", "topo", "-m"], capture_output=True, text=True,
                         env=env, timeout=120, check=True).stdout
    rows = [line.split() for line in out.splitlines()[:4]]
    assert rows[0] == ["GPU0", "GPU1", "GPU2"]
    assert rows[1] == ["GPU0", "X", "NV18", "SYS"] and rows[3] == ["GPU2", "SYS", "SYS", "X"]
    assert "NV#" in out and "XGMI" in out
