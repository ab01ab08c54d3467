"""BertConfig: the hyperparameters of a BERT, with HuggingFace's field names and defaults.

A ``config.json`` written by ``transformers`` loads here (unknown keys are kept in
``extra`` and written back), and ours loads there.
"""

from __future__ import annotations

import dataclasses
import math
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minibert.io.fileio import DuplicateKeyError, atomic_write_json, strict_json_loads
from minibert.io.safetensors import open_to_read

__all__ = ["BertConfig", "PRESETS", "HIDDEN_ACTS"]

HIDDEN_ACTS = ("gelu", "gelu_new", "gelu_pytorch_tanh", "relu")

# Sizes of the presets: (layers, hidden, heads, intermediate). "tiny", "mini" and "small"
# are the compact BERTs of Turc et al. 2019 ("Well-Read Students Learn Better"); "base"
# and "large" are Devlin et al. 2019. The toy demo overrides vocab_size and
# max_position_embeddings for its own small vocabulary and short sequences.
PRESETS: dict[str, dict[str, int]] = {
    "tiny": dict(num_hidden_layers=2, hidden_size=128, num_attention_heads=2,
                 intermediate_size=512),
    "mini": dict(num_hidden_layers=4, hidden_size=256, num_attention_heads=4,
                 intermediate_size=1024),
    "small": dict(num_hidden_layers=4, hidden_size=512, num_attention_heads=8,
                  intermediate_size=2048),
    "base": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12,
                 intermediate_size=3072),
    "large": dict(num_hidden_layers=24, hidden_size=1024, num_attention_heads=16,
                  intermediate_size=4096),
}


