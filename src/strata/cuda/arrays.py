"""CUDA arrays, pitched memory, 2-D/3-D copies and surface objects, in the CUDA runtime's shape.

Source of truth for `cudaMallocArray`, `cudaMalloc3DArray`, `cudaMallocPitch`, `cudaMemcpy2D*`,
`cudaMemcpy3D` and `cudaCreateSurfaceObject` in strata.

A CUDA array (`CudaArray`) is a device allocation holding a `hw.texture.Resource`: rows of texels
`ROW_ALIGNMENT` bytes apart, 2-D slices (depth slices, layers, cubemap faces) one slice pitch apart.
The layout is strata's (real GPUs swizzle arrays into an opaque block-linear layout); programs only
reach arrays through copies, textures and surfaces, so none can tell.

Coordinates follow CUDA: in a copy to or from an array, `w_offset` and the width of a 2-D copy are in
BYTES (cudaMemcpy2DToArray's wOffset and width), while `Memcpy3DParms` positions and extents are in
elements when their side is an array and in bytes for pitched memory. A surface object's x coordinate
in a kernel (surf2Dread(s, x, y)) is in bytes too.

Host memory is a C-contiguous NumPy array (its bytes are the host side, with the given pitch); device
memory is an int device pointer or a DeviceArray. Every range is checked before anything is queued.

Example:
    >>> import numpy as np
    >>> desc = create_channel_desc(32, 0, 0, 0, "float")
    >>> arr = malloc_array(desc, 5, 3, ArrayFlags.SURFACE_LOAD_STORE)
    >>> img = np.arange(15, dtype=np.float32).reshape(3, 5)
    >>> memcpy_2d_to_array(arr, 0, 0, img, 20, 20, 3, MemcpyKind.HostToDevice)
    >>> out = np.zeros_like(img); memcpy_2d_from_array(out, 20, arr, 0, 0, 20, 3, "DeviceToHost")
    >>> bool((out == img).all())
    True
    >>> free_array(arr)
"""

from __future__ import annotations

import enum
import weakref
from dataclasses import dataclass
from typing import Any, cast

import numpy as np

from strata import trace
from strata.cuda.device import Device, current_device
from strata.cuda.memcpy import MemcpyKind, _device_side, _is_device, _kind
from strata.cuda.memory import DeviceArray, free_now, release_dropped
from strata.errors import CudaError
from strata.hw.texture import ChannelFormat, Resource, SurfaceDescriptor
from strata.runtime import Context, Stream

ROW_ALIGNMENT = 512  # bytes between rows of arrays and of cudaMallocPitch memory (cudaDeviceProp.texturePitchAlignment
# is 32 on real GPUs; cudaMallocPitch returns multiples of 512 on recent ones, and arrays use the same here)

# cudaDeviceProp's texture limits of sm_80/sm_90 parts (maxTexture1D, maxTexture2D, maxTexture3D, ...)
_MAX_1D = 131072
_MAX_2D = (131072, 65536)
_MAX_3D = 16384
_MAX_LAYERED_1D = (32768, 2048)
_MAX_LAYERED_2D = (32768, 32768, 2048)
_MAX_CUBE = 32768
_MAX_CUBE_LAYERS = 2046


class ArrayFlags(enum.IntFlag):
    """cudaMallocArray / cudaMalloc3DArray flags (cudaArrayDefault, cudaArrayLayered, ...), CUDA's values."""

    DEFAULT = 0x00
    LAYERED = 0x01
    SURFACE_LOAD_STORE = 0x02
    CUBEMAP = 0x04
    TEXTURE_GATHER = 0x08


_KINDS = {"signed": "signed", "unsigned": "unsigned", "float": "float", 0: "signed", 1: "unsigned", 2: "float",
          "cudaChannelFormatKindSigned": "signed", "cudaChannelFormatKindUnsigned": "unsigned",
          "cudaChannelFormatKindFloat": "float", "hipChannelFormatKindSigned": "signed",
          "hipChannelFormatKindUnsigned": "unsigned", "hipChannelFormatKindFloat": "float"}
_DTYPES = {("signed", 8): np.int8, ("signed", 16): np.int16, ("signed", 32): np.int32,
           ("unsigned", 8): np.uint8, ("unsigned", 16): np.uint16, ("unsigned", 32): np.uint32,
           ("float", 16): np.float16, ("float", 32): np.float32}


@dataclass(frozen=True)
class ChannelFormatDesc:
    """cudaChannelFormatDesc: bits of the x, y, z, w components and their kind ('signed', 'unsigned', 'float').

    Validated when an array is allocated, as CUDA does (cudaErrorInvalidChannelDescriptor): 1, 2 or 4
    components of one size, 8/16/32 bits for integers and 16/32 bits for floats.

    Example:
        >>> d = ChannelFormatDesc(8, 8, 8, 8, "unsigned"); d.format().texel_bytes, d.format().dtype.name
        (4, 'uint8')
    """

    x: int
    y: int = 0
    z: int = 0
    w: int = 0
    kind: str = "float"

    def format(self) -> ChannelFormat:
        """The texel format this describes (raises cudaErrorInvalidChannelDescriptor if none)."""
        bits = (self.x, self.y, self.z, self.w)
        channels = {(0, 0, 0): 1, (1, 0, 0): 2, (1, 1, 1): 4}.get(tuple(int(b != 0) for b in bits[1:]))  # type: ignore
        size = self.x
        if channels is None or self.x == 0 or any(b not in (0, size) for b in bits):
            raise CudaError("cudaErrorInvalidChannelDescriptor",
                            f"[channel desc] components must be x, x+y or x+y+z+w of one size, got bits {bits}")
        dtype = _DTYPES.get((self.kind, size))
        if dtype is None:
            raise CudaError("cudaErrorInvalidChannelDescriptor",
                            f"[channel desc] {size}-bit {self.kind} components are not a texel format (integers: 8, "
                            f"16 or 32 bits; floats: 16 or 32)")
        return ChannelFormat(np.dtype(dtype), channels)


