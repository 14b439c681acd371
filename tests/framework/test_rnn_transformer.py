"""Recurrent and transformer modules (issue 16) against PyTorch CPU from the same weights: outputs,
final states, attention weights, and the gradients of the inputs and every parameter."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
import torch

import strata
import strata.nn as snn

RNG = np.random.default_rng(1616)


def _flat(out: Any) -> list[Any]:
    if isinstance(out, tuple | list):
        return [t for o in out for t in _flat(o)]
    return [] if out is None else [out]


def _np(t: Any) -> np.ndarray:
    return t.detach().cpu().numpy() if isinstance(t, strata.Tensor) else t.detach().numpy()


def check(tm: torch.nn.Module, sm: Any, inputs: list[np.ndarray], device: str = "cpu", kwargs_t: Any = None,
          kwargs_s: Any = None, rtol: float = 1e-4, atol: float = 2e-5, grad_inputs: bool = True) -> None:
    """Port torch's weights, run both on the same inputs, compare every output and every gradient."""
    sm.load_state_dict({k: strata.tensor(v.detach().numpy(), device=device) for k, v in tm.state_dict().items()})
    sm.to(device)
    tx = [torch.tensor(x, requires_grad=grad_inputs) for x in inputs]
    sx = [strata.tensor(x, device=device, requires_grad=grad_inputs) for x in inputs]
    to, so = _flat(tm(*tx, **(kwargs_t or {}))), _flat(sm(*sx, **(kwargs_s or {})))
    assert len(to) == len(so)
    tl, sl = 0, 0
    for t, s in zip(to, so, strict=True):
        assert tuple(s.shape) == tuple(t.shape)
        np.testing.assert_allclose(_np(s), _np(t), rtol=rtol, atol=atol)
        g = RNG.standard_normal(tuple(t.shape)).astype(np.float32)
        tl = tl + (t * torch.tensor(g)).sum()
        sl = sl + (s * strata.tensor(g, device=device)).sum()
    tl.backward()  # type: ignore[union-attr]
    sl.backward()  # type: ignore[union-attr]
    if grad_inputs:
        for t, s in zip(tx, sx, strict=True):
            np.testing.assert_allclose(_np(s.grad), _np(t.grad), rtol=rtol, atol=atol)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        if tp[name].grad is None:
            assert p.grad is None or not p.grad.abs().max().item(), name
            continue
        np.testing.assert_allclose(_np(p.grad), _np(tp[name].grad), rtol=rtol, atol=atol, err_msg=name)


def _x(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


RNNS = [
    ("LSTM", {"num_layers": 2}, False),
    ("LSTM", {"batch_first": True, "bidirectional": True}, False),
    ("LSTM", {"num_layers": 2, "bidirectional": True, "bias": False}, True),
    ("GRU", {"num_layers": 2, "batch_first": True}, True),
    ("GRU", {"bidirectional": True}, False),
    ("RNN", {"nonlinearity": "relu", "num_layers": 2}, False),
    ("RNN", {"bidirectional": True, "batch_first": True}, True),
]


@pytest.mark.parametrize(("kind", "kwargs", "with_state"), RNNS,
                         ids=[f"{k}-{i}" for i, (k, _, _) in enumerate(RNNS)])
def test_recurrent_layers_match_torch(kind: str, kwargs: dict[str, Any], with_state: bool) -> None:
    torch.manual_seed(0)
    tm, sm = getattr(torch.nn, kind)(3, 4, **kwargs), getattr(snn, kind)(3, 4, **kwargs)
    assert sorted(n for n, _ in sm.named_parameters()) == sorted(n for n, _ in tm.named_parameters())
    x = _x(2, 5, 3) if kwargs.get("batch_first") else _x(5, 2, 3)
    inputs = [x]
    if with_state:
        layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
        h = _x(layers, 2, 4)
        if kind == "LSTM":
            c = _x(layers, 2, 4)

            class Wrap(torch.nn.Module):  # LSTM takes its state as a tuple
                def __init__(self, m: Any) -> None:
                    super().__init__()
                    self.m = m

                def forward(self, x: Any, h: Any, c: Any) -> Any:
                    return self.m(x, (h, c))

            tm, sm = Wrap(tm), _SWrap(sm)
            inputs = [x, h, c]
        else:
            inputs = [x, h]
    check(tm, sm, inputs)


class _SWrap(snn.Module):
    def __init__(self, m: Any) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: Any, h: Any, c: Any) -> Any:
        return self.m(x, (h, c))


