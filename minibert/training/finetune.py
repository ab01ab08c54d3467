"""Fine-tuning: train a task head on a toy task, score it, save it; the ``finetune`` command.

``finetune("classify", "out/demo", "out/classify")`` loads the pretrained encoder of a
folder, puts a fresh head on it, trains everything on the task's labelled examples with
AdamW and a linear warmup-decay schedule (Devlin et al. 2019, section 4 and appendix A.3),
and writes a folder that ``BertForSequenceClassification.from_pretrained`` reloads
(config.json with the label names, model.safetensors, vocab.txt) plus metrics.json.
With ``model_dir=None`` the same model starts from random weights, with the WordPiece
vocabulary the pretraining job would learn: the "from scratch" arm of the transfer demo.

The metrics are the standard ones, written out here: accuracy (classify), entity-level
F1 with exact span match as conlleval/seqeval count it (tag), and SQuAD's exact match and
token-overlap F1 over answers and no-answers (qa). ``decode_spans`` turns start/end scores
into answer spans with the SQuAD 2.0 no-answer rule. See docs/finetuning.md.

Dimension legend: B batch, T sequence length, C number of labels, N examples.
"""

from __future__ import annotations

import collections
import dataclasses
import json
import math
import re
import string
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.config import PRESETS, BertConfig
from minibert.data import tasks
from minibert.io.fileio import atomic_write_json
from minibert.heads import (
    BertForQuestionAnswering,
    BertForSequenceClassification,
    BertForTokenClassification,
)
from minibert.training.optim import clip_grad_norm, make_optimizer
from minibert.training.schedules import make_schedule
from minibert.training.pretrain import TrainingDiverged

__all__ = [
    "HEADS",
    "FinetuneConfig",
    "SpanPrediction",
    "accuracy",
    "bio_entities",
    "entity_f1",
    "normalize_answer",
    "exact_match_score",
    "span_f1_score",
    "squad_scores",
    "decode_spans",
    "scratch_tokenizer",
    "build_model",
    "train_head",
    "evaluate_head",
    "run_finetune",
    "finetune",
    "add_finetune_command",
]

HEADS = {
    "classify": BertForSequenceClassification,
    "tag": BertForTokenClassification,
    "qa": BertForQuestionAnswering,
}
MODEL_FILES = ("config.json", "model.safetensors")


# ----------------------------------------------------------------------------------------
# Metrics
# ----------------------------------------------------------------------------------------


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
# Span decoding
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
    for name, value in (("max_answer_length", max_answer_length), ("n_best", n_best)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name} must be an int >= 1, got {value!r}")
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


# ----------------------------------------------------------------------------------------
# The job
# ----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class FinetuneConfig:
    """Everything that determines a fine-tuning run (saved in metrics.json)."""

    task: str = "classify"  # "classify", "tag" or "qa" (minibert.data.tasks.TASKS)
    train_size: int = 200  # labelled training examples
    test_size: int = 500  # test examples (the same for every train_size of one seed)
    epochs: int = 20  # passes over the training examples
    min_steps: int = 0  # at least this many steps: more epochs for a small training set
    batch_size: int = 16  # examples per step
    learning_rate: float = 1e-3  # peak of the linear warmup-decay schedule (tiny model)
    warmup_fraction: float = 0.1  # share of steps warming up from 0 (BERT: 10%)
    weight_decay: float = 0.01  # decoupled; not on LayerNorm weights and biases
    max_grad_norm: float = 1.0  # global-norm clipping
    max_length: int | None = None  # T; None: the task's default (tasks.DEFAULT_MAX_LENGTH)
    max_answer_length: int = 30  # qa: longest answer in tokens
    null_threshold: float = 0.0  # qa: margin of the SQuAD 2.0 no-answer rule
    seed: int = 0  # seeds the examples, the head's initial weights, dropout, batch order
    preset: str = "tiny"  # model size when starting from scratch
    vocab_size: int = 5000  # from scratch: WordPiece vocabulary cap, as pretraining
    corpus_seed: int = 0  # from scratch: seed of the toy corpus the vocabulary is learned on
    num_documents: int = 2600  # from scratch: documents of that corpus, as pretraining

    def __post_init__(self) -> None:
        if self.task not in tasks.TASKS:
            raise ValueError(f"task must be one of {list(tasks.TASKS)}, got {self.task!r}")
        for name in ("train_size", "epochs", "batch_size", "max_answer_length", "vocab_size",
                     "num_documents"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("test_size", "min_steps", "seed", "corpus_seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if self.max_length is not None and (isinstance(self.max_length, bool) or not
                                            isinstance(self.max_length, int)
                                            or self.max_length < 8):
            raise ValueError(f"max_length must be None or an integer >= 8, "
                             f"got {self.max_length!r}")
        if not (isinstance(self.learning_rate, (int, float)) and self.learning_rate > 0
                and math.isfinite(self.learning_rate)):
            raise ValueError(f"learning_rate must be a positive number, "
                             f"got {self.learning_rate!r}")
        if not 0 <= self.warmup_fraction < 1:
            raise ValueError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}")
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}, got {self.preset!r}")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def scratch_tokenizer(config: FinetuneConfig):
    """The WordPiece vocabulary ``minibert pretrain`` learns, for the from-scratch arm.

    Same corpus (``ToyCorpus.generate`` with ``corpus_seed``, ``num_documents``), same
    trainer and cap, so with the defaults it equals the vocab.txt of a default pretraining
    run and the two arms of the transfer demo differ only in their initial weights.
    """
    from minibert.data.corpus import ToyCorpus
    from minibert.tokenization import BertTokenizer

    corpus = ToyCorpus.generate(config.num_documents, 0, seed=config.corpus_seed)
    return BertTokenizer.train(corpus.sentences(), vocab_size=config.vocab_size)


