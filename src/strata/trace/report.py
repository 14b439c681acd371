"""A recording as one self-contained HTML report (inline CSS and SVG; no script, no network).

Sections: a drawing of the stack with the calls that passed through each layer; the timeline (host
tracks per layer on the wall clock, device tracks per engine on the modeled clock); a table of kernels
(modeled time, bound, occupancy, FLOP/s, bytes/s, SIMT and coalescing efficiency); and a roofline of the
kernels against the GPU's ceilings. Device times are modeled (docs/perf-model.md), and labelled so.

`ceilings` describes the GPU for the roofline: {"name", "peak_flops", "hbm_bytes_per_s"}; the caller
gets them from the device catalogue (this package is a leaf and cannot).

Example:
    >>> from strata.trace.events import Event, Recording
    >>> rec = Recording()
    >>> rec.events.append(Event("L0", "kernel", {"kernel": "k", "flops_per_s": 1e12, "bytes_per_s": 1e11,
    ...                   "kernel_s": 1e-6, "bound": "memory"}, 0.0, 0.0, 0.0, 1e-6, correlation=1))
    >>> html = render_html(rec, {"name": "H200", "peak_flops": 67e12, "hbm_bytes_per_s": 4.8e12})
    >>> html.startswith("<!DOCTYPE html>") and "roofline" in html and "<script" not in html
    True
"""

from __future__ import annotations

import html as _html
import math
from collections import defaultdict
from pathlib import Path
from typing import Any

from strata.trace.ecosystem import LAYER_ROLES, counterparts
from strata.trace.events import LAYERS, Event, Recording

