"""hipify (strata.hip.hipify): the CUDA -> HIP table, the translator's rules on small inputs whose answers are
worked out by hand, and a corpus of CUDA programs (tests/hip/corpus) each translated, checked against its
hand-written expectations (names and warnings), then run: the original through strata.cuda, the HIP
translation through strata.hip, with bit-identical results and a NumPy oracle."""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

import ml_dtypes  # noqa: F401 - registers bfloat16 etc. with NumPy (strata's arrays may use them)
import numpy as np
import pytest

import strata.cuda as cuda
import strata.hip as hip
from strata.cli import main as cli_main
from strata.errors import CUDA_ERRORS
from strata.hip.hipify import (
    TABLE_PATH,
    Table,
    hipify,
    hipify_file,
    load_table,
)
from strata.hip.hipify_lexer import scan
from strata.hip.hipify_report import HipifyReport

CORPUS = Path(__file__).parent / "corpus"
PROGRAMS = sorted(p.stem for p in CORPUS.glob("*.cu"))
IDENT = re.compile(r"[A-Za-z_]\w*")


@pytest.fixture(scope="module")
def table() -> Table:
    return load_table()


def code_words(text: str) -> set[str]:
    """The identifiers in the code of `text` (comments, literals and include directives excluded)."""
    return set(IDENT.findall(scan(text).masked))


def non_code(text: str) -> list[str]:
    """The comments and string/character literals of `text`, in order."""
    s = scan(text)
    return [text[t.start : t.end] for t in s.tokens if t.kind != "include"]


# --- the table -----------------------------------------------------------------------------------------------


def test_table_is_large_and_covers_every_api(table: Table) -> None:
    assert len(table) >= 300
    apis = {e.api for e in table}
    assert {"runtime", "driver", "rtc", "complex", "device", "blas", "rand", "fft", "dnn"} <= apis
    supports = {e.support for e in table}
    assert supports == {"full", "unsupported", "deprecated_cuda", "deprecated_hip", "removed_cuda"}
    for must in ("cudaMalloc", "cudaStream_t", "cudaDeviceProp", "cudaErrorIllegalAddress", "cuLaunchKernel",
                 "cublasSgemm", "curandCreateGenerator", "cufftExecC2C", "cudnnCreate", "__shfl_down_sync"):
        assert must in table.identifiers, must
    assert table.headers["cuda_runtime.h"].hip == "hip/hip_runtime.h"
    assert table.headers["cudnn.h"].hip == "miopen/miopen.h"


def test_table_spot_rows_match_hip(table: Table) -> None:
    # Renames HIP makes (not just cuda -> hip), from AMD's HIP reference; hipify must get each one right.
    want = {
        "cudaMallocHost": "hipHostMalloc", "cudaFreeHost": "hipHostFree", "cudaDeviceProp": "hipDeviceProp_t",
        "cudaErrorMemoryAllocation": "hipErrorOutOfMemory", "cudaErrorInvalidPtx": "hipErrorInvalidKernelFile",
        "cudaErrorLaunchTimeout": "hipErrorLaunchTimeOut", "cudaErrorInvalidResourceHandle": "hipErrorInvalidHandle",
        "cuLaunchKernel": "hipModuleLaunchKernel", "cuStreamCreate": "hipStreamCreateWithFlags",
        "cuMemAlloc": "hipMalloc", "cuDeviceGetCount": "hipGetDeviceCount", "cuGetErrorName": "hipDrvGetErrorName",
        "cudaDevAttrMultiProcessorCount": "hipDeviceAttributeMultiprocessorCount", "CUFFT_INVERSE": "HIPFFT_BACKWARD",
        "nvrtcGetPTX": "hiprtcGetCode", "cudnnFilterDescriptor_t": "miopenTensorDescriptor_t",
        "CUDNN_ACTIVATION_SIGMOID": "miopenActivationLOGISTIC", "__nv_bfloat16": "__hip_bfloat16",
        "__syncthreads": "__syncthreads",
    }
    assert {k: table.identifiers[k].hip for k in want} == want
    assert table.identifiers["cudaThreadSynchronize"].support == "deprecated_cuda"
    assert table.identifiers["cuCtxCreate"].support == "deprecated_hip"
    assert table.identifiers["cudaBindTexture"].support == "removed_cuda"
    assert table.identifiers["cudaErrorIllegalInstruction"].support == "unsupported"


def test_library_names_carry_their_library_prefix(table: Table) -> None:
    prefixes = {"blas": ("hipblas", "HIPBLAS_", "HIP_R_"), "rand": ("hiprand", "HIPRAND_"),
                "fft": ("hipfft", "HIPFFT_"), "dnn": ("miopen", "MIOPEN_"), "cub": ("hipcub",)}
    for e in table:
        if e.library and e.hip:
            assert e.hip.startswith(prefixes[e.api]), (e.cuda, e.hip)
            assert e.face == "", e.cuda


