"""Memory of a training job: parameters, gradients, Adam moments, activations, and sharding.

What one replica of data-parallel training holds, in float32 (4 bytes a number):

    weights 4 B + gradients 4 B + Adam m 4 B + Adam v 4 B = 16 bytes per parameter
    + activations: what the forward keeps for the backward, per token of the batch

Data parallelism replicates all of it on every worker. ZeRO (Rajbhandari et al., 2020,
"ZeRO: Memory Optimizations Toward Training Trillion Parameter Models") shards it over the
N workers instead: stage 1 the optimizer moments, stage 2 also the gradients, stage 3
(PyTorch's FSDP) also the weights, each worker gathering what it needs when it needs it.
The paper counts mixed precision (2 + 2 + 12 bytes per parameter); the figures here are
minibert's float32 ones (4 + 4 + 8).

Activations are measured, not estimated from a formula: ``activation_bytes`` runs one
training forward and adds up the arrays every module's ``cache`` holds (parameters
excluded, each buffer once). ``activation_bytes_per_token`` measures models of one and
two layers of the given width and extrapolates to the configured depth (every layer
holds the same).

``training_memory`` adds it up before a run allocates anything, from a formula fitted to
those measurements (per token: about 21 H + 2 N T numbers a layer, 4 H + 0.15 V for the
embeddings and heads; the formula keeps 24 H, a little above every measured width), and
``available_memory`` says what the machine can give: ``pretrain`` refuses a run whose
estimate is larger, naming both, instead of failing after minutes with an allocation error.
Measured on 2026-11-27: ``minibert pretrain --preset small --batch-size 64 --max-seq-length
128 --workers 1 --steps 2`` peaked at 2.31 GB resident (``/usr/bin/time -v``), for an
estimate of 2.22 GB (the rest: Python, the corpus and its instances).

Dimension legend: B batch, T sequence length, H hidden size, L layers, V vocabulary,
N attention heads.
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from minibert.checks import IGNORE_INDEX, check_int, check_probability
from minibert.config import BertConfig

__all__ = [
    "BYTES_PER_PARAMETER",
    "ZERO_STAGES",
    "activation_bytes",
    "activation_bytes_per_token",
    "activation_estimate_per_token",
    "available_memory",
    "MemoryRefused",
    "refuse_beyond_memory",
    "pretraining_parameters",
    "replica_bytes",
    "training_memory",
    "distillation_memory",
    "format_bytes",
]

# float32 weights, gradients and Adam's two moments: 4 numbers of 4 bytes per parameter.
BYTES_PER_PARAMETER = {"weights": 4, "gradients": 4, "adam_m": 4, "adam_v": 4}

# Which of the four each worker keeps whole (the rest it keeps 1/N of).
ZERO_STAGES = {
    "data parallel (replicated)": (),
    "ZeRO-1 (moments sharded)": ("adam_m", "adam_v"),
    "ZeRO-2 (+ gradients sharded)": ("adam_m", "adam_v", "gradients"),
    "ZeRO-3 / FSDP (+ weights sharded)": ("adam_m", "adam_v", "gradients", "weights"),
}


def pretraining_parameters(config: BertConfig) -> int:
    """Parameters of a BertForPreTraining of ``config`` (the tied decoder counted once).

    BertModel with pooler (``config.num_parameters_estimate()``) plus the heads: the MLM
    transform (dense H x H + bias, LayerNorm 2H), the decoder bias (V) and the NSP layer
    (2H + 2). The count ``model.num_parameters()`` and ``minibert info`` report.
    """
    hidden = config.hidden_size
    heads = (hidden * hidden + hidden) + 2 * hidden + config.vocab_size + (2 * hidden + 2)
    return config.num_parameters_estimate() + heads


def replica_bytes(parameters: int, num_workers: int = 1, stage: str =
                  "data parallel (replicated)") -> int:
    """Bytes of weights, gradients and moments on one of ``num_workers`` workers."""
    parameters = check_int("parameters", parameters, minimum=0)
    num_workers = check_int("num_workers", num_workers, minimum=1)
    if stage not in ZERO_STAGES:
        raise ValueError(f"stage must be one of {list(ZERO_STAGES)}, got {stage!r}")
    sharded = ZERO_STAGES[stage]
    per_parameter = sum(size / num_workers if kind in sharded else size
                        for kind, size in BYTES_PER_PARAMETER.items())
    return int(round(parameters * per_parameter))


def _base(array: np.ndarray) -> np.ndarray:
    while isinstance(array.base, np.ndarray):
        array = array.base
    return array


def _arrays(value, found: list) -> None:
    if isinstance(value, np.ndarray):
        found.append(value)
    elif isinstance(value, (tuple, list)):
        for item in value:
            _arrays(item, found)


def activation_bytes(model) -> int:
    """Bytes the caches of ``model``'s last forward hold, parameters excluded.

    Each underlying buffer is counted once, however many caches hold views of it.
    """
    parameters = {id(_base(p)) for _, p in model.named_parameters()}
    buffers = {}
    for _, module in model.named_modules():
        found: list = []
        _arrays(module.cache, found)
        for array in found:
            base = _base(array)
            if id(base) not in parameters:
                buffers[id(base)] = base.nbytes
    return int(sum(buffers.values()))


def activation_bytes_per_token(config: BertConfig, seq_len: int,
                               masked_fraction: float = 0.15, dtype=np.float32) -> dict:
    """Measured activation bytes per token of a BertForPreTraining training step.

    Inputs: config (its widths and depth; dropout as configured); seq_len, T;
    masked_fraction, the share of positions with an MLM label.
    Outputs: {"per_layer": bytes per token one encoder layer keeps, "rest": embeddings,
    pooler and heads per token, "total": rest + L x per_layer}. Measured on a batch of one
    sequence of T tokens with models of one and two layers of this width.
    """
    seq_len = check_int("seq_len", seq_len, minimum=1)
    masked_fraction = check_probability("masked_fraction", masked_fraction)
    from minibert.heads import BertForPreTraining

    rng = np.random.default_rng(0)
    ids = rng.integers(0, config.vocab_size, (1, seq_len))
    labels = np.full((1, seq_len), IGNORE_INDEX)
    picked = rng.choice(seq_len, size=max(1, round(masked_fraction * seq_len)), replace=False)
    labels[0, picked] = ids[0, picked]
    measured = []
    for layers in (1, 2):
        fields = dict(config.to_dict(), num_hidden_layers=layers,
                      max_position_embeddings=max(seq_len, config.max_position_embeddings))
        fields.pop("model_type", None)
        model = BertForPreTraining(BertConfig(**fields), seed=0, dtype=dtype).train()
        model(ids, labels=labels, next_sentence_label=np.zeros(1, dtype=np.int64))
        measured.append(activation_bytes(model))
        del model
    per_layer = (measured[1] - measured[0]) / seq_len
    rest = measured[0] / seq_len - per_layer
    return {"per_layer": per_layer, "rest": rest,
            "total": rest + config.num_hidden_layers * per_layer}


def activation_estimate_per_token(config: BertConfig, seq_len: int) -> float:
    """Activation bytes per token of a BertForPreTraining training step, from the formula.

    float32: per layer 24 H + 2 N T numbers (Q, K, V, the two LayerNorms, the feed-forward's
    4H twice, the attention probabilities before and after dropout), and 4 H + 0.15 V for
    the embeddings and the heads (the MLM logits of the masked 15%). At or a little above
    ``activation_bytes_per_token`` (a test holds it within 0.9 to 1.5 times the measure).
    """
    seq_len = check_int("seq_len", seq_len, minimum=1)
    hidden, heads = config.hidden_size, config.num_attention_heads
    per_layer = 24 * hidden + 2 * heads * seq_len
    rest = 4 * hidden + 0.15 * config.vocab_size
    return 4.0 * (config.num_hidden_layers * per_layer + rest)


def training_memory(config: BertConfig, batch_size: int, seq_len: int,
                    workers: int = 1, parameters: int | None = None) -> dict:
    """Bytes a data-parallel pretraining run of ``config`` needs, estimated before it starts.

    Inputs: config, the model's; batch_size (B) and seq_len (T) of a step; workers, the
    processes sharing the batch (the weights are shared; each worker keeps its gradients);
    parameters, the count when the architecture is not BERT's (ALBERT shares its blocks).
    Returns {"parameters": count, "weights_and_optimizer": weights, gradients and Adam's
    two moments in the main process, "worker_gradients", "activations": B x T tokens,
    "total"}.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    workers = check_int("workers", workers, minimum=1)
    count = pretraining_parameters(config) if parameters is None else parameters
    weights = replica_bytes(count)
    worker_gradients = 4 * count * workers if workers > 1 else 0
    activations = int(activation_estimate_per_token(config, seq_len) * batch_size * seq_len)
    return {"parameters": count, "weights_and_optimizer": weights,
            "worker_gradients": worker_gradients, "activations": activations,
            "total": weights + worker_gradients + activations}