def build_model(config: FinetuneConfig, task: tasks.TaskData, model_dir=None, tokenizer=None,
                progress: Callable[[str], None] = print):
    """The task's head model: on a pretrained encoder from ``model_dir``, or from scratch.

    Returns (model in train mode, tokenizer). Without ``model_dir`` the tokenizer is the
    given one or ``scratch_tokenizer(config)``.
    """
    cls = HEADS[config.task]
    labels = {"id2label": list(task.label_names)} if task.label_names else {}
    if model_dir is not None:
        from minibert.io.checkpoint import load_tokenizer

        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # reported below, in one line
            kwargs = {"num_labels": len(task.label_names), **labels} if labels else {}
            model = cls.from_pretrained(model_dir, seed=config.seed, **kwargs)
        tokenizer = tokenizer or load_tokenizer(model_dir)
        info = model.loading_info
        progress(f"encoder loaded from {model_dir}; new head {info['initialized_heads'] or '-'}"
                 f" initialized from seed {config.seed}; "
                 f"{len(info['unexpected_keys'])} unused checkpoint weights")
        return model.train(), tokenizer
    tokenizer = tokenizer or scratch_tokenizer(config)
    model_config = BertConfig.preset(config.preset, vocab_size=len(tokenizer),
                                     max_position_embeddings=128)
    model = cls(model_config, seed=config.seed, **labels)
    progress(f"model {cls.__name__} ({config.preset}) from random weights, vocabulary of "
             f"{len(tokenizer)} WordPiece tokens")
    return model.train(), tokenizer


def train_head(model, features: tasks.Features, config: FinetuneConfig,
               progress: Callable[[str], None] = print) -> list[dict]:
    """Train all weights; returns the history (step, loss, lr).

    ``config.epochs`` passes over the examples, or as many more as ``config.min_steps``
    needs; a pass draws a new random order of the examples.
    """
    steps_per_epoch = math.ceil(len(features) / config.batch_size)
    epochs = max(config.epochs, math.ceil(config.min_steps / steps_per_epoch))
    total_steps = epochs * steps_per_epoch
    schedule = make_schedule("linear", config.learning_rate,
                             warmup_steps=int(config.warmup_fraction * total_steps),
                             total_steps=total_steps)
    optimizer = make_optimizer("adamw", model, lr=schedule, weight_decay=config.weight_decay)
    order_rng = np.random.default_rng([config.seed, 3])
    history, step = [], 0
    model.train()
    for epoch in range(epochs):
        order = order_rng.permutation(len(features))
        losses = []
        for first in range(0, len(order), config.batch_size):
            model.zero_grad()
            out = model(**features.batch(order[first:first + config.batch_size]))
            if not math.isfinite(out.loss):
                raise TrainingDiverged(f"the loss became {out.loss} at step {step + 1}; "
                                       f"try a smaller learning rate")
            model.backward()
            clip_grad_norm(model, config.max_grad_norm)
            lr = optimizer.current_lr
            optimizer.step()
            step += 1
            losses.append(out.loss)
            history.append({"step": step, "loss": round(out.loss, 6), "lr": lr})
        progress(f"epoch {epoch + 1}/{epochs}  step {step}/{total_steps}  "
                 f"train loss {np.mean(losses):.4f}")
    return history


