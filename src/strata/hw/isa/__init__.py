"""PTX instruction semantics, one module per family; importing this package registers them all."""

# Each family module registers its lowerings on import.
from strata.hw.isa import families  # noqa: E402,F401
from strata.hw.isa.registry import REGISTRY, Op, lowers

__all__ = ["REGISTRY", "Op", "lowers"]