def test_every_produced_hip_name_is_defined_by_the_face_or_a_library_or_listed(table: Table) -> None:
    """Each row that produces a name is a HIP library's (api column), or marked face=no (listed as a name
    strata's HIP face does not provide), or marked face=yes, and then strata.hip really defines it: a Python
    name, a name its headers declare, a header it ships, or, for device code, a name that compiles under
    strata.hip.compile (HIP's device API on NVIDIA passes through to CUDA's)."""
    face_headers = list(hip.include_dir().rglob("*.h"))
    host_names = set(dir(hip)).union(*(code_words(p.read_text()) for p in face_headers))
    header_paths = {p.relative_to(hip.include_dir()).as_posix() for p in face_headers}
    device, host, headers = [], [], []
    for e in table:
        produced = e.hip != "" and e.support != "unsupported"
        if not produced or e.library:
            continue
        assert e.face in ("yes", "no"), e.cuda
        if e.face == "no":
            continue
        if e.is_header:
            headers.append(e.hip)
        elif e.api == "device" or e.category == "define":
            device.append(e.hip)
        else:
            host.append(e.hip)
    assert not [h for h in headers if h not in header_paths]
    assert not [n for n in host if n not in host_names]
    assert not _device_names_missing(sorted(set(device)))
    assert len(host) > 150 and len(device) > 100  # the check has teeth


def _device_names_missing(names: list[str]) -> list[str]:
    """Names that do not resolve at global scope in HIP device code compiled by strata.hip.compile."""
    lines = ["#include <hip/hip_runtime.h>", "#include <hip/hip_fp16.h>", "#include <hip/hip_bf16.h>",
             "#include <hip/hip_math_constants.h>", "namespace strata_probe {"]
    at_line = {}
    for n in names:
        lines += [f"#if !defined({n})", f"using ::{n};", "#endif"]
        at_line[len(lines) - 1] = n
    try:
        hip.compile("\n".join(lines) + "\n}\n", name="probe.hip")
        return []
    except hip.CompileError as e:
        bad = [at_line.get(int(m.group(1)), f"line {m.group(1)}") for m in re.finditer(r"\((\d+)\): error", e.log)]
        return bad or [e.log]


def test_unsupported_rows_produce_nothing(table: Table) -> None:
    for e in table:
        if e.support == "unsupported":
            assert e.hip == "" and e.face == "", e.cuda


def test_error_code_rows_agree_with_strata_errors_where_hip_has_a_twin(table: Table) -> None:
    for name, (_, hip_name) in CUDA_ERRORS.items():
        e = table.identifiers[name]
        if e.support != "unsupported":
            assert e.hip == hip_name, (name, e.hip, hip_name)


def test_strata_errors_claim_no_hip_twin_hip_lacks(table: Table) -> None:
    invented = [(n, h) for n, (_, h) in CUDA_ERRORS.items() if h and table.identifiers[n].support == "unsupported"]
    assert invented == []


def test_hip_compile_defines_hipcc_rtc_as_hiprtc_does() -> None:
    # hipify maps __CUDACC_RTC__ (NVRTC defines it) to __HIPCC_RTC__ (hipRTC defines it): the corpus's host
    # halves, guarded by it, must stay out of strata.hip.compile as they stay out of strata.cuda.compile.
    hip.compile('#ifndef __HIPCC_RTC__\n#error not hipRTC\n#endif\nextern "C" __global__ void k() {}\n')


@pytest.mark.parametrize(("row", "message"), [
    ("cudaFoo,hipFoo,memory,runtime,maybe,yes,,", "support must be one of"),
    ("cudaFoo,hipFoo,nonsense,runtime,full,yes,,", "category must be"),
    ("cudaFoo,hipFoo,memory,opencl,full,yes,,", "api must be one of"),
    ("cudaFoo,,memory,runtime,full,,,", "hip must be empty exactly when"),
    ("cudaFoo,hipFoo,memory,runtime,unsupported,,,", "hip must be empty exactly when"),
    ("cuda Foo,hipFoo,memory,runtime,full,yes,,", "not an identifier mapping"),
    ("cudaFoo,hipFoo,memory,runtime,full,,,", "face must be yes/no"),
    ("cublasFoo,hipblasFoo,library,blas,full,yes,,", "face must be yes/no"),
    ("cudaFoo,hipFoo,memory,runtime,full,yes,", "expected 8 columns"),
    ("cudaMalloc,hipMalloc,memory,runtime,full,yes,,", "duplicate CUDA name"),
])
def test_table_validation_names_the_bad_line(tmp_path: Path, row: str, message: str) -> None:
    p = tmp_path / "t.csv"
    p.write_text("# a comment\ncuda,hip,category,api,support,face,since,note\n"
                 "cudaMalloc,hipMalloc,memory,runtime,full,yes,,\n" + row + "\n")
    with pytest.raises(ValueError, match=message) as info:
        load_table(p)
    assert f"{p}:4" in str(info.value)


def test_a_user_table_drives_hipify(tmp_path: Path) -> None:
    p = tmp_path / "mine.csv"
    p.write_text("cuda,hip,category,api,support,face,since,note\nmyCudaThing,myHipThing,library,runtime,full,no,,\n")
    out, report = hipify("myCudaThing(); cudaMalloc(p);", table=load_table(p))
    assert out == "myHipThing(); cudaMalloc(p);"
    assert report.converted == 1 and [w.name for w in report.warnings] == ["cudaMalloc"]


def test_packaged_table_is_the_documented_file() -> None:
    assert TABLE_PATH.name == "cuda2hip.csv" and TABLE_PATH.is_file()
    assert TABLE_PATH.read_text().startswith("# cuda2hip.csv")


# --- the translator, on small inputs -------------------------------------------------------------------------


