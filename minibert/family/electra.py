"""ELECTRA (Clark et al., 2020): a discriminator that learns from every token.

BERT's MLM learns from the 15% of positions it masks, and sees [MASK] in pretraining but
never in fine-tuning. ELECTRA trains two encoders together:

1. the **generator**, a small BERT with an MLM head (``ElectraForMaskedLM``), fills the
   masked positions by *sampling* from its own predicted distribution;
2. the **discriminator** (``ElectraForPreTraining``) reads the filled-in text, which has no
   [MASK], and says for *every* real token whether it was replaced: one binary
   cross-entropy per token (replaced-token detection). A sampled token that happens to
   equal the original counts as original.

The loss is MLM(generator) + 50 * RTD(discriminator) (the paper's lambda = 50). The two
share their embeddings (word, position and token-type tables and their LayerNorm, as the
paper's section 3.2 and Google's code share the embedding scope), so the shared arrays
receive the sum of both losses' gradients. **No gradient flows through the sampling**:
the corrupted text is a set of integer ids drawn at random, a step with no derivative, so
the discriminator's loss cannot reach the generator's logits; the generator learns by
maximum likelihood (its MLM loss) alone. The paper chose this over training it
adversarially, which would need reinforcement learning through the sampling (section 2).
After pretraining the generator is dropped and the discriminator is fine-tuned.

Module tree and names follow HuggingFace ``modeling_electra.py``, so ``transformers``
opens the folders: ``electra.embeddings.word_embeddings.weight`` (V, E),
``electra.embeddings_project.weight`` (H, E) when E != H, ``electra.encoder.layer.0...``
(BERT's blocks), ``discriminator_predictions.dense`` / ``dense_prediction`` (H -> 1),
``generator_predictions.dense`` (H -> E) / ``LayerNorm`` (E), ``generator_lm_head.bias``
with ``generator_lm_head.weight`` tied to the word table.

Dimension legend: B batch, T sequence length, E embedding size, H hidden size, N heads,
I intermediate size, V vocabulary size, M number of masked positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.base import (
    BertModelOutput,
    EmbeddingWidthInitializer,
    Initializer,
    LazyLogits,
    MaskedLMOutput,
    PretrainedModel,
    SequenceClassifierOutput,
    ShapeCache,
    make_init,
    preserved_caches,
)
from minibert.checks import (
    IGNORE_INDEX,
    as_int_array,
    check_float_array,
    check_real,
    is_int,
    short_repr,
)
from minibert.config import BertFields, preset_sizes
from minibert.heads.pretraining import masked_lm_backward, masked_lm_forward
from minibert.heads.tasks import LabelledHead, label_config
from minibert.hf_config import ClassifierLabels, HFConfigFile
from minibert.layers import GELU, CrossEntropyLoss, Embedding, Module, get_activation
from minibert.model import BertEmbeddings, BertEncoder, BertModel

__all__ = [
    "ElectraConfig", "ElectraEmbeddings", "ElectraModel", "ElectraDiscriminatorPredictions",
    "ElectraGeneratorPredictions", "ElectraForPreTraining", "ElectraForMaskedLM",
    "ElectraForPreTrainingOutput", "ElectraForSequenceClassification", "ElectraPreTrainer",
    "ElectraPreTrainerOutput",
    "generator_config", "RTD_WEIGHT", "GENERATOR_FOLDER",
    "binary_cross_entropy_forward", "binary_cross_entropy_backward",
    "BinaryCrossEntropyCache",
]

GENERATOR_FOLDER = "generator"  # pretraining writes the generator's folder here, inside --out
RTD_WEIGHT = 50.0  # lambda of the paper: loss = MLM + 50 * replaced-token detection

# E of the presets: the paper's ELECTRA-Small has E = 128 < H = 256; tiny takes half of H.
ELECTRA_EMBEDDING_SIZES = {"tiny": 64, "mini": 128, "small": 128, "base": 768, "large": 1024}


# ----------------------------------------------------------------------------------------
# Replaced-token detection's loss as a forward/backward pair: was each token replaced? One
# binary cross-entropy per real token. Derivation: docs/descendants.md (section 3).
# ----------------------------------------------------------------------------------------


class BinaryCrossEntropyCache(NamedTuple):
    probs: np.ndarray  # (...) sigmoid(logits)
    targets: np.ndarray  # (...) the labels as floats
    weights: np.ndarray  # (...) 1 / M at the selected positions, 0 elsewhere


def binary_cross_entropy_forward(logits: np.ndarray, labels, mask=None):
    """Mean binary cross-entropy with logits over the selected positions (torch's
    ``BCEWithLogitsLoss`` on them).

    Per position: -(y log sigmoid(z) + (1 - y) log(1 - sigmoid(z))), computed as
    max(z, 0) - z y + log(1 + exp(-|z|)) so that no large |z| overflows.
    Inputs: logits (...); labels (...) of 0/1; mask (...) bool or 0/1, the positions that
    count (None: all). Output: scalar loss (0 when none is selected).
    Cache: BinaryCrossEntropyCache.
    """
    check_float_array("logits", logits)
    labels = np.asarray(labels)
    if labels.shape != logits.shape or (labels.size and not np.isin(labels, (0, 1)).all()):
        raise ValueError(f"labels must hold only 0 and 1 in the shape of logits "
                         f"{logits.shape}, got shape {labels.shape}")
    selected = np.ones(logits.shape, dtype=bool) if mask is None else np.asarray(mask) == 1
    if selected.shape != logits.shape:
        raise ValueError(f"mask must have the shape of logits {logits.shape}, got "
                         f"{selected.shape}")
    count = int(selected.sum())
    targets = labels.astype(logits.dtype)
    per_position = (np.maximum(logits, 0) - logits * targets
                    + np.log1p(np.exp(-np.abs(logits))))  # (...)
    weights = (selected / max(count, 1)).astype(logits.dtype)  # (...)
    loss = (per_position * weights).sum()
    probs = 0.5 * (1.0 + np.tanh(0.5 * logits))  # sigmoid, without overflow in exp(-z)
    return logits.dtype.type(loss), BinaryCrossEntropyCache(probs, targets, weights)


def binary_cross_entropy_backward(dloss, cache):
    """Returns dlogits (...) = dloss * (sigmoid(z) - y) / M at selected positions, else 0."""
    # forward: loss = sum_selected (softplus(z) - z y) / M; d softplus(z) / dz = sigmoid(z)
    return (cache.probs - cache.targets) * cache.weights * float(dloss)


# ----------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------


@dataclass(init=True, repr=False)
class _ElectraFields(BertFields):
    """The fields of ``ElectraConfig`` (HF's names and defaults: ELECTRA-Small)."""

    vocab_size: int = 30522  # V
    embedding_size: int = 128  # E: width of the embedding tables
    hidden_size: int = 256  # H
    num_hidden_layers: int = 12  # L
    num_attention_heads: int = 4  # N
    intermediate_size: int = 1024  # I

    def __post_init__(self) -> None:
        super().__post_init__()
        if not is_int(self.embedding_size) or self.embedding_size <= 0:
            raise ValueError(f"embedding_size must be a positive integer, got "
                             f"{short_repr(self.embedding_size)}")
        self.embedding_size = int(self.embedding_size)


class ElectraConfig(HFConfigFile, ClassifierLabels, _ElectraFields):
    """Hyperparameters of an ELECTRA generator or discriminator (HF ``ElectraConfig``).

    BertConfig's fields, checked the same way, plus ``embedding_size`` E: the tables are
    V x E and ``embeddings_project`` maps E to H when they differ. Unknown config.json keys
    (HF's summary_* fields, ...) go to ``extra`` and are written back.
    """

    model_type = "electra"

    @classmethod
    def preset(cls, name: str, **overrides) -> ElectraConfig:
        """BertConfig's preset sizes (L, H, N, I) with E from ``ELECTRA_EMBEDDING_SIZES``."""
        return cls(**{**preset_sizes(name), "embedding_size": ELECTRA_EMBEDDING_SIZES[name],
                      **overrides})

    def num_parameters_estimate(self) -> int:
        """Parameters of an ElectraModel of this size (no pooler: ELECTRA has none)."""
        e, h, i = self.embedding_size, self.hidden_size, self.intermediate_size
        rows = self.vocab_size + self.max_position_embeddings + self.type_vocab_size
        project = e * h + h if e != h else 0
        block = 4 * (h * h + h) + 2 * h + (h * i + i) + (i * h + h) + 2 * h
        return rows * e + 2 * e + project + self.num_hidden_layers * block

    SIZE_FIELDS = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
                   "intermediate_size", "max_position_embeddings", "type_vocab_size")

    def required_checkpoint_numbers(self) -> int:
        """The fewest numbers a checkpoint of this config holds: the whole encoder."""
        return self.num_parameters_estimate()


