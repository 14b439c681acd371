"""The PTX front end: text -> `ir.Module`."""

from strata.hw.ptx.parser import parse

__all__ = ["parse"]
