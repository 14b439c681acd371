"""Small versions of public PyTorch example programs (MNIST CNN with Adadelta + StepLR, LSTM and
Transformer language models, DCGAN, VAE, GCN with sparse matmul, GRU with RMSprop and a checkpoint round
trip), written only against the torch API. Weights come from NumPy (seeded per parameter name) so real
PyTorch and strata (`strata run --as-torch`) start from the same numbers; the test compares the printed
losses. The device is torch.accelerator's unless SURFACE_DEVICE says otherwise."""

import io
import math
import os
import zlib

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
import torch.optim as optim
from torch.optim.lr_scheduler import StepLR

if os.environ.get("SURFACE_DEVICE"):
    device = torch.device(os.environ["SURFACE_DEVICE"])
else:
    device = torch.accelerator.current_accelerator() if torch.accelerator.is_available() else torch.device("cpu")
data_rng = np.random.default_rng(0)


def init(model, scale=0.3):
    """Deterministic weights, independent of the framework's RNG."""
    for name, p in model.named_parameters():
        rng = np.random.default_rng(zlib.crc32(name.encode()))
        with torch.no_grad():
            p.copy_(torch.from_numpy((rng.standard_normal(tuple(p.shape)) * scale).astype(np.float32)))
    return model.to(device)


def arr(*shape, scale=1.0):
    return torch.from_numpy((data_rng.standard_normal(shape) * scale).astype(np.float32)).to(device)


def report(name, step, loss):
    print(f"{name} {step} {loss.item():.6f}")


# --- MNIST-style CNN (the official mnist example's shape of code)
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 4, 3, 1)
        self.conv2 = nn.Conv2d(4, 8, 3, 1)
        self.dropout1 = nn.Dropout(0.0)
        self.fc1 = nn.Linear(8 * 3 * 3, 16)
        self.fc2 = nn.Linear(16, 10)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout1(x)
        x = torch.flatten(x, 1)
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


model = init(Net())
opt = optim.Adadelta(model.parameters(), lr=1.0)
sched = StepLR(opt, step_size=1, gamma=0.7)
x, y = arr(8, 1, 10, 10), torch.from_numpy(data_rng.integers(0, 10, 8)).to(device)
for step in range(3):
    opt.zero_grad()
    loss = F.nll_loss(model(x), y)
    loss.backward()
    opt.step()
    sched.step()
    report("mnist", step, loss)


# --- LSTM language model (word_language_model: Embedding, LSTM, repackaged hidden state, clipping, manual SGD)
class RNNModel(nn.Module):
    def __init__(self, rnn_type, ntoken, ninp, nhid, nlayers):
        super().__init__()
        self.encoder = nn.Embedding(ntoken, ninp)
        self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=0.0)
        self.decoder = nn.Linear(nhid, ntoken)
        self.nlayers, self.nhid = nlayers, nhid

    def forward(self, x, hidden):
        out, hidden = self.rnn(self.encoder(x), hidden)
        return F.log_softmax(self.decoder(out), dim=-1), hidden

    def init_hidden(self, bsz):
        w = next(self.parameters())
        return (w.new_zeros(self.nlayers, bsz, self.nhid), w.new_zeros(self.nlayers, bsz, self.nhid))


def repackage_hidden(h):
    return h.detach() if isinstance(h, torch.Tensor) else tuple(repackage_hidden(v) for v in h)


lm = init(RNNModel("LSTM", 20, 8, 16, 2))
tokens = torch.from_numpy(data_rng.integers(0, 20, (7, 3))).to(device)
hidden = lm.init_hidden(3)
for step in range(3):
    hidden = repackage_hidden(hidden)
    lm.zero_grad()
    out, hidden = lm(tokens[:-1], hidden)
    loss = F.nll_loss(out.view(-1, 20), tokens[1:].reshape(-1))
    loss.backward()
    torch.nn.utils.clip_grad_norm_(lm.parameters(), 0.25)
    for p in lm.parameters():
        p.data.add_(p.grad, alpha=-2.0)
    report("lstm_lm", step, loss)


# --- Transformer language model (PositionalEncoding buffer, causal mask, TransformerEncoder)
class PositionalEncoding(nn.Module):
    def __init__(self, d_model, max_len=64):
        super().__init__()
        pe = torch.zeros(max_len, d_model)
        position = torch.arange(0, max_len, dtype=torch.float).unsqueeze(1)
        div_term = torch.exp(torch.arange(0, d_model, 2).float() * (-math.log(10000.0) / d_model))
        pe[:, 0::2] = torch.sin(position * div_term)
        pe[:, 1::2] = torch.cos(position * div_term)
        self.register_buffer("pe", pe.unsqueeze(0).transpose(0, 1))

    def forward(self, x):
        return x + self.pe[: x.size(0), :]


class TransformerModel(nn.Module):
    def __init__(self, ntoken, ninp, nhead, nhid, nlayers):
        super().__init__()
        self.pos_encoder = PositionalEncoding(ninp)
        self.encoder = nn.Embedding(ntoken, ninp)
        self.transformer_encoder = nn.TransformerEncoder(nn.TransformerEncoderLayer(ninp, nhead, nhid, 0.0), nlayers,
                                                         enable_nested_tensor=False)
        self.decoder = nn.Linear(ninp, ntoken)
        self.ninp = ninp

    def forward(self, src):
        mask = nn.Transformer.generate_square_subsequent_mask(len(src)).to(device)
        src = self.pos_encoder(self.encoder(src) * math.sqrt(self.ninp))
        return F.log_softmax(self.decoder(self.transformer_encoder(src, mask)), dim=-1)


