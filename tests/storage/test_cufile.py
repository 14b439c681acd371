"""The cuFile-shaped API (strata.storage.cufile) and the driver's storage DMA under it
(strata.driver.storage_dma): bytes land where cuFile says they do (oracle: the file's bytes read with
NumPy), O_DIRECT vs compatibility mode, CUfileOpError codes, trace events and the timing model."""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
import strata.trace as trace
from strata.driver import storage_dma
from strata.driver.storage_dma import ALIGN, StorageFile, read_to_device, write_from_device
from strata.hw import storage_model
from strata.storage import cufile
from strata.storage.cufile import CuFileError, OpError

SIZE = 5 * ALIGN + 123  # a size that is not a whole number of blocks
SHM = Path("/dev/shm")


@pytest.fixture(autouse=True)
def _closed_driver() -> Iterator[None]:
    cufile._reset_for_tests()
    yield
    cufile._reset_for_tests()


@pytest.fixture(params=["disk", "tmpfs"])
def data_file(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[tuple[Path, np.ndarray]]:
    """A file of SIZE random bytes on the test's file system (ext4 here) or on tmpfs."""
    if request.param == "tmpfs":
        if not SHM.is_dir():
            pytest.skip("no /dev/shm")
        path = SHM / f"strata-cufile-{os.getpid()}-{id(request)}.bin"
    else:
        path = tmp_path / "data.bin"
    data = np.random.default_rng(7).integers(0, 256, SIZE, dtype=np.uint8)
    data.tofile(path)
    yield path, data
    path.unlink(missing_ok=True)


def _device_bytes(d: cuda.DeviceArray) -> np.ndarray:
    return d.get().view(np.uint8).reshape(-1)


# ------------------------------------------------------------------------------------------ reads
@pytest.mark.parametrize("file_offset,buf_offset,size", [
    (0, 0, SIZE),              # whole file, aligned: direct middle + buffered tail
    (ALIGN, ALIGN, 2 * ALIGN),  # aligned both sides: all direct
    (100, 100, 3 * ALIGN),     # same misalignment on both sides: buffered head, direct middle
    (100, 0, 3 * ALIGN),       # misaligned relative to each other: buffered throughout
    (SIZE - 10, 8, 10),        # the last bytes
])
def test_read_lands_bytes_where_asked(data_file: tuple[Path, np.ndarray], file_offset: int, buf_offset: int,
                                      size: int) -> None:
    path, data = data_file
    cufile.driver_open()
    fh = cufile.handle_register(path)
    d = cuda.zeros(SIZE + ALIGN, np.uint8)
    n = cufile.read(fh, d, size, file_offset, buf_offset)
    assert n == size
    expect = np.zeros(SIZE + ALIGN, np.uint8)
    expect[buf_offset:buf_offset + size] = data[file_offset:file_offset + size]
    np.testing.assert_array_equal(_device_bytes(d), expect)
    t = fh.last_transfer
    assert t is not None and t.direct_bytes + t.buffered_bytes == size
    aligned_together = (buf_offset - file_offset) % ALIGN == 0
    if not fh.compat and aligned_together and size - (-file_offset % ALIGN) >= ALIGN:
        assert t.direct_bytes >= ALIGN  # the aligned middle went by O_DIRECT
    if not aligned_together or fh.compat:
        assert t.direct_bytes == 0


def test_read_past_end_of_file_returns_fewer_bytes(data_file: tuple[Path, np.ndarray]) -> None:
    path, data = data_file
    cufile.driver_open()
    fh = cufile.handle_register(path)
    d = cuda.zeros(2 * SIZE, np.uint8)
    assert cufile.read(fh, d, 2 * ALIGN, SIZE - 50) == 50
    np.testing.assert_array_equal(_device_bytes(d)[:50], data[-50:])
    assert cufile.read(fh, d, 100, SIZE + ALIGN) == 0


def test_read_by_file_descriptor_leaves_it_open(data_file: tuple[Path, np.ndarray]) -> None:
    path, data = data_file
    fd = os.open(path, os.O_RDONLY)
    try:
        cufile.driver_open()
        fh = cufile.handle_register(fd)
        d = cuda.zeros(SIZE, np.uint8)
        assert cufile.read(fh, d.ptr, SIZE) == SIZE
        np.testing.assert_array_equal(_device_bytes(d), data)
        cufile.handle_deregister(fh)
        assert os.pread(fd, 4, 0) == data[:4].tobytes()  # still open
    finally:
        os.close(fd)


def test_write_then_read_back(tmp_path: Path) -> None:
    src = np.random.default_rng(1).integers(0, 256, 3 * ALIGN + 77, dtype=np.uint8)
    d = cuda.to_device(src)
    cufile.driver_open()
    fh = cufile.handle_register(tmp_path / "out.bin", writable=True)
    assert cufile.write(fh, d, src.size, 0) == src.size
    assert cufile.write(fh, d, 100, src.size + 5, 7) == 100  # at an unaligned offset, from an offset
    cufile.handle_deregister(fh)
    got = np.fromfile(tmp_path / "out.bin", np.uint8)
    expect = np.concatenate([src, np.zeros(5, np.uint8), src[7:107]])
    np.testing.assert_array_equal(got, expect)


def test_compat_mode_bounces_through_pinned_memory(data_file: tuple[Path, np.ndarray]) -> None:
    path, data = data_file
    cufile.driver_open(force_compat_mode=True)
    fh = cufile.handle_register(path)
    assert fh.compat
    d = cuda.zeros(SIZE, np.uint8)
    with trace.record() as rec:
        assert cufile.read(fh, d, SIZE, 0) == SIZE
    np.testing.assert_array_equal(_device_bytes(d), data)
    names = {(e.layer, e.name) for e in rec.events}
    assert ("L1", "dma_HtoD") in names and ("L1", "dma_nvme_to_host") in names
    assert ("L1", "dma_nvme_to_device") not in names
    assert fh.last_transfer is not None and fh.last_transfer.buffered_bytes == SIZE


def test_file_system_refusing_o_direct(monkeypatch: pytest.MonkeyPatch, data_file: tuple[Path, np.ndarray]) -> None:
    path, data = data_file
    monkeypatch.setattr(storage_dma, "_open_direct", lambda p, f: None)  # as older tmpfs or FUSE answer
    cufile.driver_open(allow_compat_mode=False)
    with pytest.raises(CuFileError) as e:
        cufile.handle_register(path)
    assert e.value.code == 5008 and e.value.name == "CU_FILE_IO_NOT_SUPPORTED"
    cufile.driver_close()
    cufile.driver_open()
    fh = cufile.handle_register(path)
    assert fh.compat
    d = cuda.zeros(SIZE, np.uint8)
    assert cufile.read(fh, d, SIZE) == SIZE
    np.testing.assert_array_equal(_device_bytes(d), data)


# ----------------------------------------------------------------------------------------- errors
def test_calls_before_driver_open_fail_with_5001(data_file: tuple[Path, np.ndarray]) -> None:
    path, _ = data_file
    for call in (lambda: cufile.handle_register(path), lambda: cufile.buf_register(0, 1), cufile.driver_close):
        with pytest.raises(CuFileError) as e:
            call()
        assert e.value.code == OpError.DRIVER_NOT_INITIALIZED == 5001
        assert e.value.name == "CU_FILE_DRIVER_NOT_INITIALIZED" and "driver_open" in str(e.value)
    cufile.driver_open()
    fh = cufile.handle_register(path)
    cufile.driver_close()
    with pytest.raises(CuFileError, match="CU_FILE_DRIVER_NOT_INITIALIZED"):
        cufile.read(fh, cuda.zeros(4, np.uint8), 4)
    assert fh.closed


def test_handle_errors(data_file: tuple[Path, np.ndarray], tmp_path: Path) -> None:
    path, _ = data_file
    cufile.driver_open()
    with pytest.raises(CuFileError) as e:
        cufile.driver_open()
    assert e.value.code == 5026
    fh = cufile.handle_register(path)
    with pytest.raises(CuFileError) as e:
        cufile.handle_register(path)
    assert e.value.code == 5028
    cufile.handle_deregister(fh)
    for call in (lambda: cufile.handle_deregister(fh), lambda: cufile.read(fh, cuda.zeros(4, np.uint8), 4)):
        with pytest.raises(CuFileError) as e:
            call()
        assert e.value.code == 5027 and e.value.name == "CU_FILE_HANDLE_NOT_REGISTERED"
    with pytest.raises(CuFileError) as e:
        cufile.handle_register(tmp_path / "missing.bin")
    assert e.value.code == errno.ENOENT and e.value.name == "ENOENT"
    with pytest.raises(CuFileError) as e:
        cufile.handle_register(tmp_path)
    assert e.value.code in (5018, errno.EISDIR)
    with pytest.raises(CuFileError) as e:
        cufile.handle_register(12345)
    assert e.value.name == "EBADF"


def test_buffer_and_range_errors(data_file: tuple[Path, np.ndarray]) -> None:
    path, _ = data_file
    cufile.driver_open()
    d = cuda.zeros(ALIGN, np.uint8)
    cufile.buf_register(d, d.nbytes)
    cases = [
        (lambda: cufile.buf_register(d, d.nbytes), 5023),
        (lambda: cufile.buf_deregister(d.ptr + 8), 5024),
        (lambda: cufile.buf_register(0x1234, 16), 5012),
        (lambda: cufile.buf_register(d, d.nbytes + 1), 5014),
        (lambda: cufile.buf_register(d, -1), 5022),
        (lambda: cufile.buf_register(np.zeros(4), 4), 5012),
    ]
    fh = cufile.handle_register(path)
    cases += [
        (lambda: cufile.read(fh, d, ALIGN, 0, 1), 5014),
        (lambda: cufile.read(fh, d, -1, 0), 5022),
        (lambda: cufile.read(fh, d, 4, -4), 5022),
        (lambda: cufile.write(fh, d, 16, 0), errno.EBADF),  # registered read-only
    ]
    for call, code in cases:
        with pytest.raises(CuFileError) as e:
            call()
        assert e.value.code == code, (e.value, code)
        assert isinstance(e.value, RuntimeError)
    cufile.buf_deregister(d)
    freed = cuda.zeros(16, np.uint8)
    freed.free()
    with pytest.raises(CuFileError) as e:
        cufile.read(fh, freed, 4)
    assert e.value.code == 5012


# ------------------------------------------------------------------------- trace and timing model
def test_direct_read_trace_event_and_modeled_time(tmp_path: Path) -> None:
    path = tmp_path / "aligned.bin"
    data = np.arange(4 * ALIGN, dtype=np.uint8)
    data.tofile(path)
    cufile.driver_open()
    fh = cufile.handle_register(path)
    if fh.compat:
        pytest.skip("this file system refuses O_DIRECT")
    d = cuda.zeros(data.size, np.uint8)
    with trace.record() as rec:
        cufile.read(fh, d, data.size)
    dma = [e for e in rec.events if (e.layer, e.name) == ("L1", "dma_nvme_to_device")]
    assert len(dma) == 1 and dma[0].args["bytes"] == data.size and dma[0].args["direct_bytes"] == data.size
    assert dma[0].args["mode"] == "gds"
    spec = cuda.current_device().spec
    expect = storage_model.gds_read_seconds(spec, data.size, requests=1)
    assert dma[0].device_end is not None and dma[0].device_start is not None
    assert dma[0].device_end - dma[0].device_start == pytest.approx(expect)
    l3 = [e for e in rec.events if e.name == "cuFileRead"]
    assert l3 and l3[0].layer == "L3" and l3[0].correlation == dma[0].correlation


def test_storage_model_follows_its_formulas() -> None:
    spec = cuda.current_device().spec
    n = 1 << 30
    rate = min(storage_model.DEFAULT_NVME.read_bandwidth, storage_model.P2P_EFFICIENCY * spec.host_link[1])
    assert storage_model.gds_read_seconds(spec, n, requests=4) == pytest.approx(
        4 * storage_model.REQUEST_OVERHEAD_S + n / rate)
    bounce = storage_model.bounce_read_seconds(spec, n, requests=4)
    parts = storage_model.nvme_read_seconds(n, requests=4) + storage_model.host_memcpy_seconds(n) + n / (
        spec.host_link[1] * 0.85)
    assert bounce == pytest.approx(parts, rel=1e-3)
    assert bounce > storage_model.gds_read_seconds(spec, n, requests=4)


# ------------------------------------------------------------------------------- driver directly
def test_driver_multi_chunk_direct_read(tmp_path: Path) -> None:
    """Many direct requests (small chunks, issued by the I/O threads) reassemble the file exactly."""
    path = tmp_path / "chunks.bin"
    data = np.random.default_rng(3).integers(0, 256, 10 * ALIGN + 9, dtype=np.uint8)
    data.tofile(path)
    d = cuda.zeros(11 * ALIGN, np.uint8)
    dev = cuda.current_device().file
    with StorageFile.open(path) as sf:
        t = read_to_device(dev, sf, d.ptr, 11 * ALIGN, 0, chunk=2 * ALIGN)
        direct = sf.direct
    assert t.nbytes == data.size
    np.testing.assert_array_equal(_device_bytes(d)[:data.size], data)
    if direct:
        assert t.direct_bytes == data.size and t.requests == 6
    with StorageFile.open(path) as sf, pytest.raises(ValueError, match="chunk must be a positive multiple"):
        read_to_device(dev, sf, d.ptr, 16, 0, chunk=100)
    with StorageFile.open(path) as sf, pytest.raises(cuda.CudaError, match="cudaErrorInvalidValue"):
        read_to_device(dev, sf, d.ptr, 12 * ALIGN, 0)


def test_driver_write_roundtrip_with_unaligned_tail(tmp_path: Path) -> None:
    src = np.random.default_rng(4).integers(0, 256, 2 * ALIGN + 5, dtype=np.uint8)
    d = cuda.to_device(src)
    dev = cuda.current_device().file
    with StorageFile.open(tmp_path / "w.bin", writable=True, create=True) as sf:
        t = write_from_device(dev, sf, d.ptr, src.size, 0)
    assert t.nbytes == src.size and t.buffered_bytes >= 5
    np.testing.assert_array_equal(np.fromfile(tmp_path / "w.bin", np.uint8), src)


def test_bounce_read_double_buffers_many_chunks(tmp_path: Path) -> None:
    path = tmp_path / "bounce.bin"
    data = np.random.default_rng(5).integers(0, 256, 7 * ALIGN + 33, dtype=np.uint8)
    data.tofile(path)
    d = cuda.zeros(8 * ALIGN, np.uint8)
    dev = cuda.current_device().file
    with StorageFile.open(path) as sf:
        t = cufile.bounce_read(dev, sf.fd, d.ptr + 5, 8 * ALIGN - 5, 0, chunk=ALIGN)
    assert t.nbytes == data.size and t.buffered_bytes == data.size and t.direct_bytes == 0
    assert t.requests == 8
    np.testing.assert_array_equal(_device_bytes(d)[5:5 + data.size], data)
    assert t.modeled_s == pytest.approx(storage_model.bounce_read_seconds(cuda.current_device().spec, data.size,
                                                                          requests=8))


def test_direct_request_refused_falls_back_to_buffered(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file system that opens with O_DIRECT but fails the request with EINVAL (as some do): compat mode."""
    path = tmp_path / "einval.bin"
    data = np.random.default_rng(6).integers(0, 256, 6 * ALIGN, dtype=np.uint8)
    data.tofile(path)
    real_io = storage_dma._io
    with StorageFile.open(path) as sf:
        if not sf.direct:
            pytest.skip("this file system refuses O_DIRECT at open")
        direct_fd = sf.direct_fd

        def refuse(fd: int, buf: object, offset: int, write: bool) -> int:
            if fd == direct_fd:
                raise OSError(errno.EINVAL, "Invalid argument")
            return real_io(fd, buf, offset, write)

        monkeypatch.setattr(storage_dma, "_io", refuse)
        d = cuda.zeros(data.size, np.uint8)
        t = read_to_device(cuda.current_device().file, sf, d.ptr, data.size, 0, chunk=2 * ALIGN)
        assert not sf.direct
    assert t.nbytes == data.size and t.direct_bytes == 0 and t.buffered_bytes == data.size
    np.testing.assert_array_equal(_device_bytes(d), data)
