"""The small models every model test shares: BERT's config and a padded pretraining batch,
and the small configs of BERT's relatives (ALBERT, ELECTRA, DistilBERT).

Imported by test modules (``tests/`` is on ``sys.path`` when pytest runs them); BERT's are
also offered as the ``small_config`` and ``make_batch`` fixtures by conftest.py.
"""

from __future__ import annotations

import numpy as np

import minibert as mb
from minibert.checks import IGNORE_INDEX

SMALL = dict(vocab_size=60, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
             intermediate_size=24, max_position_embeddings=16)


def small_config(**overrides) -> mb.BertConfig:
    return mb.BertConfig(**{**SMALL, **overrides})


# ALBERT: V=41, E=6, H=8, N=2 heads of D=4, I=12: every axis distinct, E < H.
SMALL_ALBERT = dict(vocab_size=41, embedding_size=6, hidden_size=8, num_attention_heads=2,
                    intermediate_size=12, max_position_embeddings=16)
# How ALBERT's layers share blocks: one block for all three, or two groups of two.
ALBERT_SHARING = {
    "one-group": dict(num_hidden_layers=3, num_hidden_groups=1, inner_group_num=1),
    "groups-and-inner": dict(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2),
}


def small_albert_config(sharing="one-group", **overrides) -> mb.AlbertConfig:
    return mb.AlbertConfig(**{**SMALL_ALBERT, **ALBERT_SHARING[sharing], **overrides})


# ELECTRA: ALBERT's sizes (tables of width E < H, then embeddings_project), two layers,
# no dropout.
SMALL_ELECTRA = dict(SMALL_ALBERT, num_hidden_layers=2, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)


def small_electra_config(**overrides) -> mb.ElectraConfig:
    return mb.ElectraConfig(**{**SMALL_ELECTRA, **overrides})


# DistilBERT (its own field names): V=37, H=12, I=20, no dropout.
SMALL_DISTILBERT = dict(vocab_size=37, max_position_embeddings=16, n_layers=2, n_heads=2,
                        dim=12, hidden_dim=20, dropout=0.0, attention_dropout=0.0)


def small_distilbert_config(**overrides) -> mb.DistilBertConfig:
    return mb.DistilBertConfig(**{**SMALL_DISTILBERT, **overrides})


def make_batch(config: mb.BertConfig, lengths=(9, 6, 4), seq_len=None, seed=0) -> dict:
    """A padded pretraining batch: ids, two segments, mask, MLM labels, NSP labels.

    Padding sits at the end ([PAD] id, mask 0, segment 0, label -100); about a third of
    the real positions carry an MLM target, at least one per sequence.
    """
    rng = np.random.default_rng(seed)
    batch, seq_len = len(lengths), seq_len or max(lengths)
    input_ids = np.full((batch, seq_len), config.pad_token_id, dtype=np.int64)
    token_type_ids = np.zeros((batch, seq_len), dtype=np.int64)
    attention_mask = np.zeros((batch, seq_len), dtype=np.int64)
    labels = np.full((batch, seq_len), IGNORE_INDEX, dtype=np.int64)
    for row, length in enumerate(lengths):
        input_ids[row, :length] = rng.integers(1, config.vocab_size, length)
        token_type_ids[row, length // 2:length] = 1
        attention_mask[row, :length] = 1
        targets = rng.random(length) < 1 / 3
        targets[rng.integers(length)] = True
        labels[row, :length][targets] = rng.integers(0, config.vocab_size, targets.sum())
    next_sentence_label = np.arange(batch, dtype=np.int64) % 2
    return dict(input_ids=input_ids, token_type_ids=token_type_ids,
                attention_mask=attention_mask, labels=labels,
                next_sentence_label=next_sentence_label)
