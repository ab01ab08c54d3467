"""BERT built from the layers: embeddings, encoder stack, pooler, MLM and NSP heads.

The module tree and attribute names mirror HuggingFace ``modeling_bert.py`` so that
parameter names (``bert.encoder.layer.0.attention.self.query.weight``, ...) and real
checkpoints match without renaming. Every module has ``forward`` and ``backward``;
``BertForPreTraining.backward()`` differentiates the loss of its last forward.

What a module keeps between its forward and its backward is ``self.cache``, a named
tuple defined next to the module (None before the first forward), as in ``layers``.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size,
I intermediate size, V vocabulary size, M number of labelled (masked) positions.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert import _kernels as K
from minibert import functional as F
from minibert.checks import IGNORE_INDEX, as_int_array, check_ids, check_int, check_real
from minibert.config import BertConfig
from minibert.layers import (
    Dropout,
    Embedding,
    LayerNorm,
    Linear,
    Module,
    ModuleList,
    Tanh,
    get_activation,
)

__all__ = [
    "BertEmbeddings",
    "BertSelfAttention",
    "BertSelfOutput",
    "BertAttention",
    "BertIntermediate",
    "BertOutput",
    "BertLayer",
    "BertEncoder",
    "BertPooler",
    "BertModel",
    "BertPredictionHeadTransform",
    "BertLMPredictionHead",
    "BertPreTrainingHeads",
    "BertOnlyMLMHead",
    "BertOnlyNSPHead",
    "BertForPreTraining",
    "BertForMaskedLM",
    "BertForNextSentencePrediction",
    "BertModelOutput",
    "BertForPreTrainingOutput",
    "MaskedLMOutput",
    "NextSentencePredictorOutput",
    "IGNORE_INDEX",
]


class _Init:
    """Seeded initializer shared by the modules of one model (BERT's scheme)."""

    def __init__(self, config: BertConfig, rng: np.random.Generator, dropout_rng, dtype):
        self.config = config
        self.rng = rng
        self.dropout_rng = dropout_rng
        self.dtype = np.dtype(dtype)
        if self.dtype not in (np.float32, np.float64):
            raise TypeError(f"dtype must be float32 or float64, got {self.dtype}")

    def linear(self, n_in: int, n_out: int) -> Linear:
        return Linear(n_in, n_out, self.rng, self.config.initializer_range, dtype=self.dtype)

    def embedding(self, rows: int) -> Embedding:
        return Embedding(
            rows, self.config.hidden_size, self.rng, self.config.initializer_range, dtype=self.dtype
        )

    def layer_norm(self) -> LayerNorm:
        return LayerNorm(self.config.hidden_size, self.config.layer_norm_eps, dtype=self.dtype)

    def dropout(self, p: float) -> Dropout:
        return Dropout(p, self.dropout_rng)


# ----------------------------------------------------------------------------------------
# Embeddings
# ----------------------------------------------------------------------------------------


class BertEmbeddings(Module):
    """word + position + token_type embeddings, then LayerNorm and dropout."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        config = init.config
        self.word_embeddings = init.embedding(config.vocab_size)
        self.position_embeddings = init.embedding(config.max_position_embeddings)
        self.token_type_embeddings = init.embedding(config.type_vocab_size)
        self.LayerNorm = init.layer_norm()
        self.dropout = init.dropout(config.hidden_dropout_prob)
        self.pad_token_id = config.pad_token_id
        if self.pad_token_id is not None:
            # As HF (nn.Embedding padding_idx): the [PAD] row starts at 0, gets no gradient.
            self.word_embeddings.params["weight"][self.pad_token_id] = 0.0

    def forward(self, input_ids: np.ndarray, token_type_ids: np.ndarray) -> np.ndarray:
        """input_ids, token_type_ids int (B, T) -> embeddings (B, T, H)."""
        seq_len = input_ids.shape[1]
        words = self.word_embeddings(input_ids)  # (B, T, H)
        positions = self.position_embeddings(np.arange(seq_len))  # (T, H)
        types = self.token_type_embeddings(token_type_ids)  # (B, T, H)
        summed = words + positions + types  # (B, T, H)
        return self.dropout(self.LayerNorm(summed))

    def backward(self, dout: np.ndarray) -> None:
        """dout (B, T, H); adds into the three tables and the LayerNorm."""
        d_summed = self.LayerNorm.backward(self.dropout.backward(dout))  # (B, T, H)
        # forward: summed = words + positions[None] + types
        grad_before = None
        if self.pad_token_id is not None:
            grad_before = self.word_embeddings.grads["weight"][self.pad_token_id].copy()
        self.word_embeddings.backward(d_summed)
        if grad_before is not None:
            self.word_embeddings.grads["weight"][self.pad_token_id] = grad_before
        self.position_embeddings.backward(d_summed.sum(axis=0))  # (T, H)
        self.token_type_embeddings.backward(d_summed)


# ----------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------


class SelfAttentionCache(NamedTuple):
    attention: F.AttentionCache  # q, k, v (B, N, T, D), the probabilities, dropout
    fused_qkv: F.LinearCache | None  # the one q/k/v product of the fast path, else None


class BertSelfAttention(Module):
    """Multi-head scaled dot-product self-attention, all heads batched.

    The three projections are named by ``PROJECTIONS`` (BERT's ``query``, ``key``,
    ``value``); a subclass with other names (DistilBERT's ``q_lin``, ...) changes only that.
    """

    PROJECTIONS = ("query", "key", "value")

    def __init__(self, init: _Init) -> None:
        super().__init__()
        config = init.config
        hidden = config.hidden_size
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.head_size
        for name in self.PROJECTIONS:
            setattr(self, name, init.linear(hidden, hidden))
        self.dropout_p = config.attention_probs_dropout_prob
        self.dropout_rng = init.dropout_rng

    def _projections(self) -> tuple[Linear, Linear, Linear]:
        """The query, key and value projections, in that order."""
        return tuple(getattr(self, name) for name in self.PROJECTIONS)

    @property
    def attention_probs(self) -> np.ndarray | None:
        """(B, N, T, T) probabilities of the last forward (before dropout), for heatmaps."""
        return None if self.cache is None else self.cache.attention.attention_probs

    def _split_heads(self, x: np.ndarray) -> np.ndarray:
        batch, seq_len, _ = x.shape
        x = x.reshape(batch, seq_len, self.num_attention_heads, self.attention_head_size)
        return x.transpose(0, 2, 1, 3)  # (B, N, T, D)

    @staticmethod
    def _merge_heads(x: np.ndarray) -> np.ndarray:
        batch, heads, seq_len, head_size = x.shape
        return x.transpose(0, 2, 1, 3).reshape(batch, seq_len, heads * head_size)  # (B, T, H)

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """hidden_states (B, T, H), mask bool (B, 1, 1, T) or None -> context (B, T, H)."""
        projections = self._projections()
        fused = None
        # One (B*T, H) x (H, 3H) product instead of three, when all three are plain Linears
        # (a LoRA adapter, minibert.lora, adds its own path: each projection runs alone).
        if K.fast_kernels_enabled() and all(type(p) is Linear for p in projections):
            qkv, fused = K.qkv_forward(hidden_states, [p.params["weight"] for p in projections],
                                       [p.params["bias"] for p in projections])
        else:
            qkv = [projection(hidden_states) for projection in projections]  # 3 x (B, T, H)
        q, k, v = (self._split_heads(x) for x in qkv)  # (B, N, T, D) each
        context, attention = K.fast(F.attention_forward)(
            q, k, v, mask, dropout_p=self.dropout_p, rng=self.dropout_rng, training=self.training
        )
        self.cache = SelfAttentionCache(attention, fused)
        return self._merge_heads(context)  # (B, T, H)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d hidden_states (B, T, H)."""
        head_grads = K.fast(F.attention_backward)(self._split_heads(dout),
                                                  self.cache.attention)  # dq, dk, dv
        projections = self._projections()
        if self.cache.fused_qkv is None:
            # forward: q = query(x), k = key(x), v = value(x); x receives all three
            return sum(p.backward(self._merge_heads(g)) for p, g in zip(projections, head_grads))
        d_hidden, grads = K.qkv_backward(head_grads, self.cache.fused_qkv)
        for projection, (dweight, dbias) in zip(projections, grads):
            projection.grads["weight"] += dweight
            projection.grads["bias"] += dbias
        return d_hidden


class _DenseResidualLayerNorm(Module):
    """dense, dropout, then LayerNorm(x + residual): the post-LN residual connection.

    HF has two copies of this sublayer, ``BertSelfOutput`` after attention (dense H -> H)
    and ``BertOutput`` after the feed-forward (dense I -> H); both are defined below with
    HF's names on top of this one.
    """

    def __init__(self, init: _Init, in_features: int) -> None:
        super().__init__()
        self.dense = init.linear(in_features, init.config.hidden_size)
        self.LayerNorm = init.layer_norm()
        self.dropout = init.dropout(init.config.hidden_dropout_prob)

    def forward(self, hidden_states: np.ndarray, input_tensor: np.ndarray) -> np.ndarray:
        """hidden_states (B, T, in), input_tensor (B, T, H) residual -> (B, T, H)."""
        hidden_states = self.dropout(self.dense(hidden_states))
        return self.LayerNorm(hidden_states + input_tensor)

    def backward(self, dout: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Returns (d hidden_states, d input_tensor)."""
        d_sum = self.LayerNorm.backward(dout)
        # forward: LayerNorm(branch + input_tensor): both receive d_sum
        d_hidden = self.dense.backward(self.dropout.backward(d_sum))
        return d_hidden, d_sum


class BertSelfOutput(_DenseResidualLayerNorm):
    """The residual sublayer after attention: dense H -> H, dropout, LayerNorm(x + residual)."""

    def __init__(self, init: _Init) -> None:
        super().__init__(init, init.config.hidden_size)


class BertAttention(Module):
    """Self-attention followed by its output projection and residual LayerNorm."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.self = BertSelfAttention(init)
        self.output = BertSelfOutput(init)

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        return self.output(self.self(hidden_states, mask), hidden_states)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_context, d_residual = self.output.backward(dout)
        return self.self.backward(d_context) + d_residual


# ----------------------------------------------------------------------------------------
# Feed-forward and the block
# ----------------------------------------------------------------------------------------


class BertIntermediate(Module):
    """dense H -> I and the activation (GELU by default)."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.dense = init.linear(init.config.hidden_size, init.config.intermediate_size)
        self.intermediate_act_fn = get_activation(init.config.hidden_act)

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(B, T, H) -> (B, T, I)."""
        return self.intermediate_act_fn(self.dense(hidden_states))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.dense.backward(self.intermediate_act_fn.backward(dout))


class BertOutput(_DenseResidualLayerNorm):
    """The residual sublayer after the feed-forward: dense I -> H, dropout, LayerNorm."""

    def __init__(self, init: _Init) -> None:
        super().__init__(init, init.config.intermediate_size)


class BertLayer(Module):
    """One post-LN transformer block: attention sublayer, then feed-forward sublayer."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.attention = BertAttention(init)
        self.intermediate = BertIntermediate(init)
        self.output = BertOutput(init)

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """(B, T, H) -> (B, T, H)."""
        attention_output = self.attention(hidden_states, mask)  # (B, T, H)
        return self.output(self.intermediate(attention_output), attention_output)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_intermediate, d_attention_output = self.output.backward(dout)
        d_attention_output = d_attention_output + self.intermediate.backward(d_intermediate)
        return self.attention.backward(d_attention_output)


class BertEncoder(Module):
    """A stack of BertLayer: ``encoder.layer.0`` ... ``encoder.layer.{L-1}``."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.layer = ModuleList(BertLayer(init) for _ in range(init.config.num_hidden_layers))

    def forward(
        self, hidden_states: np.ndarray, mask: np.ndarray | None, output_hidden_states: bool = False
    ):
        """Returns (last hidden (B, T, H), tuple of L+1 hidden states or None)."""
        all_hidden = [hidden_states] if output_hidden_states else None
        for block in self.layer:
            hidden_states = block(hidden_states, mask)
            if all_hidden is not None:
                all_hidden.append(hidden_states)
        return hidden_states, (tuple(all_hidden) if all_hidden is not None else None)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        for block in reversed(list(self.layer)):
            dout = block.backward(dout)
        return dout


class ShapeCache(NamedTuple):
    shape: tuple  # the forward's input or output shape, for a backward that builds zeros


class BertPooler(Module):
    """dense + tanh on the [CLS] position: the sentence vector the NSP head reads."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.dense = init.linear(init.config.hidden_size, init.config.hidden_size)
        self.activation = Tanh()

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(B, T, H) -> (B, H)."""
        self.cache = ShapeCache(hidden_states.shape)
        return self.activation(self.dense(hidden_states[:, 0]))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, H) -> d hidden_states (B, T, H), nonzero only at position 0."""
        d_first = self.dense.backward(self.activation.backward(dout))  # (B, H)
        d_hidden = np.zeros(self.cache.shape, dtype=d_first.dtype)
        d_hidden[:, 0] = d_first
        return d_hidden


# ----------------------------------------------------------------------------------------
# BertModel
# ----------------------------------------------------------------------------------------


@dataclass
class BertModelOutput:
    """Outputs of BertModel (HF field names)."""

    last_hidden_state: np.ndarray  # (B, T, H)
    pooler_output: np.ndarray | None = None  # (B, H)
    hidden_states: tuple | None = None  # L+1 arrays (B, T, H): embeddings, then each layer
    attentions: tuple | None = None  # L arrays (B, N, T, T)


class _CheckpointIO:
    """``from_pretrained`` / ``save_pretrained`` for every model class (see checkpoint.py)."""

    @classmethod
    def from_pretrained(cls, directory, dtype=np.float32, seed: int = 0, **kwargs):
        """Load a checkpoint folder (config.json + model.safetensors), ours or HF's."""
        from minibert.io.checkpoint import load_pretrained

        return load_pretrained(cls, directory, dtype=dtype, seed=seed, **kwargs)

    def save_pretrained(self, directory, tokenizer=None):
        """Write config.json + model.safetensors (+ vocab.txt given a tokenizer)."""
        from minibert.io.checkpoint import save_pretrained

        return save_pretrained(self, directory, tokenizer)


class BertModel(_CheckpointIO, Module):
    """Embeddings, encoder and (optionally) pooler: HF ``BertModel``."""

    def __init__(
        self,
        config: BertConfig,
        seed: int = 0,
        dtype=np.float32,
        add_pooling_layer: bool = True,
        *,
        _init: _Init | None = None,
    ) -> None:
        super().__init__()
        if not isinstance(config, BertConfig):
            raise TypeError(f"config must be a BertConfig, got {type(config).__name__}")
        init = _init or make_init(config, seed, dtype)
        self.config = config
        self.dropout_rng = init.dropout_rng
        self.embeddings = BertEmbeddings(init)
        self.encoder = BertEncoder(init)
        self.pooler = BertPooler(init) if add_pooling_layer else None

    def check_inputs(self, input_ids, token_type_ids=None, attention_mask=None):
        """Validate and normalize the three id arrays; returns int64 arrays (B, T)."""
        config = self.config
        input_ids = as_int_array("input_ids", input_ids)
        if input_ids.ndim == 1:
            input_ids = input_ids[None]
        if input_ids.ndim != 2 or input_ids.shape[1] == 0:
            raise ValueError(
                f"input_ids must be 2-D (B, T) with T >= 1, got shape {input_ids.shape}"
            )
        check_ids("input_ids", input_ids, config.vocab_size, "the vocabulary size")
        if input_ids.shape[1] > config.max_position_embeddings:
            raise ValueError(
                f"input_ids has sequence length {input_ids.shape[1]}, longer than "
                f"max_position_embeddings={config.max_position_embeddings}"
            )
        if token_type_ids is None:
            token_type_ids = np.zeros_like(input_ids)
        else:
            token_type_ids = as_int_array("token_type_ids", token_type_ids)
            if token_type_ids.ndim == 1 and input_ids.shape[0] == 1:
                token_type_ids = token_type_ids[None]
            if token_type_ids.shape != input_ids.shape:
                raise ValueError(
                    f"token_type_ids must have the shape of input_ids "
                    f"{input_ids.shape}, got {token_type_ids.shape}"
                )
            check_ids("token_type_ids", token_type_ids, config.type_vocab_size,
                      "type_vocab_size")
        if attention_mask is None:
            attention_mask = np.ones_like(input_ids)
        else:
            attention_mask = as_int_array("attention_mask", attention_mask)
            if attention_mask.ndim == 1 and input_ids.shape[0] == 1:
                attention_mask = attention_mask[None]
            if attention_mask.shape != input_ids.shape:
                raise ValueError(
                    f"attention_mask must have the shape of input_ids "
                    f"{input_ids.shape}, got {attention_mask.shape}"
                )
            if attention_mask.size and (attention_mask.min() < 0 or attention_mask.max() > 1):
                raise ValueError(
                    "attention_mask must contain only 0 (padding) and 1 (real "
                    f"token), got values {np.unique(attention_mask)[:5].tolist()}"
                )
        return input_ids, token_type_ids, attention_mask

    def forward(
        self,
        input_ids,
        token_type_ids=None,
        attention_mask=None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> BertModelOutput:
        """input_ids, token_type_ids, attention_mask int (B, T) -> BertModelOutput."""
        input_ids, token_type_ids, attention_mask = self.check_inputs(
            input_ids, token_type_ids, attention_mask
        )
        # Keys at padding positions are hidden from every query: (B, 1, 1, T).
        key_mask = attention_mask[:, None, None, :].astype(bool)
        if key_mask.all():
            key_mask = None  # nothing to hide: skip the masking work
        embedding_output = self.embeddings(input_ids, token_type_ids)  # (B, T, H)
        sequence_output, hidden_states = self.encoder(
            embedding_output, key_mask, output_hidden_states
        )
        pooled = self.pooler(sequence_output) if self.pooler is not None else None
        self.cache = ShapeCache(sequence_output.shape)
        attentions = None
        if output_attentions:
            attentions = tuple(block.attention.self.attention_probs for block in self.encoder.layer)
        return BertModelOutput(sequence_output, pooled, hidden_states, attentions)

    def backward(
        self, d_last_hidden_state: np.ndarray | None, d_pooler_output: np.ndarray | None = None
    ) -> None:
        """Add the gradients of sum(last * d_last) + sum(pooled * d_pooled) into every parameter.

        d_last_hidden_state (B, T, H) or None; d_pooler_output (B, H) or None.
        """
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        shape = self.cache.shape
        if d_last_hidden_state is None:
            d_sequence = np.zeros(shape, dtype=self.dtype)
        else:
            if d_last_hidden_state.shape != shape:
                raise ValueError(
                    f"d_last_hidden_state must have shape {shape}, "
                    f"got {d_last_hidden_state.shape}"
                )
            d_sequence = d_last_hidden_state.astype(self.dtype, copy=True)
        if d_pooler_output is not None:
            if self.pooler is None:
                raise ValueError("d_pooler_output given but this BertModel has no pooler")
            d_sequence += self.pooler.backward(d_pooler_output)
        self.embeddings.backward(self.encoder.backward(d_sequence))


def make_init(config: BertConfig, seed: int, dtype) -> _Init:
    """The initializer a model hands to each of its modules, seeded by ``seed``.

    Shared with heads.py, not public API (not in ``__all__``).
    """
    seed = check_int("seed", seed, minimum=0)
    # Two independent streams: one for the initial weights, one for dropout masks.
    init_seq, dropout_seq = np.random.SeedSequence(int(seed)).spawn(2)
    return _Init(config, np.random.default_rng(init_seq), np.random.default_rng(dropout_seq), dtype)


# ----------------------------------------------------------------------------------------
# Heads
# ----------------------------------------------------------------------------------------


class BertPredictionHeadTransform(Module):
    """dense H -> H, activation, LayerNorm: applied before the vocabulary projection."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.dense = init.linear(init.config.hidden_size, init.config.hidden_size)
        self.transform_act_fn = get_activation(init.config.hidden_act)
        self.LayerNorm = init.layer_norm()

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        return self.LayerNorm(self.transform_act_fn(self.dense(hidden_states)))

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return self.dense.backward(self.transform_act_fn.backward(self.LayerNorm.backward(dout)))


class BertLMPredictionHead(Module):
    """Transform, then logits = x @ word_embeddings.T + bias (the decoder weight is tied).

    The word-embedding array is not registered here (it belongs to the embeddings and is
    listed once); its gradient from this use is added into the same buffer as the
    embedding's own gradient.
    """

    def __init__(self, init: _Init, word_embeddings: Embedding) -> None:
        super().__init__()
        self.transform = BertPredictionHeadTransform(init)
        self.add_parameter("bias", np.zeros(init.config.vocab_size, dtype=init.dtype))
        object.__setattr__(self, "word_embeddings", word_embeddings)  # tied, not a child

    def forward(self, hidden_states: np.ndarray) -> np.ndarray:
        """(..., H) -> logits (..., V)."""
        transformed = self.transform(hidden_states)
        logits, self.cache = F.linear_forward(
            transformed, self.word_embeddings.params["weight"], self.params["bias"]
        )
        return logits

    def backward(self, dout: np.ndarray) -> np.ndarray:
        d_transformed, d_decoder_weight, d_bias = K.fast(F.linear_backward)(dout, self.cache)
        self.word_embeddings.grads["weight"] += d_decoder_weight  # tied: gradients add
        self.grads["bias"] += d_bias
        return self.transform.backward(d_transformed)

    def predict(self, hidden_states: np.ndarray) -> np.ndarray:
        """Logits without touching the caches a pending backward needs."""
        with _preserved_caches(self):
            return self.forward(hidden_states)


class _preserved_caches:
    """Context manager: snapshot and restore the caches of a module tree."""

    def __init__(self, module: Module) -> None:
        self.modules = [m for _, m in module.named_modules()]

    def __enter__(self):
        self.saved = [m.cache for m in self.modules]

    def __exit__(self, *exc):
        for module, cache in zip(self.modules, self.saved):
            object.__setattr__(module, "cache", cache)
        return False


class BertOnlyMLMHead(Module):
    """``cls.predictions`` alone (BertForMaskedLM)."""

    def __init__(self, init: _Init, word_embeddings: Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(init, word_embeddings)


class BertOnlyNSPHead(Module):
    """``cls.seq_relationship`` alone (BertForNextSentencePrediction)."""

    def __init__(self, init: _Init) -> None:
        super().__init__()
        self.seq_relationship = init.linear(init.config.hidden_size, 2)


class BertPreTrainingHeads(Module):
    """``cls.predictions`` (MLM) and ``cls.seq_relationship`` (NSP, 2 classes)."""

    def __init__(self, init: _Init, word_embeddings: Embedding) -> None:
        super().__init__()
        self.predictions = BertLMPredictionHead(init, word_embeddings)
        self.seq_relationship = init.linear(init.config.hidden_size, 2)


# ----------------------------------------------------------------------------------------
# Pretraining models
# ----------------------------------------------------------------------------------------


class _LazyLogits:
    """A value computed on first access, then kept (full-vocabulary logits are costly)."""

    def __init__(self, compute: Callable[[], np.ndarray]) -> None:
        self.compute = compute
        self.value = None

    def get(self) -> np.ndarray:
        if self.value is None:
            self.value = self.compute()
        return self.value


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
    _prediction_logits: _LazyLogits | None = None

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
    _logits: _LazyLogits | None = None

    @property
    def logits(self) -> np.ndarray:
        """(B, T, V) MLM logits at every position (computed on first access)."""
        return self._logits.get()


@dataclass
class NextSentencePredictorOutput:
    loss: float | None
    logits: np.ndarray  # (B, 2)
    hidden_states: tuple | None = None
    attentions: tuple | None = None


class MaskedLMCache(NamedTuple):
    positions: tuple  # (batch index, position) arrays of the M labelled positions
    cross_entropy: F.CrossEntropyCache  # over the (M, V) logits
    sequence_shape: tuple  # (B, T, H)


class PreTrainingCache(NamedTuple):
    mlm: MaskedLMCache | None  # None when the forward had no MLM labels
    nsp: F.CrossEntropyCache | None  # None when it had no next-sentence labels


class BertWithHeads(_CheckpointIO, Module):
    """Shared plumbing of the models that hold a ``bert`` and heads on top of it.

    The base of the pretraining models here and of the task heads in heads.py; not public
    API (not in ``__all__``). Its ``cache`` holds what the loss backward needs; None means
    the last forward computed no loss.
    """

    config: BertConfig

    def _build_bert(self, config: BertConfig, seed: int, dtype,
                    add_pooling_layer: bool = True) -> _Init:
        """Set ``config`` and ``bert``; returns the initializer for the heads."""
        init = make_init(config, seed, dtype)
        self.config = config
        self.dropout_rng = init.dropout_rng
        self.bert = BertModel(config, add_pooling_layer=add_pooling_layer, _init=init)
        return init

    def _pop_cache(self, needs: str = "labels"):
        """The loss cache of the last forward, cleared (one backward per forward)."""
        if self.cache is None:
            raise RuntimeError(f"backward() needs a forward pass with {needs} first")
        cache, self.cache = self.cache, None
        return cache

    def _mlm_forward(self, head: BertLMPredictionHead, sequence_output, labels):
        """Only labelled positions go through the decoder: (M, H) -> (M, V)."""
        labels = as_int_array("labels", labels)
        if labels.shape != sequence_output.shape[:2]:
            raise ValueError(f"labels must have the shape of input_ids "
                             f"{sequence_output.shape[:2]}, got {labels.shape}")
        check_ids("labels", labels, self.config.vocab_size, "the vocabulary size",
                  ignore=IGNORE_INDEX)
        positions = np.nonzero(labels != IGNORE_INDEX)
        logits = head(sequence_output[positions])  # (M, V)
        loss, cross_entropy = K.fast(F.cross_entropy_forward)(logits, labels[positions])
        return float(loss), logits, MaskedLMCache(positions, cross_entropy,
                                                  sequence_output.shape)

    @staticmethod
    def _mlm_backward(head: BertLMPredictionHead, cache: MaskedLMCache,
                      dloss: float) -> np.ndarray:
        d_logits = K.fast(F.cross_entropy_backward)(dloss, cache.cross_entropy)  # (M, V)
        d_gathered = head.backward(d_logits)  # (M, H)
        d_sequence = np.zeros(cache.sequence_shape, dtype=d_gathered.dtype)  # (B, T, H)
        d_sequence[cache.positions] = d_gathered  # each position appears once
        return d_sequence

    @staticmethod
    def _nsp_forward(linear: Linear, pooled, next_sentence_label):
        """Returns (loss or None, logits (B, 2), cross-entropy cache or None)."""
        logits = linear(pooled)  # (B, 2)
        if next_sentence_label is None:
            return None, logits, None
        label = as_int_array("next_sentence_label", next_sentence_label)
        if label.shape != (pooled.shape[0],):
            raise ValueError(
                f"next_sentence_label must have shape (B,) = ({pooled.shape[0]},), "
                f"got {label.shape}"
            )
        check_ids("next_sentence_label", label, 2, "0 = B follows A, 1 = B is random")
        loss, cross_entropy = K.fast(F.cross_entropy_forward)(logits, label)
        return float(loss), logits, cross_entropy

    @staticmethod
    def _nsp_backward(linear: Linear, cache: F.CrossEntropyCache, dloss: float) -> np.ndarray:
        return linear.backward(K.fast(F.cross_entropy_backward)(dloss, cache))


# HF also lists the MLM decoder under these keys: the tied word embeddings and the head's bias.
_MLM_DECODER_ALIASES = {
    "cls.predictions.decoder.weight": "bert.embeddings.word_embeddings.weight",
    "cls.predictions.decoder.bias": "cls.predictions.bias",
}


class _WithMLMDecoder(BertWithHeads):
    """A model whose MLM decoder is tied to the word embeddings, listed under HF's aliases."""

    def _tied_aliases(self) -> dict[str, str]:
        return dict(_MLM_DECODER_ALIASES)


class BertForPreTraining(_WithMLMDecoder):
    """BERT with both pretraining heads; loss = MLM cross-entropy + NSP cross-entropy.

    The MLM loss is the mean over positions whose label is not -100. Unlike HF (which
    returns ``loss=None`` unless both label arrays are given), the loss is the sum of
    whichever parts have labels, so the same model trains MLM-only.
    """

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_bert(config, seed, dtype)
        self.cls = BertPreTrainingHeads(init, self.bert.embeddings.word_embeddings)

    def forward(
        self,
        input_ids,
        token_type_ids=None,
        attention_mask=None,
        labels=None,
        next_sentence_label=None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> BertForPreTrainingOutput:
        """input_ids etc. int (B, T); labels int (B, T) with -100 where no target;
        next_sentence_label int (B,), 0 = B follows A, 1 = B is random."""
        self.cache = None
        base = self.bert(
            input_ids, token_type_ids, attention_mask, output_attentions, output_hidden_states
        )
        sequence_output, pooled = base.last_hidden_state, base.pooler_output
        predictions = self.cls.predictions
        mlm_loss = masked_logits = mlm_cache = None
        if labels is not None:
            mlm_loss, masked_logits, mlm_cache = self._mlm_forward(
                predictions, sequence_output, labels
            )
        nsp_loss, nsp_logits, nsp_cache = self._nsp_forward(
            self.cls.seq_relationship, pooled, next_sentence_label
        )
        parts = [p for p in (mlm_loss, nsp_loss) if p is not None]
        loss = float(sum(parts)) if parts else None
        if parts:
            self.cache = PreTrainingCache(mlm_cache, nsp_cache)
        return BertForPreTrainingOutput(
            loss=loss,
            seq_relationship_logits=nsp_logits,
            hidden_states=base.hidden_states,
            attentions=base.attentions,
            masked_lm_loss=mlm_loss,
            next_sentence_loss=nsp_loss,
            masked_lm_logits=masked_logits,
            masked_lm_positions=None if mlm_cache is None else mlm_cache.positions,
            _prediction_logits=_LazyLogits(lambda: predictions.predict(sequence_output)),
        )

    def backward(self, mlm_weight: float = 1.0, nsp_weight: float = 1.0) -> None:
        """Add d loss / d parameter into every gradient buffer (call zero_grad() between steps).

        The loss differentiated is ``mlm_weight * masked_lm_loss + nsp_weight *
        next_sentence_loss``: 1 and 1 give the forward's ``loss``. Other weights let a part
        of a batch contribute its share of the whole batch's mean (data parallelism and
        gradient accumulation, see minibert.training.parallel).
        """
        mlm_weight = check_real("mlm_weight", mlm_weight)
        nsp_weight = check_real("nsp_weight", nsp_weight)
        cache = self._pop_cache("labels and/or next_sentence_label")
        d_sequence = d_pooled = None
        if cache.mlm is not None:
            d_sequence = self._mlm_backward(self.cls.predictions, cache.mlm, mlm_weight)
        if cache.nsp is not None:
            d_pooled = self._nsp_backward(self.cls.seq_relationship, cache.nsp, nsp_weight)
        self.bert.backward(d_sequence, d_pooled)


class BertForMaskedLM(_WithMLMDecoder):
    """BERT (no pooler, as HF) with the MLM head only."""

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_bert(config, seed, dtype, add_pooling_layer=False)
        self.cls = BertOnlyMLMHead(init, self.bert.embeddings.word_embeddings)

    def forward(
        self,
        input_ids,
        token_type_ids=None,
        attention_mask=None,
        labels=None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> MaskedLMOutput:
        self.cache = None
        base = self.bert(
            input_ids, token_type_ids, attention_mask, output_attentions, output_hidden_states
        )
        sequence_output = base.last_hidden_state
        predictions = self.cls.predictions
        loss = masked_logits = positions = None
        if labels is not None:
            loss, masked_logits, self.cache = self._mlm_forward(predictions, sequence_output,
                                                                labels)
            positions = self.cache.positions
        return MaskedLMOutput(
            loss,
            base.hidden_states,
            base.attentions,
            masked_logits,
            positions,
            _LazyLogits(lambda: predictions.predict(sequence_output)),
        )

    def backward(self, mlm_weight: float = 1.0) -> None:
        """Add the gradient of ``mlm_weight * loss`` into every gradient buffer."""
        mlm_weight = check_real("mlm_weight", mlm_weight)
        cache = self._pop_cache()
        self.bert.backward(self._mlm_backward(self.cls.predictions, cache, mlm_weight))


class BertForNextSentencePrediction(BertWithHeads):
    """BERT with the NSP head only (logits from the pooled [CLS])."""

    def __init__(self, config: BertConfig, seed: int = 0, dtype=np.float32) -> None:
        super().__init__()
        init = self._build_bert(config, seed, dtype)
        self.cls = BertOnlyNSPHead(init)

    def forward(
        self,
        input_ids,
        token_type_ids=None,
        attention_mask=None,
        labels=None,
        output_attentions: bool = False,
        output_hidden_states: bool = False,
    ) -> NextSentencePredictorOutput:
        """labels int (B,): 0 = B follows A, 1 = B is random."""
        self.cache = None
        base = self.bert(
            input_ids, token_type_ids, attention_mask, output_attentions, output_hidden_states
        )
        loss, logits, self.cache = self._nsp_forward(self.cls.seq_relationship,
                                                     base.pooler_output, labels)
        return NextSentencePredictorOutput(loss, logits, base.hidden_states, base.attentions)

    def backward(self) -> None:
        cache = self._pop_cache()
        self.bert.backward(None, self._nsp_backward(self.cls.seq_relationship, cache, 1.0))