def test_lstm_unbatched_and_on_cuda() -> None:
    torch.manual_seed(1)
    tm, sm = torch.nn.LSTM(3, 4, bidirectional=True), snn.LSTM(3, 4, bidirectional=True)
    check(tm, sm, [_x(4, 3)])
    torch.manual_seed(2)
    check(torch.nn.GRU(3, 5, batch_first=True), snn.GRU(3, 5, batch_first=True), [_x(2, 4, 3)], device="cuda")


@pytest.mark.parametrize("kind", ["LSTMCell", "GRUCell", "RNNCell"])
def test_cells_match_torch(kind: str) -> None:
    torch.manual_seed(3)
    tm, sm = getattr(torch.nn, kind)(3, 4), getattr(snn, kind)(3, 4)
    check(tm, sm, [_x(2, 3)])
    if kind == "LSTMCell":
        check(_CellT(tm), _CellS(sm), [_x(2, 3), _x(2, 4), _x(2, 4)])
    else:
        check(tm, sm, [_x(2, 3), _x(2, 4)])
    check(tm, sm, [_x(3)])  # unbatched


class _CellT(torch.nn.Module):
    def __init__(self, m: Any) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: Any, h: Any, c: Any) -> Any:
        return self.m(x, (h, c))


class _CellS(snn.Module):
    def __init__(self, m: Any) -> None:
        super().__init__()
        self.m = m

    def forward(self, x: Any, h: Any, c: Any) -> Any:
        return self.m(x, (h, c))


def test_recurrent_errors_and_init() -> None:
    with pytest.raises(RuntimeError, match="input.size\\(-1\\) must be equal to input_size"):
        snn.LSTM(3, 4)(strata.ones(5, 2, 2))
    with pytest.raises(RuntimeError, match="Expected hidden size"):
        snn.GRU(3, 4)(strata.ones(5, 2, 3), strata.ones(2, 2, 4))
    with pytest.raises(ValueError, match="dropout"):
        snn.LSTM(3, 4, dropout=1.5)
    w = snn.LSTM(3, 16).weight_hh_l0.detach().numpy()
    assert np.abs(w).max() <= 0.25 and np.abs(w).max() > 0.2  # U(-1/sqrt(16), 1/sqrt(16))


def test_lstm_dropout_between_layers_only_in_training() -> None:
    strata.manual_seed(0)
    m = snn.LSTM(3, 4, num_layers=2, dropout=0.5)
    x = strata.ones(5, 2, 3)
    m.eval()
    a, b = m(x)[0], m(x)[0]
    assert a.tolist() == b.tolist()
    m.train()
    assert m(x)[0].tolist() != a.tolist()


MHAS = [
    ({}, {}, False),
    ({"batch_first": True}, {"average_attn_weights": False}, False),
    ({"kdim": 5, "vdim": 3}, {}, False),
    ({"bias": False}, {"need_weights": False}, True),
]


@pytest.mark.parametrize(("ctor", "call", "masks"), MHAS, ids=[str(i) for i in range(len(MHAS))])
def test_multihead_attention_matches_torch(ctor: dict[str, Any], call: dict[str, Any], masks: bool) -> None:
    torch.manual_seed(4)
    tm, sm = torch.nn.MultiheadAttention(8, 2, **ctor), snn.MultiheadAttention(8, 2, **ctor)
    assert sorted(sm.state_dict()) == sorted(tm.state_dict())
    bf = ctor.get("batch_first", False)
    q = _x(2, 4, 8) if bf else _x(4, 2, 8)
    k = _x(2, 6, ctor.get("kdim", 8)) if bf else _x(6, 2, ctor.get("kdim", 8))
    v = _x(2, 6, ctor.get("vdim", 8)) if bf else _x(6, 2, ctor.get("vdim", 8))
    kt, ks = dict(call), dict(call)
    if masks:
        am = np.triu(np.ones((4, 6), dtype=bool), 3)
        kpm = np.zeros((2, 6), dtype=bool)
        kpm[1, 5] = True
        kt.update(attn_mask=torch.tensor(am), key_padding_mask=torch.tensor(kpm))
        ks.update(attn_mask=strata.tensor(am), key_padding_mask=strata.tensor(kpm))
    check(tm, sm, [q, k, v], kwargs_t=kt, kwargs_s=ks)


def test_multihead_attention_float_mask_on_cuda() -> None:
    torch.manual_seed(5)
    tm, sm = torch.nn.MultiheadAttention(8, 4), snn.MultiheadAttention(8, 4)
    mask = (np.triu(np.ones((3, 3), dtype=np.float32), 1) * -1e9).astype(np.float32)
    x = _x(3, 2, 8)
    check(tm, sm, [x, x, x], device="cuda", kwargs_t={"attn_mask": torch.tensor(mask)},
          kwargs_s={"attn_mask": strata.tensor(mask, device="cuda")})


