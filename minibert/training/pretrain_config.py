"""The settings of a pretraining run: ``TrainingConfig``, saved with every checkpoint.

A run is a pure function of its TrainingConfig: corpus, vocabulary, instances, initial
weights, batch order, masks and dropout all come from generators seeded by ``seed``.
The defaults are the run of ``make demo``; docs/results.md gives its metrics and time,
and the measured comparisons behind the choice of steps, batch shape, schedule and dropout.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass

from minibert.checks import check_bool, check_int, check_probability, check_real
from minibert.config import PRESETS
from minibert.data import OBJECTIVES
from minibert.data.corpus import WORLDS
from minibert.family.registry import ARCHITECTURES, FAMILIES  # the families that pretrain
from minibert.training.optim import OPTIMIZERS
from minibert.training.schedules import SCHEDULES

__all__ = ["TrainingConfig", "CORPUS_BYTES_PER_BYTE", "ARCHITECTURES", "MAX_DEFAULT_WORKERS",
           "default_workers"]

# More worker processes than this did not pay at the demo's shape: on 16 cores, 8 workers
# took 31.2 ms a step and 12 took 30.9 (benchmarks/parallel_step.py, docs/parallel.md):
# the shards shrink while each worker's fixed cost per layer stays.
MAX_DEFAULT_WORKERS = 8

# The next-sentence loss's weight in the demo recipe (TrainingConfig.next_sentence_weight).
# Masked-LM teaches every head to read its own segment (segment B is another document in
# most pairs), and [CLS], of segment A, follows; with BERT's plain sum the [CLS] heads leave
# segment B within a few hundred steps and next-sentence prediction waits, for a number of
# steps that depends on the seed, until one reads it again. Three times the NSP loss gives
# it enough of the shared weights' gradient to keep a last-layer head on B: measured in
# docs/results.md (the next-sentence section), every seed 0-4 passes 0.90 in the demo.
NEXT_SENTENCE_WEIGHT = 3.0


# A corpus file is held in memory as documents of sentences, then as tokenized instances
# (dupe_factor of them): measured 76 bytes a byte (pretrain --corpus of 0.2 MB and 2 MB of
# English text, --steps 1: 143 MB and 279 MB peak resident).
CORPUS_BYTES_PER_BYTE = 80


def _corpus_size(corpus) -> int:
    """Bytes of the corpus file (0 for the toy corpus, or a path that is not there: the
    reader names that); a path that is not a regular file is refused here."""
    import stat

    if corpus is None:
        return 0
    try:
        info = os.stat(corpus)
    except OSError:
        return 0
    if not stat.S_ISREG(info.st_mode):
        kind = "a folder" if stat.S_ISDIR(info.st_mode) else \
            "a device, FIFO or socket, not a regular file"
        raise ValueError(f"corpus {str(corpus)!r} is {kind}; expected a UTF-8 text file "
                         f"(its size must be known before it is read)")
    return info.st_size


def default_workers() -> int:
    """The worker processes a run uses unless told: the cores this process may use, at most 8."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return max(1, min(cores or 1, MAX_DEFAULT_WORKERS))


