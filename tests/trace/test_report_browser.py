"""The HTML report in a real browser: Debian's headless Chromium loads it from disk with the network
off, and the rendered page has the stack drawing, the timeline, the kernel table and the roofline,
without console errors. Skipped where Chromium is not installed (.ci/run installs it)."""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

import strata
import strata.trace as trace
from strata.trace_run import ceilings

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Chromium is not installed (apt-get install chromium)")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--enable-logging=stderr", "--v=0"]


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, trace.Recording]:
    strata.manual_seed(0)
    model = strata.nn.Sequential(strata.nn.Linear(32, 64), strata.nn.GELU(), strata.nn.Linear(64, 8)).cuda()
    opt = strata.optim.SGD(model.parameters(), lr=0.1)
    x, y = strata.randn(16, 32, device="cuda"), strata.randint(0, 8, (16,), device="cuda")
    with trace.record() as rec:
        loss = strata.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        loss.item()
    path = tmp_path_factory.mktemp("report") / "report.html"
    rec.save_html(path, ceilings("h200"), title="browser test")
    return path, rec


def _chromium(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    return subprocess.run([CHROMIUM, *FLAGS, f"--user-data-dir={tmp_path / 'profile'}", *args],
                          capture_output=True, text=True, timeout=120, check=False)


def test_the_report_renders_with_every_part(report: tuple[Path, trace.Recording], tmp_path: Path) -> None:
    path, rec = report
    r = _chromium(["--dump-dom", path.as_uri()], tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    dom = r.stdout
    for part in ("stack", "timeline", "kernels", "roofline"):
        assert f'id="{part}"' in dom, part
    assert dom.count("<svg") >= 3  # stack drawing, timeline, roofline
    kernels = {e.args["kernel"] for e in rec.events if e.layer == "L0" and e.name == "kernel"}
    rows = re.findall(r"<tr", dom)
    assert len(rows) >= len(kernels) + 1  # a header and a row per kernel (launches of one kernel share it)
    assert "gemm_small&lt;float, float, float, 0&gt;" in dom and "H200" in dom  # the source's names
    console_errors = [ln for ln in r.stderr.splitlines() if "CONSOLE" in ln and ("Error" in ln or "error" in ln)]
    assert not console_errors, console_errors


def test_a_screenshot_is_a_real_picture(report: tuple[Path, trace.Recording], tmp_path: Path) -> None:
    path, _ = report
    png = tmp_path / "shot.png"
    r = _chromium([f"--screenshot={png}", "--window-size=1200,1600", "--hide-scrollbars", path.as_uri()], tmp_path)
    assert r.returncode == 0 and png.is_file(), r.stderr[-2000:]
    data = png.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert len(data) > 30_000  # a blank 1200 x 1600 page compresses to a few KB; the drawn report does not
