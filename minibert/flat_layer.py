"""One BERT layer on one page: the forward, then the backward in reverse, from the pairs.

``minibert.model.BertLayer`` spreads a layer over five modules (attention, its output
sublayer, the feed-forward, its output sublayer) that each keep their own cache. Here the
same layer is two plain functions, llm.c style: every step of the forward on its own line
with its shape, kept in one named cache, and every step of the backward under the
forward line it inverts. It computes exactly what ``BertLayer`` computes, from the same
``functional`` pairs, with HF's parameter names, dropout at the same three places drawn in
the same order, and the activations the config allows (``tests/core/test_flat_layer.py``
checks the output and every gradient against ``BertLayer``, bit for bit, and the gradients
against finite differences). The derivations are in docs/backprop.md.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.config import HIDDEN_ACTS
from minibert.layers import merge_heads, split_heads

__all__ = ["LAYER_PARAMETERS", "FlatLayerCache", "bert_layer_forward", "bert_layer_backward",
           "layer_parameters"]

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


def layer_parameters(layer) -> dict[str, np.ndarray]:
    """The parameters of a ``BertLayer`` by the names above (the same arrays, not copies)."""
    return dict(layer.named_parameters())


def bert_layer_forward(x: np.ndarray, p: dict, mask: np.ndarray | None, num_heads: int,
                       eps: float = 1e-12, hidden_act: str = "gelu",
                       attention_dropout: float = 0.0, hidden_dropout: float = 0.0,
                       rng: np.random.Generator | None = None, training: bool = False):
    """One post-LN BERT layer, every step on its own line.

    Inputs: x (B, T, H); p, the parameters by the names of ``LAYER_PARAMETERS``; mask
    broadcastable to (B, N, T, T), nonzero = may attend (padding: (B, 1, 1, T)), or None;
    num_heads N; eps, the LayerNorms'; hidden_act, the feed-forward's activation by its HF
    name; attention_dropout and hidden_dropout, the config's attention_probs_dropout_prob and
    hidden_dropout_prob, drawn from rng when training, in BERT's order (the probabilities,
    after attention.output.dense, after output.dense). The defaults are eval mode.
    Output: out (B, T, H). Cache: FlatLayerCache.
    """
    if hidden_act not in HIDDEN_ACTS:
        raise ValueError(f"hidden_act must be one of {list(HIDDEN_ACTS)}, got {hidden_act!r}")
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
    attended, attention_output_dropout = F.dropout_forward(attended, hidden_dropout, rng,
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
    ffn, output_dropout = F.dropout_forward(ffn, hidden_dropout, rng, training)  # (B, T, H)
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