tlm = init(TransformerModel(20, 8, 2, 16, 2))
topt = optim.AdamW(tlm.parameters(), lr=0.01)
for step in range(3):
    topt.zero_grad()
    loss = F.nll_loss(tlm(tokens[:-1]).view(-1, 20), tokens[1:].reshape(-1))
    loss.backward()
    topt.step()
    report("transformer_lm", step, loss)

# --- DCGAN (ConvTranspose2d generator, LeakyReLU discriminator, BCELoss, Adam(0.5, 0.999))
netG = init(nn.Sequential(nn.ConvTranspose2d(4, 8, 4, 1, 0, bias=False), nn.BatchNorm2d(8), nn.ReLU(True),
                          nn.ConvTranspose2d(8, 1, 4, 2, 1, bias=False), nn.Tanh()))
netD = init(nn.Sequential(nn.Conv2d(1, 8, 4, 2, 1, bias=False), nn.LeakyReLU(0.2, inplace=True),
                          nn.Conv2d(8, 1, 4, 1, 0, bias=False), nn.Sigmoid()))
criterion = nn.BCELoss()
optD = optim.Adam(netD.parameters(), lr=2e-3, betas=(0.5, 0.999))
optG = optim.Adam(netG.parameters(), lr=2e-3, betas=(0.5, 0.999))
real = torch.tanh(arr(4, 1, 8, 8))
for step in range(2):
    noise = arr(4, 4, 1, 1)
    netD.zero_grad()
    label = torch.full((4,), 1.0, dtype=torch.float, device=device)
    errD_real = criterion(netD(real).view(-1), label)
    errD_real.backward()
    fake = netG(noise)
    label.fill_(0.0)
    errD_fake = criterion(netD(fake.detach()).view(-1), label)
    errD_fake.backward()
    optD.step()
    netG.zero_grad()
    label.fill_(1.0)
    errG = criterion(netD(fake).view(-1), label)
    errG.backward()
    optG.step()
    report("dcgan_d", step, errD_real + errD_fake)
    report("dcgan_g", step, errG)


# --- VAE (reparameterisation with given noise, BCE + KL)
class VAE(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1, self.fc21, self.fc22 = nn.Linear(16, 8), nn.Linear(8, 2), nn.Linear(8, 2)
        self.fc3, self.fc4 = nn.Linear(2, 8), nn.Linear(8, 16)

    def forward(self, x, eps):
        h = F.relu(self.fc1(x))
        mu, logvar = self.fc21(h), self.fc22(h)
        z = mu + eps * torch.exp(0.5 * logvar)
        return torch.sigmoid(self.fc4(F.relu(self.fc3(z)))), mu, logvar


vae = init(VAE())
vopt = optim.Adam(vae.parameters(), lr=1e-2)
xv = torch.sigmoid(arr(5, 16))
for step in range(3):
    vopt.zero_grad()
    recon, mu, logvar = vae(xv, arr(5, 2))
    loss = F.binary_cross_entropy(recon, xv, reduction="sum") - 0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
    loss.backward()
    vopt.step()
    report("vae", step, loss)

# --- GCN (sparse adjacency, spmm)
edges = data_rng.integers(0, 6, (2, 12))
vals = np.ones(12, np.float32) / 3
adj = torch.sparse_coo_tensor(torch.from_numpy(edges), torch.from_numpy(vals), (6, 6), check_invariants=True).to(device)
feats, labels = arr(6, 5), torch.from_numpy(data_rng.integers(0, 3, 6)).to(device)
gc1, gc2 = init(nn.Linear(5, 8)), init(nn.Linear(8, 3))
gopt = optim.Adam(list(gc1.parameters()) + list(gc2.parameters()), lr=0.01, weight_decay=5e-4)
for step in range(3):
    gopt.zero_grad()
    h = F.relu(torch.spmm(adj, gc1(feats)))
    out = F.log_softmax(torch.sparse.mm(adj, gc2(h)), dim=1)
    loss = F.nll_loss(out, labels)
    loss.backward()
    gopt.step()
    report("gcn", step, loss)

# --- GRU classifier with RMSprop, then a checkpoint round trip through torch.save / torch.load
gru = init(RNNModel("GRU", 20, 8, 16, 1))
ropt = optim.RMSprop(gru.parameters(), lr=0.01, momentum=0.5)
h0 = torch.zeros(1, 3, 16, device=device)
for step in range(2):
    ropt.zero_grad()
    out, _ = gru(tokens[:-1], h0)
    loss = F.nll_loss(out.view(-1, 20), tokens[1:].reshape(-1))
    loss.backward()
    ropt.step()
    report("gru", step, loss)
buf = io.BytesIO()
torch.save({"model": gru.state_dict(), "optim": ropt.state_dict()}, buf)
buf.seek(0)
ckpt = torch.load(buf)
gru2 = RNNModel("GRU", 20, 8, 16, 1).to(device)
gru2.load_state_dict(ckpt["model"])
same = torch.equal(gru2(tokens[:-1], h0)[0], gru(tokens[:-1], h0)[0])
print("checkpoint", same, sorted(ckpt["optim"]["state"][0]))
# --- REINFORCE-style policy gradient (the reinforcement_learning example's Categorical policy)
from torch.distributions import Categorical  # noqa: E402

policy = init(nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2)))
popt = optim.Adam(policy.parameters(), lr=1e-2)
states = arr(6, 4)
actions = torch.from_numpy(data_rng.integers(0, 2, 6)).to(device)
returns = arr(6)
for step in range(2):
    dist = Categorical(F.softmax(policy(states), dim=-1))
    loss = -(dist.log_prob(actions) * returns).sum() - 0.01 * dist.entropy().sum()
    popt.zero_grad()
    loss.backward()
    popt.step()
    report("reinforce", step, loss)
print("done")