def distillation_memory(teacher: BertConfig, student_layers: int, batch_size: int,
                        seq_len: int) -> dict:
    """Bytes a distillation run (``minibert distil``) needs, estimated before it starts.

    The student (``student_layers`` of the teacher's width) trains as ``training_memory``
    counts; the teacher adds its weights and one forward's activations; and the soft
    targets add six (B, T, V) float32 arrays (the teacher's and the student's logits, their
    softmaxes at temperature T, the KL's gradient and its scratch: L_ce reads every real
    token's whole distribution). Same keys as ``training_memory``. Measured on 2026-11-27
    (``minibert distil --model tiny-toy --max-seq-length 64 --steps 2``, 1 BLAS thread, the
    machine shared): --batch-size 256 peaked at 3.56 GB resident (estimate 3.29 GB),
    --batch-size 1024 at 13.5 GB (estimate 13.1 GB); the rest is Python and the corpus.
    """
    batch_size = check_int("batch_size", batch_size, minimum=1)
    seq_len = check_int("seq_len", seq_len, minimum=1)
    student = dataclasses.replace(teacher, num_hidden_layers=student_layers)
    need = training_memory(student, batch_size, seq_len)
    teacher_weights = 4 * pretraining_parameters(teacher)
    tokens = batch_size * seq_len
    teacher_activations = int(activation_estimate_per_token(teacher, seq_len) * tokens)
    soft_targets = 6 * 4 * tokens * teacher.vocab_size
    need["weights_and_optimizer"] += teacher_weights
    need["activations"] += teacher_activations + soft_targets
    need["parameters"] += pretraining_parameters(teacher)
    need["total"] += teacher_weights + teacher_activations + soft_targets
    return need


