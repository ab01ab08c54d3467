"""Pretraining: the MLM + NSP loop, held-out evaluation, atomic checkpoints, exact resume.

``pretrain(TrainingConfig(...), out_dir)`` runs the whole job: make (or read) a corpus,
learn a WordPiece vocabulary, cut pretraining instances, train a BertForPreTraining,
evaluate on held-out documents, and write a folder that ``from_pretrained`` loads
(config.json, model.safetensors, vocab.txt) plus metrics.json and history.json.

A run is a pure function of its TrainingConfig: corpus, vocabulary, instances, initial
weights, batch order, masks and dropout all come from seeded generators. A checkpoint
holds the weights, the optimizer moments, the dropout generator's state and the batch
stream's position, so a resumed run continues bit-identically.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import shutil
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.io import safetensors
from minibert.config import PRESETS, BertConfig
from minibert.data import corpus as toy
from minibert.data import (
    PretrainingBatches,
    PretrainingDataConfig,
    collate_instances,
    create_pretraining_instances,
)
from minibert.io.fileio import atomic_write_json
from minibert.model import BertForPreTraining
from minibert.training.optim import clip_grad_norm, make_optimizer
from minibert.training.schedules import SCHEDULES, make_schedule
from minibert.tokenization import BertTokenizer

__all__ = ["TrainingConfig", "TrainingDiverged", "Trainer", "pretrain", "evaluate",
           "evaluate_pretrained", "unigram_baseline_accuracy", "prepare_data", "checkpoint_step"]

CHECKPOINT_DIR = "checkpoint"
OBJECTIVES = ("nsp", "sop", "mlm")


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last checkpoint on disk is left untouched."""


