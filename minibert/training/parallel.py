"""Data parallelism written out: shards, the all-reduce (a ring, or shared memory), the update.

One training step of a data-parallel job, with N workers each holding a full replica of
the model and the optimizer:

    1. split the batch into N shards along the batch axis (uneven shards are fine)
    2. every worker: forward and backward on its own shard             (no communication)
    3. all-reduce: every worker ends with the sum of all N gradients    (communication)
    4. every worker: the same clipping and the same AdamW update        (no communication)

Because the replicas start equal and apply the same update to the same summed gradient,
they stay equal without ever sending weights (MPI ranks do exactly this; the workers of
one machine share one copy of the weights instead, and each updates its own chunk of it
in step 4). The one subtle part is step 2's loss: the
MLM loss of the whole batch is a mean over all its masked tokens, so a shard must
contribute ``sum of its token losses / masked tokens in the whole batch``, not its own
mean. ``shard_weights`` gives each shard that share (and, for the lesson, the mean of
per-shard means, which is wrong whenever shards hold different numbers of masked
tokens). Summed, the shares are the full batch's loss exactly, so N workers give the
full batch's gradient and, in float64, the same weights to rounding.

What is here:

- ``shard_batch``, ``shard_weights``: step 1 and the shares of step 2;
  ``backward_with`` and ``shard_loss`` apply a shard's shares to its backward and loss.
- ``accumulate_gradients``: the one-process equivalent, gradient accumulation (shards
  one after the other into the same gradient buffers).
- ``ring_schedule``, ``chunk_bounds``, ``ring_allreduce``: the ring all-reduce (Patarasuk
  & Yuan, 2009; the form NCCL and Horovod use) on a list of arrays in one process, for
  reading and testing: N - 1 reduce-scatter steps, then N - 1 all-gather steps; each
  worker sends 2 (N - 1) / N of the gradient's bytes, whatever N.
- ``shared_allreduce``, ``reduce_chunk``: the same sums through shared memory, as the
  workers of one machine take them: worker r sums chunk r over every worker's slot (the
  reduce-scatter), and the all-gather is reading; each worker reads (N - 1) / N of the
  gradient's bytes and sends none.

This module is the lesson: arithmetic on arrays, in one process. The processes that run it
are elsewhere: ``minibert.training.workers`` (``DataParallel``: worker processes on this
machine, sharing memory), ``minibert.bridges.mpi`` (``MPIDataParallel``: MPI ranks), and
``minibert.training.transport`` (the one interface the training loop uses, and how every
process agrees to stop at the same step). ``DataParallel``, ``WorkerError`` and
``StepResult`` are still importable from here.

See notebooks/11_data_parallelism.ipynb and docs/parallel.md.

Dimension legend: B batch, T sequence length, P number of parameters, N workers.
"""

from __future__ import annotations

import numpy as np

from minibert.checks import IGNORE_INDEX, check_int, check_real
from minibert.family.registry import family_of

__all__ = [
    "accumulate_gradients",
    "backward_with",
    "chunk_bounds",
    "reduce_chunk",
    "ring_allreduce",
    "ring_schedule",
    "shared_allreduce",
    "shard_batch",
    "shard_loss",
    "shard_weights",
]

# The process plumbing that lived here, importable by its old names (minibert.training.workers).
_MOVED = {"DataParallel": "workers", "WorkerError": "workers", "SharedBuffers": "workers",
          "Peers": "workers", "describe_exit": "workers", "send_message": "workers",
          "recv_message": "workers", "child_environment": "workers",
          "StepResult": "transport"}


