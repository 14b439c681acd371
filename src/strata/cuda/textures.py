"""Texture objects (cudaCreateTextureObject and friends): sampled, read-only views of CUDA arrays, linear
memory and pitched 2-D memory, read in kernels by tex1Dfetch, tex1D, tex2D, tex3D, tex2DLayered,
texCubemap, tex2Dgather and their Lod/Grad forms.

A texture object is an integer handle (`cudaTextureObject_t`) into the device's descriptor table (the
hardware's texture header and sampler tables, `strata.hw.texture`); pass it to a kernel like any
`unsigned long long`. What the sampler does (coordinates, filtering with 8-bit fractional weights,
address modes, read modes, gathers) is documented in `strata.hw.isa.texture_ops`.

Not modeled: mipmapped arrays, sRGB conversion and resource views (each raises cudaErrorNotSupported),
anisotropic filtering (max_anisotropy is accepted and ignored, as level 0 is the only level).

Example:
    >>> import numpy as np, strata.cuda as cuda
    >>> img = cuda.to_device(np.arange(8, dtype=np.float32))
    >>> tex = cuda.create_texture_object(cuda.ResourceDesc.linear(img, np.float32),
    ...                                  cuda.TextureDesc())
    >>> mod = cuda.compile('''extern "C" __global__ void k(cudaTextureObject_t t, float* out) {
    ...     out[threadIdx.x] = tex1Dfetch<float>(t, (int)threadIdx.x * 2 - 2); }''')
    >>> out = cuda.zeros(4); _ = mod.get_function("k")(1, 4, (tex, out)); out.get().tolist()  # index -2 reads 0
    [0.0, 0.0, 2.0, 4.0]
    >>> cuda.destroy_texture_object(tex)
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from strata.cuda.device import Device, current_device
from strata.cuda.memcpy import _device_side
from strata.cuda.memory import DeviceArray
from strata.errors import CudaError
from strata.hw.texture import ADDRESS_MODES, FILTER_MODES, READ_MODES, ChannelFormat, Resource, TextureDescriptor

TEXTURE_ALIGNMENT = 512  # cudaDeviceProp::textureAlignment: base addresses of linear and pitched textures
TEXTURE_PITCH_ALIGNMENT = 32  # cudaDeviceProp::texturePitchAlignment: row pitch of a pitched texture
MAX_TEXTURE_1D_LINEAR = 1 << 28  # cudaDeviceProp::maxTexture1DLinear (texels)
MAX_TEXTURE_2D_LINEAR = (1 << 17, 65000)  # cudaDeviceProp::maxTexture2DLinear (width, height)
_RESOURCE_TYPES = ("array", "mipmapped_array", "linear", "pitch2d")


def _enum(value: Any, names: tuple[str, ...], prefix: str, what: str) -> str:
    """A mode given as its Pythonic name, its CUDA enum name or its CUDA enum value."""
    if isinstance(value, str):
        v = value.removeprefix(prefix).removeprefix(prefix.replace("cuda", "hip", 1))  # HIP's names too
        for n in names:
            if v.lower().replace("_", "") == n.replace("_", ""):
                return n
    elif isinstance(value, int | np.integer) and not isinstance(value, bool) and 0 <= int(value) < len(names):
        return names[int(value)]
    raise CudaError("cudaErrorInvalidValue", f"[create_texture_object] {what} must be one of {names} (or "
                    f"{prefix}..., or 0..{len(names) - 1}), got {value!r}")


@dataclass(frozen=True)
class ResourceDesc:
    """cudaResourceDesc: what a texture samples. Build it with `from_array`, `linear` or `pitch2d`.

    type: 'array' (a CudaArray), 'mipmapped_array' (not supported), 'linear' (ptr, dtype, channels,
    size_in_bytes) or 'pitch2d' (ptr, dtype, channels, width, height, pitch_in_bytes).

    Example:
        >>> import numpy as np
        >>> ResourceDesc.pitch2d(0x7000_0000_0000, np.float32, 16, 4, 64).type
        'pitch2d'
    """

    type: str
    array: Any = None
    ptr: int = 0
    dtype: np.dtype | None = None
    channels: int = 1
    size_in_bytes: int = 0
    width: int = 0
    height: int = 0
    pitch_in_bytes: int = 0
    # the DeviceArray a linear or pitched resource was made from, kept alive with the descriptor (a raw
    # pointer is the caller's to keep alive, as in CUDA)
    owner: Any = field(default=None, compare=False, repr=False)

    @classmethod
    def from_array(cls, array: Any) -> ResourceDesc:
        """cudaResourceTypeArray over a CudaArray (strata.cuda.malloc_array / malloc_3d_array)."""
        return cls("array", array=array)

    @classmethod
    def linear(cls, ptr: int | DeviceArray, dtype: Any, size_in_bytes: int | None = None,
               channels: int = 1) -> ResourceDesc:
        """cudaResourceTypeLinear: `size_in_bytes` (default: the whole DeviceArray) of texels at `ptr`."""
        if size_in_bytes is None:
            if not isinstance(ptr, DeviceArray):
                raise CudaError("cudaErrorInvalidValue", "[ResourceDesc.linear] size_in_bytes is required for a raw "
                                "pointer")
            size_in_bytes = ptr.nbytes
        addr = ptr.ptr if isinstance(ptr, DeviceArray) else int(ptr)
        return cls("linear", ptr=addr, dtype=np.dtype(dtype), channels=channels, size_in_bytes=int(size_in_bytes),
                   owner=ptr if isinstance(ptr, DeviceArray) else None)

    @classmethod
    def pitch2d(cls, ptr: int | DeviceArray, dtype: Any, width: int, height: int, pitch_in_bytes: int,
                channels: int = 1) -> ResourceDesc:
        """cudaResourceTypePitch2D: `height` rows of `width` texels, `pitch_in_bytes` apart, at `ptr`."""
        addr = ptr.ptr if isinstance(ptr, DeviceArray) else int(ptr)
        return cls("pitch2d", ptr=addr, dtype=np.dtype(dtype), channels=channels, width=int(width),
                   height=int(height), pitch_in_bytes=int(pitch_in_bytes),
                   owner=ptr if isinstance(ptr, DeviceArray) else None)


@dataclass(frozen=True)
class TextureDesc:
    """cudaTextureDesc: how a texture is sampled.

    address_mode: one mode or one per dimension, of 'wrap', 'clamp', 'mirror', 'border' (or
    cudaAddressModeWrap..., or 0..3); filter_mode 'point' | 'linear'; read_mode 'element' |
    'normalized_float'; normalized_coords; border_color (4 floats). srgb=True and mipmap
    settings other than the defaults are not supported.

    Example:
        >>> TextureDesc(address_mode="border", filter_mode="cudaFilterModeLinear").address_mode
        ('border', 'border', 'border')
        >>> TextureDesc(address_mode=("hipAddressModeWrap", 2), read_mode="hipReadModeNormalizedFloat").address_mode
        ('wrap', 'mirror', 'mirror')
    """

    address_mode: Any = ("clamp", "clamp", "clamp")
    filter_mode: Any = "point"
    read_mode: Any = "element"
    normalized_coords: bool = False
    border_color: tuple[float, float, float, float] = (0.0, 0.0, 0.0, 0.0)
    srgb: bool = False
    max_anisotropy: int = 0
    mipmap_filter_mode: Any = "point"
    mipmap_level_bias: float = 0.0
    min_mipmap_level_clamp: float = 0.0
    max_mipmap_level_clamp: float = 0.0

    def __post_init__(self) -> None:
        modes = self.address_mode
        if isinstance(modes, str | int | np.integer):
            modes = (modes,) * 3
        modes = tuple(modes)
        if not 1 <= len(modes) <= 3:
            raise CudaError("cudaErrorInvalidValue", f"[TextureDesc] address_mode takes 1 to 3 modes, got {modes!r}")
        modes = modes + (modes[-1],) * (3 - len(modes))
        object.__setattr__(self, "address_mode",
                           tuple(_enum(m, ADDRESS_MODES, "cudaAddressMode", "address_mode") for m in modes))
        object.__setattr__(self, "filter_mode", _enum(self.filter_mode, FILTER_MODES, "cudaFilterMode",
                                                      "filter_mode"))
        object.__setattr__(self, "mipmap_filter_mode", _enum(self.mipmap_filter_mode, FILTER_MODES,
                                                             "cudaFilterMode", "mipmap_filter_mode"))
        object.__setattr__(self, "read_mode", _enum(self.read_mode, READ_MODES, "cudaReadMode", "read_mode"))
        bc = tuple(float(c) for c in self.border_color)
        if len(bc) != 4:
            raise CudaError("cudaErrorInvalidValue", f"[TextureDesc] border_color takes 4 floats, got {bc!r}")
        object.__setattr__(self, "border_color", bc)


@dataclass
class _Registry:
    objects: dict[tuple[int, int], tuple[ResourceDesc, TextureDesc]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


_REGISTRY = _Registry()


def _resource(res: ResourceDesc, op: str) -> tuple[Resource, Device]:
    """The hardware resource a ResourceDesc names, validated as cudaCreateTextureObject does."""
    if res.type not in _RESOURCE_TYPES:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] resource type must be one of {_RESOURCE_TYPES}, "
                        f"got {res.type!r}")
    if res.type == "mipmapped_array":
        raise CudaError("cudaErrorNotSupported", f"[{op}] mipmapped arrays are not supported by strata")
    if res.type == "array":
        hw = getattr(res.array, "resource", None)
        if not isinstance(hw, Resource):
            raise CudaError("cudaErrorInvalidResourceHandle", f"[{op}] expected a CudaArray, got "
                            f"{type(res.array).__name__}")
        check = getattr(res.array, "check_live", None)
        if check is not None:
            check(op)
        dev = getattr(res.array, "device", None) or current_device()
        return hw, dev
    if res.dtype is None:
        raise CudaError("cudaErrorInvalidChannelDescriptor", f"[{op}] a {res.type} resource needs a dtype")
    fmt = ChannelFormat(np.dtype(res.dtype), res.channels)
    if res.ptr % TEXTURE_ALIGNMENT:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] a {res.type} texture's address must be a multiple of "
                        f"textureAlignment ({TEXTURE_ALIGNMENT}), got {res.ptr:#x}")
    if res.type == "linear":
        if res.size_in_bytes <= 0 or res.size_in_bytes % fmt.texel_bytes:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] size_in_bytes must be a positive multiple of the "
                            f"{fmt.texel_bytes}-byte texel, got {res.size_in_bytes}")
        width = res.size_in_bytes // fmt.texel_bytes
        if width > MAX_TEXTURE_1D_LINEAR:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] {width} texels exceed maxTexture1DLinear "
                            f"({MAX_TEXTURE_1D_LINEAR})")
        _, dev = _device_side(res.ptr, op, res.size_in_bytes)
        return Resource(res.ptr, fmt, "1d", width), dev
    if res.width < 1 or res.height < 1 or res.width > MAX_TEXTURE_2D_LINEAR[0] or \
            res.height > MAX_TEXTURE_2D_LINEAR[1]:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] pitch2d width and height must be in [1, "
                        f"{MAX_TEXTURE_2D_LINEAR}], got {res.width}x{res.height}")
    if res.pitch_in_bytes % TEXTURE_PITCH_ALIGNMENT or res.pitch_in_bytes < res.width * fmt.texel_bytes:
        raise CudaError("cudaErrorInvalidPitchValue", f"[{op}] pitch_in_bytes must be a multiple of "
                        f"texturePitchAlignment ({TEXTURE_PITCH_ALIGNMENT}) and hold a row of {res.width} "
                        f"{fmt.texel_bytes}-byte texels, got {res.pitch_in_bytes}")
    nbytes = (res.height - 1) * res.pitch_in_bytes + res.width * fmt.texel_bytes
    _, dev = _device_side(res.ptr, op, nbytes)
    return Resource(res.ptr, fmt, "2d", res.width, res.height, pitch=res.pitch_in_bytes), dev


def create_texture_object(res: ResourceDesc, tex_desc: TextureDesc | None = None, view: Any = None) -> int:
    """cudaCreateTextureObject: a texture object (an int handle) sampling `res` as `tex_desc` says.

    Errors (CudaError): cudaErrorNotSupported for mipmapped arrays, sRGB and resource views;
    cudaErrorInvalidValue for linear filtering of integer texels read as elements (CUDA's
    cudaErrorInvalidFilterSetting), normalized-float reads of 32-bit integers (cudaErrorInvalidNormSetting),
    misaligned addresses or pitches, and memory outside a live allocation.

    Example:
        >>> import numpy as np, strata.cuda as cuda
        >>> buf = cuda.zeros(64, np.uint8)
        >>> t = cuda.create_texture_object(cuda.ResourceDesc.linear(buf, np.uint8),
        ...                                cuda.TextureDesc(read_mode="normalized_float"))
        >>> cuda.get_texture_object_texture_desc(t).read_mode
        'normalized_float'
        >>> cuda.destroy_texture_object(t)
    """
    op = "create_texture_object"
    if not isinstance(res, ResourceDesc):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] res must be a ResourceDesc, got {type(res).__name__}")
    td = TextureDesc() if tex_desc is None else tex_desc
    if not isinstance(td, TextureDesc):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] tex_desc must be a TextureDesc, got {type(td).__name__}")
    if view is not None:
        raise CudaError("cudaErrorNotSupported", f"[{op}] resource views (cudaResourceViewDesc) are not supported")
    if td.srgb:
        raise CudaError("cudaErrorNotSupported", f"[{op}] sRGB conversion is not supported")
    hw, dev = _resource(res, op)
    dt = hw.format.dtype
    if td.read_mode == "normalized_float" and dt.kind in "iu" and dt.itemsize == 4:
        raise CudaError("cudaErrorInvalidNormSetting", f"[{op}] normalized-float reads need 8- or 16-bit integer "
                        f"texels, not {dt}")
    if td.filter_mode == "linear" and dt.kind in "iu" and td.read_mode == "element":
        raise CudaError("cudaErrorInvalidFilterSetting", f"[{op}] linear filtering of {dt} texels needs read_mode "
                        "'normalized_float'")
    desc = TextureDescriptor(hw, td.address_mode, td.filter_mode, td.read_mode, bool(td.normalized_coords),
                             td.border_color, linear=res.type == "linear")
    handle = dev.file.gpu.memory.descriptors.create(desc)
    with _REGISTRY.lock:
        _REGISTRY.objects[(dev.index, handle)] = (res, td)
    return handle


def _lookup(tex: int, op: str) -> tuple[Device, tuple[ResourceDesc, TextureDesc]]:
    if isinstance(tex, bool) or not isinstance(tex, int | np.integer):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] expected a texture object (int), got {type(tex).__name__}")
    dev = current_device()
    entry = _REGISTRY.objects.get((dev.index, int(tex)))
    try:
        dev.file.gpu.memory.descriptors.texture(int(tex))  # raises for a destroyed object or after a reset
    except CudaError:
        with _REGISTRY.lock:  # a device reset took it: forget it (and the DeviceArray it kept alive)
            _REGISTRY.objects.pop((dev.index, int(tex)), None)
        raise
    if entry is None:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {int(tex):#x} is not a live texture object")
    return dev, entry


def destroy_texture_object(tex: int) -> None:
    """cudaDestroyTextureObject. Waits for the device's queued work first (as cudaFree does), so kernels
    launched with the object still read it; afterwards its handle is invalid and a kernel using it faults."""
    dev, _ = _lookup(tex, "destroy_texture_object")
    dev.synchronize()
    dev.file.gpu.memory.descriptors.destroy(int(tex))
    with _REGISTRY.lock:
        _REGISTRY.objects.pop((dev.index, int(tex)), None)


def get_texture_object_resource_desc(tex: int) -> ResourceDesc:
    """cudaGetTextureObjectResourceDesc: the ResourceDesc the object was created from."""
    return _lookup(tex, "get_texture_object_resource_desc")[1][0]


def get_texture_object_texture_desc(tex: int) -> TextureDesc:
    """cudaGetTextureObjectTextureDesc: the (normalized) TextureDesc the object was created with."""
    return _lookup(tex, "get_texture_object_texture_desc")[1][1]
