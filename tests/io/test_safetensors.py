"""Tests for minibert.io.safetensors: round trips, the exact byte layout, validation, fuzzing.

The bfloat16 references decode and round from the definition of the format (sign,
exponent, mantissa; IEEE round-to-nearest-even), independently of the bit tricks in the
module. Comparison with the reference ``safetensors`` package lives in tests/parity/.
"""

import contextlib
import functools
import json
import math
import os
import struct
from pathlib import Path

import numpy as np
import pytest
from small_models import random_array, same_array

import minibert.io.safetensors as st
from minibert.io.fileio import atomic_write_bytes

NUMPY_DTYPES = {
    "F64": np.float64, "F32": np.float32, "F16": np.float16,
    "I64": np.int64, "I32": np.int32, "I16": np.int16, "I8": np.int8,
    "U64": np.uint64, "U32": np.uint32, "U16": np.uint16, "U8": np.uint8, "BOOL": np.bool_,
}


def raw_file(tmp_path, header, data=b"", length=None):
    """A file with the given header (object -> JSON, or raw bytes) and data section."""
    header_bytes = header if isinstance(header, bytes) else json.dumps(header).encode()
    prefix = struct.pack("<Q", len(header_bytes) if length is None else length)
    path = tmp_path / "raw.safetensors"
    atomic_write_bytes(path, prefix + header_bytes + data)
    return path


def find_base(array, kind):
    """Walk an array's chain of bases; return the first of type ``kind`` or None."""
    while array is not None:
        if isinstance(array, kind):
            return array
        array = getattr(array, "base", None)
    return None


# ----------------------------------------------------------------------------- round trips


@pytest.mark.parametrize("dtype_name", list(NUMPY_DTYPES))
@pytest.mark.parametrize("mmap", [True, False])
def test_round_trip_every_dtype(tmp_path, dtype_name, mmap):
    rng = np.random.default_rng(len(dtype_name) * 7 + mmap)
    tensors = {f"t{i}": random_array(NUMPY_DTYPES[dtype_name], shape, rng)
               for i, shape in enumerate([(3, 4, 5), (7,), (2, 1, 3, 1)])}
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path)
    loaded = st.load_file(path, mmap=mmap)
    assert list(loaded) == sorted(tensors)
    for name, array in tensors.items():
        assert same_array(loaded[name], array), name
    infos, _ = st.read_header(path)
    assert {info.dtype for info in infos.values()} == {dtype_name}


@pytest.mark.parametrize("dtype_name", list(NUMPY_DTYPES))
def test_round_trip_in_memory(dtype_name):
    rng = np.random.default_rng(3)
    tensors = {"a": random_array(NUMPY_DTYPES[dtype_name], (4, 6), rng)}
    loaded = st.load(st.save(tensors))
    assert same_array(loaded["a"], tensors["a"])
    assert loaded["a"].flags.writeable


@pytest.mark.parametrize("mmap", [True, False])
def test_scalars_and_empty_tensors(tmp_path, mmap):
    rng = np.random.default_rng(4)
    tensors = {
        "scalar_f32": np.array(2.5, dtype=np.float32),
        "scalar_i64": np.array(-7, dtype=np.int64),
        "scalar_bool": np.array(True),
        "empty_rows": np.zeros((0, 3), dtype=np.float32),
        "empty_middle": np.zeros((2, 0, 4), dtype=np.int16),
        "empty_1d": np.zeros(0, dtype=np.float64),
        "weight": random_array(np.float32, (5, 3), rng),
    }
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path)
    loaded = st.load_file(path, mmap=mmap)
    for name, array in tensors.items():
        assert same_array(loaded[name], array), name


@pytest.mark.parametrize("mmap", [True, False])
def test_only_empty_tensors_give_an_empty_data_section(tmp_path, mmap):
    path = tmp_path / "x.safetensors"
    st.save_file({"a": np.zeros((0, 5), np.float32), "b": np.zeros(0, np.int8)}, path)
    loaded = st.load_file(path, mmap=mmap)
    assert loaded["a"].shape == (0, 5) and loaded["a"].dtype == np.float32
    assert loaded["b"].shape == (0,) and loaded["b"].dtype == np.int8
    st.save_file({}, path)
    assert st.load_file(path, mmap=mmap) == {}


def test_non_contiguous_inputs_are_written_in_c_order(tmp_path):
    rng = np.random.default_rng(5)
    base = random_array(np.float32, (6, 8), rng)
    tensors = {
        "transposed": base.T,                    # F-contiguous
        "strided": base[::2, 1::3],             # neither C nor F contiguous
        "reversed": base[::-1, ::-1],           # negative strides
        "broadcast": np.broadcast_to(base[0], (3, 8)),  # zero stride
    }
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path)
    loaded = st.load_file(path)
    for name, array in tensors.items():
        assert np.array_equal(loaded[name], array, equal_nan=True), name
        assert loaded[name].flags.c_contiguous
    assert base.T.flags.f_contiguous  # the input was left as it was


