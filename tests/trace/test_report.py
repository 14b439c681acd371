"""The HTML report of a real recording: self-contained, with each section and the kernels' figures."""

from __future__ import annotations

import re
from html.parser import HTMLParser
from pathlib import Path

import numpy as np

import strata.cuda as cuda
import strata.trace as trace
from strata.trace.report import kernel_rows, render_html

SRC = r'extern "C" __global__ void axpy(float a, const float* x, float* y, int n) {' \
      r' int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) y[i] += a * x[i]; }'
CEILINGS = {"name": "H200", "peak_flops": 66.9e12, "tensor_peak_flops": 989e12, "hbm_bytes_per_s": 4.8e12}


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.ids: set[str] = set()
        self.external: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        for k, v in attrs:
            if k == "id" and v:
                self.ids.add(v)
            if k in ("src", "href") and v and re.match(r"(https?:)?//", v):
                self.external.append(v)


def _recording(launches: int = 3) -> trace.Recording:
    axpy = cuda.compile(SRC).get_function("axpy")
    x = cuda.to_device(np.ones(256, np.float32))
    y = cuda.zeros(256, np.float32)
    axpy.launch(1, 256, (np.float32(1), x, y, np.int32(256)))
    cuda.synchronize()
    with trace.record() as rec:
        for _ in range(launches):
            axpy.launch(2, 128, (np.float32(2), x, y, np.int32(256)))
        cuda.synchronize()
    np.testing.assert_array_equal(y.get(), np.full(256, 1 + 2 * launches, np.float32))
    return rec


def test_kernel_rows_aggregate_the_launches() -> None:
    rows = kernel_rows(_recording(3))
    axpy = [r for r in rows if "axpy" in r["kernel"]]
    assert len(axpy) == 1 and axpy[0]["launches"] == 3
    r = axpy[0]
    assert r["modeled_s"] > 0 and 0 < r["occupancy"] <= 1
    assert r["simt_efficiency"] == 1.0  # 256 threads, no divergence
    assert r["coalescing_efficiency"] == 1.0  # unit-stride float loads
    assert r["flops_per_s"] > 0 and r["bytes_per_s"] > 0


def test_report_is_self_contained_with_every_section(tmp_path: Path) -> None:
    rec = _recording(2)
    path = rec.save_html(tmp_path / "report.html", CEILINGS, title="axpy")
    text = path.read_text()
    parser = _Tags()
    parser.feed(text)
    assert {"stack", "timeline", "kernels", "roofline"} <= parser.ids
    assert parser.external == [] and "<script" not in text  # opens with no network
    assert parser.tags.count("svg") == 3  # stack, timeline, roofline
    assert "axpy" in text and "modeled" in text and "hipLaunchKernel" in text
    assert len(re.findall(r"<circle ", text)) >= 1  # the kernel on the roofline


def test_report_of_an_empty_recording_still_renders() -> None:
    text = render_html(trace.Recording(), CEILINGS)
    assert "(no kernels)" in text and text.endswith("</html>")