def test_comments_and_string_literals_are_left_alone() -> None:
    src = ('cudaMalloc(&p, n); // cudaMalloc in a comment\n'
           '/* cudaFree(p);\n   cudaMemcpy */ cudaFree(p);\n'
           'const char* s = "cudaMalloc \\" cudaFree"; char c = \'c\'; int k = 1\'000;\n'
           'auto r = R"x(cudaStream_t ")x"; cudaStream_t t;\n')
    out, report = hipify(src)
    assert out == ('hipMalloc(&p, n); // cudaMalloc in a comment\n'
                   '/* cudaFree(p);\n   cudaMemcpy */ hipFree(p);\n'
                   'const char* s = "cudaMalloc \\" cudaFree"; char c = \'c\'; int k = 1\'000;\n'
                   'auto r = R"x(cudaStream_t ")x"; hipStream_t t;\n')
    assert report.converted == 3 and report.warnings == []


def test_matching_is_whole_word() -> None:
    src = "mycudaMalloc(); cudaMallocX(); cudaMalloc2(); cudaMalloc(); _cudaFree; cudaFree_; cu::cudaFree();\n"
    out, report = hipify(src)
    assert out == "mycudaMalloc(); cudaMallocX(); cudaMalloc2(); hipMalloc(); _cudaFree; cudaFree_; cu::hipFree();\n"
    # CUDA-looking names (cuda + capital letter) the table lacks are reported; `mycudaMalloc`, `_cudaFree` are not.
    assert sorted(w.name for w in report.warnings) == ["cudaFree_", "cudaMalloc2", "cudaMallocX"]
    assert {w.kind for w in report.warnings} == {"unknown"}


def test_includes_are_rewritten_dropped_or_flagged() -> None:
    src = ('#include <cuda_runtime.h>\n#include "cuda.h"\n  #  include <cuda_fp16.h>\n'
           '#include <device_launch_parameters.h>\n#include <cusparse.h>\n#include <vector>\n'
           '// #include <cuda.h>\n')
    out, report = hipify(src)
    assert out == ('#include <hip/hip_runtime.h>\n#include "hip/hip_runtime.h"\n  #  include <hip/hip_fp16.h>\n'
                   '\n#include <cusparse.h>\n#include <vector>\n// #include <cuda.h>\n')
    assert report.by_category["include_cuda_main_header"] == 2 and report.by_category["include"] == 2
    assert [(w.line, w.kind, w.name) for w in report.warnings] == [(5, "unknown", "cusparse.h")]


def test_main_header_is_added_to_kernel_code_without_one() -> None:
    kernel = "__global__ void k(float* x) { x[threadIdx.x] = __expf(x[threadIdx.x]); }\n"
    out, _ = hipify(kernel)
    assert out == '#include "hip/hip_runtime.h"\n' + kernel
    assert hipify(out)[0] == out  # ...once
    assert hipify("int f() { return 0; }\n")[0] == "int f() { return 0; }\n"  # no CUDA: nothing to add


@pytest.mark.parametrize(("src", "want"), [
    ("k<<<g, b>>>(x, y);", "hipLaunchKernelGGL(k, g, b, 0, 0, x, y);"),
    ("k<<<g, b, smem>>>(x);", "hipLaunchKernelGGL(k, g, b, smem, 0, x);"),
    ("k<<<g, b, smem, s>>>(x);", "hipLaunchKernelGGL(k, g, b, smem, s, x);"),
    ("k<<<g, b>>>();", "hipLaunchKernelGGL(k, g, b, 0, 0);"),
    ("k <<< dim3(a, b), dim3(32, 8) >>> (p);", "hipLaunchKernelGGL(k, dim3(a, b), dim3(32, 8), 0, 0, p);"),
    ("k /* 1-D */ <<<n, 1 /* one */>>>(p);", "hipLaunchKernelGGL(k /* 1-D */, n, 1 /* one */, 0, 0, p);"),
    ("scale<float><<<1, 32>>>(x, 2.0f, n);",
     "hipLaunchKernelGGL(HIP_KERNEL_NAME(scale<float>), 1, 32, 0, 0, x, 2.0f, n);"),
    ("ns::axpy<T, 4><<<n >> 8, 256, 0, st>>>(x);",
     "hipLaunchKernelGGL(HIP_KERNEL_NAME(ns::axpy<T, 4>), n >> 8, 256, 0, st, x);"),
    ('k<<<1, 1>>>(f(a, b), /* ) */ ")");', 'hipLaunchKernelGGL(k, 1, 1, 0, 0, f(a, b), /* ) */ ")");'),
    ("k<<<grid,\n     block>>>(a,\n  b);", "hipLaunchKernelGGL(k, grid,\n     block, 0, 0, a,\n  b);"),
    ('puts("k<<<1, 1>>>(x)"); // k<<<1,1>>>()', 'puts("k<<<1, 1>>>(x)"); // k<<<1,1>>>()'),
])
def test_kernel_launches_become_hipLaunchKernelGGL(src: str, want: str) -> None:  # noqa: N802
    out, report = hipify(src)
    assert out == want
    assert report.by_category["kernel_launch"] == want.count("hipLaunchKernelGGL")


def test_launches_kept_with_cuda_syntax_and_unparseable_ones_warned() -> None:
    assert hipify("k<<<1, 2>>>(x);", launch_syntax="cuda")[0] == "k<<<1, 2>>>(x);"
    out, report = hipify("(*fp)<<<1, 1>>>(x);\nk<<<1>>>(x);\n")
    assert out == "(*fp)<<<1, 1>>>(x);\nk<<<1>>>(x);\n"
    assert [(w.line, w.kind) for w in report.warnings] == [(1, "launch"), (2, "launch")]
    assert report.unconverted == 2
    with pytest.raises(ValueError, match="launch_syntax"):
        hipify("", launch_syntax="opencl")


