"""strata.storage: moving tensors between files and memory. `safetensors` is the file format (bytes <-> dict
of NumPy arrays, with strict validation); the storage-to-GPU path (cuFile's role) builds on it.
"""

# -- block: storage-to-GPU loading (cuFile / GPUDirect Storage role)
from strata.storage import cufile  # noqa: E402
from strata.storage.cufile import CuFileError  # noqa: E402
from strata.storage.loader import (  # noqa: E402
    FileHeader,
    LoadedTensor,
    LoadedTensors,
    LoadReport,
    load_safetensors,
    read_file_header,
    save_safetensors,
)

__all__ = ["CuFileError", "FileHeader", "LoadReport", "LoadedTensor", "LoadedTensors", "cufile", "load_safetensors",
           "read_file_header", "save_safetensors"]
# -- end block: storage-to-GPU loading
