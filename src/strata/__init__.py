"""strata: a whole GPU software stack in Python, from a PyTorch-style framework down to a virtual
GPU that executes real PTX. See README.md and ARCHITECTURE.md.
"""

__version__ = "0.1.0"
