"""config.json as HuggingFace writes it, and the labels HF keeps on a config.

Two bases for the config dataclasses of BERT and its relatives (``BertConfig``,
``AlbertConfig``, ``DistilBertConfig``):

- ``HFConfigFile``: ``to_dict`` / ``from_dict`` / ``to_json_file`` / ``from_json_file``,
  keys that are not fields kept in ``extra`` and written back, ``model_type`` checked;
- ``ClassifierLabels``: ``num_labels``, ``id2label`` and ``label2id`` as constructor
  arguments and properties, kept in ``extra`` as config.json holds them.

A config class is ``class XConfig(HFConfigFile, ClassifierLabels, XFields)`` with ``XFields``
the plain dataclass of its fields; the bases come first so that ``ClassifierLabels``'s
``__init__`` takes the label arguments and hands the fields to the dataclass's.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Sequence
from typing import Any

from minibert.checks import check_int, exact_float, is_int, is_real, short_repr
from minibert.io.fileio import atomic_write_json, read_json_object

__all__ = ["HFConfigFile", "ClassifierLabels", "DEFAULT_LABELS", "LABEL_KEYS", "with_labels",
           "label_names", "positive_int_fields", "dropout_fields", "positive_real_fields",
           "check_pad_token_id", "check_extra"]


class ClassifierLabels:
    """The labels of a classification head on a config, as HF keeps them (see BertConfig).

    Shared by BertConfig, AlbertConfig and DistilBertConfig: put before the dataclass of
    fields among the bases, so that this ``__init__`` takes the three label arguments and
    hands the fields to the generated one. The labels live in ``extra``.
    """

    def __init__(self, *args, num_labels: int | None = None,
                 id2label: dict | Sequence[str] | None = None,
                 label2id: dict[str, int] | None = None, **fields) -> None:
        super().__init__(*args, **fields)
        self.extra = with_labels(self.extra, num_labels, id2label, label2id)

    @property
    def num_labels(self) -> int:
        """C, the number of classes of a classification head (2 unless labels were given)."""
        return len(self._label_names())

    @num_labels.setter
    def num_labels(self, value: int) -> None:
        self.extra = with_labels(self.extra, num_labels=value)

    @property
    def id2label(self) -> dict[int, str]:
        """Label id -> name, e.g. ``{0: "LABEL_0", 1: "LABEL_1"}`` (a new dict)."""
        return dict(enumerate(self._label_names()))

    @id2label.setter
    def id2label(self, value: dict | Sequence[str]) -> None:
        self.extra = with_labels(self.extra, id2label=value)

    @property
    def label2id(self) -> dict[str, int]:
        """Label name -> id, the inverse of ``id2label`` (a new dict)."""
        return {name: index for index, name in enumerate(self._label_names())}

    @label2id.setter
    def label2id(self, value: dict[str, int]) -> None:
        self.extra = with_labels(self.extra, label2id=value)

    def _label_names(self) -> list[str]:
        stored = self.extra.get("id2label")
        return _names_of_id2label(stored) if stored is not None else list(DEFAULT_LABELS)


def _config_class_named(model_type: str):
    """The config class of ``model_type`` among those defined so far (for an error's hint)."""
    pending = list(HFConfigFile.__subclasses__())
    while pending:
        cls = pending.pop()
        if cls.__dict__.get("model_type") == model_type:
            return cls
        pending += cls.__subclasses__()
    return None


class HFConfigFile:
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

    def __repr__(self) -> str:
        fields = ", ".join(f"{k}={v!r}" for k, v in self.to_dict().items() if k != "model_type")
        return f"{type(self).__name__}({fields})"

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
                            f"got {type(nested).__name__} {short_repr(nested)}")
        extra.update(nested)
        model_type = extra.pop("model_type", cls.model_type)
        if model_type != cls.model_type:
            other = _config_class_named(model_type) if isinstance(model_type, str) else None
            hint = f"; a {model_type} config.json loads with {other.__name__}" if other else ""
            raise ValueError(f"model_type must be {cls.model_type!r}, got "
                             f"{short_repr(model_type)}{hint}")
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


# -- labels ----------------------------------------------------------------------------------

DEFAULT_LABELS = ("LABEL_0", "LABEL_1")  # HF's labels when none are given
LABEL_KEYS = ("num_labels", "id2label", "label2id")


def with_labels(extra: dict, num_labels=None, id2label=None, label2id=None) -> dict:
    """A copy of ``extra`` holding the labels in config.json's form.

    The labels come from the arguments, else from ``extra``'s own ``id2label``,
    ``label2id`` or ``num_labels`` keys (as read from a config.json), else there are none
    (``num_labels`` 2 by default). A ``num_labels`` alone that matches the count of the
    labels already in ``extra`` keeps their names, as HF's ``num_labels`` setter does.
    """
    stored = {key: extra[key] for key in LABEL_KEYS if key in extra}
    names = label_names(**stored) if stored else None
    given = {key: value for key, value in zip(LABEL_KEYS, (num_labels, id2label, label2id))
             if value is not None}
    if given:
        new_names = label_names(**given)
        same_count = list(given) == ["num_labels"] and names is not None and len(names) == len(
            new_names)
        names = names if same_count else new_names
    kept = {key: value for key, value in extra.items() if key not in LABEL_KEYS}
    if names is None:
        return kept
    return {**kept, "id2label": {str(index): name for index, name in enumerate(names)},
            "label2id": {name: index for index, name in enumerate(names)}}


