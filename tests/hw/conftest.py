# Pytest wiring for tests/hw: puts this folder on sys.path so test modules can `import ptx_harness`
# (the repo runs pytest in importlib mode, where test modules cannot import conftest or each other).
"""tests/hw conftest: makes the shared ISA test harness (ptx_harness.py) importable."""

from __future__ import annotations

import sys
from pathlib import Path

_HERE = str(Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