def test_big_endian_inputs_are_stored_little_endian():
    rng = np.random.default_rng(6)
    native = {"f": random_array(np.float32, (3, 5), rng), "i": random_array(np.int64, (4,), rng)}
    swapped = {name: array.astype(array.dtype.newbyteorder(">")) for name, array in native.items()}
    assert st.save(swapped) == st.save(native)
    loaded = st.load(st.save(swapped))
    for name, array in native.items():
        assert same_array(loaded[name], array)


def test_platform_integer_aliases_map_by_size():
    tensors = {"intc": np.arange(3, dtype=np.intc), "longlong": np.arange(3, dtype=np.longlong)}
    infos = header_of(st.save(tensors))
    assert infos["intc"]["dtype"] == "I32" and infos["longlong"]["dtype"] == "I64"


@pytest.mark.parametrize("name", [
    "", "bert.embeddings.word_embeddings.weight", 'quote"and\\backslash', "new\nline\ttab",
    "ünïcødé", "emoji 🤗", "nul\x00byte", "__metadata__x", " spaces ",
])
def test_tricky_tensor_names_round_trip(tmp_path, name):
    tensors = {name: np.arange(6, dtype=np.float32).reshape(2, 3), "other": np.ones(2, np.int8)}
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path, metadata={name: name})
    loaded = st.load_file(path)
    assert same_array(loaded[name], tensors[name])
    assert st.load_metadata(path) == {name: name}


def test_metadata_round_trip(tmp_path):
    metadata = {"format": "pt", "z_last": "1", "a_first": "ünïcødé \"quoted\"", "empty": ""}
    path = tmp_path / "x.safetensors"
    st.save_file({"w": np.ones((2, 2), np.float32)}, path, metadata=metadata)
    infos, read_metadata = st.read_header(path)
    assert read_metadata == metadata
    assert st.load_metadata(path) == metadata
    assert infos == {"w": st.TensorInfo("F32", (2, 2), (0, 16))}
    st.save_file({"w": np.ones(1, np.float32)}, path)
    assert st.load_metadata(path) == {}


# ----------------------------------------------------------------------------- byte layout


def header_of(data):
    (length,) = struct.unpack("<Q", data[:8])
    return json.loads(data[8:8 + length])


def test_exact_bytes_of_a_small_file():
    weight = np.arange(6, dtype=np.float32).reshape(1, 2, 3)
    header = b'{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}'
    assert len(header) == 64  # already a multiple of 8: no padding
    expected = struct.pack("<Q", 64) + header + struct.pack("<6f", 0, 1, 2, 3, 4, 5)
    assert st.save({"attn.0": weight}) == expected


def test_exact_bytes_with_padding_and_metadata():
    header = b'{"__metadata__":{"format":"np"},"b":{"dtype":"I8","shape":[],"data_offsets":[0,1]}}'
    padded = header + b" " * (-len(header) % 8)
    expected = struct.pack("<Q", len(padded)) + padded + b"\xfe"
    assert st.save({"b": np.array(-2, np.int8)}, metadata={"format": "np"}) == expected
    assert st.save({}) == struct.pack("<Q", 8) + b"{}      "


@pytest.mark.parametrize("name_length", range(1, 17))
def test_header_is_padded_with_spaces_to_a_multiple_of_8(name_length):
    data = st.save({"x" * name_length: np.ones(3, np.float32)})
    (length,) = struct.unpack("<Q", data[:8])
    assert length % 8 == 0
    header = data[8:8 + length]
    assert header.rstrip(b" ").endswith(b"}") and len(header) - len(header.rstrip(b" ")) < 8
    assert len(data) == 8 + length + 12


def test_tensors_are_packed_widest_dtype_first_then_by_name_and_aligned():
    rng = np.random.default_rng(7)
    tensors = {  # odd element counts, so a careless order would misalign the wider dtypes
        "b_bool": random_array(np.bool_, (3,), rng), "a_u8": random_array(np.uint8, (5,), rng),
        "z_f16": random_array(np.float16, (3,), rng), "y_f32": random_array(np.float32, (1,), rng),
        "x_f64": random_array(np.float64, (3,), rng), "a_f32": random_array(np.float32, (3,), rng),
        "w_i64": random_array(np.int64, (1,), rng), "v_i16": random_array(np.int16, (1,), rng),
        "u_u64": random_array(np.uint64, (2,), rng), "t_u32": random_array(np.uint32, (1,), rng),
        "s_i32": random_array(np.int32, (1,), rng), "r_u16": random_array(np.uint16, (3,), rng),
        "q_i8": random_array(np.int8, (1,), rng), "p_bf16": random_array(np.float32, (1,), rng),
    }
    data = st.save(tensors, bf16_keys=["p_bf16"])
    header = header_of(data)
    order = list(header)
    assert order == ["u_u64", "w_i64", "x_f64", "a_f32", "y_f32", "t_u32", "s_i32", "p_bf16",
                     "z_f16", "r_u16", "v_i16", "q_i8", "a_u8", "b_bool"]
    data_start = 8 + struct.unpack("<Q", data[:8])[0]
    expected_begin = 0
    for name in order:
        begin, end = header[name]["data_offsets"]
        assert begin == expected_begin
        itemsize = 2 if name == "p_bf16" else tensors[name].itemsize
        assert (data_start + begin) % itemsize == 0, name
        expected_begin = end
    assert data_start + expected_begin == len(data)