@dataclass(frozen=True)
class TrainingConfig:
    """Everything that determines a pretraining run (saved with every checkpoint)."""

    preset: str = "tiny"  # model size from BertConfig.preset
    objective: str = "nsp"  # "nsp" (BERT), "sop" (ALBERT) or "mlm" (MLM only)
    # Enough steps for next-sentence prediction to rise past its plateau (it starts near
    # step 2,000 with seed 0, later with other seeds) and to settle in the final decay
    # (docs/results.md gives the curves and the time).
    steps: int = 3000  # optimizer steps
    # 64 pairs of single sentences (T = 32) per step: the same 2,048 tokens as 32 x 64, but
    # masked-LM learns faster per step (docs/results.md).
    batch_size: int = 64  # sequences per step
    max_seq_length: int = 32  # T of the pretraining instances
    vocab_size: int = 5000  # WordPiece vocabulary cap (the toy corpus saturates near 4,600)
    learning_rate: float = 1e-3  # peak of the schedule
    # "warmup_stable_decay" (the peak rate, then a linear decay to 0 over the last
    # decay_fraction of the steps), "constant" (the peak rate throughout) or "linear"
    # (warmup, then decay to 0 over all the rest: BERT's). The final decay is what lets a
    # short run settle; a decay over the whole run slows the early climb of masked-LM
    # (docs/results.md compares the three).
    schedule: str = "warmup_stable_decay"
    warmup_fraction: float = 0.0  # share of steps warming up from 0 (not for "constant")
    decay_fraction: float = 0.2  # "warmup_stable_decay" only: share of steps of the final decay
    optimizer: str = "adamw"  # "adamw" or "adam_weight_decay" (Google's)
    weight_decay: float = 0.01  # decoupled; not applied to LayerNorm and biases
    max_grad_norm: float = 1.0  # global-norm clipping threshold
    # Hidden and attention-probability dropout of the model. BERT uses 0.1; a run this short
    # sees each pretraining instance about once, so there is little to over-fit, and dropout
    # only slows learning down (docs/results.md).
    dropout: float = 0.0
    dupe_factor: int = 5  # passes over the corpus when cutting instances (static masks)
    dynamic_masking: bool = False  # re-mask every epoch (RoBERTa) instead of static masks
    masked_lm_prob: float = 0.15  # share of tokens chosen as MLM targets
    max_predictions_per_seq: int = 10  # cap on MLM targets per sequence (Google: 20 for T=128)
    num_documents: int = 2600  # toy-corpus training documents (~230k words)
    num_heldout_documents: int = 260  # toy-corpus held-out documents
    corpus: str | None = None  # a text file in BERT's format instead of the toy corpus
    eval_every: int = 250  # held-out evaluation period in steps (and at the end)
    eval_batches: int = 8  # held-out batches per evaluation
    log_every: int = 10  # history and progress-line period in steps
    # Resumable checkpoints, on by default so that Ctrl-C or a killed job loses little: the
    # first after step 1 (an --out that cannot be written fails at once), then after every
    # save_seconds of training, or every save_every steps when set; save_seconds 0 and
    # save_every 0 write none. The checkpoint is removed when the run finishes.
    save_seconds: float = 60.0
    save_every: int = 0
    seed: int = 0  # seeds corpus, vocabulary, instances, weights, batches and dropout

    def __post_init__(self) -> None:
        if self.preset not in PRESETS:
            raise ValueError(f"preset must be one of {list(PRESETS)}, got {self.preset!r}")
        if self.objective not in OBJECTIVES:
            raise ValueError(f"objective must be one of {list(OBJECTIVES)}, "
                             f"got {self.objective!r}")
        for name in ("steps", "batch_size", "max_seq_length", "vocab_size", "dupe_factor",
                     "max_predictions_per_seq", "num_documents", "eval_every", "eval_batches",
                     "log_every"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive integer, got {value!r}")
        for name in ("save_every", "num_heldout_documents", "seed"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{name} must be a non-negative integer, got {value!r}")
        if not (isinstance(self.learning_rate, (int, float)) and self.learning_rate > 0
                and math.isfinite(self.learning_rate)):
            raise ValueError(f"learning_rate must be a positive number, "
                             f"got {self.learning_rate!r}")
        if (isinstance(self.save_seconds, bool) or not isinstance(self.save_seconds, (int, float))
                or not 0 <= self.save_seconds < math.inf):
            raise ValueError(f"save_seconds must be a non-negative number of seconds, "
                             f"got {self.save_seconds!r}")
        if not 0 <= self.warmup_fraction < 1:
            raise ValueError(f"warmup_fraction must be in [0, 1), got {self.warmup_fraction!r}")
        if (isinstance(self.dropout, bool) or not isinstance(self.dropout, (int, float))
                or not 0 <= self.dropout < 1):
            raise ValueError(f"dropout must be a number in [0, 1), got {self.dropout!r}")
        if self.schedule not in SCHEDULES:
            raise ValueError(f"schedule must be one of {list(SCHEDULES)}, got {self.schedule!r}")
        if (isinstance(self.decay_fraction, bool)
                or not isinstance(self.decay_fraction, (int, float))
                or not 0 <= self.decay_fraction <= 1
                or self.warmup_fraction + self.decay_fraction > 1):
            raise ValueError(f"decay_fraction must be a number in [0, 1 - warmup_fraction], "
                             f"got {self.decay_fraction!r} (warmup_fraction "
                             f"{self.warmup_fraction!r})")

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainingConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in data.items() if k in known})


# ------------------------------------------------------------------------------------------
# Data
# ------------------------------------------------------------------------------------------

@dataclass
class PreparedData:
    """Tokenizer, instances and batch streams of one run."""

    tokenizer: BertTokenizer
    data_config: PretrainingDataConfig
    train_batches: PretrainingBatches
    heldout_instances: list
    train_instances: list
    corpus_words: int


