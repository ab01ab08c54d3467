"""The distillation job: ``distil`` trains a DistilBERT student from a BERT teacher's folder.

The loop of the DistilBERT authors' training code (Sanh et al., 2019): MLM-only
single-segment batches with dynamic masking (no next sentence prediction, as the paper),
AdamW, global-norm clipping, a linear warmup and decay, one ``train_step`` of the
``DistillationObjective`` (``minibert.family.distillation``: the student, the teacher and
the three losses) per batch; the student saved with ``save_pretrained`` and the teacher's
tokenizer, atomically. See docs/distillation.md (section 4).
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from minibert.checks import check_bool, check_int, check_probability, check_real
from minibert.data import PretrainingBatches, PretrainingDataConfig, ToyCorpus
from minibert.data.pretraining import create_pretraining_instances
from minibert.family.distillation import (
    DistillationObjective,
    default_teacher_layers,
    init_student,
    load_teacher,
)
from minibert.io.checkpoint import CONFIG_NAME, WEIGHTS_NAME
from minibert.io.fileio import atomic_write_json, clear_run_files, run_folder
from minibert.training.loop import eval_mode, train_step
from minibert.training.optim import AdamW
from minibert.training.pretrain_data import batches_of, heldout_instances
from minibert.training.schedules import make_schedule

__all__ = ["DistillConfig", "distil", "LOSS_NAMES"]


@dataclass(frozen=True)
class DistillConfig:
    """Everything that determines a distillation run besides the teacher."""

    steps: int = 300  # optimizer steps
    batch_size: int = 32  # sequences per step
    max_seq_length: int = 32  # T of the MLM instances
    learning_rate: float = 5e-4  # peak of the linear schedule (the authors' train.py)
    warmup_fraction: float = 0.05  # share of the steps warming up (the authors' warmup_prop)
    weight_decay: float = 0.0  # the authors' default
    adam_epsilon: float = 1e-6  # the authors' default
    max_grad_norm: float = 5.0  # global-norm clipping (the authors' default)
    temperature: float = 2.0  # T of the soft targets (the authors' default)
    alpha_ce: float = 5.0  # weight of L_ce (the authors' README command)
    alpha_mlm: float = 2.0  # weight of L_mlm (likewise)
    alpha_cos: float = 1.0  # weight of L_cos (likewise)
    restrict_ce_to_mask: bool = False  # L_ce at the MLM targets only, not every real token
    student_layers: int | None = None  # default half the teacher's layers
    teacher_layers: tuple[int, ...] | None = None  # default every other: 0, 2, 4, ...
    dropout: float = 0.0  # the student's hidden and attention dropout
    masked_lm_prob: float = 0.15  # share of tokens chosen as MLM targets
    max_predictions_per_seq: int = 10  # cap on MLM targets per sequence
    num_documents: int = 2600  # toy-corpus training documents (the pretrain default)
    num_heldout_documents: int = 260  # toy-corpus held-out documents
    eval_batches: int = 8  # held-out batches measured before and after training
    log_every: int = 10  # history and progress-line period in steps
    seed: int = 0  # seeds corpus, masks, batch order and the student's dropout

    def __post_init__(self) -> None:
        for name in ("steps", "batch_size", "max_predictions_per_seq", "num_documents",
                     "eval_batches", "log_every"):
            check_int(name, getattr(self, name), minimum=1)
        check_int("max_seq_length", self.max_seq_length, minimum=3)
        check_int("num_heldout_documents", self.num_heldout_documents, minimum=0)
        check_int("seed", self.seed, minimum=0)
        if self.student_layers is not None:
            check_int("student_layers", self.student_layers, minimum=1)
        if self.teacher_layers is not None:
            if not isinstance(self.teacher_layers, (tuple, list)) or not self.teacher_layers:
                raise ValueError(f"teacher_layers must be a non-empty list of layer indices, "
                                 f"got {self.teacher_layers!r}")
            object.__setattr__(self, "teacher_layers", tuple(
                check_int(f"teacher_layers[{i}]", v, minimum=0)
                for i, v in enumerate(self.teacher_layers)))
        for name in ("learning_rate", "adam_epsilon", "max_grad_norm", "temperature"):
            check_real(name, getattr(self, name), 0, above=True)
        for name in ("weight_decay", "alpha_ce", "alpha_mlm", "alpha_cos"):
            check_real(name, getattr(self, name), 0)
        if not (self.alpha_ce or self.alpha_mlm or self.alpha_cos):
            raise ValueError("alpha_ce, alpha_mlm and alpha_cos are all 0; at least one loss "
                             "must have a positive weight")
        check_bool("restrict_ce_to_mask", self.restrict_ce_to_mask)
        check_probability("warmup_fraction", self.warmup_fraction)
        check_probability("dropout", self.dropout, open_at_one=True)
        check_probability("masked_lm_prob", self.masked_lm_prob, open_at_zero=True,
                          open_at_one=True)

    def to_dict(self) -> dict:
        data = dataclasses.asdict(self)
        if data["teacher_layers"] is not None:
            data["teacher_layers"] = list(data["teacher_layers"])
        return data


def check_memory(config: DistillConfig, teacher_dir) -> None:
    """Refuse (``MemoryRefused``, naming the estimate) a run the machine cannot hold, before
    anything is loaded: ``training.memory.distillation_memory`` of the teacher in
    ``teacher_dir`` (a config.json that cannot be read is left to the loader)."""
    from minibert.config import BertConfig
    from minibert.training.memory import distillation_memory, refuse_beyond_memory

    try:
        teacher = BertConfig.from_json_file(Path(teacher_dir) / CONFIG_NAME)
    except (OSError, ValueError, TypeError):
        return
    layers = config.student_layers or max(1, teacher.num_hidden_layers // 2)
    need = distillation_memory(teacher, layers, config.batch_size, config.max_seq_length)

    def settings(name):
        return (f"{name('batch_size')} {config.batch_size} at {name('max_seq_length')} "
                f"{config.max_seq_length} with a teacher of {teacher.num_hidden_layers} layers "
                f"of width {teacher.hidden_size} and vocab_size {teacher.vocab_size:,} and a "
                f"student of {layers}")

    def advice(name):
        return (f"lower {name('batch_size')} or {name('max_seq_length')} (the soft targets "
                f"are {name('batch_size')} x {name('max_seq_length')} x vocab_size numbers, "
                f"six times)")

    refuse_beyond_memory(settings, need, advice)


def _check_out_dir(out_dir: Path, overwrite: bool) -> None:
    if out_dir.exists() and not out_dir.is_dir():
        raise NotADirectoryError(f"--out {str(out_dir)!r} exists and is not a folder")
    if not overwrite and any((out_dir / f).exists() for f in (WEIGHTS_NAME, CONFIG_NAME)):
        raise FileExistsError(f"--out {str(out_dir)!r} already holds a model; pass "
                              f"--overwrite to replace it")


def _data(config: DistillConfig, tokenizer, max_positions: int):
    """(training batch stream, held-out instances, data config): MLM-only, single segments."""
    if config.max_seq_length > max_positions:
        raise ValueError(f"max_seq_length={config.max_seq_length} is longer than the teacher's "
                         f"max_position_embeddings={max_positions}; allowed: 3..{max_positions}")
    corpus = ToyCorpus.generate(config.num_documents, config.num_heldout_documents,
                                seed=config.seed)
    data_config = PretrainingDataConfig(
        max_seq_length=config.max_seq_length, masked_lm_prob=config.masked_lm_prob,
        max_predictions_per_seq=config.max_predictions_per_seq, dupe_factor=1,
        random_seed=config.seed, objective="mlm", dynamic_masking=True)
    instances = create_pretraining_instances(corpus.train, tokenizer, data_config)
    batches = PretrainingBatches(instances, tokenizer, data_config,
                                 batch_size=config.batch_size, padding="longest",
                                 seed=config.seed)
    heldout = []
    if corpus.heldout:
        static = dataclasses.replace(data_config, dynamic_masking=False)
        heldout = heldout_instances(corpus.heldout, tokenizer, static)
    return batches, heldout, data_config


def _inputs(batch) -> dict:
    """A pretraining batch as the objective's inputs (no token types: DistilBERT has none)."""
    return {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask,
            "labels": batch.labels}