def test_metadata_keys_are_sorted_and_empty_metadata_is_kept():
    data = st.save({}, metadata={"b": "2", "a": "1"})
    assert data[8:].startswith(b'{"__metadata__":{"a":"1","b":"2"}}')
    assert b"__metadata__" in st.save({}, metadata={})
    assert b"__metadata__" not in st.save({}, metadata=None)


# ----------------------------------------------------------------------------- memory mapping


def test_mmap_arrays_are_read_only_views_of_a_memory_map(tmp_path):
    path = tmp_path / "x.safetensors"
    st.save_file({"w": np.ones((4, 4), np.float32), "i": np.arange(3)}, path)
    loaded = st.load_file(path, mmap=True)
    for array in loaded.values():
        assert type(array) is np.ndarray
        assert find_base(array, np.memmap) is not None
        assert not array.flags.writeable
        with pytest.raises(ValueError, match="read-only"):
            array[...] = 0


def test_copies_are_writable_and_independent_of_the_file(tmp_path):
    path = tmp_path / "x.safetensors"
    st.save_file({"w": np.ones((4, 4), np.float32)}, path)
    loaded = st.load_file(path, mmap=False)
    assert find_base(loaded["w"], np.memmap) is None
    loaded["w"][0, 0] = 5.0
    assert st.load_file(path)["w"][0, 0] == 1.0


@pytest.mark.skipif(os.name == "nt", reason="Windows cannot replace a file that is mapped")
def test_mapped_arrays_survive_the_file_being_replaced(tmp_path):
    path = tmp_path / "x.safetensors"
    st.save_file({"w": np.full(1000, 3.0, np.float32)}, path)
    mapped = st.load_file(path, mmap=True)
    st.save_file({"w": np.full(1000, 4.0, np.float32)}, path)
    assert np.all(mapped["w"] == 3.0)
    assert np.all(st.load_file(path)["w"] == 4.0)


# ----------------------------------------------------------------------------- bfloat16


def bfloat16_value(bits, unbounded=False):
    """The real number a bfloat16 pattern stands for, from the definition of the format.

    1 sign bit, 8 exponent bits (bias 127), 7 mantissa bits. With ``unbounded`` the
    all-ones exponent with zero mantissa stands for 2**128 (the next power of two after the
    largest finite value), which is what rounding compares against before overflowing.
    """
    sign = -1.0 if bits >> 15 else 1.0
    exponent = (bits >> 7) & 0xFF
    mantissa = bits & 0x7F
    if exponent == 0xFF:
        if mantissa:
            return math.nan
        return sign * (2.0 ** 128 if unbounded else math.inf)
    if exponent == 0:
        return sign * mantissa / 128 * 2.0 ** -126
    return sign * (1 + mantissa / 128) * 2.0 ** (exponent - 127)


def test_bfloat16_widening_is_exact_for_every_pattern():
    bits = np.arange(2 ** 16, dtype=np.uint16)
    widened = st.from_bfloat16_bits(bits)
    assert widened.dtype == np.float32 and widened.shape == bits.shape
    expected = np.array([bfloat16_value(int(b)) for b in bits])
    nan = np.isnan(expected)
    assert np.array_equal(np.isnan(widened), nan)
    assert np.array_equal(widened[~nan].astype(np.float64), expected[~nan])
    negative_zero = st.from_bfloat16_bits(np.array([0x8000], np.uint16))
    assert np.signbit(negative_zero[0]) and negative_zero[0] == 0


def nearest_even_reference(value):
    """bfloat16 pattern nearest to a float32 value; ties go to the even pattern."""
    bits = struct.unpack("<I", struct.pack("<f", value))[0]
    truncated = bits >> 16  # the candidate at or below |value|
    candidates = [truncated, truncated + 1]
    distances = [abs(abs(value) - abs(bfloat16_value(c, unbounded=True))) for c in candidates]
    if distances[0] == distances[1]:
        return candidates[0] if candidates[0] % 2 == 0 else candidates[1]
    return candidates[int(distances[1] < distances[0])]


