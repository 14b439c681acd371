"""Bad input gets a typed error that says what and where: PTX syntax, unsupported instructions,
bad launches, runaway kernels."""

import numpy as np
import pytest

import strata.cuda as cuda
from strata.hw.ptx import parse

HEAD = ".version 8.0\n.target sm_90\n.address_size 64\n"


def test_missing_semicolon_names_line_and_column():
    text = HEAD + ".visible .entry k()\n{\n\t.reg .b32 %r<2>;\n\tmov.u32 %r1, 1\n\tret;\n}\n"
    with pytest.raises(cuda.PTXSyntaxError) as ei:
        cuda.Module.from_ptx(text)
    assert ei.value.line == 8 and ei.value.column == 2
    assert "expected ';'" in str(ei.value) and "ret" in str(ei.value)


def test_unexpected_character():
    with pytest.raises(cuda.PTXSyntaxError) as ei:
        parse(HEAD + ".visible .entry k() { ret; # }")
    assert ei.value.line == 4 and "'#'" in str(ei.value)


def test_unterminated_body():
    with pytest.raises(cuda.PTXSyntaxError, match="missing '}'"):
        parse(HEAD + ".visible .entry k() { ret;")


def test_undeclared_register_and_undefined_label():
    bad_reg = HEAD + ".visible .entry k() {\n mov.u32 %r9, 1;\n ret;\n}"
    with pytest.raises(cuda.PTXSyntaxError, match=r"register %r9 is not declared"):
        cuda.Module.from_ptx(bad_reg)
    bad_label = HEAD + ".visible .entry k() {\n bra $nowhere;\n}"
    with pytest.raises(cuda.PTXSyntaxError, match="undefined label"):
        cuda.Module.from_ptx(bad_label)


def test_newer_ptx_version_rejected():
    with pytest.raises(cuda.PTXSyntaxError, match="newer than supported"):
        parse(".version 10.0\n.target sm_90\n")


def test_unsupported_instruction_named_at_load():
    # multimem (NVLink SHARP reductions through multicast objects) is not modeled
    text = HEAD + ".visible .entry k(.param .u64 p)\n{\n .reg .f32 %f<3>;\n .reg .b64 %rd<2>;\n" \
        " ld.param.u64 %rd1, [p];\n multimem.ld_reduce.relaxed.sys.global.add.f32 %f1, [%rd1];\n ret;\n}\n"
    with pytest.raises(cuda.UnsupportedInstruction) as ei:
        cuda.Module.from_ptx(text)  # at load, before any launch
    e = ei.value
    assert e.opcode == "multimem.ld_reduce.relaxed.sys.global.add.f32" and e.kernel == "k" and e.line == 9
    assert isinstance(e, NotImplementedError)


SRC = r"""
extern "C" __global__ void spin(volatile int* flag) { while (flag[0] == 0) { } }
extern "C" __global__ void add1(int* x, int n) { int i = threadIdx.x; if (i < n) x[i] += 1; }
"""


@pytest.fixture(scope="module")
def mod():
    return cuda.compile(SRC, name="errors.cu")


def test_runaway_kernel_times_out_and_device_survives(mod, monkeypatch):
    monkeypatch.setenv("STRATA_LAUNCH_BUDGET", "200000")
    flag = cuda.zeros(1, np.int32)
    with pytest.raises(cuda.LaunchTimeout) as ei:
        mod.get_function("spin")(1, 32, (flag,)).wait()
    assert ei.value.name == "cudaErrorLaunchTimeout" and "spin" in str(ei.value)
    cuda.current_device().reset()  # a timed-out kernel leaves the context faulted, as in CUDA
    x = cuda.to_device(np.arange(8, dtype=np.int32))
    mod.get_function("add1")(1, 32, (x, np.int32(8)))
    np.testing.assert_array_equal(x.get(), np.arange(1, 9, dtype=np.int32))


def test_argument_count_and_type_errors_name_the_parameter(mod):
    k = mod.get_function("add1")
    x = cuda.zeros(4, np.int32)
    with pytest.raises(TypeError, match=r"expects 2 arguments .*add1_param_0"):
        k(1, 4, (x,))
    with pytest.raises(TypeError, match=r"parameter 1 \(add1_param_1, \.u32\) expects a uint32, got numpy.float32"):
        k(1, 4, (x, np.float32(4)))
    with pytest.raises(TypeError, match="parameter 0"):
        k(1, 4, ("not a pointer", np.int32(4)))


def test_invalid_launch_configurations(mod):
    k = mod.get_function("add1")
    x = cuda.zeros(4, np.int32)
    with pytest.raises(cuda.InvalidLaunchConfig) as ei:
        k(1, (64, 32), (x, np.int32(4)))
    assert ei.value.name == "cudaErrorInvalidConfiguration" and "maxThreadsPerBlock=1024" in str(ei.value)
    with pytest.raises(cuda.InvalidLaunchConfig, match="blockDim.x=2048 exceeds the device limit 1024"):
        k(1, 2048, (x, np.int32(4)))
    with pytest.raises(cuda.InvalidLaunchConfig, match="blockDim.z=128"):
        k(1, (1, 1, 128), (x, np.int32(4)))
    with pytest.raises(cuda.InvalidLaunchConfig, match="positive"):
        k(0, 32, (x, np.int32(4)))
    with pytest.raises(cuda.InvalidLaunchConfig, match="dynamic shared memory"):
        k(1, 32, (x, np.int32(4)), shared_mem=1 << 20)


def test_compile_error_carries_log():
    with pytest.raises(cuda.CompileError) as ei:
        cuda.compile('extern "C" __global__ void k() { undefined_thing(); }', name="bad.cu")
    assert "undefined_thing" in ei.value.log and isinstance(ei.value, ValueError)


CALL_WITH_RETURN = HEAD + """.func (.param .b32 r) f(.param .b32 a)
{
    .reg .b32 %r<2>;
    ld.param.b32 %r1, [a];
    st.param.b32 [r+OFF], %r1;
    ret;
}
.visible .entry k(.param .u64 p)
{
    .reg .b32 %r<3>;
    .reg .b64 %rd<3>;
    mov.u32 %r1, 5;
    {
    .param .b32 param0;
    st.param.b32 [param0+0], %r1;
    .param .b32 retval0;
    call.uni (retval0), f, (param0);
    ld.param.b32 %r2, [retval0+0];
    }
    ld.param.u64 %rd1, [p];
    cvta.to.global.u64 %rd2, %rd1;
    st.global.u32 [%rd2], %r2;
    ret;
}
"""


@pytest.mark.parametrize("off", ["1", "4", "-4"])
def test_call_param_access_outside_its_variable_is_malformed(off: str) -> None:
    # found by the PTX fuzzer: these raised IndexError / a broadcast ValueError from NumPy at run time
    with pytest.raises(cuda.PTXSyntaxError, match=r"st.param.b32 accesses bytes .* of .param r, which has 4"):
        cuda.Module.from_ptx(CALL_WITH_RETURN.replace("OFF", off))


def test_call_param_access_inside_its_variable_runs() -> None:
    out = cuda.zeros(1, np.uint32)
    cuda.Module.from_ptx(CALL_WITH_RETURN.replace("OFF", "0")).get_function("k")((1,), (1,), (out,))
    assert out.get()[0] == 5
