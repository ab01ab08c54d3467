"""Distillation: a DistilBERT student learns from a BERT teacher (Sanh et al., 2019).

The recipe of "DistilBERT, a distilled version of BERT" (Sanh, Debut, Chaumond, Wolf, 2019)
and of its authors' training code (the ``distillation`` research project in HuggingFace's
transformers repository: ``train.py``, ``distiller.py``, ``scripts/extract_distilbert.py``):

1. The student (``init_student``): the teacher's size with half the layers, no token-type
   embeddings and no pooler, initialised from the teacher by taking one layer out of two
   (student layer i = teacher layer 2i), the embeddings and the MLM head copied.
2. The loss (``DistillationObjective``), on the same masked batch for both models, the
   teacher in eval mode:

       loss = alpha_ce * L_ce + alpha_mlm * L_mlm + alpha_cos * L_cos

   L_ce = T^2 * batchmean KL(softmax(teacher / T) || softmax(student / T)) over the real
   (non-padding) positions (``functional.soft_target_kl_forward``), L_mlm BERT's masked-LM
   cross-entropy, L_cos = mean of 1 - cos(student, teacher) between the last hidden
   states at the real positions (``functional.cosine_embedding_forward``). The defaults
   alpha_ce = 5, alpha_mlm = 2, alpha_cos = 1, T = 2 are the training command of the
   authors' README and ``train.py``'s default temperature.
3. The loop (``distil``): MLM-only single-segment batches with dynamic masking (no next
   sentence prediction, as the paper), AdamW, global-norm clipping, a linear warmup and
   decay, one ``train_step`` per batch; the student saved with ``save_pretrained`` and
   the teacher's tokenizer, atomically.

See docs/distillation.md for the derivations and the choices made here.

Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size,
M number of selected positions.
"""

from __future__ import annotations

import dataclasses
import os
import sys
import time
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.checks import IGNORE_INDEX, check_bool, check_int, check_probability, check_real
from minibert.config import BertConfig
from minibert.data import PretrainingBatches, PretrainingDataConfig, ToyCorpus
from minibert.data.pretraining import create_pretraining_instances
from minibert.family.distilbert import LAYER_NORM_EPS, DistilBertConfig, DistilBertForMaskedLM
from minibert.heads import BertForMaskedLM, BertForPreTraining
from minibert.io.checkpoint import CONFIG_NAME, WEIGHTS_NAME, load_tokenizer
from minibert.io.fileio import atomic_write_json, clear_run_files, run_folder
from minibert.kernels import JOB_NOTE, fast_kernels_for_job
from minibert.layers import CrossEntropyLoss
from minibert.training.loop import eval_mode, train_step
from minibert.training.optim import AdamW
from minibert.training.pretrain_data import batches_of, heldout_instances
from minibert.training.schedules import make_schedule

__all__ = [
    "DistillConfig",
    "DistillationObjective",
    "DistillationOutput",
    "student_config",
    "default_teacher_layers",
    "init_student",
    "load_teacher",
    "distil",
]

# Student layer <- teacher layer, parameter by parameter (BERT's names -> DistilBERT's).
LAYER_MAP = {
    "attention.self.query": "attention.q_lin",
    "attention.self.key": "attention.k_lin",
    "attention.self.value": "attention.v_lin",
    "attention.output.dense": "attention.out_lin",
    "attention.output.LayerNorm": "sa_layer_norm",
    "intermediate.dense": "ffn.lin1",
    "output.dense": "ffn.lin2",
    "output.LayerNorm": "output_layer_norm",
}
HEAD_MAP = {
    "cls.predictions.transform.dense": "vocab_transform",
    "cls.predictions.transform.LayerNorm": "vocab_layer_norm",
}


# ------------------------------------------------------------------------------------------
# The student: its config and its initialisation from the teacher
# ------------------------------------------------------------------------------------------