def test_bfloat16_rounding_is_nearest_even():
    rng = np.random.default_rng(8)
    random_bits = rng.integers(0, 2 ** 32, size=20000, dtype=np.uint64).astype(np.uint32)
    high = rng.integers(0, 2 ** 16, size=3000, dtype=np.uint64).astype(np.uint32) << 16
    near_ties = np.concatenate([high | 0x8000, high | 0x7FFF, high | 0x8001, high])
    bits = np.concatenate([random_bits, near_ties,
                           np.array([0x7F7FFFFF, 0x7F7F8000, 0x7F7F7FFF, 0xFF7FFFFF],
                                    np.uint32)])
    values = bits.view(np.float32)
    values = values[~np.isnan(values)]
    rounded = st.to_bfloat16_bits(values)
    assert rounded.dtype == np.uint16 and rounded.shape == values.shape
    expected = np.array([nearest_even_reference(float(v)) for v in values], dtype=np.uint16)
    wrong = np.flatnonzero(rounded != expected)
    assert wrong.size == 0, [(float(values[i]), hex(rounded[i]), hex(expected[i]))
                             for i in wrong[:5]]


def test_bfloat16_rounding_examples():
    values = np.array([1.0, 1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, -2.0,
                       np.finfo(np.float32).max, np.inf, -np.inf, 0.0, -0.0], np.float32)
    expected = [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0xC000, 0x7F80, 0x7F80, 0xFF80, 0x0000, 0x8000]
    assert st.to_bfloat16_bits(values).tolist() == expected
    # 0x7FFFFFFF would carry into the sign bit and 0x7F800001 into infinity if rounded blindly.
    nans = np.array([0x7FC00000, 0xFFC00000, 0x7FFFFFFF, 0x7F800001, 0xFFFFFFFF], np.uint32)
    nans = nans.view(np.float32)
    assert np.all(np.isnan(st.from_bfloat16_bits(st.to_bfloat16_bits(nans))))


def test_bfloat16_from_float64_rounds_through_float32_like_pytorch():
    # 1 + 2**-8 + 2**-30 would round up directly, but float32 drops the 2**-30 first and
    # the remaining exact tie goes to the even pattern, 1.0.
    assert st.to_bfloat16_bits(np.array([1 + 2 ** -8 + 2 ** -30])).tolist() == [0x3F80]
    x16 = np.array([1.5, -0.25, 65504.0], np.float16)
    assert st.to_bfloat16_bits(x16).tolist() == st.to_bfloat16_bits(x16.astype(np.float32)).tolist()


@pytest.mark.parametrize("mmap", [True, False])
def test_bf16_keys_store_bfloat16_and_load_as_float32(tmp_path, mmap):
    rng = np.random.default_rng(9)
    tensors = {"w": random_array(np.float32, (5, 7), rng), "b": random_array(np.float64, (7,), rng),
               "keep": random_array(np.float32, (3,), rng)}
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path, bf16_keys=["w", "b"])
    infos, _ = st.read_header(path)
    assert (infos["w"].dtype, infos["b"].dtype, infos["keep"].dtype) == ("BF16", "BF16", "F32")
    assert infos["w"].data_offsets[1] - infos["w"].data_offsets[0] == 2 * 35
    loaded = st.load_file(path, mmap=mmap)
    for name in ("w", "b"):
        expected = st.from_bfloat16_bits(st.to_bfloat16_bits(tensors[name]))
        assert same_array(loaded[name], expected)
    # Rounding to 8 significant bits is off by at most half a unit: 2**-8 relative.
    w = tensors["w"].astype(np.float64)
    normal = np.isfinite(w) & (np.abs(w) >= 2.0 ** -126)
    relative = np.abs(loaded["w"][normal].astype(np.float64) / w[normal] - 1)
    assert 0 < relative.max() <= 2.0 ** -8
    assert same_array(loaded["keep"], tensors["keep"])
    assert loaded["w"].flags.writeable is not mmap


@pytest.mark.parametrize("mmap", [True, False])
def test_bf16_scalars_and_empty_tensors(tmp_path, mmap):
    tensors = {"scalar": np.array(-3.5, np.float32), "empty": np.zeros((0, 2), np.float64)}
    path = tmp_path / "x.safetensors"
    st.save_file(tensors, path, bf16_keys=["scalar", "empty"])
    loaded = st.load_file(path, mmap=mmap)
    assert same_array(loaded["scalar"], np.array(-3.5, np.float32))
    assert same_array(loaded["empty"], np.zeros((0, 2), np.float32))
    assert type(st.from_bfloat16_bits(np.array(0x3F80, np.uint16))) is np.ndarray
    assert st.to_bfloat16_bits(np.array(1.0)).shape == ()


def test_bfloat16_helpers_reject_wrong_types():
    with pytest.raises(TypeError, match=r"x must be a float16/float32/float64.*int64"):
        st.to_bfloat16_bits(np.arange(3))
    with pytest.raises(TypeError, match="x must be"):
        st.to_bfloat16_bits([1.0, 2.0])
    with pytest.raises(TypeError, match=r"bits must be a uint16.*int16"):
        st.from_bfloat16_bits(np.zeros(3, np.int16))


