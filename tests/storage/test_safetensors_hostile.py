"""Hostile safetensors headers: whatever the JSON holds, the reader answers with its typed corrupt-file
error (what, where, expected), never a RecursionError or TypeError from deep inside."""

import json
import struct

import numpy as np
import pytest

from strata.storage import safetensors as st


def _blob(header_text: str, buffer: bytes = b"") -> bytes:
    raw = header_text.encode("utf-8")
    raw += b" " * (-len(raw) % 8)
    return struct.pack("<Q", len(raw)) + raw + buffer


@pytest.mark.parametrize("depth", [10_000, 200_000])
def test_deeply_nested_header_is_an_invalid_header(depth: int) -> None:
    text = '{"w": ' + "[" * depth + "]" * depth + "}"
    with pytest.raises(st.InvalidHeaderError, match="nested too deeply") as info:
        st.deserialize(_blob(text))
    assert "dtype, shape, data_offsets" in str(info.value)  # what a header should be


def test_deeply_nested_metadata_is_an_invalid_header() -> None:
    text = '{"__metadata__": {"k": ' + "{\"a\": " * 50_000 + "1" + "}" * 50_000 + "}}"
    with pytest.raises(st.InvalidHeaderError):
        st.deserialize(_blob(text))


@pytest.mark.parametrize("dtype", [["F32"], {"name": "F32"}, 32, None, True])
def test_dtype_of_the_wrong_json_type_is_an_invalid_dtype(dtype: object) -> None:
    header = {"w": {"dtype": dtype, "shape": [1], "data_offsets": [0, 4]}}
    with pytest.raises(st.InvalidDtypeError) as info:
        st.deserialize(_blob(json.dumps(header), b"\0" * 4))
    msg = str(info.value)
    assert "'w'" in msg and repr(dtype) in msg and "F32" in msg.split("supported:")[1]  # where, what, expected


def test_a_valid_file_still_reads_after_the_checks() -> None:
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = st.deserialize(st.serialize({"x": x}))
    np.testing.assert_array_equal(got["x"], x)


def test_nesting_is_judged_the_same_whatever_the_recursion_limit() -> None:
    # json's parser copes with deep nesting once something raised the recursion limit (the engine does for
    # deep device recursion): the header check must not depend on that (a failure seen only in suite order)
    import sys

    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, 50_000))
    try:
        text = '{"w": ' + "[" * 10_000 + "]" * 10_000 + "}"
        with pytest.raises(st.InvalidHeaderError, match="nested too deeply"):
            st.deserialize(_blob(text))
    finally:
        sys.setrecursionlimit(old)
