"""strata.storage: moving tensors between files and GPU memory, the role of GPUDirect Storage (cuFile).
`safetensors` is the file format (bytes <-> dict of NumPy arrays, with strict validation); `loader` reads
files into device memory by the direct path (O_DIRECT into the device's memory) or the bounce path (pinned
host memory + cudaMemcpy) and writes them back; `cufile` is the cuFile-shaped API. See docs/storage.md.
"""

from strata.storage import cufile
from strata.storage.cufile import CuFileError
from strata.storage.loader import (
    FileHeader,
    LoadedTensor,
    LoadedTensors,
    LoadReport,
    TensorDict,
    load_safetensors,
    read_file_header,
    read_tensors,
    save_safetensors,
)
from strata.storage.tensor_type import register_tensor_type

__all__ = ["CuFileError", "FileHeader", "LoadReport", "LoadedTensor", "LoadedTensors", "TensorDict", "cufile",
           "load_safetensors", "read_file_header", "read_tensors", "register_tensor_type", "save_safetensors"]
