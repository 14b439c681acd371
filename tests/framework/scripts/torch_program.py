"""A small PyTorch program (tensor math, autograd, a custom autograd.Function, DataLoader, torch.cuda,
an nn.Module trained by hand and with torch.optim), written against the real torch API and nothing else.
test_torch_alias.py runs it with PyTorch and with `strata run --as-torch` and compares what it prints."""

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.nn import functional as F2
from torch.optim.lr_scheduler import StepLR
from torch.utils.data import DataLoader, TensorDataset

device = "cuda" if torch.cuda.is_available() else "cpu"
if torch.cuda.is_available():
    torch.cuda.synchronize()
    print("cuda-index-is-int", isinstance(torch.cuda.current_device(), int))
else:
    print("cuda-index-is-int", True)


def show(name, t):
    vals = t.detach().cpu().reshape(-1).tolist()
    print(name, " ".join(f"{v:.6f}" for v in vals))


x = torch.linspace(-1.0, 1.0, 6).reshape(2, 3).to(device).requires_grad_()
w = (torch.arange(12, dtype=torch.float32).reshape(3, 4) / 10 - 0.5).to(device).requires_grad_()
h = torch.tanh(x @ w)
h.retain_grad()
y = h.pow(2).sum() + (x.exp() * 0.5).mean()
y.backward()
show("y", y)
show("x.grad", x.grad)
show("w.grad", w.grad)
show("h.grad", h.grad)

(g,) = torch.autograd.grad((x ** 3).sum(), x, create_graph=True)
(gg,) = torch.autograd.grad(g.sum(), x)
show("second-order", gg)

v = torch.ones(3, device=device, requires_grad=True)
handle = v.register_hook(lambda grad: grad * 10)
(v * v).sum().backward()
handle.remove()
(v * v).sum().backward()
show("hooked", v.grad)


class Square(torch.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a)
        return a * a

    @staticmethod
    def backward(ctx, grad_out):
        (a,) = ctx.saved_tensors
        return 2 * a * grad_out


z = torch.tensor([1.0, -2.0, 3.0], device=device, requires_grad=True)
Square.apply(z).sum().backward()
show("custom", z.grad)

data = torch.arange(10, dtype=torch.float32).reshape(5, 2)
labels = torch.arange(5)
for xb, yb in DataLoader(TensorDataset(data, labels), batch_size=2):
    show("batch", xb)
    show("labels", yb)


assert F is F2


class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(3, 5)
        self.fc2 = nn.Linear(5, 2)

    def forward(self, inp):
        return self.fc2(F.relu(self.fc1(inp)))


model = MLP()
with torch.no_grad():  # identical starting weights in both runs
    for i, p in enumerate(model.parameters()):
        p.copy_(torch.tanh(torch.arange(p.numel(), dtype=torch.float32).reshape(p.shape) * 0.37 - i) * 0.5)
model.to(device)
data = torch.arange(24, dtype=torch.float32).reshape(8, 3) / 24
target = (torch.arange(16, dtype=torch.float32).reshape(8, 2) - 8) / 16
loader = DataLoader(TensorDataset(data, target), batch_size=4)
for epoch in range(2):
    for xb, yb in loader:
        xb, yb = xb.to(device), yb.to(device)
        loss = ((model(xb) - yb) ** 2).mean()
        model.zero_grad()
        loss.backward()
        with torch.no_grad():
            for p in model.parameters():
                p -= 0.5 * p.grad
        show(f"loss{epoch}", loss)
show("fc2.bias", model.fc2.bias)

opt = torch.optim.SGD(model.parameters(), lr=0.2, momentum=0.9)
sched = StepLR(opt, step_size=2, gamma=0.5)
for step in range(4):
    opt.zero_grad()
    loss = F.mse_loss(model(data.to(device)), target.to(device))
    loss.backward()
    opt.step()
    sched.step()
    show(f"optim{step}", loss)
show("fc1.weight", model.fc1.weight)
print("done")
