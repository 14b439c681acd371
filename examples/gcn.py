"""Graph convolutional network (Kipf & Welling), in the shape of PyTorch's official `gcn` example: the
symmetric-normalised adjacency D^-1/2 (A + I) D^-1/2 as a sparse COO tensor, graph-convolution layers
computing `adj @ (x @ W)` with `torch.spmm` / `torch.sparse.mm`, dropout, log-softmax + NLL on the
training nodes, Adam with weight decay. The graph is generated locally instead of downloading Cora: a
stochastic block model (dense links inside each class, sparse across) with noisy class-dependent features.

A plain PyTorch program: it runs unchanged on real PyTorch and under `strata run --as-torch`:

    python examples/gcn.py --device cpu
    strata run --as-torch examples/gcn.py --device cuda --tiny

Weights come from NumPy (Glorot-uniform, as the example's layers use), so both frameworks print the same
losses.
"""

import argparse
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def make_graph(nodes_per_class, classes, features, rng):
    """(normalised sparse adjacency, features, labels, train mask, test mask) of a stochastic block model."""
    n = nodes_per_class * classes
    labels = np.repeat(np.arange(classes), nodes_per_class)
    same = labels[:, None] == labels[None, :]
    link = rng.random((n, n)) < np.where(same, 0.3, 0.02)
    a = np.triu(link, 1)
    a = (a | a.T | np.eye(n, dtype=bool)).astype(np.float32)           # undirected, with self-loops
    d = 1.0 / np.sqrt(a.sum(1))
    a = d[:, None] * a * d[None, :]
    rows, cols = np.nonzero(a)
    adj = torch.sparse_coo_tensor(torch.from_numpy(np.stack([rows, cols]).astype(np.int64)),
                                  torch.from_numpy(a[rows, cols]), (n, n), check_invariants=True)
    centers = rng.standard_normal((classes, features))
    x = (centers[labels] + 2.0 * rng.standard_normal((n, features))).astype(np.float32)
    train = rng.random(n) < 0.3
    return adj, torch.from_numpy(x), torch.from_numpy(labels), torch.from_numpy(train), torch.from_numpy(~train)


class GraphConv(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.empty(out_features))

    def forward(self, x, adj):
        return torch.spmm(adj, torch.mm(x, self.weight)) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout):
        super().__init__()
        self.gc1 = GraphConv(nfeat, nhid)
        self.gc2 = GraphConv(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        return F.log_softmax(torch.sparse.mm(adj, x @ self.gc2.weight) + self.gc2.bias, dim=1)


def init_weights(model):
    """Glorot-uniform weights and zero biases from seeded NumPy draws."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        if p.dim() > 1:
            bound = np.sqrt(6.0 / (p.shape[0] + p.shape[1]))
            value = rng.uniform(-bound, bound, tuple(p.shape))
        else:
            value = np.zeros(p.shape)
        with torch.no_grad():
            p.copy_(torch.from_numpy(value.astype(np.float32)))
    return model


def main():
    parser = argparse.ArgumentParser(description="GCN with sparse matmul on a generated graph")
    parser.add_argument("--device", default=None, help="cpu or cuda (default: torch.accelerator's, else cpu)")
    parser.add_argument("--tiny", action="store_true", default=bool(os.environ.get("EXAMPLES_TINY")),
                        help="the test configuration: a small graph, a few epochs")
    parser.add_argument("--epochs", type=int, default=100)
    parser.add_argument("--hidden", type=int, default=16)
    parser.add_argument("--dropout", type=float, default=0.0, help="0 keeps runs reproducible across frameworks")
    args = parser.parse_args()
    if args.device:
        device = torch.device(args.device)
    else:
        device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
    torch.manual_seed(0)

    per_class, features = (8, 6) if args.tiny else (40, 16)
    if args.tiny:
        args.epochs, args.hidden = 3, 8
    adj, x, labels, train, test = make_graph(per_class, 3, features, np.random.default_rng(0))
    adj, x, labels, train, test = adj.to(device), x.to(device), labels.to(device), train.to(device), test.to(device)
    model = init_weights(GCN(features, args.hidden, 3, args.dropout)).to(device)
    optimizer = torch.optim.Adam(model.parameters(), lr=0.01, weight_decay=5e-4)
    for epoch in range(args.epochs):
        model.train()
        optimizer.zero_grad()
        output = model(x, adj)
        loss = F.nll_loss(output[train], labels[train])
        loss.backward()
        optimizer.step()
        print(f"loss train {epoch} {loss.item():.6f}")
    model.eval()
    with torch.no_grad():
        output = model(x, adj)
        acc = (output[test].argmax(1) == labels[test]).float().mean().item()
    print(f"loss test 0 {F.nll_loss(output[test], labels[test]).item():.6f}")
    print(f"test accuracy {acc:.3f}")


if __name__ == "__main__":
    main()