def create_channel_desc(x: Any, y: int = 0, z: int = 0, w: int = 0, kind: str | int = "float") -> ChannelFormatDesc:
    """cudaCreateChannelDesc(x, y, z, w, f): a channel format descriptor.

    `x` may also be a NumPy dtype (then `y` is the number of components, default 1), the shape of
    CUDA C++'s cudaCreateChannelDesc<T>(): `create_channel_desc(np.uint8, 4)` is uchar4's.

    Example:
        >>> create_channel_desc(np.float32, 2)
        ChannelFormatDesc(x=32, y=32, z=0, w=0, kind='float')
        >>> create_channel_desc(16, 16, 0, 0, "signed").format().dtype.name
        'int16'
    """
    if not isinstance(x, int | np.integer) or isinstance(x, bool):
        try:
            dt = np.dtype(cast(Any, x))
        except TypeError:
            raise CudaError("cudaErrorInvalidChannelDescriptor",
                            f"[create_channel_desc] x must be a bit count or a NumPy dtype, got {x!r}") from None
        n = y or 1
        if n not in (1, 2, 4):
            raise CudaError("cudaErrorInvalidChannelDescriptor", f"[create_channel_desc] {n} components: use 1, 2 or 4")
        k = {"i": "signed", "u": "unsigned", "f": "float"}.get(dt.kind)
        if k is None:
            raise CudaError("cudaErrorInvalidChannelDescriptor", f"[create_channel_desc] {dt} is not a texel type")
        b = dt.itemsize * 8
        comps = [b] * n + [0] * (4 - n)
        return ChannelFormatDesc(comps[0], comps[1], comps[2], comps[3], k)
    key = _KINDS.get(kind)
    if key is None:
        raise CudaError("cudaErrorInvalidChannelDescriptor",
                        f"[create_channel_desc] kind must be 'signed', 'unsigned' or 'float', got {kind!r}")
    return ChannelFormatDesc(int(x), int(y), int(z), int(w), key)


def _desc(desc: Any) -> ChannelFormatDesc:
    if isinstance(desc, ChannelFormatDesc):
        return desc
    if desc is None:
        raise CudaError("cudaErrorInvalidValue", "[malloc_array] desc is required (a ChannelFormatDesc)")
    return create_channel_desc(desc)


class CudaArray:
    """A CUDA array (cudaArray_t): texels in device memory, for copies, textures and surfaces.

    `width`, `height`, `depth` are CUDA's extent as given at allocation (0 for unused dimensions;
    `depth` counts layers of a layered array and 6 * layers of a cubemap); `resource` is the layout
    the texture units read (hw.texture.Resource); `flags` are the ArrayFlags; `.ptr` the allocation.
    `get()` copies the whole array back as a NumPy array of shape (slices, height, width[, channels])
    without the unused leading dimensions.

    Example:
        >>> a = malloc_3d_array(create_channel_desc(np.int16, 2), (3, 2, 4), ArrayFlags.LAYERED)
        >>> a.resource.kind, a.resource.layers, a.get().shape
        ('2d_layered', 4, (4, 2, 3, 2))
        >>> a.free()
    """

    def __init__(self, desc: ChannelFormatDesc, width: int, height: int, depth: int, flags: int, op: str) -> None:
        self.desc = desc
        self.format = desc.format()
        self.flags = ArrayFlags(int(flags))
        self.width, self.height, self.depth = width, height, depth
        self.device: Device = current_device()
        kind, h, d, layers = _layout(self.flags, width, height, depth, op)
        row = width * self.format.texel_bytes
        pitch = -(-row // ROW_ALIGNMENT) * ROW_ALIGNMENT
        probe = Resource(0, self.format, kind, width, h, d, layers, pitch)
        nbytes = probe.slices * probe.slice_pitch
        ctx = self.device.context
        name = "cudaMalloc3DArray" if op == "malloc_3d_array" else "cudaMallocArray"
        with trace.span("L3", name, bytes=nbytes, kind=kind):
            self.ptr = ctx.malloc(nbytes, f"CudaArray {kind} {width}x{h}x{probe.slices} {self.format.dtype}"
                                  f"x{self.format.channels}")
        self.nbytes = nbytes
        self.resource = Resource(self.ptr, self.format, kind, width, h, d, layers, pitch)
        self._generation = ctx.generation
        self._finalizer = weakref.finalize(self, release_dropped, ctx, self.ptr, self._generation, "cudaFreeArray")

    @property
    def kind(self) -> str:
        return self.resource.kind

    @property
    def row_bytes(self) -> int:
        return self.resource.width * self.format.texel_bytes

    @property
    def freed(self) -> bool:
        return not self._finalizer.alive or self._generation != self.device.context.generation

    @property
    def shape(self) -> tuple[int, ...]:
        """The NumPy shape of the array's texels: (slices, height, width[, channels]), unused dims dropped."""
        r = self.resource
        dims: list[int] = []
        if r.kind == "3d" or r.slices > 1 or r.layers:
            dims.append(r.slices)
        if r.kind not in ("1d", "1d_layered"):
            dims.append(r.height)
        dims.append(r.width)
        if self.format.channels > 1:
            dims.append(self.format.channels)
        return tuple(dims)

    def check_live(self, op: str) -> None:
        """Raise cudaErrorInvalidValue (or cudaErrorInvalidResourceHandle-like) if freed or reset away."""
        if not self._finalizer.alive:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] the CUDA array at {self.ptr:#x} was freed")
        if self._generation != self.device.context.generation:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] the CUDA array at {self.ptr:#x} was released by "
                            f"Device.reset() of device {self.device.index}")

    def set(self, host: np.ndarray, *, stream: Stream | None = None) -> None:
        """Copy a host array of `shape` and the array's dtype into the whole array (cudaMemcpy3D)."""
        host = np.asarray(host)
        if host.shape != self.shape or host.dtype != self.format.dtype:
            raise CudaError("cudaErrorInvalidValue", f"[CudaArray.set] expected shape {self.shape} of "
                            f"{self.format.dtype}, got {host.shape} of {host.dtype}")
        r = self.resource
        host = np.ascontiguousarray(host)
        memcpy_3d(Memcpy3DParms(src_ptr=PitchedPtr(host, self.row_bytes, r.width, r.height), dst_array=self,
                                extent=(r.width, r.height, r.slices), kind=MemcpyKind.HostToDevice), stream=stream)

    def get(self, *, stream: Stream | None = None) -> np.ndarray:
        """The whole array copied to a new host array of `shape` (cudaMemcpy3D)."""
        r = self.resource
        out = np.empty(self.shape, dtype=self.format.dtype)
        memcpy_3d(Memcpy3DParms(src_array=self, dst_ptr=PitchedPtr(out, self.row_bytes, r.width, r.height),
                                extent=(r.width, r.height, r.slices), kind=MemcpyKind.DeviceToHost), stream=stream)
        return out

    def free(self) -> None:
        """cudaFreeArray: release the array now. Surface and texture objects over it stay (as in CUDA);
        using one afterwards is a use after free that memcheck reports."""
        self.check_live("free_array")
        free_now(self._finalizer, self.device.context, self.ptr, self._generation, "cudaFreeArray")

    def __repr__(self) -> str:
        state = " freed" if self.freed else ""
        return f"<CudaArray {self.kind} shape={self.shape} {self.format.dtype} ptr={self.ptr:#x}{state}>"


