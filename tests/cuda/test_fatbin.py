"""The fat binary parser (strata.cuda.fatbin): real nvcc output (zstd-compressed PTX beside SASS), the PTX
it picks loads and runs, and malformed or unusable binaries fail with FatbinError saying what and where."""

from __future__ import annotations

import struct
import subprocess
from pathlib import Path

import numpy as np
import pytest

import strata.cuda as cuda
from strata.cuda import fatbin
from strata.cuda.nvcc import NvccNotFound, find_nvcc

SRC = 'extern "C" __global__ void triple(int* p, int n) { int i = threadIdx.x; if (i < n) p[i] = 3 * i + n; }\n'

try:
    NVCC: Path | None = find_nvcc()
except NvccNotFound:
    NVCC = None
needs_nvcc = pytest.mark.skipif(NVCC is None, reason="nvcc not installed (pip install 'strata[programs]')")


@pytest.fixture(scope="module")
def real_fatbin(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    d = tmp_path_factory.mktemp("fatbin")
    (d / "k.cu").write_text(SRC)
    subprocess.run([str(NVCC), "--fatbin", "-gencode", "arch=compute_90,code=compute_90", "-gencode",
                    "arch=compute_80,code=sm_80", str(d / "k.cu"), "-o", str(d / "k.fatbin")], check=True,
                   capture_output=True)
    return (d / "k.fatbin").read_bytes()


@needs_nvcc
def test_real_nvcc_fatbin_entries(real_fatbin: bytes) -> None:
    entries = fatbin.parse(real_fatbin)
    assert sorted((e.kind, e.arch) for e in entries) == [(fatbin.KIND_PTX, 90), (fatbin.KIND_ELF, 80)]
    ptx = next(e for e in entries if e.is_ptx)
    assert ptx.flags & fatbin.FLAG_ZSTD  # nvcc 13 compresses
    assert fatbin.fat_size(real_fatbin) == len(real_fatbin)


@needs_nvcc
def test_picked_ptx_runs(real_fatbin: bytes) -> None:
    text = fatbin.pick_ptx(fatbin.parse(real_fatbin), 90).text()
    assert ".entry triple" in text
    k = cuda.Module(text).get_function("triple")
    x = cuda.to_device(np.zeros(16, np.int32))
    k(1, 16, (x, np.int32(16))).wait()
    np.testing.assert_array_equal(x.get(), 3 * np.arange(16) + 16)


@needs_nvcc
def test_truncated_and_corrupt_real_fatbin(real_fatbin: bytes) -> None:
    with pytest.raises(fatbin.FatbinError, match="truncated"):
        fatbin.parse(real_fatbin[:-40])
    ptx_at = real_fatbin.index(b"\x28\xb5\x2f\xfd")  # the zstd frame of the PTX entry
    bad = bytearray(real_fatbin)
    bad[ptx_at:ptx_at + 4] = b"\0\0\0\0"
    with pytest.raises(fatbin.FatbinError, match="zstd decompression failed"):
        fatbin.parse(bytes(bad))


def test_bad_magic_and_short_header() -> None:
    with pytest.raises(fatbin.FatbinError, match="magic 0x12345678, expected 0xba55ed50"):
        fatbin.parse(struct.pack("<IHHQ", 0x12345678, 1, 16, 0))
    with pytest.raises(fatbin.FatbinError, match="expected a 16-byte header"):
        fatbin.parse(b"\x50\xed\x55\xba\x01")


def test_entry_running_past_the_container() -> None:
    blob = bytearray(fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 90, b".version 8.0\n")]))
    struct.pack_into("<Q", blob, 16 + 8, 1 << 20)  # the entry's payload size
    with pytest.raises(fatbin.FatbinError, match="run past the container's end"):
        fatbin.parse(bytes(blob))


def test_lz4_entries_are_refused_with_the_reason() -> None:
    blob = bytearray(fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 90, b"xxxx")]))
    struct.pack_into("<Q", blob, 16 + 40, fatbin.FLAG_LZ4)  # the entry's flags
    with pytest.raises(fatbin.FatbinError, match="LZ4"):
        fatbin.parse(bytes(blob))


def test_sass_only_and_too_new_ptx() -> None:
    sass = fatbin.parse(fatbin.container([fatbin.Entry(fatbin.KIND_ELF, 80, b"\x7fELF")]))
    with pytest.raises(fatbin.FatbinError, match="only SASS for sm_80.*strata nvcc"):
        fatbin.pick_ptx(sass, 90)
    new = fatbin.parse(fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 100, b".version 9.0\n")]))
    with pytest.raises(fatbin.FatbinError, match="newer than the device"):
        fatbin.pick_ptx(new, 90)


def test_picks_the_newest_ptx_the_device_runs() -> None:
    entries = fatbin.parse(fatbin.container([fatbin.Entry(fatbin.KIND_PTX, a, f"// {a}\n".encode())
                                             for a in (75, 90, 100, 80)]))
    assert fatbin.pick_ptx(entries, 90).arch == 90
    assert fatbin.pick_ptx(entries, 86).arch == 80


def test_concatenated_containers() -> None:
    one = fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 90, b"a")])
    two = fatbin.container([fatbin.Entry(fatbin.KIND_PTX, 80, b"b")])
    assert [e.text() for e in fatbin.parse(one + two)] == ["a", "b"]