def default_teacher_layers(teacher_layers: int, student_layers: int) -> list[int]:
    """One teacher layer out of two, from the first: [0, 2, 4, ...] (Sanh et al., 2019).

    The authors' extraction script for BERT-Base picks [0, 2, 4, 7, 9, 11] instead (the last
    layer kept); pass such a list to ``init_student`` to use it.
    """
    check_int("student_layers", student_layers, minimum=1)
    check_int("teacher_layers", teacher_layers, minimum=1)
    if 2 * (student_layers - 1) >= teacher_layers:
        raise ValueError(
            f"student_layers={student_layers} cannot take every other layer of a "
            f"{teacher_layers}-layer teacher (layer {2 * (student_layers - 1)} does not "
            f"exist); allowed without an explicit teacher_layers list: "
            f"1..{(teacher_layers + 1) // 2}")
    return [2 * i for i in range(student_layers)]


def student_config(teacher_config: BertConfig, n_layers: int | None = None,
                   **overrides) -> DistilBertConfig:
    """The DistilBertConfig of a student of ``teacher_config``: same widths, fewer layers.

    Inputs: teacher_config, a BertConfig; n_layers, the student's depth (default half the
    teacher's, at least 1; never more than the teacher's); overrides, other
    DistilBertConfig fields (e.g. ``dropout=0.1``).
    """
    if not isinstance(teacher_config, BertConfig):
        raise TypeError(f"teacher_config must be a BertConfig, got "
                        f"{type(teacher_config).__name__}")
    depth = teacher_config.num_hidden_layers
    if n_layers is None:
        n_layers = max(1, depth // 2)
    n_layers = check_int("n_layers", n_layers, minimum=1)
    if n_layers > depth:
        raise ValueError(f"the student (n_layers={n_layers}) is deeper than its teacher "
                         f"(num_hidden_layers={depth}); allowed: 1..{depth}")
    if teacher_config.layer_norm_eps != LAYER_NORM_EPS:
        raise ValueError(f"the teacher's layer_norm_eps is {teacher_config.layer_norm_eps!r}; "
                         f"DistilBERT's LayerNorms use {LAYER_NORM_EPS!r} (allowed: that value)")
    fields = dict(vocab_size=teacher_config.vocab_size,
                  max_position_embeddings=teacher_config.max_position_embeddings,
                  n_layers=n_layers, n_heads=teacher_config.num_attention_heads,
                  dim=teacher_config.hidden_size, hidden_dim=teacher_config.intermediate_size,
                  dropout=teacher_config.hidden_dropout_prob,
                  attention_dropout=teacher_config.attention_probs_dropout_prob,
                  activation=teacher_config.hidden_act,
                  initializer_range=teacher_config.initializer_range,
                  pad_token_id=teacher_config.pad_token_id)
    fields.update(overrides)
    return DistilBertConfig(**fields)


def init_student(teacher, n_layers: int | None = None,
                 teacher_layers: Sequence[int] | None = None, seed: int = 0,
                 dtype=None, **config_overrides) -> DistilBertForMaskedLM:
    """A DistilBertForMaskedLM initialised from a BERT teacher with an MLM head.

    Copied, exactly: the word embeddings (so also the tied output projection), the
    embedding LayerNorm, the MLM head (transform dense and LayerNorm, output bias), and
    teacher layer ``teacher_layers[i]`` into student layer i (default every other layer,
    ``default_teacher_layers``). The position table is the teacher's position table plus
    its token-type row 0: DistilBERT has no token types, and both models read every token
    as sentence A during distillation (the authors' distiller calls the teacher without
    token_type_ids), so with this fold the student's embedding output equals the teacher's.
    Rows 1.. of the token-type table are dropped. (The authors' extraction script drops the
    whole table, so that its student starts without the type-0 row the teacher adds.) The
    word table is not used for the fold because it is also the tied output projection.

    Inputs: teacher, a BertForMaskedLM or BertForPreTraining; n_layers, the student's depth
    (default half the teacher's); teacher_layers, one teacher layer index per student
    layer; seed, of the student's dropout generator; dtype, default the teacher's;
    config_overrides, other DistilBertConfig fields.
    """
    if not isinstance(teacher, (BertForMaskedLM, BertForPreTraining)):
        raise TypeError(f"teacher must be a BertForMaskedLM or BertForPreTraining (a BERT "
                        f"with its MLM head), got {type(teacher).__name__}")
    depth = teacher.config.num_hidden_layers
    if teacher_layers is not None:
        teacher_layers = [check_int(f"teacher_layers[{i}]", index, minimum=0, maximum=depth - 1)
                          for i, index in enumerate(teacher_layers)]
        if n_layers is None:
            n_layers = len(teacher_layers)
    config = student_config(teacher.config, n_layers, **config_overrides)
    if teacher_layers is None:
        teacher_layers = default_teacher_layers(depth, config.n_layers)
    if len(teacher_layers) != config.n_layers:
        raise ValueError(f"teacher_layers must name one teacher layer per student layer "
                         f"({config.n_layers}), got {len(teacher_layers)}: {teacher_layers}")
    student = DistilBertForMaskedLM(config, seed=seed,
                                    dtype=teacher.dtype if dtype is None else dtype)
    source = dict(teacher.named_parameters())
    state = {
        "distilbert.embeddings.word_embeddings.weight":
            source["bert.embeddings.word_embeddings.weight"],
        "distilbert.embeddings.position_embeddings.weight":
            source["bert.embeddings.position_embeddings.weight"]
            + source["bert.embeddings.token_type_embeddings.weight"][0],  # (P, H) + (H,)
        "distilbert.embeddings.LayerNorm.weight": source["bert.embeddings.LayerNorm.weight"],
        "distilbert.embeddings.LayerNorm.bias": source["bert.embeddings.LayerNorm.bias"],
        "vocab_projector.bias": source["cls.predictions.bias"],
    }
    for bert_name, distil_name in HEAD_MAP.items():
        for kind in ("weight", "bias"):
            state[f"{distil_name}.{kind}"] = source[f"{bert_name}.{kind}"]
    for student_index, teacher_index in enumerate(teacher_layers):
        for bert_name, distil_name in LAYER_MAP.items():
            for kind in ("weight", "bias"):
                state[f"distilbert.transformer.layer.{student_index}.{distil_name}.{kind}"] = \
                    source[f"bert.encoder.layer.{teacher_index}.{bert_name}.{kind}"]
    student.load_state_dict(state, strict=True)
    return student


# ------------------------------------------------------------------------------------------
# The triple loss
# ------------------------------------------------------------------------------------------


@dataclass
class DistillationOutput:
    """The loss of one batch and its three parts (each before its weight)."""

    loss: float
    soft_target_loss: float  # L_ce: T^2 * KL(teacher || student) at the selected positions
    masked_lm_loss: float  # L_mlm: cross-entropy at the MLM targets
    cosine_loss: float  # L_cos: mean 1 - cos(student, teacher) at the real positions
    masked_lm_accuracy: float | None  # student's top-1 accuracy at the MLM targets
    teacher_masked_lm_accuracy: float | None  # the teacher's, on the same targets
    num_targets: int  # MLM targets in the batch


class DistillationCache(NamedTuple):
    selected: tuple  # (batch index, position) arrays of the M rows the logits are taken at
    soft_target: F.SoftTargetKLCache  # over the (M, V) logits
    cosine: F.CosineEmbeddingCache  # over the (B, T, H) last hidden states
    sequence_shape: tuple  # (B, T, H)


class DistillationObjective:
    """The student's loss against the teacher, with a forward and a backward like a model's.

    ``objective(input_ids, attention_mask, labels)`` runs the teacher (eval mode, never
    trained) and the student on the same batch and returns a DistillationOutput;
    ``objective.backward()`` adds the loss's gradient into the student's buffers. So
    ``train_step(objective, batch, optimizer_of_the_student, clip)`` is one update.

    Inputs: teacher, a BERT with its MLM head; student, a DistilBertForMaskedLM with the
    teacher's vocabulary; temperature T > 0; alpha_ce, alpha_mlm, alpha_cos >= 0, not all 0;
    restrict_ce_to_mask, True to take L_ce at the MLM targets only (the authors'
    ``--restrict_ce_to_mask``) instead of at every real position (their default).
    """

    def __init__(self, teacher, student: DistilBertForMaskedLM, temperature: float = 2.0,
                 alpha_ce: float = 5.0, alpha_mlm: float = 2.0, alpha_cos: float = 1.0,
                 restrict_ce_to_mask: bool = False) -> None:
        if not isinstance(teacher, (BertForMaskedLM, BertForPreTraining)):
            raise TypeError(f"teacher must be a BertForMaskedLM or BertForPreTraining, got "
                            f"{type(teacher).__name__}")
        if not isinstance(student, DistilBertForMaskedLM):
            raise TypeError(f"student must be a DistilBertForMaskedLM, got "
                            f"{type(student).__name__}")
        if student.config.vocab_size != teacher.config.vocab_size:
            raise ValueError(f"student and teacher must share one vocabulary: the student's "
                             f"vocab_size is {student.config.vocab_size}, the teacher's "
                             f"{teacher.config.vocab_size}")
        if student.config.dim != teacher.config.hidden_size:
            raise ValueError(f"the cosine loss compares hidden states: the student's dim "
                             f"({student.config.dim}) must equal the teacher's hidden_size "
                             f"({teacher.config.hidden_size})")
        self.temperature = check_real("temperature", temperature, 0, above=True)
        self.alphas = {name: check_real(name, value, 0) for name, value in
                       (("alpha_ce", alpha_ce), ("alpha_mlm", alpha_mlm),
                        ("alpha_cos", alpha_cos))}
        if not any(self.alphas.values()):
            raise ValueError("alpha_ce, alpha_mlm and alpha_cos are all 0; at least one loss "
                             "must have a positive weight")
        self.restrict_ce_to_mask = check_bool("restrict_ce_to_mask", restrict_ce_to_mask)
        self.teacher = teacher.eval()
        self.student = student
        self.mlm_loss = CrossEntropyLoss()  # the student's MLM loss, keeping its own cache
        self.cache: DistillationCache | None = None

    def __call__(self, input_ids, attention_mask=None, labels=None) -> DistillationOutput:
        return self.forward(input_ids, attention_mask, labels)

    def forward(self, input_ids, attention_mask=None, labels=None) -> DistillationOutput:
        """input_ids, attention_mask, labels int (B, T), labels -100 where no MLM target."""
        self.cache = None
        student = self.student
        input_ids, attention_mask = student.distilbert.check_inputs(input_ids, attention_mask)
        if labels is None:
            raise ValueError("labels must be given: the MLM targets (-100 elsewhere)")
        labels = np.asarray(labels)
        if labels.shape != input_ids.shape:
            raise ValueError(f"labels must have the shape of input_ids {input_ids.shape}, "
                             f"got {labels.shape}")
        targets = labels != IGNORE_INDEX  # (B, T)
        if (targets & (attention_mask == 0)).any():
            raise ValueError("labels has MLM targets at padding positions (attention_mask 0)")
        real = attention_mask.astype(bool)  # (B, T)
        selected = np.nonzero(targets if self.restrict_ce_to_mask else real)

        self.teacher.eval()
        teacher_hidden = self.teacher.bert(input_ids, None, attention_mask).last_hidden_state
        teacher_logits = self.teacher.cls.predictions(teacher_hidden[selected])  # (M, V)

        student_hidden = student.distilbert(input_ids, attention_mask).last_hidden_state
        student_logits = student.lm_head_forward(student_hidden[selected])  # (M, V)

        soft, soft_cache = F.soft_target_kl_forward(student_logits, teacher_logits,
                                                    temperature=self.temperature)
        row_labels = labels[selected]  # (M,) -100 at rows without an MLM target
        mlm = self.mlm_loss(student_logits, row_labels)
        cosine, cosine_cache = F.cosine_embedding_forward(student_hidden, teacher_hidden, real)
        alphas = self.alphas
        loss = (alphas["alpha_ce"] * float(soft) + alphas["alpha_mlm"] * float(mlm)
                + alphas["alpha_cos"] * float(cosine))
        has_target = row_labels != IGNORE_INDEX
        accuracy = teacher_accuracy = None
        if has_target.any():
            truth = row_labels[has_target]
            accuracy = float((student_logits[has_target].argmax(-1) == truth).mean())
            teacher_accuracy = float((teacher_logits[has_target].argmax(-1) == truth).mean())
        self.cache = DistillationCache(selected, soft_cache, cosine_cache, student_hidden.shape)
        return DistillationOutput(loss, float(soft), float(mlm), float(cosine), accuracy,
                                  teacher_accuracy, int(has_target.sum()))

    def backward(self) -> None:
        """Add d loss / d parameter into the student's gradient buffers."""
        if self.cache is None:
            raise RuntimeError("backward() needs a forward pass first")
        cache, self.cache = self.cache, None
        alphas = self.alphas
        # forward: loss = a_ce L_ce(logits) + a_mlm L_mlm(logits) + a_cos L_cos(hidden)
        d_logits, _ = F.soft_target_kl_backward(alphas["alpha_ce"], cache.soft_target)
        d_logits = d_logits + self.mlm_loss.backward(alphas["alpha_mlm"])  # (M, V)
        d_rows = self.student.lm_head_backward(d_logits)  # (M, H)
        d_hidden, _ = F.cosine_embedding_backward(alphas["alpha_cos"], cache.cosine)
        d_hidden = d_hidden.astype(d_rows.dtype)  # (B, T, H)
        d_hidden[cache.selected] += d_rows  # each selected position appears once
        self.student.distilbert.backward(d_hidden)


# ------------------------------------------------------------------------------------------
# The job
# ------------------------------------------------------------------------------------------


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


def load_teacher(directory: str | os.PathLike):
    """(teacher BertForMaskedLM in eval mode, its tokenizer) from a checkpoint folder.

    Refuses, each with the reason: a folder whose config.json is not a BERT's, a BERT
    without its MLM head, weights that do not match config.json, a tokenizer with more
    tokens than the teacher's vocabulary.
    """
    directory = Path(directory)
    if not directory.is_dir():
        what = "is a file" if directory.exists() else "does not exist"
        raise FileNotFoundError(f"--teacher {str(directory)!r} {what}; expected a BERT MLM "
                                f"checkpoint folder (config.json, model.safetensors, vocab.txt)")
    try:  # read first, so that another model type is refused with its reason
        BertConfig.from_json_file(directory / CONFIG_NAME)
    except FileNotFoundError:
        raise FileNotFoundError(f"--teacher {str(directory)!r} has no {CONFIG_NAME}; "
                                f"expected a BERT MLM checkpoint folder (config.json, "
                                f"model.safetensors, vocab.txt)") from None
    except ValueError as error:
        raise ValueError(f"--teacher {str(directory)!r} is not a BERT MLM checkpoint: "
                         f"{error}") from None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # an NSP head and pooler in the folder are not needed
        teacher = BertForMaskedLM.from_pretrained(directory)
    missing = teacher.loading_info["missing_keys"]
    if missing:
        raise ValueError(f"--teacher {str(directory)!r} is not a BERT MLM checkpoint: it lacks "
                         f"the MLM head ({missing[0]} ...); distillation needs the teacher's "
                         f"predictions")
    tokenizer = load_tokenizer(directory)
    if len(tokenizer) > teacher.config.vocab_size:
        raise ValueError(f"--teacher {str(directory)!r}: its tokenizer has {len(tokenizer)} "
                         f"tokens but the model's vocab_size is {teacher.config.vocab_size}; "
                         f"teacher, student and tokenizer must share one vocabulary")
    return teacher.eval(), tokenizer


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
    with run_folder(out_dir, notice=progress), fast_kernels_for_job():
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
    progress(JOB_NOTE)
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
