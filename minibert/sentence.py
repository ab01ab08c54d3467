"""Sentence embeddings: one unit vector per text, trained with in-batch negatives.

all-MiniLM-L6-v2 (sentence-transformers; Reimers & Gurevych 2019) is a 6-layer BERT whose
sentence vector is the mean of its last hidden states over the real tokens (padding
left out), scaled to length 1, so that a dot product is a cosine similarity. It was
trained with MultipleNegativesRankingLoss: in a batch of (anchor, positive) pairs each
anchor must pick its own positive among all the batch's positives (``contrastive_loss``).
This module holds the recipe's three forward/backward pairs (masked mean pooling, L2
normalisation, the contrastive loss), the pipeline as a Module with a backward pass, the
one-call ``sentence_embeddings``, ranking for ``minibert search``, and a toy contrastive
fine-tune. See docs/descendants.md.

Dimension legend: B batch, T sequence length, H hidden size, n texts, M candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.checks import check_float_array, check_int, check_real
from minibert.family.registry import encoder_of
from minibert.layers import Module

__all__ = ["SentenceEncoder", "sentence_embeddings", "rank", "load_sentence_model",
           "retrieval_pairs", "retrieval_accuracy", "contrastive_finetune", "MAX_SEQ_LENGTH",
           "mean_pooling_forward", "mean_pooling_backward",
           "l2_normalize_forward", "l2_normalize_backward",
           "contrastive_loss_forward", "contrastive_loss_backward",
           "MeanPoolingCache", "L2NormalizeCache", "ContrastiveLossCache"]

MAX_SEQ_LENGTH = 256  # all-MiniLM-L6-v2's sentence_bert_config.json: longer texts are cut


# ----------------------------------------------------------------------------------------
# The recipe's three pairs: the mean of the real tokens' hidden states, scaled to unit
# length, trained with in-batch negatives. Derivations: docs/descendants.md (section 1).
# ----------------------------------------------------------------------------------------


class MeanPoolingCache(NamedTuple):
    weights: np.ndarray  # (B, T, 1) mask / number of real tokens of the row


class L2NormalizeCache(NamedTuple):
    unit: np.ndarray  # (..., H) the output x / max(|x|, eps)
    norm: np.ndarray  # (..., 1) max(|x|, eps)
    clamped: np.ndarray  # bool (..., 1), True where |x| < eps (the output is x / eps)


class ContrastiveLossCache(NamedTuple):
    anchors: L2NormalizeCache  # the anchors made unit vectors, (B, H)
    candidates: L2NormalizeCache  # the candidates made unit vectors, (M, H)
    scores: F.CrossEntropyCache  # softmax cross-entropy of the (B, M) scores
    scale: float


def mean_pooling_forward(hidden_states: np.ndarray, attention_mask):
    """The mean of each row's real-token vectors: sum_t m[b, t] h[b, t] / sum_t m[b, t].

    Inputs: hidden_states (B, T, H); attention_mask (B, T), 1 = real token, 0 = padding;
    every row needs at least one real token. Output: (B, H). Cache: MeanPoolingCache.
    """
    check_float_array("hidden_states", hidden_states)
    mask = np.asarray(attention_mask)
    if hidden_states.ndim != 3 or mask.shape != hidden_states.shape[:2]:
        raise ValueError(f"hidden_states must be (B, T, H) and attention_mask (B, T) with the "
                         f"same B and T, got {hidden_states.shape} and {mask.shape}")
    if mask.size and not np.isin(mask, (0, 1)).all():
        raise ValueError(f"attention_mask must hold only 0 (padding) and 1 (real token), got "
                         f"values {np.unique(mask)[:5].tolist()}")
    counts = mask.sum(axis=1, keepdims=True)  # (B, 1)
    if (counts == 0).any():
        raise ValueError(f"attention_mask row {int(np.argmax(counts[:, 0] == 0))} has no real "
                         f"token (all 0); every sentence needs at least one real token to "
                         f"average")
    weights = (mask / counts).astype(hidden_states.dtype)[..., None]  # (B, T, 1)
    pooled = (hidden_states * weights).sum(axis=1)  # (B, H)
    return pooled, MeanPoolingCache(weights)


def mean_pooling_backward(dout: np.ndarray, cache):
    """Returns d hidden_states (B, T, H) = dout[b] * m[b, t] / count[b]: 0 at padding."""
    # forward: pooled[b] = sum_t weights[b, t] h[b, t]
    return dout[:, None, :] * cache.weights


def l2_normalize_forward(x: np.ndarray, eps: float = 1e-12):
    """x scaled to unit length along the last axis: x / max(|x|, eps), torch's F.normalize.

    Inputs: x (..., H); eps > 0 keeps a zero vector finite (it stays zero).
    Output: (..., H). Cache: L2NormalizeCache.
    """
    check_float_array("x", x)
    eps = check_real("eps", eps, 0, above=True)
    length = np.sqrt((x * x).sum(axis=-1, keepdims=True))  # (..., 1)
    clamped = length < eps
    norm = np.maximum(length, eps)  # (..., 1)
    unit = x / norm  # (..., H)
    return unit, L2NormalizeCache(unit, norm, clamped)


def l2_normalize_backward(dout: np.ndarray, cache):
    """Returns dx (..., H) = (dout - u (u . dout)) / |x|; dout / eps where |x| < eps."""
    unit, norm = cache.unit, cache.norm
    # forward: u = x / |x|; d u / dx = (I - u u^T) / |x|, so only dout's part across u passes
    radial = (unit * dout).sum(axis=-1, keepdims=True)  # (..., 1) u . dout
    # below eps the denominator is the constant eps, and u = x / eps is linear in x
    return (dout - unit * np.where(cache.clamped, 0.0, radial)) / norm


def contrastive_loss_forward(anchors: np.ndarray, candidates: np.ndarray, scale: float = 20.0):
    """In-batch contrastive loss (InfoNCE), sentence-transformers' MultipleNegativesRankingLoss.

    scores[i, j] = scale * cos(anchor i, candidate j); the loss is the mean softmax
    cross-entropy of each row against its own index: candidate i is anchor i's positive
    and every other candidate (the batch's other positives, then any extra hard negatives)
    is a negative. Inputs: anchors (B, H); candidates (M, H) with M >= B, the first B the
    positives; scale > 0 (20 in sentence-transformers). Output: scalar loss.
    Cache: ContrastiveLossCache.
    """
    check_float_array("anchors", anchors)
    check_float_array("candidates", candidates)
    if anchors.ndim != 2 or candidates.ndim != 2 or anchors.shape[1] != candidates.shape[1] \
            or candidates.shape[0] < anchors.shape[0]:
        raise ValueError(f"anchors must be (B, H) and candidates (M, H) with M >= B, got "
                         f"{anchors.shape} and {candidates.shape}")
    scale = check_real("scale", scale, 0, above=True)
    unit_anchors, anchors_cache = l2_normalize_forward(anchors)  # (B, H)
    unit_candidates, candidates_cache = l2_normalize_forward(candidates)  # (M, H)
    scores = scale * (unit_anchors @ unit_candidates.T)  # (B, M)
    labels = np.arange(anchors.shape[0])  # anchor i's positive is candidate i
    loss, scores_cache = F.cross_entropy_forward(scores, labels)
    return loss, ContrastiveLossCache(anchors_cache, candidates_cache, scores_cache, scale)


def contrastive_loss_backward(dloss, cache):
    """Returns (d anchors (B, H), d candidates (M, H))."""
    dscores = F.cross_entropy_backward(dloss, cache.scores)  # (B, M)
    # forward: scores = scale * unit_anchors @ unit_candidates.T
    d_unit_anchors = cache.scale * (dscores @ cache.candidates.unit)  # (B, H)
    d_unit_candidates = cache.scale * (dscores.T @ cache.anchors.unit)  # (M, H)
    return (l2_normalize_backward(d_unit_anchors, cache.anchors),
            l2_normalize_backward(d_unit_candidates, cache.candidates))


def _encoder_of(model) -> Module:
    """The BertModel inside ``model`` (itself, or its ``.bert``)."""
    try:
        encoder = encoder_of(model)  # the attribute its family's row names
    except ValueError:  # no model of any family
        encoder = model
    if not (hasattr(encoder, "embeddings") and hasattr(encoder, "encoder")):
        raise TypeError(f"model must be a BERT encoder (BertModel, or a model with .bert), "
                        f"got {type(model).__name__}")
    return encoder


class SentenceEncoder(Module):
    """A BERT encoder, mean pooling over real tokens and (optionally) L2 normalisation.

    ``SentenceEncoder(bert)`` shares ``bert``'s arrays (its parameters are named
    ``bert.embeddings...``), so training the encoder trains the model it was given.
    """

    def __init__(self, model, normalize: bool = True) -> None:
        super().__init__()
        self.bert = _encoder_of(model)
        self.normalize = bool(normalize)

    def forward(self, input_ids, attention_mask, token_type_ids=None) -> np.ndarray:
        """input_ids, attention_mask (B, T) -> sentence embeddings (B, H)."""
        mask = np.asarray(attention_mask)
        hidden = self.bert(input_ids, token_type_ids, mask).last_hidden_state  # (B, T, H)
        pooled, pooling_cache = mean_pooling_forward(hidden, mask)  # (B, H)
        normalize_cache = None
        if self.normalize:
            pooled, normalize_cache = l2_normalize_forward(pooled)  # (B, H)
        self.cache = (pooling_cache, normalize_cache)
        return pooled

    def backward(self, d_embeddings: np.ndarray) -> None:
        """Adds the gradients of sum(embeddings * d_embeddings) into the encoder's parameters."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        pooling_cache, normalize_cache = self.cache
        d_pooled = d_embeddings
        if normalize_cache is not None:
            d_pooled = l2_normalize_backward(d_pooled, normalize_cache)  # (B, H)
        d_hidden = mean_pooling_backward(d_pooled, pooling_cache)  # (B, T, H)
        self.bert.backward(d_hidden.astype(self.bert.dtype, copy=False))


