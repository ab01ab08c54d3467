"""BERT's encoder built from the layers: embeddings, the block stack, the pooler.

The block is written once, on one page, llm.c style: ``bert_layer_forward`` with every step
on its own line and its shape, kept in one named cache, and ``bert_layer_backward`` with
every step under the forward line it inverts (the derivations are in docs/backprop.md).
``PageLayer`` runs that page over the parameters a block's modules hold; ``BertLayer`` is one
such block, and so are ALBERT's and DistilBERT's (``minibert.family``), which only name their
modules and where their hidden dropout sits.

The module tree and attribute names mirror HuggingFace ``modeling_bert.py`` so that
parameter names (``bert.encoder.layer.0.attention.self.query.weight``, ...) and real
checkpoints match without renaming. Every module has ``forward`` and ``backward``; the
sublayers (``BertSelfAttention``, ``BertSelfOutput``, ``BertIntermediate``, ``BertOutput``)
also run on their own, for the notebooks that build the block piece by piece. The
pretraining heads (MLM, NSP) and the fine-tuning heads on top of ``BertModel`` are in
``minibert.heads``; what every model shares (initializer, checkpoints, outputs) in
``minibert.base``.

What a module keeps between its forward and its backward is ``self.cache``, a named
tuple defined next to the module (None before the first forward), as in ``layers``.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size,
I intermediate size, V vocabulary size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.base import BertModelOutput, Initializer, PretrainedModel, ShapeCache
from minibert.checks import as_int_array
from minibert.config import HIDDEN_ACTS, BertConfig
from minibert.layers import (
    LayerNorm,
    Linear,
    Module,
    ModuleList,
    ScaledDotProductAttention,
    Tanh,
    get_activation,
    merge_heads,
    split_heads,
)

__all__ = [
    "LAYER_PARAMETERS",
    "FlatLayerCache",
    "bert_layer_forward",
    "bert_layer_backward",
    "HIDDEN_DROPOUT_SITES",
    "BertEmbeddings",
    "BertSelfAttention",
    "BertSelfOutput",
    "BertAttention",
    "BertIntermediate",
    "BertOutput",
    "PageLayer",
    "BertLayer",
    "BertEncoder",
    "BertPooler",
    "BertModel",
    "BertModelOutput",
    "padding_key_mask",
]


# ----------------------------------------------------------------------------------------
# Embeddings
# ----------------------------------------------------------------------------------------


class BertEmbeddings(Module):
    """word + position + token_type embeddings, then LayerNorm and dropout."""

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        # The tables check the ids they look up, and their errors name the model's arguments.
        self.word_embeddings = init.word_embeddings()
        self.position_embeddings = init.embedding(config.max_position_embeddings)
        self.token_type_embeddings = init.embedding(config.type_vocab_size,
                                                    ids_name="token_type_ids")
        self.LayerNorm = init.layer_norm()
        self.dropout = init.dropout(config.hidden_dropout_prob)

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
        self.word_embeddings.backward(d_summed)
        self.position_embeddings.backward(d_summed.sum(axis=0))  # (T, H)
        self.token_type_embeddings.backward(d_summed)


# ----------------------------------------------------------------------------------------
# The block on one page: one BERT layer's forward, then its backward in reverse
# ----------------------------------------------------------------------------------------

# One layer's parameters, named as in ``bert.encoder.layer.0.<name>``.
LAYER_PARAMETERS = (
    "attention.self.query.weight", "attention.self.query.bias",
    "attention.self.key.weight", "attention.self.key.bias",
    "attention.self.value.weight", "attention.self.value.bias",
    "attention.output.dense.weight", "attention.output.dense.bias",
    "attention.output.LayerNorm.weight", "attention.output.LayerNorm.bias",
    "intermediate.dense.weight", "intermediate.dense.bias",
    "output.dense.weight", "output.dense.bias",
    "output.LayerNorm.weight", "output.LayerNorm.bias",
)
# hidden_act -> GELU's form, for the activations that are a GELU (the other one is "relu")
GELU_FORMS = {"gelu": "none", "gelu_new": "tanh", "gelu_pytorch_tanh": "tanh"}
# Where the hidden dropout may sit, named as the cache keeps it: after attention.output.dense
# and after output.dense. BERT has both; ALBERT only the first, DistilBERT only the second.
HIDDEN_DROPOUT_SITES = ("attention_output", "output")


class FlatLayerCache(NamedTuple):
    num_heads: int
    query: F.LinearCache  # x (B, T, H) -> q (B, T, H)
    key: F.LinearCache
    value: F.LinearCache
    attention: F.AttentionCache  # over the heads (B, N, T, D), dropout on the probabilities
    attention_output_dense: F.LinearCache  # merged context (B, T, H) -> (B, T, H)
    attention_output_dropout: F.DropoutCache | None  # None when dropout is off
    attention_output_layernorm: F.LayerNormCache  # of x + the attention branch
    intermediate_dense: F.LinearCache  # (B, T, H) -> (B, T, I)
    hidden_act: str  # the activation's HF name
    intermediate_act: F.GeluCache | np.ndarray  # GELU's cache, or ReLU's mask x > 0
    output_dense: F.LinearCache  # (B, T, I) -> (B, T, H)
    output_dropout: F.DropoutCache | None
    output_layernorm: F.LayerNormCache  # of attention_output + the feed-forward branch


def bert_layer_forward(x: np.ndarray, p: dict, mask: np.ndarray | None, num_heads: int,
                       eps: float = 1e-12, hidden_act: str = "gelu",
                       attention_dropout: float = 0.0, hidden_dropout: float = 0.0,
                       rng: np.random.Generator | None = None, training: bool = False, *,
                       hidden_dropout_sites: tuple[str, ...] = HIDDEN_DROPOUT_SITES):
    """One post-LN BERT layer, every step on its own line.

    Inputs: x (B, T, H); p, the parameters by the names of ``LAYER_PARAMETERS``; mask
    broadcastable to (B, N, T, T), nonzero = may attend (padding: (B, 1, 1, T)), or None;
    num_heads N; eps, the LayerNorms'; hidden_act, the feed-forward's activation by its HF
    name; attention_dropout and hidden_dropout, the config's attention_probs_dropout_prob and
    hidden_dropout_prob, drawn from rng when training, in BERT's order (the probabilities,
    after attention.output.dense, after output.dense); hidden_dropout_sites, which of the two
    hidden sites (``HIDDEN_DROPOUT_SITES``) have a dropout (BERT: both; a site left out draws
    nothing). The defaults are eval mode. Output: out (B, T, H). Cache: FlatLayerCache.
    """
    if hidden_act not in HIDDEN_ACTS:
        raise ValueError(f"hidden_act must be one of {list(HIDDEN_ACTS)}, got {hidden_act!r}")
    if not isinstance(hidden_dropout_sites, (tuple, list)) or not all(
            site in HIDDEN_DROPOUT_SITES for site in hidden_dropout_sites):
        raise ValueError(f"hidden_dropout_sites must be a tuple of names from "
                         f"{list(HIDDEN_DROPOUT_SITES)}, got {hidden_dropout_sites!r}")
    # the hidden dropout's rate at each site: 0 (the identity, no draw) where there is none
    attention_output_p = hidden_dropout if "attention_output" in hidden_dropout_sites else 0.0
    output_p = hidden_dropout if "output" in hidden_dropout_sites else 0.0
    # self-attention: every head at once
    q, query = F.linear_forward(x, p["attention.self.query.weight"],
                                p["attention.self.query.bias"])  # (B, T, H)
    k, key = F.linear_forward(x, p["attention.self.key.weight"],
                              p["attention.self.key.bias"])  # (B, T, H)
    v, value = F.linear_forward(x, p["attention.self.value.weight"],
                                p["attention.self.value.bias"])  # (B, T, H)
    context, attention = F.attention_forward(split_heads(q, num_heads), split_heads(k, num_heads),
                                             split_heads(v, num_heads), mask, attention_dropout,
                                             rng, training)  # (B, N, T, D)
    attended, attention_output_dense = F.linear_forward(
        merge_heads(context), p["attention.output.dense.weight"],
        p["attention.output.dense.bias"])  # (B, T, H)
    attended, attention_output_dropout = F.dropout_forward(attended, attention_output_p, rng,
                                                           training)  # (B, T, H)
    # residual 1, then LayerNorm
    attention_output, attention_output_layernorm = F.layernorm_forward(
        x + attended, p["attention.output.LayerNorm.weight"],
        p["attention.output.LayerNorm.bias"], eps)  # (B, T, H)
    # feed-forward: H -> I, the activation, I -> H
    hidden, intermediate_dense = F.linear_forward(attention_output, p["intermediate.dense.weight"],
                                                  p["intermediate.dense.bias"])  # (B, T, I)
    if hidden_act == "relu":
        activated, intermediate_act = F.relu_forward(hidden)  # (B, T, I)
    else:
        activated, intermediate_act = F.gelu_forward(hidden, GELU_FORMS[hidden_act])  # (B, T, I)
    ffn, output_dense = F.linear_forward(activated, p["output.dense.weight"],
                                         p["output.dense.bias"])  # (B, T, H)
    ffn, output_dropout = F.dropout_forward(ffn, output_p, rng, training)  # (B, T, H)
    # residual 2, then LayerNorm
    out, output_layernorm = F.layernorm_forward(attention_output + ffn,
                                                p["output.LayerNorm.weight"],
                                                p["output.LayerNorm.bias"], eps)  # (B, T, H)
    return out, FlatLayerCache(num_heads, query, key, value, attention, attention_output_dense,
                               attention_output_dropout, attention_output_layernorm,
                               intermediate_dense, hidden_act, intermediate_act, output_dense,
                               output_dropout, output_layernorm)


def bert_layer_backward(dout: np.ndarray, cache: FlatLayerCache):
    """dout (B, T, H) -> (dx (B, T, H), the gradient of every parameter by its name)."""
    c, grads = cache, {}
    # forward: out = LayerNorm(attention_output + ffn)
    d_sum, grads["output.LayerNorm.weight"], grads["output.LayerNorm.bias"] = \
        F.layernorm_backward(dout, c.output_layernorm)  # (B, T, H)
    # forward: ffn = dropout(output.dense(activated))
    d_activated, grads["output.dense.weight"], grads["output.dense.bias"] = \
        F.linear_backward(F.dropout_backward(d_sum, c.output_dropout), c.output_dense)  # (B, T, I)
    # forward: activated = hidden_act(hidden)
    if c.hidden_act == "relu":
        d_hidden = F.relu_backward(d_activated, c.intermediate_act)  # (B, T, I)
    else:
        d_hidden = F.gelu_backward(d_activated, c.intermediate_act)  # (B, T, I)
    # forward: hidden = intermediate.dense(attention_output)
    d_attention_output, grads["intermediate.dense.weight"], grads["intermediate.dense.bias"] = \
        F.linear_backward(d_hidden, c.intermediate_dense)  # (B, T, H)
    d_attention_output += d_sum  # residual 2: attention_output also reached the sum directly
    # forward: attention_output = LayerNorm(x + attended)
    d_sum, grads["attention.output.LayerNorm.weight"], grads["attention.output.LayerNorm.bias"] = \
        F.layernorm_backward(d_attention_output, c.attention_output_layernorm)  # (B, T, H)
    # forward: attended = dropout(attention.output.dense(merge_heads(context)))
    d_merged, grads["attention.output.dense.weight"], grads["attention.output.dense.bias"] = \
        F.linear_backward(F.dropout_backward(d_sum, c.attention_output_dropout),
                          c.attention_output_dense)  # (B, T, H)
    # forward: context = attention(q, k, v) over the heads
    dq, dk, dv = F.attention_backward(split_heads(d_merged, c.num_heads), c.attention)
    # forward: q, k, v = query(x), key(x), value(x)
    d_from_q, grads["attention.self.query.weight"], grads["attention.self.query.bias"] = \
        F.linear_backward(merge_heads(dq), c.query)  # (B, T, H)
    d_from_k, grads["attention.self.key.weight"], grads["attention.self.key.bias"] = \
        F.linear_backward(merge_heads(dk), c.key)  # (B, T, H)
    d_from_v, grads["attention.self.value.weight"], grads["attention.self.value.bias"] = \
        F.linear_backward(merge_heads(dv), c.value)  # (B, T, H)
    # x fed q, k, v and, directly, residual 1: its four gradients add up
    dx = d_from_q + d_from_k + d_from_v + d_sum  # (B, T, H)
    return dx, grads


# ----------------------------------------------------------------------------------------
# Attention
# ----------------------------------------------------------------------------------------


class BertSelfAttention(Module):
    """Multi-head scaled dot-product self-attention, all heads batched."""

    PROJECTIONS = ("query", "key", "value")  # the projections' names, for tools that read them

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        hidden = config.hidden_size
        self.num_attention_heads = config.num_attention_heads
        self.attention_head_size = config.head_size
        self.query = init.linear(hidden, hidden)
        self.key = init.linear(hidden, hidden)
        self.value = init.linear(hidden, hidden)
        self.attention = ScaledDotProductAttention(config.attention_probs_dropout_prob,
                                                   init.dropout_rng)

    @property
    def attention_probs(self) -> np.ndarray | None:
        """(B, N, T, T) probabilities of the last forward (before dropout), for heatmaps."""
        return self.attention.attention_probs

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """hidden_states (B, T, H), mask bool (B, 1, 1, T) or None -> context (B, T, H)."""
        heads = self.num_attention_heads
        q = split_heads(self.query(hidden_states), heads)  # (B, N, T, D)
        k = split_heads(self.key(hidden_states), heads)  # (B, N, T, D)
        v = split_heads(self.value(hidden_states), heads)  # (B, N, T, D)
        context = self.attention(q, k, v, mask)  # (B, N, T, D)
        return merge_heads(context)  # (B, T, H)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d hidden_states (B, T, H)."""
        dq, dk, dv = self.attention.backward(split_heads(dout, self.num_attention_heads))
        # forward: q = query(x), k = key(x), v = value(x): x fed all three, so its
        # gradients add up (merge_heads undoes split_heads)
        return (self.query.backward(merge_heads(dq)) + self.key.backward(merge_heads(dk))
                + self.value.backward(merge_heads(dv)))


