"""Seeded fuzzing of every file minibert reads: model.safetensors, config.json, vocab.txt.

Each case mutates a valid file (bytes, lengths, JSON structure, offsets, dtypes, shapes,
truncation, huge declared sizes, duplicate keys, encodings, line endings...) and loads it
through the real entry points. A case passes when the file either

- loads correctly: the result is checked against an independent reading of the same
  bytes, or
- is refused with a clear error: an exception of ``CLEAR_ERRORS`` (and none of
  ``CRASHES``, e.g. a UnicodeDecodeError is a ValueError but leaks an internal step),
  whose message is one line of at most ``MAX_MESSAGE`` characters naming the file.

and, either way, it takes less than ``CASE_SECONDS`` and allocates less than
``CASE_BYTES`` (traced with tracemalloc, which sees NumPy's buffers): a header that
declares a 2**60-byte tensor must be refused from its declared size, never allocated.

Every failing case is collected and reported together, with the mutation that caused
it. ``python -m pytest tests/io/test_fuzz.py -s`` prints how many cases of each kind loaded
and how many were refused; the slow variant runs ten times as many cases.
"""

from __future__ import annotations

import contextlib
import functools
import json
import signal
import struct
import threading
import time
import tracemalloc
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert.io import safetensors as st
from minibert.tokenization import load_tokenizer

SEED = 0
SAFETENSORS_CASES = 1200
CONFIG_CASES = 300
VOCAB_CASES = 300
SLOW_FACTOR = 10

CLEAR_ERRORS = (ValueError, TypeError, OSError)
CRASHES = (LookupError, AttributeError, struct.error, MemoryError, OverflowError,
           UnicodeError, RecursionError, ArithmeticError, AssertionError, NotImplementedError)
MAX_MESSAGE = 500
CASE_SECONDS = 5.0  # a load takes about a millisecond; this only catches hangs
CASE_BYTES = 32 * 2**20  # the files are a few kB: a real huge allocation shows far above


class CaseTimeout(BaseException):
    """Raised by the timer inside a case that runs too long (BaseException: never caught
    by the code under test)."""


@contextlib.contextmanager
def time_limit(seconds: float):
    """Interrupt the block after ``seconds`` where a timer signal is available; otherwise
    the caller's elapsed-time check still reports a slow case once it ends."""
    in_main_thread = threading.current_thread() is threading.main_thread()
    if not hasattr(signal, "setitimer") or not in_main_thread:
        yield
        return

    def expire(signum, frame):
        raise CaseTimeout

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


@dataclass
class Tally:
    """Outcomes of one fuzz run: loaded, refused (by exception class), failures."""

    name: str
    loaded: Counter = field(default_factory=Counter)
    refused: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)

    @property
    def cases(self) -> int:
        return sum(self.loaded.values()) + sum(self.refused.values()) + len(self.failures)

    def run(self, kind: str, label: str, load, check_loaded, names: tuple[str, ...],
            count: bool = True) -> None:
        """Run ``load()``; judge its result with ``check_loaded`` or its error as clear."""
        tracemalloc.reset_peak()
        baseline = tracemalloc.get_traced_memory()[0]
        start = time.perf_counter()
        error = result = None
        try:
            with time_limit(CASE_SECONDS):
                result = load()
        except CaseTimeout:
            self.failures.append(f"{kind} [{label}]: still running after {CASE_SECONDS} s")
            return
        except BaseException as caught:  # judged below, never swallowed silently
            if not isinstance(caught, Exception):
                raise
            error = caught
        elapsed = time.perf_counter() - start
        peak = tracemalloc.get_traced_memory()[1] - baseline
        problem = None
        if elapsed > CASE_SECONDS:
            problem = f"took {elapsed:.1f} s"
        elif peak > CASE_BYTES:
            problem = f"allocated {peak / 2**20:.0f} MiB"
        elif error is not None:
            problem = unclear(error, names)
        else:
            try:
                check_loaded(result)
            except AssertionError as wrong:
                problem = f"loaded wrongly: {wrong}"
        if problem is not None:
            self.failures.append(f"{kind} [{label}]: {problem}")
        elif not count:
            return
        elif error is None:
            self.loaded[kind] += 1
        else:
            self.refused[kind] += 1

    def report(self) -> str:
        kinds = sorted(set(self.loaded) | set(self.refused))
        lines = [f"{self.name}: {self.cases} cases, {sum(self.loaded.values())} loaded, "
                 f"{sum(self.refused.values())} refused with a clear error, "
                 f"{len(self.failures)} failed"]
        lines += [f"  {kind}: {self.loaded[kind]} loaded, {self.refused[kind]} refused"
                  for kind in kinds]
        return "\n".join(lines)

    def assert_clean(self) -> None:
        print("\n" + self.report())
        shown = "\n".join(self.failures[:25])
        assert not self.failures, f"{len(self.failures)} of {self.cases} cases failed:\n{shown}"