def _predict(model, features: tasks.Features, batch_size: int = 64) -> list:
    """Outputs of the model on every row, batch by batch, in eval mode."""
    was_training = model.training
    model.eval()
    outputs = []
    try:
        for first in range(0, len(features), batch_size):
            rows = np.arange(first, min(first + batch_size, len(features)))
            batch = features.batch(rows)
            inputs = {key: batch[key] for key in ("input_ids", "token_type_ids",
                                                  "attention_mask")}
            outputs.append((rows, model(**inputs)))
    finally:
        model.train(was_training)
    return outputs


def evaluate_head(model, task: tasks.TaskData, features: tasks.Features,
                  config: FinetuneConfig) -> dict:
    """Test metrics of a trained head on ``task.test`` (encoded as ``features``)."""
    examples = task.test
    if config.task == "classify":
        predictions = np.concatenate([out.logits.argmax(-1) for _, out in
                                      _predict(model, features)])
        return {"accuracy": accuracy(predictions, features.targets["labels"])}
    if config.task == "tag":
        word_ids = features.extras["word_ids"]
        true_tags, predicted_tags = [], []
        for rows, out in _predict(model, features):
            guesses = out.logits.argmax(-1)  # (B, T')
            for row, guess in zip(rows, guesses, strict=True):
                words = ["O"] * len(examples[row].words)  # words cut off are predicted O
                previous = -1
                for position, word in enumerate(word_ids[row, :guess.shape[0]]):
                    if word >= 0 and word != previous:
                        words[word] = tasks.BIO_TAGS[guess[position]]
                    previous = word
                true_tags.append(list(examples[row].tags))
                predicted_tags.append(words)
        scores = entity_f1(true_tags, predicted_tags)
        return {f"entity_{name}": value for name, value in scores.items()}
    offsets, context_mask = features.extras["offset_mapping"], features.extras["context_mask"]
    answers = []
    for rows, out in _predict(model, features):
        width = out.start_logits.shape[1]
        spans = decode_spans(out.start_logits, out.end_logits, context_mask[rows, :width],
                             config.max_answer_length, null_threshold=config.null_threshold)
        for row, span in zip(rows, spans, strict=True):
            if span.start is None:
                answers.append("")
            else:
                begin, end = offsets[row, span.start, 0], offsets[row, span.end, 1]
                answers.append(examples[row].context[begin:end])
    return squad_scores(answers, [example.answer for example in examples])


def run_finetune(config: FinetuneConfig, model_dir=None, tokenizer=None,
                 progress: Callable[[str], None] = print):
    """Draw the task, build the model, train, evaluate.

    Returns (model in eval mode, tokenizer, metrics dict, training history). Nothing is
    written; ``finetune`` saves the result.
    """
    start = time.perf_counter()
    task = tasks.make_task(config.task, config.train_size, config.test_size, config.seed)
    model, tokenizer = build_model(config, task, model_dir, tokenizer, progress)
    positions = model.config.max_position_embeddings
    max_length = config.max_length or min(tasks.DEFAULT_MAX_LENGTH[config.task], positions)
    if max_length > positions:
        raise ValueError(f"max_length={max_length} is longer than the model's "
                         f"max_position_embeddings={positions}; allowed: at most {positions}")
    train = tasks.encode(task, task.train, tokenizer, max_length)
    test = tasks.encode(task, task.test, tokenizer, max_length) if task.test else None
    truncated = train.truncated + (test.truncated if test else 0)
    progress(f"task {config.task}: {len(task.train)} training and {len(task.test)} test "
             f"examples ({truncated} truncated to max_length={max_length})")
    train_start = time.perf_counter()
    # Overflow or an invalid operation stops the run at once instead of spreading NaNs.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            history = train_head(model, train, config, progress)
            train_seconds = time.perf_counter() - train_start
            metrics = evaluate_head(model, task, test, config) if test else {}
        except FloatingPointError as error:
            raise TrainingDiverged(f"numerical overflow while fine-tuning: {error}; try a "
                                   f"smaller learning rate") from None
    metrics.update({
        "task": config.task,
        "init": "scratch" if model_dir is None else str(model_dir),
        "train_size": len(task.train),
        "test_size": len(task.test),
        "steps": len(history),
        "final_train_loss": float(np.mean([h["loss"] for h in history[-5:]])),
        "train_seconds": round(train_seconds, 2),
        "total_seconds": round(time.perf_counter() - start, 2),
        "config": config.to_dict(),
    })
    model.eval()
    return model, tokenizer, metrics, history


