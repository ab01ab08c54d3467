"""BertConfig: the hyperparameters of a BERT, with HuggingFace's field names and defaults.

A ``config.json`` written by ``transformers`` loads here (unknown keys are kept in
``extra`` and written back), and ours loads there. The classification labels that HF keeps
on its config (``num_labels``, ``id2label``, ``label2id``) are constructor arguments and
properties here too.
"""

from __future__ import annotations

import dataclasses
import math
import os
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from minibert.checks import check_int, is_int, is_real
from minibert.io.fileio import DuplicateKeyError, atomic_write_json, strict_json_loads
from minibert.io.safetensors import open_to_read

__all__ = ["BertConfig", "PRESETS", "HIDDEN_ACTS", "read_json_object"]

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
class _BertFields:
    """The fields of ``BertConfig``, checked on construction (see ``BertConfig`` below)."""

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
            if not is_int(value) or value <= 0:
                raise ValueError(f"{name} must be a positive integer, got {_short(value)}")
            setattr(self, name, int(value))  # a NumPy integer would not go into config.json
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
            if not is_real(value) or not 0.0 <= value < 1.0:
                raise ValueError(f"{name} must be a number in [0, 1), got {_short(value)}")
            setattr(self, name, _exact_float(name, value))
        for name in ("initializer_range", "layer_norm_eps"):
            value = getattr(self, name)
            if not is_real(value) or not 0 < value < math.inf:
                raise ValueError(f"{name} must be a finite number > 0, got {_short(value)}")
            setattr(self, name, _exact_float(name, value))
        if self.pad_token_id is not None:
            if not (is_int(self.pad_token_id) and 0 <= self.pad_token_id < self.vocab_size):
                raise ValueError(f"pad_token_id must be an integer in [0, vocab_size="
                                 f"{self.vocab_size}) or None, got {_short(self.pad_token_id)}")
            self.pad_token_id = int(self.pad_token_id)
        if not isinstance(self.extra, dict):
            raise TypeError(f"extra must be a dict of other config keys, got "
                            f"{type(self.extra).__name__} {_short(self.extra)}")
        embedding_type = self.extra.get("position_embedding_type", "absolute")
        if embedding_type != "absolute":
            raise ValueError(f"position_embedding_type must be 'absolute' (the only kind "
                             f"minibert implements), got {_short(embedding_type)}")


class _ClassifierLabels:
    """The labels of a classification head on a config, as HF keeps them (see BertConfig).

    Shared by BertConfig, AlbertConfig and DistilBertConfig: put before the dataclass of
    fields among the bases, so that this ``__init__`` takes the three label arguments and
    hands the fields to the generated one. The labels live in ``extra``.
    """

    def __init__(self, *args, num_labels: int | None = None,
                 id2label: dict | Sequence[str] | None = None,
                 label2id: dict[str, int] | None = None, **fields) -> None:
        super().__init__(*args, **fields)
        self.extra = _with_labels(self.extra, num_labels, id2label, label2id)

    @property
    def num_labels(self) -> int:
        """C, the number of classes of a classification head (2 unless labels were given)."""
        return len(self._label_names())

    @num_labels.setter
    def num_labels(self, value: int) -> None:
        self.extra = _with_labels(self.extra, num_labels=value)

    @property
    def id2label(self) -> dict[int, str]:
        """Label id -> name, e.g. ``{0: "LABEL_0", 1: "LABEL_1"}`` (a new dict)."""
        return dict(enumerate(self._label_names()))

    @id2label.setter
    def id2label(self, value: dict | Sequence[str]) -> None:
        self.extra = _with_labels(self.extra, id2label=value)

    @property
    def label2id(self) -> dict[str, int]:
        """Label name -> id, the inverse of ``id2label`` (a new dict)."""
        return {name: index for index, name in enumerate(self._label_names())}

    @label2id.setter
    def label2id(self, value: dict[str, int]) -> None:
        self.extra = _with_labels(self.extra, label2id=value)

    def _label_names(self) -> list[str]:
        stored = self.extra.get("id2label")
        return _names_of_id2label(stored) if stored is not None else list(DEFAULT_LABELS)


# The config class of each model_type, for the hint of a model_type mismatch.
_CONFIG_CLASS_NAMES = {"bert": "BertConfig", "albert": "AlbertConfig",
                       "distilbert": "DistilBertConfig"}