def unclear(error: Exception, names: tuple[str, ...]) -> str | None:
    """Why ``error`` is not a clear refusal (None when it is one)."""
    kind = type(error).__name__
    message = str(error)
    if not isinstance(error, CLEAR_ERRORS) or isinstance(error, CRASHES):
        return f"{kind} escaped: {message[:300]}"
    if "\n" in message or len(message) > MAX_MESSAGE:
        return f"{kind} message is not one short line ({len(message)} characters): {message[:300]}"
    if not any(name in message for name in names):
        return f"{kind} message names none of {names}: {message[:300]}"
    return None


@pytest.fixture
def traced():
    tracemalloc.start()
    try:
        yield
    finally:
        tracemalloc.stop()


# ----------------------------------------------------------------------------- values


# Values that break type, range or size assumptions; the fuzzers draw from them.
ODD_VALUES = [
    0, 1, -1, 2, 3, 7, 2**31, 2**32 + 1, 2**60, 2**63, 2**64, 2**64 + 5, -(2**63), 10**400,
    0.0, 1.5, -0.5, 1e308, 1e-320, True, False, None, "", "3", "F32", "gelu", "x" * 5000,
    [], [1], [0, 0], [[1]], [None], {}, {"a": 1}, {"dtype": "F32"},
]


def pick(rng: np.random.Generator, choices):
    """One of ``choices`` (any Python objects: rng.choice would turn them into an array)."""
    return choices[int(rng.integers(len(choices)))]


def odd_value(rng: np.random.Generator):
    return pick(rng, ODD_VALUES)


def raw_json_oddity(rng: np.random.Generator) -> str:
    """JSON text Python's parser may accept although it is not JSON, or nests deeply."""
    depth = pick(rng, [10, 2000, 100_000])
    return pick(rng, ["NaN", "Infinity", "-Infinity", "[" * depth + "]" * depth,
                           "1" * 5000, "1e99999", "-0", '"\\ud800"', '"\\u0000"'])


def mutate_tree(value, rng: np.random.Generator, depth: int = 0):
    """A copy of a JSON value with one node (chosen at random) replaced by an odd value."""
    if isinstance(value, dict) and value and (depth == 0 or rng.random() < 0.7):
        key = list(value)[int(rng.integers(len(value)))]
        return {**value, key: mutate_tree(value[key], rng, depth + 1)}
    if isinstance(value, list) and value and rng.random() < 0.7:
        index = int(rng.integers(len(value)))
        copy = list(value)
        copy[index] = mutate_tree(value[index], rng, depth + 1)
        return copy
    return odd_value(rng)


def flip_bytes(data: bytes, begin: int, end: int, rng: np.random.Generator) -> bytes:
    """``data`` with one to four bytes in [begin, end) set to random values."""
    buffer = bytearray(data)
    if end <= begin:
        return data
    for _ in range(int(rng.integers(1, 5))):
        buffer[int(rng.integers(begin, end))] = int(rng.integers(256))
    return bytes(buffer)


# ----------------------------------------------------------------------------- safetensors

NUMPY_OF = {"F64": "<f8", "F32": "<f4", "F16": "<f2", "BF16": "<u2", "I64": "<i8",
            "I32": "<i4", "I16": "<i2", "I8": "i1", "U64": "<u8", "U32": "<u4", "U16": "<u2",
            "U8": "u1", "BOOL": "?"}


def base_safetensors() -> bytes:
    """A small valid file: every kind of entry (13 dtypes' worth of layouts, BF16, a 0-d
    scalar, an empty tensor) and metadata."""
    rng = np.random.default_rng(SEED)
    tensors = {
        "bert.embeddings.word_embeddings.weight": rng.standard_normal((5, 4)).astype(np.float32),
        "half": rng.standard_normal(3).astype(np.float32),
        "f16": rng.standard_normal((2, 3)).astype(np.float16),
        "ids": rng.integers(-9, 9, 4).astype(np.int64),
        "mask": rng.random((2, 2)) < 0.5,
        "bytes": rng.integers(0, 255, 3).astype(np.uint8),
        "scalar": np.full((), 2.5),
        "empty": np.zeros((0, 3), dtype=np.float32),
        "i8": rng.integers(-100, 100, 5).astype(np.int8),
    }
    return st.save(tensors, metadata={"format": "pt", "note": "münchen"}, bf16_keys=["half"])


