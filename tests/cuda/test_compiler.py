"""strata.cuda.compiler: NVRTC invocation, lowered names, errors and the PTX disk cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from cuda.bindings import nvrtc

from strata.cuda import compiler
from strata.cuda.compiler import CompiledSource, CompileError, compile_to_ptx

SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float* x, float* y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
"""

SCALE = r"""
template <typename T>
__global__ void scale(T* x, T a, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) x[i] *= a;
}
"""


@pytest.fixture(autouse=True)
def cache_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    # Every test gets a private, empty cache so results never depend on test order or ~/.cache.
    d = tmp_path / "ptx-cache"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(d))
    monkeypatch.delenv("STRATA_DEBUG", raising=False)
    return d


def _forbid_nvrtc(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object) -> None:
        raise AssertionError("NVRTC was called on what should be a cache hit")

    monkeypatch.setattr(nvrtc, "nvrtcCreateProgram", boom)
    monkeypatch.setattr(nvrtc, "nvrtcCompileProgram", boom)


def test_compile_saxpy_gives_ptx_entry_with_line_info() -> None:
    out = compile_to_ptx(SAXPY)
    assert isinstance(out, CompiledSource)
    assert ".visible .entry saxpy(" in out.ptx
    assert ".target sm_90" in out.ptx
    assert "\t.loc\t" in out.ptx  # -lineinfo is on by default
    assert out.lowered_names == {}
    assert out.nvrtc_version == compiler.nvrtc_version()
    assert out.nvrtc_version >= (13, 0)
    assert not out.cached


def test_lineinfo_can_be_turned_off() -> None:
    assert "\t.loc\t" not in compile_to_ptx(SAXPY, lineinfo=False).ptx


def test_arch_option_overrides_default() -> None:
    out = compile_to_ptx(SAXPY, options=("--gpu-architecture=compute_80",))
    assert ".target sm_80" in out.ptx


def test_cuda_headers_from_wheel_resolve() -> None:
    inc = compiler.cuda_include_dir()
    assert inc is not None and (inc / "cuda_fp16.h").is_file()
    src = '#include <cuda_fp16.h>\nextern "C" __global__ void h(__half* x) { x[0] = __float2half(1.5f); }'
    assert ".entry h(" in compile_to_ptx(src).ptx