class _DenseResidualLayerNorm(Module):
    """dense, dropout, then LayerNorm(x + residual): the post-LN residual connection.

    HF has two copies of this sublayer, ``BertSelfOutput`` after attention (dense H -> H)
    and ``BertOutput`` after the feed-forward (dense I -> H); both are defined below with
    HF's names on top of this one.
    """

    def __init__(self, init: Initializer, in_features: int) -> None:
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

    def __init__(self, init: Initializer) -> None:
        super().__init__(init, init.config.hidden_size)


class BertAttention(Module):
    """Self-attention followed by its output projection and residual LayerNorm."""

    def __init__(self, init: Initializer) -> None:
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

    def __init__(self, init: Initializer) -> None:
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

    def __init__(self, init: Initializer) -> None:
        super().__init__(init, init.config.intermediate_size)


# The page's cache field of the step that uses each holder's parameters (the holder's name
# is the page's parameter name without ".weight" or ".bias").
HOLDER_STEPS = {
    "attention.self.query": "query",
    "attention.self.key": "key",
    "attention.self.value": "value",
    "attention.output.dense": "attention_output_dense",
    "attention.output.LayerNorm": "attention_output_layernorm",
    "intermediate.dense": "intermediate_dense",
    "output.dense": "output_dense",
    "output.LayerNorm": "output_layernorm",
}