@dataclass
class BertConfig:
    """Hyperparameters of a BERT (HF ``BertConfig`` names and defaults = BERT-Base)."""

    vocab_size: int = 30522  # V: rows of the word-embedding table
    hidden_size: int = 768  # H: width of every token vector
    num_hidden_layers: int = 12  # L: transformer blocks in the encoder
    num_attention_heads: int = 12  # N: heads per attention layer; D = H / N
    intermediate_size: int = 3072  # I: width of the feed-forward layer
    hidden_act: str = "gelu"  # "gelu" (exact erf), "gelu_new" (tanh form) or "relu"
    hidden_dropout_prob: float = 0.1  # dropout after embeddings and each sublayer
    attention_probs_dropout_prob: float = 0.1  # dropout on the attention probabilities
    max_position_embeddings: int = 512  # longest sequence the position table covers
    type_vocab_size: int = 2  # segment ids: 0 for sentence A, 1 for sentence B
    initializer_range: float = 0.02  # std of the normal initialization of weights
    layer_norm_eps: float = 1e-12  # added to the variance inside every LayerNorm
    pad_token_id: int = 0  # id of [PAD]; its embedding row starts at 0 and gets no gradient
    extra: dict[str, Any] = field(default_factory=dict)  # other config.json keys, kept as-is

    def __post_init__(self) -> None:
        for name in ("vocab_size", "hidden_size", "num_hidden_layers", "num_attention_heads",
                     "intermediate_size", "max_position_embeddings", "type_vocab_size"):
            value = getattr(self, name)
            if not _is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {_short(value)}")
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({_short(self.hidden_size)}) must be divisible by "
                f"num_attention_heads ({_short(self.num_attention_heads)}); allowed head "
                f"counts divide {_short(self.hidden_size)}")
        if not isinstance(self.hidden_act, str) or self.hidden_act not in HIDDEN_ACTS:
            raise ValueError(f"hidden_act must be one of {list(HIDDEN_ACTS)}, "
                             f"got {_short(self.hidden_act)}")
        for name in ("hidden_dropout_prob", "attention_probs_dropout_prob"):
            value = getattr(self, name)
            if not _is_number(value) or not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be a number in [0, 1), got {_short(value)}")
        for name in ("initializer_range", "layer_norm_eps"):
            value = getattr(self, name)
            if not _is_number(value) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a finite number > 0, got {_short(value)}")
        if self.pad_token_id is not None and not (
                _is_int(self.pad_token_id) and 0 <= self.pad_token_id < self.vocab_size):
            raise ValueError(f"pad_token_id must be an integer in [0, vocab_size="
                             f"{self.vocab_size}) or None, got {_short(self.pad_token_id)}")
        if not isinstance(self.extra, dict):
            raise TypeError(f"extra must be a dict of other config keys, got "
                            f"{type(self.extra).__name__} {_short(self.extra)}")
        embedding_type = self.extra.get("position_embedding_type", "absolute")
        if embedding_type != "absolute":
            raise ValueError(f"position_embedding_type must be 'absolute' (the only kind "
                             f"minibert implements), got {_short(embedding_type)}")

    @property
    def head_size(self) -> int:
        """D = H / N."""
        return self.hidden_size // self.num_attention_heads

    # -- presets ---------------------------------------------------------------------------
    @classmethod
    def preset(cls, name: str, **overrides) -> BertConfig:
        """A named size ("tiny", "mini", "small", "base", "large"), with optional overrides."""
        if name not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}, got {name!r}")
        return cls(**{**PRESETS[name], **overrides})

    # -- dict / JSON -----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """An HF-compatible dict: the known fields, the kept extra keys, model_type "bert"."""
        known = {f.name: getattr(self, f.name)
                 for f in dataclasses.fields(self) if f.name != "extra"}
        return {**self.extra, **known, "model_type": "bert"}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> BertConfig:
        if not isinstance(data, dict):
            raise TypeError(f"config must be a dict, got {type(data).__name__}")
        names = {f.name for f in dataclasses.fields(cls)} - {"extra"}
        known = {k: v for k, v in data.items() if k in names}
        extra = {k: v for k, v in data.items() if k not in names and k != "extra"}
        nested = data.get("extra", {})
        if not isinstance(nested, dict):
            raise TypeError(f"config key 'extra' must be an object of other config keys, "
                            f"got {type(nested).__name__} {_short(nested)}")
        extra.update(nested)
        model_type = extra.get("model_type", "bert")
        if model_type != "bert":
            raise ValueError(f"model_type must be 'bert', got {_short(model_type)}")
        return cls(**known, extra=extra)

    def to_json_file(self, path: str | os.PathLike) -> None:
        """Write config.json atomically."""
        atomic_write_json(path, self.to_dict())

    @classmethod
    def from_json_file(cls, path: str | os.PathLike) -> BertConfig:
        """Read an HF ``config.json``; every error names the file and what is wrong in it."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        path = Path(path)
        where = f"config file {str(path)!r}"
        with open_to_read(path, "config file") as handle:
            raw = handle.read()
        try:
            # utf-8-sig: a byte-order mark, as some Windows editors write, is not an error.
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as error:
            raise ValueError(f"{where} is not UTF-8 text: byte {error.start} is "
                             f"{raw[error.start:error.start + 1]!r}") from None
        data = _parse_json_object(text, where)
        try:
            return cls.from_dict(data)
        except TypeError as error:
            raise TypeError(f"{where}: {error}") from None
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None

    def num_parameters_estimate(self) -> int:
        """Parameters of a BertModel (with pooler) of this size, computed from the config."""
        h, i, layers = self.hidden_size, self.intermediate_size, self.num_hidden_layers
        rows = self.vocab_size + self.max_position_embeddings + self.type_vocab_size
        embeddings = rows * h + 2 * h
        block = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
        return embeddings + layers * block + (h * h + h)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "model_type")
        return f"BertConfig({fields})"


def _is_int(value: object) -> bool:
    # JSON true/false arrive as bool, which Python counts as int.
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def _short(value: object, limit: int = 60) -> str:
    """repr cut to ``limit`` characters: a corrupt config.json can hold huge values."""
    # int.__repr__ of a number with thousands of digits is itself slow (and may be refused).
    if _is_int(value) and value.bit_length() > 200:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _parse_json_object(text: str, where: str) -> dict[str, Any]:
    """The JSON object in ``text``; ValueError naming ``where`` for anything else."""
    try:
        data = strict_json_loads(text)
    except DuplicateKeyError as error:
        raise ValueError(f"{where} has the key {_short(error.key)} twice") from None
    except RecursionError:
        raise ValueError(f"{where} is not valid JSON: nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"{where} is not valid JSON: {_short(str(error), 120)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object of config keys, "
                         f"got {type(data).__name__} {_short(data)}")
    return data

