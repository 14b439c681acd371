"""Imports every instruction-family module so their lowerings register.

Families that share an opcode by type (add.s32 / add.f32 / add.f16) wrap the lowering registered
before them (registry.lowers_for_types, integer.py's `_PREVIOUS`), so this order shapes those chains.
"""

import importlib

_FAMILIES = ("moves", "memory", "control", "integer", "bits", "compare", "floating", "fma", "half", "convert",
             "warp", "atomic", "tensor", "async_copy", "mbarrier", "video", "surface",
             "texture_ops")

for _name in _FAMILIES:
    try:
        importlib.import_module(f"strata.hw.isa.{_name}")
    except ModuleNotFoundError as e:  # NOTE: families land one by one while the ISA is being built
        if e.name != f"strata.hw.isa.{_name}":
            raise