def _split_documents(documents: list, seed: int) -> tuple[list, list]:
    """Hold out ~5% of a text file's documents (at least two, for NotNext) for evaluation.

    A corpus of fewer than 6 documents is too small to split: it is evaluated on its
    training text, with a warning.
    """
    if len(documents) < 6:
        warnings.warn(f"the corpus has only {len(documents)} documents, too few to hold some "
                      f"out; held-out metrics are measured on the training text", stacklevel=3)
        return documents, documents
    order = np.random.default_rng([seed, 7]).permutation(len(documents))
    heldout_count = max(2, len(documents) // 20)
    heldout = [documents[i] for i in sorted(order[:heldout_count])]
    train = [documents[i] for i in sorted(order[heldout_count:])]
    return train, heldout


def _data_config(config: TrainingConfig) -> PretrainingDataConfig:
    return PretrainingDataConfig(
        max_seq_length=config.max_seq_length, masked_lm_prob=config.masked_lm_prob,
        max_predictions_per_seq=config.max_predictions_per_seq, dupe_factor=config.dupe_factor,
        random_seed=config.seed, objective=config.objective,
        dynamic_masking=config.dynamic_masking)


def _heldout_instances(heldout_docs: list, tokenizer: BertTokenizer,
                       data_config: PretrainingDataConfig) -> list:
    """One static pass over the held-out documents, with a seed of its own."""
    heldout_config = dataclasses.replace(data_config, dupe_factor=1, dynamic_masking=False,
                                         random_seed=data_config.random_seed + 1)
    return create_pretraining_instances(heldout_docs, tokenizer, heldout_config)


def prepare_data(config: TrainingConfig, progress: Callable[[str], None] = print) -> PreparedData:
    """Corpus -> WordPiece vocabulary -> pretraining instances -> a resumable batch stream."""
    if config.corpus is None:
        corpus = toy.ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                        seed=config.seed)
        train_docs, heldout_docs = corpus.train, corpus.heldout
    else:
        documents = toy.read_corpus(config.corpus)
        if len(documents) < 2 and config.objective != "mlm":
            raise ValueError(f"corpus {config.corpus!r} has {len(documents)} document; "
                             f"next-sentence objectives need at least 2 (or use --objective mlm)")
        train_docs, heldout_docs = _split_documents(documents, config.seed)
    words = toy.count_words(train_docs)
    progress(f"corpus: {len(train_docs)} training documents ({words:,} words), "
             f"{len(heldout_docs)} held out")
    sentences = [sentence for document in train_docs for sentence in document]
    tokenizer = BertTokenizer.train(sentences, vocab_size=config.vocab_size)
    progress(f"vocabulary: {len(tokenizer)} WordPiece tokens learned from the corpus")
    data_config = _data_config(config)
    train_instances = create_pretraining_instances(train_docs, tokenizer, data_config)
    heldout_instances = _heldout_instances(heldout_docs, tokenizer, data_config)
    progress(f"instances: {len(train_instances)} for training, {len(heldout_instances)} held out "
             f"(objective {config.objective}, T={config.max_seq_length})")
    batches = PretrainingBatches(train_instances, tokenizer, data_config,
                                 batch_size=config.batch_size, padding="longest",
                                 seed=config.seed)
    return PreparedData(tokenizer, data_config, batches, heldout_instances, train_instances,
                        words)


def _heldout_batches(data: PreparedData, batch_size: int, limit: int | None):
    """Batches of the held-out instances: the first ``limit`` batches, or all (None)."""
    instances = data.heldout_instances
    if limit is not None:
        instances = instances[: batch_size * limit]
    for start in range(0, len(instances), batch_size):
        yield collate_instances(instances[start:start + batch_size],
                                data.tokenizer.pad_token_id,
                                max_predictions_per_seq=data.data_config.max_predictions_per_seq)


def evaluate(model: BertForPreTraining, batches) -> dict[str, float]:
    """Held-out metrics: masked_lm_accuracy/loss and (when labelled) next_sentence_accuracy/loss.

    Losses are means over targets (MLM) and sequences (NSP); the model runs in eval mode.
    """
    was_training = model.training
    model.eval()
    mlm_correct = mlm_count = nsp_correct = nsp_count = 0
    mlm_loss_sum = nsp_loss_sum = 0.0
    try:
        for batch in batches:
            out = model(**batch.model_inputs())
            targets = batch.labels[out.masked_lm_positions]
            mlm_correct += int((out.masked_lm_logits.argmax(-1) == targets).sum())
            mlm_count += targets.size
            mlm_loss_sum += out.masked_lm_loss * targets.size
            if batch.next_sentence_label is not None:
                predicted = out.seq_relationship_logits.argmax(-1)
                nsp_correct += int((predicted == batch.next_sentence_label).sum())
                nsp_count += batch.next_sentence_label.size
                nsp_loss_sum += out.next_sentence_loss * batch.next_sentence_label.size
    finally:
        model.train(was_training)
    metrics = {"masked_lm_accuracy": mlm_correct / max(mlm_count, 1),
               "masked_lm_loss": mlm_loss_sum / max(mlm_count, 1)}
    if nsp_count:
        metrics["next_sentence_accuracy"] = nsp_correct / nsp_count
        metrics["next_sentence_loss"] = nsp_loss_sum / nsp_count
    return metrics