# ----------------------------------------------------------------------------- writer input


GOOD = np.ones(2, np.float32)


@pytest.mark.parametrize("kwargs, error, pattern", [
    ({"tensors": [("a", GOOD)]}, TypeError, r"tensors must be a mapping.*list"),
    ({"tensors": {1: GOOD}}, TypeError, r"tensors keys must be str, got int 1"),
    ({"tensors": {"__metadata__": GOOD}}, ValueError, r"'__metadata__' is reserved"),
    ({"tensors": {"a": [1.0, 2.0]}}, TypeError, r"tensors\['a'\] must be a NumPy array.*list"),
    ({"tensors": {"a": np.float32(1.0)}}, TypeError, r"tensors\['a'\] must be a NumPy array"),
    ({"tensors": {"a": np.ones(2, np.complex64)}}, TypeError, r"tensors\['a'\] has dtype "
                                                              r"complex64.*allowed: float64"),
    ({"tensors": {"a": np.array(["x"])}}, TypeError, r"tensors\['a'\] has dtype <U1"),
    ({"tensors": {"a": np.array([None])}}, TypeError, r"tensors\['a'\] has dtype object"),
    ({"tensors": {"a": np.array(["2020-01-01"], "M8[D]")}}, TypeError, r"dtype datetime64"),
    ({"tensors": {"\ud800": GOOD}}, ValueError, r"tensors key .* cannot be encoded as UTF-8"),
    ({"metadata": [("a", "b")]}, TypeError, r"metadata must be a mapping.*list"),
    ({"metadata": {"a": 1}}, TypeError, r"metadata\['a'\] must be a str, got int 1"),
    ({"metadata": {2: "b"}}, TypeError, r"metadata keys must be str, got int 2"),
    ({"metadata": {"a": "\udc80"}}, ValueError, r"metadata\['a'\] cannot be encoded as UTF-8"),
    ({"bf16_keys": "a"}, TypeError, r"bf16_keys must be a collection of tensor names"),
    ({"bf16_keys": 3}, TypeError, r"bf16_keys must be a collection.*int 3"),
    ({"bf16_keys": ["missing"]}, ValueError, r"bf16_keys names 'missing', which is not a key"),
    ({"bf16_keys": ["i"]}, TypeError, r"bf16_keys names 'i' of dtype int64; only float16"),
])
def test_save_rejects_bad_input(tmp_path, kwargs, error, pattern):
    arguments = {"tensors": {"a": GOOD, "i": np.arange(3, dtype=np.int64)}, "metadata": None,
                 "bf16_keys": ()} | kwargs
    path = tmp_path / "x.safetensors"
    with pytest.raises(error, match=pattern):
        st.save_file(arguments["tensors"], path, arguments["metadata"],
                     bf16_keys=arguments["bf16_keys"])
    with pytest.raises(error, match=pattern):
        st.save(arguments["tensors"], arguments["metadata"], bf16_keys=arguments["bf16_keys"])
    assert list(tmp_path.iterdir()) == []  # validated before any file was created


def test_path_and_flag_types_are_checked(tmp_path):
    with pytest.raises(TypeError, match="path must be a str or os.PathLike, got int 3"):
        st.save_file({"a": GOOD}, 3)
    for reader in (st.load_file, st.read_header, st.load_metadata):
        with pytest.raises(TypeError, match="path must be a str or os.PathLike, got NoneType"):
            reader(None)
    path = tmp_path / "x.safetensors"
    st.save_file({"a": GOOD}, path)
    with pytest.raises(TypeError, match="mmap must be True or False, got str 'yes'"):
        st.load_file(path, mmap="yes")
    with pytest.raises(TypeError, match="data must be bytes, got str"):
        st.load("not bytes")


# ----------------------------------------------------------------------------- atomic writes


def test_failed_validation_leaves_an_existing_file_untouched(tmp_path):
    path = tmp_path / "x.safetensors"
    st.save_file({"a": GOOD}, path)
    before = path.read_bytes()
    with pytest.raises(TypeError):
        st.save_file({"a": GOOD, "b": np.ones(2, np.complex128)}, path)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


def test_failure_mid_write_leaves_an_existing_file_untouched(tmp_path, monkeypatch):
    path = tmp_path / "x.safetensors"
    st.save_file({"a": GOOD}, path)
    before = path.read_bytes()
    real_atomic_open = st.atomic_open

    class DiskFullAfterHeader:
        def __init__(self, handle):
            self.handle, self.writes = handle, 0

        def write(self, data):
            self.writes += 1
            if self.writes > 1:
                raise OSError(28, "No space left on device")
            return self.handle.write(data)

    @contextlib.contextmanager
    def failing_atomic_open(target, mode):
        with real_atomic_open(target, mode) as handle:
            yield DiskFullAfterHeader(handle)

    monkeypatch.setattr(st, "atomic_open", failing_atomic_open)
    big = {"a": np.arange(10000, dtype=np.float32), "b": np.arange(100, dtype=np.int64)}
    with pytest.raises(OSError, match="No space left"):
        st.save_file(big, path)
    assert path.read_bytes() == before
    assert list(tmp_path.iterdir()) == [path]