@pytest.mark.parametrize("norm_first", [False, True])
def test_transformer_layers_match_torch(norm_first: bool) -> None:
    torch.manual_seed(6)
    kw = {"dim_feedforward": 16, "dropout": 0.0, "norm_first": norm_first, "batch_first": True}
    te, se = torch.nn.TransformerEncoderLayer(8, 2, **kw), snn.TransformerEncoderLayer(8, 2, **kw)
    mask = np.triu(np.full((5, 5), -np.inf, dtype=np.float32), 1)
    check(te, se, [_x(2, 5, 8)], kwargs_t={"src_mask": torch.tensor(mask)},
          kwargs_s={"src_mask": strata.tensor(mask)})
    td = torch.nn.TransformerDecoderLayer(8, 2, activation="gelu", **kw)
    sd = snn.TransformerDecoderLayer(8, 2, activation="gelu", **kw)
    check(td, sd, [_x(2, 5, 8), _x(2, 3, 8)], kwargs_t={"tgt_mask": torch.tensor(mask)},
          kwargs_s={"tgt_mask": strata.tensor(mask)})


def test_full_transformer_matches_torch() -> None:
    torch.manual_seed(7)
    kw = {"d_model": 8, "nhead": 2, "num_encoder_layers": 2, "num_decoder_layers": 1, "dim_feedforward": 12,
          "dropout": 0.0, "batch_first": True}
    tm, sm = torch.nn.Transformer(**kw), snn.Transformer(**kw)
    assert sorted(sm.state_dict()) == sorted(tm.state_dict())
    tmask = torch.nn.Transformer.generate_square_subsequent_mask(4)
    smask = snn.Transformer.generate_square_subsequent_mask(4)
    np.testing.assert_array_equal(smask.numpy(), tmask.numpy())
    kpm = np.zeros((2, 5), dtype=bool)
    kpm[0, 4] = True
    check(tm, sm, [_x(2, 5, 8), _x(2, 4, 8)],
          kwargs_t={"tgt_mask": tmask, "src_key_padding_mask": torch.tensor(kpm)},
          kwargs_s={"tgt_mask": smask, "src_key_padding_mask": strata.tensor(kpm)}, rtol=2e-4, atol=5e-5)


def test_transformer_encoder_stack_has_separate_weights() -> None:
    enc = snn.TransformerEncoder(snn.TransformerEncoderLayer(8, 2, 16), num_layers=3, norm=snn.LayerNorm(8))
    w = [layer.linear1.weight for layer in enc.layers]
    assert w[0] is not w[1] and len(list(enc.parameters())) == 3 * 12 + 2
    with pytest.raises(RuntimeError, match="activation should be relu/gelu"):
        snn.TransformerEncoderLayer(8, 2, activation="swish")
    with pytest.raises(AssertionError, match="divisible"):
        snn.MultiheadAttention(10, 3)


def test_pack_and_pad_utilities_match_torch() -> None:
    from strata.nn.utils import rnn as srnn

    seqs = [_x(n, 2) for n in (2, 4, 3)]
    t_pad = torch.nn.utils.rnn.pad_sequence([torch.tensor(s) for s in seqs], batch_first=True, padding_value=-1.0)
    s_pad = srnn.pad_sequence([strata.tensor(s) for s in seqs], batch_first=True, padding_value=-1.0)
    np.testing.assert_array_equal(_np(s_pad), _np(t_pad))
    for enforce in (False, True):
        lens = [4, 3, 2] if enforce else [2, 4, 3]
        x = _x(4, 3, 2)
        tp = torch.nn.utils.rnn.pack_padded_sequence(torch.tensor(x), lens, enforce_sorted=enforce)
        sp = srnn.pack_padded_sequence(strata.tensor(x), lens, enforce_sorted=enforce)
        np.testing.assert_array_equal(_np(sp.data), _np(tp.data))
        assert sp.batch_sizes.tolist() == tp.batch_sizes.tolist()
        if not enforce:
            assert sp.sorted_indices.tolist() == tp.sorted_indices.tolist()
            assert sp.unsorted_indices.tolist() == tp.unsorted_indices.tolist()
        t_back, t_len = torch.nn.utils.rnn.pad_packed_sequence(tp, batch_first=True, total_length=5)
        s_back, s_len = srnn.pad_packed_sequence(sp, batch_first=True, total_length=5)
        np.testing.assert_array_equal(_np(s_back), _np(t_back))
        assert s_len.tolist() == t_len.tolist()
    with pytest.raises(RuntimeError, match="sorted in decreasing order"):
        srnn.pack_padded_sequence(strata.ones(3, 2, 1), [1, 3])


