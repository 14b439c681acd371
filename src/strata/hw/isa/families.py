"""Imports every instruction-family module so their lowerings register (order does not matter)."""

import importlib

_FAMILIES = ("moves", "memory", "control", "integer", "floating", "half", "convert", "warp", "atomic")

for _name in _FAMILIES:
    try:
        importlib.import_module(f"strata.hw.isa.{_name}")
    except ModuleNotFoundError as e:  # NOTE: families land one by one while the ISA is being built
        if e.name != f"strata.hw.isa.{_name}":
            raise
