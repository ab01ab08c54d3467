"""ALBERT (Lan et al., 2020, "ALBERT: A Lite BERT"): BERT with two ways to shrink it.

1. **Factorised embeddings.** BERT's word table is V x H, so a wide model pays for its
   width once per vocabulary entry. ALBERT keeps the tables narrow, V x E with E < H
   (E = 128 in all of the paper's models), and maps them up once with a dense E -> H
   (``encoder.embedding_hidden_mapping_in``): V*E + E*H numbers instead of V*H (paper,
   section 3.1). The MLM head mirrors it: dense H -> E, activation, LayerNorm(E), then the
   decoder E -> V, tied to the word table.
2. **Cross-layer parameter sharing.** The encoder runs L layers but owns only
   ``num_hidden_groups`` groups of ``inner_group_num`` blocks (one group of one block in
   the paper's models): layer l runs group ``l * G // L``. ALBERT-base has 12 layers and
   one block's worth of encoder weights.

**The backprop lesson.** A weight used L times receives the sum of the gradients of its L
uses, exactly as the tied decoder weight receives the sum of its two uses. The layers'
backward passes already add (``+=``) into their gradient buffers, so summing is free: run
the shared block's backward once per use, in reverse order, and each adds its share. What
needs care is the cache. A module keeps one ``self.cache``, the values of its *last*
forward, but the shared block runs L forwards before any backward: by then its caches hold
layer L-1's values only. ``AlbertTransformer`` therefore takes a snapshot of the group's
caches (every module of its subtree, each block's own page cache among them) after each use
and, in the backward, puts use l's snapshot back before running the group's backward for
layer l. Nothing is copied: a
snapshot holds references to the arrays the forward made, the same memory an unshared BERT
of L layers keeps. Forget the restore and every layer's backward reads layer L-1's
activations; write ``=`` instead of ``+=`` and only one layer's gradient survives. The
tests (tests/family/test_albert.py) show both mistakes caught by the gradient check, and the
shared gradient equal to the sum over an unshared model holding L copies of the weights.

Module tree and names follow HuggingFace ``modeling_albert.py``, so real ALBERT
checkpoints load key for key: ``albert.embeddings.word_embeddings.weight`` (V, E),
``albert.encoder.embedding_hidden_mapping_in.weight`` (H, E),
``albert.encoder.albert_layer_groups.0.albert_layers.0.attention.query.weight``, ...
``albert.pooler.weight``, ``predictions.dense.weight`` (E, H), ``predictions.bias``,
``sop_classifier.classifier.weight`` (2, H).

The block is BERT's, computed by the same page (``minibert.model.PageLayer``) over ALBERT's
modules. Two details follow HF rather than Google's TF code: the feed-forward output goes
into ``full_layer_layer_norm`` without a dropout (HF applies none there), and the
sentence-order head has its own dropout rate, ``classifier_dropout_prob``.

Dimension legend: B batch, T sequence length, E embedding size, H hidden size, N heads,
D head size, I intermediate size, V vocabulary size, L layers, G hidden groups,
M number of labelled (masked) positions.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

from minibert import hf_config
from minibert.base import (
    BertForPreTrainingOutput,
    BertModelOutput,
    EmbeddingWidthInitializer,
    Initializer,
    LazyLogits,
    PretrainedModel,
    ShapeCache,
    preserved_caches,
)
from minibert.config import BertFields, preset_sizes
from minibert.heads.pretraining import (
    BertWithHeads,
    MaskedLMModel,
    pretraining_backward,
    pretraining_losses,
)
from minibert.heads.tasks import PooledClassifier, label_config
from minibert.hf_config import ClassifierLabels, HFConfigFile
from minibert.layers import (
    CrossEntropyLoss,
    Embedding,
    Module,
    ModuleList,
    Tanh,
    TiedLinear,
    get_activation,
)
from minibert.model import (
    BertEmbeddings,
    BertModel,
    BertSelfAttention,
    PageLayer,
    padding_key_mask,
)

__all__ = [
    "AlbertConfig",
    "ALBERT_EMBEDDING_SIZES",
    "AlbertEmbeddings",
    "AlbertAttention",
    "AlbertLayer",
    "AlbertLayerGroup",
    "AlbertTransformer",
    "AlbertModel",
    "AlbertMLMHead",
    "AlbertSOPHead",
    "AlbertForPreTraining",
    "AlbertForMaskedLM",
    "AlbertForPreTrainingOutput",
    "AlbertForSequenceClassification",
]

# E of the presets: the paper uses E = 128 for every size; the tiny preset (H = 128) takes
# half its width instead, so that its embeddings are factorised too (V*64 + 64*128).
ALBERT_EMBEDDING_SIZES = {"tiny": 64, "mini": 128, "small": 128, "base": 128, "large": 128}


# ----------------------------------------------------------------------------------------
# Config
# ----------------------------------------------------------------------------------------


@dataclass(init=True, repr=False)
class _AlbertFields(BertFields):
    """The fields of ``AlbertConfig``, checked on construction (see ``AlbertConfig`` below)."""

    vocab_size: int = 30000  # V
    hidden_size: int = 4096  # H
    num_hidden_layers: int = 12  # L: layers run (not blocks owned; see num_hidden_groups)
    num_attention_heads: int = 64  # N
    intermediate_size: int = 16384  # I
    hidden_act: str = "gelu_new"  # ALBERT's default is the tanh form of GELU
    hidden_dropout_prob: float = 0.0  # ALBERT v2 trains without dropout
    attention_probs_dropout_prob: float = 0.0
    embedding_size: int = 128  # E: width of the embedding tables, mapped up to H
    num_hidden_groups: int = 1  # G: groups of shared blocks; layer l runs group l*G//L
    inner_group_num: int = 1  # blocks in each group, run one after the other
    classifier_dropout_prob: float = 0.1  # dropout before the SOP head and the classifier
    bos_token_id: Any = 2  # HF's; unused here
    eos_token_id: Any = 3  # HF's; unused here

    def __post_init__(self) -> None:
        super().__post_init__()
        hf_config.positive_int_fields(self, ("embedding_size", "num_hidden_groups",
                                             "inner_group_num"))
        if self.embedding_size > self.hidden_size:
            raise ValueError(
                f"embedding_size ({self.embedding_size}) must be at most hidden_size "
                f"({self.hidden_size}): ALBERT factorises the embeddings to shrink them "
                f"(V*E + E*H numbers instead of V*H), so E > H would only add parameters")
        if self.num_hidden_layers % self.num_hidden_groups:
            raise ValueError(
                f"num_hidden_layers ({self.num_hidden_layers}) must be divisible by "
                f"num_hidden_groups ({self.num_hidden_groups}): each group runs "
                f"L/G consecutive layers; allowed group counts divide {self.num_hidden_layers}")
        hf_config.dropout_fields(self, ("classifier_dropout_prob",))


class AlbertConfig(HFConfigFile, ClassifierLabels, _AlbertFields):
    """Hyperparameters of an ALBERT (HF ``AlbertConfig`` names and defaults = ALBERT-xxlarge).

    BertConfig's fields (checked the same way), HF's ALBERT defaults, and four more:
    ``embedding_size`` E (at most H: the factorisation is meant to shrink),
    ``num_hidden_groups`` G (must divide L), ``inner_group_num`` (blocks per group) and
    ``classifier_dropout_prob`` (the dropout before the sentence-order head and before
    the classifier of ``AlbertForSequenceClassification``). ``bos_token_id`` and
    ``eos_token_id`` are HF's and unused here; they are kept so config.json round-trips.
    Unknown config.json keys go to ``extra`` and are written back. The labels of a
    classifier (``num_labels``, ``id2label``, ``label2id``) work as in BertConfig.
    """

    model_type = "albert"

    def group_of_layer(self, layer: int) -> int:
        """The group layer ``layer`` runs: l * G // L (G consecutive runs of L/G layers)."""
        return layer * self.num_hidden_groups // self.num_hidden_layers

    @classmethod
    def preset(cls, name: str, **overrides) -> AlbertConfig:
        """BertConfig's preset sizes (L, H, N, I) with E from ``ALBERT_EMBEDDING_SIZES``.

        The tiny preset is L=2, H=128, N=2, I=512, E=64, one shared group.
        """
        sizes = {**preset_sizes(name), "embedding_size": ALBERT_EMBEDDING_SIZES[name]}
        return cls(**{**sizes, **overrides})

    def num_parameters_estimate(self) -> int:
        """Parameters of an AlbertModel (with pooler) of this size, computed from the config."""
        e, h, i = self.embedding_size, self.hidden_size, self.intermediate_size
        rows = self.vocab_size + self.max_position_embeddings + self.type_vocab_size
        embeddings = rows * e + 2 * e  # three tables of width E and LayerNorm(E)
        mapping_in = e * h + h
        attention = 4 * (h * h + h) + 2 * h  # query, key, value, dense, LayerNorm
        block = attention + (h * i + i) + (i * h + h) + 2 * h  # ffn, ffn_output, LayerNorm
        blocks = self.num_hidden_groups * self.inner_group_num  # owned, not run
        return embeddings + mapping_in + blocks * block + (h * h + h)

    # The size fields a "config.json does not belong to these weights" error quotes.
    SIZE_FIELDS = ("vocab_size", "embedding_size", "hidden_size", "num_hidden_layers",
                   "num_hidden_groups", "inner_group_num", "intermediate_size",
                   "max_position_embeddings", "type_vocab_size")

    def required_checkpoint_numbers(self) -> int:
        """The fewest numbers a checkpoint of this config holds: the encoder without pooler."""
        return self.num_parameters_estimate() - (self.hidden_size ** 2 + self.hidden_size)


