"""Fine-tuning: train a task head on a toy task, score it, save it.

``finetune("classify", "out/demo", "out/classify")`` loads the pretrained encoder of a
folder, puts a fresh head on it, trains everything on the task's labelled examples with
AdamW and a linear warmup-decay schedule (Devlin et al. 2019, section 4 and appendix A.3),
and writes a folder that ``BertForSequenceClassification.from_pretrained`` reloads
(config.json with the label names, model.safetensors, vocab.txt) plus metrics.json.
With ``model_dir=None`` the same model starts from random weights, with the WordPiece
vocabulary the pretraining job would learn: the "from scratch" arm of the transfer demo.

The scores (accuracy, entity F1, SQuAD's exact match and F1) and the decoding of answer
spans are in ``minibert.training.metrics``; the ``minibert finetune`` command in
``minibert.cli``. See docs/finetuning.md.

Dimension legend: B batch, T sequence length, C number of labels, N examples.
"""

from __future__ import annotations

import dataclasses
import math
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.checks import check_int, check_real
from minibert.config import PRESETS, BertConfig
from minibert.data import tasks
from minibert.family.registry import FAMILIES, family_of, family_of_folder, forward_inputs
from minibert.io.fileio import atomic_write_json, clear_run_files, run_folder
from minibert.training.loop import TrainingDiverged, eval_mode
from minibert.training.metrics import accuracy, decode_spans, entity_f1, squad_scores
from minibert.training.optim import make_optimizer
from minibert.training.schedules import make_schedule
from minibert.training.transport import OneProcess, refuse_ranks_without_world
from minibert.training.workers import DataParallel

__all__ = [
    "HEADS",
    "head_class",
    "FinetuneConfig",
    "scratch_tokenizer",
    "build_model",
    "train_head",
    "evaluate_head",
    "run_finetune",
    "finetune",
]

# BERT's head of each task (the family registry holds every family's: the others have
# sequence classification only).
HEADS = FAMILIES["bert"].tasks
MODEL_FILES = ("config.json", "model.safetensors")


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
    null_threshold: float | None = 0.0  # qa: margin of the SQuAD 2.0 no-answer rule
    seed: int = 0  # seeds the examples, the head's initial weights, dropout, batch order
    preset: str = "tiny"  # model size when starting from scratch
    vocab_size: int = 5000  # from scratch: WordPiece vocabulary cap, as pretraining
    corpus_seed: int = 0  # from scratch: seed of the toy corpus the vocabulary is learned on
    num_documents: int = 2600  # from scratch: documents of that corpus, as pretraining
    lora_rank: int | None = None  # LoRA adapters of this rank on query and value; None: all
    lora_alpha: float = 16.0  # LoRA's update is scaled by lora_alpha / lora_rank
    # Data-parallel worker processes (minibert.training.workers.DataParallel): each batch
    # split into this many shards, one per worker, the same update as one process
    workers: int = 1

    def __post_init__(self) -> None:
        if self.task not in tasks.TASKS:
            raise ValueError(f"task must be one of {list(tasks.TASKS)}, got {self.task!r}")
        for name in ("train_size", "epochs", "batch_size", "max_answer_length", "vocab_size",
                     "num_documents"):
            check_int(name, getattr(self, name), minimum=1)
        for name in ("test_size", "min_steps", "seed", "corpus_seed"):
            check_int(name, getattr(self, name), minimum=0)
        if self.max_length is not None:
            check_int("max_length", self.max_length, minimum=8)
        if self.lora_rank is not None:
            check_int("lora_rank", self.lora_rank, minimum=1)
        check_int("workers", self.workers, minimum=1)
        if self.workers > 1 and self.lora_rank is not None:
            raise ValueError(f"workers must be 1 with lora_rank (the workers train every "
                             f"weight), got {self.workers}")
        if self.workers > self.batch_size:
            raise ValueError(f"workers must be at most batch_size {self.batch_size} (every "
                             f"worker needs one example), got {self.workers}")
        check_real("lora_alpha", self.lora_alpha, 0, above=True)
        check_real("learning_rate", self.learning_rate, 0, above=True)
        check_real("warmup_fraction", self.warmup_fraction, 0, maximum=1, below=True)
        check_real("weight_decay", self.weight_decay, 0)
        check_real("max_grad_norm", self.max_grad_norm, 0, above=True)
        if self.null_threshold is not None:
            check_real("null_threshold", self.null_threshold)
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