def label_names(num_labels=None, id2label=None, label2id=None) -> list[str]:
    """Label names in id order from any of HF's three ways to give them, checked to agree."""
    names = None if id2label is None else _names_of_id2label(id2label)
    if label2id is not None:
        inverse = _names_of_label2id(label2id)
        if names is not None and names != inverse:
            raise ValueError(f"label2id must be the inverse of id2label {short_repr(names)}, "
                             f"got {short_repr(label2id)}")
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
                             f"config.json), got {short_repr(list(id2label))}")
        by_id = {ids[key]: name for key, name in id2label.items()}
        names = [by_id[index] for index in range(len(by_id))]
    else:
        raise TypeError(f"id2label must be a dict id -> name or a list of names, got "
                        f"{type(id2label).__name__} {short_repr(id2label)}")
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
                        f"{short_repr(label2id)}")
    ids = list(label2id.values())
    if not all(is_int(index) for index in ids) or sorted(ids) != list(range(len(ids))):
        raise ValueError(f"label2id ids must be the integers 0..C-1, each once, got "
                         f"{short_repr(ids)}")
    names = sorted(label2id, key=label2id.__getitem__)
    _check_names("label2id", names)
    return names


def _check_names(argument: str, names: list) -> None:
    if not names:
        raise ValueError(f"{argument} must name at least one label, got none")
    for name in names:
        if not isinstance(name, str):
            raise TypeError(f"{argument}: label names must be str, got "
                            f"{type(name).__name__} {short_repr(name)}")
    if len(set(names)) != len(names):
        repeated = next(name for name in names if names.count(name) > 1)
        raise ValueError(f"{argument}: label names must be distinct, got {repeated!r} twice")


# -- field checks shared by the config dataclasses -------------------------------------------

def positive_int_fields(config, names) -> None:
    """Each field in ``names`` a positive int (a NumPy integer would not go into config.json)."""
    for name in names:
        value = getattr(config, name)
        if not is_int(value) or value <= 0:
            raise ValueError(f"{name} must be a positive integer, got {short_repr(value)}")
        setattr(config, name, int(value))


def dropout_fields(config, names) -> None:
    """Each field in ``names`` a probability in [0, 1), as a float."""
    for name in names:
        value = getattr(config, name)
        if not is_real(value) or not 0.0 <= value < 1.0:
            raise ValueError(f"{name} must be a number in [0, 1), got {short_repr(value)}")
        setattr(config, name, exact_float(name, value))


def positive_real_fields(config, names) -> None:
    """Each field in ``names`` a finite number > 0, as a float."""
    for name in names:
        value = getattr(config, name)
        if not is_real(value) or not 0 < value < math.inf:
            raise ValueError(f"{name} must be a finite number > 0, got {short_repr(value)}")
        setattr(config, name, exact_float(name, value))


def check_pad_token_id(config) -> None:
    """``pad_token_id`` None or a row of the word table."""
    if config.pad_token_id is not None:
        if not (is_int(config.pad_token_id) and 0 <= config.pad_token_id < config.vocab_size):
            raise ValueError(f"pad_token_id must be an integer in [0, vocab_size="
                             f"{config.vocab_size}) or None, got {short_repr(config.pad_token_id)}")
        config.pad_token_id = int(config.pad_token_id)


# config.json keys of HF that change what a model computes, with the one value minibert
# implements (an encoder attending both ways, no cross-attention, every head kept, HF's
# single-label loss): any other value is refused rather than silently computed otherwise.
FIXED_KEYS = {
    "is_decoder": (False, "minibert's encoder attends in both directions; a decoder's "
                          "causal mask is not implemented"),
    "add_cross_attention": (False, "cross-attention to an encoder's output is not "
                                   "implemented"),
    "pruned_heads": ({}, "pruned attention heads are not implemented"),
    "problem_type": (None, "the classifiers compute HF's single-label cross-entropy only"),
}


def check_extra(config) -> None:
    """``extra``, the config.json keys that are not fields: a dict, and none of them asking
    for a computation minibert does not implement (FIXED_KEYS; ``tie_word_embeddings`` a bool).
    """
    if not isinstance(config.extra, dict):
        raise TypeError(f"extra must be a dict of other config keys, got "
                        f"{type(config.extra).__name__} {short_repr(config.extra)}")
    for key, (value, why) in FIXED_KEYS.items():
        given = config.extra.get(key, value)
        if key == "problem_type" and given == "single_label_classification":
            continue
        if given != value or type(given) is not type(value):
            raise ValueError(f"{key} must be {json.dumps(value)} ({why}), "
                             f"got {short_repr(given)}")
    tie = config.extra.get("tie_word_embeddings", True)
    if not isinstance(tie, bool):
        raise ValueError(f"tie_word_embeddings must be true or false, got {short_repr(tie)}")