# ----------------------------------------------------------------------------------------
# Embeddings: tables of width E
# ----------------------------------------------------------------------------------------


class AlbertEmbeddings(BertEmbeddings):
    """BERT's embeddings at width E: word + position + token_type, LayerNorm(E), dropout.

    ids (B, T) -> (B, T, E). The forward and backward are BertEmbeddings' own (the [PAD]
    row starts at 0 and gets no gradient from the lookup); only the width differs.
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__(EmbeddingWidthInitializer(init))


# ----------------------------------------------------------------------------------------
# The block
# ----------------------------------------------------------------------------------------


class AlbertAttention(BertSelfAttention):
    """Self-attention, its output projection and the residual LayerNorm, in one module.

    HF's ALBERT keeps ``query``, ``key``, ``value``, ``dense`` and ``LayerNorm`` side by
    side (BERT nests them in ``self`` and ``output``). The attention itself is
    BertSelfAttention's forward and backward; this class adds
    ``LayerNorm(x + dropout(dense(context)))`` around it. (B, T, H) -> (B, T, H).
    ``AlbertLayer`` runs the page over this module's parameters; the module also runs on its
    own, as here, and keeps the probabilities of the layer's last forward for heatmaps.
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__(init)
        hidden = init.config.hidden_size
        self.dense = init.linear(hidden, hidden)
        self.LayerNorm = init.layer_norm()
        self.output_dropout = init.dropout(init.config.hidden_dropout_prob)

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """hidden_states (B, T, H), mask bool (B, 1, 1, T) or None -> (B, T, H)."""
        context = super().forward(hidden_states, mask)  # (B, T, H)
        projected = self.output_dropout(self.dense(context))  # (B, T, H)
        return self.LayerNorm(projected + hidden_states)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d hidden_states (B, T, H)."""
        d_sum = self.LayerNorm.backward(dout)
        # forward: LayerNorm(projected + hidden_states): both receive d_sum
        d_context = self.dense.backward(self.output_dropout.backward(d_sum))
        return super().backward(d_context) + d_sum


class AlbertLayer(PageLayer):
    """One post-LN block: the page of ``minibert.model`` (``PageLayer``) over ALBERT's modules.

    attention, then ``full_layer_layer_norm(ffn_output(act(ffn(a))) + a)``, the activation
    from the config (``gelu_new`` by default). The hidden dropout sits after the attention's
    ``dense`` only: HF applies none after ``ffn_output``. The page's cache is this module's
    own ``cache``, which ``AlbertTransformer`` snapshots after each use with the others.
    """

    HIDDEN_DROPOUT_SITES = ("attention_output",)

    def __init__(self, init: Initializer) -> None:
        super().__init__(init)
        config = init.config
        # Attribute order = HF's, so named_parameters() lists them in HF's order.
        self.full_layer_layer_norm = init.layer_norm()
        self.attention = AlbertAttention(init)
        self.ffn = init.linear(config.hidden_size, config.intermediate_size)
        self.ffn_output = init.linear(config.intermediate_size, config.hidden_size)
        self.activation = get_activation(config.hidden_act)

    def holders(self) -> tuple[tuple[str, Module], ...]:
        """(page name, module) of each Linear and LayerNorm (BERT's name -> ALBERT's module)."""
        attention = self.attention
        return (("attention.self.query", attention.query),
                ("attention.self.key", attention.key),
                ("attention.self.value", attention.value),
                ("attention.output.dense", attention.dense),
                ("attention.output.LayerNorm", attention.LayerNorm),
                ("intermediate.dense", self.ffn),
                ("output.dense", self.ffn_output),
                ("output.LayerNorm", self.full_layer_layer_norm))

    def step_modules(self) -> tuple[tuple[str, Module], ...]:
        """(page cache field, module) of the steps without parameters."""
        return (("attention", self.attention.attention),
                ("attention_output_dropout", self.attention.output_dropout),
                ("intermediate_act", self.activation))


class AlbertLayerGroup(Module):
    """``inner_group_num`` blocks run one after the other: ``albert_layers.0``, ..."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        self.albert_layers = ModuleList(AlbertLayer(init)
                                        for _ in range(init.config.inner_group_num))

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None,
                outputs: list | None = None) -> np.ndarray:
        """(B, T, H) -> (B, T, H); appends each block's output to ``outputs`` when given."""
        for block in self.albert_layers:
            hidden_states = block(hidden_states, mask)
            if outputs is not None:
                outputs.append(hidden_states)
        return hidden_states

    def backward(self, dout: np.ndarray) -> np.ndarray:
        for block in reversed(list(self.albert_layers)):
            dout = block.backward(dout)
        return dout