LOSS_NAMES = ("loss", "soft_target_loss", "masked_lm_loss", "cosine_loss")


def _evaluate(objective: DistillationObjective, batches) -> dict[str, float]:
    """Held-out means over batches of the losses; MLM accuracy of student and teacher."""
    sums = dict.fromkeys(LOSS_NAMES, 0.0)
    student_correct = teacher_correct = 0.0
    count = targets = 0
    with eval_mode(objective.student):
        for batch in batches:
            out = objective(**_inputs(batch))
            objective.cache = None  # no backward follows
            for name in LOSS_NAMES:
                sums[name] += getattr(out, name)
            if out.num_targets:
                student_correct += out.masked_lm_accuracy * out.num_targets
                teacher_correct += out.teacher_masked_lm_accuracy * out.num_targets
            targets += out.num_targets
            count += 1
    if count == 0:
        return {}
    metrics = {name: value / count for name, value in sums.items()}
    metrics["student_masked_lm_accuracy"] = student_correct / max(targets, 1)
    metrics["teacher_masked_lm_accuracy"] = teacher_correct / max(targets, 1)
    return metrics


def distil(config: DistillConfig, teacher_dir: str | os.PathLike, out_dir: str | os.PathLike,
           *, overwrite: bool = False, progress: Callable[[str], None] | None = None) -> dict:
    """Distil the teacher in ``teacher_dir`` into a DistilBERT written to ``out_dir``.

    Writes config.json, model.safetensors, vocab.txt (the teacher's tokenizer),
    metrics.json, history.json and distill_config.json, each atomically. ``out_dir`` is
    locked (and so proven writable) before any work; an overwrite removes the previous
    run's files (only minibert's) once the student is trained. Returns the metrics.
    """
    if not isinstance(config, DistillConfig):
        raise TypeError(f"config must be a DistillConfig, got {type(config).__name__}")
    progress = progress or (lambda message: print(message, file=sys.stderr, flush=True))
    out_dir = Path(out_dir)
    _check_out_dir(out_dir, overwrite)
    check_memory(config, teacher_dir)
    with run_folder(out_dir, notice=progress):
        return _distil_locked(config, teacher_dir, out_dir, overwrite, progress)


