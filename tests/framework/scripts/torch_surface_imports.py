"""Run under `strata run --as-torch`: the module aliases and torch-level names programs reach for first.
Prints one line per check; the test compares against expectations (and the real torch prints the same)."""

import io

import torch
import torch.backends.cudnn as cudnn
import torch.multiprocessing as mp
import torch.nn as nn
import torch.nn.parallel
import torch.onnx
import torch.utils.data.dataloader
from torch.cuda.amp import GradScaler, autocast
from torch.utils.data.dataset import Dataset
from torch.utils.data.sampler import RandomSampler

cudnn.benchmark = True
print("cudnn", torch.backends.cudnn.benchmark, cudnn.is_available())
if torch.accelerator.is_available():
    print("accelerator", True, torch.accelerator.device_count() >= 1, torch.accelerator.current_device_index())
else:
    print("accelerator", False)
dev = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
print("device", dev.type)
print("mp", callable(mp.set_start_method), mp.cpu_count() >= 1)
print("dataloader", torch.utils.data.dataloader.DataLoader is torch.utils.data.DataLoader,
      issubclass(RandomSampler, torch.utils.data.Sampler), Dataset is torch.utils.data.Dataset)
print("amp", GradScaler(enabled=False).get_scale(), autocast is torch.cuda.amp.autocast,
      callable(torch.amp.GradScaler))
print("parallel", type(nn.DataParallel(nn.Linear(2, 2)).module).__name__,
      nn.parallel.DataParallel is nn.DataParallel)
try:
    torch.onnx.export(nn.Linear(2, 2), torch.ones(1, 2), "m.onnx")
except (NotImplementedError, ImportError):  # strata: OnnxExportUnsupported; torch without onnxscript: ImportError
    print("onnx raised")
x = torch.arange(24.0).reshape(2, 3, 4)
print("flatten", list(torch.flatten(x, 1).shape), list(torch.transpose(x, 0, 2).shape))
print("mm", torch.mm(torch.ones(2, 3), torch.ones(3, 2)).sum().item(),
      torch.ones(2, 3).mm(torch.ones(3, 1)).sum().item())
print("legacy", torch.FloatTensor([1, 2]).dtype, torch.LongTensor(2, 3).dtype, list(torch.empty(size=(2, 5)).shape),
      isinstance(torch.zeros(2), torch.FloatTensor))
print("range", torch.arange(10)[range(2, 8, 3)].tolist())
if torch.accelerator.is_available():  # pinning needs an accelerator (the real torch here has none)
    print("pin", torch.ones(3).pin_memory().sum().item(), callable(torch.ones(1).is_pinned))
adj = torch.sparse_coo_tensor(torch.tensor([[0, 1, 1], [1, 0, 2]]), torch.tensor([1.0, 2.0, 3.0]), (2, 3))
print("spmm", torch.spmm(adj, torch.ones(3, 2)).tolist(), torch.sparse.mm(adj, torch.ones(3, 1)).tolist())
buf = io.BytesIO()
torch.save({"w": torch.arange(3.0), "n": 2}, buf)
buf.seek(0)
print("save", buf.getvalue()[:2], torch.load(buf)["w"].tolist(), torch.serialization.add_safe_globals is not None)
if torch.accelerator.is_available():  # the legacy cuda types need a GPU
    lt = torch.cuda.LongTensor([1, 2])
    print("cuda_legacy", lt.device.type, lt.dtype, isinstance(lt, torch.cuda.LongTensor), lt.type())
gx, gy = torch.meshgrid(torch.arange(2), torch.arange(3), indexing="xy")
print("composites", gx.tolist(), torch.unique(torch.tensor([3, 1, 3])).tolist(),
      torch.bincount(torch.tensor([0, 2])).tolist(),
      torch.ones(2).addcmul_(torch.ones(2), torch.ones(2), value=2).tolist())
print("done")
