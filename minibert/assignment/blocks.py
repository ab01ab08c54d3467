"""The forwards whose backward the composition tasks ask for, built from the functional pairs.

``encoder_block_forward`` is one post-LN BERT layer: the page ``minibert.BertLayer`` runs
(``bert_layer_forward`` in minibert/model.py, also ``minibert.flat_layer``), in eval mode;
``tied_mlm_forward`` is an embedding lookup and a masked-LM decoder that share one table.
Each returns ``(out, cache)`` with a named cache of every step, like ``minibert.functional``.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size, V vocabulary size.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.layers import merge_heads, split_heads
from minibert.model import LAYER_PARAMETERS, FlatLayerCache, bert_layer_forward

__all__ = ["EncoderBlockCache", "TiedMLMCache", "encoder_block_forward",
           "encoder_block_params", "split_heads", "merge_heads", "tied_mlm_forward",
           "tied_mlm_params"]

# Parameter names of one block, as HF's ``bert.encoder.layer.0.`` prefix continues them.
BLOCK_PARAMS = LAYER_PARAMETERS


# The block's cache is the one-page layer's: a named cache of every step (the dropout
# steps' are None: the block runs in eval mode).
EncoderBlockCache = FlatLayerCache


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

    The forward is ``minibert.model.bert_layer_forward`` (the layer every step of which is
    on one page; read it there), with the padding mask made from ``attention_mask``.
    Inputs: x (B, T, H); params, a dict with every name of ``BLOCK_PARAMS``;
    attention_mask (B, T), 1 = real token, 0 = padding, or None; num_heads N.
    Output: (B, T, H). Cache: EncoderBlockCache.
    """
    mask = None if attention_mask is None else np.asarray(attention_mask)[:, None, None, :]
    return bert_layer_forward(x, params, mask, num_heads, eps)


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