class EncoderCache(NamedTuple):
    # One entry per layer run, in forward order: (group index, the caches of every module
    # of that group's subtree right after this use, in ``named_modules`` order).
    uses: tuple


class AlbertTransformer(Module):
    """dense E -> H, then L layers that reuse ``num_hidden_groups`` groups of blocks.

    Layer l runs group ``l * G // L``. After each use the group's caches are snapshotted;
    the backward restores use l's snapshot before running the group's backward for layer
    l, so each use differentiates its own activations and adds its gradient (``+=``) into
    the one set of shared buffers. See the module docstring.
    """

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        self.num_hidden_layers = config.num_hidden_layers
        self.group_of_layer = config.group_of_layer
        self.embedding_hidden_mapping_in = init.linear(config.embedding_size, config.hidden_size)
        self.albert_layer_groups = ModuleList(AlbertLayerGroup(init)
                                              for _ in range(config.num_hidden_groups))

    def _group_modules(self, group_index: int) -> list[Module]:
        """Every module of a group's subtree, the ones whose caches a use overwrites."""
        return [m for _, m in self.albert_layer_groups[group_index].named_modules()]

    def forward(self, embedding_output: np.ndarray, mask: np.ndarray | None,
                output_hidden_states: bool = False, output_attentions: bool = False):
        """embedding_output (B, T, E) -> (last hidden (B, T, H), hidden states, attentions).

        Hidden states (when asked): the mapped input, then every block's output, 1 + L *
        inner_group_num arrays (B, T, H); attentions: one (B, N, T, T) per block run.
        """
        hidden_states = self.embedding_hidden_mapping_in(embedding_output)  # (B, T, H)
        all_hidden = [hidden_states] if output_hidden_states else None
        attentions = [] if output_attentions else None
        uses = []
        for layer in range(self.num_hidden_layers):
            group_index = self.group_of_layer(layer)
            group = self.albert_layer_groups[group_index]
            hidden_states = group(hidden_states, mask, all_hidden)  # (B, T, H)
            # The next use of this group overwrites these caches: keep this use's.
            uses.append((group_index, tuple(m.cache for m in self._group_modules(group_index))))
            if attentions is not None:
                attentions.extend(block.attention.attention_probs for block in group.albert_layers)
        self.cache = EncoderCache(tuple(uses))
        return (hidden_states, None if all_hidden is None else tuple(all_hidden),
                None if attentions is None else tuple(attentions))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d embedding_output (B, T, E)."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        for group_index, caches in reversed(self.cache.uses):
            dout = self._backward_one_use(group_index, caches, dout)
        return self.embedding_hidden_mapping_in.backward(dout)

    def _backward_one_use(self, group_index: int, caches: tuple, dout: np.ndarray) -> np.ndarray:
        """Put one use's caches back into its group, then run the group's backward.

        The group's layers add (+=) into their gradient buffers, so after all L uses each
        shared parameter holds the sum of its L gradients.
        """
        for module, cache in zip(self._group_modules(group_index), caches, strict=True):
            module.cache = cache
        return self.albert_layer_groups[group_index].backward(dout)


