"""Read and write safetensors files with NumPy alone.

A safetensors file is three parts, back to back::

    8 bytes   N, the header length, an unsigned 64-bit little-endian integer
    N bytes   a UTF-8 JSON object: {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {}}
    the rest  the data section: every tensor's bytes, C order, little-endian

``data_offsets`` are ``[begin, end)`` byte positions counted from the start of the data
section. The reader checks the whole header against the file size before it touches any
tensor bytes, so a corrupt or truncated file raises ``ValueError`` instead of loading
garbage. The writer produces the same bytes as the reference ``safetensors`` package.
Layout, dtypes, validation rules and memory mapping are explained in
``docs/checkpoints.md`` ("The safetensors file format").
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import struct
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import IO

import numpy as np

from minibert.checks import check_bool, is_int, short_repr
from minibert.io.fileio import DuplicateKeyError, atomic_open, open_to_read, strict_json_loads

__all__ = [
    "TensorInfo",
    "save",
    "save_file",
    "load",
    "load_file",
    "read_header",
    "load_metadata",
    "to_bfloat16_bits",
    "from_bfloat16_bits",
]

# How each supported dtype's elements are laid out in the data section (always little-endian).
# NumPy has no bfloat16: BF16 elements are read as raw 16-bit patterns and widened to float32.
STORAGE_DTYPES: dict[str, np.dtype] = {
    "F64": np.dtype("<f8"),
    "F32": np.dtype("<f4"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "I64": np.dtype("<i8"),
    "I32": np.dtype("<i4"),
    "I16": np.dtype("<i2"),
    "I8": np.dtype("i1"),
    "U64": np.dtype("<u8"),
    "U32": np.dtype("<u4"),
    "U16": np.dtype("<u2"),
    "U8": np.dtype("u1"),
    "BOOL": np.dtype("?"),
}

# Dtypes the format defines that NumPy cannot hold; named in errors so they are not "unknown".
UNSUPPORTED_DTYPES = ("C64", "F8_E5M2", "F8_E4M3", "F8_E8M0", "F6_E2M3", "F6_E3M2", "F4")

# The reference writer packs the widest dtypes first (then sorts by name), so that with the
# header padded to a multiple of 8 every tensor starts at a multiple of its own item size.
WRITE_ORDER = (
    "U64",
    "I64",
    "F64",
    "F32",
    "U32",
    "I32",
    "BF16",
    "F16",
    "U16",
    "I16",
    "I8",
    "U8",
    "BOOL",
)

# The reference reader refuses larger headers; a bigger length prefix means a corrupt file.
MAX_HEADER_BYTES = 100_000_000

# NumPy 1.x arrays have at most 32 dimensions.
MAX_NDIM = 32

METADATA_KEY = "__metadata__"
ENTRY_FIELDS = ("dtype", "shape", "data_offsets")


@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """Where one tensor lives in a safetensors file, as its header entry says."""

    dtype: str  # safetensors dtype name, e.g. "F32" or "BF16"
    shape: tuple[int, ...]
    data_offsets: tuple[int, int]  # [begin, end) in bytes from the start of the data section


# ----------------------------------------------------------------------------- bfloat16


def to_bfloat16_bits(x: np.ndarray) -> np.ndarray:
    """Round floats to bfloat16, round-to-nearest-even, and return the 16-bit patterns.

    bfloat16 is the top half of a float32: same sign and 8-bit exponent, 7 mantissa bits.
    float64 input is first rounded to float32, as PyTorch's conversion does.

    Inputs:  x (...) float16, float32 or float64
    Outputs: bits (...) uint16, the bfloat16 bit patterns; NaN stays a (quiet) NaN
    """
    if not isinstance(x, np.ndarray) or x.dtype.kind != "f" or x.dtype.itemsize > 8:
        raise TypeError(f"x must be a float16/float32/float64 NumPy array, got {_describe(x)}")
    shape = x.shape
    x32 = np.ascontiguousarray(x, dtype=np.float32).reshape(-1)  # (n,)
    bits = x32.view(np.uint32)  # (n,)
    # Adding 0x7FFF carries into bit 16 exactly when the dropped half is above one half;
    # adding the kept lowest bit as well makes an exact half round up only from an odd value.
    kept_lowest_bit = (bits >> 16) & 1
    rounded = ((bits + 0x7FFF + kept_lowest_bit) >> 16).astype(np.uint16)
    # Rounding could carry a NaN's mantissa into an infinity (or past the sign bit); keep it
    # a NaN by setting the quiet bit instead.
    quiet_nan = ((bits >> 16) | 0x0040).astype(np.uint16)
    return np.where(np.isnan(x32), quiet_nan, rounded).reshape(shape)


def from_bfloat16_bits(bits: np.ndarray) -> np.ndarray:
    """Widen bfloat16 bit patterns to float32, exactly (every bfloat16 is a float32).

    Inputs:  bits (...) uint16 bfloat16 patterns
    Outputs: x (...) float32
    """
    if not isinstance(bits, np.ndarray) or bits.dtype.kind != "u" or bits.dtype.itemsize != 2:
        raise TypeError(f"bits must be a uint16 NumPy array, got {_describe(bits)}")
    # The 16 bits become the high half of a float32 whose low mantissa bits are zero.
    # (Shifting in place keeps a 0-d array an array; `<<` would return a NumPy scalar.)
    widened = bits.astype(np.uint32)
    widened <<= 16
    return widened.view(np.float32)


# ----------------------------------------------------------------------------- writing


def save(
    tensors: Mapping[str, np.ndarray],
    metadata: Mapping[str, str] | None = None,
    *,
    bf16_keys: Iterable[str] = (),
) -> bytes:
    """Serialize ``tensors`` to safetensors bytes in memory (see ``save_file``)."""
    prefix, stored = _prepare(tensors, metadata, bf16_keys)
    return b"".join([prefix] + [array.tobytes() for array in stored])


def save_file(
    tensors: Mapping[str, np.ndarray],
    path: str | os.PathLike,
    metadata: Mapping[str, str] | None = None,
    *,
    bf16_keys: Iterable[str] = (),
) -> None:
    """Write ``tensors`` to a safetensors file, atomically.

    Everything is validated before the file is opened, and the bytes go to a temporary file
    that replaces ``path`` only once complete: an error never leaves a half-written file and
    never harms an existing one. Non-contiguous or big-endian arrays are written as C-order
    little-endian copies; the caller's arrays are not changed.

    Inputs:
        tensors    name -> array; dtypes float64/32/16, int64/32/16/8, uint64/32/16/8, bool
        path       destination file
        metadata   optional str -> str pairs, stored under "__metadata__"
        bf16_keys  names of floating tensors to store as BF16 (rounded to nearest even)
    """
    path = _check_path(path, "path")
    prefix, stored = _prepare(tensors, metadata, bf16_keys)
    with atomic_open(path, "wb") as handle:
        handle.write(prefix)
        for array in stored:
            # A flat byte view writes the array's memory without an extra copy.
            handle.write(array.reshape(-1).view(np.uint8))


def _prepare(
    tensors: Mapping[str, np.ndarray],
    metadata: Mapping[str, str] | None,
    bf16_keys: Iterable[str],
) -> tuple[bytes, list[np.ndarray]]:
    """Validate the inputs; return length prefix + padded header, and the arrays in file order."""
    if not isinstance(tensors, Mapping):
        raise TypeError(
            f"tensors must be a mapping of name -> NumPy array, got {_describe(tensors)}"
        )
    bf16_names = _check_bf16_keys(bf16_keys, tensors)

    entries = []  # (dtype name, tensor name, C-contiguous little-endian array)
    for name, array in tensors.items():
        _check_name(name, "tensors")
        if name == METADATA_KEY:
            raise ValueError(f"tensors: the name {METADATA_KEY!r} is reserved for metadata")
        if not isinstance(array, np.ndarray):
            raise TypeError(f"tensors[{name!r}] must be a NumPy array, got {_describe(array)}")
        if name in bf16_names:
            entries.append(("BF16", name, to_bfloat16_bits(array)))
            continue
        dtype_name = _dtype_name(array.dtype, name)
        # order="C" copies only when needed; np.ascontiguousarray would turn a 0-d array 1-d.
        stored = np.asarray(array, dtype=STORAGE_DTYPES[dtype_name], order="C")
        entries.append((dtype_name, name, stored))
    entries.sort(key=lambda entry: (WRITE_ORDER.index(entry[0]), entry[1]))

    header: dict[str, object] = {}
    if metadata is not None:
        header[METADATA_KEY] = dict(sorted(_check_metadata(metadata).items()))
    offset = 0
    for dtype_name, name, array in entries:
        header[name] = {
            "dtype": dtype_name,
            "shape": list(array.shape),
            "data_offsets": [offset, offset + array.nbytes],
        }
        offset += array.nbytes

    # Compact JSON with raw UTF-8, like the reference writer; spaces pad the header to a
    # multiple of 8 bytes so the data section starts 8-byte aligned.
    header_bytes = json.dumps(header, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    header_bytes += b" " * (-len(header_bytes) % 8)
    prefix = struct.pack("<Q", len(header_bytes)) + header_bytes
    return prefix, [array for _, _, array in entries]


def _dtype_name(dtype: np.dtype, name: str) -> str:
    """The safetensors name of a NumPy dtype, by kind and size so platform aliases all work."""
    # BF16 is left out: only bf16_keys writes it, and its 16-bit storage dtype is U16's.
    names = {(stored.kind, stored.itemsize): stored_name
             for stored_name, stored in STORAGE_DTYPES.items() if stored_name != "BF16"}
    dtype_name = names.get((dtype.kind, dtype.itemsize))
    if dtype_name is None:
        raise TypeError(
            f"tensors[{name!r}] has dtype {dtype}, which safetensors cannot store here; allowed: "
            "float64, float32, float16, int64, int32, int16, int8, uint64, uint32, uint16, "
            "uint8, bool (or bf16_keys for BF16)"
        )
    return dtype_name


def _check_bf16_keys(bf16_keys: Iterable[str], tensors: Mapping[str, np.ndarray]) -> set[str]:
    if isinstance(bf16_keys, (str, bytes)) or not isinstance(bf16_keys, Iterable):
        raise TypeError(
            f"bf16_keys must be a collection of tensor names, got {_describe(bf16_keys)}"
        )
    names = set()
    for name in bf16_keys:
        if name not in tensors:
            raise ValueError(f"bf16_keys names {name!r}, which is not a key of tensors")
        array = tensors[name]
        if isinstance(array, np.ndarray) and (array.dtype.kind != "f" or array.dtype.itemsize > 8):
            raise TypeError(
                f"bf16_keys names {name!r} of dtype {array.dtype}; only float16, float32 and "
                "float64 tensors can be stored as BF16"
            )
        names.add(name)
    return names


def _check_metadata(metadata: Mapping[str, str]) -> Mapping[str, str]:
    if not isinstance(metadata, Mapping):
        raise TypeError(
            f"metadata must be a mapping of str -> str or None, got {_describe(metadata)}"
        )
    for key, value in metadata.items():
        _check_name(key, "metadata")
        if not isinstance(value, str):
            raise TypeError(f"metadata[{key!r}] must be a str, got {_describe(value)}")
        _check_utf8(value, f"metadata[{key!r}]")
    return metadata


def _check_name(name: object, argument: str) -> None:
    if not isinstance(name, str):
        raise TypeError(f"{argument} keys must be str, got {_describe(name)}")
    _check_utf8(name, f"{argument} key {name!r}")


def _check_utf8(text: str, what: str) -> None:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        raise ValueError(f"{what} cannot be encoded as UTF-8 ({error.reason})") from None


def _check_path(path: object, argument: str) -> Path:
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"{argument} must be a str or os.PathLike, got {_describe(path)}")
    return Path(path)


# ----------------------------------------------------------------------------- reading


def read_header(path: str | os.PathLike) -> tuple[dict[str, TensorInfo], dict[str, str]]:
    """Read and validate a safetensors header without touching the tensor data.

    Inputs:  path to a .safetensors file
    Outputs: tensor_infos  name -> TensorInfo, in data-section order
             metadata      the "__metadata__" str -> str pairs ({} when absent)
    """
    path = _check_path(path, "path")
    with open_to_read(path, "safetensors file") as handle:
        tensor_infos, metadata, _ = _read_header(
            handle, os.fstat(handle.fileno()).st_size, str(path)
        )
    return tensor_infos, metadata


def load_metadata(path: str | os.PathLike) -> dict[str, str]:
    """The "__metadata__" str -> str pairs of a safetensors file ({} when absent)."""
    return read_header(path)[1]


def load_file(path: str | os.PathLike, mmap: bool = True) -> dict[str, np.ndarray]:
    """Load every tensor of a safetensors file.

    With ``mmap=True`` the arrays are read-only views of a memory map of the file: nothing
    is copied up front and the operating system pages the bytes in when they are read, so a
    440 MB checkpoint does not need 440 MB more memory. With ``mmap=False`` every array is a
    writable copy in memory and the file is closed. BF16 tensors are widened to float32
    (exactly) in both cases, so they are always copies.

    Inputs:  path to a .safetensors file; mmap as above
    Outputs: name -> array, in data-section order; raises ValueError naming the file and the
             tensor if the file is malformed, before any tensor is created
    """
    path = _check_path(path, "path")
    mmap = check_bool("mmap", mmap)
    with open_to_read(path, "safetensors file") as handle:
        size = os.fstat(handle.fileno()).st_size
        tensor_infos, _, data_start = _read_header(handle, size, str(path))
        if mmap:
            return _map_tensors(handle, tensor_infos, data_start, size, str(path))
        return _read_tensors(handle, tensor_infos, data_start, str(path))


def load(data: bytes) -> dict[str, np.ndarray]:
    """Load every tensor from safetensors bytes in memory (writable copies; see ``load_file``)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"data must be bytes, got {_describe(data)}")
    handle = io.BytesIO(data)
    tensor_infos, _, data_start = _read_header(handle, memoryview(data).nbytes, "data")
    return _read_tensors(handle, tensor_infos, data_start, "data")


