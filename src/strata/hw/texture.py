"""Texture and surface descriptors: what a `cudaTextureObject_t` / `cudaSurfaceObject_t` handle names.

Source of truth for the contract between the runtime, which creates texture and surface objects, and
the texture units, which the `tex`, `tld4`, `txq`, `suld`, `sust` and `suq` instructions model. As on
the hardware, a handle is an index into a per-device table of descriptors (the GPU's texture header and
sampler tables); the descriptor says where the texels are, how they are laid out and how they are read.

The texels always live in ordinary device memory: a CUDA array is a device allocation with a row pitch
and a slice pitch (strata does not model the hardware's swizzled block-linear layout, which is opaque
to programs anyway), linear memory is one row, and pitched memory is rows `pitch` bytes apart. Layered
and cubemap resources are 2-D slices one `slice_pitch` apart (a cubemap has 6 faces, a cubemap array
6 * layers). Every texel access the texture units make is therefore an access to device memory that
memcheck can check.
"""

from __future__ import annotations

import itertools
import threading
from dataclasses import dataclass, field

import numpy as np

from strata.errors import CudaError

# Resource shapes, by what the texture instructions' geometry suffix reads from them.
KINDS = ("1d", "2d", "3d", "1d_layered", "2d_layered", "cube", "cube_layered")
ADDRESS_MODES = ("wrap", "clamp", "mirror", "border")  # cudaAddressModeWrap = 0 ... Border = 3
FILTER_MODES = ("point", "linear")  # cudaFilterModePoint = 0, Linear = 1
READ_MODES = ("element", "normalized_float")  # cudaReadModeElementType = 0, NormalizedFloat = 1
CHANNEL_KINDS = ("signed", "unsigned", "float")  # cudaChannelFormatKindSigned/Unsigned/Float


@dataclass(frozen=True)
class ChannelFormat:
    """A texel's format (cudaChannelFormatDesc): `channels` components of `dtype` each.

    Example:
        >>> ChannelFormat(np.dtype(np.float32), 4).texel_bytes
        16
    """

    dtype: np.dtype  # per component: int8/uint8/int16/uint16/int32/uint32/float16/float32
    channels: int  # 1, 2 or 4

    def __post_init__(self) -> None:
        if self.channels not in (1, 2, 4):
            raise CudaError("cudaErrorInvalidChannelDescriptor",
                            f"[channel format] channels must be 1, 2 or 4, got {self.channels}")
        if np.dtype(self.dtype) not in _COMPONENT_DTYPES:
            raise CudaError("cudaErrorInvalidChannelDescriptor",
                            f"[channel format] unsupported component type {self.dtype}; supported: "
                            f"{', '.join(str(d) for d in _COMPONENT_DTYPES)}")

    @property
    def texel_bytes(self) -> int:
        return np.dtype(self.dtype).itemsize * self.channels


_COMPONENT_DTYPES = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32,
                                                 np.float16, np.float32))


@dataclass(frozen=True)
class Resource:
    """Where a texture's or surface's texels are in device memory, and their shape.

    `width` is in texels; `pitch` is the bytes from one row to the next (>= width * texel bytes);
    `slice_pitch` the bytes from one 2-D slice to the next (3-D depth slices, layers, cube faces).
    Unused dimensions are 1. `layers` counts layers of a layered resource (0 when not layered);
    a cubemap has `height == width` and 6 faces (times `layers` for a cubemap array).
    """

    address: int
    format: ChannelFormat
    kind: str
    width: int
    height: int = 1
    depth: int = 1
    layers: int = 0
    pitch: int = 0
    slice_pitch: int = 0

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise CudaError("cudaErrorInvalidValue", f"[resource] kind must be one of {KINDS}, got {self.kind!r}")
        for name in ("width", "height", "depth"):
            if getattr(self, name) < 1:
                raise CudaError("cudaErrorInvalidValue", f"[resource] {name} must be >= 1, got {getattr(self, name)}")
        row = self.width * self.format.texel_bytes
        if self.pitch == 0:
            object.__setattr__(self, "pitch", row)
        if self.pitch < row:
            raise CudaError("cudaErrorInvalidPitchValue",
                            f"[resource] pitch {self.pitch} is less than a row of {row} bytes")
        if self.slice_pitch == 0:
            object.__setattr__(self, "slice_pitch", self.pitch * self.height)

    @property
    def slices(self) -> int:
        """2-D slices in memory: depth for 3-D, layers (times 6 faces for cubemaps), else 1."""
        faces = 6 if self.kind.startswith("cube") else 1
        if self.kind == "3d":
            return self.depth
        return faces * max(self.layers, 1) if (self.layers or faces > 1) else 1

    @property
    def nbytes(self) -> int:
        """Bytes from the first texel to one past the last (what must be allocated)."""
        return (self.slices - 1) * self.slice_pitch + (self.height - 1) * self.pitch + \
            self.width * self.format.texel_bytes