def split_file(data: bytes) -> tuple[dict, bytes]:
    length = int.from_bytes(data[:8], "little")
    return json.loads(data[8:8 + length]), data[8 + length:]


def join_file(header_text: str | bytes, body: bytes, length: int | None = None) -> bytes:
    raw = header_text if isinstance(header_text, bytes) else header_text.encode("utf-8")
    return struct.pack("<Q", len(raw) if length is None else length) + raw + body


def independent_decode(data: bytes) -> dict[str, np.ndarray]:
    """What a valid file holds, read with json and np.frombuffer alone."""
    header, body = split_file(data)
    tensors = {}
    for name, entry in header.items():
        if name == "__metadata__":
            continue
        begin, end = entry["data_offsets"]
        array = np.frombuffer(body[begin:end], dtype=NUMPY_OF[entry["dtype"]])
        array = array.reshape(entry["shape"])
        if entry["dtype"] == "BF16":
            array = (array.astype(np.uint32) << 16).view(np.float32)
        tensors[name] = array
    return tensors


def same_tensors(loaded: dict, expected: dict) -> None:
    assert set(loaded) == set(expected), f"names {sorted(loaded)} != {sorted(expected)}"
    for name, array in expected.items():
        ours = loaded[name]
        assert ours.dtype == array.dtype and ours.shape == array.shape, name
        assert ours.tobytes() == np.ascontiguousarray(array).tobytes(), name


