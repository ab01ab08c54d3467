"""BertConfig: the hyperparameters of a BERT, with HuggingFace's field names and defaults.

The fields are a plain dataclass (``BertFields``, one comment each, checked on
construction). A ``config.json`` written by ``transformers`` loads here (unknown keys are
kept in ``extra`` and written back), and ours loads there; the classification labels that
HF keeps on its config (``num_labels``, ``id2label``, ``label2id``) are constructor
arguments and properties here too. Both come from ``minibert.hf_config``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from minibert import hf_config
from minibert.checks import short_repr
from minibert.hf_config import ClassifierLabels, HFConfigFile

__all__ = ["BertConfig", "BertFields", "PRESETS", "preset_sizes", "HIDDEN_ACTS"]

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


def preset_sizes(name: str) -> dict[str, int]:
    """The sizes (L, H, N, I) of the preset ``name``; ValueError naming the presets otherwise."""
    if name not in PRESETS:
        raise ValueError(f"preset must be one of {list(PRESETS)}, got {name!r}")
    return dict(PRESETS[name])


@dataclass
class BertFields:
    """The fields of ``BertConfig``, checked on construction (see ``BertConfig`` below)."""

    unties_decoder = False  # a config class whose models may untie the MLM decoder says so

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

    @property
    def head_size(self) -> int:
        """D = H / N."""
        return self.hidden_size // self.num_attention_heads

    @property
    def tie_word_embeddings(self) -> bool:
        """Whether the MLM decoder reads the word-embedding table (HF's default) or holds its
        own (V, H) table, ``cls.predictions.decoder.weight`` (config.json
        ``"tie_word_embeddings": false``)."""
        return self.extra.get("tie_word_embeddings", True)

    def __post_init__(self) -> None:
        hf_config.positive_int_fields(self, ("vocab_size", "hidden_size", "num_hidden_layers",
                                             "num_attention_heads", "intermediate_size",
                                             "max_position_embeddings", "type_vocab_size"))
        if self.hidden_size % self.num_attention_heads:
            raise ValueError(
                f"hidden_size ({short_repr(self.hidden_size)}) must be divisible by "
                f"num_attention_heads ({short_repr(self.num_attention_heads)}); allowed head "
                f"counts divide {short_repr(self.hidden_size)}")
        if not isinstance(self.hidden_act, str) or self.hidden_act not in HIDDEN_ACTS:
            raise ValueError(f"hidden_act must be one of {list(HIDDEN_ACTS)}, "
                             f"got {short_repr(self.hidden_act)}")
        hf_config.dropout_fields(self, ("hidden_dropout_prob", "attention_probs_dropout_prob"))
        hf_config.positive_real_fields(self, ("initializer_range", "layer_norm_eps"))
        hf_config.check_pad_token_id(self)
        hf_config.check_extra(self)
        if not self.tie_word_embeddings and not self.unties_decoder:
            raise ValueError(f"tie_word_embeddings must be true for {self.model_type} (minibert "
                             f"ties its masked-LM decoder to the word embeddings), got false")
        embedding_type = self.extra.get("position_embedding_type", "absolute")
        if embedding_type != "absolute":
            raise ValueError(f"position_embedding_type must be 'absolute' (the only kind "
                             f"minibert implements), got {short_repr(embedding_type)}")


class BertConfig(HFConfigFile, ClassifierLabels, BertFields):
    """Hyperparameters of a BERT (HF ``BertConfig`` names and defaults = BERT-Base).

    The fields are those of the dataclass above, one comment each. On top of them, as in HF,
    the labels of a classification head (see ``minibert.heads.tasks``):

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
    ``ClassifierLabels`` on top of the generated one. config.json is read and written by
    ``HFConfigFile``.
    """

    model_type = "bert"
    unties_decoder = True  # its MLM decoder may keep its own table ("tie_word_embeddings": false)

    # -- presets ---------------------------------------------------------------------------
    @classmethod
    def preset(cls, name: str, **overrides) -> BertConfig:
        """A named size ("tiny", "mini", "small", "base", "large"), with optional overrides."""
        return cls(**{**preset_sizes(name), **overrides})

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