@dataclass(frozen=True)
class TextureDescriptor:
    """A texture object: a resource and how to sample it (cudaTextureDesc)."""

    resource: Resource
    address_mode: tuple[str, str, str] = ("clamp", "clamp", "clamp")
    filter_mode: str = "point"
    read_mode: str = "element"
    normalized_coords: bool = False
    border_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    linear: bool = False  # over linear memory (cudaResourceTypeLinear): out-of-range fetches read zero

    def __post_init__(self) -> None:
        for m in self.address_mode:
            if m not in ADDRESS_MODES:
                raise CudaError("cudaErrorInvalidValue", f"[texture] address mode must be one of {ADDRESS_MODES}, "
                                f"got {m!r}")
        if self.filter_mode not in FILTER_MODES:
            raise CudaError("cudaErrorInvalidValue", f"[texture] filter mode must be one of {FILTER_MODES}, "
                            f"got {self.filter_mode!r}")
        if self.read_mode not in READ_MODES:
            raise CudaError("cudaErrorInvalidValue", f"[texture] read mode must be one of {READ_MODES}, "
                            f"got {self.read_mode!r}")


@dataclass(frozen=True)
class SurfaceDescriptor:
    """A surface object: a resource read and written by byte x-coordinates (cudaResourceDesc)."""

    resource: Resource


Descriptor = TextureDescriptor | SurfaceDescriptor


@dataclass
class DescriptorTable:
    """One device's texture and surface descriptors, by handle (handles start at 1; 0 is never valid).

    Example:
        >>> t = DescriptorTable()
        >>> r = Resource(0x7000_0000_0000, ChannelFormat(np.dtype(np.float32), 1), "1d", 16)
        >>> h = t.create(TextureDescriptor(r)); t.texture(h).resource.width
        16
        >>> t.destroy(h); t.texture(h)
        Traceback (most recent call last):
        ...
        strata.errors.CudaError: cudaErrorInvalidValue: [texture] 0x1 is not a live texture object
    """

    _entries: dict[int, Descriptor] = field(default_factory=dict)
    _next: itertools.count[int] = field(default_factory=lambda: itertools.count(1))
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def create(self, desc: Descriptor) -> int:
        with self._lock:
            handle = next(self._next)
            self._entries[handle] = desc
            return handle

    def destroy(self, handle: int) -> None:
        with self._lock:
            if self._entries.pop(int(handle), None) is None:
                raise CudaError("cudaErrorInvalidValue", f"[destroy] {int(handle):#x} is not a live texture or "
                                "surface object")

    def texture(self, handle: int) -> TextureDescriptor:
        d = self._entries.get(int(handle))
        if not isinstance(d, TextureDescriptor):
            raise CudaError("cudaErrorInvalidValue", f"[texture] {int(handle):#x} is not a live texture object")
        return d

    def surface(self, handle: int) -> SurfaceDescriptor:
        d = self._entries.get(int(handle))
        if not isinstance(d, SurfaceDescriptor):
            raise CudaError("cudaErrorInvalidValue", f"[surface] {int(handle):#x} is not a live surface object")
        return d

    def clear(self) -> None:
        """Forget every object (a device reset)."""
        with self._lock:
            self._entries.clear()
