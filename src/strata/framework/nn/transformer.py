"""Attention and transformer modules, as torch.nn's: `MultiheadAttention`, `TransformerEncoderLayer`,
`TransformerDecoderLayer`, `TransformerEncoder`, `TransformerDecoder` and `Transformer`, with PyTorch's
parameter names (`in_proj_weight`, `out_proj`, `self_attn`, `linear1`, `norm1`, ...), initialisation,
mask conventions (bool True = masked out, or additive float; `key_padding_mask` (N, S)), `batch_first`,
`norm_first`, and `need_weights` / `average_attn_weights`, so state dicts move between strata and PyTorch.

With `need_weights=False` the attention itself is `F.scaled_dot_product_attention` (on "cuda" the
library's fused flash-attention kernels when there is no mask); with weights requested it is composed
(scores, softmax, product) so the weights can be returned. All of it is differentiable framework ops.

Example:
    >>> import strata
    >>> from strata.framework.nn.transformer import TransformerEncoder, TransformerEncoderLayer
    >>> enc = TransformerEncoder(TransformerEncoderLayer(16, 4, 32, batch_first=True), num_layers=2)
    >>> mask = strata.framework.nn.transformer.Transformer.generate_square_subsequent_mask(5)
    >>> enc(strata.ones(3, 5, 16), mask=mask).shape
    strata.Size([3, 5, 16])
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable
from typing import Any

from strata.framework import ops
from strata.framework.creation import empty, full
from strata.framework.nn import functional as F
from strata.framework.nn import init
from strata.framework.nn.containers import ModuleList
from strata.framework.nn.module import Module
from strata.framework.nn.modules import Dropout, LayerNorm, Linear
from strata.framework.nn.parameter import Parameter
from strata.framework.tensor import Tensor


def _float_mask(mask: Tensor | None, like: Tensor) -> Tensor | None:
    """A bool mask (True = masked out) as an additive float mask of like's dtype; float masks pass."""
    if mask is None:
        return None
    if mask.dtype.is_floating_point:
        return mask.to(like.dtype)
    zero = full(tuple(mask.shape), 0.0, dtype=like.dtype, device=like.device)
    return ops.where(mask, zero - math.inf, zero)