def safetensors_mutation(base: bytes, rng: np.random.Generator) -> tuple[str, str, bytes]:
    """(kind, label, bytes) of one mutation of ``base``."""
    header, body = split_file(base)
    length = int.from_bytes(base[:8], "little")
    names = [n for n in header if n != "__metadata__"]
    name = pick(rng, names)
    entry = header[name]
    kind = pick(rng, [
        "header bytes", "header length", "dtype", "shape", "data offsets", "entry fields",
        "JSON tree", "JSON structure", "metadata", "duplicate keys", "truncation",
        "trailing bytes", "huge sizes", "overlap and range", "data bytes", "encoding",
    ])
    if kind == "header bytes":
        return kind, "flip in header", flip_bytes(base, 8, 8 + length, rng)
    if kind == "header length":
        value = pick(rng, [0, 1, 2, 7, length - 1, length + 1, length + 8, len(base) - 8,
                           len(base) - 7, len(base), 100_000_001, 2**32, 2**63, 2**64 - 1,
                           int(rng.integers(len(base)))])
        return kind, f"length {value}", struct.pack("<Q", value) + base[8:]
    if kind in ("dtype", "shape", "data offsets"):
        field_name = {"dtype": "dtype", "shape": "shape", "data offsets": "data_offsets"}[kind]
        begin, end = entry["data_offsets"]
        shape = list(entry["shape"])
        candidates = {
            "dtype": ["F64", "F32", "F16", "BF16", "I64", "I8", "U64", "BOOL", "U8", "f32",
                      "F 32", "C64", "F8_E4M3", "F4", "ÄÖ", "F32" * 100],
            "shape": [shape + [1], shape[:-1], shape[::-1], [d + 1 for d in shape], [-1],
                      [2**60], [2**63, 2**63], [2**31, 2**31], [1] * 33, [1.5], [True], ["3"],
                      [None], [[2]], "[2]", [0] + shape, [2**64]],
            "data_offsets": [[begin, end + 1], [begin - 1, end], [end, begin], [begin, end, 0],
                             [begin], [], [-1, end], [begin, 2**62], [begin, 2**64],
                             [0, end - begin], [float(begin), end], [True, end],
                             [begin + 1, end + 1], [begin + 8, end + 8], "0,4"],
        }[field_name]
        value = pick(rng, candidates) if rng.random() < 0.8 else odd_value(rng)
        header[name] = {**entry, field_name: value}
        return kind, f"{name}.{field_name} = {str(value)[:60]}", join_file(json.dumps(header), body)
    if kind == "entry fields":
        choice = int(rng.integers(4))
        if choice == 0:
            dropped = list(entry)[int(rng.integers(len(entry)))]
            header[name] = {k: v for k, v in entry.items() if k != dropped}
            label = f"{name} without {dropped}"
        elif choice == 1:
            header[name] = {**entry, "extra": odd_value(rng)}
            label = f"{name} with an extra field"
        else:
            header[name] = odd_value(rng)
            label = f"{name} = {str(header[name])[:60]}"
        return kind, label, join_file(json.dumps(header), body)
    if kind == "JSON tree":
        mutated = mutate_tree(header, rng)
        return kind, "one node replaced", join_file(json.dumps(mutated), body)
    if kind == "JSON structure":
        choice = int(rng.integers(6))
        if choice == 0:
            text = json.dumps(odd_value(rng))
        elif choice == 1:
            text = json.dumps(header)[: -1] + ', "x": ' + raw_json_oddity(rng) + "}"
        elif choice == 2:
            text = json.dumps(header) + pick(rng, ["x", "{}", "\x00", " \t\n", "\r\n"])
        elif choice == 3:
            text = "\ufeff" + json.dumps(header)
        elif choice == 4:
            text = json.dumps(header).replace(f'"{name}"', '"' + pick(rng,
                ["", "\\u0000", "\\ud800", "é" * 3000, "__metadata__ "]) + '"', 1)
        else:
            many = {f"t{i}": {"dtype": "U8", "shape": [0], "data_offsets": [0, 0]}
                    for i in range(pick(rng, [100, 3000]))}
            text = json.dumps({**many, **header})
        return kind, f"structure {choice}", join_file(text, body)
    if kind == "metadata":
        value = pick(rng, [None, "a", 1, [], {"a": 1}, {"a": None}, {"a": {"b": "c"}},
                           {"a": ["x"]}, {}, {"big": "x" * 100_000}, {"": ""}])
        mutated = {**header, "__metadata__": value} if value is not None else \
            {k: v for k, v in header.items() if k != "__metadata__"}
        return kind, f"metadata = {str(value)[:40]}", join_file(json.dumps(mutated), body)
    if kind == "duplicate keys":
        text = json.dumps(header)
        other = pick(rng, names + ["__metadata__"])
        repeated = json.dumps({other: header[other]})[1:-1]
        return kind, f"{other} twice", join_file("{" + repeated + "," + text[1:], body)
    if kind == "truncation":
        cut = int(rng.integers(0, len(base)))
        return kind, f"cut at {cut}", base[:cut]
    if kind == "trailing bytes":
        extra = rng.integers(0, 256, int(rng.integers(1, 64)), dtype=np.uint8).tobytes()
        return kind, f"{len(extra)} bytes appended", base + extra
    if kind == "huge sizes":
        dtype = pick(rng, ["F32", "F64", "U8", "BF16"])
        shape = pick(rng, [[2**60], [2**31, 2**31], [2**20, 2**20, 2**20], [2**62, 4], [10**15]])
        nbytes = int(np.prod(shape, dtype=object)) * np.dtype(NUMPY_OF[dtype]).itemsize
        header[name] = {"dtype": dtype, "shape": shape,
                        "data_offsets": [0, nbytes] if rng.random() < 0.5 else [0, len(body)]}
        return kind, f"{name}: {dtype} {shape}", join_file(json.dumps(header), body)
    if kind == "overlap and range":
        other_name = pick(rng, names)
        other = header[other_name]
        choice = int(rng.integers(3))
        if choice == 0:
            header[name] = {**entry, "data_offsets": other["data_offsets"]}
        elif choice == 1:
            header[name] = {**entry, "data_offsets": [len(body), len(body) + 4]}
        else:
            header[other_name] = {**other, "data_offsets": entry["data_offsets"]}
            header[name] = {**header[name], "data_offsets": other["data_offsets"]}
        return kind, f"{name} offsets moved ({choice})", join_file(json.dumps(header), body)
    if kind == "data bytes":
        return kind, "flip in data", flip_bytes(base, 8 + length, len(base), rng)
    bad = pick(rng, [b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf4\x90\x80\x80"])
    text = json.dumps(header, ensure_ascii=False).encode("utf-8")
    at = int(rng.integers(1, len(text) - 1))
    return kind, f"{bad!r} at header byte {at}", join_file(text[:at] + bad + text[at:], body)


def check_safetensors_load(data: bytes):
    def check(loaded):
        same_tensors(loaded, independent_decode(data))

    return check


def run_safetensors_fuzz(cases: int, tmp_path: Path) -> Tally:
    rng = np.random.default_rng(SEED)
    base = base_safetensors()
    tally = Tally("safetensors")
    for case in range(cases):
        kind, label, data = safetensors_mutation(base, rng)
        # A new file each time: truncating one in place is far slower on some file systems.
        path = tmp_path / f"case{case}.safetensors"
        path.write_bytes(data)
        names = (str(path),)
        mmap = case % 2 == 0
        check = check_safetensors_load(data)
        tally.run(kind, f"case {case}, {label}, mmap={mmap}",
                  functools.partial(st.load_file, path, mmap=mmap), check, names)
        # Every few cases also the in-memory reader and the header-only reader (their
        # failures are reported, their outcomes not counted again).
        if case % 4 == 1:
            tally.run(kind, f"case {case}, {label}, load(bytes)",
                      functools.partial(st.load, data), check, ("data",), count=False)
            tally.run(kind, f"case {case}, {label}, read_header",
                      functools.partial(st.read_header, path), lambda _: None, names,
                      count=False)
    return tally


# ----------------------------------------------------------------------------- model folder

TINY = dict(vocab_size=40, hidden_size=8, num_hidden_layers=1, num_attention_heads=2,
            intermediate_size=16, max_position_embeddings=16)
SPECIAL = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
WORDS = ["the", "bank", "river", "was", "steep", "she", "sat", "there", "un", "##believ",
         "##ably", "a", "b", "c", "##s", "##ing", ".", ",", "é", "日", "##本", "’", "!", "?",
         "money", "water", "by", "on", "it", "is", "to", "and", "in", "of", "for"]


def save_tiny_model(folder: Path) -> tuple[mb.BertForPreTraining, mb.BertTokenizer]:
    tokenizer = mb.BertTokenizer(SPECIAL + WORDS)
    assert tokenizer.vocab_size == TINY["vocab_size"]
    model = mb.BertForPreTraining(mb.BertConfig(**TINY), seed=0)
    model.save_pretrained(folder, tokenizer=tokenizer)
    return model, tokenizer


def config_mutation(base: dict, text: str, rng: np.random.Generator) -> tuple[str, str, bytes]:
    kind = pick(rng, ["field value", "missing field", "unknown field", "extra object",
                           "JSON tree", "JSON structure", "duplicate keys", "raw bytes",
                           "truncation", "encoding", "sizes"])
    known = list(mb.BertConfig.__dataclass_fields__) + ["model_type", "position_embedding_type",
                                                          "architectures"]
    key = pick(rng, known)
    if kind == "field value":
        value = odd_value(rng)
        return kind, f"{key} = {str(value)[:40]}", json.dumps({**base, key: value}).encode()
    if kind == "missing field":
        return kind, f"no {key}", json.dumps({k: v for k, v in base.items() if k != key}).encode()
    if kind == "unknown field":
        return kind, "unknown key", json.dumps({**base, f"my_{key}": odd_value(rng)}).encode()
    if kind == "extra object":
        value = odd_value(rng) if rng.random() < 0.5 else {key: odd_value(rng)}
        return kind, f"extra = {str(value)[:40]}", json.dumps({**base, "extra": value}).encode()
    if kind == "JSON tree":
        return kind, "one node replaced", json.dumps(mutate_tree(base, rng)).encode()
    if kind == "JSON structure":
        choice = int(rng.integers(5))
        variants = [json.dumps(odd_value(rng)), text[:-1] + ', "x": ' + raw_json_oddity(rng) + "}",
                    text + "x", " " * 100_000 + text, "\ufeff" + text]
        return kind, f"structure {choice}", variants[choice].encode()
    if kind == "duplicate keys":
        repeated = json.dumps({key: odd_value(rng)})[1:-1]
        return kind, f"{key} twice", ("{" + repeated + "," + text.lstrip()[1:]).encode()
    if kind == "raw bytes":
        data = text.encode()
        return kind, "flipped bytes", flip_bytes(data, 0, len(data), rng)
    if kind == "truncation":
        cut = int(rng.integers(0, len(text)))
        return kind, f"cut at {cut}", text.encode()[:cut]
    if kind == "encoding":
        bad = pick(rng, [b"\xff", b"\xc3", b"\xed\xa0\x80", b"\x00"])
        data = text.encode()
        at = int(rng.integers(len(data)))
        return kind, f"{bad!r} at byte {at}", data[:at] + bad + data[at:]
    size = pick(rng, ["vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size",
                           "max_position_embeddings", "type_vocab_size", "num_attention_heads"])
    value = pick(rng, [base[size] + 1, base[size] - 1, base[size] * 2, 10**6, 10**9, 10**12,
                       2**40])
    return kind, f"{size} = {value}", json.dumps({**base, size: value}).encode()


def check_config(data: bytes):
    def check(config):
        assert isinstance(config, mb.BertConfig)
        values = json.loads(data.decode("utf-8-sig"))
        for name in mb.BertConfig.__dataclass_fields__:
            if name in values and name != "extra":
                assert getattr(config, name) == values[name], name

    return check


def check_model(reference: dict, data: bytes):
    def check(model):
        check_config(data)(model.config)
        ours = dict(model.named_parameters())
        assert set(ours) == set(reference)
        for name, value in reference.items():
            assert np.array_equal(ours[name], value), name

    return check


def run_config_fuzz(cases: int, tmp_path: Path) -> Tally:
    rng = np.random.default_rng(SEED + 1)
    folder = tmp_path / "model"
    model, _ = save_tiny_model(folder)
    reference = {name: value.copy() for name, value in model.named_parameters()}
    path = folder / "config.json"
    text = path.read_text(encoding="utf-8")
    base = json.loads(text)
    tally = Tally("config.json")
    for case in range(cases):
        kind, label, data = config_mutation(base, text, rng)
        path.write_bytes(data)
        tally.run(kind, f"case {case}, {label}, from_json_file",
                  functools.partial(mb.BertConfig.from_json_file, path), check_config(data),
                  (str(path),))
        tally.run(kind, f"case {case}, {label}, from_pretrained",
                  functools.partial(mb.BertForPreTraining.from_pretrained, folder,
                                    dtype=np.float32),
                  check_model(reference, data), (str(folder),))
    return tally


# ----------------------------------------------------------------------------- vocab.txt

ODD_TOKENS = ["", " ", "[PAD] ", "\x00", "\x0b", "\x0c", "\x1c", "\x85", "\u2028", "\u2029",
              "\ufeff", "\u200b", "e\u0301", "👍🏽", "א", "##", "###", "[MASK]", "x" * 100_000,
              "\t", "\\n", "\ud7ff"]


def vocab_mutation(lines: list[str], rng: np.random.Generator) -> tuple[str, str, bytes]:
    text = "\n".join(lines) + "\n"
    kind = pick(rng, ["delete line", "repeat line", "swap lines", "odd token",
                           "invalid UTF-8", "line endings", "byte order mark", "empty",
                           "raw bytes", "truncation", "many lines", "blank lines"])
    index = int(rng.integers(len(lines)))
    if kind == "delete line":
        return kind, f"without {lines[index]!r}", \
            ("\n".join(lines[:index] + lines[index + 1:]) + "\n").encode()
    if kind == "repeat line":
        at = int(rng.integers(len(lines)))
        copy = lines[:at] + [lines[index]] + lines[at:]
        return kind, f"{lines[index]!r} again at {at}", ("\n".join(copy) + "\n").encode()
    if kind == "swap lines":
        other = int(rng.integers(len(lines)))
        copy = list(lines)
        copy[index], copy[other] = copy[other], copy[index]
        return kind, f"swap {index} and {other}", ("\n".join(copy) + "\n").encode()
    if kind == "odd token":
        copy = list(lines)
        token = pick(rng, ODD_TOKENS)
        if rng.random() < 0.5:
            copy[index] = token
        else:
            copy.insert(index, token)
        return kind, f"{token[:20]!r} at line {index + 1}", \
            ("\n".join(copy) + "\n").encode("utf-8", "surrogatepass")
    if kind == "invalid UTF-8":
        bad = pick(rng, [b"\xff", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xe6\x97"])
        data = text.encode()
        at = int(rng.integers(len(data)))
        return kind, f"{bad!r} at byte {at}", data[:at] + bad + data[at:]
    if kind == "line endings":
        ending = pick(rng, ["\r\n", "\r", "\n\r"])
        return kind, f"lines end in {ending!r}", (ending.join(lines) + ending).encode()
    if kind == "byte order mark":
        return kind, "BOM first", ("\ufeff" + text).encode()
    if kind == "empty":
        return kind, "empty file", pick(rng, ["", "\n", "\n\n\n"]).encode()
    if kind == "raw bytes":
        data = text.encode()
        return kind, "flipped bytes", flip_bytes(data, 0, len(data), rng)
    if kind == "truncation":
        data = text.encode()
        cut = int(rng.integers(len(data)))
        return kind, f"cut at {cut}", data[:cut]
    if kind == "many lines":
        extra = [f"w{i}" for i in range(pick(rng, [1000, 20_000]))]
        return kind, f"{len(extra)} more lines", ("\n".join(lines + extra) + "\n").encode()
    blanks = "\n" * int(rng.integers(1, 4))
    return kind, f"{len(blanks)} blank lines", (text + blanks).encode()


def expected_tokens(data: bytes) -> list[str]:
    """One token per line of a UTF-8 text, lines ended by \\n, \\r\\n or \\r."""
    text = data.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    tokens = text.split("\n")
    return tokens[:-1] if text.endswith("\n") else tokens


def check_tokenizer(data: bytes):
    def check(tokenizer):
        tokens = expected_tokens(data)
        assert tokenizer.vocab_size == len(tokens)
        assert tokenizer.convert_ids_to_tokens(list(range(len(tokens)))) == tokens
        encoded = tokenizer("The river bank was unbelievably steep.", "She sat there!")
        assert tokenizer.convert_ids_to_tokens(encoded["input_ids"])[0] == "[CLS]"

    return check


def run_vocab_fuzz(cases: int, tmp_path: Path) -> Tally:
    rng = np.random.default_rng(SEED + 2)
    folder = tmp_path / "model"
    save_tiny_model(folder)
    path = folder / "vocab.txt"
    lines = path.read_text(encoding="utf-8").splitlines()
    tally = Tally("vocab.txt")
    for case in range(cases):
        kind, label, data = vocab_mutation(lines, rng)
        path.write_bytes(data)
        if case % 2:
            tally.run(kind, f"case {case}, {label}, BertTokenizer",
                      functools.partial(mb.BertTokenizer, path), check_tokenizer(data),
                      (str(path),))
        else:
            tally.run(kind, f"case {case}, {label}, load_tokenizer",
                      functools.partial(load_tokenizer, folder), check_tokenizer(data),
                      (str(path),))
    return tally


# ----------------------------------------------------------------------------- the tests

# kind -> (the fuzzer, its mutations in the default run, the least number of loads)
FUZZERS = {
    "safetensors": (run_safetensors_fuzz, SAFETENSORS_CASES, 1000),
    "config.json": (run_config_fuzz, CONFIG_CASES, 2 * 200),
    "vocab.txt": (run_vocab_fuzz, VOCAB_CASES, 200),
}


@pytest.mark.parametrize("kind", FUZZERS)
def test_fuzz(kind, tmp_path, traced):
    run, cases, least = FUZZERS[kind]
    tally = run(cases, tmp_path)
    assert tally.cases >= least
    assert sum(tally.loaded.values()) > 0 and sum(tally.refused.values()) > 0
    tally.assert_clean()


@pytest.mark.slow
@pytest.mark.parametrize("kind", FUZZERS)
def test_fuzz_long(kind, tmp_path, traced):
    run, cases, _ = FUZZERS[kind]
    run(cases * SLOW_FACTOR, tmp_path).assert_clean()


# -- the command line and foreign checkpoints: benchmarks/fuzz_inputs.py in its small mode ----

def test_command_line_and_checkpoint_fuzz_small():
    """16 generated command lines (options, model folders, texts, outputs; each under a
    time and memory limit, in a folder of FIFOs and links) and, with transformers, 4
    checkpoint variants: no traceback, no silent wrong answer, nothing unbounded, nothing
    changed outside a command's output. The benchmark runs 1,000 and more."""
    import subprocess
    import sys

    try:
        import torch  # noqa: F401
        import transformers  # noqa: F401
        variants = "4"
    except ImportError:
        variants = "0"
    script = Path(__file__).resolve().parents[2] / "benchmarks" / "fuzz_inputs.py"
    result = subprocess.run([sys.executable, str(script), "--cases", "16", "--variants",
                             variants, "--seed", "5", "--time-limit", "120"],
                            capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-2000:]
    assert "0 tracebacks, 0 silent wrong answers, 0 unbounded, 0 changed outside" in \
        result.stdout, result.stdout[-3000:]