def _map_tensors(
    handle: IO[bytes], tensor_infos: dict[str, TensorInfo], data_start: int, size: int, source: str
) -> dict[str, np.ndarray]:
    """Read-only arrays viewing a memory map of the data section."""
    data_length = size - data_start
    # The operating system cannot map zero bytes; then every tensor is empty anyway.
    if data_length == 0:
        data = np.zeros(0, dtype=np.uint8)
    else:
        data = np.memmap(handle, dtype=np.uint8, mode="r", offset=data_start, shape=(data_length,))
    tensors = {}
    for name, info in tensor_infos.items():
        begin, end = info.data_offsets
        # asarray drops the np.memmap subclass: results of arithmetic stay plain arrays.
        array = _decode(np.asarray(data[begin:end]), name, info, source)
        array.flags.writeable = False
        tensors[name] = array
    return tensors


def _read_tensors(
    handle: IO[bytes], tensor_infos: dict[str, TensorInfo], data_start: int, source: str
) -> dict[str, np.ndarray]:
    """Writable arrays, each read straight into its own buffer (one copy, no double memory)."""
    tensors = {}
    for name, info in tensor_infos.items():
        begin, end = info.data_offsets
        raw = np.empty(end - begin, dtype=np.uint8)
        handle.seek(data_start + begin)
        if handle.readinto(raw) != raw.nbytes:
            raise ValueError(
                f"{source}: tensor {name!r}: file ended while reading its data "
                "(was it truncated while being read?)"
            )
        tensors[name] = _decode(raw, name, info, source)
    return tensors