def _family(model_dir):
    """The Family of a folder's config.json (BERT's when it names none or is unreadable).

    An unreadable or missing folder is BERT's here: loading it then raises the usual error.
    """
    import os

    if not isinstance(model_dir, (str, os.PathLike)) or \
            not (Path(model_dir) / "config.json").is_file():
        return FAMILIES["bert"]
    try:
        return family_of_folder(model_dir)
    except (OSError, ValueError):
        return FAMILIES["bert"]


def head_class(task: str, model_dir=None):
    """The head model class for ``task`` on the family of ``model_dir`` (BERT without one).

    ALBERT, DistilBERT and ELECTRA folders have a head for "classify" only; another task
    raises ValueError naming the task and the model type.
    """
    if task not in tasks.TASKS:
        raise ValueError(f"task must be one of {list(tasks.TASKS)}, got {task!r}")
    family = FAMILIES["bert"] if model_dir is None else _family(model_dir)
    heads = family.tasks
    if task not in heads:
        available = ", ".join(f"{name!r} ({cls.__name__})" for name, cls in heads.items())
        raise ValueError(f"task {task!r} is not available for model_type {family.model_type!r} "
                         f"(--model {str(model_dir)!r}): minibert has only {available} for "
                         f"{family.model_type}; task {task!r} needs a BERT checkpoint")
    return heads[task]


def build_model(config: FinetuneConfig, task: tasks.TaskData, model_dir=None, tokenizer=None,
                progress: Callable[[str], None] = print):
    """The task's head model: on a pretrained encoder from ``model_dir``, or from scratch.

    The head's class follows the folder's model_type (``head_class``): BERT's heads, or
    AlbertForSequenceClassification / DistilBertForSequenceClassification for "classify".
    Returns (model in train mode, tokenizer). Without ``model_dir`` the model is a BERT and
    the tokenizer is the given one or ``scratch_tokenizer(config)``.
    """
    cls = head_class(config.task, model_dir)
    labels = {"id2label": list(task.label_names)} if task.label_names else {}
    if model_dir is not None:
        from minibert.tokenization import load_tokenizer

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
               progress: Callable[[str], None] = print, trained=None,
               world=None) -> list[dict]:
    """Train all weights, or only those of ``trained`` (a Module sharing the model's arrays,
    e.g. ``lora_trainable(model)``); returns the history (step, loss, lr).

    ``world``: the MPI world (``minibert.bridges.mpi.world()``) when this is one of its
    ranks: every rank trains its shard of each batch (``world.transport``); else
    ``config.workers`` processes of this machine, or this process.

    ``config.epochs`` passes over the examples, or as many more as ``config.min_steps``
    needs; a pass draws a new random order of the examples.
    """
    steps_per_epoch = math.ceil(len(features) / config.batch_size)
    epochs = max(config.epochs, math.ceil(config.min_steps / steps_per_epoch))
    total_steps = epochs * steps_per_epoch
    schedule = make_schedule("linear", config.learning_rate,
                             warmup_steps=int(config.warmup_fraction * total_steps),
                             total_steps=total_steps)
    optimizer = make_optimizer("adamw", model if trained is None else trained, lr=schedule,
                               weight_decay=config.weight_decay)
    order_rng = np.random.default_rng([config.seed, 3])
    history, step = [], 0
    model.train()
    if world is not None:
        world.start()  # every rank is ready, or every rank stops here
    with _transport(model, optimizer, config, world) as transport:
        for epoch in range(epochs):
            order = order_rng.permutation(len(features))
            losses = []
            for first in range(0, len(order), config.batch_size):
                lr = optimizer.current_lr
                rows = order[first:first + config.batch_size]
                if len(rows) < transport.num_workers:  # a last batch smaller than the workers
                    rows = order[-config.batch_size:]
                result = transport.step(forward_inputs(model, features.batch(rows)))
                if not math.isfinite(result.loss):
                    raise TrainingDiverged(f"the loss became {result.loss} at step {step + 1}; "
                                           f"try a smaller learning rate")
                step += 1
                losses.append(result.loss)
                history.append({"step": step, "loss": round(result.loss, 6), "lr": lr})
            progress(f"epoch {epoch + 1}/{epochs}  step {step}/{total_steps}  "
                     f"train loss {np.mean(losses):.4f}")
        transport.pull()
    return history