class _HFConfigFile:
    """config.json as HF reads and writes it, for BertConfig, AlbertConfig and DistilBertConfig.

    A config is a dataclass with an ``extra`` dict and a class attribute ``model_type``.
    ``to_dict`` gives the fields, the kept extra keys (labels among them) and model_type;
    ``from_dict`` sends keys that are not fields to ``extra`` and refuses another model_type.
    """

    model_type = ""

    def to_dict(self) -> dict[str, Any]:
        """An HF-compatible dict: the known fields, the kept extra keys, model_type.

        Labels appear as HF's config.json has them: ``id2label`` (str keys) and
        ``label2id`` when labels were given, neither otherwise.
        """
        known = {f.name: getattr(self, f.name)
                 for f in dataclasses.fields(self) if f.name != "extra"}
        return {**self.extra, **known, "model_type": self.model_type}

    @classmethod
    def from_dict(cls, data: dict[str, Any]):
        """The config of an HF-style dict; keys that are not fields go to ``extra``."""
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
        model_type = extra.pop("model_type", cls.model_type)
        if model_type != cls.model_type:
            other = _CONFIG_CLASS_NAMES.get(model_type) if isinstance(model_type, str) else None
            hint = f"; a {model_type} config.json loads with {other}" if other else ""
            raise ValueError(f"model_type must be {cls.model_type!r}, got "
                             f"{_short(model_type)}{hint}")
        return cls(**known, extra=extra)

    def to_json_file(self, path: str | os.PathLike) -> None:
        """Write config.json atomically."""
        atomic_write_json(path, self.to_dict())

    @classmethod
    def from_json_file(cls, path: str | os.PathLike):
        """Read an HF ``config.json``; every error names the file and what is wrong in it."""
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"path must be a str or os.PathLike, got {type(path).__name__}")
        where = f"config file {str(path)!r}"
        data = read_json_object(path, "config file")
        try:
            return cls.from_dict(data)
        except TypeError as error:
            raise TypeError(f"{where}: {error}") from None
        except ValueError as error:
            raise ValueError(f"{where}: {error}") from None


class BertConfig(_HFConfigFile, _ClassifierLabels, _BertFields):
    """Hyperparameters of a BERT (HF ``BertConfig`` names and defaults = BERT-Base).

    The fields are those of the dataclass above, one comment each. On top of them, as in HF,
    the labels of a classification head (see ``heads.py``):

    - ``BertConfig(num_labels=3)`` names them ``LABEL_0``, ``LABEL_1``, ``LABEL_2``;
      ``BertConfig(id2label={0: "neg", 1: "pos"})`` (keys int, or str as in config.json; a
      list of names works too) or ``label2id={"neg": 0, "pos": 1}`` names them. Given
      together, they must agree.
    - ``config.num_labels``, ``config.id2label`` (id -> name) and ``config.label2id``
      (name -> id) read them; without labels given they are 2, ``LABEL_0``, ``LABEL_1`` (HF's
      default). Assigning one of the three replaces the labels; a ``num_labels`` of the
      current count keeps the names, another count renames them ``LABEL_i`` (HF's rule).

    Labels that were given are kept in ``extra`` as config.json holds them, ``"id2label"``
    with str keys and ``"label2id"``, so the file carries them as HF writes them and reads
    them back; ``num_labels`` is never written (it is the length of ``id2label``). The
    arguments win over labels already in ``extra``, so that
    ``dataclasses.replace(config, num_labels=4)`` relabels a copy. A dataclass field cannot
    be both a constructor argument and such a computed property, hence the ``__init__`` of
    ``_ClassifierLabels`` on top of the generated one. config.json is read and written by
    ``_HFConfigFile``.
    """

    model_type = "bert"

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

    def num_parameters_estimate(self) -> int:
        """Parameters of a BertModel (with pooler) of this size, computed from the config."""
        h, i, layers = self.hidden_size, self.intermediate_size, self.num_hidden_layers
        rows = self.vocab_size + self.max_position_embeddings + self.type_vocab_size
        embeddings = rows * h + 2 * h
        block = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
        return embeddings + layers * block + (h * h + h)

    # The size fields a "config.json does not belong to these weights" error quotes.
    SIZE_FIELDS = ("vocab_size", "hidden_size", "num_hidden_layers", "intermediate_size",
                   "max_position_embeddings", "type_vocab_size")

    def required_checkpoint_numbers(self) -> int:
        """The fewest numbers a checkpoint of this config holds: the encoder without pooler.

        ``load_pretrained`` refuses a config.json asking for more than the weights hold
        before it allocates the model. The pooler is left out: some checkpoints lack it.
        """
        return self.num_parameters_estimate() - (self.hidden_size ** 2 + self.hidden_size)

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "model_type")
        return f"BertConfig({fields})"


# -- labels ----------------------------------------------------------------------------------

def _exact_float(name: str, value) -> float:
    """``value`` as a float; an integer that float64 cannot hold exactly is refused."""
    try:
        as_float = float(value)
    except OverflowError:
        as_float = math.inf
    if as_float != value:
        raise ValueError(f"{name} must be a number that float64 holds exactly, got "
                         f"{_short(value)}")
    return as_float


DEFAULT_LABELS = ("LABEL_0", "LABEL_1")  # HF's labels when none are given
LABEL_KEYS = ("num_labels", "id2label", "label2id")


