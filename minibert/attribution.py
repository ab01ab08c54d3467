"""Token attributions through the hand-written backward: which input words made the model
say *bank*?

Every backward in minibert is written by hand, so the gradient of one prediction with
respect to the input embeddings is one backward call away. Two attributions from it:

- **gradient × input** (Shrikumar et al., 2016; Denil et al., 2014): for token t,
  ``score[t] = sum_h  d target / d e[t, h]  *  e[t, h]``, with e the word-embedding vectors
  fed to the encoder. One forward and one backward.
- **integrated gradients** (Sundararajan, Taly & Yan, 2017, "Axiomatic Attribution for Deep
  Networks"): the gradient averaged along the straight path from a baseline e' to e,
  ``score[t] = sum_h (e - e')[t, h] * mean_k  d target / d e[t, h] at e' + (k - 1/2)/S (e - e')``
  (midpoint rule, S steps). Completeness: the scores sum to target(e) - target(e') up to
  the quadrature error, which :class:`Attribution` reports.

The *input embeddings* are the word vectors ``word_embeddings.weight[input_ids]`` (B, T, H);
position and segment vectors stay as they are, since they are the same for every word. The
baseline is the zero vector (not the ``[PAD]`` row, which training moves away from zero).
The target is one logit: a fill-mask logit (:func:`mlm_target`) or a next-sentence logit
(:func:`nsp_target`). Derivations and a comparison with attention are in
docs/visualization.md (section "Saliency") and notebook 08.

Dimension legend: B batch (the S path points for integrated gradients), T tokens,
H hidden size, V vocabulary size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from minibert.checks import check_int

__all__ = [
    "Target",
    "Attribution",
    "mlm_target",
    "nsp_target",
    "target_and_gradient",
    "gradient_x_input",
    "integrated_gradients",
    "SALIENCY_METHODS",
]

SALIENCY_METHODS = ("gradient_x_input", "integrated_gradients")


class Target(NamedTuple):
    """One logit to explain.

    Fields:
        kind: ``"mlm"`` (a fill-mask logit) or ``"nsp"`` (a next-sentence logit).
        position: for ``"mlm"``, the token position whose prediction is explained; None for NSP.
        index: the vocabulary id (``"mlm"``) or the class (``"nsp"``: 0 = IsNext, 1 = NotNext).
    """

    kind: str
    position: int | None
    index: int


def mlm_target(position: int, token_id: int) -> Target:
    """The logit of ``token_id`` at ``position`` (usually a ``[MASK]``)."""
    return Target("mlm", check_int("position", position, minimum=0),
                  check_int("token_id", token_id, minimum=0))


def nsp_target(label: int = 0) -> Target:
    """The next-sentence logit of class ``label`` (0 = IsNext, 1 = NotNext, as in BERT)."""
    return Target("nsp", None, check_int("label", label, minimum=0, maximum=1))


@dataclass(frozen=True)
class Attribution:
    """Per-token scores for one target.

    Fields:
        method: ``"gradient_x_input"`` or ``"integrated_gradients"``.
        scores: (T,) one number per token; positive pushed the logit up.
        gradient: (T, H) the gradient of the target at the input (gradient × input) or
            averaged along the path (integrated gradients).
        target_value: the logit at the input.
        baseline_value: the logit at the baseline (integrated gradients), else None.
        completeness_gap: ``scores.sum() - (target_value - baseline_value)`` (integrated
            gradients only; shrinks as ``steps`` grows), else None.
    """

    method: str
    scores: np.ndarray
    gradient: np.ndarray
    target_value: float
    baseline_value: float | None = None
    completeness_gap: float | None = None


def _heads(model):
    """The encoder (a BertModel) and the classification heads of a pretraining-style model."""
    bert = getattr(model, "bert", None)
    heads = getattr(model, "cls", None)
    if bert is None or heads is None:
        raise TypeError(
            f"model must be a BertForPreTraining, BertForMaskedLM or "
            f"BertForNextSentencePrediction (it needs .bert and .cls), got {type(model).__name__}"
        )
    if model.training:
        raise ValueError("model is in training mode (dropout on): call model.eval() first")
    return bert, heads


def _check_target(target: Target, heads, length: int, vocab_size: int) -> None:
    if not isinstance(target, Target):
        raise TypeError(f"target must be made by mlm_target(...) or nsp_target(...), "
                        f"got {target!r}")
    if target.kind == "mlm":
        if not hasattr(heads, "predictions"):
            raise ValueError("target is a fill-mask logit but the model has no MLM head")
        check_int("target.position", target.position, maximum=length - 1)
        check_int("target.index (token id)", target.index, maximum=vocab_size - 1)
    elif not hasattr(heads, "seq_relationship"):
        raise ValueError("target is a next-sentence logit but the model has no NSP head")


def target_and_gradient(model, input_ids, token_type_ids=None, attention_mask=None, *,
                        target: Target, word_vectors: np.ndarray | None = None):
    """The target logit and its gradient with respect to the word vectors, for each example.

    Inputs:
        model: a BertForPreTraining / BertForMaskedLM / BertForNextSentencePrediction in
            eval mode (float64 for gradient checks).
        input_ids, token_type_ids, attention_mask: int (B, T) or (T,), as for the model.
        target: :func:`mlm_target` or :func:`nsp_target`.
        word_vectors: optional (B, T, H) vectors used in place of
            ``word_embeddings.weight[input_ids]`` (the path points of integrated gradients).
    Returns:
        (values (B,), gradient (B, T, H)). Parameter gradients touched on the way are
        cleared (``model.zero_grad()``): attribution is an inspection, not a training step.
    """
    bert, heads = _heads(model)
    input_ids = np.atleast_2d(input_ids)
    token_type_ids = None if token_type_ids is None else np.atleast_2d(token_type_ids)
    attention_mask = None if attention_mask is None else np.atleast_2d(attention_mask)
    input_ids, token_type_ids, attention_mask = bert.check_inputs(
        input_ids, token_type_ids, attention_mask)
    embeddings = bert.embeddings
    table = embeddings.word_embeddings.params["weight"]  # (V, H)
    batch, length = input_ids.shape
    _check_target(target, heads, length, table.shape[0])
    if word_vectors is None:
        word_vectors = table[input_ids]  # (B, T, H)
    elif word_vectors.shape != (batch, length, table.shape[1]):
        raise ValueError(f"word_vectors must have shape {(batch, length, table.shape[1])} "
                         f"(B, T, H), got {word_vectors.shape}")
    model.zero_grad()
    # forward, as BertEmbeddings.forward but from the word vectors instead of the ids
    positions = embeddings.position_embeddings.params["weight"][:length]  # (T, H)
    types = embeddings.token_type_embeddings.params["weight"][token_type_ids]  # (B, T, H)
    summed = word_vectors.astype(table.dtype) + positions + types  # (B, T, H)
    embedding_output = embeddings.dropout(embeddings.LayerNorm(summed))  # (B, T, H)
    key_mask = attention_mask[:, None, None, :].astype(bool)  # (B, 1, 1, T)
    sequence_output, _ = bert.encoder(embedding_output, None if key_mask.all() else key_mask,
                                      False)  # (B, T, H)
    d_sequence = np.zeros_like(sequence_output)  # (B, T, H)
    if target.kind == "mlm":
        logits = heads.predictions(sequence_output[:, target.position])  # (B, V)
        d_logits = np.zeros_like(logits)
        d_logits[:, target.index] = 1.0
        d_sequence[:, target.position] = heads.predictions.backward(d_logits)  # (B, H)
    else:
        logits = heads.seq_relationship(bert.pooler(sequence_output))  # (B, 2)
        d_logits = np.zeros_like(logits)
        d_logits[:, target.index] = 1.0
        d_sequence += bert.pooler.backward(heads.seq_relationship.backward(d_logits))
    values = logits[:, target.index].astype(np.float64)  # (B,)
    # backward: encoder, then embeddings' dropout and LayerNorm; summed = words + pos + types
    d_embedding_output = bert.encoder.backward(d_sequence)  # (B, T, H)
    d_summed = embeddings.LayerNorm.backward(embeddings.dropout.backward(d_embedding_output))
    model.zero_grad()
    return values, d_summed  # d words = d summed


def _word_vectors(model, input_ids) -> np.ndarray:
    """The (T, H) word vectors of one example, after checking the model and the ids."""
    bert, _ = _heads(model)
    ids = np.atleast_2d(input_ids)
    if ids.shape[0] != 1:
        raise ValueError(f"input_ids must hold one example, (T,) or (1, T), got {ids.shape}")
    ids, _, _ = bert.check_inputs(ids)
    return bert.embeddings.word_embeddings.params["weight"][ids[0]]  # (T, H)


def gradient_x_input(model, input_ids, token_type_ids=None, attention_mask=None, *,
                     target: Target) -> Attribution:
    """Gradient × input for one example: ``scores[t] = grad[t] · e[t]``, summed over H.

    Inputs: one example, input_ids (T,) or (1, T) and the rest as for the model; target.
    Returns: an :class:`Attribution` with (T,) scores.
    """
    words = _word_vectors(model, input_ids)[None]  # (1, T, H)
    ids = np.atleast_2d(input_ids)
    values, gradient = target_and_gradient(model, ids, token_type_ids, attention_mask,
                                           target=target, word_vectors=words)
    scores = (gradient[0] * words[0]).sum(axis=-1).astype(np.float64)  # (T,)
    return Attribution("gradient_x_input", scores, gradient[0], float(values[0]))


def integrated_gradients(model, input_ids, token_type_ids=None, attention_mask=None, *,
                         target: Target, steps: int = 32,
                         baseline: np.ndarray | None = None) -> Attribution:
    """Integrated gradients for one example, midpoint rule with ``steps`` path points.

    Inputs:
        one example and a target, as :func:`gradient_x_input`;
        steps: path points, all run as one batch of ``steps`` examples;
        baseline: (T, H) word vectors of the baseline; the zero vector by default.
    Returns:
        an :class:`Attribution`; ``completeness_gap`` is how far the scores' sum is from
        target(input) - target(baseline).
    """
    steps = check_int("steps", steps, minimum=1)
    words = _word_vectors(model, input_ids)  # (T, H)
    ids = np.atleast_2d(input_ids)
    baseline = np.zeros_like(words) if baseline is None else np.asarray(baseline, words.dtype)
    if baseline.shape != words.shape:
        raise ValueError(f"baseline must have shape {words.shape} (T, H), got {baseline.shape}")
    alphas = (np.arange(steps) + 0.5) / steps  # (S,) midpoints of [0, 1]
    path = baseline + alphas[:, None, None] * (words - baseline)  # (S, T, H)
    _, gradients = target_and_gradient(
        model, *_repeat(steps, ids, token_type_ids, attention_mask), target=target,
        word_vectors=path)  # (S, T, H)
    mean_gradient = gradients.astype(np.float64).mean(axis=0)  # (T, H)
    scores = ((words - baseline) * mean_gradient).sum(axis=-1)  # (T,)
    ends, _ = target_and_gradient(
        model, *_repeat(2, ids, token_type_ids, attention_mask), target=target,
        word_vectors=np.stack([words, baseline]))  # the input and the baseline
    value, baseline_value = float(ends[0]), float(ends[1])
    gap = float(scores.sum() - (value - baseline_value))
    return Attribution("integrated_gradients", scores, mean_gradient, value, baseline_value, gap)


def _repeat(count: int, *arrays):
    """Each (T,) or (1, T) array (or None) repeated into (count, T): one row per path point."""
    return [None if a is None else np.repeat(np.atleast_2d(a), count, axis=0) for a in arrays]