# ----------------------------------------------------------------------------- file validation


F32_PAIR = {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}
EIGHT_BYTES = bytes(range(8))


def entry(**changes):
    return F32_PAIR | changes


BAD_HEADERS = {
    "header longer than file": (b"{}", EIGHT_BYTES, 1000, "header length 1000 is more than the "
                                                          "10 bytes after the length prefix"),
    "absurd header length": (b"{}", b"", 2 ** 63, "exceeds the limit of 100000000 bytes"),
    "not utf-8": (b'{"\xff":1}', b"", None, "header is not valid UTF-8"),
    "not json": (b'{"a":', b"", None, "header is not valid JSON"),
    "trailing junk": (b'{} x', b"", None, "header is not valid JSON"),
    "deeply nested": (b'{"a":' + b"[" * 100000, b"", None, "header is not valid JSON"),
    "NaN constant": (b'{"a":{"dtype":"F32","shape":[NaN],"data_offsets":[0,8]}}', EIGHT_BYTES,
                     None, "header is not valid JSON \\(NaN is not a JSON value\\)"),
    "Infinity in extra field": (b'{"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8],'
                                b'"x":-Infinity}}', EIGHT_BYTES, None, "not valid JSON"),
    "not an object": (b"[]", b"", None, "header must be a JSON object, got an array"),
    "duplicate tensor": (b'{"a":' + json.dumps(F32_PAIR).encode() + b',"a":'
                         + json.dumps(F32_PAIR).encode() + b"}", EIGHT_BYTES, None,
                         "header has the key 'a' twice"),
    "duplicate field": (b'{"a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]}}',
                        EIGHT_BYTES, None, "header has the key 'dtype' twice"),
    "metadata not object": ({"__metadata__": [1], "a": F32_PAIR}, EIGHT_BYTES, None,
                            "'__metadata__' must be an object of string values, got \\[1\\]"),
    "metadata number": ({"__metadata__": {"k": 1}, "a": F32_PAIR}, EIGHT_BYTES, None,
                        "'__metadata__' must be an object of string values"),
    "entry not object": ({"a": 5}, b"", None, "tensor 'a': entry must be an object"),
    "no dtype": ({"a": {"shape": [2], "data_offsets": [0, 8]}}, EIGHT_BYTES, None,
                 "tensor 'a': entry has no 'dtype'"),
    "no shape": ({"a": {"dtype": "F32", "data_offsets": [0, 8]}}, EIGHT_BYTES, None,
                 "tensor 'a': entry has no 'shape'"),
    "no offsets": ({"a": {"dtype": "F32", "shape": [2]}}, EIGHT_BYTES, None,
                   "tensor 'a': entry has no 'data_offsets'"),
    "unknown dtype": ({"a": entry(dtype="F33")}, EIGHT_BYTES, None,
                      "tensor 'a': unknown dtype 'F33'; known: F64, F32, F16, BF16, I64"),
    "dtype not a string": ({"a": entry(dtype=4)}, EIGHT_BYTES, None, "unknown dtype 4; known"),
    "numpy-less dtype": ({"a": entry(dtype="F8_E4M3", shape=[8])}, EIGHT_BYTES, None,
                         "dtype 'F8_E4M3' has no NumPy equivalent; supported: F64"),
    "shape not a list": ({"a": entry(shape=2)}, EIGHT_BYTES, None,
                         "tensor 'a': shape must be a list of at most 32 non-negative integers, "
                         "got 2"),
    "negative dim": ({"a": entry(shape=[-2])}, EIGHT_BYTES, None, r"shape must be .* got \[-2\]"),
    "float dim": ({"a": entry(shape=[2.0])}, EIGHT_BYTES, None, r"shape must be .* got \[2.0\]"),
    "bool dim": ({"a": entry(shape=[True, 2])}, EIGHT_BYTES, None, r"got \[True, 2\]"),
    "too many dims": ({"a": entry(shape=[1] * 33 + [2])}, EIGHT_BYTES, None, "at most 32"),
    "three offsets": ({"a": entry(data_offsets=[0, 4, 8])}, EIGHT_BYTES, None,
                      r"data_offsets must be \[begin, end\] .* got \[0, 4, 8\]"),
    "string offset": ({"a": entry(data_offsets=["0", 8])}, EIGHT_BYTES, None,
                      "data_offsets must be"),
    "negative offset": ({"a": entry(data_offsets=[-8, 0])}, EIGHT_BYTES, None,
                        "data_offsets must be"),
    "begin after end": ({"a": entry(shape=[0], data_offsets=[8, 0])}, EIGHT_BYTES, None,
                        r"data_offsets \[8, 0\] begin after they end"),
    "past the end": ({"a": entry(shape=[4], data_offsets=[0, 16])}, EIGHT_BYTES, None,
                     r"data_offsets \[0, 16\] reach past the end of the 8-byte data section "
                     r"\(file truncated\?\)"),
    "size disagrees": ({"a": entry(shape=[3])}, EIGHT_BYTES, None,
                       r"dtype F32 with shape \[3\] needs 12 bytes but data_offsets \[0, 8\] "
                       "hold 8"),
    "overlap": ({"a": F32_PAIR, "b": entry(data_offsets=[4, 12])}, bytes(12), None,
                r"tensor 'b' at bytes \[4, 12\) overlaps tensor 'a', which ends at byte 8"),
    "gap": ({"a": F32_PAIR, "b": entry(data_offsets=[12, 20])}, bytes(20), None,
            "tensor 'b' starts at byte 12, leaving 4 unused bytes after tensor 'a'"),
    "gap at start": ({"a": entry(data_offsets=[4, 12])}, bytes(12), None,
                     "leaving 4 unused bytes at the start of the data section"),
    "trailing bytes": ({"a": F32_PAIR}, bytes(12), None,
                       "4 bytes follow the last tensor in the data section"),
}