def evaluate_pretrained(model_dir: str | os.PathLike) -> dict[str, float]:
    """Evaluate a folder written by ``pretrain`` again, on the held-out data of its run.

    The held-out documents are regenerated from the folder's training_config.json (toy
    corpus only) and cut into instances with the folder's own vocabulary, so the result
    repeats metrics.json's held-out figures up to the rounding of this machine's BLAS.
    Returns masked_lm_accuracy/loss and next_sentence_accuracy/loss (for "nsp"/"sop").
    """
    model_dir = Path(model_dir)
    settings = model_dir / "training_config.json"
    if not settings.is_file():
        raise FileNotFoundError(f"model_dir {str(model_dir)!r} has no training_config.json: "
                                f"only a folder written by pretrain can be evaluated again")
    config = TrainingConfig.from_dict(json.loads(settings.read_text(encoding="utf-8")))
    if config.corpus is not None:
        raise ValueError(f"model_dir {str(model_dir)!r} was trained on the text file "
                         f"{config.corpus!r}; only toy-corpus runs can be evaluated again")
    corpus = toy.ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                    seed=config.seed)
    tokenizer = BertTokenizer.from_pretrained(model_dir)
    data_config = _data_config(config)
    instances = _heldout_instances(corpus.heldout, tokenizer, data_config)
    with warnings.catch_warnings():
        # The pretraining heads are all there; nothing to report about unused weights.
        warnings.simplefilter("ignore")
        model = BertForPreTraining.from_pretrained(model_dir)
    batches = [collate_instances(instances[start:start + config.batch_size],
                                 tokenizer.pad_token_id,
                                 max_predictions_per_seq=config.max_predictions_per_seq)
               for start in range(0, len(instances), config.batch_size)]
    return {**evaluate(model, batches), "heldout_sequences": len(instances)}


def unigram_baseline_accuracy(train_instances, heldout_batches) -> float:
    """MLM accuracy of always answering the most frequent training target token."""
    counts: dict[int, int] = {}
    for instance in train_instances[:20000]:
        if instance.masking is None:
            ids = [instance.token_ids[p] for p in range(len(instance.token_ids))]
        else:
            ids = instance.masking.masked_lm_ids
        for token_id in ids:
            counts[token_id] = counts.get(token_id, 0) + 1
    most_frequent = max(counts, key=lambda k: (counts[k], -k))
    correct = total = 0
    for batch in heldout_batches:
        targets = batch.labels[batch.labels != -100]
        correct += int((targets == most_frequent).sum())
        total += targets.size
    return correct / max(total, 1)


# ------------------------------------------------------------------------------------------
# Trainer
# ------------------------------------------------------------------------------------------

def _model_config(config: TrainingConfig, vocab_size: int) -> BertConfig:
    return BertConfig.preset(config.preset, vocab_size=vocab_size,
                             max_position_embeddings=max(128, config.max_seq_length),
                             hidden_dropout_prob=config.dropout,
                             attention_probs_dropout_prob=config.dropout)