def _dim(v: Any, name: str, op: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {name} must be an int >= 0, got {v!r}")
    return int(v)


def _layout(flags: ArrayFlags, w: int, h: int, d: int, op: str) -> tuple[str, int, int, int]:
    """(resource kind, height, depth, layers) of CUDA's extent and flags; checks CUDA's rules and limits."""
    def bad(why: str) -> CudaError:
        return CudaError("cudaErrorInvalidValue", f"[{op}] {why} (extent {w}x{h}x{d}, flags {flags!r})")

    unknown = int(flags) & ~0x0F
    if unknown:
        raise bad(f"unknown flag bits {unknown:#x}")
    if w == 0:
        raise bad("width must be > 0")
    if flags & ArrayFlags.CUBEMAP:
        if w != h:
            raise bad("a cubemap's width and height must be equal")
        if flags & ArrayFlags.LAYERED:
            if d == 0 or d % 6 or d // 6 > _MAX_CUBE_LAYERS:
                raise bad(f"a layered cubemap's depth must be 6 * layers, 1 <= layers <= {_MAX_CUBE_LAYERS}")
            if w > _MAX_CUBE:
                raise bad(f"cubemap width exceeds {_MAX_CUBE}")
            return "cube_layered", h, 1, d // 6
        if d != 6:
            raise bad("a cubemap's depth must be 6 (its faces)")
        if w > _MAX_CUBE:
            raise bad(f"cubemap width exceeds {_MAX_CUBE}")
        return "cube", h, 1, 0
    if flags & ArrayFlags.LAYERED:
        if d == 0:
            raise bad("a layered array's depth (its layer count) must be > 0")
        if h == 0:
            if w > _MAX_LAYERED_1D[0] or d > _MAX_LAYERED_1D[1]:
                raise bad(f"a 1-D layered array is at most {_MAX_LAYERED_1D[0]} wide with {_MAX_LAYERED_1D[1]} layers")
            return "1d_layered", 1, 1, d
        if w > _MAX_LAYERED_2D[0] or h > _MAX_LAYERED_2D[1] or d > _MAX_LAYERED_2D[2]:
            raise bad(f"a 2-D layered array is at most {_MAX_LAYERED_2D[0]}x{_MAX_LAYERED_2D[1]} with "
                      f"{_MAX_LAYERED_2D[2]} layers")
        return "2d_layered", h, 1, d
    if d:
        if h == 0:
            raise bad("a 3-D array needs a height > 0")
        if max(w, h, d) > _MAX_3D:
            raise bad(f"a 3-D array is at most {_MAX_3D} in each dimension")
        return "3d", h, d, 0
    if h:
        if w > _MAX_2D[0] or h > _MAX_2D[1]:
            raise bad(f"a 2-D array is at most {_MAX_2D[0]}x{_MAX_2D[1]}")
        return "2d", h, 1, 0
    if w > _MAX_1D:
        raise bad(f"a 1-D array is at most {_MAX_1D} wide")
    return "1d", 1, 1, 0


def malloc_array(desc: ChannelFormatDesc | Any, width: int, height: int = 0,
                 flags: ArrayFlags | int = ArrayFlags.DEFAULT) -> CudaArray:
    """cudaMallocArray: a 1-D (height 0) or 2-D CUDA array of `width` x `height` texels of `desc`.

    Raises:
        CudaError: cudaErrorInvalidChannelDescriptor for a bad `desc`; cudaErrorInvalidValue for a zero
            width, sizes over the device's texture limits or flags cudaMallocArray does not take.

    Example:
        >>> a = malloc_array(create_channel_desc(np.uint8, 4), 7); a.kind, a.shape
        ('1d', (7, 4))
        >>> free_array(a)
    """
    d = _desc(desc)
    w, h = _dim(width, "width", "malloc_array"), _dim(height, "height", "malloc_array")
    if int(flags) & (ArrayFlags.LAYERED | ArrayFlags.CUBEMAP):
        raise CudaError("cudaErrorInvalidValue", "[malloc_array] layered and cubemap arrays need malloc_3d_array "
                        "(cudaMalloc3DArray)")
    return CudaArray(d, w, h, 0, int(flags), "malloc_array")


def malloc_3d_array(desc: ChannelFormatDesc | Any, extent: tuple[int, int, int],
                    flags: ArrayFlags | int = ArrayFlags.DEFAULT) -> CudaArray:
    """cudaMalloc3DArray: a CUDA array of `extent` = (width, height, depth) texels, as CUDA reads it.

    (w, 0, 0) is 1-D, (w, h, 0) 2-D, (w, h, d) 3-D; with LAYERED, (w, 0, n) is n 1-D layers and (w, h, n)
    n 2-D layers; with CUBEMAP, (w, w, 6) is a cubemap and, with LAYERED too, (w, w, 6n) n cubemaps.

    Example:
        >>> cube = malloc_3d_array(create_channel_desc(np.float32), (4, 4, 6), ArrayFlags.CUBEMAP)
        >>> cube.kind, cube.resource.slices
        ('cube', 6)
        >>> free_array(cube)
    """
    if not isinstance(extent, tuple | list) or len(extent) != 3:
        raise CudaError("cudaErrorInvalidValue", f"[malloc_3d_array] extent must be (width, height, depth), "
                        f"got {extent!r}")
    d = _desc(desc)
    w, h, dd = (_dim(v, n, "malloc_3d_array") for v, n in zip(extent, ("width", "height", "depth"), strict=True))
    return CudaArray(d, w, h, dd, int(flags), "malloc_3d_array")


def free_array(array: CudaArray | None) -> None:
    """cudaFreeArray (waits for the device first, as cudaFree does). `free_array(None)` does nothing."""
    if array is None:
        return
    if not isinstance(array, CudaArray):
        raise CudaError("cudaErrorInvalidValue", f"[free_array] expected a CudaArray, got {type(array).__name__}")
    array.free()


def malloc_pitch(width: int, height: int) -> tuple[int, int]:
    """cudaMallocPitch: `height` rows of `width` bytes; returns (device pointer, pitch in bytes).

    The pitch is `width` rounded up to ROW_ALIGNMENT (512) bytes; address row r at `ptr + r * pitch`.

    Example:
        >>> ptr, pitch = malloc_pitch(100, 3); pitch
        512
        >>> from strata.cuda.memcpy import free; free(ptr)
    """
    w, h = _dim(width, "width", "malloc_pitch"), _dim(height, "height", "malloc_pitch")
    pitch = max(-(-w // ROW_ALIGNMENT) * ROW_ALIGNMENT, ROW_ALIGNMENT)
    with trace.span("L3", "cudaMallocPitch", bytes=pitch * h, pitch=pitch):
        return current_device().context.malloc(max(pitch * h, 1), "cudaMallocPitch"), pitch


def malloc_3d(extent: tuple[int, int, int]) -> PitchedPtr:
    """cudaMalloc3D: pitched device memory for `extent` = (width in BYTES, height, depth); returns its
    PitchedPtr (rows `pitch` bytes apart, slices `pitch * height`).

    Example:
        >>> p = malloc_3d((10, 3, 2)); p.pitch, p.xsize, p.ysize
        (512, 10, 3)
        >>> from strata.cuda.memcpy import free; free(p.ptr)
    """
    if not isinstance(extent, tuple | list) or len(extent) != 3:
        raise CudaError("cudaErrorInvalidValue", f"[malloc_3d] extent must be (width, height, depth), got {extent!r}")
    w, h, d = (_dim(v, n, "malloc_3d") for v, n in zip(extent, ("width", "height", "depth"), strict=True))
    pitch = max(-(-w // ROW_ALIGNMENT) * ROW_ALIGNMENT, ROW_ALIGNMENT)
    with trace.span("L3", "cudaMalloc3D", bytes=pitch * h * d, pitch=pitch):
        ptr = current_device().context.malloc(max(pitch * h * d, 1), "cudaMalloc3D")
    return PitchedPtr(ptr, pitch, w, h)


def array_get_info(array: CudaArray) -> tuple[ChannelFormatDesc, tuple[int, int, int], ArrayFlags]:
    """cudaArrayGetInfo: (channel format, extent (width, height, depth) as allocated, flags) of an array.

    Example:
        >>> a = malloc_3d_array(create_channel_desc(np.uint16, 2), (4, 0, 3), ArrayFlags.LAYERED)
        >>> desc, extent, flags = array_get_info(a); desc.x, desc.kind, extent, flags == ArrayFlags.LAYERED
        (16, 'unsigned', (4, 0, 3), True)
    """
    if not isinstance(array, CudaArray):
        raise CudaError("cudaErrorInvalidValue", f"[array_get_info] expected a CudaArray, got {type(array).__name__}")
    array.check_live("array_get_info")
    return array.desc, (array.width, array.height, array.depth), array.flags


# -- 2-D and 3-D copies ----------------------------------------------------------------------------------


@dataclass
class PitchedPtr:
    """cudaPitchedPtr (make_cudaPitchedPtr): memory with rows `pitch` bytes apart; `ptr` is a device
    pointer (int or DeviceArray) or a host NumPy array; `xsize` is the row's width and `ysize` the rows
    of a 2-D slice (the slice pitch is pitch * ysize).

    Example:
        >>> PitchedPtr(np.zeros((2, 3), np.float32), 12, 3, 2).pitch
        12
    """

    ptr: Any
    pitch: int
    xsize: int
    ysize: int


@dataclass
class Memcpy3DParms:
    """cudaMemcpy3DParms: a box of `extent` = (width, height, depth) copied from a source at `src_pos`
    to a destination at `dst_pos`; each side is either a CudaArray (`*_array`) or a PitchedPtr (`*_ptr`).

    Units are CUDA's: when either side is an array, widths and an array side's x position are in
    elements (texels); between two pitched pointers, in bytes. A pitched side's x position is in bytes.

    Example:
        >>> Memcpy3DParms(extent=(4, 2, 1)).kind
        <MemcpyKind.Default: 4>
    """

    src_array: CudaArray | None = None
    src_pos: tuple[int, int, int] = (0, 0, 0)
    src_ptr: PitchedPtr | None = None
    dst_array: CudaArray | None = None
    dst_pos: tuple[int, int, int] = (0, 0, 0)
    dst_ptr: PitchedPtr | None = None
    extent: tuple[int, int, int] = (0, 0, 0)
    kind: MemcpyKind | str | int = MemcpyKind.Default


@dataclass
class _Side:
    """One side of a box copy: host bytes or a device address, with its row and slice pitches."""

    host: np.ndarray | None  # flat uint8 view of a host array
    address: int  # device address of the box's first byte, or its offset into `host`
    pitch: int
    slice_pitch: int
    device: Device | None
    pad_ok: bool = False  # the bytes between the box's rows may be overwritten (an array's whole rows)

    def at(self, y: int, z: int) -> int:
        return self.address + z * self.slice_pitch + y * self.pitch

    def span(self, w: int, h: int, d: int) -> int:
        return (d - 1) * self.slice_pitch + (h - 1) * self.pitch + w

    def box(self, buf: np.ndarray, start: int, w: int, h: int, d: int) -> np.ndarray:
        """The (d, h, w) box of bytes of `buf` whose first byte is buf[start], as a strided view."""
        return np.lib.stride_tricks.as_strided(buf[start:], (d, h, w), (self.slice_pitch, self.pitch, 1))


def _int(v: Any, name: str, op: str) -> int:
    if isinstance(v, bool) or not isinstance(v, int | np.integer):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {name} must be an int, got {v!r}")
    if v < 0:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {name} must be >= 0, got {v}")
    return int(v)


def _array_side(arr: Any, x_bytes: int, y: int, z: int, w: int, h: int, d: int, op: str, what: str) -> _Side:
    if not isinstance(arr, CudaArray):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {what} must be a CudaArray, got {type(arr).__name__}")
    arr.check_live(op)
    r = arr.resource
    if x_bytes + w > arr.row_bytes or y + h > r.height or z + d > r.slices:
        raise CudaError("cudaErrorInvalidValue",
                        f"[{op}] the {w}-byte x {h} x {d} box at byte {x_bytes}, row {y}, slice {z} does not fit "
                        f"the {what} array of rows of {arr.row_bytes} bytes x {r.height} x {r.slices} slices")
    whole_rows = x_bytes == 0 and w == arr.row_bytes and (d <= 1 or h == r.height)
    return _Side(None, r.address + z * r.slice_pitch + y * r.pitch + x_bytes, r.pitch, r.slice_pitch, arr.device,
                 whole_rows)


def _linear_side(p: Any, pitch: int, ysize: int, offset: int, w: int, h: int, d: int, op: str, what: str,
                 device: bool, writable: bool) -> _Side:
    """A pitched host or device side; `offset` is the byte offset of the box's first byte."""
    slice_pitch = pitch * ysize
    span = 0 if w == 0 or h == 0 or d == 0 else (d - 1) * slice_pitch + (h - 1) * pitch + w
    if device:
        if isinstance(p, np.ndarray):
            raise CudaError("cudaErrorInvalidMemcpyDirection", f"[{op}] {what} must be device memory for this kind")
        base, dev = _device_side(p, op, 0)
        addr, _ = _device_side(base + offset, op, span) if span else (base + offset, dev)
        return _Side(None, addr, pitch, slice_pitch, dev)
    if not isinstance(p, np.ndarray):
        raise CudaError("cudaErrorInvalidMemcpyDirection",
                        f"[{op}] {what} must be host memory (a NumPy array) for this kind, got {type(p).__name__}")
    if not p.flags.c_contiguous:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] the {what} host array must be C-contiguous")
    if writable and not p.flags.writeable:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] the destination host array is read-only")
    if offset + span > p.nbytes:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] the {what} host array has {p.nbytes} bytes; the copy needs "
                        f"{offset + span}")
    return _Side(p.reshape(-1).view(np.uint8), offset, pitch, slice_pitch, None)


def _direction(kind_arg: Any, dst_is_device: bool | None, src_is_device: bool | None, op: str) -> MemcpyKind:
    """The copy's kind; None for a side means an array (always device)."""
    kind = _kind(kind_arg)
    d_dev = True if dst_is_device is None else dst_is_device
    s_dev = True if src_is_device is None else src_is_device
    if kind == MemcpyKind.Default:
        return {(False, False): MemcpyKind.HostToHost, (False, True): MemcpyKind.HostToDevice,
                (True, False): MemcpyKind.DeviceToHost, (True, True): MemcpyKind.DeviceToDevice}[(s_dev, d_dev)]
    want_src = kind in (MemcpyKind.DeviceToHost, MemcpyKind.DeviceToDevice)
    want_dst = kind in (MemcpyKind.HostToDevice, MemcpyKind.DeviceToDevice)
    if (src_is_device is None and not want_src) or (dst_is_device is None and not want_dst):
        raise CudaError("cudaErrorInvalidMemcpyDirection",
                        f"[{op}] kind {kind.name} does not fit a copy whose "
                        f"{'source' if src_is_device is None and not want_src else 'destination'} is a CUDA array")
    return kind


def _run(dst: _Side, src: _Side, w: int, h: int, d: int, stream: Stream | None, name: str, kind: MemcpyKind) -> None:
    """Copy the w-byte x h x d box row by row (whole slices or the whole box when both sides are dense)."""
    with trace.span("L3", name + ("Async" if stream is not None else ""), kind=kind.name, bytes=w * h * d):
        if w == 0 or h == 0 or d == 0:
            return
        rows, n = [(y, z) for z in range(d) for y in range(h)], w
        if dst.pitch == w and src.pitch == w:
            rows, n = [(0, z) for z in range(d)], w * h
            if dst.slice_pitch == w * h and src.slice_pitch == w * h:
                rows, n = [(0, 0)], w * h * d
        if dst.host is not None and src.host is not None:
            for y, z in rows:
                a, b = dst.at(y, z), src.at(y, z)
                dst.host[a: a + n] = src.host[b: b + n]
            return
        dev = dst.device or src.device
        assert dev is not None
        if dst.device is not None and src.device is not None and dst.device is not src.device:
            raise CudaError("cudaErrorInvalidValue", f"[{name}] a 2-D/3-D copy between devices {src.device.index} "
                            f"and {dst.device.index} is not supported; copy through host memory")
        ctx = dev.context
        if stream is None and len(rows) > 1 and _staged(ctx, dst, src, w, h, d):
            return
        sig = None
        for y, z in rows:
            a, b = dst.at(y, z), src.at(y, z)
            if src.host is not None:
                sig = ctx.memcpy_htod(a, src.host[b: b + n], stream, asynchronous=True)
            elif dst.host is not None:
                sig = ctx.memcpy_dtoh(dst.host[a: a + n], b, stream, asynchronous=True)
            else:
                sig = ctx.memcpy_dtod(a, b, n, stream, asynchronous=True)
        if stream is None and sig is not None:  # the synchronous call returns when the copy is done
            ctx.wait(sig)


def _staged(ctx: Context, dst: _Side, src: _Side, w: int, h: int, d: int) -> bool:
    """A synchronous many-row copy between host and device as ONE transfer through a staging buffer, when
    that is allowed: reading a device span's padding is harmless; writing it only for an array's whole rows.
    Returns False when the copy must go row by row."""
    if src.host is None and dst.host is not None:
        stage = np.empty(src.span(w, h, d), dtype=np.uint8)
        ctx.memcpy_dtoh(stage, src.address)
        dst.box(dst.host, dst.address, w, h, d)[...] = src.box(stage, 0, w, h, d)
        return True
    if src.host is not None and dst.host is None and dst.pad_ok:
        stage = np.zeros(dst.span(w, h, d), dtype=np.uint8)
        dst.box(stage, 0, w, h, d)[...] = src.box(src.host, src.address, w, h, d)
        ctx.memcpy_htod(dst.address, stage)
        return True
    return False


def _is_dev(p: Any) -> bool:
    return isinstance(p, DeviceArray) or _is_device(p)


def memcpy_2d(dst: Any, dpitch: int, src: Any, spitch: int, width: int, height: int,
              kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: Stream | None = None) -> None:
    """cudaMemcpy2D: `height` rows of `width` bytes from rows `spitch` apart to rows `dpitch` apart.

    With `stream` it is cudaMemcpy2DAsync (queued; returns at once).

    Raises:
        CudaError: cudaErrorInvalidPitchValue when width > dpitch or width > spitch; cudaErrorInvalidValue
            when a side's rows leave its memory; cudaErrorInvalidMemcpyDirection for a kind the pointers
            contradict.

    Example:
        >>> ptr, pitch = malloc_pitch(12, 2)
        >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
        >>> memcpy_2d(ptr, pitch, a, 12, 12, 2, "HostToDevice")
        >>> b = np.zeros_like(a); memcpy_2d(b, 12, ptr, pitch, 12, 2, "DeviceToHost"); b.tolist()
        [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
        >>> from strata.cuda.memcpy import free; free(ptr)
    """
    op = "memcpy_2d"
    w, h = _int(width, "width", op), _int(height, "height", op)
    dp, sp = _int(dpitch, "dpitch", op), _int(spitch, "spitch", op)
    if w > dp or w > sp:
        raise CudaError("cudaErrorInvalidPitchValue", f"[{op}] width {w} exceeds dpitch {dp} or spitch {sp}")
    k = _direction(kind, _is_dev(dst), _is_dev(src), op)
    dst_dev, src_dev = k in (MemcpyKind.HostToDevice, MemcpyKind.DeviceToDevice), \
        k in (MemcpyKind.DeviceToHost, MemcpyKind.DeviceToDevice)
    s = _linear_side(src, sp, max(h, 1), 0, w, h, 1, op, "source", src_dev, False)
    d = _linear_side(dst, dp, max(h, 1), 0, w, h, 1, op, "destination", dst_dev, True)
    _run(d, s, w, h, 1, stream, "cudaMemcpy2D", k)


def memcpy_2d_to_array(dst: CudaArray, w_offset: int, h_offset: int, src: Any, spitch: int, width: int, height: int,
                       kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: Stream | None = None) -> None:
    """cudaMemcpy2DToArray: `height` rows of `width` BYTES from rows `spitch` apart (host or device memory)
    into array `dst` at byte `w_offset` of row `h_offset` (of its first slice).

    Example:
        >>> arr = malloc_array(create_channel_desc(np.uint8), 4, 2)
        >>> memcpy_2d_to_array(arr, 1, 0, np.array([[1, 2], [3, 4]], np.uint8), 2, 2, 2, "HostToDevice")
        >>> arr.get()[:, 1:3].tolist()
        [[1, 2], [3, 4]]
    """
    op = "memcpy_2d_to_array"
    w, h, sp = _int(width, "width", op), _int(height, "height", op), _int(spitch, "spitch", op)
    if w > sp:
        raise CudaError("cudaErrorInvalidPitchValue", f"[{op}] width {w} exceeds spitch {sp}")
    k = _direction(kind, None, _is_dev(src), op)
    d = _array_side(dst, _int(w_offset, "w_offset", op), _int(h_offset, "h_offset", op), 0, w, h, 1, op,
                    "destination")
    s = _linear_side(src, sp, max(h, 1), 0, w, h, 1, op, "source", k == MemcpyKind.DeviceToDevice, False)
    _run(d, s, w, h, 1, stream, "cudaMemcpy2DToArray", k)


def memcpy_2d_from_array(dst: Any, dpitch: int, src: CudaArray, w_offset: int, h_offset: int, width: int,
                         height: int, kind: MemcpyKind | str | int = MemcpyKind.Default, *,
                         stream: Stream | None = None) -> None:
    """cudaMemcpy2DFromArray: `height` rows of `width` BYTES from array `src` at byte `w_offset` of row
    `h_offset` into memory with rows `dpitch` apart.

    Example:
        >>> arr = malloc_array(create_channel_desc(np.int32), 3, 2); arr.set(np.arange(6, dtype=np.int32).reshape(2, 3))
        >>> out = np.zeros((2, 2), np.int32); memcpy_2d_from_array(out, 8, arr, 4, 0, 8, 2, "DeviceToHost")
        >>> out.tolist()
        [[1, 2], [4, 5]]
    """
    op = "memcpy_2d_from_array"
    w, h, dp = _int(width, "width", op), _int(height, "height", op), _int(dpitch, "dpitch", op)
    if w > dp:
        raise CudaError("cudaErrorInvalidPitchValue", f"[{op}] width {w} exceeds dpitch {dp}")
    k = _direction(kind, _is_dev(dst), None, op)
    s = _array_side(src, _int(w_offset, "w_offset", op), _int(h_offset, "h_offset", op), 0, w, h, 1, op, "source")
    d = _linear_side(dst, dp, max(h, 1), 0, w, h, 1, op, "destination", k == MemcpyKind.DeviceToDevice, True)
    _run(d, s, w, h, 1, stream, "cudaMemcpy2DFromArray", k)


def _spans(arr: CudaArray, w_offset: int, h_offset: int, count: int, op: str) -> list[tuple[int, int, int]]:
    """(row, byte offset in row, bytes) pieces of `count` bytes read row-major from (w_offset, h_offset)
    over the array's rows (slices follow each other), as the deprecated cudaMemcpyToArray reads them."""
    rb, rows = arr.row_bytes, arr.resource.height * arr.resource.slices
    start = h_offset * rb + w_offset
    if w_offset >= rb and count:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] w_offset {w_offset} is past the row's {rb} bytes")
    if start + count > rows * rb:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {count} bytes from byte {w_offset} of row {h_offset} "
                        f"run past the array's {rows} rows of {rb} bytes")
    out, pos, end = [], start, start + count
    while pos < end:
        row, col = divmod(pos, rb)
        n = min(rb - col, end - pos)
        out.append((row, col, n))
        pos += n
    return out