@pytest.mark.parametrize("kind", ["LSTM", "GRU"])
def test_recurrent_layers_on_packed_sequences_match_torch(kind: str) -> None:
    from strata.nn.utils import rnn as srnn

    torch.manual_seed(9)
    kw = {"num_layers": 2, "bidirectional": True}
    tm, sm = getattr(torch.nn, kind)(2, 3, **kw), getattr(snn, kind)(2, 3, **kw)
    sm.load_state_dict({k: strata.tensor(v.detach().numpy()) for k, v in tm.state_dict().items()})
    x, lens = _x(5, 3, 2), [3, 5, 2]
    tx, sx = torch.tensor(x, requires_grad=True), strata.tensor(x, requires_grad=True)
    t_out, t_h = tm(torch.nn.utils.rnn.pack_padded_sequence(tx, lens, enforce_sorted=False))
    s_out, s_h = sm(srnn.pack_padded_sequence(sx, lens, enforce_sorted=False))
    assert isinstance(s_out, srnn.PackedSequence)
    np.testing.assert_allclose(_np(s_out.data), _np(t_out.data), rtol=1e-4, atol=2e-5)
    t_hs, s_hs = (list(t_h), list(s_h)) if kind == "LSTM" else ([t_h], [s_h])
    for a, b in zip(s_hs, t_hs, strict=True):
        np.testing.assert_allclose(_np(a), _np(b), rtol=1e-4, atol=2e-5)
    t_pad, _ = torch.nn.utils.rnn.pad_packed_sequence(t_out)
    s_pad, _ = srnn.pad_packed_sequence(s_out)
    (t_pad.sum() + sum(h.sum() for h in t_hs)).backward()
    (s_pad.sum() + sum(h.sum() for h in s_hs)).backward()
    np.testing.assert_allclose(_np(sx.grad), _np(tx.grad), rtol=1e-4, atol=2e-5)
    tp = dict(tm.named_parameters())
    for name, p in sm.named_parameters():
        np.testing.assert_allclose(_np(p.grad), _np(tp[name].grad), rtol=1e-4, atol=2e-5, err_msg=name)


@pytest.mark.parametrize(("kwargs", "device"), [({"num_layers": 2, "bidirectional": True}, "cpu"),
                                                ({"batch_first": True, "bias": False}, "cpu"),
                                                ({"num_layers": 2}, "cuda")])
@pytest.mark.filterwarnings("ignore:LSTM with projections is not supported with oneDNN")  # torch's own note
def test_lstm_with_projections_matches_torch(kwargs: dict[str, Any], device: str) -> None:
    torch.manual_seed(3)
    tm, sm = torch.nn.LSTM(3, 5, proj_size=2, **kwargs), snn.LSTM(3, 5, proj_size=2, **kwargs)
    assert {n: tuple(p.shape) for n, p in sm.named_parameters()} == \
        {n: tuple(p.shape) for n, p in tm.named_parameters()}
    assert repr(sm) == repr(tm)
    layers = kwargs.get("num_layers", 1) * (2 if kwargs.get("bidirectional") else 1)
    x = _x(2, 4, 3) if kwargs.get("batch_first") else _x(4, 2, 3)

    class Wrap(torch.nn.Module):
        def __init__(self, m: Any) -> None:
            super().__init__()
            self.m = m

        def forward(self, x: Any, h: Any, c: Any) -> Any:
            return self.m(x, (h, c))

    check(Wrap(tm), _SWrap(sm), [x, _x(layers, 2, 2), _x(layers, 2, 5)], device=device)


@pytest.mark.parametrize(("args", "message"), [((3, 5, 1, True, False, 0.0, False, 5), "smaller than hidden_size"),
                                               ((3, 5, 1, True, False, 0.0, False, -1), "positive integer or zero")])
def test_lstm_projection_arguments_are_checked_as_torch_does(args: tuple[Any, ...], message: str) -> None:
    for lstm in (torch.nn.LSTM, snn.LSTM):
        with pytest.raises(ValueError, match=message):
            lstm(*args)
    sm = snn.LSTM(3, 5, proj_size=2)
    with pytest.raises(RuntimeError, match=r"Expected hidden size \[1, 2, 2\]"):
        sm(strata.zeros(4, 2, 3), (strata.zeros(1, 2, 5), strata.zeros(1, 2, 5)))