def _decode(raw: np.ndarray, name: str, info: TensorInfo, source: str) -> np.ndarray:
    """Interpret one tensor's bytes (uint8, (nbytes,)) as its dtype and shape."""
    array = raw.view(STORAGE_DTYPES[info.dtype]).reshape(info.shape)
    if info.dtype == "BF16":
        return from_bfloat16_bits(array)
    # NumPy assumes a bool byte is 0 or 1; other bytes give arrays that compare inconsistently.
    if info.dtype == "BOOL" and np.any(raw > 1):
        raise ValueError(f"{source}: tensor {name!r}: BOOL data holds bytes other than 0 and 1")
    return array


# ----------------------------------------------------------------------------- validation


def _read_header(
    handle: IO[bytes], size: int, source: str
) -> tuple[dict[str, TensorInfo], dict[str, str], int]:
    """Read and check the length prefix and header of a file of ``size`` bytes.

    Outputs: tensor_infos (in data-section order), metadata, and the data section's start
    """
    if size < 8:
        raise ValueError(
            f"{source} is {size} bytes long; a safetensors file starts with an 8-byte header length"
        )
    (header_length,) = struct.unpack("<Q", handle.read(8))
    if header_length > MAX_HEADER_BYTES:
        raise ValueError(
            f"{source}: header length {header_length} exceeds the limit of "
            f"{MAX_HEADER_BYTES} bytes (corrupt length prefix?)"
        )
    if header_length > size - 8:
        raise ValueError(
            f"{source}: header length {header_length} is more than the "
            f"{size - 8} bytes after the length prefix (file truncated?)"
        )
    header = _parse_json(handle.read(header_length), source)
    data_start = 8 + header_length
    metadata = _check_file_metadata(header.pop(METADATA_KEY, None), source)
    tensor_infos = {
        name: _check_entry(name, entry, size - data_start, source) for name, entry in header.items()
    }
    return _check_coverage(tensor_infos, size - data_start, source), metadata, data_start