class Trainer:
    """The pretraining loop over a prepared data stream, with checkpoints and history."""

    def __init__(self, config: TrainingConfig, data: PreparedData,
                 progress: Callable[[str], None] = print) -> None:
        self.config = config
        self.data = data
        self.progress = progress
        self.model = BertForPreTraining(_model_config(config, len(data.tokenizer)),
                                        seed=config.seed)
        warmup = int(config.warmup_fraction * config.steps)
        schedule = make_schedule(config.schedule, config.learning_rate, warmup_steps=warmup,
                                 total_steps=config.steps,
                                 decay_steps=int(config.decay_fraction * config.steps))
        self.optimizer = make_optimizer(config.optimizer, self.model, lr=schedule,
                                        weight_decay=config.weight_decay)
        self.step = 0
        self.history: list[dict] = []
        self.train_seconds = 0.0
        self._saved_at: float | None = None  # train_seconds at the last checkpoint
        self._save_cost = 0.0  # seconds the last checkpoint took to write

    # -- checkpoints -------------------------------------------------------------------------
    def save_checkpoint(self, out_dir: Path) -> Path:
        """Write checkpoint/ atomically: a complete new folder replaces the old one."""
        start = time.perf_counter()
        final = out_dir / CHECKPOINT_DIR
        staging = out_dir / f".{CHECKPOINT_DIR}.new"
        previous = out_dir / f".{CHECKPOINT_DIR}.old"
        shutil.rmtree(staging, ignore_errors=True)
        try:
            staging.mkdir(parents=True)
            safetensors.save_file(dict(self.model.named_parameters()),
                                  staging / "model.safetensors", metadata={"format": "pt"})
            safetensors.save_file(self.optimizer.state_dict(),
                                  staging / "optimizer.safetensors")
            atomic_write_json(staging / "trainer_state.json", {
                "step": self.step,
                "training_config": self.config.to_dict(),
                "batches": self.data.train_batches.state_dict(),
                "dropout_rng": self.model.dropout_rng.bit_generator.state,
                "history": self.history,
                "train_seconds": self.train_seconds,
            })
        except BaseException:
            shutil.rmtree(staging, ignore_errors=True)  # a full disk keeps no partial copy
            raise
        # Swap: the old checkpoint stays readable until the new one is complete.
        shutil.rmtree(previous, ignore_errors=True)
        if final.exists():
            os.replace(final, previous)
        os.replace(staging, final)
        shutil.rmtree(previous, ignore_errors=True)
        self._saved_at = self.train_seconds
        self._save_cost = time.perf_counter() - start
        return final

    def checkpoint_due(self) -> bool:
        """Whether the step just taken should be followed by a checkpoint (see TrainingConfig)."""
        config = self.config
        if config.save_every and (self.step % config.save_every == 0
                                  or self.step == config.steps):
            return True
        if not config.save_seconds:
            return False
        if self._saved_at is None or self.step == config.steps:
            return True
        # A model whose checkpoint is slow to write (BERT-Base: seconds) is saved less often,
        # so that checkpoints never cost more than about 1% of the training time.
        interval = max(config.save_seconds, 100 * self._save_cost)
        return self.train_seconds - self._saved_at >= interval

    @staticmethod
    def remove_checkpoint(out_dir: Path) -> None:
        """Delete the checkpoint folders of ``out_dir`` (current, and any cut-short swap)."""
        for name in (CHECKPOINT_DIR, f".{CHECKPOINT_DIR}.new", f".{CHECKPOINT_DIR}.old"):
            shutil.rmtree(out_dir / name, ignore_errors=True)

    @staticmethod
    def find_checkpoint(out_dir: Path) -> Path | None:
        """The newest complete checkpoint folder (the .old one if a swap was cut short)."""
        for name in (CHECKPOINT_DIR, f".{CHECKPOINT_DIR}.old"):
            candidate = out_dir / name
            if (candidate / "trainer_state.json").is_file():
                return candidate
        return None

    @staticmethod
    def read_checkpoint_state(folder: Path, config: TrainingConfig) -> dict:
        """The checkpoint's trainer_state.json, refused unless ``config`` continues its run.

        Reads only that small file, so a mismatch is reported before any data preparation.
        """
        state = json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))
        saved = TrainingConfig.from_dict(state["training_config"])
        differences = {k: (v, getattr(config, k)) for k, v in saved.to_dict().items()
                       if k not in ("steps", "save_every", "save_seconds", "log_every",
                                    "eval_every")
                       and v != getattr(config, k)}
        if differences:
            shown = ", ".join(f"{k}: checkpoint {a!r} vs now {b!r}"
                              for k, (a, b) in differences.items())
            raise ValueError(f"--resume needs the settings of the interrupted run; {shown}")
        if saved.steps != config.steps:
            raise ValueError(f"--resume needs the same --steps as the interrupted run "
                             f"({saved.steps}), got {config.steps}")
        return state

    def load_checkpoint(self, folder: Path, state: dict | None = None) -> None:
        """Continue from ``folder``; ``state`` is its read_checkpoint_state when already read."""
        if state is None:
            state = self.read_checkpoint_state(folder, self.config)
        self.model.load_state_dict(safetensors.load_file(folder / "model.safetensors",
                                                         mmap=False))
        self.optimizer.load_state_dict(safetensors.load_file(folder / "optimizer.safetensors",
                                                             mmap=False))
        self.data.train_batches.load_state_dict(state["batches"])
        self.model.dropout_rng.bit_generator.state = state["dropout_rng"]
        self.step = int(state["step"])
        self.history = list(state["history"])
        self.train_seconds = float(state["train_seconds"])
        self._saved_at = self.train_seconds

    # -- the loop ----------------------------------------------------------------------------
    def evaluate(self) -> dict[str, float]:
        return evaluate(self.model, _heldout_batches(self.data, self.config.batch_size,
                                                     self.config.eval_batches))

    def train(self, out_dir: Path | None = None,
              step_hook: Callable[[int], None] | None = None) -> None:
        """Run until ``config.steps``, checkpointing into out_dir when checkpoint_due()."""
        config, model = self.config, self.model
        model.train()
        batches = self.data.train_batches
        tokens_seen, window_start = 0, time.perf_counter()
        while self.step < config.steps:
            step_start = time.perf_counter()
            batch = next(batches)
            model.zero_grad()
            out = model(**batch.model_inputs())
            if not math.isfinite(out.loss):
                raise TrainingDiverged(
                    f"loss became {out.loss} at step {self.step + 1}; training stopped "
                    f"(the last checkpoint, if any, is intact)")
            model.backward()
            grad_norm = clip_grad_norm(model, config.max_grad_norm)
            lr = self.optimizer.current_lr
            self.optimizer.step()
            self.step += 1
            self.train_seconds += time.perf_counter() - step_start
            tokens_seen += int(batch.attention_mask.sum())
            if self.step % config.log_every == 0 or self.step == 1:
                record = {"step": self.step, "split": "train", "loss": out.loss, "lr": lr,
                          "grad_norm": grad_norm, "masked_lm_loss": out.masked_lm_loss}
                targets = batch.labels[out.masked_lm_positions]
                if targets.size:
                    record["masked_lm_accuracy"] = float(
                        (out.masked_lm_logits.argmax(-1) == targets).mean())
                if out.next_sentence_loss is not None:
                    record["next_sentence_loss"] = out.next_sentence_loss
                    record["next_sentence_accuracy"] = float(
                        (out.seq_relationship_logits.argmax(-1)
                         == batch.next_sentence_label).mean())
                self.history.append(record)
                elapsed = time.perf_counter() - window_start
                rate = tokens_seen / max(elapsed, 1e-9)
                per_step = self.train_seconds / self.step
                eta = per_step * (config.steps - self.step)
                self.progress(f"step {self.step}/{config.steps}  loss {out.loss:.4f}  "
                              f"lr {lr:.2e}  {rate:,.0f} tokens/s  ETA {eta:.0f} s")
            if self.step % config.eval_every == 0 or self.step == config.steps:
                metrics = self.evaluate()
                self.history.append({"step": self.step, "split": "heldout", **metrics})
                total = len(self.data.heldout_instances)
                measured = min(total, config.eval_batches * config.batch_size)
                self.progress(f"held-out (first {measured:,} of {total:,} sequences)  "
                              + "  ".join(f"{k} {v:.4f}" for k, v in metrics.items()))
            if out_dir is not None and self.checkpoint_due():
                self.save_checkpoint(out_dir)
            if step_hook is not None:
                step_hook(self.step)


