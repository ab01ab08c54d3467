"""DistilBERT (Sanh et al., 2019) built from the same layers as BERT.

DistilBERT is BERT with half the layers, no token-type embeddings and no pooler, trained
by distillation from a BERT teacher (``minibert.family.distillation``). Its blocks are BERT's
post-LN blocks under other names; the module tree and attribute names mirror HuggingFace
``modeling_distilbert.py``, so parameter names (``distilbert.transformer.layer.0.attention.
q_lin.weight``, ``vocab_projector.bias``, ...) and real checkpoints match without renaming:

====================================================  ====================================
BERT (``model.py``), under ``bert.``                  DistilBERT (here), under ``distilbert.``
====================================================  ====================================
``embeddings.{word,position}_embeddings``             ``embeddings.{word,position}_embeddings``
``embeddings.token_type_embeddings``                  none: every token is "sentence A"
``encoder.layer.i.attention.self.{query,key,value}``  ``transformer.layer.i.attention.{q,k,v}_lin``
``encoder.layer.i.attention.output.dense``            ``transformer.layer.i.attention.out_lin``
``encoder.layer.i.attention.output.LayerNorm``        ``transformer.layer.i.sa_layer_norm``
``encoder.layer.i.intermediate.dense``                ``transformer.layer.i.ffn.lin1``
``encoder.layer.i.output.dense``                      ``transformer.layer.i.ffn.lin2``
``encoder.layer.i.output.LayerNorm``                  ``transformer.layer.i.output_layer_norm``
``cls.predictions.transform.dense`` / ``.LayerNorm``  ``vocab_transform`` / ``vocab_layer_norm``
``cls.predictions.bias`` (decoder tied)               ``vocab_projector.bias`` (weight tied)
                                                      (the head has no ``distilbert.`` prefix)
====================================================  ====================================

The block is BERT's, computed by the same page (``minibert.model.PageLayer``) over
DistilBERT's modules. One difference beyond names: DistilBERT has no dropout between the
attention's output projection and its residual LayerNorm (BERT has one there). Every
LayerNorm uses eps 1e-12.

Dimension legend: B batch, T sequence length, H hidden size (``dim``), N heads, D head size,
I feed-forward size (``hidden_dim``), V vocabulary size, M number of selected positions.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from minibert import hf_config
from minibert.base import (
    Initializer,
    LazyLogits,
    MaskedLMOutput,
    PretrainedModel,
    SequenceClassifierOutput,
    ShapeCache,
    preserved_caches,
)
from minibert.checks import (
    short_repr,
)
from minibert.config import HIDDEN_ACTS
from minibert.heads.pretraining import masked_lm_backward, masked_lm_forward
from minibert.heads.tasks import LabelledHead, label_config
from minibert.hf_config import ClassifierLabels, HFConfigFile
from minibert.layers import (
    CrossEntropyLoss,
    Embedding,
    Module,
    ReLU,
    ScaledDotProductAttention,
    TiedLinear,
    get_activation,
    merge_heads,
    split_heads,
)
from minibert.model import BertEncoder, BertModel, PageLayer, padding_key_mask

__all__ = [
    "DistilBertConfig",
    "DistilBertEmbeddings",
    "DistilBertSelfAttention",
    "DistilBertFFN",
    "DistilBertTransformerBlock",
    "DistilBertTransformer",
    "DistilBertModel",
    "DistilBertForMaskedLM",
    "DistilBertModelOutput",
    "DistilBertVocabProjector",
    "sinusoidal_position_table",
    "DistilBertForSequenceClassification",
]

LAYER_NORM_EPS = 1e-12  # DistilBERT's LayerNorms all use this eps; it is not a config field


# ----------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------


@dataclass
class _DistilBertFields:
    """The fields of ``DistilBertConfig``, checked on construction (HF names and defaults)."""

    vocab_size: int = 30522  # V: rows of the word-embedding table
    max_position_embeddings: int = 512  # longest sequence the position table covers
    sinusoidal_pos_embds: bool = False  # start the position table as sin/cos waves
    n_layers: int = 6  # L: transformer blocks
    n_heads: int = 12  # N: heads per attention layer; D = dim / N
    dim: int = 768  # H: width of every token vector
    hidden_dim: int = 3072  # I: width of the feed-forward layer
    dropout: float = 0.1  # dropout after the embeddings and the feed-forward
    attention_dropout: float = 0.1  # dropout on the attention probabilities
    activation: str = "gelu"  # "gelu" (exact erf), "gelu_new" (tanh form) or "relu"
    initializer_range: float = 0.02  # std of the normal initialization of weights
    qa_dropout: float = 0.1  # dropout of HF's question-answering head (kept for config.json)
    seq_classif_dropout: float = 0.2  # dropout of the sequence classification head
    pad_token_id: int | None = 0  # id of [PAD]; its embedding row starts at 0, gets no gradient
    extra: dict[str, Any] = field(default_factory=dict)  # other config.json keys, kept as-is

    def __post_init__(self) -> None:
        hf_config.positive_int_fields(self, ("vocab_size", "max_position_embeddings", "n_layers",
                                             "n_heads", "dim", "hidden_dim"))
        if self.dim % self.n_heads:
            raise ValueError(f"dim ({self.dim}) must be divisible by n_heads ({self.n_heads}); "
                             f"allowed head counts divide {self.dim}")
        if not isinstance(self.sinusoidal_pos_embds, bool):
            raise ValueError(f"sinusoidal_pos_embds must be true or false, "
                             f"got {short_repr(self.sinusoidal_pos_embds)}")
        if not isinstance(self.activation, str) or self.activation not in HIDDEN_ACTS:
            raise ValueError(f"activation must be one of {list(HIDDEN_ACTS)}, "
                             f"got {short_repr(self.activation)}")
        hf_config.dropout_fields(self, ("dropout", "attention_dropout", "qa_dropout",
                                        "seq_classif_dropout"))
        hf_config.positive_real_fields(self, ("initializer_range",))
        hf_config.check_pad_token_id(self)
        hf_config.check_extra(self)
        if self.extra.get("tie_word_embeddings", True) is not True:
            raise ValueError(f"tie_word_embeddings must be true (minibert always ties "
                             f"vocab_projector to the word embeddings), got "
                             f"{short_repr(self.extra['tie_word_embeddings'])}")


def _bert_name(field: str) -> property:
    """A read-only property under BERT's name that reads DistilBERT's ``field``, so that
    the code shared with BERT (attention, the encoder) reads either config."""
    return property(lambda config: getattr(config, field),
                    doc=f"BERT's name for DistilBERT's ``{field}``.")


class DistilBertConfig(HFConfigFile, ClassifierLabels, _DistilBertFields):
    """Hyperparameters of a DistilBERT (HF ``DistilBertConfig`` names and defaults).

    The defaults are distilbert-base-uncased: 6 layers, H = 768, 12 heads, I = 3072. BERT's
    names are read-only aliases (``hidden_size`` is ``dim``, ``num_hidden_layers`` is
    ``n_layers``, ...), as HF's ``attribute_map`` has them, so that the shared initializer
    of ``model.py`` builds DistilBERT's layers too. The labels of a classifier
    (``num_labels``, ``id2label``, ``label2id``) work as in BertConfig.
    """

    model_type = "distilbert"

    # -- BERT's names for the same sizes ---------------------------------------------------
    hidden_size = _bert_name("dim")
    num_hidden_layers = _bert_name("n_layers")
    num_attention_heads = _bert_name("n_heads")
    intermediate_size = _bert_name("hidden_dim")
    hidden_act = _bert_name("activation")
    hidden_dropout_prob = _bert_name("dropout")
    attention_probs_dropout_prob = _bert_name("attention_dropout")

    @property
    def layer_norm_eps(self) -> float:
        return LAYER_NORM_EPS

    @property
    def head_size(self) -> int:
        """D = H / N."""
        return self.dim // self.n_heads

    # -- sizes -----------------------------------------------------------------------------
    def num_parameters_estimate(self) -> int:
        """Parameters of a DistilBertModel of this size (no pooler, no token types)."""
        h, i = self.dim, self.hidden_dim
        embeddings = (self.vocab_size + self.max_position_embeddings) * h + 2 * h
        block = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
        return embeddings + self.n_layers * block

    # The size fields a "config.json does not belong to these weights" error quotes.
    SIZE_FIELDS = ("vocab_size", "dim", "n_layers", "hidden_dim", "max_position_embeddings")

    def required_checkpoint_numbers(self) -> int:
        """The fewest numbers a checkpoint of this config holds: the whole DistilBertModel."""
        return self.num_parameters_estimate()


def sinusoidal_position_table(num_positions: int, dim: int) -> np.ndarray:
    """The sin/cos position table (Vaswani et al., 2017) in DistilBERT's column layout.

    angle[pos, j] = pos / 10000^(2 * (j // 2) / dim); even columns hold sin(angle), odd
    columns cos(angle), so columns 2k and 2k + 1 share one frequency. Output float64 (P, H).
    """
    positions = np.arange(num_positions, dtype=np.float64)[:, None]  # (P, 1)
    pair = np.arange(dim) // 2  # (H,)
    angle = positions / np.power(10000.0, 2.0 * pair / dim)  # (P, H)
    table = np.empty((num_positions, dim), dtype=np.float64)
    table[:, 0::2] = np.sin(angle[:, 0::2])
    table[:, 1::2] = np.cos(angle[:, 1::2])
    return table


# ----------------------------------------------------------------------------------------
# Embeddings
# ----------------------------------------------------------------------------------------


class DistilBertEmbeddings(Module):
    """word + position embeddings (no token types), then LayerNorm and dropout.

    With ``sinusoidal_pos_embds`` the position table starts as ``sinusoidal_position_table``
    instead of random numbers; it is a parameter like any other afterwards and is trained,
    as in transformers 5 (older transformers froze it).
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        self.word_embeddings = init.word_embeddings()
        self.position_embeddings = init.embedding(config.max_position_embeddings)
        if config.sinusoidal_pos_embds:
            table = sinusoidal_position_table(config.max_position_embeddings, config.dim)
            self.position_embeddings.params["weight"][...] = table
        self.LayerNorm = init.layer_norm()
        self.dropout = init.dropout(config.dropout)

    def forward(self, input_ids: np.ndarray) -> np.ndarray:
        """input_ids int (B, T) -> embeddings (B, T, H)."""
        words = self.word_embeddings(input_ids)  # (B, T, H)
        positions = self.position_embeddings(np.arange(input_ids.shape[1]))  # (T, H)
        return self.dropout(self.LayerNorm(words + positions))

    def backward(self, dout: np.ndarray) -> None:
        """dout (B, T, H); adds into both tables and the LayerNorm."""
        d_summed = self.LayerNorm.backward(self.dropout.backward(dout))  # (B, T, H)
        # forward: summed = words + positions[None]
        self.word_embeddings.backward(d_summed)
        self.position_embeddings.backward(d_summed.sum(axis=0))  # (T, H)


# ----------------------------------------------------------------------------------------
# The block: attention with its output projection, then the feed-forward
# ----------------------------------------------------------------------------------------


class DistilBertSelfAttention(Module):
    """Multi-head self-attention and its output projection: q_lin, k_lin, v_lin, out_lin.

    BERT's ``BertSelfAttention`` under DistilBERT's names, followed by the dense layer of
    ``BertSelfOutput`` (without its dropout and LayerNorm, which sit in the block here).
    The block runs the page over this module's parameters; the module also runs on its own,
    as here, and keeps the probabilities of the block's last forward for heatmaps.
    """

    PROJECTIONS = ("q_lin", "k_lin", "v_lin")  # the projections' names, for tools that read them

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        hidden = config.hidden_size
        self.num_attention_heads = config.num_attention_heads
        self.q_lin = init.linear(hidden, hidden)
        self.k_lin = init.linear(hidden, hidden)
        self.v_lin = init.linear(hidden, hidden)
        self.attention = ScaledDotProductAttention(config.attention_probs_dropout_prob,
                                                   init.dropout_rng)
        self.out_lin = init.linear(hidden, hidden)

    @property
    def attention_probs(self) -> np.ndarray | None:
        """(B, N, T, T) probabilities of the last forward (before dropout), for heatmaps."""
        return self.attention.attention_probs

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """hidden_states (B, T, H), mask bool (B, 1, 1, T) or None -> (B, T, H)."""
        heads = self.num_attention_heads
        q = split_heads(self.q_lin(hidden_states), heads)  # (B, N, T, D)
        k = split_heads(self.k_lin(hidden_states), heads)  # (B, N, T, D)
        v = split_heads(self.v_lin(hidden_states), heads)  # (B, N, T, D)
        context = self.attention(q, k, v, mask)  # (B, N, T, D)
        return self.out_lin(merge_heads(context))  # (B, T, H)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d hidden_states (B, T, H)."""
        d_context = self.out_lin.backward(dout)  # forward: out_lin(context)
        dq, dk, dv = self.attention.backward(split_heads(d_context, self.num_attention_heads))
        # forward: q, k, v = q_lin(x), k_lin(x), v_lin(x): x's three gradients add up
        return (self.q_lin.backward(merge_heads(dq)) + self.k_lin.backward(merge_heads(dk))
                + self.v_lin.backward(merge_heads(dv)))


class DistilBertFFN(Module):
    """lin1 H -> I, activation, lin2 I -> H, dropout (HF's ``FFN``); runs on its own too."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        self.lin1 = init.linear(config.dim, config.hidden_dim)
        self.activation = get_activation(config.activation)
        self.lin2 = init.linear(config.hidden_dim, config.dim)
        self.dropout = init.dropout(config.dropout)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(B, T, H) -> (B, T, H)."""
        return self.dropout(self.lin2(self.activation(self.lin1(hidden_states))))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.lin1.backward(self.activation.backward(
            self.lin2.backward(self.dropout.backward(dout))))


class DistilBertTransformerBlock(PageLayer):
    """One post-LN block, LayerNorm(x + attention(x)), then LayerNorm(a + ffn(a)): the page
    of ``minibert.model`` (``PageLayer``) over DistilBERT's modules.

    The hidden dropout sits after ``ffn.lin2`` only: none after ``attention.out_lin``. The
    activation is the config's ``activation``.
    """

    HIDDEN_DROPOUT_SITES = ("output",)

    def __init__(self, init: Initializer) -> None:
        super().__init__(init)
        self.attention = DistilBertSelfAttention(init)
        self.sa_layer_norm = init.layer_norm()
        self.ffn = DistilBertFFN(init)
        self.output_layer_norm = init.layer_norm()

    def holders(self) -> tuple[tuple[str, Module], ...]:
        """(page name, module) of each Linear and LayerNorm (BERT's name -> DistilBERT's
        module, the table of the module docstring)."""
        attention, ffn = self.attention, self.ffn
        return (("attention.self.query", attention.q_lin),
                ("attention.self.key", attention.k_lin),
                ("attention.self.value", attention.v_lin),
                ("attention.output.dense", attention.out_lin),
                ("attention.output.LayerNorm", self.sa_layer_norm),
                ("intermediate.dense", ffn.lin1),
                ("output.dense", ffn.lin2),
                ("output.LayerNorm", self.output_layer_norm))

    def step_modules(self) -> tuple[tuple[str, Module], ...]:
        """(page cache field, module) of the steps without parameters."""
        return (("attention", self.attention.attention),
                ("intermediate_act", self.ffn.activation),
                ("output_dropout", self.ffn.dropout))


class DistilBertTransformer(BertEncoder):
    """A stack of blocks: ``transformer.layer.0`` ... ``transformer.layer.{L-1}``.

    BertEncoder's forward and backward over DistilBERT's blocks.
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__(init, (DistilBertTransformerBlock(init)
                                for _ in range(init.config.n_layers)))


# ----------------------------------------------------------------------------------------
# Models
# ----------------------------------------------------------------------------------------


@dataclass
class DistilBertModelOutput:
    """Outputs of DistilBertModel (HF's ``BaseModelOutput`` fields)."""

    last_hidden_state: np.ndarray  # (B, T, H)
    hidden_states: tuple | None = None  # L+1 arrays (B, T, H): embeddings, then each layer
    attentions: tuple | None = None  # L arrays (B, N, T, T)


class _DistilBertCheckpointIO(PretrainedModel):
    """What ``load_pretrained`` reads from a model class: DistilBERT's config and names."""

    config_class = DistilBertConfig
    base_model_prefix = "distilbert"
    head_prefixes = ("vocab_transform.", "vocab_layer_norm.", "vocab_projector.")


class DistilBertModel(_DistilBertCheckpointIO, Module):
    """Embeddings and the transformer stack: HF ``DistilBertModel``."""

    def __init__(self, config: DistilBertConfig, seed: int = 0, dtype=np.float32, *,
                 _init: Initializer | None = None) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype, _init)
        self.embeddings = DistilBertEmbeddings(init)
        self.transformer = DistilBertTransformer(init)

    def check_inputs(self, input_ids, attention_mask=None):
        """Validate and normalize input_ids and attention_mask; returns int64 arrays (B, T).

        BERT's checks (``BertModel.check_inputs``) with no token types: those are only read
        when given, so the function serves this config too.
        """
        input_ids, _, attention_mask = BertModel.check_inputs(self, input_ids, None,
                                                              attention_mask)
        return input_ids, attention_mask

    def forward(self, input_ids, attention_mask=None, output_attentions: bool = False,
                output_hidden_states: bool = False) -> DistilBertModelOutput:
        """input_ids, attention_mask int (B, T) -> DistilBertModelOutput."""
        input_ids, attention_mask = self.check_inputs(input_ids, attention_mask)
        key_mask = padding_key_mask(attention_mask)  # (B, 1, 1, T) or None
        embedding_output = self.embeddings(input_ids)  # (B, T, H)
        sequence_output, hidden_states = self.transformer(embedding_output, key_mask,
                                                          output_hidden_states)
        self.cache = ShapeCache(sequence_output.shape)
        attentions = None
        if output_attentions:
            attentions = tuple(block.attention.attention_probs for block in self.transformer.layer)
        return DistilBertModelOutput(sequence_output, hidden_states, attentions)

    def backward(self, d_last_hidden_state: np.ndarray) -> None:
        """Add the gradients of sum(last_hidden_state * d_last_hidden_state), (B, T, H)."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        shape = self.cache.shape
        if np.shape(d_last_hidden_state) != shape:
            raise ValueError(f"d_last_hidden_state must have shape {shape}, "
                             f"got {np.shape(d_last_hidden_state)}")
        d_sequence = np.asarray(d_last_hidden_state).astype(self.dtype, copy=True)
        self.embeddings.backward(self.transformer.backward(d_sequence))


class DistilBertVocabProjector(Module):
    """logits = x @ word_embeddings.T + bias: the output layer, its weight tied.

    Only ``bias`` is registered here; the weight is the word-embedding array (listed once,
    under the embeddings), and its gradient from this use is added into the same buffer.
    """

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        self.add_parameter("bias", np.zeros(init.config.vocab_size, dtype=init.dtype))
        self.decoder = TiedLinear(word_embeddings)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V)."""
        return self.decoder(hidden_states, self.params["bias"])

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_hidden, d_bias = self.decoder.backward(dout)  # adds into the word table
        self.grads["bias"] += d_bias
        return d_hidden


class DistilBertForMaskedLM(_DistilBertCheckpointIO, Module):
    """DistilBERT with its MLM head: vocab_transform, activation, vocab_layer_norm,
    vocab_projector (tied to the word embeddings). HF ``DistilBertForMaskedLM``.

    The loss is the mean cross-entropy over positions whose label is not -100; only those
    positions go through the head during a forward with labels.
    """

    def __init__(self, config: DistilBertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype)
        self.distilbert = DistilBertModel(config, _init=init)
        self.vocab_transform = init.linear(config.dim, config.dim)
        self.activation = get_activation(config.activation)
        self.vocab_layer_norm = init.layer_norm()
        self.vocab_projector = DistilBertVocabProjector(
            init, self.distilbert.embeddings.word_embeddings)

    def _tied_aliases(self) -> dict[str, str]:
        return {"vocab_projector.weight": "distilbert.embeddings.word_embeddings.weight"}

    # -- the head, on any rows of hidden states --------------------------------------------
    def lm_head_forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V): transform, activation, LayerNorm, tied projection."""
        transformed = self.vocab_layer_norm(self.activation(self.vocab_transform(hidden_states)))
        return self.vocab_projector(transformed)

    def lm_head_backward(self, d_logits: np.ndarray) -> np.ndarray:
        """d logits (..., V) -> d hidden_states (..., H); adds into the head's gradients."""
        d_transformed = self.vocab_projector.backward(d_logits)
        return self.vocab_transform.backward(
            self.activation.backward(self.vocab_layer_norm.backward(d_transformed)))

    def predict(self, hidden_states: np.ndarray) -> np.ndarray:
        """Logits without touching the caches a pending backward needs."""
        head = (self.vocab_transform, self.activation, self.vocab_layer_norm,
                self.vocab_projector)
        with preserved_caches(*head):
            return self.lm_head_forward(hidden_states)

    # -- the model -------------------------------------------------------------------------
    def forward(self, input_ids, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> MaskedLMOutput:
        """input_ids, attention_mask int (B, T); labels int (B, T), -100 where no target."""
        self.cache = None
        base = self.distilbert(input_ids, attention_mask, output_attentions,
                               output_hidden_states)
        sequence_output = base.last_hidden_state  # (B, T, H)
        loss = masked_logits = positions = None
        if labels is not None:  # only the M labelled positions go through the head
            loss, masked_logits, self.cache = masked_lm_forward(
                sequence_output, labels, self.lm_head_forward, self.config.vocab_size)
            positions = self.cache.positions
        return MaskedLMOutput(loss, base.hidden_states, base.attentions, masked_logits,
                              positions, LazyLogits(lambda: self.predict(sequence_output)))

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer (call zero_grad() between steps)."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass with labels first")
        cache, self.cache = self.cache, None
        self.distilbert.backward(masked_lm_backward(1.0, cache, self.lm_head_backward))



# ----------------------------------------------------------------------------------------
# Fine-tuning: sequence classification
# ----------------------------------------------------------------------------------------


class DistilBertForSequenceClassification(_DistilBertCheckpointIO, LabelledHead):
    """DistilBERT + a classifier on the first token's vector: HF's class of that name.

    DistilBERT has no pooler; its classifier brings its own dense layer instead:
    hidden[:, 0] (B, H) -> ``pre_classifier`` (H -> H) -> ReLU -> dropout
    (``seq_classif_dropout``) -> ``classifier`` (H -> C). Loss = mean cross-entropy (HF's
    "single_label_classification"). Labels as in ``BertForSequenceClassification``.
    The forward takes no ``token_type_ids``, as HF's: DistilBERT has no segment table.
    ``from_pretrained`` of a DistilBertForMaskedLM folder keeps the encoder, skips the MLM
    head (named in a warning) and initializes both new layers from ``seed``.
    """

    head_prefixes = ("vocab_transform.", "vocab_layer_norm.", "vocab_projector.",
                     "pre_classifier.", "classifier.")

    def __init__(self, config: DistilBertConfig, seed: int = 0, dtype=np.float32,
                 num_labels=None, id2label=None) -> None:
        super().__init__()
        config = label_config(config, num_labels, id2label)
        init = self.adopt_config(config, seed, dtype)
        self.distilbert = DistilBertModel(config, _init=init)
        # Attribute order = HF's, so named_parameters() lists them in HF's order.
        self.pre_classifier = init.linear(config.dim, config.dim)
        self.classifier = init.linear(config.dim, config.num_labels)
        self.dropout = init.dropout(config.seq_classif_dropout)
        self.activation = ReLU()
        self.loss_fct = CrossEntropyLoss()

    def forward(self, input_ids, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> SequenceClassifierOutput:
        """input_ids, attention_mask int (B, T); labels int (B,) in [0, C) -> logits (B, C)."""
        base = self._encode(input_ids, attention_mask, output_attentions, output_hidden_states)
        first = base.last_hidden_state[:, 0]  # (B, H): the [CLS] position
        hidden = self.dropout(self.activation(self.pre_classifier(first)))  # (B, H)
        logits = self.classifier(hidden)  # (B, C)
        return self._first_token_classifier_output(logits, labels, base)

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer."""
        cache = self._pop_cache()
        d_logits = self.loss_fct.backward(1.0)  # (B, C)
        # forward: logits = classifier(dropout(relu(pre_classifier(hidden[:, 0]))))
        d_hidden = self.dropout.backward(self.classifier.backward(d_logits))  # (B, H)
        d_first = self.pre_classifier.backward(self.activation.backward(d_hidden))  # (B, H)
        d_sequence = np.zeros(cache.shape, dtype=d_first.dtype)  # (B, T, H)
        d_sequence[:, 0] = d_first  # only the first position feeds the classifier
        self.distilbert.backward(d_sequence)