def test_symbol_arguments_get_hip_symbol() -> None:
    src = ("cudaMemcpyToSymbol(c_coeffs, h, sizeof(h));\ncudaMemcpyFromSymbol(&v, d_v, 4, 0, cudaMemcpyDeviceToHost);\n"
           "cudaGetSymbolAddress(&p, table[0]);\ncudaMemcpyToSymbol(HIP_SYMBOL(c), h, 4);\n")
    out, _ = hipify(src)
    assert out == ("hipMemcpyToSymbol(HIP_SYMBOL(c_coeffs), h, sizeof(h));\n"
                   "hipMemcpyFromSymbol(&v, HIP_SYMBOL(d_v), 4, 0, hipMemcpyDeviceToHost);\n"
                   "hipGetSymbolAddress(&p, HIP_SYMBOL(table[0]));\nhipMemcpyToSymbol(HIP_SYMBOL(c), h, 4);\n")


def test_warnings_carry_line_kind_and_version() -> None:
    src = ("int main() {\n  cudaThreadSynchronize();\n  cuCtxSynchronize();\n"
           "  cudaBindTexture(0, t, p, 4);\n  cudaThreadSetLimit(cudaLimitStackSize, 1);\n}\n")
    _, report = hipify(src, filename="old.cu")
    assert [(w.line, w.kind, w.name) for w in report.warnings] == [
        (2, "deprecated_cuda", "cudaThreadSynchronize"), (3, "deprecated_hip", "cuCtxSynchronize"),
        (4, "removed_cuda", "cudaBindTexture"), (5, "unsupported", "cudaThreadSetLimit")]
    lines = report.format_warnings().splitlines()
    assert lines[0] == ("  old.cu:2: warning: deprecated CUDA identifier: cudaThreadSynchronize since CUDA 10.0 "
                        "(use the cudaDevice* twin)")
    assert lines[1].startswith("  old.cu:3: warning: deprecated HIP identifier: hipCtxSynchronize (for "
                               "cuCtxSynchronize) since HIP 1.9.0")
    assert lines[2].startswith("  old.cu:4: warning: removed CUDA identifier: cudaBindTexture since CUDA 12.0")
    assert lines[3].startswith("  old.cu:5: warning: unsupported HIP identifier: cudaThreadSetLimit")


def test_report_counts_by_hand() -> None:
    src = ("#include <cuda_runtime.h>\n"                            # 1: include_cuda_main_header
           "__global__ void k(float* x) { __syncthreads(); }\n"     # 2: device_function (kept)
           "int main() {\n"                                         # 3
           "  float* d; cudaMalloc(&d, 4);\n"                       # 4: memory
           "  k<<<1, 1>>>(d);\n"                                    # 5: kernel_launch
           "  cudaError_t e = cudaGetLastError();\n"                # 6: type, error
           "  cudaThreadSetLimit(cudaLimitStackSize, 1);\n"         # 7: unsupported + numeric_literal
           "  cublasCreate(&h);\n"                                  # 8: library (cuBLAS)
           "  return e == cudaSuccess ? 0 : 1;\n}\n")               # 9: numeric_literal
    out, r = hipify(src, filename="x.cu")
    assert r.converted == 9 and r.unconverted == 1
    assert dict(r.by_category) == {"include_cuda_main_header": 1, "device_function": 1, "memory": 1,
                                   "kernel_launch": 1, "type": 1, "error": 1, "numeric_literal": 2, "library": 1}
    assert dict(r.by_api) == {"CUDA RT API": 7, "CUDA Device API": 1, "cuBLAS API": 1}
    assert r.by_name[("cudaMalloc", "hipMalloc")] == 1 and r.by_name[("__syncthreads", "__syncthreads")] == 1
    assert r.changed_lines == {1, 4, 5, 6, 7, 8, 9} and r.total_lines == 10
    assert r.total_bytes == len(src) and r.conversion_percent == pytest.approx(90.0)
    text = r.format()
    assert text.startswith("[HIPIFY] info: file 'x.cu' statistics:\n  CONVERTED refs count: 9\n"
                           "  UNCONVERTED refs count: 1\n  CONVERSION %: 90.0\n")
    assert "  CHANGED lines of code: 7\n  TOTAL lines of code: 10\n" in text
    assert "[HIPIFY] info: CONVERTED refs by names:\n" in text and "  cudaMalloc => hipMalloc: 1" in text
    assert "  CUDA RT API: 7" in text and "  WARNINGS: 1" in text


def test_merged_report_is_the_global_block() -> None:
    _, a = hipify("cudaMalloc(p);\n", filename="a.cu")
    _, b = hipify("cudaFree(p);\ncudaFree(q);\ncudaThreadSetLimit(x, 1);\n", filename="b.cu")
    g = HipifyReport.merge([a, b])
    assert g.filename == "GLOBAL" and g.files == 2
    assert (g.converted, g.unconverted, g.total_lines, len(g.changed_lines)) == (3, 1, 4, 3)
    assert g.format().startswith("[HIPIFY] info: file 'GLOBAL' statistics:\n  CONVERTED refs count: 3\n")