# ------------------------------------------------------------------------------------------
# The whole job
# ------------------------------------------------------------------------------------------

MODEL_FILES = ("model.safetensors", "config.json")


def _check_out_dir(out_dir: Path, config: TrainingConfig, resume: bool,
                   overwrite: bool) -> tuple[Path, dict] | None:
    """Refuse an --out that cannot be used; when resuming, the checkpoint and its state."""
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"--out {str(out_dir)!r} exists and is not a folder")
    if resume and overwrite:
        raise ValueError("--resume and --overwrite contradict each other; choose one")
    checkpoint = Trainer.find_checkpoint(out_dir)
    if resume:
        if not out_dir.is_dir():
            raise FileNotFoundError(f"--resume: {str(out_dir)!r} does not exist; nothing to "
                                    f"resume")
        if checkpoint is None and (out_dir / "metrics.json").is_file():
            raise FileNotFoundError(f"--resume: {str(out_dir)!r} holds a finished run (its "
                                    f"checkpoint is removed at the end); nothing to resume")
        if checkpoint is None:
            raise FileNotFoundError(f"--resume: {str(out_dir)!r} holds no checkpoint to resume "
                                    f"(a run writes its first one after step 1)")
        return checkpoint, Trainer.read_checkpoint_state(checkpoint, config)
    if overwrite:
        return None
    if checkpoint is not None:
        raise FileExistsError(f"--out {str(out_dir)!r} holds the checkpoint of an interrupted "
                              f"run; pass --resume to continue it or --overwrite to start again")
    if any((out_dir / f).exists() for f in MODEL_FILES):
        raise FileExistsError(f"--out {str(out_dir)!r} already holds a model; pass --overwrite "
                              f"to replace it")
    return None


