"""Scores of the fine-tuning tasks, written out, and the decoding of answer spans.

- classify: ``accuracy``.
- tag: entity-level precision, recall and F1 with exact span match, as conlleval and
  seqeval count them (``bio_entities``, ``entity_f1``).
- qa: SQuAD's exact match and token-overlap F1 over answers and no-answers
  (``normalize_answer``, ``exact_match_score``, ``span_f1_score``, ``squad_scores``), and
  ``decode_spans``, which turns start/end scores into answer spans with the SQuAD 2.0
  no-answer rule.

See docs/finetuning.md. Dimension legend: B batch, T sequence length, N examples.
"""

from __future__ import annotations

import collections
import math
import re
import string
from dataclasses import dataclass

import numpy as np

from minibert.checks import check_int

__all__ = [
    "accuracy",
    "bio_entities",
    "entity_f1",
    "normalize_answer",
    "exact_match_score",
    "span_f1_score",
    "squad_scores",
    "SpanPrediction",
    "decode_spans",
]


def accuracy(predictions, labels) -> float:
    """Share of predictions equal to their label; predictions and labels int (N,)."""
    predictions, labels = np.asarray(predictions), np.asarray(labels)
    if predictions.shape != labels.shape or predictions.ndim != 1 or not predictions.size:
        raise ValueError(f"predictions and labels must be two 1-D arrays of one length >= 1, "
                         f"got shapes {predictions.shape} and {labels.shape}")
    return float((predictions == labels).mean())


def bio_entities(tags) -> list[tuple[str, int, int]]:
    """Entity spans (type, first word, last word + 1) of a BIO tag sequence.

    As conlleval and seqeval's default mode read BIO: an entity starts at ``B-X``, or at an
    ``I-X`` that does not continue an entity of type X; it goes on over the ``I-X`` that
    follow. ``O`` is outside every entity.
    """
    entities, kind, start = [], None, 0
    for index, tag in enumerate([*tags, "O"]):
        if tag != "O" and (len(tag) < 3 or tag[:2] not in ("B-", "I-")):
            raise ValueError(f"tags must be 'O', 'B-<type>' or 'I-<type>', got {tag!r} at "
                             f"position {index}")
        continues = tag.startswith("I-") and tag[2:] == kind
        if kind is not None and not continues:
            entities.append((kind, start, index))
            kind = None
        if tag != "O" and not continues:
            kind, start = tag[2:], index
    return entities


def entity_f1(true_tags: list, predicted_tags: list) -> dict[str, float]:
    """Micro precision, recall and F1 of entities: a predicted entity counts when its type,
    first and last word all equal those of a true one (seqeval's default, conlleval's count).

    Inputs: two lists of N tag sequences (one per sentence), sequence i of equal length in
    both. With no entity predicted (or none true) precision (recall) is 0, as seqeval.
    """
    if len(true_tags) != len(predicted_tags):
        raise ValueError(f"true_tags and predicted_tags must hold as many sentences, got "
                         f"{len(true_tags)} and {len(predicted_tags)}")
    correct = num_true = num_predicted = 0
    for index, (truth, guess) in enumerate(zip(true_tags, predicted_tags, strict=True)):
        if len(truth) != len(guess):
            raise ValueError(f"sentence {index}: true_tags has {len(truth)} tags but "
                             f"predicted_tags has {len(guess)}")
        true_set, predicted_set = set(bio_entities(truth)), set(bio_entities(guess))
        correct += len(true_set & predicted_set)
        num_true += len(true_set)
        num_predicted += len(predicted_set)
    precision = correct / num_predicted if num_predicted else 0.0
    recall = correct / num_true if num_true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {"precision": precision, "recall": recall, "f1": f1}


_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = set(string.punctuation)