def _meminfo_available() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as handle:
            found = re.search(r"^MemAvailable:\s+(\d+) kB", handle.read(), re.MULTILINE)
    except OSError:
        return None
    return int(found.group(1)) * 1024 if found else None


def _cgroup_available() -> int | None:
    """What the cgroup (a container's memory limit) still allows, if it sets a limit."""
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            with open(limit_file, encoding="ascii") as handle:
                limit = handle.read().strip()
            with open(usage_file, encoding="ascii") as handle:
                usage = int(handle.read().strip())
        except (OSError, ValueError):
            continue
        if limit.isdigit() and int(limit) < 2**60:
            return max(0, int(limit) - usage)
    return None


def _address_space_available() -> int | None:
    """What ``ulimit -v`` (RLIMIT_AS) leaves this process, if it is set."""
    try:
        import resource
    except ImportError:  # Windows
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    if soft == resource.RLIM_INFINITY:
        return None
    try:
        with open("/proc/self/status", encoding="ascii") as handle:
            found = re.search(r"^VmSize:\s+(\d+) kB", handle.read(), re.MULTILINE)
    except OSError:
        found = None
    used = int(found.group(1)) * 1024 if found else 0
    return max(0, soft - used)


def available_memory() -> tuple[int, str] | None:
    """(bytes, where the bound comes from) that this process can still allocate, or None
    when nothing can be read (not Linux): the least of the free memory, the container's
    limit and ``ulimit -v``."""
    found = [(value, what) for value, what in (
        (_meminfo_available(), "free memory"),
        (_cgroup_available(), "under the container's memory limit"),
        (_address_space_available(), "under ulimit -v"),
    ) if value is not None]
    return min(found) if found else None


class MemoryRefused(ValueError):
    """A job that needs more memory than this machine has left, refused before it starts.

    ``describe(name)`` gives the message with each setting called ``name(field)``: the
    library's field names by default (``str(error)``), a command's options in the CLI.
    """

    def __init__(self, describe) -> None:
        super().__init__(describe(str))
        self.describe = describe


def refuse_beyond_memory(settings, need: dict, advice) -> None:
    """Raise MemoryRefused when ``need["total"]`` (``training_memory``'s estimate) exceeds
    what ``available_memory`` says is left. ``settings(name)`` and ``advice(name)`` say, with
    each field called ``name(field)``, what was asked for and what to lower."""
    available = available_memory()
    if available is None or need["total"] <= available[0]:
        return
    held = need["weights_and_optimizer"] + need["worker_gradients"]
    extra = f"; {format_bytes(need['corpus'])} for the corpus" if need.get("corpus") else ""
    raise MemoryRefused(lambda name: (
        f"{settings(name)} need about {format_bytes(need['total'])} of memory "
        f"({format_bytes(held)} for {need['parameters']:,} parameters, their gradients and "
        f"Adam's moments; {format_bytes(need['activations'])} of activations{extra}), more "
        f"than the {format_bytes(available[0])} left ({available[1]}); {advice(name)}"))


def format_bytes(count: float) -> str:
    """'3.2 GB', '410 MB': a byte count as a person reads it (powers of 1000)."""
    for unit, size in (("TB", 1e12), ("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if count >= size:
            return f"{count / size:.3g} {unit}"
    return f"{int(count)} bytes"