def _parse_json(header_bytes: bytes, source: str) -> dict:
    try:
        text = header_bytes.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"{source}: header is not valid UTF-8 ({error})") from None
    try:
        header = strict_json_loads(text)
    except DuplicateKeyError as error:
        raise ValueError(f"{source}: header has the key {error.key!r} twice") from None
    except (ValueError, RecursionError) as error:
        raise ValueError(f"{source}: header is not valid JSON ({error})") from None
    if not isinstance(header, dict):
        raise ValueError(f"{source}: header must be a JSON object, got {_json_type(header)}")
    return header


def _check_file_metadata(metadata: object, source: str) -> dict[str, str]:
    if metadata is None:
        return {}
    if not isinstance(metadata, dict) or not all(isinstance(v, str) for v in metadata.values()):
        raise ValueError(
            f"{source}: {METADATA_KEY!r} must be an object of string values, "
            f"got {short_repr(metadata, 80)}"
        )
    return metadata


def _check_entry(name: str, entry: object, data_length: int, source: str) -> TensorInfo:
    """Check one header entry on its own: fields, types, dtype, size and bounds."""
    where = f"{source}: tensor {name!r}"
    if not isinstance(entry, dict):
        raise ValueError(
            f"{where}: entry must be an object with {ENTRY_FIELDS}, got {_json_type(entry)}"
        )
    for field in ENTRY_FIELDS:
        if field not in entry:
            raise ValueError(f"{where}: entry has no {field!r}; it needs {ENTRY_FIELDS}")

    dtype = entry["dtype"]
    if dtype in UNSUPPORTED_DTYPES:
        raise ValueError(
            f"{where}: dtype {dtype!r} has no NumPy equivalent; supported: "
            f"{', '.join(STORAGE_DTYPES)}"
        )
    if not isinstance(dtype, str) or dtype not in STORAGE_DTYPES:
        raise ValueError(
            f"{where}: unknown dtype {short_repr(dtype, 80)}; known: {', '.join(STORAGE_DTYPES)}"
        )

    shape = entry["shape"]
    if (
        not isinstance(shape, list)
        or len(shape) > MAX_NDIM
        or not all(_is_count(dim) for dim in shape)
    ):
        raise ValueError(
            f"{where}: shape must be a list of at most {MAX_NDIM} non-negative "
            f"integers, got {short_repr(shape, 80)}"
        )

    offsets = entry["data_offsets"]
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(map(_is_count, offsets)):
        raise ValueError(
            f"{where}: data_offsets must be [begin, end] with non-negative "
            f"integers, got {short_repr(offsets, 80)}"
        )
    begin, end = offsets
    if begin > end:
        raise ValueError(f"{where}: data_offsets {short_repr(offsets, 80)} begin after they end")
    if end > data_length:
        raise ValueError(
            f"{where}: data_offsets {short_repr(offsets, 80)} reach past the end of the "
            f"{data_length}-byte data section (file truncated?)"
        )
    # The size comes from the declared shape alone, before any byte is read or allocated.
    nbytes = math.prod(shape) * STORAGE_DTYPES[dtype].itemsize
    if nbytes != end - begin:
        needs = f"{nbytes}" if nbytes < 2**64 else "more than 2^64"
        raise ValueError(
            f"{where}: dtype {dtype} with shape {short_repr(shape, 80)} needs {needs} bytes but "
            f"data_offsets [{begin}, {end}] hold {end - begin}"
        )
    return TensorInfo(dtype, tuple(shape), (begin, end))