# ----------------------------------------------------------------------------------------
# AlbertModel
# ----------------------------------------------------------------------------------------


class AlbertModel(PretrainedModel, Module):
    """Embeddings (width E), the shared encoder and (optionally) the pooler: HF ``AlbertModel``.

    The pooler is HF's ``pooler`` (a dense H -> H, no sub-module) and ``pooler_activation``
    (tanh) on the [CLS] position.
    """

    config_class = AlbertConfig
    base_model_prefix = "albert"
    head_prefixes = ("predictions.", "sop_classifier.")

    def __init__(self, config: AlbertConfig, seed: int = 0, dtype=np.float32,
                 add_pooling_layer: bool = True, *, _init: Initializer | None = None) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype, _init)
        self.embeddings = AlbertEmbeddings(init)
        self.encoder = AlbertTransformer(init)
        self.pooler = self.pooler_activation = None
        if add_pooling_layer:
            self.pooler = init.linear(config.hidden_size, config.hidden_size)
            self.pooler_activation = Tanh()

    # The same checks as BertModel: ids within the tables, shapes, a 0/1 mask; the same
    # upstream gradient of the sequence output.
    check_inputs = BertModel.check_inputs
    sequence_gradient = BertModel.sequence_gradient

    def forward(self, input_ids, token_type_ids=None, attention_mask=None,
                output_attentions: bool = False,
                output_hidden_states: bool = False) -> BertModelOutput:
        """input_ids, token_type_ids, attention_mask int (B, T) -> BertModelOutput.

        last_hidden_state (B, T, H), pooler_output (B, H) or None; hidden_states and
        attentions as ``AlbertTransformer.forward`` describes.
        """
        input_ids, token_type_ids, attention_mask = self.check_inputs(
            input_ids, token_type_ids, attention_mask)
        key_mask = padding_key_mask(attention_mask)  # (B, 1, 1, T) or None
        embedding_output = self.embeddings(input_ids, token_type_ids)  # (B, T, E)
        sequence_output, hidden_states, attentions = self.encoder(
            embedding_output, key_mask, output_hidden_states, output_attentions)
        pooled = None
        if self.pooler is not None:
            pooled = self.pooler_activation(self.pooler(sequence_output[:, 0]))  # (B, H)
        self.cache = ShapeCache(sequence_output.shape)
        return BertModelOutput(sequence_output, pooled, hidden_states, attentions)

    def backward(self, d_last_hidden_state: np.ndarray | None,
                 d_pooler_output: np.ndarray | None = None) -> None:
        """Add the gradients of sum(last * d_last) + sum(pooled * d_pooled) into every parameter.

        d_last_hidden_state (B, T, H) or None; d_pooler_output (B, H) or None.
        """
        d_sequence = self.sequence_gradient(d_last_hidden_state)  # (B, T, H)
        if d_pooler_output is not None:
            if self.pooler is None:
                raise ValueError("d_pooler_output given but this AlbertModel has no pooler")
            # forward: pooled = tanh(pooler(sequence_output[:, 0]))
            d_sequence[:, 0] += self.pooler.backward(
                self.pooler_activation.backward(d_pooler_output))
        self.embeddings.backward(self.encoder.backward(d_sequence))