def test_cli_writes_the_translation_and_reports(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    src, out = tmp_path / "old.cu", tmp_path / "old.hip"
    src.write_text("int main() { cudaThreadSynchronize(); return 0; }\n")
    assert cli_main(["hipify", str(src), "-o", str(out), "--print-stats"]) == 0
    assert out.read_text() == "int main() { hipDeviceSynchronize(); return 0; }\n"
    err = capsys.readouterr().err
    assert f"  {src}:1: warning: deprecated CUDA identifier: cudaThreadSynchronize" in err
    assert f"[HIPIFY] info: file '{src}' statistics:" in err and "CONVERTED refs count: 1" in err

    assert cli_main(["hipify", str(src), "--quiet-warnings"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "int main() { hipDeviceSynchronize(); return 0; }\n" and captured.err == ""

    other = tmp_path / "b.cu"
    other.write_text("cudaFree(p);\n")
    assert cli_main(["hipify", str(src), str(other), "--examine"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "file 'GLOBAL' statistics:" in captured.err
    assert cli_main(["hipify", str(tmp_path / "missing.cu")]) == 1
    assert "cannot read" in capsys.readouterr().err


# --- the corpus: translation ---------------------------------------------------------------------------------


def read_expect(name: str) -> tuple[set[str], list[tuple[int, str, str]]]:
    names: set[str] = set()
    warns: list[tuple[int, str, str]] = []
    for line in (CORPUS / f"{name}.expect").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key == "names":
            names.update(rest.split())
        elif key == "warn":
            n, kind, what = rest.split()
            warns.append((int(n), kind, what))
    return names, warns


def test_corpus_has_the_kinds_of_programs_people_write() -> None:
    assert len(PROGRAMS) >= 15
    assert {"vector_add", "matmul_shared", "reduction", "histogram", "scan", "transpose", "stencil", "softmax",
            "streams_events", "constant_memory", "templates"} <= set(PROGRAMS)
    assert all((CORPUS / f"{p}.expect").is_file() for p in PROGRAMS)


@pytest.mark.parametrize("name", PROGRAMS)
def test_corpus_translation(name: str, table: Table) -> None:
    src = (CORPUS / f"{name}.cu").read_text()
    out, report = hipify_file(CORPUS / f"{name}.cu")
    names, warns = read_expect(name)
    in_code = code_words(out) | {d.path for d in scan(out).includes}
    assert not names - in_code, f"missing from the HIP output: {sorted(names - in_code)}"
    assert [(w.line, w.kind, w.name) for w in report.warnings] == warns
    # Nothing the table converts is left in code; comments and literals are untouched; no <<< remains.
    convertible = {e.cuda for e in table.identifiers.values() if e.support != "unsupported" and e.hip != e.cuda}
    assert not code_words(out) & convertible
    assert non_code(out) == non_code(src)
    assert "<<<" not in scan(out).masked
    # Every CUDA name it produced in code is one the table gives, and the output is a fixed point.
    assert report.converted > 0 and report.names() <= {e.hip for e in table} | {"hipLaunchKernelGGL"}
    assert hipify(out)[0] == out


# --- the corpus: the original through strata.cuda, the translation through strata.hip --------------------------

Outputs = dict[str, np.ndarray]
RNG_SEED = 20


def launch(face: ModuleType, kernel: cuda.Kernel, grid: Any, block: Any, args: tuple[Any, ...],
           shared_mem: int = 0, stream: cuda.Stream | None = None) -> None:
    """Launch as each face's host code spells it: kernel<<<...>>> for CUDA, hipLaunchKernelGGL for HIP."""
    if face is hip:
        hip.hipLaunchKernelGGL(kernel, grid, block, shared_mem, stream, *args)
    else:
        kernel.launch(grid, block, args, shared_mem=shared_mem, stream=stream)


def rng() -> np.random.Generator:
    return np.random.default_rng(RNG_SEED)


def run_vector_add(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 1000
    a, b = rng().standard_normal((2, n), dtype=np.float32)
    da, db, dc = face.to_device(a), face.to_device(b), face.zeros(n, np.float32)
    launch(face, mod.get_function("vector_add"), (n + 255) // 256, 256, (da, db, dc, np.int32(n)))
    return {"a": a, "b": b, "c": dc.get()}


def check_vector_add(o: Outputs) -> None:
    np.testing.assert_array_equal(o["c"], o["a"] + o["b"])


def run_matmul_shared(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 40  # not a multiple of the 16x16 tile: the edge tiles are padded with zeros
    A, B = rng().standard_normal((2, n, n), dtype=np.float32)
    dA, dB, dC = face.to_device(A), face.to_device(B), face.zeros((n, n), np.float32)
    launch(face, mod.get_function("matmul_tiled"), (3, 3), (16, 16), (dA, dB, dC, np.int32(n)))
    return {"A": A, "B": B, "C": dC.get()}


def check_matmul_shared(o: Outputs) -> None:
    np.testing.assert_allclose(o["C"], o["A"].astype(np.float64) @ o["B"], rtol=1e-4, atol=1e-4)


def run_reduction(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 5000
    x = rng().integers(0, 10, n).astype(np.float32)  # small integers: every partial sum is exact
    dx, out = face.to_device(x), face.malloc(4)
    face.memset(out, 0, 4)
    launch(face, mod.get_function("reduce_sum"), 4, 256, (dx, out, np.int32(n)))
    total = np.zeros(1, np.float32)
    face.memcpy(total, out, 4, "DeviceToHost")
    face.free(out)
    return {"x": x, "sum": total}


def check_reduction(o: Outputs) -> None:
    assert o["sum"][0] == o["x"].sum(dtype=np.float64)


def run_histogram(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 10_000
    data = (rng().standard_normal(n) * 40 + 128).clip(0, 255).astype(np.uint8)
    bins = face.zeros(256, np.uint32)
    launch(face, mod.get_function("histogram256"), 4, 256, (face.to_device(data), bins, np.int32(n)))
    return {"data": data, "bins": bins.get()}


def check_histogram(o: Outputs) -> None:
    np.testing.assert_array_equal(o["bins"], np.bincount(o["data"], minlength=256).astype(np.uint32))


def run_scan(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 256
    x = rng().integers(-50, 50, n).astype(np.int32)
    out = face.zeros(n, np.int32)
    launch(face, mod.get_function("inclusive_scan"), 1, n, (face.to_device(x), out, np.int32(n)),
           shared_mem=2 * n * 4)
    return {"x": x, "y": out.get()}


def check_scan(o: Outputs) -> None:
    np.testing.assert_array_equal(o["y"], np.cumsum(o["x"], dtype=np.int32))


def run_transpose(face: ModuleType, mod: cuda.Module) -> Outputs:
    w, h = 70, 45
    a = rng().standard_normal((h, w), dtype=np.float32)
    out = face.zeros((w, h), np.float32)
    launch(face, mod.get_function("transpose_tiled"), ((w + 31) // 32, (h + 31) // 32), (32, 8),
           (out, face.to_device(a), np.int32(w), np.int32(h)))
    return {"a": a, "t": out.get()}


def check_transpose(o: Outputs) -> None:
    np.testing.assert_array_equal(o["t"], o["a"].T)


def run_stencil(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 1000
    x = rng().standard_normal(n, dtype=np.float32)
    y = face.zeros(n, np.float32)
    launch(face, mod.get_function("stencil_1d"), (n + 127) // 128, 128, (face.to_device(x), y, np.int32(n)))
    return {"x": x, "y": y.get()}


def check_stencil(o: Outputs) -> None:
    padded = np.pad(o["x"], 3)
    want = np.zeros_like(o["x"])
    for off in range(7):  # the kernel's order of float32 additions
        want = want + padded[off : off + len(o["x"])]
    np.testing.assert_array_equal(o["y"], want)


def run_softmax(face: ModuleType, mod: cuda.Module) -> Outputs:
    rows, cols = 6, 300
    x = rng().standard_normal((rows, cols), dtype=np.float32) * 3
    y = face.zeros((rows, cols), np.float32)
    launch(face, mod.get_function("softmax_rows"), rows, 128, (face.to_device(x), y, np.int32(cols)))
    return {"x": x, "y": y.get()}


def check_softmax(o: Outputs) -> None:
    x = o["x"].astype(np.float64)
    e = np.exp(x - x.max(axis=1, keepdims=True))
    np.testing.assert_allclose(o["y"], e / e.sum(axis=1, keepdims=True), rtol=2e-5, atol=1e-8)


def run_streams_events(face: ModuleType, mod: cuda.Module) -> Outputs:
    n, nstreams = 4096, 4
    chunk = n // nstreams
    h = face.pinned_empty(n, np.float32)
    h[:] = rng().standard_normal(n, dtype=np.float32)
    x = h.copy()
    d = face.zeros(n, np.float32)
    streams = [face.Stream(non_blocking=True) for _ in range(nstreams)]
    done = [face.Event(timing=False) for _ in range(nstreams)]
    start, stop = face.Event(), face.Event()
    start.record(streams[0])
    scale_offset, square_all = mod.get_function("scale_offset"), mod.get_function("square_all")
    for s in range(nstreams):
        part = slice(s * chunk, (s + 1) * chunk)
        face.memcpy_async(d.ptr + s * chunk * 4, h[part], chunk * 4, "HostToDevice", stream=streams[s])
        launch(face, scale_offset, (chunk + 255) // 256, 256,
               (d.ptr + s * chunk * 4, np.float32(2), np.float32(1), np.int32(chunk)), stream=streams[s])
        done[s].record(streams[s])
    for s in range(1, nstreams):
        streams[0].wait_event(done[s])
    launch(face, square_all, 8, 256, (d, np.int32(n)), stream=streams[0])
    face.memcpy_async(h, d, n * 4, "DeviceToHost", stream=streams[0])
    stop.record(streams[0])
    streams[0].synchronize()
    elapsed = start.elapsed_time(stop)
    return {"x": x, "y": np.array(h), "positive_time": np.array([elapsed > 0])}


def check_streams_events(o: Outputs) -> None:
    np.testing.assert_array_equal(o["y"], np.square(o["x"] * np.float32(2) + np.float32(1)))
    assert o["positive_time"].all()


def run_constant_memory(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 1024
    coeffs = np.array([1, -1, 0.5, -0.25, 0.125, 0, 0, 0.01], np.float32)
    x = rng().uniform(-1.5, 1.5, n).astype(np.float32)
    face.memcpy_to_symbol(mod, "c_coeffs", coeffs)
    face.memcpy_to_symbol(mod, "d_calls", np.zeros(1, np.int32))
    y = face.zeros(n, np.float32)
    launch(face, mod.get_function("poly_eval"), n // 256, 256, (face.to_device(x), y, np.int32(n)))
    calls = np.zeros(1, np.int32)
    face.memcpy_from_symbol(calls, mod, "d_calls")
    return {"coeffs": coeffs, "x": x, "y": y.get(), "calls": calls}


def check_constant_memory(o: Outputs) -> None:
    assert o["calls"][0] == 1
    x, acc = o["x"].astype(np.float64), np.float64(o["coeffs"][-1])
    for c in o["coeffs"][-2::-1]:
        acc = acc * x + c
    np.testing.assert_allclose(o["y"], acc, rtol=1e-5, atol=1e-6)


TEMPLATE_NAMES = ("scale<float>", "scale<double>", "scale<int>", "axpy<float, 4>")


def run_templates(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 1000
    xf = rng().standard_normal(n, dtype=np.float32)
    xd, xi = xf.astype(np.float64), np.arange(n, dtype=np.int32)
    df, dd, di = face.to_device(xf), face.to_device(xd), face.to_device(xi)
    launch(face, mod.get_function("scale<float>"), (n + 127) // 128, 128, (df, np.float32(2), np.int32(n)))
    launch(face, mod.get_function("scale<double>"), 8, 128, (dd, np.float64(0.5), np.int32(n)))
    launch(face, mod.get_function("scale<int>"), 8, 128, (di, np.int32(3), np.int32(n)))
    ys = face.to_device(np.ones(n, np.float32))
    launch(face, mod.get_function("axpy<float, 4>"), (n // 4 + 127) // 128, 128, (df, ys, np.float32(1), np.int32(n)))
    return {"x": xf, "f": df.get(), "d": dd.get(), "i": di.get(), "axpy": ys.get()}


def check_templates(o: Outputs) -> None:
    np.testing.assert_array_equal(o["f"], o["x"] * np.float32(2))
    np.testing.assert_array_equal(o["d"], o["x"].astype(np.float64) * 0.5)
    np.testing.assert_array_equal(o["i"], np.arange(1000, dtype=np.int32) * 3)
    np.testing.assert_array_equal(o["axpy"], o["x"] * np.float32(2) + np.float32(1))


def run_saxpy_occupancy(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 5000
    kernel = mod.get_function("saxpy")
    _, block = face.occupancy_max_potential_block_size(kernel)
    per_sm = face.occupancy_max_active_blocks_per_multiprocessor(kernel, block)
    sms = face.get_device_properties(face.get_device()).multiProcessorCount
    grid = min(sms * per_sm, (n + block - 1) // block)  # the .cu launches sms * per_sm; fewer suffice for n
    x, y = rng().standard_normal((2, n), dtype=np.float32)
    dy = face.to_device(y)
    launch(face, kernel, grid, block, (np.int32(n), np.float32(2), face.to_device(x), dy))
    return {"x": x, "y0": y, "y": dy.get(), "config": np.array([block, per_sm, sms, grid])}


def check_saxpy_occupancy(o: Outputs) -> None:
    block, per_sm, sms, grid = o["config"]
    assert block % 32 == 0 and 0 < block <= 1024 and per_sm >= 1 and sms >= 1 and grid >= 1
    want = (np.float64(2) * o["x"] + o["y0"]).astype(np.float32)  # one FMA: one rounding
    np.testing.assert_array_equal(o["y"], want)


def run_dot_product(face: ModuleType, mod: cuda.Module) -> Outputs:
    n, blocks = 3000, 4
    a, b = rng().standard_normal((2, n), dtype=np.float32)
    partial = face.zeros(blocks, np.float32)
    launch(face, mod.get_function("dot_partial"), blocks, 256, (face.to_device(a), face.to_device(b), partial,
                                                                np.int32(n)))
    return {"a": a, "b": b, "partial": partial.get()}


def check_dot_product(o: Outputs) -> None:
    got = o["partial"].astype(np.float64).sum()
    assert got == pytest.approx(np.dot(o["a"].astype(np.float64), o["b"]), rel=1e-5, abs=1e-4)


def run_blur2d(face: ModuleType, mod: cuda.Module) -> Outputs:
    w, h = 37, 23
    img = rng().uniform(0, 1, (h, w)).astype(np.float32)
    out = face.zeros((h, w), np.float32)
    launch(face, mod.get_function("box_blur"), ((w + 15) // 16, (h + 15) // 16), (16, 16),
           (face.to_device(img), out, np.int32(w), np.int32(h), np.int32(w)))
    return {"img": img, "out": out.get()}


def check_blur2d(o: Outputs) -> None:
    img = o["img"]
    h, w = img.shape
    ys, xs = np.arange(h)[:, None], np.arange(w)[None, :]
    acc = np.zeros_like(img)
    for dy in (-1, 0, 1):  # the kernel's order of float32 additions
        for dx in (-1, 0, 1):
            acc = acc + img[np.clip(ys + dy, 0, h - 1), np.clip(xs + dx, 0, w - 1)]
    np.testing.assert_array_equal(o["out"], acc * np.float32(1.0 / 9.0))


def run_half_precision(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 512
    x, y = rng().uniform(-2, 2, (2, n)).astype(np.float32)
    hx, hy = face.zeros(n, np.float16), face.zeros(n, np.float16)
    to_half = mod.get_function("to_half")
    launch(face, to_half, n // 256, 256, (face.to_device(x), hx, np.int32(n)))
    launch(face, to_half, n // 256, 256, (face.to_device(y), hy, np.int32(n)))
    launch(face, mod.get_function("haxpy2"), 1, 256, (np.int32(n // 2), np.float32(3), hx, hy))
    out = face.zeros(n, np.float32)
    launch(face, mod.get_function("to_float"), n // 256, 256, (hy, out, np.int32(n)))
    return {"x": x, "y": y, "out": out.get()}


def check_half_precision(o: Outputs) -> None:
    hx, hy = o["x"].astype(np.float16), o["y"].astype(np.float16)
    # __hfma2 rounds once: the float64 a*x+y of halves is exact, so one rounding to half is the answer.
    want = (3.0 * hx.astype(np.float64) + hy.astype(np.float64)).astype(np.float16).astype(np.float32)
    np.testing.assert_array_equal(o["out"], want)


def run_legacy_api(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 256
    x = np.arange(n, dtype=np.int32)
    d = face.to_device(x)
    launch(face, mod.get_function("add_one"), 1, n, (d, np.int32(n)))
    return {"x": x, "y": d.get()}


def check_legacy_api(o: Outputs) -> None:
    np.testing.assert_array_equal(o["y"], o["x"] + 1)


def run_driver_api(face: ModuleType, mod: cuda.Module) -> Outputs:
    n = 4096
    x, y = rng().standard_normal((2, n), dtype=np.float32)
    args: tuple[Any, ...]
    if face is hip:  # the HIP translation's calls, by their C names
        fn = hip.hipModuleGetFunction(mod, "scale_add")
        d_x, d_y = hip.hipMalloc(n * 4), hip.hipMalloc(n * 4)
        hip.hipMemcpyHtoD(d_x, x, n * 4)
        hip.hipMemcpyHtoD(d_y, y, n * 4)
        args = (d_y, d_x, np.float32(2), np.int32(n))
        hip.hipModuleLaunchKernel(fn, n // 128, 1, 1, 128, 1, 1, 0, 0, args)
        hip.hipDeviceSynchronize()
        out = np.empty(n, np.float32)
        hip.hipMemcpyDtoH(out, d_y, n * 4)
        hip.hipFree(d_x)
        hip.hipFree(d_y)
    else:
        fn = mod.get_function("scale_add")
        d_x, d_y = cuda.malloc(n * 4), cuda.malloc(n * 4)
        cuda.memcpy(d_x, x, n * 4, "HostToDevice")
        cuda.memcpy(d_y, y, n * 4, "HostToDevice")
        fn.launch((n // 128, 1, 1), (128, 1, 1), (d_y, d_x, np.float32(2), np.int32(n)))
        cuda.synchronize()
        out = np.empty(n, np.float32)
        cuda.memcpy(out, d_y, n * 4, "DeviceToHost")
        cuda.free(d_x)
        cuda.free(d_y)
    return {"x": x, "y0": y, "y": out}


def check_driver_api(o: Outputs) -> None:
    np.testing.assert_array_equal(o["y"], (np.float64(2) * o["x"] + o["y0"]).astype(np.float32))


def run_cublas_check(face: ModuleType, mod: cuda.Module) -> Outputs:
    m, n, k = 20, 12, 9
    A = rng().standard_normal((k, m), dtype=np.float32)  # column-major m x k is row-major k x m
    B = rng().standard_normal((n, k), dtype=np.float32)
    C = face.zeros((n, m), np.float32)
    launch(face, mod.get_function("gemm_naive"), ((n + 15) // 16, (m + 15) // 16), (16, 16),
           (np.int32(m), np.int32(n), np.int32(k), np.float32(1), face.to_device(A), face.to_device(B),
            np.float32(0), C))
    return {"A": A, "B": B, "C": C.get()}


def check_cublas_check(o: Outputs) -> None:
    # Column-major C (m x n) = A (m x k) @ B (k x n); in row-major storage that is C^T = B^T-rows @ A-rows.
    want = o["B"].astype(np.float64) @ o["A"]
    np.testing.assert_allclose(o["C"], want, rtol=1e-5, atol=1e-5)


RUNS: dict[str, tuple[Callable[[ModuleType, cuda.Module], Outputs], Callable[[Outputs], None]]] = {
    name: (globals()[f"run_{name}"], globals()[f"check_{name}"]) for name in PROGRAMS
}


@pytest.mark.parametrize("name", PROGRAMS)
def test_corpus_runs_identically_through_strata_hip(name: str) -> None:
    src = (CORPUS / f"{name}.cu").read_text()
    hip_src, _ = hipify(src, filename=f"{name}.cu")
    exprs = TEMPLATE_NAMES if name == "templates" else ()
    cuda_mod = cuda.compile(src, name_expressions=exprs, name=f"{name}.cu")
    hip_mod = hip.compile(hip_src, name_expressions=exprs, name=f"{name}.hip")
    assert isinstance(hip_mod, hip.Module) and sorted(hip_mod.kernels) == sorted(cuda_mod.kernels)
    run, check = RUNS[name]
    via_cuda, via_hip = run(cuda, cuda_mod), run(hip, hip_mod)
    assert via_cuda.keys() == via_hip.keys()
    for key in via_cuda:
        a, b = via_cuda[key], via_hip[key]
        assert a.shape == b.shape and a.dtype == b.dtype, key
        assert a.tobytes() == b.tobytes(), f"{name}: '{key}' differs between the CUDA and the HIP build"
    check(via_hip)