def _check_texts(texts) -> list[str]:
    if isinstance(texts, str):
        return [texts]
    texts = list(texts) if isinstance(texts, Sequence) else texts
    if not isinstance(texts, list) or not texts \
            or not all(isinstance(text, str) for text in texts):
        raise TypeError(f"texts must be a str or a non-empty sequence of str, got "
                        f"{type(texts).__name__} {str(texts)[:60]}")
    return texts


def _encode(tokenizer, texts: list[str], max_length: int) -> dict:
    return tokenizer(texts, padding=True, truncation=True, max_length=max_length,
                     return_tensors="np")


def sentence_embeddings(model, tokenizer, texts, batch_size: int = 32,
                        max_length: int = MAX_SEQ_LENGTH) -> np.ndarray:
    """One unit vector per text: the all-MiniLM-L6-v2 recipe (mean over real tokens, normalise).

    Inputs: model, a BertModel (or a model with ``.bert``), in eval mode for reproducible
    vectors; tokenizer, its BertTokenizer; texts, a str or a sequence of str; batch_size;
    max_length, tokens per text after truncation ([CLS] and [SEP] included; at most the
    model's max_position_embeddings). Output: (n, H) array, each row of length 1.
    """
    texts = _check_texts(texts)
    batch_size = check_int("batch_size", batch_size, minimum=1)
    max_length = check_int("max_length", max_length, minimum=2)
    encoder = SentenceEncoder(model)
    max_length = min(max_length, encoder.bert.config.max_position_embeddings)
    rows = []
    for start in range(0, len(texts), batch_size):
        batch = _encode(tokenizer, texts[start:start + batch_size], max_length)
        rows.append(encoder(batch["input_ids"], batch["attention_mask"]))  # (B, H)
    return np.concatenate(rows, axis=0)