# ----------------------------------------------------------------------------------------
# Heads
# ----------------------------------------------------------------------------------------


class AlbertMLMHead(Module):
    """dense H -> E, activation, LayerNorm(E), then logits = x @ word_embeddings.T + bias.

    The decoder weight is the (V, E) word table (tied, not registered here); its gradient
    from this use is added into the table's own gradient buffer.
    """

    def __init__(self, init: Initializer, word_embeddings: Embedding) -> None:
        super().__init__()
        config = init.config
        # Attribute order = HF's (bias, LayerNorm, dense) for named_parameters().
        self.add_parameter("bias", np.zeros(config.vocab_size, dtype=init.dtype))
        self.LayerNorm = EmbeddingWidthInitializer(init).layer_norm()
        self.dense = init.linear(config.hidden_size, config.embedding_size)
        self.activation = get_activation(config.hidden_act)
        self.decoder = TiedLinear(word_embeddings)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V)."""
        narrowed = self.LayerNorm(self.activation(self.dense(hidden_states)))  # (..., E)
        return self.decoder(narrowed, self.params["bias"])

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (..., V) -> d hidden_states (..., H)."""
        d_narrowed, d_bias = self.decoder.backward(dout)  # adds into the word table
        self.grads["bias"] += d_bias
        return self.dense.backward(self.activation.backward(self.LayerNorm.backward(d_narrowed)))

    def predict(self, hidden_states: np.ndarray) -> np.ndarray:
        """Logits without touching the caches a pending backward needs."""
        with preserved_caches(self):
            return self.forward(hidden_states)