def _check_out_dir(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"--out {str(out_dir)!r} exists and is not a folder")
    holds_model = out_dir.is_dir() and any((out_dir / name).exists() for name in MODEL_FILES)
    if holds_model and not overwrite:
        raise FileExistsError(f"--out {str(out_dir)!r} already holds a model; pass "
                              f"--overwrite to replace it")


def finetune(task: str, model_dir, out_dir, train_size: int = 200, seed: int = 0, *,
             overwrite: bool = False, progress: Callable[[str], None] | None = None,
             **settings) -> dict:
    """Fine-tune on a toy task and write ``out_dir``; returns the metrics (also metrics.json).

    Inputs: task in ``tasks.TASKS``; model_dir, a pretrained folder (with vocab.txt) or None
    to start from random weights; out_dir, refused when it already holds a model unless
    ``overwrite``; other ``FinetuneConfig`` fields as keywords (epochs, learning_rate, ...).
    Writes config.json, model.safetensors, vocab.txt (reload with ``HEADS[task]
    .from_pretrained(out_dir)``), metrics.json and history.json.
    """
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    config = FinetuneConfig(task=task, train_size=train_size, seed=seed, **settings)
    out_dir = Path(out_dir)
    _check_out_dir(out_dir, overwrite)
    model, tokenizer, metrics, history = run_finetune(config, model_dir, None, progress)
    model.save_pretrained(out_dir, tokenizer=tokenizer)
    atomic_write_json(out_dir / "metrics.json", metrics)
    atomic_write_json(out_dir / "history.json", history)
    return metrics


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------


def add_finetune_command(subparsers) -> None:
    """Register ``minibert finetune`` on an argparse subparsers object."""
    defaults = FinetuneConfig()
    parser = subparsers.add_parser(
        "finetune", help="fine-tune a pretrained (or fresh) BERT on a toy task",
        description="Fine-tune on a labelled toy task drawn from the toy world: classify "
                    "(topic of a sentence), tag (BIO entities) or qa (extractive questions, "
                    "some unanswerable). Writes OUT/config.json, model.safetensors, "
                    "vocab.txt, metrics.json and history.json.")
    parser.add_argument("--task", required=True, help="classify, tag or qa")
    parser.add_argument("--model", metavar="DIR",
                        help="pretrained folder with vocab.txt (e.g. from pretrain); "
                             "omit to start from random weights")
    parser.add_argument("--out", required=True, metavar="DIR", help="output folder")
    parser.add_argument("--train-size", type=int, default=defaults.train_size)
    parser.add_argument("--test-size", type=int, default=defaults.test_size)
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--min-steps", type=int, default=defaults.min_steps,
                        help="train at least this many steps (more epochs for small sets)")
    parser.add_argument("--lr", type=float, default=defaults.learning_rate,
                        help="peak learning rate")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--max-length", type=int, default=None,
                        help="tokens per example (default: 48, or 128 for qa)")
    parser.add_argument("--seed", type=int, default=defaults.seed)
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a model already in --out")
    parser.set_defaults(handler=_run_finetune_command)


def _run_finetune_command(args) -> int:
    metrics = finetune(args.task, args.model, args.out, train_size=args.train_size,
                       seed=args.seed, overwrite=args.overwrite, test_size=args.test_size,
                       epochs=args.epochs, min_steps=args.min_steps, learning_rate=args.lr,
                       batch_size=args.batch_size, max_length=args.max_length)
    print(json.dumps(metrics, indent=2, sort_keys=True))
    return 0