def _row_address(arr: CudaArray, row: int) -> int:
    r = arr.resource
    z, y = divmod(row, r.height)
    return r.address + z * r.slice_pitch + y * r.pitch


def memcpy_to_array(dst: CudaArray, w_offset: int, h_offset: int, src: Any, count: int,
                    kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: Stream | None = None) -> None:
    """cudaMemcpyToArray (deprecated in CUDA, kept for old code): `count` bytes into `dst` from byte
    `w_offset` of row `h_offset` on, continuing row after row.

    Example:
        >>> arr = malloc_array(create_channel_desc(np.uint8), 3, 2)
        >>> memcpy_to_array(arr, 2, 0, np.array([7, 8, 9], np.uint8), 3, "HostToDevice"); arr.get().tolist()[1]
        [8, 9, 0]
    """
    op = "memcpy_to_array"
    n = _int(count, "count", op)
    k = _direction(kind, None, _is_dev(src), op)
    pieces = _spans(dst, _int(w_offset, "w_offset", op), _int(h_offset, "h_offset", op), n, op)
    dst.check_live(op)
    s = _linear_side(src, max(n, 1), 1, 0, n, 1, 1, op, "source", k == MemcpyKind.DeviceToDevice, False)
    done = 0
    for row, col, m in pieces:
        a = _Side(None, _row_address(dst, row) + col, m, m, dst.device)
        b = _Side(s.host, s.address + done, m, m, s.device)
        _run(a, b, m, 1, 1, stream, "cudaMemcpyToArray", k)
        done += m