class AlbertSOPHead(Module):
    """Sentence-order prediction: dropout(classifier_dropout_prob), then dense H -> 2."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        self.dropout = init.dropout(init.config.classifier_dropout_prob)
        self.classifier = init.linear(init.config.hidden_size, 2)

    def forward(self, pooled_output: np.ndarray) -> np.ndarray:
        """(B, H) -> logits (B, 2): 0 = A then B (in order), 1 = swapped."""
        return self.classifier(self.dropout(pooled_output))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.dropout.backward(self.classifier.backward(dout))


# ----------------------------------------------------------------------------------------
# Pretraining models
# ----------------------------------------------------------------------------------------


class AlbertForPreTrainingOutput(BertForPreTrainingOutput):
    """Outputs of AlbertForPreTraining: BertForPreTrainingOutput's fields, with HF's ALBERT
    names for the pair task: ``sop_logits`` (B, 2) and ``sentence_order_loss`` read
    ``seq_relationship_logits`` and ``next_sentence_loss``."""

    @property
    def sop_logits(self) -> np.ndarray | None:
        return self.seq_relationship_logits

    @property
    def sentence_order_loss(self) -> float | None:
        return self.next_sentence_loss


_ALBERT_DECODER_ALIASES = {
    "predictions.decoder.weight": "albert.embeddings.word_embeddings.weight",
    "predictions.decoder.bias": "predictions.bias",
}


class _AlbertWithHeads(BertWithHeads):
    """An ``albert`` and heads on top: BertWithHeads' MLM loss plumbing, ALBERT's names."""

    config_class = AlbertConfig
    base_model_prefix = "albert"
    head_prefixes = ("predictions.", "sop_classifier.")

    def _build_albert(self, config: AlbertConfig, seed: int, dtype,
                      add_pooling_layer: bool = True) -> Initializer:
        """Set ``config`` and ``albert``; returns the initializer for the heads."""
        init = self.adopt_config(config, seed, dtype)
        self.albert = AlbertModel(config, add_pooling_layer=add_pooling_layer, _init=init)
        return init

    def _tied_aliases(self) -> dict[str, str]:
        return dict(_ALBERT_DECODER_ALIASES)


class AlbertForPreTraining(_AlbertWithHeads):
    """ALBERT with both pretraining heads; loss = MLM cross-entropy + SOP cross-entropy.

    As BertForPreTraining (and unlike HF, which returns ``loss=None`` unless both label
    arrays are given), the loss is the sum of whichever parts have labels.
    """

    def __init__(self, config: AlbertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_albert(config, seed, dtype)
        self.predictions = AlbertMLMHead(init, self.albert.embeddings.word_embeddings)
        self.sop_classifier = AlbertSOPHead(init)
        self.sop_loss = CrossEntropyLoss()

    def forward(self, input_ids, token_type_ids=None, attention_mask=None, labels=None,
                sentence_order_label=None, output_attentions: bool = False,
                output_hidden_states: bool = False) -> AlbertForPreTrainingOutput:
        """input_ids etc. int (B, T); labels int (B, T) with -100 where no target;
        sentence_order_label int (B,), 0 = A then B (in order), 1 = swapped."""
        self.cache = None  # what the backward needs; stays None without any label
        albert = self.albert(input_ids, token_type_ids, attention_mask, output_attentions,
                             output_hidden_states)
        sequence_output = albert.last_hidden_state  # (B, T, H)
        # sentence-order prediction: two logits from the pooled [CLS] vector
        sop_logits = self.sop_classifier(albert.pooler_output)  # (B, 2)
        # BERT's two losses (heads.pretraining), with SOP in the place of NSP
        losses = pretraining_losses(sequence_output, sop_logits, labels, sentence_order_label,
                                    self.predictions, self.sop_loss, self.config.vocab_size,
                                    "sentence_order_label", "0 = A then B, 1 = swapped")
        self.cache = losses.cache
        return AlbertForPreTrainingOutput(
            seq_relationship_logits=sop_logits, hidden_states=albert.hidden_states,
            attentions=albert.attentions, **losses.output_fields(),
            _prediction_logits=LazyLogits(lambda: self.predictions.predict(sequence_output)))

    def backward(self, mlm_weight: float = 1.0, sop_weight: float = 1.0) -> None:
        """Add d loss / d parameter into every gradient buffer (call zero_grad() between steps).

        The loss differentiated is ``mlm_weight * masked_lm_loss + sop_weight *
        sentence_order_loss``; 1 and 1 give the forward's ``loss`` (other weights as
        BertForPreTraining.backward's, for a shard's share of a batch).
        """
        d_sequence, d_pooled = pretraining_backward(
            self.cache, mlm_weight, sop_weight, self.predictions, self.sop_classifier,
            self.sop_loss, "sentence_order_label", "sop_weight")
        self.cache = None  # one backward per forward
        self.albert.backward(d_sequence, d_pooled)


class AlbertForMaskedLM(_AlbertWithHeads, MaskedLMModel):
    """ALBERT (no pooler, as HF) with the MLM head only."""

    def __init__(self, config: AlbertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_albert(config, seed, dtype, add_pooling_layer=False)
        self.predictions = AlbertMLMHead(init, self.albert.embeddings.word_embeddings)

    @property
    def mlm_predictions(self) -> AlbertMLMHead:
        return self.predictions



# ----------------------------------------------------------------------------------------
# Fine-tuning: sequence classification
# ----------------------------------------------------------------------------------------


class AlbertForSequenceClassification(PooledClassifier, _AlbertWithHeads):
    """ALBERT + a linear classifier on the pooled [CLS] vector: HF's class of that name.

    pooled (B, H) -> dropout(``classifier_dropout_prob``) -> ``classifier`` (H -> C);
    loss = mean cross-entropy (HF's "single_label_classification"; one label, HF's
    regression, is not implemented). Labels as in ``BertForSequenceClassification``:
    ``num_labels`` from the argument, else ``id2label``, else the config, kept in the
    config so that ``save_pretrained`` writes them. ``from_pretrained`` of an
    AlbertForPreTraining or AlbertForMaskedLM folder keeps the encoder, skips the
    pretraining heads (named in a warning) and initializes ``classifier`` from ``seed``;
    an AlbertForMaskedLM folder has no pooler, which is then initialized too and named in
    the same warning, as HF does.
    """

    # Weights a checkpoint may lack (initialized from the seed, named in a warning).
    head_prefixes = ("predictions.", "sop_classifier.", "classifier.", "albert.pooler.")

    def __init__(self, config: AlbertConfig, seed: int = 0, dtype=np.float32, num_labels=None,
                 id2label=None) -> None:
        super().__init__()
        config = label_config(config, num_labels, id2label)
        init = self._build_albert(config, seed, dtype, add_pooling_layer=True)
        self.dropout = init.dropout(config.classifier_dropout_prob)
        self.classifier = init.linear(config.hidden_size, config.num_labels)
        self.loss_fct = CrossEntropyLoss()

    def _tied_aliases(self) -> dict[str, str]:
        return {}  # no MLM decoder here