def _check_coverage(
    tensor_infos: dict[str, TensorInfo], data_length: int, source: str
) -> dict[str, TensorInfo]:
    """Require the tensors to tile the data section exactly: no overlap, gap or trailing bytes.

    The reference reader is this strict too; an overlap or a hole means a corrupt header.
    Outputs: tensor_infos reordered by position in the data section
    """
    ordered = sorted(tensor_infos.items(), key=lambda item: (item[1].data_offsets, item[0]))
    expected_begin, previous = 0, None
    for name, info in ordered:
        begin, end = info.data_offsets
        after = f"after tensor {previous!r}" if previous is not None else "at the start"
        if begin < expected_begin:
            raise ValueError(
                f"{source}: tensor {name!r} at bytes [{begin}, {end}) overlaps "
                f"tensor {previous!r}, which ends at byte {expected_begin}"
            )
        if begin > expected_begin:
            raise ValueError(
                f"{source}: tensor {name!r} starts at byte {begin}, leaving "
                f"{begin - expected_begin} unused bytes {after} of the data section; "
                "tensors must cover it without gaps"
            )
        expected_begin, previous = end, name
    if expected_begin != data_length:
        raise ValueError(
            f"{source}: {data_length - expected_begin} bytes follow the last tensor "
            "in the data section; tensors must cover it exactly"
        )
    return dict(ordered)


def _is_count(value: object) -> bool:
    # JSON true/false arrive as bool, which Python counts as int: is_int refuses them.
    return is_int(value) and value >= 0


def _json_type(value: object) -> str:
    names = {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "a number",
        float: "a number",
        type(None): "null",
    }
    return names.get(type(value), type(value).__name__)


def _describe(value: object) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of dtype {value.dtype} and shape {value.shape}"
    return f"{type(value).__name__} {short_repr(value, 40)}"
