"""`torch.nn.utils.rnn` for strata: `pad_sequence`, `PackedSequence`, `pack_padded_sequence`,
`pad_packed_sequence`, `pack_sequence`, `unpad_sequence`, with PyTorch's packed layout (the time steps'
rows one after another, `batch_sizes` per step, sequences sorted by length with `sorted_indices` /
`unsorted_indices`). The recurrent layers (strata.nn.RNN/LSTM/GRU) accept a PackedSequence and return one:
each sequence stops at its own length.

Example:
    >>> import strata
    >>> from strata.framework.nn.utils.rnn import pack_padded_sequence, pad_packed_sequence
    >>> x = strata.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]])
    >>> packed = pack_padded_sequence(x, [3, 2], batch_first=True)
    >>> packed.data.tolist(), packed.batch_sizes.tolist()
    ([1.0, 4.0, 2.0, 5.0, 3.0], [2, 2, 1])
    >>> pad_packed_sequence(packed, batch_first=True)[0].tolist()
    [[1.0, 2.0, 3.0], [4.0, 5.0, 0.0]]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

from strata.framework import joining
from strata.framework.creation import full, tensor
from strata.framework.dtypes import int64
from strata.framework.tensor import Tensor


class PackedSequence(NamedTuple):
    """Variable-length sequences packed by time step (PyTorch's layout; see the module docstring)."""

    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None = None
    unsorted_indices: Tensor | None = None

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """The data moved or cast (the index tensors follow the data's device; batch_sizes stay on cpu)."""
        data = self.data.to(*args, **kwargs)
        move = (lambda t: t.to(data.device) if t is not None else None)
        return PackedSequence(data, self.batch_sizes, move(self.sorted_indices), move(self.unsorted_indices))

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to("cuda")

    def cpu(self) -> PackedSequence:
        return self.to("cpu")

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def _host_lengths(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.cpu().tolist()]
    return [int(v) for v in lengths]


def pad_sequence(sequences: Sequence[Tensor], batch_first: bool = False, padding_value: float = 0.0,
                 padding_side: str = "right") -> Tensor:
    """Stack tensors of shape (L_i, *) into (L_max, B, *) (or (B, L_max, *)), padded with padding_value.

    Raises:
        ValueError: padding_side not 'left' or 'right'.
    """
    if padding_side not in ("left", "right"):
        raise ValueError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    longest = max(int(s.shape[0]) for s in sequences)
    rows = []
    for s in sequences:
        n = int(s.shape[0])
        if n < longest:
            pad = full((longest - n, *s.shape[1:]), padding_value, dtype=s.dtype, device=s.device)
            s = joining.cat([s, pad] if padding_side == "right" else [pad, s], 0)
        rows.append(s)
    return joining.stack(rows, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The inverse of pad_sequence: one tensor per sequence, cut to its length."""
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[i, :n] for i, n in enumerate(_host_lengths(lengths))]


def pack_padded_sequence(input: Tensor, lengths: Any, batch_first: bool = False,  # noqa: A002
                         enforce_sorted: bool = True) -> PackedSequence:
    """Pack a padded batch (L, B, *) (or (B, L, *)) of sequences with the given lengths.

    Raises:
        RuntimeError: lengths not sorted in decreasing order with enforce_sorted, a zero length, or a
            length beyond the padded size (PyTorch's messages).
    """
    lens = _host_lengths(lengths)
    x = input.transpose(0, 1) if batch_first else input
    if len(lens) != x.shape[1]:
        raise RuntimeError(f"Expected `len(lengths)` to be equal to batch_size, but got {len(lens)} (batch_size="
                           f"{x.shape[1]})")
    if enforce_sorted:
        if any(a < b for a, b in zip(lens, lens[1:], strict=False)):
            raise RuntimeError("`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. "
                               "You can pass `enforce_sorted=False` to pack_padded_sequence and/or pack_sequence "
                               "to sidestep this requirement if you do not need ONNX exportability.")
        order = list(range(len(lens)))
    else:
        order = sorted(range(len(lens)), key=lambda i: -lens[i])
    if min(lens) <= 0:
        raise RuntimeError("Length of all samples has to be greater than 0, but found an element in 'lengths' that "
                           "is <= 0")
    if max(lens) > x.shape[0]:
        raise RuntimeError(f"Expected sequence length to be smaller than or equal to {x.shape[0]}, got {max(lens)}")
    sorted_lens = [lens[i] for i in order]
    batch_sizes = [sum(1 for n in sorted_lens if n > t) for t in range(sorted_lens[0])]
    idx = tensor(order, dtype=int64, device=x.device)
    xs = x.index_select(1, idx)
    data = joining.cat([xs[t, :b] for t, b in enumerate(batch_sizes)], 0)
    if enforce_sorted:
        return PackedSequence(data, tensor(batch_sizes, dtype=int64), None, None)
    inverse = [0] * len(order)
    for pos, i in enumerate(order):
        inverse[i] = pos
    return PackedSequence(data, tensor(batch_sizes, dtype=int64), idx, tensor(inverse, dtype=int64, device=x.device))


def pad_packed_sequence(sequence: PackedSequence, batch_first: bool = False, padding_value: float = 0.0,
                        total_length: int | None = None) -> tuple[Tensor, Tensor]:
    """Unpack to (padded, lengths): padded (L, B, *) (or (B, L, *)) in the original batch order.

    Raises:
        ValueError: total_length shorter than the longest sequence.
    """
    data, bs = sequence.data, [int(b) for b in sequence.batch_sizes.tolist()]
    batch = bs[0]
    steps = len(bs)
    if total_length is not None and total_length < steps:
        raise ValueError(f"Expected total_length to be at least the length of the longest sequence in input, but "
                         f"got total_length={total_length} and max sequence length being {steps}")
    rows, start = [], 0
    for b in bs:
        part = data[start:start + b]
        start += b
        if b < batch:
            part = joining.cat([part, full((batch - b, *data.shape[1:]), padding_value, dtype=data.dtype,
                                           device=data.device)], 0)
        rows.append(part)
    for _ in range((total_length or steps) - steps):
        rows.append(full((batch, *data.shape[1:]), padding_value, dtype=data.dtype, device=data.device))
    padded = joining.stack(rows, 0)
    lengths = [sum(1 for b in bs if b > i) for i in range(batch)]
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(1, sequence.unsorted_indices)
        lengths = [lengths[int(i)] for i in sequence.unsorted_indices.cpu().tolist()]
    out = padded.transpose(0, 1) if batch_first else padded
    return out, tensor(lengths, dtype=int64)


def repack(padded: Tensor, like: PackedSequence) -> PackedSequence:
    """Time-major padded (L, B, *) rows in the original batch order packed as `like` is (its batch_sizes
    and sorting): how a recurrent layer returns its output for packed input."""
    bs = [int(b) for b in like.batch_sizes.tolist()]
    x = padded.index_select(1, like.sorted_indices) if like.sorted_indices is not None else padded
    data = joining.cat([x[t, :b] for t, b in enumerate(bs)], 0)
    return PackedSequence(data, like.batch_sizes, like.sorted_indices, like.unsorted_indices)


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """pad_sequence then pack_padded_sequence with the sequences' lengths."""
    lengths = [int(s.shape[0]) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


__all__ = ["PackedSequence", "pack_padded_sequence", "pack_sequence", "pad_packed_sequence", "pad_sequence",
           "repack", "unpad_sequence"]