def checkpoint_step(out_dir: str | os.PathLike) -> int | None:
    """The step of the checkpoint a --resume of ``out_dir`` would continue from, if any."""
    folder = Trainer.find_checkpoint(Path(out_dir))
    if folder is None:
        return None
    return int(json.loads((folder / "trainer_state.json").read_text(encoding="utf-8"))["step"])


def pretrain(config: TrainingConfig, out_dir: str | os.PathLike, *, resume: bool = False,
             overwrite: bool = False, progress: Callable[[str], None] | None = None,
             step_hook: Callable[[int], None] | None = None,
             resume_command: str | None = None) -> dict:
    """Run a pretraining job into ``out_dir``; returns the final metrics (also metrics.json).

    ``resume_command``, when given, is announced at the start as the way to continue the
    run if it is cut short (the command line passes its own invocation with --resume).
    """
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    job_start = time.perf_counter()
    out_dir = Path(out_dir)
    checkpoint = _check_out_dir(out_dir, config, resume, overwrite)
    if not resume:
        out_dir.mkdir(parents=True, exist_ok=True)
        # A replaced run's checkpoint must never be resumed as if it were this run's.
        Trainer.remove_checkpoint(out_dir)
    if config.save_seconds or config.save_every:
        when = (f"every {config.save_seconds:g} s of training" if config.save_seconds
                else f"every {config.save_every} steps")
        if config.save_seconds and config.save_every:
            when += f" and every {config.save_every} steps"
        first = "" if resume else "after step 1, then "
        # The folder is not named: notebooks print this line, and a reader should not see
        # where they were executed.
        message = f"checkpoints: into {CHECKPOINT_DIR}/ of the output folder, {first}{when}"
        if resume_command:
            message += f"; if the run is cut short, resume it with: {resume_command}"
        progress(message)
    data = prepare_data(config, progress)
    trainer = Trainer(config, data, progress)
    if checkpoint is not None:
        folder, state = checkpoint
        trainer.load_checkpoint(folder, state)
        progress(f"resumed from {folder} at step {trainer.step}")
    params = trainer.model.num_parameters()
    progress(f"model: BertForPreTraining preset {config.preset!r}, {params:,} parameters; "
             f"training {config.steps} steps of {config.batch_size} sequences")
    # Overflow or an invalid operation stops the run at once instead of spreading NaNs.
    with np.errstate(over="raise", invalid="raise", divide="raise"):
        try:
            trainer.train(out_dir, step_hook)
        except FloatingPointError as error:
            raise TrainingDiverged(f"numerical overflow at step {trainer.step + 1}: {error}; "
                                   f"the last checkpoint, if any, is intact") from None
    # The final metrics use every held-out instance (the periodic ones only eval_batches).
    progress(f"final evaluation on all {len(data.heldout_instances):,} held-out sequences")
    heldout = list(_heldout_batches(data, config.batch_size, limit=None))
    final = evaluate(trainer.model, heldout)
    metrics = {
        **final,
        "unigram_baseline_accuracy": unigram_baseline_accuracy(data.train_instances, heldout),
        "heldout_sequences": len(data.heldout_instances),
        "steps": trainer.step,
        "train_seconds": round(trainer.train_seconds, 2),
        "total_seconds": round(time.perf_counter() - job_start, 2),
        "parameters": params,
        "vocab_size": len(data.tokenizer),
        "corpus_words": data.corpus_words,
        "objective": config.objective,
        "seed": config.seed,
    }
    trainer.model.save_pretrained(out_dir, tokenizer=data.tokenizer)
    atomic_write_json(out_dir / "history.json", trainer.history)
    atomic_write_json(out_dir / "training_config.json", config.to_dict())
    atomic_write_json(out_dir / "metrics.json", metrics)
    Trainer.remove_checkpoint(out_dir)  # the finished model supersedes it
    return metrics
