"""The machinery every model here shares: BERT, its task heads and its relatives.

- ``Initializer``: the seeded factory of a model's layers (BERT's initialization scheme),
  made by ``make_init(config, seed, dtype)``; ``EmbeddingWidthInitializer`` the same at
  the embedding width E;
- ``PretrainedModel``: ``from_pretrained`` / ``save_pretrained`` (the files themselves
  are read and written by ``minibert.io.checkpoint``);
- ``ShapeCache``, ``LazyLogits`` and ``preserved_caches``: what a forward keeps, logits
  computed only when read, and a forward that leaves a pending backward's caches alone;
- the output records with HF's field names (``BertModelOutput``, ``MaskedLMOutput``, ...).

Dimension legend: B batch, T sequence length, H hidden size, N heads, V vocabulary size,
C number of labels, M number of labelled (masked) positions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.checks import check_int
from minibert.io import checkpoint
from minibert.layers import Dropout, Embedding, LayerNorm, Linear, Module

__all__ = [
    "Initializer", "EmbeddingWidthInitializer", "make_init", "PretrainedModel", "ShapeCache",
    "LazyLogits",
    "preserved_caches", "BertModelOutput", "BertForPreTrainingOutput", "MaskedLMOutput",
    "NextSentencePredictorOutput", "SequenceClassifierOutput", "TokenClassifierOutput",
    "QuestionAnsweringModelOutput",
]


class Initializer:
    """Seeded factory of the layers of one model (BERT's scheme: normal(0, 0.02) weights)."""

    def __init__(self, config, rng: np.random.Generator, dropout_rng, dtype):
        self.config = config
        self.rng = rng
        self.dropout_rng = dropout_rng
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {self.dtype}")

    def linear(self, n_in: int, n_out: int) -> Linear:
        return Linear(n_in, n_out, self.rng, self.config.initializer_range, dtype=self.dtype)

    def embedding(self, rows: int, padding_idx: int | None = None,
                  ids_name: str = "ids") -> Embedding:
        return Embedding(rows, self.config.hidden_size, self.rng, self.config.initializer_range,
                         dtype=self.dtype, padding_idx=padding_idx, ids_name=ids_name)

    def word_embeddings(self) -> Embedding:
        """The word table, one row per vocabulary id. As HF (nn.Embedding padding_idx) the
        [PAD] row starts at 0 and gets no gradient; a bad id's error names input_ids."""
        return self.embedding(self.config.vocab_size, padding_idx=self.config.pad_token_id,
                              ids_name="input_ids")

    def layer_norm(self) -> LayerNorm:
        return LayerNorm(self.config.hidden_size, self.config.layer_norm_eps, dtype=self.dtype)

    def dropout(self, p: float) -> Dropout:
        return Dropout(p, self.dropout_rng)


class EmbeddingWidthInitializer(Initializer):
    """A model's initializer with the embedding width E (``config.embedding_size``) in
    place of H, for the embedding tables and their LayerNorm (ALBERT, ELECTRA).

    It draws from the same generators, so the whole model still comes from one seed.
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__(init.config, init.rng, init.dropout_rng, init.dtype)

    def embedding(self, rows: int, padding_idx: int | None = None,
                  ids_name: str = "ids") -> Embedding:
        return Embedding(rows, self.config.embedding_size, self.rng,
                         self.config.initializer_range, dtype=self.dtype, padding_idx=padding_idx,
                         ids_name=ids_name)

    def layer_norm(self) -> LayerNorm:
        return LayerNorm(self.config.embedding_size, self.config.layer_norm_eps,
                         dtype=self.dtype)


def make_init(config, seed: int, dtype) -> Initializer:
    """The initializer a model hands to each of its modules, seeded by ``seed``."""
    seed = check_int("seed", seed, minimum=0)
    # Two independent streams: one for the initial weights, one for dropout masks.
    init_seq, dropout_seq = np.random.SeedSequence(int(seed)).spawn(2)
    return Initializer(config, np.random.default_rng(init_seq), np.random.default_rng(dropout_seq),
                       dtype)


class PretrainedModel:
    """``from_pretrained`` / ``save_pretrained`` for every model class (see io/checkpoint.py).

    A subclass names its ``config_class``, the attribute of its encoder
    (``base_model_prefix``: "bert", "albert", "distilbert") and the key prefixes of its heads.
    """

    config_class: type
    base_model_prefix = "bert"
    head_prefixes = checkpoint.HEAD_PREFIXES

    def adopt_config(self, config, seed: int, dtype, init: Initializer | None = None
                     ) -> Initializer:
        """Check that ``config`` is a ``config_class``, keep it as ``self.config``; returns
        the initializer of the model's layers (``init`` when an enclosing model passes its own).
        """
        if not isinstance(config, self.config_class):
            name = self.config_class.__name__
            article = "an" if name[0] in "AEIOU" else "a"
            raise TypeError(f"config must be {article} {name}, got {type(config).__name__}")
        init = init or make_init(config, seed, dtype)
        self.config = config
        self.dropout_rng = init.dropout_rng
        return init

    @classmethod
    def from_pretrained(cls, directory, dtype=np.float32, seed: int = 0, **kwargs):
        """Load a checkpoint folder (config.json + model.safetensors), ours or HF's."""
        return checkpoint.load_pretrained(cls, directory, dtype=dtype, seed=seed, **kwargs)

    def save_pretrained(self, directory, tokenizer=None):
        """Write config.json + model.safetensors (+ vocab.txt given a tokenizer)."""
        return checkpoint.save_pretrained(self, directory, tokenizer)


class ShapeCache(NamedTuple):
    shape: tuple  # the forward's input or output shape, for a backward that builds zeros


class LazyLogits:
    """A value computed on first access, then kept (full-vocabulary logits are costly)."""

    def __init__(self, compute: Callable[[], np.ndarray]) -> None:
        self.compute = compute
        self.value = None

    def get(self) -> np.ndarray:
        if self.value is None:
            self.value = self.compute()
        return self.value


class preserved_caches:
    """Context manager: snapshot and restore the caches of module trees."""

    def __init__(self, *modules: Module) -> None:
        self.modules = [m for module in modules for _, m in module.named_modules()]

    def __enter__(self):
        self.saved = [m.cache for m in self.modules]

    def __exit__(self, *exc):
        for module, cache in zip(self.modules, self.saved):
            object.__setattr__(module, "cache", cache)
        return False


# ----------------------------------------------------------------------------------------
# Outputs (HF field names)
# ----------------------------------------------------------------------------------------


@dataclass
class BertModelOutput:
    """Outputs of BertModel (HF field names)."""

    last_hidden_state: np.ndarray  # (B, T, H)
    pooler_output: np.ndarray | None = None  # (B, H)
    hidden_states: tuple | None = None  # L+1 arrays (B, T, H): embeddings, then each layer
    attentions: tuple | None = None  # L arrays (B, N, T, T)


@dataclass
class BertForPreTrainingOutput:
    """Outputs of BertForPreTraining (HF field names plus the two loss parts)."""

    loss: float | None
    seq_relationship_logits: np.ndarray | None  # (B, 2)
    hidden_states: tuple | None = None
    attentions: tuple | None = None
    masked_lm_loss: float | None = None
    next_sentence_loss: float | None = None
    masked_lm_logits: np.ndarray | None = None  # (M, V) at the labelled positions only
    masked_lm_positions: tuple | None = None  # (batch index, position) arrays of those M
    _prediction_logits: LazyLogits | None = None

    @property
    def prediction_logits(self) -> np.ndarray:
        """(B, T, V) MLM logits at every position (computed on first access)."""
        return self._prediction_logits.get()


@dataclass
class MaskedLMOutput:
    loss: float | None
    hidden_states: tuple | None = None
    attentions: tuple | None = None
    masked_lm_logits: np.ndarray | None = None
    masked_lm_positions: tuple | None = None
    _logits: LazyLogits | None = None

    @property
    def logits(self) -> np.ndarray:
        """(B, T, V) MLM logits at every position (computed on first access)."""
        return self._logits.get()

    @property
    def masked_lm_loss(self) -> float | None:
        """The loss under the name every pretraining output gives its MLM part."""
        return self.loss

    next_sentence_loss = None  # no sentence-pair task: what a pretraining loop may ask


@dataclass
class SequenceClassifierOutput:
    """Outputs of a sequence classifier (HF field names)."""

    loss: float | None
    logits: np.ndarray  # (B, C)
    hidden_states: tuple | None = None  # L+1 arrays (B, T, H)
    attentions: tuple | None = None  # L arrays (B, N, T, T)


class NextSentencePredictorOutput(SequenceClassifierOutput):
    """Outputs of BertForNextSentencePrediction: a sequence classifier's, logits (B, 2)."""


class TokenClassifierOutput(SequenceClassifierOutput):
    """Outputs of BertForTokenClassification: a classifier's fields, logits (B, T, C)."""


@dataclass
class QuestionAnsweringModelOutput:
    """Outputs of BertForQuestionAnswering (HF field names)."""

    loss: float | None
    start_logits: np.ndarray  # (B, T)
    end_logits: np.ndarray  # (B, T)
    hidden_states: tuple | None = None
    attentions: tuple | None = None