class MultiheadAttention(Module):
    """Multi-head attention: out_proj(concat_h softmax(q_h k_h^T / sqrt(d) + mask) v_h).

    Args:
        embed_dim, num_heads: model width and heads (embed_dim divisible by num_heads).
        dropout: on the attention weights in training. bias: projection biases.
        kdim, vdim: key/value widths (separate q/k/v projection weights when they differ from embed_dim).
        batch_first: (N, L, E) instead of (L, N, E).

    Raises:
        AssertionError: embed_dim not divisible by num_heads (PyTorch's type).
        NotImplementedError: add_bias_kv or add_zero_attn.
    """

    def __init__(self, embed_dim: int, num_heads: int, dropout: float = 0.0, bias: bool = True,
                 add_bias_kv: bool = False, add_zero_attn: bool = False, kdim: int | None = None,
                 vdim: int | None = None, batch_first: bool = False, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} and "
                             f"num_heads={num_heads} instead")
        if add_bias_kv or add_zero_attn:
            raise NotImplementedError("MultiheadAttention(add_bias_kv / add_zero_attn) is not implemented in strata")
        self.embed_dim, self.num_heads, self.dropout, self.batch_first = embed_dim, num_heads, dropout, batch_first
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.head_dim = embed_dim // num_heads
        if self.head_dim * num_heads != embed_dim:
            raise AssertionError("embed_dim must be divisible by num_heads")
        factory = {"device": device, "dtype": dtype}
        if self._qkv_same_embed_dim:
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **factory))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        else:
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **factory))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **factory))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **factory))
            self.register_parameter("in_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(empty(3 * embed_dim, **factory))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, **factory)
        self.bias_k = self.bias_v = None
        self.add_zero_attn = False
        self._reset_parameters()

    def _reset_parameters(self) -> None:
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.constant_(self.in_proj_bias, 0.0)
        if self.out_proj.bias is not None:
            init.constant_(self.out_proj.bias, 0.0)

    def _project(self, q: Tensor, k: Tensor, v: Tensor) -> tuple[Tensor, Tensor, Tensor]:
        e = self.embed_dim
        b = self.in_proj_bias
        bq, bk, bv = (b[:e], b[e:2 * e], b[2 * e:]) if b is not None else (None, None, None)
        if self._qkv_same_embed_dim:
            w = self.in_proj_weight
            wq, wk, wv = w[:e], w[e:2 * e], w[2 * e:]
        else:
            wq, wk, wv = self.q_proj_weight, self.k_proj_weight, self.v_proj_weight
        return F.linear(q, wq, bq), F.linear(k, wk, bk), F.linear(v, wv, bv)

    def forward(self, query: Tensor, key: Tensor, value: Tensor, key_padding_mask: Tensor | None = None,
                need_weights: bool = True, attn_mask: Tensor | None = None, average_attn_weights: bool = True,
                is_causal: bool = False) -> tuple[Tensor, Tensor | None]:
        """(attn_output, attn_weights): weights (N, L, S) averaged over heads, (N, H, L, S) per head with
        average_attn_weights=False, None with need_weights=False.

        Raises:
            RuntimeError: a mask of the wrong shape, or is_causal without attn_mask (PyTorch's rule).
        """
        if is_causal and attn_mask is None:
            raise RuntimeError("Need attn_mask if specifying the is_causal hint. You may use the Transformer module "
                               "method `generate_square_subsequent_mask` to create this mask.")
        unbatched = query.dim() == 2
        if unbatched:
            query, key, value = query.unsqueeze(1), key.unsqueeze(1), value.unsqueeze(1)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif self.batch_first:
            query, key, value = query.transpose(0, 1), key.transpose(0, 1), value.transpose(0, 1)
        tgt_len, bsz, _ = query.shape
        src_len = key.shape[0]
        h, hd = self.num_heads, self.head_dim
        q, k, v = self._project(query, key, value)
        # (L, N, E) -> (N, H, L, hd)
        q = q.reshape(tgt_len, bsz, h, hd).permute(1, 2, 0, 3)
        k = k.reshape(src_len, bsz, h, hd).permute(1, 2, 0, 3)
        v = v.reshape(src_len, bsz, h, hd).permute(1, 2, 0, 3)
        mask = _float_mask(attn_mask, q)
        if mask is not None:
            if mask.dim() == 2:
                if tuple(mask.shape) != (tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 2D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(tgt_len, src_len)}.")
            elif mask.dim() == 3:
                if tuple(mask.shape) != (bsz * h, tgt_len, src_len):
                    raise RuntimeError(f"The shape of the 3D attn_mask is {tuple(mask.shape)}, but should be "
                                       f"{(bsz * h, tgt_len, src_len)}.")
                mask = mask.reshape(bsz, h, tgt_len, src_len)
            else:
                raise RuntimeError(f"attn_mask's dimension {mask.dim()} is not supported")
        kpm = _float_mask(key_padding_mask, q)
        if kpm is not None:
            if tuple(kpm.shape) != (bsz, src_len):
                raise RuntimeError(f"expecting key_padding_mask shape of {(bsz, src_len)}, but got "
                                   f"{tuple(kpm.shape)}")
            kpm = kpm.reshape(bsz, 1, 1, src_len)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        weights: Tensor | None = None
        if need_weights:
            scores = q.matmul(k.transpose(-2, -1)) * (1.0 / math.sqrt(hd))
            if mask is not None:
                scores = scores + mask
            attn = F.softmax(scores, -1)
            weights = attn.mean(1) if average_attn_weights else attn
            if p > 0.0:
                attn = F.dropout(attn, p)
            out = attn.matmul(v)
        else:
            out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=p)
        out = out.permute(2, 0, 1, 3).reshape(tgt_len, bsz, self.embed_dim)
        out = self.out_proj(out)
        if unbatched:
            return out.squeeze(1), (weights.squeeze(0) if weights is not None else None)
        if self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


def _activation(activation: str | Callable[[Tensor], Tensor]) -> Callable[[Tensor], Tensor]:
    if callable(activation):
        return activation
    if activation == "relu":
        return F.relu
    if activation == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {activation}")