def _distil_locked(config: DistillConfig, teacher_dir, out_dir: Path, overwrite: bool,
                   progress: Callable[[str], None]) -> dict:
    start = time.perf_counter()
    teacher, tokenizer = load_teacher(teacher_dir)
    student = init_student(teacher, config.student_layers, config.teacher_layers,
                           seed=config.seed, dropout=config.dropout,
                           attention_dropout=config.dropout)
    teacher_layers = (list(config.teacher_layers) if config.teacher_layers is not None else
                      default_teacher_layers(teacher.config.num_hidden_layers,
                                             student.config.n_layers))
    layers = student.config.n_layers
    progress(f"student: {layers} layer{'s' if layers > 1 else ''} from teacher layers "
             f"{teacher_layers} of {teacher.config.num_hidden_layers}; "
             f"{student.num_parameters():,} parameters (teacher {teacher.num_parameters():,})")
    objective = DistillationObjective(teacher, student, config.temperature, config.alpha_ce,
                                      config.alpha_mlm, config.alpha_cos,
                                      config.restrict_ce_to_mask)
    batches, heldout, data_config = _data(config, tokenizer,
                                          teacher.config.max_position_embeddings)
    progress(f"data: {len(batches.instances):,} MLM instances (T={config.max_seq_length}, "
             f"dynamic masking), {len(heldout):,} held out")

    def heldout_metrics() -> dict[str, float]:
        chosen = heldout[: config.batch_size * config.eval_batches]
        return _evaluate(objective, batches_of(chosen, tokenizer, config.batch_size,
                                               data_config.max_predictions_per_seq))

    initial = heldout_metrics()
    schedule = make_schedule("linear", config.learning_rate,
                             warmup_steps=int(config.warmup_fraction * config.steps),
                             total_steps=config.steps)
    optimizer = AdamW(student, lr=schedule, eps=config.adam_epsilon,
                      weight_decay=config.weight_decay)
    history: list[dict] = []
    student.train()
    for step in range(1, config.steps + 1):
        batch = next(batches)
        lr = optimizer.current_lr
        out, grad_norm = train_step(objective, _inputs(batch), optimizer, config.max_grad_norm)
        if step % config.log_every == 0 or step in (1, config.steps):
            history.append({"step": step, "lr": lr, "grad_norm": grad_norm,
                            **dataclasses.asdict(out)})
            progress(f"step {step}/{config.steps}  loss {out.loss:.4f}  (ce "
                     f"{out.soft_target_loss:.4f}  mlm {out.masked_lm_loss:.4f}  cos "
                     f"{out.cosine_loss:.4f})  lr {lr:.2e}")
    student.eval()
    final = heldout_metrics()
    metrics = {
        "steps": config.steps,
        "student_layers": student.config.n_layers,
        "teacher_layers": teacher_layers,
        "student_parameters": student.num_parameters(),
        "teacher_parameters": teacher.num_parameters(),
        "heldout_before": initial,
        "heldout_after": final,
        "total_seconds": round(time.perf_counter() - start, 2),
        "seed": config.seed,
    }
    if final:
        progress("held-out after distillation: " + "  ".join(f"{k} {v:.4f}"
                                                            for k, v in final.items()))
    if overwrite:
        clear_run_files(out_dir)  # the previous run's files (only minibert's) go
    student.save_pretrained(out_dir, tokenizer=tokenizer)
    atomic_write_json(out_dir / "metrics.json", metrics)
    atomic_write_json(out_dir / "history.json", history)
    atomic_write_json(out_dir / "distill_config.json",
                      {**config.to_dict(), "teacher": str(teacher_dir)})
    return metrics