ENGINES = ("compute", "dma0", "dma1")
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Helvetica,Arial,sans-serif;margin:24px;color:#1d2330;
background:#fafbfc}h1{font-size:22px;margin:0 0 4px}h2{font-size:17px;margin:28px 0 8px;border-bottom:1px solid #dde;
padding-bottom:4px}.sub{color:#667;font-size:13px}.cards{display:flex;gap:12px;flex-wrap:wrap;margin-top:12px}
.card{background:#fff;border:1px solid #dde;border-radius:6px;padding:8px 12px;min-width:150px}
.card b{display:block;font-size:18px}table{border-collapse:collapse;font-size:12px;background:#fff}
th,td{border:1px solid #dde;padding:3px 7px;text-align:right}th{background:#eef1f6}td.l,th.l{text-align:left}
svg{background:#fff;border:1px solid #dde;border-radius:6px}.mod{color:#a05a00;font-weight:600}
"""
_LAYER_COLORS = {"L5": "#6c5ce7", "L4": "#0984e3", "L3": "#00b894", "L2": "#fdcb6e", "L1": "#e17055", "L0": "#d63031"}


def _esc(x: Any) -> str:
    return _html.escape(str(x), quote=True)


def _fmt_s(s: float) -> str:
    if s >= 1:
        return f"{s:.3f} s"
    if s >= 1e-3:
        return f"{s * 1e3:.3f} ms"
    if s >= 1e-6:
        return f"{s * 1e6:.2f} us"
    return f"{s * 1e9:.0f} ns"


def _fmt_rate(x: float, unit: str) -> str:
    for scale, prefix in ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return f"{x / scale:.2f} {prefix}{unit}"
    return f"{x:.0f} {unit}"


def _top_calls(rec: Recording) -> list[tuple[int, list[Event]]]:
    calls = sorted(rec.by_correlation().items(), key=lambda c: min(e.start for e in c[1]))
    return [(cid, sorted(evs, key=lambda e: (e.start, e.depth))) for cid, evs in calls]


def _kernels(rec: Recording) -> list[Event]:
    return [e for e in rec.events if e.layer == "L0" and e.name == "kernel" and e.device_start is not None]


def _summary(rec: Recording) -> str:
    kernels = _kernels(rec)
    device = [e for e in rec.events if e.device_start is not None and e.device_end is not None]
    wall = (max(e.end for e in rec.events) - min(e.start for e in rec.events)) if rec.events else 0.0
    span = (max(float(e.device_end or 0.0) for e in device) - min(float(e.device_start or 0.0) for e in device)) \
        if device else 0.0
    busy = sum(float(e.args.get("kernel_s", (e.device_end or 0) - (e.device_start or 0))) for e in kernels)
    cards = [("user calls", str(len(rec.by_correlation()))), ("kernels", str(len(kernels))),
             ("emulation wall time", _fmt_s(wall)), ("modeled device span", _fmt_s(span)),
             ("modeled kernel time", _fmt_s(busy))]
    return '<div class="cards">' + "".join(f'<div class="card">{_esc(k)}<b>{_esc(v)}</b></div>' for k, v in cards) \
        + "</div>"


def _stack(rec: Recording) -> str:
    """Six layer boxes; beside each, the distinct event names recorded there and how often."""
    per_layer: dict[str, dict[str, int]] = {layer: defaultdict(int) for layer in LAYERS}
    for e in rec.events:
        if e.layer in per_layer:
            per_layer[e.layer][e.name] += 1
    width, row = 1100, 78
    parts = [f'<svg width="{width}" height="{row * len(LAYERS) + 10}" role="img" aria-label="the stack">']
    for i, layer in enumerate(LAYERS):
        y = 5 + i * row
        package, cuda, rocm = LAYER_ROLES[layer]
        color = _LAYER_COLORS[layer]
        parts.append(f'<rect x="5" y="{y}" width="330" height="{row - 14}" rx="6" fill="{color}" fill-opacity="0.18" '
                     f'stroke="{color}"/>')
        parts.append(f'<text x="15" y="{y + 20}" font-size="14" font-weight="600">{layer} {_esc(package)}</text>')
        parts.append(f'<text x="15" y="{y + 38}" font-size="11">CUDA: {_esc(cuda)}</text>')
        parts.append(f'<text x="15" y="{y + 53}" font-size="11">ROCm: {_esc(rocm)}</text>')
        if i < len(LAYERS) - 1:
            parts.append(f'<line x1="170" y1="{y + row - 14}" x2="170" y2="{y + row}" stroke="#556" '
                         'stroke-width="2"/>')
        names = sorted(per_layer[layer].items(), key=lambda kv: -kv[1])[:6]
        x = 350.0
        for name, count in names:
            c_name, r_name = counterparts(layer, name, {})
            label = f"{name} x{count}"
            w = 8 + 6.3 * len(label)
            if x + w > width - 5:
                break
            tip = f"{name}: {count} event(s). CUDA: {c_name or '-'}; ROCm: {r_name or '-'}"
            parts.append(f'<g><title>{_esc(tip)}</title><rect x="{x}" y="{y + 18}" width="{w:.0f}" height="24" rx="4" '
                         f'fill="{color}" fill-opacity="0.35"/><text x="{x + 4}" y="{y + 34}" font-size="11">'
                         f'{_esc(label)}</text></g>')
            x += w + 6
        if not names:
            parts.append(f'<text x="{x}" y="{y + 34}" font-size="11" fill="#889">(no events)</text>')
    parts.append("</svg>")
    return "".join(parts)


def _timeline(rec: Recording) -> str:
    """Host tracks per layer (wall clock) above device tracks per engine (modeled clock)."""
    width, label_w, track_h = 1100, 190, 22
    events = rec.events
    if not events:
        return "<p>(no events)</p>"
    t0 = min(e.start for e in events)
    t1 = max(e.end for e in events)
    dev = [e for e in events if e.device_start is not None and e.device_end is not None]
    d0: float = min((float(e.device_start or 0.0) for e in dev), default=0.0)
    d1: float = max((float(e.device_end or 0.0) for e in dev), default=1e-9)
    tracks = [(f"host {layer}", layer) for layer in LAYERS] + [(f"device {eng} (modeled)", eng) for eng in ENGINES]
    height = track_h * len(tracks) + 30
    plot_w = width - label_w - 10
    parts = [f'<svg width="{width}" height="{height}" role="img" aria-label="timeline">']
    for i, (label, _) in enumerate(tracks):
        y = 5 + i * track_h
        parts.append(f'<text x="5" y="{y + 15}" font-size="11">{_esc(label)}</text>')
        parts.append(f'<line x1="{label_w}" y1="{y + track_h - 1}" x2="{width - 5}" y2="{y + track_h - 1}" '
                     'stroke="#eee"/>')

    def bar(i: int, a: float, b: float, lo: float, hi: float, color: str, tip: str) -> None:
        scale = plot_w / max(hi - lo, 1e-12)
        x = label_w + (a - lo) * scale
        w = max((b - a) * scale, 1.0)
        y = 7 + i * track_h
        parts.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{track_h - 6}" fill="{color}" '
                     f'fill-opacity="0.75"><title>{_esc(tip)}</title></rect>')

    for e in events:
        if e.layer in LAYERS:
            bar(LAYERS.index(e.layer), e.start, e.end, t0, t1, _LAYER_COLORS[e.layer],
                f"{e.layer} {e.name} {_fmt_s(e.end - e.start)} wall (call #{e.correlation})")
    for e in dev:
        eng = str(e.args.get("engine", "compute"))
        i = len(LAYERS) + (ENGINES.index(eng) if eng in ENGINES else 0)
        assert e.device_start is not None and e.device_end is not None
        bar(i, e.device_start, e.device_end, d0, d1, "#2d3436",
            f"{e.args.get('kernel', e.name)}: modeled {_fmt_s(e.device_end - e.device_start)}")
    y = height - 8
    parts.append(f'<text x="{label_w}" y="{y}" font-size="10" fill="#667">host: {_fmt_s(t1 - t0)} of emulation wall '
                 f'time; device: {_fmt_s(d1 - d0)} modeled</text>')
    parts.append("</svg>")
    return "".join(parts)


def source_names(rec: Recording) -> dict[str, str]:
    """Mangled kernel name -> the name the source launched it by (`gemm_small<float, float, float, 0>`):
    each driver-level launch (L2 cuLaunchKernel, mangled) paired with the runtime launch (L3
    cudaLaunchKernel) it nests in, as Nsight shows demangled names."""
    names: dict[str, str] = {}
    outer: dict[int, str] = {}
    launches = (e for e in rec.events if e.name in ("cudaLaunchKernel", "cuLaunchKernel") and e.anchor is None)
    for e in sorted(launches, key=lambda e: (e.start, e.depth)):
        if e.name == "cudaLaunchKernel":
            outer[e.correlation] = str(e.args.get("kernel", ""))
        elif e.correlation in outer and outer[e.correlation]:
            names.setdefault(str(e.args.get("kernel", "")), outer[e.correlation])
    return names


def kernel_rows(rec: Recording) -> list[dict[str, Any]]:
    """Kernels aggregated by name (the source's name where the trace has it): launches, modeled time,
    and the mean of each rate and efficiency."""
    groups: dict[str, list[Event]] = defaultdict(list)
    pretty = source_names(rec)
    for e in _kernels(rec):
        name = str(e.args.get("kernel", "?"))
        groups[pretty.get(name, name)].append(e)
    rows = []
    for name, evs in groups.items():
        def mean(key: str, evs: list[Event] = evs) -> float:
            vals = [float(e.args[key]) for e in evs if key in e.args]
            return sum(vals) / len(vals) if vals else float("nan")
        total = sum(float(e.args.get("kernel_s", (e.device_end or 0) - (e.device_start or 0))) for e in evs)
        bounds = sorted({str(e.args.get("bound", "?")) for e in evs})
        rows.append({"kernel": name, "launches": len(evs), "modeled_s": total, "bound": "/".join(bounds),
                     "occupancy": mean("occupancy"), "flops_per_s": mean("flops_per_s"),
                     "bytes_per_s": mean("bytes_per_s"), "simt_efficiency": mean("simt_efficiency"),
                     "coalescing_efficiency": mean("coalescing_efficiency")})
    return sorted(rows, key=lambda r: -r["modeled_s"])


def _pct(x: float) -> str:
    return "-" if math.isnan(x) else f"{100 * x:.0f}%"


def _table(rows: list[dict[str, Any]]) -> str:
    head = ("<tr><th class=l>kernel</th><th>launches</th><th>modeled time</th><th>bound</th><th>occupancy</th>"
            "<th>FLOP/s</th><th>DRAM bytes/s</th><th>SIMT eff.</th><th>coalescing eff.</th></tr>")
    body = []
    for r in rows:
        flops = "-" if math.isnan(r["flops_per_s"]) else _fmt_rate(r["flops_per_s"], "FLOP/s")
        bw = "-" if math.isnan(r["bytes_per_s"]) else _fmt_rate(r["bytes_per_s"], "B/s")
        body.append(f'<tr><td class=l title="{_esc(r["kernel"])}">{_esc(r["kernel"][:70])}</td><td>{r["launches"]}</td>'
                    f'<td>{_fmt_s(r["modeled_s"])}</td><td>{_esc(r["bound"])}</td><td>{_pct(r["occupancy"])}</td>'
                    f'<td>{flops}</td><td>{bw}</td><td>{_pct(r["simt_efficiency"])}</td>'
                    f'<td>{_pct(r["coalescing_efficiency"])}</td></tr>')
    return f"<table>{head}{''.join(body) or '<tr><td colspan=9>(no kernels)</td></tr>'}</table>"


def _roofline(rows: list[dict[str, Any]], ceilings: dict[str, Any]) -> str:
    """Log-log FLOP/s against arithmetic intensity, under min(peak, intensity x bandwidth)."""
    peak = float(ceilings.get("peak_flops", 0) or 0)
    bw = float(ceilings.get("hbm_bytes_per_s", 0) or 0)
    width, height, pad = 700, 420, 60
    x_lo, x_hi = 1e-3, 1e4
    y_hi = max(peak, float(ceilings.get("tensor_peak_flops", 0) or 0), 1e12) * 2
    y_lo = y_hi / 1e8

    def px(ai: float) -> float:
        return pad + (math.log10(ai) - math.log10(x_lo)) / (math.log10(x_hi) - math.log10(x_lo)) * (width - 2 * pad)

    def py(f: float) -> float:
        f = min(max(f, y_lo), y_hi)
        return height - pad - (math.log10(f) - math.log10(y_lo)) / (math.log10(y_hi) - math.log10(y_lo)) * (
            height - 2 * pad)

    parts = [f'<svg width="{width}" height="{height}" role="img" aria-label="roofline" class="roofline">']
    parts.append(f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad}" fill="none" '
                 'stroke="#ccd"/>')
    for dec in range(int(math.log10(x_lo)), int(math.log10(x_hi)) + 1):
        x = px(10.0 ** dec)
        parts.append(f'<text x="{x:.0f}" y="{height - pad + 16}" font-size="10" text-anchor="middle">1e{dec}</text>')
    for dec in range(int(math.ceil(math.log10(y_lo))), int(math.log10(y_hi)) + 1):
        y = py(10.0 ** dec)
        parts.append(f'<text x="{pad - 6}" y="{y + 3:.0f}" font-size="10" text-anchor="end">1e{dec}</text>')
    parts.append(f'<text x="{width / 2}" y="{height - 18}" font-size="11" text-anchor="middle">arithmetic intensity '
                 '(FLOP per DRAM byte)</text>')
    parts.append(f'<text x="14" y="{height / 2}" font-size="11" transform="rotate(-90 14 {height / 2})" '
                 'text-anchor="middle">FLOP/s (modeled)</text>')
    if peak and bw:
        pts = []
        for i in range(201):
            ai = 10 ** (math.log10(x_lo) + i * (math.log10(x_hi) - math.log10(x_lo)) / 200)
            pts.append(f"{px(ai):.1f},{py(min(peak, ai * bw)):.1f}")
        parts.append(f'<polyline points="{" ".join(pts)}" fill="none" stroke="#d63031" stroke-width="2"/>')
        tensor = float(ceilings.get("tensor_peak_flops", 0) or 0)
        if tensor > peak:
            knee = tensor / bw
            parts.append(f'<polyline points="{px(peak / bw):.1f},{py(peak):.1f} {px(knee):.1f},{py(tensor):.1f} '
                         f'{px(x_hi):.1f},{py(tensor):.1f}" fill="none" stroke="#d63031" stroke-dasharray="5,4"/>')
            parts.append(f'<text x="{width - pad - 4}" y="{py(tensor) - 6:.0f}" font-size="11" text-anchor="end">'
                         f'tensor cores {_fmt_rate(tensor, "FLOP/s")}</text>')
        parts.append(f'<text x="{width - pad - 4}" y="{py(peak) - 6:.0f}" font-size="11" text-anchor="end">'
                     f'{_esc(ceilings.get("name", ""))} peak {_fmt_rate(peak, "FLOP/s")}, HBM {_fmt_rate(bw, "B/s")}'
                     '</text>')
    for r in rows:
        f, b = r["flops_per_s"], r["bytes_per_s"]
        if math.isnan(f) or math.isnan(b) or f <= 0 or b <= 0:
            continue
        ai = min(max(f / b, x_lo), x_hi)
        parts.append(f'<circle cx="{px(ai):.1f}" cy="{py(f):.1f}" r="5" fill="#0984e3" fill-opacity="0.7">'
                     f'<title>{_esc(r["kernel"])}: {_fmt_rate(f, "FLOP/s")} at {ai:.3g} FLOP/B, '
                     f'{r["launches"]} launch(es)</title></circle>')
    parts.append("</svg>")
    return "".join(parts)


def render_html(rec: Recording, ceilings: dict[str, Any] | None = None, title: str = "strata trace") -> str:
    """The report as one HTML string."""
    ceilings = ceilings or {}
    rows = kernel_rows(rec)
    gpu = ceilings.get("name", "")
    return (f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{_esc(title)}</title>'
            f"<style>{_CSS}</style></head><body>"
            f'<h1>{_esc(title)}</h1><div class="sub">GPU: {_esc(gpu) or "(not given)"}. Host times are emulation wall '
            f'time; <span class="mod">device times are modeled</span>, not measured (docs/perf-model.md).</div>'
            f"{_summary(rec)}"
            f'<h2 id="stack">The stack</h2>{_stack(rec)}'
            f'<h2 id="timeline">Timeline</h2>{_timeline(rec)}'
            f'<h2 id="kernels">Kernels</h2>{_table(rows)}'
            f'<h2 id="roofline">Roofline</h2>{_roofline(rows, ceilings)}'
            "</body></html>")


def save_html(rec: Recording, path: str | Path, ceilings: dict[str, Any] | None = None,
              title: str = "strata trace") -> Path:
    """Write the report to `path`; returns the path."""
    p = Path(path)
    p.write_text(render_html(rec, ceilings, title), encoding="utf-8")
    return p