class PageLayer(Module):
    """A post-LN block that runs the page, ``bert_layer_forward`` and ``bert_layer_backward``,
    over the parameters its modules hold: BERT's ``BertLayer``, ALBERT's and DistilBERT's
    blocks. The block is computed in one place; a family's block only says where its modules
    are and where its hidden dropout sits:

    - ``holders()``: (page name, module) of each Linear and LayerNorm, the page's name being
      its ``LAYER_PARAMETERS`` name without ``.weight`` / ``.bias``;
    - ``step_modules()``: (cache field, module) of the steps without parameters (the
      attention, the activation, the dropouts the family has), each of which is handed its
      step's cache after the forward, as if it had run its own;
    - ``HIDDEN_DROPOUT_SITES``, a class attribute: where the hidden dropout sits (by default
      at both of the page's sites, as BERT; ALBERT and DistilBERT name one each).

    A Linear's place may hold an adapter instead (``minibert.lora.LoRALinear``): the page then
    multiplies by the one weight the adapter computes with, ``merged_parameters()``, and the
    adapter turns that weight's gradient into its own, ``merged_backward(dweight)``.
    The page's cache is the block's own ``self.cache`` (FlatLayerCache).
    """

    HIDDEN_DROPOUT_SITES = HIDDEN_DROPOUT_SITES

    def __init__(self, init: Initializer) -> None:
        super().__init__()
        config = init.config
        self.num_heads = config.num_attention_heads
        self.eps = config.layer_norm_eps
        self.hidden_act = config.hidden_act
        self.attention_dropout = config.attention_probs_dropout_prob
        self.hidden_dropout = config.hidden_dropout_prob
        self.dropout_rng = init.dropout_rng  # the generator every dropout of the model draws from

    def holders(self) -> tuple[tuple[str, Module], ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def step_modules(self) -> tuple[tuple[str, Module], ...]:  # pragma: no cover - abstract
        raise NotImplementedError

    def page_parameters(self) -> dict[str, np.ndarray]:
        """The page's ``p``: every parameter by its name in ``LAYER_PARAMETERS`` (the layer's
        own arrays; an adapter's merged weight)."""
        p = {}
        for name, holder in self.holders():
            if isinstance(holder, (Linear, LayerNorm)):
                p[f"{name}.weight"] = holder.params["weight"]
                p[f"{name}.bias"] = holder.params["bias"]
            else:  # an adapter in the Linear's place
                p[f"{name}.weight"], p[f"{name}.bias"] = holder.merged_parameters()
        return p

    def forward(self, hidden_states: np.ndarray, mask: np.ndarray | None) -> np.ndarray:
        """(B, T, H), mask bool (B, 1, 1, T) or None -> (B, T, H)."""
        out, self.cache = bert_layer_forward(
            hidden_states, self.page_parameters(), mask, self.num_heads, self.eps,
            self.hidden_act, self.attention_dropout, self.hidden_dropout, self.dropout_rng,
            self.training, hidden_dropout_sites=self.HIDDEN_DROPOUT_SITES)
        self.hand_caches_to_modules()
        return out

    def hand_caches_to_modules(self) -> None:
        """Give each module the cache of the page's step that used it, so that every module's
        cache holds what its step kept, as if it had run its own forward (heatmaps read the
        attention's ``attention_probs``; notebooks read the caches). An adapter keeps its own
        (its step multiplied by the merged weight)."""
        for name, holder in self.holders():
            if isinstance(holder, (Linear, LayerNorm)):  # not an adapter
                holder.cache = getattr(self.cache, HOLDER_STEPS[name])
        for field, module in self.step_modules():
            module.cache = getattr(self.cache, field)

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (B, T, H) -> d hidden_states (B, T, H); adds into every parameter's gradient."""
        dx, grads = bert_layer_backward(dout, self.cache)
        for name, holder in self.holders():
            if isinstance(holder, (Linear, LayerNorm)):
                holder.grads["weight"] += grads[f"{name}.weight"]
                holder.grads["bias"] += grads[f"{name}.bias"]
            else:  # an adapter: its own gradients from the merged weight's
                holder.merged_backward(grads[f"{name}.weight"])
        return dx


class BertLayer(PageLayer):
    """One post-LN transformer block: the page run over the parameters its sublayer modules
    hold (HF's names), dropout at both hidden sites (``PageLayer`` runs it)."""

    def __init__(self, init: Initializer) -> None:
        super().__init__(init)
        self.attention = BertAttention(init)
        self.intermediate = BertIntermediate(init)
        self.output = BertOutput(init)

    def holders(self) -> tuple[tuple[str, Module], ...]:
        """(name, module) of each Linear and LayerNorm of the layer, named as the page's
        ``LAYER_PARAMETERS`` continue them (``"attention.self.query"`` + ``".weight"``)."""
        attention, output = self.attention, self.output
        return (("attention.self.query", attention.self.query),
                ("attention.self.key", attention.self.key),
                ("attention.self.value", attention.self.value),
                ("attention.output.dense", attention.output.dense),
                ("attention.output.LayerNorm", attention.output.LayerNorm),
                ("intermediate.dense", self.intermediate.dense),
                ("output.dense", output.dense),
                ("output.LayerNorm", output.LayerNorm))

    def step_modules(self) -> tuple[tuple[str, Module], ...]:
        """(page cache field, module) of the steps without parameters."""
        return (("attention", self.attention.self.attention),
                ("attention_output_dropout", self.attention.output.dropout),
                ("intermediate_act", self.intermediate.intermediate_act_fn),
                ("output_dropout", self.output.dropout))


class BertEncoder(Module):
    """A stack of BertLayer: ``encoder.layer.0`` ... ``encoder.layer.{L-1}``."""

    def __init__(self, init: Initializer, blocks=None) -> None:
        """``blocks``: the layers to stack (DistilBERT's); by default L BertLayers."""
        super().__init__()
        if blocks is None:
            blocks = (BertLayer(init) for _ in range(init.config.num_hidden_layers))
        self.layer = ModuleList(blocks)

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


class BertPooler(Module):
    """dense + tanh on the [CLS] position: the sentence vector the NSP head reads."""

    def __init__(self, init: Initializer) -> None:
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


def _ids_like_input_ids(name: str, value, input_ids: np.ndarray) -> np.ndarray:
    """``value`` (token_type_ids, attention_mask) as an int array of the shape of input_ids
    (B, T); a 1-D array beside a one-row batch gets its batch axis, as input_ids does."""
    value = as_int_array(name, value)
    if value.ndim == 1 and input_ids.shape[0] == 1:
        value = value[None]
    if value.shape != input_ids.shape:
        raise ValueError(f"{name} must have the shape of input_ids {input_ids.shape}, "
                         f"got {value.shape}")
    return value


def padding_key_mask(attention_mask: np.ndarray) -> np.ndarray | None:
    """attention_mask int (B, T), 1 = real token -> bool (B, 1, 1, T): the keys every query
    may see, padding hidden; None when nothing is padding (no masking work to do)."""
    key_mask = attention_mask[:, None, None, :].astype(bool)  # (B, 1, 1, T)
    return None if key_mask.all() else key_mask


class BertModel(PretrainedModel, Module):
    """Embeddings, encoder and (optionally) pooler: HF ``BertModel``."""

    config_class = BertConfig

    def __init__(
        self,
        config: BertConfig,
        seed: int = 0,
        dtype=np.float32,
        add_pooling_layer: bool = True,
        *,
        _init: Initializer | None = None,
    ) -> None:
        super().__init__()
        init = self.adopt_config(config, seed, dtype, _init)
        self.embeddings = BertEmbeddings(init)
        self.encoder = BertEncoder(init)
        self.pooler = BertPooler(init) if add_pooling_layer else None

    def check_inputs(self, input_ids, token_type_ids=None, attention_mask=None):
        """Validate and normalize the three id arrays; returns int64 arrays (B, T).

        Types, shapes and the mask's values are checked here; whether each id has a row in
        its table is checked once, by the embedding lookup (``functional.embedding_forward``).
        """
        config = self.config
        input_ids = as_int_array("input_ids", input_ids)
        if input_ids.ndim == 1:
            input_ids = input_ids[None]
        if input_ids.ndim != 2 or input_ids.shape[1] == 0:
            raise ValueError(
                f"input_ids must be 2-D (B, T) with T >= 1, got shape {input_ids.shape}"
            )
        if input_ids.shape[1] > config.max_position_embeddings:
            raise ValueError(
                f"input_ids has sequence length {input_ids.shape[1]}, longer than "
                f"max_position_embeddings={config.max_position_embeddings}"
            )
        if token_type_ids is None:
            token_type_ids = np.zeros_like(input_ids)
        else:
            token_type_ids = _ids_like_input_ids("token_type_ids", token_type_ids, input_ids)
        if attention_mask is None:
            attention_mask = np.ones_like(input_ids)
        else:
            attention_mask = _ids_like_input_ids("attention_mask", attention_mask, input_ids)
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
        key_mask = padding_key_mask(attention_mask)  # (B, 1, 1, T) or None
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

    def sequence_gradient(self, d_last_hidden_state: np.ndarray | None) -> np.ndarray:
        """The upstream gradient of last_hidden_state as a fresh (B, T, H) array to add into
        (zeros for None), checked against the last forward's shape."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        shape = self.cache.shape  # (B, T, H)
        if d_last_hidden_state is None:
            d_sequence = np.zeros(shape, dtype=self.dtype)
        else:
            if d_last_hidden_state.shape != shape:
                raise ValueError(
                    f"d_last_hidden_state must have shape {shape}, "
                    f"got {d_last_hidden_state.shape}"
                )
            d_sequence = d_last_hidden_state.astype(self.dtype, copy=True)
        return d_sequence

    def backward(
        self, d_last_hidden_state: np.ndarray | None, d_pooler_output: np.ndarray | None = None
    ) -> None:
        """Add the gradients of sum(last * d_last) + sum(pooled * d_pooled) into every parameter.

        d_last_hidden_state (B, T, H) or None; d_pooler_output (B, H) or None.
        """
        d_sequence = self.sequence_gradient(d_last_hidden_state)  # (B, T, H)
        if d_pooler_output is not None:
            if self.pooler is None:
                raise ValueError("d_pooler_output given but this BertModel has no pooler")
            d_sequence += self.pooler.backward(d_pooler_output)
        self.embeddings.backward(self.encoder.backward(d_sequence))