def test_cache_hit_does_not_call_nvrtc(cache_dir: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = compile_to_ptx(SAXPY, name_expressions=())
    assert len(list(cache_dir.glob("*.json"))) == 1
    _forbid_nvrtc(monkeypatch)
    second = compile_to_ptx(SAXPY)
    assert second.cached
    assert second == first


def test_cache_key_depends_on_options_and_source(cache_dir: Path) -> None:
    compile_to_ptx(SAXPY)
    compile_to_ptx(SAXPY, options=("-DUNUSED=1",))
    compile_to_ptx(SAXPY + "\n// changed\n")
    assert len(list(cache_dir.glob("*.json"))) == 3


def test_cache_disabled_writes_nothing(cache_dir: Path) -> None:
    compile_to_ptx(SAXPY, cache=False)
    assert not cache_dir.exists()


def test_cache_dir_env_override(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    other = tmp_path / "elsewhere" / "nested"
    monkeypatch.setenv("STRATA_CACHE_DIR", str(other))
    compile_to_ptx(SAXPY)
    entries = list(other.glob("*.json"))
    assert len(entries) == 1
    assert ".entry saxpy(" in json.loads(entries[0].read_text())["ptx"]


def test_compile_error_carries_log_and_names_file() -> None:
    src = "__global__ void broken(int* x) {\n    x[0] = ;\n}\n"
    with pytest.raises(CompileError) as info:
        compile_to_ptx(src, name="broken.cu")
    err = info.value
    assert isinstance(err, ValueError)
    assert "expected an expression" in err.log
    assert "broken.cu(2): error: expected an expression" in str(err)


def test_compile_error_is_not_cached(cache_dir: Path) -> None:
    with pytest.raises(CompileError):
        compile_to_ptx("__global__ void k() { undefined_fn(); }")
    assert not list(cache_dir.glob("*.json"))


def test_bad_option_raises_compile_error() -> None:
    with pytest.raises(CompileError, match="--not-an-option"):
        compile_to_ptx(SAXPY, options=("--not-an-option",))


def test_name_expression_gives_lowered_name(monkeypatch: pytest.MonkeyPatch) -> None:
    out = compile_to_ptx(SCALE, name_expressions=("scale<float>", "scale<int>"))
    assert set(out.lowered_names) == {"scale<float>", "scale<int>"}
    f32, i32 = out.lowered_names["scale<float>"], out.lowered_names["scale<int>"]
    assert f32 != i32
    assert f32.startswith("_Z") and "scale" in f32
    assert f".entry {f32}(" in out.ptx and f".entry {i32}(" in out.ptx
    # Lowered names survive the round trip through the cache.
    _forbid_nvrtc(monkeypatch)
    again = compile_to_ptx(SCALE, name_expressions=("scale<float>", "scale<int>"))
    assert again.cached and again.lowered_names == out.lowered_names


def test_invalid_name_expression_raises() -> None:
    with pytest.raises(CompileError) as info:
        compile_to_ptx(SCALE, name_expressions=("no_such_template<int>",))
    assert "no_such_template" in info.value.log


@pytest.mark.parametrize(
    "garbage",
    ["", "{not json", "[]", '{"format": 1}', '{"format": 1, "ptx": 3, "lowered_names": {}, "log": ""}'],
)
def test_corrupt_cache_entry_is_recompiled_and_rewritten(cache_dir: Path, garbage: str) -> None:
    good = compile_to_ptx(SAXPY)
    (entry,) = cache_dir.glob("*.json")
    entry.write_text(garbage)
    again = compile_to_ptx(SAXPY)
    assert not again.cached
    assert again == good
    assert json.loads(entry.read_text())["ptx"] == good.ptx  # rewritten in place
    assert compile_to_ptx(SAXPY).cached


def test_unwritable_cache_dir_is_not_fatal(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    monkeypatch.setenv("STRATA_CACHE_DIR", str(blocker / "sub"))  # mkdir under a file fails
    assert ".entry saxpy(" in compile_to_ptx(SAXPY).ptx


def test_cache_key_follows_the_directory_nvrtc_writes_into_the_ptx(tmp_path, monkeypatch) -> None:
    # -lineinfo puts the absolute path of a relative file name into `.file`: a hit must not return
    # PTX naming another directory.
    from strata.cuda.compiler import compile_to_ptx

    monkeypatch.setenv("STRATA_CACHE_DIR", str(tmp_path / "cache"))
    src = 'extern "C" __global__ void k(int* p) { p[0] = 1; }'
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    monkeypatch.chdir(tmp_path / "a")
    first = compile_to_ptx(src, name="k.cu")
    monkeypatch.chdir(tmp_path / "b")
    second = compile_to_ptx(src, name="k.cu")
    assert not second.cached  # relative -I options resolve against the cwd too, so it stays in the key
    # The program has no file behind it: `.file` labels it instead of claiming <cwd>/k.cu (issue 12).
    assert '"<nvrtc:' in first.ptx and str(tmp_path) not in first.ptx + second.ptx


def test_compiling_leaves_the_interpreters_shared_bytes_alone() -> None:
    # A clean compile has a 1-byte log (just the NUL). NVRTC writes it into the buffer it is given; an
    # immutable b" " * 1 is the interpreter's shared b" ", which then turned into b"\0" process-wide
    # (print's separators came out as NULs on pipes).
    from strata.cuda.compiler import compile_to_ptx

    out = compile_to_ptx('extern "C" __global__ void k() {}', name="clean.cu", cache=False)
    assert out.log == ""
    assert b" "[0] == 32 and b" "[0] == 32 and (b"a" + b" ")[1] == 32  # the byte value itself