def _with_labels(extra: dict, num_labels=None, id2label=None, label2id=None) -> dict:
    """A copy of ``extra`` holding the labels in config.json's form.

    The labels come from the arguments, else from ``extra``'s own ``id2label``,
    ``label2id`` or ``num_labels`` keys (as read from a config.json), else there are none
    (``num_labels`` 2 by default). A ``num_labels`` alone that matches the count of the
    labels already in ``extra`` keeps their names, as HF's ``num_labels`` setter does.
    """
    stored = {key: extra[key] for key in LABEL_KEYS if key in extra}
    names = _label_names(**stored) if stored else None
    given = {key: value for key, value in zip(LABEL_KEYS, (num_labels, id2label, label2id))
             if value is not None}
    if given:
        new_names = _label_names(**given)
        same_count = list(given) == ["num_labels"] and names is not None and len(names) == len(
            new_names)
        names = names if same_count else new_names
    kept = {key: value for key, value in extra.items() if key not in LABEL_KEYS}
    if names is None:
        return kept
    return {**kept, "id2label": {str(index): name for index, name in enumerate(names)},
            "label2id": {name: index for index, name in enumerate(names)}}


def _label_names(num_labels=None, id2label=None, label2id=None) -> list[str]:
    """Label names in id order from any of HF's three ways to give them, checked to agree."""
    names = None if id2label is None else _names_of_id2label(id2label)
    if label2id is not None:
        inverse = _names_of_label2id(label2id)
        if names is not None and names != inverse:
            raise ValueError(f"label2id must be the inverse of id2label {_short(names)}, "
                             f"got {_short(label2id)}")
        names = inverse
    if num_labels is not None:
        count = check_int("num_labels", num_labels, minimum=1)
        if names is not None and len(names) != count:
            raise ValueError(f"num_labels={count} disagrees with id2label, which names "
                             f"{len(names)} labels")
        names = names if names is not None else [f"LABEL_{index}" for index in range(count)]
    return names


def _names_of_id2label(id2label) -> list[str]:
    """Names in id order from ``{id: name}`` (int or str ids 0..C-1) or a list of names."""
    if isinstance(id2label, (list, tuple)):
        names = list(id2label)
    elif isinstance(id2label, dict):
        ids = {key: _label_id(key) for key in id2label}
        if None in ids.values() or sorted(ids.values()) != list(range(len(ids))):
            raise ValueError(f"id2label keys must be the label ids 0..C-1 (int, or str as in "
                             f"config.json), got {_short(list(id2label))}")
        by_id = {ids[key]: name for key, name in id2label.items()}
        names = [by_id[index] for index in range(len(by_id))]
    else:
        raise TypeError(f"id2label must be a dict id -> name or a list of names, got "
                        f"{type(id2label).__name__} {_short(id2label)}")
    _check_names("id2label", names)
    return names


def _label_id(key) -> int | None:
    """An id2label key as an int: 3 or "3" (config.json's spelling); None for anything else."""
    if is_int(key):
        return int(key)
    if isinstance(key, str) and re.fullmatch(r"0|[1-9][0-9]*", key):
        return int(key)
    return None


def _names_of_label2id(label2id) -> list[str]:
    """Names in id order from ``{name: id}`` with ids 0..C-1."""
    if not isinstance(label2id, dict):
        raise TypeError(f"label2id must be a dict name -> id, got {type(label2id).__name__} "
                        f"{_short(label2id)}")
    ids = list(label2id.values())
    if not all(is_int(index) for index in ids) or sorted(ids) != list(range(len(ids))):
        raise ValueError(f"label2id ids must be the integers 0..C-1, each once, got "
                         f"{_short(ids)}")
    names = sorted(label2id, key=label2id.__getitem__)
    _check_names("label2id", names)
    return names


def _check_names(argument: str, names: list) -> None:
    if not names:
        raise ValueError(f"{argument} must name at least one label, got none")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{argument}: label names must be str, got "
                            f"{type(name).__name__} {_short(name)}")
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise ValueError(f"{argument}: label names must be distinct, got {repeated!r} twice")


# -- reading JSON files ----------------------------------------------------------------------

def read_json_object(path: str | os.PathLike, what: str) -> dict[str, Any]:
    """The JSON object in the file ``path`` (config.json, tokenizer_config.json).

    UTF-8 (a byte-order mark, as some Windows editors write, is allowed), strict JSON (no key
    twice, no NaN). Every error names ``what`` and the path: FileNotFoundError or
    PermissionError for a file that cannot be read, ValueError for anything else.
    """
    where = f"{what} {str(path)!r}"
    with open_to_read(Path(path), what) as handle:
        raw = handle.read()
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise ValueError(f"{where} is not UTF-8 text: byte {error.start} is "
                         f"{raw[error.start:error.start + 1]!r}") from None
    try:
        data = strict_json_loads(text)
    except DuplicateKeyError as error:
        raise ValueError(f"{where} has the key {_short(error.key)} twice") from None
    except RecursionError:
        raise ValueError(f"{where} is not valid JSON: nested too deeply") from None
    except ValueError as error:
        raise ValueError(f"{where} is not valid JSON: {_short(str(error), 120)}") from None
    if not isinstance(data, dict):
        raise ValueError(f"{where} must hold a JSON object, "
                         f"got {type(data).__name__} {_short(data)}")
    return data


def _short(value: object, limit: int = 60) -> str:
    """repr cut to ``limit`` characters: a corrupt config.json can hold huge values."""
    # int.__repr__ of a number with thousands of digits is itself slow (and may be refused).
    if is_int(value) and value.bit_length() > 200:
        return f"an integer of {value.bit_length()} bits"
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