class TransformerEncoderLayer(Module):
    """Self-attention and a feed-forward block, each with a residual and LayerNorm (post-norm by default,
    pre-norm with norm_first)."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa(self, x: Tensor, mask: Tensor | None, kpm: Tensor | None) -> Tensor:
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False)[0])

    def _ff(self, x: Tensor) -> Tensor:
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, src: Tensor, src_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool = False) -> Tensor:
        x = src
        if self.norm_first:
            x = x + self._sa(self.norm1(x), src_mask, src_key_padding_mask)
            return x + self._ff(self.norm2(x))
        x = self.norm1(x + self._sa(x, src_mask, src_key_padding_mask))
        return self.norm2(x + self._ff(x))


class TransformerDecoderLayer(Module):
    """Self-attention, cross-attention over `memory`, and a feed-forward block, each with a residual and
    LayerNorm."""

    def __init__(self, d_model: int, nhead: int, dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", layer_norm_eps: float = 1e-5,
                 batch_first: bool = False, norm_first: bool = False, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first,
                                            **factory)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **factory)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **factory)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **factory)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(activation)

    def _sa(self, x: Tensor, mask: Tensor | None, kpm: Tensor | None) -> Tensor:
        return self.dropout1(self.self_attn(x, x, x, attn_mask=mask, key_padding_mask=kpm, need_weights=False)[0])

    def _mha(self, x: Tensor, mem: Tensor, mask: Tensor | None, kpm: Tensor | None) -> Tensor:
        return self.dropout2(self.multihead_attn(x, mem, mem, attn_mask=mask, key_padding_mask=kpm,
                                                 need_weights=False)[0])

    def _ff(self, x: Tensor) -> Tensor:
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool = False, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        if self.norm_first:
            x = x + self._sa(self.norm1(x), tgt_mask, tgt_key_padding_mask)
            x = x + self._mha(self.norm2(x), memory, memory_mask, memory_key_padding_mask)
            return x + self._ff(self.norm3(x))
        x = self.norm1(x + self._sa(x, tgt_mask, tgt_key_padding_mask))
        x = self.norm2(x + self._mha(x, memory, memory_mask, memory_key_padding_mask))
        return self.norm3(x + self._ff(x))


class TransformerEncoder(Module):
    """`num_layers` copies of `encoder_layer` (deep copies: separate weights), then `norm` if given."""

    def __init__(self, encoder_layer: TransformerEncoderLayer, num_layers: int, norm: Module | None = None,
                 enable_nested_tensor: bool = True, mask_check: bool = True) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, src: Tensor, mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                is_causal: bool | None = None) -> Tensor:
        x = src
        for layer in self.layers:
            x = layer(x, src_mask=mask, src_key_padding_mask=src_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class TransformerDecoder(Module):
    """`num_layers` copies of `decoder_layer`, then `norm` if given."""

    def __init__(self, decoder_layer: TransformerDecoderLayer, num_layers: int, norm: Module | None = None) -> None:
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(decoder_layer) for _ in range(num_layers)])
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt: Tensor, memory: Tensor, tgt_mask: Tensor | None = None, memory_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                tgt_is_causal: bool | None = None, memory_is_causal: bool = False) -> Tensor:
        x = tgt
        for layer in self.layers:
            x = layer(x, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                      tgt_key_padding_mask=tgt_key_padding_mask, memory_key_padding_mask=memory_key_padding_mask)
        return self.norm(x) if self.norm is not None else x


class Transformer(Module):
    """The encoder-decoder transformer of "Attention Is All You Need" (each stack ends in a LayerNorm);
    parameters with more than one dim are xavier-uniform initialised, as PyTorch's."""

    def __init__(self, d_model: int = 512, nhead: int = 8, num_encoder_layers: int = 6, num_decoder_layers: int = 6,
                 dim_feedforward: int = 2048, dropout: float = 0.1,
                 activation: str | Callable[[Tensor], Tensor] = "relu", custom_encoder: Module | None = None,
                 custom_decoder: Module | None = None, layer_norm_eps: float = 1e-5, batch_first: bool = False,
                 norm_first: bool = False, bias: bool = True, device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        factory = {"device": device, "dtype": dtype}
        common = {"dim_feedforward": dim_feedforward, "dropout": dropout, "activation": activation,
                  "layer_norm_eps": layer_norm_eps, "batch_first": batch_first, "norm_first": norm_first,
                  "bias": bias, **factory}
        self.encoder: Module = custom_encoder if custom_encoder is not None else TransformerEncoder(
            TransformerEncoderLayer(d_model, nhead, **common), num_encoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self.decoder: Module = custom_decoder if custom_decoder is not None else TransformerDecoder(
            TransformerDecoderLayer(d_model, nhead, **common), num_decoder_layers,
            LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **factory))
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first
        for p in self.parameters():
            if p.dim() > 1:
                init.xavier_uniform_(p)

    def forward(self, src: Tensor, tgt: Tensor, src_mask: Tensor | None = None, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None, src_key_padding_mask: Tensor | None = None,
                tgt_key_padding_mask: Tensor | None = None, memory_key_padding_mask: Tensor | None = None,
                src_is_causal: bool | None = None, tgt_is_causal: bool | None = None,
                memory_is_causal: bool = False) -> Tensor:
        """Encode src, decode tgt against the memory.

        Raises:
            RuntimeError: src and tgt batch sizes or feature sizes differ.
        """
        bdim = 0 if self.batch_first else 1
        if src.dim() == 3 and src.shape[bdim] != tgt.shape[bdim]:
            raise RuntimeError("the batch number of src and tgt must be equal")
        if src.shape[-1] != self.d_model or tgt.shape[-1] != self.d_model:
            raise RuntimeError("the feature number of src and tgt must be equal to d_model")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask)

    @staticmethod
    def generate_square_subsequent_mask(sz: int, device: Any = None, dtype: Any = None) -> Tensor:
        """(sz, sz) float mask: -inf above the diagonal (future positions), 0 elsewhere."""
        ones = full((sz, sz), 1.0, dtype=dtype, device=device)
        return ops.where(ones.triu(1) > 0, ones * -math.inf, ones * 0.0)


__all__ = ["MultiheadAttention", "Transformer", "TransformerDecoder", "TransformerDecoderLayer", "TransformerEncoder",
           "TransformerEncoderLayer"]
