"""`torch.onnx` under strata's torch alias: importable (programs import it at the top and export only
behind a flag), but strata has no ONNX exporter, so `export` raises `OnnxExportUnsupported`, a
NotImplementedError naming what was asked.

Example:
    >>> from strata.framework import onnx_stub as onnx
    >>> try:
    ...     onnx.export(None, (), "model.onnx")
    ... except NotImplementedError as e:
    ...     print(type(e).__name__)
    OnnxExportUnsupported
"""

from __future__ import annotations

from typing import Any


class OnnxExportUnsupported(NotImplementedError):
    """torch.onnx.export (or another exporter entry point) was called; strata cannot write ONNX."""


def export(model: Any, args: Any = (), f: Any = None, *rest: Any, **kwargs: Any) -> Any:
    """Raises OnnxExportUnsupported: strata provides no ONNX exporter."""
    raise OnnxExportUnsupported(f"torch.onnx.export: strata does not implement ONNX export (asked to write "
                                f"{type(model).__name__} to {f!r}); run the export under the real PyTorch")


def dynamo_export(model: Any, *args: Any, **kwargs: Any) -> Any:
    """Raises OnnxExportUnsupported, as export."""
    raise OnnxExportUnsupported("torch.onnx.dynamo_export: strata does not implement ONNX export")


def is_in_onnx_export() -> bool:
    """False: strata never exports."""
    return False


__all__ = ["OnnxExportUnsupported", "dynamo_export", "export", "is_in_onnx_export"]