@pytest.mark.parametrize("case", list(BAD_HEADERS))
def test_malformed_headers_raise_value_error_naming_file_and_problem(tmp_path, case):
    header, data, length, pattern = BAD_HEADERS[case]
    path = raw_file(tmp_path, header, data, length)
    for read in (lambda: st.load_file(path, mmap=True), lambda: st.load_file(path, mmap=False),
                 lambda: st.read_header(path)):
        with pytest.raises(ValueError, match=pattern) as caught:
            read()
        assert str(caught.value).startswith(str(path))
    with pytest.raises(ValueError, match=pattern) as caught:
        st.load(path.read_bytes())
    assert str(caught.value).startswith("data")


@pytest.mark.parametrize("size", [0, 1, 7])
def test_files_shorter_than_the_length_prefix(tmp_path, size):
    path = tmp_path / "x.safetensors"
    atomic_write_bytes(path, bytes(size))
    with pytest.raises(ValueError, match=f"is {size} bytes long; a safetensors file starts with"):
        st.load_file(path)
    with pytest.raises(ValueError, match=f"data is {size} bytes long"):
        st.load(bytes(size))


def test_gaps_are_rejected_like_the_reference_even_when_offsets_are_consistent(tmp_path):
    # Each entry is fine on its own; only the coverage check can catch this.
    header = {"a": entry(data_offsets=[0, 8]), "b": entry(data_offsets=[16, 24])}
    path = raw_file(tmp_path, header, bytes(24))
    with pytest.raises(ValueError, match="leaving 8 unused bytes after tensor 'a'"):
        st.load_file(path)


@pytest.mark.parametrize("mmap", [True, False])
def test_bool_bytes_other_than_0_and_1_are_rejected(tmp_path, mmap):
    header = {"flags": {"dtype": "BOOL", "shape": [4], "data_offsets": [0, 4]}}
    path = raw_file(tmp_path, header, b"\x00\x01\x02\x01")
    st.read_header(path)  # the header itself is fine
    with pytest.raises(ValueError, match="tensor 'flags': BOOL data holds bytes other than 0"):
        st.load_file(path, mmap=mmap)
    good = raw_file(tmp_path, header, b"\x00\x01\x01\x00")
    assert st.load_file(good, mmap=mmap)["flags"].tolist() == [False, True, True, False]


def test_header_entries_may_come_in_any_order_and_carry_extra_fields(tmp_path):
    header = {"b": entry(data_offsets=[8, 16], note="ignored"), "a": F32_PAIR}
    path = raw_file(tmp_path, header, struct.pack("<4f", 1, 2, 3, 4))
    loaded = st.load_file(path)
    assert list(loaded) == ["a", "b"]  # data-section order
    assert loaded["a"].tolist() == [1, 2] and loaded["b"].tolist() == [3, 4]


def test_unaligned_tensors_written_by_other_tools_still_load(tmp_path):
    # Nothing in the format forces alignment; NumPy reads unaligned views correctly.
    header = {"u": {"dtype": "U8", "shape": [1], "data_offsets": [0, 1]},
              "f": {"dtype": "F64", "shape": [2], "data_offsets": [1, 17]}}
    header_bytes = json.dumps(header).encode() + b" "  # 1 byte off alignment as well
    path = raw_file(tmp_path, header_bytes, b"\x07" + struct.pack("<2d", 1.5, -2.25))
    for mmap in (True, False):
        loaded = st.load_file(path, mmap=mmap)
        assert loaded["f"].tolist() == [1.5, -2.25] and loaded["u"].tolist() == [7]