def rank(query_embedding: np.ndarray, embeddings: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Candidates ordered by cosine similarity to the query, best first.

    Inputs: query_embedding (H,) and embeddings (n, H), unit vectors. Outputs: (order (n,)
    int, scores (n,) float in that order). Ties keep the input order.
    """
    scores = embeddings @ query_embedding  # (n,)
    order = np.argsort(-scores, kind="stable")
    return order, scores[order]


def load_sentence_model(folder, dtype=np.float32):
    """A sentence-embedding model folder as ``(BertModel, BertTokenizer)``, in eval mode.

    Any BERT folder works (all-MiniLM-L6-v2's, or one written by pretrain); the heads a
    pretraining folder holds are not needed and are left out quietly.
    """
    import warnings

    from minibert.model import BertModel
    from minibert.tokenization import load_tokenizer

    tokenizer = load_tokenizer(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # unused MLM/NSP weights of a pretraining folder
        model = BertModel.from_pretrained(folder, dtype=dtype)
    return model.eval(), tokenizer


# ----------------------------------------------------------------------------------------
# A toy retrieval task and a contrastive fine-tune
# ----------------------------------------------------------------------------------------


def retrieval_pairs(count: int, seed: int = 0) -> list[tuple[str, str]]:
    """``count`` (question, sentence) pairs, each from its own toy document.

    The question is an echo question on the sentence (``tasks.questions_about``: one of its
    names replaced by "who", "which town", ...), so the two share most words but one; the
    other sentences are the distractors, many from the same templates with other names.
    Retrieval must match the words that remain, e.g. the place or the team. Different
    seeds give different documents.
    """
    from minibert.data.corpus import ToyCorpus
    from minibert.data.tasks import questions_about

    count = check_int("count", count, minimum=1)
    seed = check_int("seed", seed, minimum=0)
    rng = np.random.default_rng(seed)
    pairs, seen, documents = [], set(), 2 * count + 20
    while len(pairs) < count:
        pairs, seen = [], set()
        for document in ToyCorpus.generate(documents, 0, seed=seed).train:
            asked = [(question, sentence) for sentence in document
                     for question, _, _ in questions_about(sentence)]
            if not asked:
                continue
            question, sentence = asked[int(rng.integers(len(asked)))]
            if sentence not in seen:  # one pair per distinct sentence: one right answer
                seen.add(sentence)
                pairs.append((question, sentence))
            if len(pairs) == count:
                break
        documents *= 2
    return pairs


def retrieval_accuracy(model, tokenizer, pairs, max_length: int = 64) -> float:
    """Share of anchors whose own positive is the nearest of all the pairs' positives."""
    anchors = sentence_embeddings(model, tokenizer, [a for a, _ in pairs], max_length=max_length)
    positives = sentence_embeddings(model, tokenizer, [p for _, p in pairs],
                                    max_length=max_length)
    best = np.argmax(anchors @ positives.T, axis=1)  # (n,)
    return float(np.mean(best == np.arange(len(pairs))))


@dataclass
class ContrastiveResult:
    losses: list  # the training loss at every step
    accuracy_before: float  # held-out retrieval accuracy before training
    accuracy_after: float


def contrastive_finetune(model, tokenizer, train_pairs, test_pairs, *, steps: int = 100,
                         batch_size: int = 16, learning_rate: float = 5e-5, scale: float = 20.0,
                         max_length: int = 64, seed: int = 0,
                         progress: Callable[[str], None] | None = None) -> ContrastiveResult:
    """Train ``model`` in place with the in-batch contrastive loss; score held-out retrieval.

    Each step draws ``batch_size`` training pairs, embeds anchors and positives in one
    batch, and takes an AdamW step on the loss (every other positive of the batch is
    a negative). Outputs: ContrastiveResult (losses, held-out accuracy before and after).
    """
    from minibert.training.optim import AdamW

    steps = check_int("steps", steps, minimum=1)
    batch_size = check_int("batch_size", batch_size, minimum=2)
    learning_rate = check_real("learning_rate", learning_rate, 0, above=True)
    if len(train_pairs) < batch_size:
        raise ValueError(f"train_pairs must hold at least batch_size={batch_size} pairs, got "
                         f"{len(train_pairs)}")
    encoder = SentenceEncoder(model, normalize=False)  # the loss normalises
    before = retrieval_accuracy(model.eval(), tokenizer, test_pairs, max_length)
    optimizer = AdamW(encoder, lr=learning_rate, weight_decay=0.01)
    rng = np.random.default_rng(seed)
    losses = []
    model.train()
    for step in range(steps):
        chosen = rng.choice(len(train_pairs), size=batch_size, replace=False)
        # Anchors and positives in one batch of 2B texts: one forward, one backward.
        texts = [train_pairs[i][0] for i in chosen] + [train_pairs[i][1] for i in chosen]
        batch = _encode(tokenizer, texts, max_length)
        optimizer.zero_grad()
        vectors = encoder(batch["input_ids"], batch["attention_mask"])  # (2B, H)
        loss, cache = contrastive_loss_forward(vectors[:batch_size], vectors[batch_size:],
                                                 scale)
        d_anchors, d_positives = contrastive_loss_backward(1.0, cache)
        encoder.backward(np.concatenate([d_anchors, d_positives]))  # (2B, H)
        optimizer.step()
        losses.append(float(loss))
        if progress is not None and (step + 1) % max(1, steps // 10) == 0:
            progress(f"step {step + 1}/{steps}  loss {float(loss):.4f}")
    after = retrieval_accuracy(model.eval(), tokenizer, test_pairs, max_length)
    return ContrastiveResult(losses, before, after)