def memcpy_from_array(dst: Any, src: CudaArray, w_offset: int, h_offset: int, count: int,
                      kind: MemcpyKind | str | int = MemcpyKind.Default, *, stream: Stream | None = None) -> None:
    """cudaMemcpyFromArray (deprecated in CUDA): `count` bytes of `src` from byte `w_offset` of row
    `h_offset` on, row after row, into `dst`.

    Example:
        >>> arr = malloc_array(create_channel_desc(np.uint8), 2, 2); arr.set(np.array([[1, 2], [3, 4]], np.uint8))
        >>> out = np.zeros(3, np.uint8); memcpy_from_array(out, arr, 1, 0, 3, "DeviceToHost"); out.tolist()
        [2, 3, 4]
    """
    op = "memcpy_from_array"
    n = _int(count, "count", op)
    k = _direction(kind, _is_dev(dst), None, op)
    pieces = _spans(src, _int(w_offset, "w_offset", op), _int(h_offset, "h_offset", op), n, op)
    src.check_live(op)
    d = _linear_side(dst, max(n, 1), 1, 0, n, 1, 1, op, "destination", k == MemcpyKind.DeviceToDevice, True)
    done = 0
    for row, col, m in pieces:
        a = _Side(d.host, d.address + done, m, m, d.device)
        b = _Side(None, _row_address(src, row) + col, m, m, src.device)
        _run(a, b, m, 1, 1, stream, "cudaMemcpyFromArray", k)
        done += m