def __getattr__(name: str):
    if name in _MOVED:
        import importlib

        return getattr(importlib.import_module(f"minibert.training.{_MOVED[name]}"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


REDUCTIONS = ("global", "mean_of_means")


# ------------------------------------------------------------------------------------------
# Step 1 and 2: shards, and each shard's share of the loss
# ------------------------------------------------------------------------------------------


def _batch_size(batch: dict) -> int:
    if not isinstance(batch, dict) or "input_ids" not in batch:
        raise TypeError(f"batch must be a dict of model inputs with 'input_ids', got "
                        f"{type(batch).__name__}")
    input_ids = np.asarray(batch["input_ids"])
    if input_ids.ndim != 2:
        raise ValueError(f"batch['input_ids'] must be 2-D (B, T), got shape {input_ids.shape}")
    return input_ids.shape[0]


def shard_batch(batch: dict, num_shards: int, trim_padding: bool = True) -> list[dict]:
    """Split a batch of model inputs into ``num_shards`` consecutive shards along B.

    Inputs: batch, the keyword inputs of a pretraining model (``input_ids`` (B, T) and
    friends, ``next_sentence_label`` (B,)); num_shards, 1 <= N <= B. Shards differ in size
    by at most one sequence when N does not divide B (np.array_split's rule: the first
    B mod N shards get one more).
    trim_padding: drop the trailing positions that are padding in every sequence of a
    shard (a shard of short sequences then runs at its own length, as a real data loader
    does). Padding changes nothing, so the gradients are the same either way.
    Outputs: a list of N dicts with the same keys; arrays are views of the batch's.
    """
    size = _batch_size(batch)
    num_shards = check_int("num_shards", num_shards, minimum=1)
    if num_shards > size:
        raise ValueError(f"num_shards must be at most the batch size {size} (every worker "
                         f"needs at least one sequence), got {num_shards}")
    bounds = np.cumsum([0] + [len(part) for part in np.array_split(np.arange(size), num_shards)])
    shards = []
    for start, stop in zip(bounds[:-1], bounds[1:]):
        shard = {key: None if value is None else np.asarray(value)[start:stop]
                 for key, value in batch.items()}
        mask = shard.get("attention_mask")
        if trim_padding and mask is not None:
            real = np.flatnonzero(mask.any(axis=0))
            length = int(real[-1]) + 1 if real.size else 1
            for key, value in shard.items():
                if value is not None and value.ndim == 2:
                    shard[key] = value[:, :length]
        shards.append(shard)
    return shards


def _masked_count(shard: dict) -> int:
    labels = shard.get("labels")
    return 0 if labels is None else int(np.count_nonzero(np.asarray(labels) != IGNORE_INDEX))


def shard_weights(shards: list[dict], reduction: str = "global") -> list[tuple[float, float]]:
    """Each shard's (mlm_weight, nsp_weight): what its mean losses count for in the step.

    "global" (right): shard r's MLM weight is M_r / M, its masked tokens over the whole
    batch's (its labelled tokens, for a tagging head; its sequences B_r / B when the batch
    has no ``labels``, as a question-answering batch), and its NSP weight B_r / B. Then
    sum_r weight_r * mean_r = (sum of all token losses) / M, the full batch's loss, and so
    the gradients add up to the full batch's.
    "mean_of_means" (the common bug): every shard weighs 1 / N, so a shard with few masked
    tokens counts as much as one with many; it equals "global" only when every shard has
    the same number of masked tokens (and of sequences).
    Outputs: a list of N pairs of floats, for ``model.backward(mlm_weight, nsp_weight)``.
    """
    if reduction not in REDUCTIONS:
        raise ValueError(f"reduction must be one of {REDUCTIONS}, got {reduction!r}")
    if not isinstance(shards, (list, tuple)) or not shards:
        raise ValueError("shards must be a non-empty list of batches (dicts)")
    if reduction == "mean_of_means":
        return [(1.0 / len(shards), 1.0 / len(shards))] * len(shards)
    masked = [_masked_count(shard) for shard in shards]
    sizes = [_batch_size(shard) for shard in shards]
    total_masked, total_size = sum(masked), sum(sizes)
    if not total_masked:  # no token labels: a loss averaged over the sequences
        return [(b / total_size, b / total_size) for b in sizes]
    return [(m / total_masked, b / total_size) for m, b in zip(masked, sizes)]


def backward_with(model, weights: tuple[float, float], pair_loss_weight: float = 1.0) -> None:
    """``model.backward`` with a shard's weights (``shard_weights``).

    The second weight is the sentence-pair loss's, under the name the family's row gives it
    (``nsp_weight`` of BertForPreTraining, ``sop_weight`` of AlbertForPreTraining); any other
    model takes ``mlm_weight`` only. ``pair_loss_weight`` multiplies it: the objective's own
    weight of that loss. A task head (classification, tagging, question answering), whose
    backward takes no weight, differentiates its loss, and its gradients are multiplied by
    the first weight (the gradient is linear in the loss). Call it on zeroed gradients.
    """
    mlm_weight, pair_weight = weights[0], weights[1] * pair_loss_weight
    family = family_of(model)
    pair = family.pair_weight if type(model) is family.pretraining else None
    if type(model) in family.tasks.values():
        model.backward()
        for _, gradient in model.named_gradients():
            gradient *= mlm_weight
    elif pair is None:
        model.backward(mlm_weight=mlm_weight)
    else:
        model.backward(mlm_weight=mlm_weight, **{pair: pair_weight})


def shard_loss(out, weights: tuple[float, float]) -> float:
    """The shard's share of the batch loss: weight * mean, per part (a task head's output
    has one part, its ``loss``)."""
    if not hasattr(out, "masked_lm_loss"):
        return weights[0] * out.loss
    return weights[0] * (out.masked_lm_loss or 0.0) + weights[1] * (out.next_sentence_loss or 0.0)


def accumulate_gradients(model, shards: list[dict], reduction: str = "global",
                         pair_loss_weight: float = 1.0) -> float:
    """Gradient accumulation: forward and backward each shard in turn, gradients adding up.

    The one-process equivalent of N workers and an all-reduce: with "global" weights the
    accumulated gradient is the full batch's. The gradient buffers are added into (call
    ``zero_grad`` first). Inputs as ``shard_weights``; model, a BertForPreTraining or
    BertForMaskedLM, or their ALBERT twins; pair_loss_weight, the weight of the
    sentence-pair loss (NSP or SOP) in the loss differentiated (1: the plain sum).
    Outputs: the batch loss (the sum of the shards' shares, the plain sum of its parts).
    """
    pair_loss_weight = check_real("pair_loss_weight", pair_loss_weight, 0, above=True)
    loss = 0.0
    for shard, weights in zip(shards, shard_weights(shards, reduction), strict=True):
        out = model(**shard)
        if out.loss is None:
            raise ValueError("every shard needs labels (a forward that computes a loss)")
        backward_with(model, weights, pair_loss_weight)
        loss += shard_loss(out, weights)
    return loss


# ------------------------------------------------------------------------------------------
# Step 3: the ring all-reduce (the lesson; MPI's algorithm between machines)
# ------------------------------------------------------------------------------------------


def chunk_bounds(size: int, num_workers: int) -> list[slice]:
    """The N consecutive chunks a gradient of ``size`` values is cut into (np.array_split's)."""
    size = check_int("size", size, minimum=0)
    num_workers = check_int("num_workers", num_workers, minimum=1)
    base, extra = divmod(size, num_workers)
    bounds, start = [], 0
    for rank in range(num_workers):
        stop = start + base + (1 if rank < extra else 0)
        bounds.append(slice(start, stop))
        start = stop
    return bounds


def ring_schedule(num_workers: int) -> list[dict]:
    """Who sends which chunk at each step of the ring all-reduce.

    Worker r always sends to r + 1 and receives from r - 1 (mod N). In reduce-scatter
    step s (s = 0 .. N-2) worker r sends chunk (r - s) and adds the chunk (r - s - 1) it
    receives into its own; after N - 1 steps worker r holds the finished sum of chunk
    r + 1. In all-gather step s it sends chunk (r + 1 - s) and overwrites chunk (r - s)
    with what it receives; after N - 1 more steps every worker holds every finished chunk.
    Outputs: 2 (N - 1) dicts {"phase", "step", "sends": [chunk sent by worker r for each r],
    "receives": [chunk received by worker r]}.
    """
    n = check_int("num_workers", num_workers, minimum=1)
    schedule = []
    for step in range(n - 1):
        schedule.append({"phase": "reduce-scatter", "step": step,
                         "sends": [(r - step) % n for r in range(n)],
                         "receives": [(r - step - 1) % n for r in range(n)]})
    for step in range(n - 1):
        schedule.append({"phase": "all-gather", "step": step,
                         "sends": [(r + 1 - step) % n for r in range(n)],
                         "receives": [(r - step) % n for r in range(n)]})
    return schedule



def _check_buffers(buffers) -> np.ndarray:
    """The first of ``buffers``, after checking that they are a non-empty list of 1-D arrays
    of one shape and dtype (one gradient per worker)."""
    if not isinstance(buffers, (list, tuple)) or not buffers:
        raise ValueError("buffers must be a non-empty list of 1-D arrays")
    first = buffers[0]
    for rank, buffer in enumerate(buffers):
        if not isinstance(buffer, np.ndarray) or buffer.ndim != 1 \
                or buffer.shape != first.shape or buffer.dtype != first.dtype:
            raise ValueError(f"buffers[{rank}] must be a 1-D array like buffers[0] "
                             f"{first.shape} {first.dtype}, got "
                             f"{getattr(buffer, 'shape', type(buffer).__name__)} "
                             f"{getattr(buffer, 'dtype', '')}")
    return first

def ring_allreduce(buffers: list[np.ndarray]) -> list[int]:
    """Sum N workers' flat gradients in place, with the ring schedule, in one process.

    Inputs: buffers, N 1-D arrays of one shape and dtype (worker r's gradient).
    Outputs: bytes sent by each worker; afterwards every buffer holds the sum, the same
    bits in every buffer (each chunk is added up once, on one worker, then copied).
    Each step's messages are taken before any is delivered, as if all were in flight at
    once, exactly as the worker processes exchange them.
    """
    first = _check_buffers(buffers)
    n = len(buffers)
    bounds = chunk_bounds(first.size, n)
    sent = [0] * n
    for step in ring_schedule(n):
        messages = [buffers[r][bounds[step["sends"][r]]].copy() for r in range(n)]
        for r in range(n):
            incoming = messages[(r - 1) % n]  # from the left neighbour
            target = buffers[r][bounds[step["receives"][r]]]
            if step["phase"] == "reduce-scatter":
                target += incoming
            else:
                target[...] = incoming
            sent[(r - 1) % n] += incoming.nbytes
    return sent


# ------------------------------------------------------------------------------------------
# Step 3 on one machine: the shared-memory all-reduce (what the workers run)
# ------------------------------------------------------------------------------------------


def reduce_chunk(grads: np.ndarray, part: slice, scratch: np.ndarray, out: np.ndarray) -> float:
    """Worker r's share of the shared-memory all-reduce: sum chunk ``part`` over all slots.

    grads: (N, P), every worker's gradient; out: where the sum goes (worker r's own slot's
    chunk, which no other worker reads). Summed in rank order, block by block (``scratch``
    holds a block), so the result does not depend on which worker sums it. Outputs: the
    chunk's sum of squares after the reduction, in float64 (the clipping norm's share).
    """
    squares = 0.0
    block = scratch.size
    # Two slots: the sum goes straight into ``out`` (g0 + g1, the same bits), one pass
    # over the chunk fewer than through ``scratch``. With more, ``out`` (a slot's chunk)
    # may be a row the sum has yet to read, so the block is summed in ``scratch`` first.
    direct = len(grads) == 2
    for start in range(part.start, part.stop, block):
        stop = min(start + block, part.stop)
        if direct:
            total = out[start - part.start: stop - part.start]
            np.add(grads[0, start:stop], grads[1, start:stop], out=total)
            squares += float(np.einsum("i,i->", total, total, dtype=np.float64))
            continue
        total = scratch[: stop - start]
        if len(grads) == 1:
            np.copyto(total, grads[0, start:stop])
        else:
            np.add(grads[0, start:stop], grads[1, start:stop], out=total)
        for row in grads[2:]:
            total += row[start:stop]
        out[start - part.start: stop - part.start] = total
        squares += float(np.einsum("i,i->", total, total, dtype=np.float64))
    return squares


def shared_allreduce(buffers: list[np.ndarray]) -> list[int]:
    """The shared-memory all-reduce in one process, for reading and testing.

    Inputs: buffers, N 1-D arrays of one shape and dtype (worker r's gradient, as if each
    sat in its slot of one shared mapping). Worker r sums chunk r over all N slots (the
    reduce-scatter: every chunk summed once, by one worker, in rank order); the others
    then read the finished chunks where they lie (the all-gather: in shared memory it is
    only reads). Outputs: bytes each worker read from other workers' slots,
    (N - 1) / N of the gradient. Afterwards every buffer holds the sum, the same bits in each.
    """
    first = _check_buffers(buffers)
    n = len(buffers)
    grads = np.stack(buffers)
    bounds = chunk_bounds(first.size, n)
    scratch = np.empty(max(1, min(1 << 16, first.size)), first.dtype)
    for rank, part in enumerate(bounds):  # the reduce-scatter, worker by worker
        reduce_chunk(grads, part, scratch, grads[rank, part])
    for buffer in buffers:  # the all-gather: each reads chunk r from slot r
        for rank, part in enumerate(bounds):
            buffer[part] = grads[rank, part]
    itemsize = first.dtype.itemsize
    return [(n - 1) * (part.stop - part.start) * itemsize for part in bounds]
