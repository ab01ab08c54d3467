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
   (non-padding) positions (``soft_target_kl_forward``), L_mlm BERT's masked-LM
   cross-entropy, L_cos = mean of 1 - cos(student, teacher) between the last hidden
   states at the real positions (``cosine_embedding_forward``). The defaults
   alpha_ce = 5, alpha_mlm = 2, alpha_cos = 1, T = 2 are the training command of the
   authors' README and ``train.py``'s default temperature.

This module holds the two losses as forward/backward pairs, the student and the
objective; the training loop (``distil``) is ``minibert.training.distillation``.
See docs/distillation.md for the derivations and the choices made here.

Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size,
M number of selected positions.
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.checks import IGNORE_INDEX, check_bool, check_float_array, check_int, check_real
from minibert.config import BertConfig
from minibert.family.distilbert import LAYER_NORM_EPS, DistilBertConfig, DistilBertForMaskedLM
from minibert.heads import BertForMaskedLM, BertForPreTraining
from minibert.io.checkpoint import CONFIG_NAME
from minibert.layers import CrossEntropyLoss
from minibert.tokenization import load_tokenizer

__all__ = [
    "soft_target_kl_forward", "soft_target_kl_backward",
    "cosine_embedding_forward", "cosine_embedding_backward",
    "SoftTargetKLCache", "CosineEmbeddingCache",
    "DistillationObjective",
    "DistillationOutput",
    "student_config",
    "default_teacher_layers",
    "init_student",
    "load_teacher",
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
# The two distillation losses as forward/backward pairs. In both the teacher's array is a
# fixed target: its gradient is None. Derivations: docs/distillation.md (section 2).
# ------------------------------------------------------------------------------------------


class SoftTargetKLCache(NamedTuple):
    student_probs: np.ndarray  # (M, V) softmax(student_logits / T) at the selected rows
    teacher_probs: np.ndarray  # (M, V) softmax(teacher_logits / T) at the selected rows
    selected: np.ndarray | None  # bool (...), the rows of the (..., V) input used; None: all
    input_shape: tuple  # (..., V)
    temperature: float  # T
    count: int  # M, the number of selected rows


class CosineEmbeddingCache(NamedTuple):
    student: np.ndarray  # (M, H) the selected student vectors s
    teacher: np.ndarray  # (M, H) the selected teacher vectors t
    cosine: np.ndarray  # (M, 1) cos(s, t)
    student_sq: np.ndarray  # (M, 1) |s|^2 + eps
    teacher_sq: np.ndarray  # (M, 1) |t|^2 + eps
    selected: np.ndarray | None  # bool (...), None: every row
    input_shape: tuple  # (..., H)
    count: int  # M


def _selected_rows(name: str, student: np.ndarray, teacher: np.ndarray, mask):
    """Check a student/teacher pair and a row mask; returns (student rows, teacher rows,
    selected bool (...) or None). Rows are the vectors along the last axis."""
    check_float_array(f"student_{name}", student)
    check_float_array(f"teacher_{name}", teacher)
    if student.ndim < 2 or student.shape != teacher.shape:
        raise ValueError(f"student_{name} and teacher_{name} must have one shape (..., "
                         f"{'V' if name == 'logits' else 'H'}) with at least 2 axes, got "
                         f"{student.shape} and {teacher.shape}")
    if mask is None:
        width = student.shape[-1]
        return student.reshape(-1, width), teacher.reshape(-1, width), None
    mask = np.asarray(mask)
    if mask.shape != student.shape[:-1]:
        raise ValueError(f"mask must have shape {student.shape[:-1]} (one entry per row of "
                         f"student_{name}), got {mask.shape}")
    if mask.dtype != bool:
        if not np.issubdtype(mask.dtype, np.integer) or (mask.size and (
                mask.min() < 0 or mask.max() > 1)):
            raise ValueError(f"mask must hold only 0/1 or False/True (1 = row used), got "
                             f"dtype {mask.dtype}")
        mask = mask.astype(bool)
    return student[mask], teacher[mask], mask


def _scatter_rows(rows: np.ndarray, selected, input_shape: tuple) -> np.ndarray:
    """The (M, width) rows put back at their places in a zero array of ``input_shape``."""
    if selected is None:
        return rows.reshape(input_shape)
    full = np.zeros(input_shape, dtype=rows.dtype)
    full[selected] = rows
    return full


def soft_target_kl_forward(student_logits: np.ndarray, teacher_logits: np.ndarray, mask=None,
                           temperature: float = 2.0):
    """DistilBERT's distillation loss: T^2 * mean over selected rows of KL(p_t || p_s).

    With p_t = softmax(teacher_logits / T) and p_s = softmax(student_logits / T) along the
    last axis, for each selected row KL = sum_v p_t[v] (log p_t[v] - log p_s[v]); the loss is
    T^2 times their mean over the M selected rows, which is ``torch.nn.KLDivLoss(reduction=
    "batchmean")(log p_s, p_t) * T**2`` as the DistilBERT authors' distiller computes it. The
    paper calls it a cross-entropy: sum_v -p_t log p_s differs from KL by the teacher's
    entropy, a constant for the student, so both have the same gradient. T^2 keeps the
    gradient's size independent of T (Hinton et al. 2015). See docs/distillation.md.

    Inputs: student_logits, teacher_logits (..., V); mask (...) bool or 0/1, the rows that
    count (None: all); temperature T > 0. Output: scalar loss (0 when no row is selected).
    Cache: SoftTargetKLCache.
    """
    student_rows, teacher_rows, selected = _selected_rows("logits", student_logits,
                                                          teacher_logits, mask)
    temperature = check_real("temperature", temperature, 0, above=True)
    count = student_rows.shape[0]
    log_student = F.log_softmax(student_rows / temperature)  # (M, V) log p_s
    log_teacher = F.log_softmax(teacher_rows / temperature)  # (M, V) log p_t
    teacher_probs = np.exp(log_teacher)  # (M, V) p_t
    kl_rows = (teacher_probs * (log_teacher - log_student)).sum(axis=-1)  # (M,)
    loss = temperature**2 * kl_rows.sum() / max(count, 1)
    cache = SoftTargetKLCache(np.exp(log_student), teacher_probs, selected,
                              student_logits.shape, temperature, count)
    return student_logits.dtype.type(loss), cache


def soft_target_kl_backward(dloss, cache):
    """Returns (d student_logits (..., V), None): dloss * T * (p_s - p_t) / M at the selected
    rows, 0 elsewhere. The teacher's logits are a fixed target and get no gradient."""
    if cache.count == 0:
        return np.zeros(cache.input_shape, dtype=cache.student_probs.dtype), None
    # forward: loss = T^2 / M * sum_rows KL(p_t || softmax(z / T)); d KL / d(z / T) = p_s - p_t,
    # and d(z / T) / dz = 1 / T, so d loss / dz = T^2 / M * (p_s - p_t) / T = T (p_s - p_t) / M
    scale = float(dloss) * cache.temperature / cache.count
    d_rows = (cache.student_probs - cache.teacher_probs) * scale  # (M, V)
    return _scatter_rows(d_rows, cache.selected, cache.input_shape), None


_COSINE_EPS = 1e-12  # added to |s|^2 and |t|^2, as torch's cosine_embedding_loss does


def cosine_embedding_forward(student_hidden: np.ndarray, teacher_hidden: np.ndarray,
                             mask=None):
    """DistilBERT's cosine loss: mean over selected rows of 1 - cos(s, t).

    cos(s, t) = s.t / sqrt((|s|^2 + eps) (|t|^2 + eps)) with eps = 1e-12 (torch's
    ``cosine_embedding_loss`` with target 1 and its eps), so a zero vector gives cos 0,
    never NaN. The DistilBERT authors apply it to the last hidden states at the real
    (non-padding) positions. See docs/distillation.md.

    Inputs: student_hidden, teacher_hidden (..., H); mask (...) bool or 0/1, the rows that
    count (None: all). Output: scalar loss (0 when no row is selected).
    Cache: CosineEmbeddingCache.
    """
    student, teacher, selected = _selected_rows("hidden", student_hidden, teacher_hidden, mask)
    count = student.shape[0]
    dot = (student * teacher).sum(axis=-1, keepdims=True)  # (M, 1) s.t
    student_sq = (student * student).sum(axis=-1, keepdims=True) + _COSINE_EPS  # (M, 1)
    teacher_sq = (teacher * teacher).sum(axis=-1, keepdims=True) + _COSINE_EPS  # (M, 1)
    cosine = dot / np.sqrt(student_sq * teacher_sq)  # (M, 1)
    loss = (1.0 - cosine).sum() / max(count, 1)
    cache = CosineEmbeddingCache(student, teacher, cosine, student_sq, teacher_sq, selected,
                                 student_hidden.shape, count)
    return student_hidden.dtype.type(loss), cache


def cosine_embedding_backward(dloss, cache):
    """Returns (d student_hidden (..., H), None): -dloss / M * (t / sqrt(a b) - cos * s / a)
    at the selected rows (a = |s|^2 + eps, b = |t|^2 + eps), 0 elsewhere. The teacher's
    hidden states are a fixed target and get no gradient."""
    if cache.count == 0:
        return np.zeros(cache.input_shape, dtype=cache.student.dtype), None
    s, t, cosine = cache.student, cache.teacher, cache.cosine
    # forward: cos = s.t / sqrt(a b), a = |s|^2 + eps;  d cos / ds = t / sqrt(a b) - cos * s / a
    d_cosine_ds = t / np.sqrt(cache.student_sq * cache.teacher_sq) - cosine * s / cache.student_sq
    # forward: loss = mean over the M rows of (1 - cos)
    d_rows = d_cosine_ds * (-float(dloss) / cache.count)  # (M, H)
    return _scatter_rows(d_rows, cache.selected, cache.input_shape), None


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
    soft_target: SoftTargetKLCache  # over the (M, V) logits
    cosine: CosineEmbeddingCache  # over the (B, T, H) last hidden states
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

        soft, soft_cache = soft_target_kl_forward(student_logits, teacher_logits,
                                                    temperature=self.temperature)
        row_labels = labels[selected]  # (M,) -100 at rows without an MLM target
        mlm = self.mlm_loss(student_logits, row_labels)
        cosine, cosine_cache = cosine_embedding_forward(student_hidden, teacher_hidden, real)
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
        d_logits, _ = soft_target_kl_backward(alphas["alpha_ce"], cache.soft_target)
        d_logits = d_logits + self.mlm_loss.backward(alphas["alpha_mlm"])  # (M, V)
        d_rows = self.student.lm_head_backward(d_logits)  # (M, H)
        d_hidden, _ = cosine_embedding_backward(alphas["alpha_cos"], cache.cosine)
        d_hidden = d_hidden.astype(d_rows.dtype)  # (B, T, H)
        d_hidden[cache.selected] += d_rows  # each selected position appears once
        self.student.distilbert.backward(d_hidden)


# ------------------------------------------------------------------------------------------
# The teacher
# ------------------------------------------------------------------------------------------


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