# ----------------------------------------------------------------------------- fuzzing


def fuzz_tensors():
    rng = np.random.default_rng(10)
    return {
        "bert.embeddings.word_embeddings.weight": random_array(np.float32, (11, 6), rng),
        "bert.embeddings.position_ids": np.arange(8, dtype=np.int64)[None],
        "scale": random_array(np.float16, (3,), rng),
        "mask": random_array(np.bool_, (5,), rng),
        "counts": random_array(np.int32, (2, 2), rng),
        "empty": np.zeros((0, 4), np.float64),
        "half": random_array(np.float32, (4,), rng),
    }


def outcome(read):
    """'ok' or 'ValueError'; any other exception escapes and fails the test."""
    try:
        read()
    except ValueError:
        return "ValueError"
    return "ok"


def test_fuzz_corrupted_header_bytes_load_cleanly_or_raise_value_error(tmp_path):
    original = st.save(fuzz_tensors(), metadata={"format": "np"}, bf16_keys=["half"])
    header_end = 8 + struct.unpack("<Q", original[:8])[0]
    rng = np.random.default_rng(11)
    path = tmp_path / "fuzz.safetensors"
    outcomes = []
    for _ in range(300):
        corrupted = bytearray(original)
        # Mostly the JSON, sometimes the length prefix too.
        for position in rng.integers(0 if rng.random() < 0.2 else 8, header_end,
                                     size=rng.integers(1, 4)):
            corrupted[position] = rng.integers(0, 256)
        corrupted = bytes(corrupted)
        path.write_bytes(corrupted)
        loaders = {outcome(lambda: st.load_file(path, mmap=True)),
                   outcome(lambda: st.load_file(path, mmap=False)),
                   outcome(functools.partial(st.load, corrupted))}
        assert len(loaders) == 1  # all three readers judge a file alike
        loaded = loaders.pop()
        # read_header skips only the data checks, so it can pass where the loaders fail.
        if outcome(lambda: st.read_header(path)) == "ValueError":
            assert loaded == "ValueError"
        outcomes.append(loaded)
    assert outcomes.count("ValueError") > 150  # the corruption really was harmful
    assert outcomes.count("ok") > 5  # ... and some (in padding or values) harmless


def test_fuzz_corrupted_bytes_anywhere_never_escape_as_other_errors():
    original = st.save(fuzz_tensors())
    rng = np.random.default_rng(12)
    for _ in range(300):
        corrupted = bytearray(original)
        for position in rng.integers(0, len(original), size=rng.integers(1, 6)):
            corrupted[position] = rng.integers(0, 256)
        try:
            loaded = st.load(bytes(corrupted))
        except ValueError:
            continue
        assert all(isinstance(array, np.ndarray) for array in loaded.values())


def test_fuzz_truncated_files_always_raise_value_error(tmp_path):
    original = st.save(fuzz_tensors(), metadata={"format": "np"})
    rng = np.random.default_rng(13)
    path = tmp_path / "truncated.safetensors"
    lengths = np.concatenate([rng.integers(0, len(original), size=200),
                              [0, 7, 8, 9, len(original) - 1]])
    for length in lengths:
        path.write_bytes(original[:length])
        for mmap in (True, False):
            with pytest.raises(ValueError, match=str(path)):
                st.load_file(path, mmap=mmap)
        with pytest.raises(ValueError):
            st.load(original[:length])
    path.write_bytes(original)
    assert set(st.load_file(path)) == set(fuzz_tensors())


def test_truncated_data_names_the_tensor_and_suggests_truncation(tmp_path):
    original = st.save({"a": np.ones(4, np.float32), "b": np.ones(4, np.float32)})
    path = tmp_path / "x.safetensors"
    path.write_bytes(original[:-3])
    with pytest.raises(ValueError, match=r"tensor 'b': data_offsets \[16, 32\] reach past the end "
                                         r"of the 29-byte data section \(file truncated\?\)"):
        st.load_file(path)


def test_writer_output_always_passes_the_reader_checks():
    rng = np.random.default_rng(14)
    for _ in range(50):
        tensors = {}
        for index in range(rng.integers(0, 6)):
            dtype = list(NUMPY_DTYPES.values())[rng.integers(len(NUMPY_DTYPES))]
            shape = tuple(rng.integers(0, 4, size=rng.integers(0, 4)))
            tensors[f"t{index}"] = random_array(dtype, shape, rng)
        loaded = st.load(st.save(tensors))
        assert all(same_array(loaded[name], array) for name, array in tensors.items())


def test_module_has_no_pickle_or_global_random_state():
    source = Path(st.__file__).read_text()
    assert "pickle" not in source and "np.random" not in source
