"""The forwards whose backward the composition tasks ask for, built from the functional pairs.

``encoder_block_forward`` is one post-LN BERT layer (as ``minibert.BertLayer`` computes it);
``tied_mlm_forward`` is an embedding lookup and a masked-LM decoder that share one table.
Each returns ``(out, cache)`` with a named cache of every step, like ``minibert.functional``.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size, V vocabulary size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.flat_layer import LAYER_PARAMETERS
from minibert.layers import merge_heads, split_heads

__all__ = ["EncoderBlockCache", "TiedMLMCache", "encoder_block_forward",
           "encoder_block_params", "split_heads", "merge_heads", "tied_mlm_forward",
           "tied_mlm_params"]

# Parameter names of one block, as HF's ``bert.encoder.layer.0.`` prefix continues them.
BLOCK_PARAMS = LAYER_PARAMETERS


class EncoderBlockCache(NamedTuple):
    num_heads: int
    query: F.LinearCache  # x -> q (B, T, H)
    key: F.LinearCache
    value: F.LinearCache
    attention: F.AttentionCache  # over the heads (B, N, T, D)
    attention_output_dense: F.LinearCache  # merged context (B, T, H) -> (B, T, H)
    attention_output_layernorm: F.LayerNormCache  # of x + attention output
    intermediate_dense: F.LinearCache  # (B, T, H) -> (B, T, I)
    intermediate_act: F.GeluCache
    output_dense: F.LinearCache  # (B, T, I) -> (B, T, H)
    output_layernorm: F.LayerNormCache  # of attention_output + output dense


class TiedMLMCache(NamedTuple):
    embedding: F.EmbeddingCache  # ids -> (B, T, H)
    transform: F.LinearCache  # (B, T, H) -> (B, T, H)
    activation: F.GeluCache
    decoder: F.LinearCache  # (B, T, H) -> (B, T, V), its weight the embedding table


def encoder_block_params(rng: np.random.Generator, hidden: int, intermediate: int) -> dict:
    """Random float64 parameters of one block, away from 0 and 1 (LayerNorm weights ~1 +/- 0.3)."""
    shapes = {"query": (hidden, hidden), "key": (hidden, hidden), "value": (hidden, hidden),
              "attention.output.dense": (hidden, hidden),
              "intermediate.dense": (intermediate, hidden), "output.dense": (hidden, intermediate)}
    params = {}
    for name in BLOCK_PARAMS:
        stem, kind = name.rsplit(".", 1)
        short = stem.removeprefix("attention.self.")
        if "LayerNorm" in stem:
            base = 1.0 if kind == "weight" else 0.0
            params[name] = base + 0.3 * rng.standard_normal(hidden)
        elif kind == "weight":
            params[name] = 0.4 * rng.standard_normal(shapes[short])
        else:
            params[name] = 0.2 * rng.standard_normal(shapes[short][0])
    return params


def encoder_block_forward(x: np.ndarray, params: dict, attention_mask, num_heads: int,
                          eps: float = 1e-12):
    """One BERT layer: self-attention, residual, LayerNorm; feed-forward, residual, LayerNorm.

    Inputs: x (B, T, H); params, a dict with every name of ``BLOCK_PARAMS``;
    attention_mask (B, T), 1 = real token, 0 = padding, or None; num_heads N.
    Output: (B, T, H). Cache: EncoderBlockCache.
    """
    p = params
    q, query = F.linear_forward(x, p["attention.self.query.weight"],
                                p["attention.self.query.bias"])  # (B, T, H)
    k, key = F.linear_forward(x, p["attention.self.key.weight"], p["attention.self.key.bias"])
    v, value = F.linear_forward(x, p["attention.self.value.weight"],
                                p["attention.self.value.bias"])
    mask = None if attention_mask is None else np.asarray(attention_mask)[:, None, None, :]
    context, attention = F.attention_forward(split_heads(q, num_heads), split_heads(k, num_heads),
                                             split_heads(v, num_heads), mask)  # (B, N, T, D)
    projected, attention_output_dense = F.linear_forward(
        merge_heads(context), p["attention.output.dense.weight"],
        p["attention.output.dense.bias"])  # (B, T, H)
    attention_output, attention_output_layernorm = F.layernorm_forward(
        x + projected, p["attention.output.LayerNorm.weight"],
        p["attention.output.LayerNorm.bias"], eps)  # (B, T, H)
    intermediate, intermediate_dense = F.linear_forward(
        attention_output, p["intermediate.dense.weight"], p["intermediate.dense.bias"])  # (B, T, I)
    activated, intermediate_act = F.gelu_forward(intermediate)  # (B, T, I)
    ffn, output_dense = F.linear_forward(activated, p["output.dense.weight"],
                                         p["output.dense.bias"])  # (B, T, H)
    out, output_layernorm = F.layernorm_forward(attention_output + ffn,
                                                p["output.LayerNorm.weight"],
                                                p["output.LayerNorm.bias"], eps)  # (B, T, H)
    return out, EncoderBlockCache(num_heads, query, key, value, attention,
                                  attention_output_dense, attention_output_layernorm,
                                  intermediate_dense, intermediate_act, output_dense,
                                  output_layernorm)


def tied_mlm_params(rng: np.random.Generator, vocab: int, hidden: int) -> dict:
    """Random float64 parameters of ``tied_mlm_forward``."""
    return {"word_embeddings": rng.standard_normal((vocab, hidden)),
            "transform.weight": 0.5 * rng.standard_normal((hidden, hidden)),
            "transform.bias": 0.3 * rng.standard_normal(hidden),
            "decoder.bias": 0.3 * rng.standard_normal(vocab)}


def tied_mlm_forward(ids, params: dict):
    """Embedding lookup, a GELU transform and a decoder that reuses the embedding table.

    Inputs: ids int (B, T); params with "word_embeddings" (V, H), "transform.weight" (H, H),
    "transform.bias" (H,), "decoder.bias" (V,). Output: logits (B, T, V). Cache: TiedMLMCache.
    """
    table = params["word_embeddings"]  # (V, H), used twice
    embedded, embedding = F.embedding_forward(ids, table)  # (B, T, H)
    transformed, transform = F.linear_forward(embedded, params["transform.weight"],
                                              params["transform.bias"])  # (B, T, H)
    activated, activation = F.gelu_forward(transformed)  # (B, T, H)
    logits, decoder = F.linear_forward(activated, table, params["decoder.bias"])  # (B, T, V)
    return logits, TiedMLMCache(embedding, transform, activation, decoder)