def _transport(model, optimizer, config: FinetuneConfig, world=None):
    """This rank's side of MPI, ``config.workers`` worker processes, or this process."""
    if world is not None:
        return world.transport(model, optimizer, clip=config.max_grad_norm)
    if config.workers == 1:
        return OneProcess(model, optimizer, config.max_grad_norm)
    return DataParallel(model, optimizer, config.workers, clip=config.max_grad_norm,
                        seed=config.seed)


def _predict(model, features: tasks.Features, batch_size: int = 64) -> list:
    """Outputs of the model on every row, batch by batch, in eval mode."""
    outputs = []
    with eval_mode(model):
        for first in range(0, len(features), batch_size):
            rows = np.arange(first, min(first + batch_size, len(features)))
            batch = features.batch(rows)
            inputs = {key: batch[key] for key in ("input_ids", "token_type_ids",
                                                  "attention_mask")}
            outputs.append((rows, model(**forward_inputs(model, inputs))))
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
                 progress: Callable[[str], None] = print, world=None):
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
    trained = model
    if config.lora_rank is not None:
        from minibert.lora import apply_lora, lora_trainable

        # Adapters on the encoder's query and value; the new task head trains in full.
        apply_lora(model, config.lora_rank, config.lora_alpha, seed=config.seed)
        head = [name for name in model._modules if name != family_of(model).encoder]
        trained = lora_trainable(model, also=head)
    train_start = time.perf_counter()
    # Overflow or an invalid operation stops the run at once instead of spreading NaNs.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            history = train_head(model, train, config, progress, trained, world)
            train_seconds = time.perf_counter() - train_start
            if world is not None:
                world.finished = True
                if world.rank > 0:  # rank 0 evaluates and writes
                    return model, tokenizer, {}, history
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
        "trained_parameters": trained.num_parameters(),
        "total_seconds": round(time.perf_counter() - start, 2),
        "config": config.to_dict(),
    })
    if config.lora_rank is not None:
        from minibert.lora import merge_lora

        merge_lora(model)  # saved as a plain model of its class, the update folded in
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
             world=None, **settings) -> dict:
    """Fine-tune on a toy task and write ``out_dir``; returns the metrics (also metrics.json).

    Inputs: task in ``tasks.TASKS``; model_dir, a pretrained folder (with vocab.txt) or None
    to start from random weights; out_dir, refused when it already holds a model unless
    ``overwrite``; other ``FinetuneConfig`` fields as keywords (epochs, learning_rate, ...).
    Writes config.json, model.safetensors, vocab.txt (reload with ``head_class(task,
    out_dir).from_pretrained(out_dir)``; ``HEADS[task]`` for BERT), metrics.json and
    history.json. An ALBERT or DistilBERT ``model_dir`` fine-tunes its own family's
    classifier (task "classify" only); DistilBERT is given no token types.

    ``world``: on MPI ranks, each rank's world (``minibert.bridges.mpi.world()``, which the
    command line passes under mpiexec): every rank trains its shard of each batch, rank 0
    alone evaluates, writes and returns the metrics (the others return {}); a process that
    a launcher started as one of several ranks is refused without its world.
    """
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    config = FinetuneConfig(task=task, train_size=train_size, seed=seed, **settings)
    out_dir = Path(out_dir)
    refuse_ranks_without_world(world, "finetune")
    try:
        if world is not None and world.rank > 0:
            # Another rank of an MPI job: the same examples and weights, its own shards; it
            # writes nothing and returns {} (the metrics are rank 0's).
            run_finetune(config, model_dir, None, lambda message: None, world)
            return {}
        _check_out_dir(out_dir, overwrite)
        # Locked (and proven writable) before any work: a second run into out_dir is refused.
        with run_folder(out_dir, notice=progress):
            model, tokenizer, metrics, history = run_finetune(config, model_dir, None,
                                                              progress, world)
            if overwrite:
                clear_run_files(out_dir)  # the previous run's files (only minibert's) go
            model.save_pretrained(out_dir, tokenizer=tokenizer)
            atomic_write_json(out_dir / "metrics.json", metrics)
            atomic_write_json(out_dir / "history.json", history)
        return metrics
    except BaseException as error:
        if world is not None and not world.started:
            world.fail(error)  # the other ranks, waiting to start, stop with this one
        elif world is not None and not world.finished and not getattr(error, "agreed", False):
            world.abort(error)  # the others would wait for this rank in the next all-reduce
        raise