def _triple(v: Any, name: str, op: str) -> tuple[int, int, int]:
    if not isinstance(v, tuple | list) or len(v) != 3:
        raise CudaError("cudaErrorInvalidValue", f"[{op}] {name} must be (x, y, z), got {v!r}")
    x, y, z = (_int(c, f"{name}[{i}]", op) for i, c in enumerate(v))
    return x, y, z


def memcpy_3d(p: Memcpy3DParms, *, stream: Stream | None = None) -> None:
    """cudaMemcpy3D: copy the box `p.extent` between CUDA arrays and pitched memory (see Memcpy3DParms).

    With `stream` it is cudaMemcpy3DAsync. Between arrays of different formats the element size must
    match (cudaErrorInvalidValue otherwise).

    Example:
        >>> vol = malloc_3d_array(create_channel_desc(np.float32), (3, 2, 2))
        >>> host = np.arange(12, dtype=np.float32).reshape(2, 2, 3)
        >>> memcpy_3d(Memcpy3DParms(src_ptr=PitchedPtr(host, 12, 3, 2), dst_array=vol, extent=(3, 2, 2)))
        >>> vol.get().tolist() == host.tolist()
        True
    """
    op = "memcpy_3d"
    if not isinstance(p, Memcpy3DParms):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] expected a Memcpy3DParms, got {type(p).__name__}")
    if (p.src_array is None) == (p.src_ptr is None) or (p.dst_array is None) == (p.dst_ptr is None):
        raise CudaError("cudaErrorInvalidValue", f"[{op}] give exactly one of src_array/src_ptr and one of "
                        "dst_array/dst_ptr")
    w, h, d = _triple(p.extent, "extent", op)
    (sx, sy, sz), (dx, dy, dz) = _triple(p.src_pos, "src_pos", op), _triple(p.dst_pos, "dst_pos", op)
    arrays = [a for a in (p.src_array, p.dst_array) if a is not None]
    elem = 1
    if arrays:
        for a in arrays:
            if not isinstance(a, CudaArray):
                raise CudaError("cudaErrorInvalidValue", f"[{op}] an array side must be a CudaArray, got "
                                f"{type(a).__name__}")
        elem = arrays[0].format.texel_bytes
        if any(a.format.texel_bytes != elem for a in arrays):
            raise CudaError("cudaErrorInvalidValue", f"[{op}] the arrays' elements differ in size "
                            f"({[a.format.texel_bytes for a in arrays]} bytes)")
    wb = w * elem  # the extent's width in bytes
    k = _direction(p.kind, None if p.dst_array is not None else _is_dev(p.dst_ptr.ptr),  # type: ignore[union-attr]
                   None if p.src_array is not None else _is_dev(p.src_ptr.ptr), op)  # type: ignore[union-attr]
    src_dev = k in (MemcpyKind.DeviceToHost, MemcpyKind.DeviceToDevice)
    dst_dev = k in (MemcpyKind.HostToDevice, MemcpyKind.DeviceToDevice)

    def side(arr: CudaArray | None, pp: PitchedPtr | None, x: int, y: int, z: int, device: bool, what: str,
             writable: bool) -> _Side:
        if arr is not None:
            return _array_side(arr, x * elem, y, z, wb, h, d, op, what)
        assert pp is not None
        if not isinstance(pp, PitchedPtr):
            raise CudaError("cudaErrorInvalidValue", f"[{op}] {what} must be a PitchedPtr")
        pitch, ysize = _int(pp.pitch, "pitch", op), _int(pp.ysize, "ysize", op)
        if wb + x > pitch:
            raise CudaError("cudaErrorInvalidPitchValue", f"[{op}] {wb} bytes from byte {x} exceed the {what}'s "
                            f"pitch of {pitch}")
        if h + y > max(ysize, 1) and d > 1:
            raise CudaError("cudaErrorInvalidValue", f"[{op}] {h} rows from row {y} exceed the {what}'s ysize "
                            f"{ysize}")
        off = z * pitch * ysize + y * pitch + x
        return _linear_side(pp.ptr, pitch, max(ysize, 1), off, wb, h, d, op, what, device, writable)

    s = side(p.src_array, p.src_ptr, sx, sy, sz, src_dev, "source", False)
    t = side(p.dst_array, p.dst_ptr, dx, dy, dz, dst_dev, "destination", True)
    _run(t, s, wb, h, d, stream, "cudaMemcpy3D", k)