def generator_config(discriminator: ElectraConfig, size: float = 0.25) -> ElectraConfig:
    """The generator for a discriminator: ``size`` times its width, heads and feed-forward
    (the paper finds 1/4 to 1/2 best, section 3.2), the same depth, embeddings and vocabulary."""
    size = check_real("size", size, 0, above=True, maximum=1)
    fields = discriminator.to_dict()
    fields.pop("model_type")
    heads = max(1, round(discriminator.num_attention_heads * size))
    head_size = max(1, round(discriminator.hidden_size * size / heads))
    fields.update(hidden_size=heads * head_size, num_attention_heads=heads,
                  intermediate_size=max(1, round(discriminator.intermediate_size * size)))
    return ElectraConfig.from_dict(fields)


# ----------------------------------------------------------------------------------------
# The encoder
# ----------------------------------------------------------------------------------------


class ElectraEmbeddings(BertEmbeddings):
    """BERT's embeddings at width E: word + position + token_type, LayerNorm(E), dropout.
    ids (B, T) -> (B, T, E); forward and backward are BertEmbeddings'."""

    def __init__(self, init: Initializer) -> None:
        super().__init__(EmbeddingWidthInitializer(init))


class ElectraModel(PretrainedModel, Module):
    """Embeddings (width E), ``embeddings_project`` E -> H when E != H, BERT's encoder; no
    pooler. HF ``ElectraModel``."""

    config_class = ElectraConfig
    base_model_prefix = "electra"
    head_prefixes = ("discriminator_predictions.", "generator_predictions.",
                     "generator_lm_head.", "classifier.")

    def __init__(self, config: ElectraConfig, seed: int = 0, dtype=np.float32, *,
                 _init: Initializer | None = None) -> None:
        super().__init__()
        if not isinstance(config, ElectraConfig):
            raise TypeError(f"config must be an ElectraConfig, got {type(config).__name__}")
        init = _init or make_init(config, seed, dtype)
        self.config = config
        self.dropout_rng = init.dropout_rng
        self.embeddings = ElectraEmbeddings(init)
        self.embeddings_project = None
        if config.embedding_size != config.hidden_size:
            self.embeddings_project = init.linear(config.embedding_size, config.hidden_size)
        self.encoder = BertEncoder(init)

    # The same checks as BertModel: ids within the tables, shapes, a 0/1 mask.
    check_inputs = BertModel.check_inputs

    def forward(self, input_ids, token_type_ids=None, attention_mask=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> BertModelOutput:
        """input_ids, token_type_ids, attention_mask int (B, T) -> BertModelOutput
        (last_hidden_state (B, T, H); pooler_output None)."""
        input_ids, token_type_ids, attention_mask = self.check_inputs(
            input_ids, token_type_ids, attention_mask)
        key_mask = attention_mask[:, None, None, :].astype(bool)  # (B, 1, 1, T)
        if key_mask.all():
            key_mask = None
        hidden = self.embeddings(input_ids, token_type_ids)  # (B, T, E)
        if self.embeddings_project is not None:
            hidden = self.embeddings_project(hidden)  # (B, T, H)
        sequence_output, hidden_states = self.encoder(hidden, key_mask, output_hidden_states)
        self.cache = ShapeCache(sequence_output.shape)
        attentions = None
        if output_attentions:
            attentions = tuple(block.attention.self.attention_probs for block in self.encoder.layer)
        return BertModelOutput(sequence_output, None, hidden_states, attentions)

    def backward(self, d_last_hidden_state: np.ndarray) -> None:
        """Adds the gradients of sum(last * d_last) into every parameter; d_last (B, T, H)."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        if d_last_hidden_state.shape != self.cache.shape:
            raise ValueError(f"d_last_hidden_state must have shape {self.cache.shape}, got "
                             f"{d_last_hidden_state.shape}")
        d_hidden = self.encoder.backward(d_last_hidden_state.astype(self.dtype, copy=True))
        if self.embeddings_project is not None:
            d_hidden = self.embeddings_project.backward(d_hidden)  # (B, T, E)
        self.embeddings.backward(d_hidden)


# ----------------------------------------------------------------------------------------
# Heads
# ----------------------------------------------------------------------------------------


class ElectraDiscriminatorPredictions(Module):
    """dense H -> H, activation (``hidden_act``), ``dense_prediction`` H -> 1: one logit a token."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        hidden = init.config.hidden_size
        self.dense = init.linear(hidden, hidden)
        self.activation = get_activation(init.config.hidden_act)
        self.dense_prediction = init.linear(hidden, 1)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(B, T, H) -> logits (B, T): > 0 means "replaced"."""
        return self.dense_prediction(self.activation(self.dense(hidden_states)))[..., 0]

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T) -> d hidden_states (B, T, H)."""
        return self.dense.backward(self.activation.backward(
            self.dense_prediction.backward(dout[..., None])))


class ElectraGeneratorPredictions(Module):
    """dense H -> E, GELU (always the erf form, as HF), LayerNorm(E)."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        self.activation = GELU("none")
        self.LayerNorm = EmbeddingWidthInitializer(init).layer_norm()
        self.dense = init.linear(config.hidden_size, config.embedding_size)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> (..., E)."""
        return self.LayerNorm(self.activation(self.dense(hidden_states)))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.dense.backward(self.activation.backward(self.LayerNorm.backward(dout)))


class ElectraLMHead(Module):
    """``generator_lm_head``: logits = x @ word_embeddings.T + bias, the weight tied to the
    (V, E) word table (not registered here; its gradient adds into the table's buffer)."""

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        self.add_parameter("bias", np.zeros(init.config.vocab_size, dtype=init.dtype))
        object.__setattr__(self, "word_embeddings", word_embeddings)  # tied, not a child

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., E) -> logits (..., V)."""
        logits, self.cache = F.linear_forward(hidden_states, self.word_embeddings.params["weight"],
                                              self.params["bias"])
        return logits

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_hidden, d_weight, d_bias = F.linear_backward(dout, self.cache)
        self.word_embeddings.grads["weight"] += d_weight  # tied: gradients add
        self.grads["bias"] += d_bias
        return d_hidden


# ----------------------------------------------------------------------------------------
# The two models
# ----------------------------------------------------------------------------------------


class _ElectraPretrainingModel(PretrainedModel, Module):
    """What the discriminator and the generator share: ELECTRA's checkpoint names and an
    encoder built from one seed."""

    config_class = ElectraConfig
    base_model_prefix = "electra"
    head_prefixes = ElectraModel.head_prefixes

    def _build_electra(self, config: ElectraConfig, seed: int, dtype,
                       dropout_rng: np.random.Generator | None) -> Initializer:
        """Set ``config`` and ``electra``; returns the initializer for the heads: make_init's,
        with the dropout masks drawn from ``dropout_rng`` when one is given (the
        pretraining job's single generator, saved in its checkpoints)."""
        if not isinstance(config, ElectraConfig):
            raise TypeError(f"config must be an ElectraConfig, got {type(config).__name__}")
        init = make_init(config, seed, dtype)
        if dropout_rng is not None:
            init.dropout_rng = dropout_rng
        self.config = config
        self.electra = ElectraModel(config, _init=init)
        self.dropout_rng = init.dropout_rng
        return init


@dataclass
class ElectraForPreTrainingOutput:
    """Outputs of ElectraForPreTraining (HF field names)."""

    loss: float | None
    logits: np.ndarray  # (B, T): > 0 means "replaced"
    hidden_states: tuple | None = None
    attentions: tuple | None = None


class _DiscriminatorCache(NamedTuple):
    bce: BinaryCrossEntropyCache


class ElectraForPreTraining(_ElectraPretrainingModel):
    """The discriminator: ELECTRA's encoder and a replaced-token detector on every token.

    ``labels`` (B, T): 1 where the token was replaced, 0 where it is the original; the
    loss is the mean binary cross-entropy over the real tokens (``attention_mask`` = 1;
    every position when no mask is given), as HF.
    """

    def __init__(self, config: ElectraConfig, seed: int = 0, dtype=np.float32, *,
                 _dropout_rng: np.random.Generator | None = None) -> None:
        super().__init__()
        init = self._build_electra(config, seed, dtype, _dropout_rng)
        self.discriminator_predictions = ElectraDiscriminatorPredictions(init)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> ElectraForPreTrainingOutput:
        """ids (B, T), labels (B, T) of 0/1 or None -> ElectraForPreTrainingOutput."""
        out = self.electra(input_ids, token_type_ids, attention_mask, output_attentions,
                           output_hidden_states)
        logits = self.discriminator_predictions(out.last_hidden_state)  # (B, T)
        loss, self.cache = None, None
        if labels is not None:
            labels = as_int_array("labels", labels)
            mask = None if attention_mask is None else as_int_array("attention_mask",
                                                                    attention_mask)
            if mask is not None and mask.ndim == 1:
                mask = mask[None]
            if labels.ndim == 1:
                labels = labels[None]
            value, bce = binary_cross_entropy_forward(logits, labels, mask)
            loss, self.cache = float(value), _DiscriminatorCache(bce)
        return ElectraForPreTrainingOutput(loss, logits, out.hidden_states, out.attentions)

    def backward(self, rtd_weight: float = 1.0) -> None:
        """Adds rtd_weight times the gradient of the forward's loss into every parameter."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass with labels first")
        d_logits = binary_cross_entropy_backward(rtd_weight, self.cache.bce)  # (B, T)
        self.electra.backward(self.discriminator_predictions.backward(
            d_logits.astype(self.dtype, copy=False)))


class ElectraForMaskedLM(_ElectraPretrainingModel):
    """The generator: ELECTRA's encoder and an MLM head whose decoder is the word table.

    With ``labels`` (B, T; -100 = not predicted) only the labelled positions go through
    the head ((M, H) -> (M, V)); ``masked_lm_logits`` holds those rows, the ones the
    pretraining job samples from. ``logits`` (B, T, V) is computed on first access.
    """

    def __init__(self, config: ElectraConfig, seed: int = 0, dtype=np.float32, *,
                 _dropout_rng: np.random.Generator | None = None) -> None:
        super().__init__()
        init = self._build_electra(config, seed, dtype, _dropout_rng)
        self.generator_predictions = ElectraGeneratorPredictions(init)
        self.generator_lm_head = ElectraLMHead(init, self.electra.embeddings.word_embeddings)

    def _tied_aliases(self) -> dict[str, str]:
        return {"generator_lm_head.weight": "electra.embeddings.word_embeddings.weight"}

    def _head(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V)."""
        return self.generator_lm_head(self.generator_predictions(hidden_states))

    def _head_backward(self, d_logits: np.ndarray) -> np.ndarray:
        """d logits (..., V) -> d hidden_states (..., H)."""
        return self.generator_predictions.backward(self.generator_lm_head.backward(d_logits))

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False, output_hidden_states: bool = False):
        """ids (B, T), labels (B, T) or None -> MaskedLMOutput (``masked_lm_logits`` (M, V))."""
        out = self.electra(input_ids, token_type_ids, attention_mask, output_attentions,
                           output_hidden_states)
        sequence = out.last_hidden_state  # (B, T, H)
        loss, masked_logits, positions, self.cache = None, None, None, None
        if labels is not None:  # only the M labelled positions go through the head
            loss, masked_logits, self.cache = masked_lm_forward(
                sequence, labels, self._head, self.config.vocab_size)
            positions = self.cache.positions

        def all_logits() -> np.ndarray:
            with preserved_caches(self.generator_predictions, self.generator_lm_head):
                return self._head(sequence)  # (B, T, V)

        return MaskedLMOutput(loss, out.hidden_states, out.attentions, masked_logits,
                              positions, LazyLogits(all_logits))

    def backward(self, mlm_weight: float = 1.0) -> None:
        """Adds mlm_weight times the gradient of the forward's loss into every parameter."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass with labels first")
        self.electra.backward(masked_lm_backward(mlm_weight, self.cache, self._head_backward))


class ElectraForSequenceClassification(LabelledHead):
    """The discriminator's encoder + HF's ``ElectraClassificationHead`` on the first token:
    hidden[:, 0] (B, H) -> dropout -> ``classifier.dense`` (H -> H) -> GELU -> dropout ->
    ``classifier.out_proj`` (H -> C). Loss: mean cross-entropy. The dropout is
    ``classifier_dropout`` (config.json) or else hidden_dropout_prob. Labels as in
    ``BertForSequenceClassification``. ``from_pretrained`` of a pretraining folder (the
    discriminator's) keeps the encoder and initializes the head from ``seed``.
    """

    config_class = ElectraConfig
    base_model_prefix = "electra"
    head_prefixes = ElectraModel.head_prefixes

    def __init__(self, config: ElectraConfig, seed: int = 0, dtype=np.float32,
                 num_labels=None, id2label=None) -> None:
        super().__init__()
        if not isinstance(config, ElectraConfig):
            raise TypeError(f"config must be an ElectraConfig, got {type(config).__name__}")
        config = label_config(config, num_labels, id2label)
        init = make_init(config, seed, dtype)
        self.config = config
        self.dropout_rng = init.dropout_rng
        self.electra = ElectraModel(config, _init=init)
        self.classifier = ElectraClassificationHead(init, self._classifier_dropout())
        self.loss_fct = CrossEntropyLoss()

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> SequenceClassifierOutput:
        """input_ids etc. int (B, T); labels int (B,) in [0, C) -> logits (B, C), loss."""
        base = self._encode(input_ids, token_type_ids, attention_mask, output_attentions,
                            output_hidden_states)
        logits = self.classifier(base.last_hidden_state[:, 0])  # (B, C)
        return self._first_token_classifier_output(logits, labels, base)

    def backward(self) -> None:
        """Add d loss / d parameter into every gradient buffer."""
        cache = self._pop_cache()
        d_first = self.classifier.backward(self.loss_fct.backward(1.0))  # (B, H)
        d_sequence = np.zeros(cache.shape, dtype=d_first.dtype)  # (B, T, H)
        d_sequence[:, 0] = d_first  # only the first position feeds the classifier
        self.electra.backward(d_sequence)


class ElectraClassificationHead(Module):
    """dropout, ``dense`` H -> H, GELU (HF's fixed choice), dropout, ``out_proj`` H -> C."""

    def __init__(self, init: Initializer, dropout: float) -> None:
        super().__init__()
        hidden = init.config.hidden_size
        self.dense = init.linear(hidden, hidden)
        self.activation = GELU("none")
        self.dropout = init.dropout(dropout)
        self.second_dropout = init.dropout(dropout)  # the same rate, its own mask cache
        self.out_proj = init.linear(hidden, init.config.num_labels)

    def forward(self, first: np.ndarray) -> np.ndarray:
        """(B, H) -> logits (B, C)."""
        hidden = self.activation(self.dense(self.dropout(first)))  # (B, H)
        return self.out_proj(self.second_dropout(hidden))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_hidden = self.second_dropout.backward(self.out_proj.backward(dout))
        return self.dropout.backward(self.dense.backward(self.activation.backward(d_hidden)))


# ----------------------------------------------------------------------------------------
# Pretraining: generator and discriminator together
# ----------------------------------------------------------------------------------------


SHARED_EMBEDDINGS = ("word_embeddings", "position_embeddings", "token_type_embeddings",
                     "LayerNorm")


@dataclass
class ElectraPreTrainerOutput:
    """Outputs of one ELECTRA pretraining forward; the ``masked_lm_*`` names are the ones
    the pretraining loop and its evaluation read (the generator's MLM)."""

    loss: float  # masked_lm_loss + rtd_weight * rtd_loss
    masked_lm_loss: float  # the generator's
    rtd_loss: float  # the discriminator's, over every real token
    corrupted_ids: np.ndarray  # (B, T) the discriminator's input
    replaced: np.ndarray  # (B, T) 1 where the token differs from the original
    rtd_logits: np.ndarray  # (B, T)
    masked_lm_logits: np.ndarray  # (M, V) the generator's, at the masked positions
    masked_lm_positions: tuple  # (batch index, position) arrays of those M
    next_sentence_loss: None = None  # ELECTRA has no sentence-pair task


class ElectraPreTrainer(Module):
    """A generator and a discriminator that share their embeddings, trained as one.

    ``forward(input_ids, token_type_ids, attention_mask, labels)`` takes a masked batch
    (BERT's: ``input_ids`` with [MASK] at the labelled positions, ``labels`` the original
    ids there and -100 elsewhere), samples the generator's fill-ins, and scores the
    discriminator on every real token. ``backward()`` differentiates
    mlm_loss + rtd_weight * rtd_loss. ``named_parameters`` lists ``generator.*`` and
    ``discriminator.*``; the shared arrays appear once, under the generator's names.

    Inputs: discriminator_config; generator_settings, the generator's ElectraConfig (None:
    ``generator_config(discriminator_config)``, a quarter as wide; a larger one is
    refused); seed; dtype; rtd_weight, the paper's lambda (50).
    """

    def __init__(self, discriminator_config: ElectraConfig,
                 generator_settings: ElectraConfig | None = None, seed: int = 0,
                 dtype=np.float32, rtd_weight: float = RTD_WEIGHT) -> None:
        super().__init__()
        # the generator's config: by default a quarter of the discriminator's width
        gen_config = generator_settings or generator_config(discriminator_config)
        for name in ("hidden_size", "num_hidden_layers", "intermediate_size"):
            if getattr(gen_config, name) > getattr(discriminator_config, name):
                raise ValueError(
                    f"the generator's {name} ({getattr(gen_config, name)}) is larger than the "
                    f"discriminator's ({getattr(discriminator_config, name)}); ELECTRA's "
                    f"generator must be at most the discriminator's size (best 1/4 to 1/2)")
        for name in ("vocab_size", "embedding_size", "max_position_embeddings",
                     "type_vocab_size"):
            if getattr(gen_config, name) != getattr(discriminator_config, name):
                raise ValueError(f"generator and discriminator must share the embeddings, so "
                                 f"{name} must be equal, got {getattr(gen_config, name)} and "
                                 f"{getattr(discriminator_config, name)}")
        self.rtd_weight = check_real("rtd_weight", rtd_weight, 0, above=True)
        seeds = np.random.SeedSequence(seed).generate_state(3)
        # One generator for both models' dropout and for the sampling: a checkpoint saves
        # its state, and a resumed run draws what the uninterrupted one would have.
        self.dropout_rng = np.random.default_rng(int(seeds[2]))
        self.generator = ElectraForMaskedLM(gen_config, seed=int(seeds[0]), dtype=dtype,
                                            _dropout_rng=self.dropout_rng)
        self.discriminator = ElectraForPreTraining(discriminator_config, seed=int(seeds[1]),
                                                   dtype=dtype, _dropout_rng=self.dropout_rng)
        # One array and one gradient buffer for both models: each backward adds into it.
        shared, own = self.generator.electra.embeddings, self.discriminator.electra.embeddings
        for name in SHARED_EMBEDDINGS:
            source, target = getattr(shared, name), getattr(own, name)
            for key in source.params:
                target.params[key] = source.params[key]
                target.grads[key] = source.grads[key]

    def sample(self, masked_logits: np.ndarray) -> np.ndarray:
        """One token per row of (M, V) logits, drawn from their softmax: (M,) ids.

        Inverse-CDF sampling with the trainer's random generator: a uniform u per row picks
        the first token whose cumulative probability exceeds u. Integers come out, so
        nothing differentiable connects them to the logits.
        """
        shifted = masked_logits - masked_logits.max(axis=-1, keepdims=True)
        probs = np.exp(shifted.astype(np.float64))
        cumulative = np.cumsum(probs, axis=-1)  # (M, V)
        uniform = self.dropout_rng.random(len(probs)) * cumulative[:, -1]  # (M,)
        picked = (cumulative < uniform[:, None]).sum(axis=-1)
        return np.minimum(picked, probs.shape[-1] - 1)

    def forward(self, input_ids, token_type_ids=None, attention_mask=None,
                labels=None, next_sentence_label=None) -> ElectraPreTrainerOutput:
        """A masked batch (B, T) -> ElectraPreTrainerOutput (losses, corrupted ids, ...).

        ``next_sentence_label`` must be None: ELECTRA trains no sentence-pair task."""
        if next_sentence_label is not None:
            raise ValueError("next_sentence_label must be None: ELECTRA has no sentence-pair "
                             "task (pretrain it with objective 'mlm')")
        if labels is None:
            raise ValueError("labels must be given: the original ids at the masked "
                             "positions, -100 elsewhere")
        generated = self.generator(input_ids, token_type_ids, attention_mask, labels=labels)
        input_ids = np.asarray(input_ids)
        labels = np.asarray(labels)
        positions = np.nonzero(labels != IGNORE_INDEX)
        original = np.where(labels != IGNORE_INDEX, labels, input_ids)  # (B, T) the real text
        corrupted = original.copy()
        corrupted[positions] = self.sample(generated.masked_lm_logits)  # ids: no gradient
        replaced = (corrupted != original).astype(np.int64)  # (B, T)
        judged = self.discriminator(corrupted, token_type_ids, attention_mask, labels=replaced)
        loss = generated.loss + self.rtd_weight * judged.loss
        return ElectraPreTrainerOutput(loss, generated.loss, judged.loss, corrupted, replaced,
                                       judged.logits, generated.masked_lm_logits,
                                       generated.masked_lm_positions)

    def backward(self) -> None:
        """Gradients of mlm_loss + rtd_weight * rtd_loss into both models (the shared
        embeddings receive both); the discriminator's never reach the generator's head."""
        self.discriminator.backward(self.rtd_weight)
        self.generator.backward(1.0)

    def _tied_aliases(self) -> dict[str, str]:
        return {"generator.generator_lm_head.weight":
                "generator.electra.embeddings.word_embeddings.weight"}

    def save_pretrained(self, directory, tokenizer=None):
        """The discriminator's folder at ``directory``, the generator's in ``directory``/generator:
        each one that ``from_pretrained`` (minibert's or transformers') opens."""
        from pathlib import Path

        self.discriminator.save_pretrained(directory, tokenizer)
        self.generator.save_pretrained(Path(directory) / GENERATOR_FOLDER, tokenizer)

    def state_from_folders(self, discriminator: dict, generator: dict) -> dict:
        """This trainer's state dict from the two folders' tensors (their HF names)."""
        return {**{f"discriminator.{k}": v for k, v in discriminator.items()},
                **{f"generator.{k}": v for k, v in generator.items()}}

    def load_state_dict(self, state, strict: bool = True):
        """As Module's; the shared embeddings may come under either model's name."""
        own = dict(self.named_parameters())
        state = {k: v for k, v in state.items()
                 if k in own or not k.startswith("discriminator.electra.embeddings.")}
        return super().load_state_dict(state, strict)