def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lowercase, drop punctuation and articles, squeeze spaces."""
    text = "".join(char for char in text.lower() if char not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def exact_match_score(prediction: str, truth: str) -> float:
    """1.0 when the normalized answers are equal (both empty = both say "no answer")."""
    return float(normalize_answer(prediction) == normalize_answer(truth))


def span_f1_score(prediction: str, truth: str) -> float:
    """SQuAD's token-overlap F1 of two answers; a no-answer ("") scores 1 only against "".

    Tokens are the whitespace-separated words after ``normalize_answer``; shared tokens are
    counted with multiplicity.
    """
    predicted, true = normalize_answer(prediction).split(), normalize_answer(truth).split()
    if not predicted or not true:
        return float(predicted == true)
    shared = sum((collections.Counter(predicted) & collections.Counter(true)).values())
    if shared == 0:
        return 0.0
    precision, recall = shared / len(predicted), shared / len(true)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions: list[str], truths: list[str]) -> dict[str, float]:
    """Mean exact match and F1 (fractions in [0, 1]), overall and split by answerability."""
    if len(predictions) != len(truths) or not truths:
        raise ValueError(f"predictions and truths must be two lists of one length >= 1, got "
                         f"{len(predictions)} and {len(truths)}")
    exact = [exact_match_score(p, t) for p, t in zip(predictions, truths, strict=True)]
    f1 = [span_f1_score(p, t) for p, t in zip(predictions, truths, strict=True)]
    scores = {"exact_match": float(np.mean(exact)), "f1": float(np.mean(f1))}
    has_answer = np.array([bool(normalize_answer(t)) for t in truths])
    for name, rows in (("has_answer", has_answer), ("no_answer", ~has_answer)):
        if rows.any():
            scores[f"{name}_exact_match"] = float(np.mean(np.array(exact)[rows]))
            scores[f"{name}_f1"] = float(np.mean(np.array(f1)[rows]))
    return scores


# ----------------------------------------------------------------------------------------
# Span decoding (qa)
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class SpanPrediction:
    """The decoded answer of one question; ``start`` and ``end`` are None for "no answer"."""

    start: int | None  # token position of the answer's first token
    end: int | None  # token position of its last token (inclusive)
    score: float  # start_logit + end_logit of the best span; -inf when no span is allowed
    null_score: float  # start_logits[0] + end_logits[0], the [CLS] "no answer" score


def decode_spans(start_logits, end_logits, context_mask, max_answer_length: int = 30,
                 n_best: int = 20, null_threshold: float | None = 0.0) -> list[SpanPrediction]:
    """The best answer span of each row, or no answer (the SQuAD 2.0 rule).

    Inputs: start_logits, end_logits float (B, T); context_mask bool (B, T), True on the
    context's tokens; max_answer_length, the most tokens an answer may have; n_best, how
    many of the highest start and end scores (among context tokens) are combined;
    null_threshold, the margin of the SQuAD 2.0 rule: predict no answer when
    ``null_score - best span score > null_threshold`` (Google's run_squad.py rule, default
    0); None never predicts no answer (SQuAD 1.1).

    A span (s, e) is allowed when both ends lie in the context, s <= e and e - s + 1 <=
    max_answer_length; its score is start_logits[s] + end_logits[e].
    Output: one SpanPrediction per row.
    """
    start_logits, end_logits = np.asarray(start_logits), np.asarray(end_logits)
    context_mask = np.asarray(context_mask, dtype=bool)
    if not (start_logits.shape == end_logits.shape == context_mask.shape
            and start_logits.ndim == 2):
        raise ValueError(f"start_logits, end_logits and context_mask must have one shape "
                         f"(B, T), got {start_logits.shape}, {end_logits.shape} and "
                         f"{context_mask.shape}")
    max_answer_length = check_int("max_answer_length", max_answer_length, minimum=1)
    n_best = check_int("n_best", n_best, minimum=1)
    predictions = []
    for starts, ends, context in zip(start_logits, end_logits, context_mask, strict=True):
        positions = np.nonzero(context)[0]
        # The n highest-scoring context positions, best first (a stable sort keeps ties
        # in position order).
        best_starts = positions[np.argsort(-starts[positions], kind="stable")[:n_best]]
        best_ends = positions[np.argsort(-ends[positions], kind="stable")[:n_best]]
        best = (None, None, -math.inf)
        for s in best_starts:
            for e in best_ends:
                if s <= e < s + max_answer_length and starts[s] + ends[e] > best[2]:
                    best = (int(s), int(e), float(starts[s] + ends[e]))
        null_score = float(starts[0] + ends[0])
        start, end, score = best
        if start is None or (null_threshold is not None
                             and null_score - score > null_threshold):
            start = end = None
        predictions.append(SpanPrediction(start, end, score, null_score))
    return predictions