# -- surface objects -------------------------------------------------------------------------------------


def create_surface_object(array: CudaArray | Any) -> int:
    """cudaCreateSurfaceObject over a CUDA array (or a ResourceDesc.from_array of one); returns the cudaSurfaceObject_t
    handle kernels take as an `unsigned long long` (surf2Dread(s, x_in_bytes, y), surf2Dwrite(v, s, ...)).

    Raises:
        CudaError: cudaErrorInvalidValue if `array` is not a live CudaArray allocated with
            ArrayFlags.SURFACE_LOAD_STORE.

    Example:
        >>> arr = malloc_array(create_channel_desc(np.float32), 8, 0, ArrayFlags.SURFACE_LOAD_STORE)
        >>> s = create_surface_object(arr); s > 0
        True
        >>> destroy_surface_object(s); free_array(arr)
    """
    if not isinstance(array, CudaArray) and getattr(array, "type", None) == "array":
        array = array.array  # a cudaResourceDesc of cudaResourceTypeArray (strata.cuda.ResourceDesc.from_array)
    if not isinstance(array, CudaArray):
        raise CudaError("cudaErrorInvalidValue", f"[create_surface_object] a surface object needs a CudaArray "
                        f"(cudaResourceTypeArray), got {type(array).__name__}")
    array.check_live("create_surface_object")
    if not array.flags & ArrayFlags.SURFACE_LOAD_STORE:
        raise CudaError("cudaErrorInvalidValue", "[create_surface_object] the array was not allocated with "
                        "ArrayFlags.SURFACE_LOAD_STORE (cudaArraySurfaceLoadStore)")
    with trace.span("L3", "cudaCreateSurfaceObject", kind=array.kind):
        return array.device.file.gpu.memory.descriptors.create(SurfaceDescriptor(array.resource))


def destroy_surface_object(handle: int) -> None:
    """cudaDestroySurfaceObject: forget a surface object of the current device (the array stays).

    Raises:
        CudaError: cudaErrorInvalidValue if `handle` is not a live surface object of the current device.
    """
    table = current_device().file.gpu.memory.descriptors
    table.surface(int(handle))  # a live surface, not a texture object
    with trace.span("L3", "cudaDestroySurfaceObject", handle=int(handle)):
        table.destroy(int(handle))