@dataclass(frozen=True)
class TrainingConfig:
    """Everything that determines a pretraining run."""

    preset: str = "tiny"  # model size from BertConfig.preset
    # Transformer blocks of the encoder; None gives the preset's (2 for tiny). The other
    # sizes stay the preset's (docs/results.md measures tiny with 4 layers as a reference).
    num_layers: int | None = None
    # "bert" (BertForPreTraining) or "albert" (AlbertForPreTraining of the same preset, its
    # embeddings factorised at AlbertConfig.preset's E, e.g. 64 for tiny, and one block
    # shared by all layers); "albert" trains with objective "sop" or "mlm". "electra"
    # (minibert.family.electra.ElectraPreTrainer: a discriminator of the preset's size, E as
    # ElectraConfig.preset, and a generator a quarter its width) trains with "mlm" only.
    architecture: str = "bert"
    objective: str = "nsp"  # "nsp" (BERT), "sop" (ALBERT) or "mlm" (MLM only)
    steps: int = 3500  # optimizer steps
    batch_size: int = 64  # sequences per step
    max_seq_length: int = 32  # T of the pretraining instances
    vocab_size: int = 5000  # WordPiece vocabulary cap
    learning_rate: float = 1e-3  # peak of the schedule
    # "warmup_stable_decay" (the peak rate, then a linear decay to 0 over the last
    # decay_fraction of the steps), "constant" (the peak rate throughout) or "linear"
    # (warmup, then decay to 0 over all the rest: BERT's); see minibert.training.schedules.
    schedule: str = "warmup_stable_decay"
    warmup_fraction: float = 0.0  # share of steps warming up from 0 (not for "constant")
    decay_fraction: float = 0.2  # "warmup_stable_decay" only: share of steps of the final decay
    optimizer: str = "adamw"  # "adamw" or "adam_weight_decay" (Google's)
    weight_decay: float = 0.01  # decoupled; not applied to LayerNorm and biases
    max_grad_norm: float = 1.0  # global-norm clipping threshold
    # The segment (token type) embeddings at the start: "zero", or "normal" like every other
    # embedding (N(0, initializer_range), BERT's). Random ones give [CLS], which is of
    # segment A, a head start at attending A alone; every head then stops reading segment B
    # within a few hundred steps and next-sentence prediction waits, for a time that
    # depends on the seed, until one reads it again (docs/results.md, the NSP plateau).
    token_type_init: str = "zero"
    # "nsp" only: drop NotNext instances at random until the labels are 50/50 (the paper's
    # split) instead of keeping Google's cut, which gives short sequences 62% NotNext.
    # Measured on the demo it moves next-sentence prediction's rise earlier for some seeds
    # and later for others, so the recipe keeps Google's cut (docs/results.md). Held-out
    # instances are always Google's cut.
    balance_next_sentence: bool = False
    # "nsp" only: the weight of the next-sentence loss in what the optimizer minimises,
    # masked_lm_loss + next_sentence_weight * next_sentence_loss (BERT: 1, the plain sum);
    # None gives the recipe's, NEXT_SENTENCE_WEIGHT for "nsp" and 1 for the others. The
    # logged training loss stays the model's (the plain sum, as HF computes it).
    next_sentence_weight: float | None = None
    dropout: float = 0.0  # hidden and attention-probability dropout of the model (BERT: 0.1)
    dupe_factor: int = 5  # passes over the corpus when cutting instances (static masks)
    dynamic_masking: bool = False  # re-mask every epoch (RoBERTa) instead of static masks
    masked_lm_prob: float = 0.15  # share of tokens chosen as MLM targets
    max_predictions_per_seq: int = 10  # cap on MLM targets per sequence (Google: 20 for T=128)
    num_documents: int = 2600  # toy-corpus training documents (~230k words)
    num_heldout_documents: int = 260  # toy-corpus held-out documents
    # The generated corpus's world (minibert.data.corpus.WORLDS): "themes", the thirteen
    # ambiguity themes (the demo's), or "everyday", those themes and the everyday scenes
    # (docs/data.md). Its held-out documents are the generator's own held-out stream.
    world: str = "themes"
    # A text file in BERT's format instead of the generated corpus (world then "themes").
    corpus: str | None = None
    eval_every: int = 250  # held-out evaluation period in steps (and at the end)
    eval_batches: int = 8  # held-out batches per evaluation
    log_every: int = 10  # history and progress-line period in steps
    # Resumable checkpoints, on by default so that Ctrl-C or a killed job loses little: the
    # first after step 1 (an --out that cannot be written fails at once), then after every
    # save_seconds of training, or every save_every steps when set; save_seconds 0 and
    # save_every 0 write none. The checkpoint is removed when the run finishes.
    save_seconds: float = 60.0
    save_every: int = 0
    # Attention snapshots (minibert.training.snapshots): the attention of one fixed sentence
    # pair before the first step and every snapshot_every steps, kept in
    # attention_snapshots.npz for the explorer's timeline; 0 records none.
    snapshot_every: int = 0
    seed: int = 0  # seeds corpus, vocabulary, instances, weights, batches and dropout
    # Data-parallel worker processes (minibert.training.parallel.DataParallel), each with
    # one BLAS thread and a shard of every batch; 1 trains in this process. The weights
    # depend on it in the last bits (the shards' gradients are summed in another order), so
    # a run is reproducible, and resumable, with the same number of workers.
    workers: int = 1

    def __post_init__(self) -> None:
        for name, allowed in (("preset", list(PRESETS)), ("architecture", list(ARCHITECTURES)),
                              ("token_type_init", ["zero", "normal"]),
                              ("objective", list(OBJECTIVES)), ("world", list(WORLDS)),
                              ("schedule", list(SCHEDULES)), ("optimizer", list(OPTIMIZERS))):
            if getattr(self, name) not in allowed:
                raise ValueError(f"{name} must be one of {allowed}, got {getattr(self, name)!r}")
        family = FAMILIES[self.architecture]
        if self.objective not in family.objectives:
            raise ValueError(f"objective {self.objective!r} does not go with architecture "
                             f"{self.architecture!r}: architecture {self.architecture!r} needs "
                             f"objective {' or '.join(map(repr, family.objectives))}; use "
                             f"objective {family.objectives[0]!r}")
        for name in ("steps", "batch_size", "max_seq_length", "vocab_size", "dupe_factor",
                     "max_predictions_per_seq", "num_documents", "eval_every", "eval_batches",
                     "log_every", "workers"):
            check_int(name, getattr(self, name), minimum=1)
        for name in ("save_every", "snapshot_every", "num_heldout_documents", "seed"):
            check_int(name, getattr(self, name), minimum=0)
        check_bool("balance_next_sentence", self.balance_next_sentence)
        if self.num_layers is not None:
            check_int("num_layers", self.num_layers, minimum=1)
        if self.next_sentence_weight is None:
            object.__setattr__(self, "next_sentence_weight",
                               NEXT_SENTENCE_WEIGHT if self.objective == "nsp" else 1.0)
        check_real("next_sentence_weight", self.next_sentence_weight, 0, above=True)
        if self.objective != "nsp" and self.next_sentence_weight != 1:
            raise ValueError(f"next_sentence_weight applies to objective 'nsp' only; objective "
                             f"{self.objective!r} needs 1, got {self.next_sentence_weight!r}")
        check_real("learning_rate", self.learning_rate, 0, above=True)
        check_real("weight_decay", self.weight_decay, 0)
        check_real("max_grad_norm", self.max_grad_norm, 0, above=True)
        check_real("save_seconds", self.save_seconds, 0)
        for name in ("warmup_fraction", "dropout"):
            check_probability(name, getattr(self, name), open_at_one=True)
        check_probability("decay_fraction", self.decay_fraction)
        if self.workers > self.batch_size:
            raise ValueError(f"workers must be at most batch_size {self.batch_size} (each "
                             f"worker needs a sequence of every batch), got {self.workers}")
        if self.workers > 1 and self.snapshot_every:
            raise ValueError(f"workers > 1 does not go with snapshot_every {self.snapshot_every}: "
                             f"the snapshots read this process's weights, which the workers "
                             f"send back only for evaluations; use workers=1")
        if self.workers > 1 and self.dropout:
            raise ValueError(f"workers > 1 needs dropout 0, got dropout {self.dropout!r}: the "
                             f"workers' dropout masks are not saved in checkpoints, so such a "
                             f"run could not be resumed exactly; use workers=1 with dropout")
        if not family.workers and self.workers > 1:
            raise ValueError(f"architecture {self.architecture!r} needs workers 1 (its worker "
                             f"processes are not built), got workers {self.workers}")
        if self.warmup_fraction + self.decay_fraction > 1:
            raise ValueError(f"warmup_fraction + decay_fraction must be <= 1, got "
                             f"{self.warmup_fraction!r} + {self.decay_fraction!r}")
        if self.corpus is not None and not isinstance(self.corpus, (str, os.PathLike)):
            raise TypeError(f"corpus must be a path (str) or None, got "
                            f"{type(self.corpus).__name__}")
        if self.corpus is not None and self.world != "themes":
            raise ValueError(f"world {self.world!r} does not go with corpus {str(self.corpus)!r}: "
                             f"a corpus file replaces the generated world; use world 'themes' "
                             f"(the default) with a corpus, or no corpus")
        self.check_memory()

    def memory_estimate(self) -> dict:
        """What this run needs in memory before it allocates anything: training/memory.py's
        ``training_memory`` (weights, gradients, Adam's moments, activations, the workers'
        gradients; the vocabulary at its cap ``vocab_size``) plus ``"corpus"``, the text
        file's documents and instances (CORPUS_BYTES_PER_BYTE times its size)."""
        from minibert.config import BertConfig
        from minibert.training.memory import pretraining_parameters, training_memory

        sizes = dict(vocab_size=self.vocab_size,
                     max_position_embeddings=max(128, self.max_seq_length))
        if self.num_layers is not None:
            sizes["num_hidden_layers"] = self.num_layers
        model = BertConfig.preset(self.preset, **sizes)
        family = FAMILIES[self.architecture].config_class.preset(self.preset, **sizes)
        need = training_memory(model, self.batch_size, self.max_seq_length, self.workers,
                               parameters=pretraining_parameters(family))
        need["layers"] = model.num_hidden_layers
        need["corpus"] = CORPUS_BYTES_PER_BYTE * _corpus_size(self.corpus)
        need["total"] += need["corpus"]
        return need

    def check_memory(self) -> None:
        """Refuse (``MemoryRefused``, a ValueError naming the estimate) a run that needs more
        memory than this machine has left (``memory_estimate`` against what is free)."""
        from minibert.training.memory import refuse_beyond_memory

        need = self.memory_estimate()

        def settings(name):
            corpus = f" and {name('corpus')} {self.corpus}" if self.corpus else ""
            return (f"{name('preset')} {self.preset} with {need['layers']} layers, "
                    f"{name('batch_size')} {self.batch_size}, {name('max_seq_length')} "
                    f"{self.max_seq_length}, {name('vocab_size')} {self.vocab_size:,}, "
                    f"{name('workers')} {self.workers}{corpus}")

        def advice(name):
            corpus = f", or a smaller {name('corpus')}" if self.corpus else ""
            return (f"lower {name('batch_size')} or {name('max_seq_length')}, or choose fewer "
                    f"{name('num_layers')} or a smaller {name('preset')}{corpus}")

        refuse_beyond_memory(settings, need, advice)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> TrainingConfig:
        known = {f.name for f in dataclasses.fields(cls)}
        settings = {k: v for k, v in data.items() if k in known}
        # Runs saved before the field existed were cut Google's way; resuming them must cut
        # the same instances, whatever the default is now.
        settings.setdefault("balance_next_sentence", False)
        settings.setdefault("next_sentence_weight", 1.0)  # and were the plain sum
        settings.setdefault("world", "themes")  # and read the themes world
        return cls(**settings)
