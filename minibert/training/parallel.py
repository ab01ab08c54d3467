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
- ``DataParallel``: real worker processes. Each is a fresh Python process
  (``python -m minibert.training._worker``) holding a replica whose weights, Adam moments
  and gradient live in one shared mapping (``SharedBuffers``); the parent sends shards
  and learning rates over pipes (a JSON header and raw array bytes: nothing is pickled),
  the workers meet at barriers of 16-byte records (``Peers``), sum their chunks, and each
  updates its own chunk of the shared weights (ZeRO stage 1). Workers exit when the
  parent closes them, when the parent dies (their pipe reaches end-of-file), and after
  reporting an error; the parent then stops the others and raises ``WorkerError``.

See notebooks/11_data_parallelism.ipynb and docs/parallel.md.

Dimension legend: B batch, T sequence length, P number of parameters, N workers.
"""

from __future__ import annotations

import contextlib
import inspect
import json
import math
import mmap
import os
import signal
import struct
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from multiprocessing.connection import Connection, wait

import numpy as np

from minibert.checks import IGNORE_INDEX, check_int, check_real
from minibert.training.optim import AdamW, AdamWeightDecay

__all__ = [
    "DataParallel",
    "StepResult",
    "WorkerError",
    "accumulate_gradients",
    "backward_with",
    "SharedBuffers",
    "chunk_bounds",
    "describe_exit",
    "reduce_chunk",
    "ring_allreduce",
    "ring_schedule",
    "shared_allreduce",
    "shard_batch",
    "shard_loss",
    "shard_weights",
]

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
    batch's, and its NSP weight B_r / B. Then sum_r weight_r * mean_r = (sum of all token
    losses) / M, the full batch's loss, and so the gradients add up to the full batch's.
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
    return [(m / total_masked if total_masked else 0.0, b / total_size)
            for m, b in zip(masked, sizes)]


def backward_with(model, weights: tuple[float, float], pair_loss_weight: float = 1.0) -> None:
    """``model.backward`` with a shard's weights (``shard_weights``).

    The second weight is the sentence-pair loss's: ``nsp_weight`` of BertForPreTraining,
    ``sop_weight`` of AlbertForPreTraining; a masked-LM model takes ``mlm_weight`` only.
    ``pair_loss_weight`` multiplies it: the objective's own weight of that loss.
    """
    mlm_weight, pair_weight = weights[0], weights[1] * pair_loss_weight
    parameters = inspect.signature(model.backward).parameters
    pair = next((name for name in ("nsp_weight", "sop_weight") if name in parameters), None)
    if pair is None:
        model.backward(mlm_weight=mlm_weight)
    else:
        model.backward(mlm_weight=mlm_weight, **{pair: pair_weight})


def shard_loss(out, weights: tuple[float, float]) -> float:
    """The shard's share of the batch loss: weight * mean, per part."""
    mlm = getattr(out, "masked_lm_loss", out.loss)
    nsp = getattr(out, "next_sentence_loss", None)
    return weights[0] * (mlm or 0.0) + weights[1] * (nsp or 0.0)


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


def ring_allreduce(buffers: list[np.ndarray]) -> list[int]:
    """Sum N workers' flat gradients in place, with the ring schedule, in one process.

    Inputs: buffers, N 1-D arrays of one shape and dtype (worker r's gradient).
    Outputs: bytes sent by each worker; afterwards every buffer holds the sum, the same
    bits in every buffer (each chunk is added up once, on one worker, then copied).
    Each step's messages are taken before any is delivered, as if all were in flight at
    once, exactly as the worker processes exchange them.
    """
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
# Messages between processes: a JSON header, then each array's raw bytes (no pickle)
# ------------------------------------------------------------------------------------------


def send_message(conn: Connection, kind: str, meta: dict | None = None,
                 arrays: dict | None = None) -> None:
    """Send ``kind``, a JSON-able ``meta`` dict and named arrays as raw bytes."""
    arrays = {name: np.ascontiguousarray(value) for name, value in (arrays or {}).items()}
    header = {"kind": kind, "meta": meta or {},
              "arrays": [[name, value.dtype.str, list(value.shape)]
                         for name, value in arrays.items()]}
    conn.send_bytes(json.dumps(header).encode("utf-8"))
    for value in arrays.values():
        conn.send_bytes(memoryview(value).cast("B"))


def recv_message(conn: Connection) -> tuple[str, dict, dict]:
    """Receive what ``send_message`` sent: (kind, meta, arrays)."""
    header = json.loads(conn.recv_bytes().decode("utf-8"))
    arrays = {}
    for name, dtype, shape in header["arrays"]:
        value = np.empty(shape, dtype=np.dtype(dtype))
        if value.nbytes:
            conn.recv_bytes_into(memoryview(value).cast("B"))
        else:
            conn.recv_bytes()
        arrays[name] = value
    return header["kind"], header["meta"], arrays


class WorkerError(RuntimeError):
    """A worker process failed or died; all workers have been stopped.

    ``rank`` is the worker that failed first and ``exit`` how it ended, in words ("killed
    by SIGKILL (killed: out of memory?)", "exited with code 1"), or None when it reported
    an error and exited by itself.
    """

    def __init__(self, message: str, rank: int | None = None, exit: str | None = None) -> None:
        super().__init__(message)
        self.rank, self.exit = rank, exit


def describe_exit(code: int | None) -> str:
    """A process's return code in words: a signal by name (SIGKILL: out of memory?) or a code."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            name = signal.Signals(-code).name
        except ValueError:
            name = f"signal {-code}"
        return f"killed by {name}" + (" (killed: out of memory?)"
                                       if -code == getattr(signal, "SIGKILL", 9) else "")
    return f"exited with code {code}"


# ------------------------------------------------------------------------------------------
# Shared memory: one mapping holds the weights, the moments and every worker's gradient
# ------------------------------------------------------------------------------------------


class SharedBuffers:
    """The flat arrays every worker maps: rows params, exp_avg, exp_avg_sq, grads[0..N-1].

    The memory is a file that is unlinked as soon as it is created and handed to the
    workers as an open descriptor: it has no name, so nothing is left behind whoever dies,
    and it lives as long as one process maps it. (``multiprocessing.shared_memory`` does the
    same with a named segment in /dev/shm, which someone must unlink, and a killed job
    leaves behind.) The file is made in /dev/shm, a memory file system, when there is room,
    and its space is reserved before use, so a full file system is an error at the start,
    never a crash mid-step.
    """

    ROWS = ("params", "exp_avg", "exp_avg_sq")

    def __init__(self, size: int, num_workers: int, dtype, fd: int | None = None) -> None:
        self.size, self.num_workers, self.dtype = size, num_workers, np.dtype(dtype)
        nbytes = (len(self.ROWS) + num_workers) * size * self.dtype.itemsize
        if fd is None:
            fd = self._create(max(nbytes, 1))
        self.fd = fd
        self._map = mmap.mmap(fd, max(nbytes, 1))
        table = np.frombuffer(self._map, self.dtype, count=nbytes // self.dtype.itemsize)
        table = table.reshape(len(self.ROWS) + num_workers, size)
        self.params, self.exp_avg, self.exp_avg_sq = table[0], table[1], table[2]
        self.grads = table[len(self.ROWS):]  # (N, P): worker r's gradient in row r

    @staticmethod
    def _create(nbytes: int) -> int:
        folders = [folder for folder in ("/dev/shm",) if os.path.isdir(folder)]
        errors = []
        for folder in [*folders, tempfile.gettempdir()]:
            try:
                fd, path = tempfile.mkstemp(prefix="minibert-", dir=folder)
            except OSError as error:
                errors.append(f"{folder}: {error.strerror or error}")
                continue
            os.unlink(path)
            try:
                if hasattr(os, "posix_fallocate"):
                    os.posix_fallocate(fd, 0, nbytes)
                else:
                    os.ftruncate(fd, nbytes)
                return fd
            except OSError as error:
                os.close(fd)
                errors.append(f"{folder}: {error.strerror or error}")
        raise MemoryError(f"no room for the workers' shared memory ({nbytes / 2**20:,.0f} MiB: "
                          f"weights, moments and a gradient per worker): "
                          + "; ".join(errors))

    def views(self, rank: int) -> dict[str, np.ndarray]:
        """Worker ``rank``'s optimizer buffers (AdamW's ``buffers=``)."""
        return {"params": self.params, "grads": self.grads[rank], "exp_avg": self.exp_avg,
                "exp_avg_sq": self.exp_avg_sq}

    def close(self) -> None:
        self.params = self.exp_avg = self.exp_avg_sq = self.grads = None
        try:
            self._map.close()
        except BufferError:  # a view is still held somewhere; the mapping goes with it
            pass
        with contextlib.suppress(OSError):
            os.close(self.fd)


def reduce_chunk(grads: np.ndarray, part: slice, scratch: np.ndarray, out: np.ndarray) -> float:
    """Worker r's share of the shared-memory all-reduce: sum chunk ``part`` over all slots.

    grads: (N, P), every worker's gradient; out: where the sum goes (worker r's own slot's
    chunk, which no other worker reads). Summed in rank order, block by block (``scratch``
    holds a block), so the result does not depend on which worker sums it. Outputs: the
    chunk's sum of squares after the reduction, in float64 (the clipping norm's share).
    """
    squares = 0.0
    block = scratch.size
    for start in range(part.start, part.stop, block):
        stop = min(start + block, part.stop)
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


class Peers:
    """The tiny messages between workers: each sends one number to all, then waits for all.

    Every worker reads one pipe (its inbox) and holds the write end of every other's. A
    record is 16 bytes (round, rank, value), and writes below the pipe's atomic size never
    interleave. A worker that is a round ahead may write before a slower one has read the
    last round: records of a later round wait in ``early``.
    """

    RECORD = struct.Struct("<iid")

    def __init__(self, rank: int, num_workers: int, inbox: int, outboxes: list[int]) -> None:
        self.rank, self.num_workers = rank, num_workers
        self.inbox, self.outboxes = inbox, outboxes
        self.round = 0
        self.early: dict[int, dict[int, float]] = {}

    def _read_record(self) -> tuple[int, int, float]:
        data = b""
        while len(data) < self.RECORD.size:
            more = os.read(self.inbox, self.RECORD.size - len(data))
            if not more:
                raise EOFError("the other workers are gone")
            data += more
        return self.RECORD.unpack(data)

    def exchange(self, value: float = 0.0) -> list[float]:
        """A barrier that carries one float: every worker's value, by rank."""
        self.round += 1
        record = self.RECORD.pack(self.round, self.rank, value)
        for fd in self.outboxes:
            os.write(fd, record)
        values = {self.rank: value, **self.early.pop(self.round, {})}
        while len(values) < self.num_workers:
            round_, rank, got = self._read_record()
            if round_ == self.round:
                values[rank] = got
            else:
                self.early.setdefault(round_, {})[rank] = got
        return [values[rank] for rank in range(self.num_workers)]


# ------------------------------------------------------------------------------------------
# The worker processes
# ------------------------------------------------------------------------------------------


@dataclass
class StepResult:
    """What one data-parallel step measured (every worker's figures, by rank)."""

    loss: float  # the full batch's loss (sum of the shards' shares)
    grad_norm: float | None  # global gradient norm before clipping (None: no clipping)
    bytes_sent: list  # per worker: bytes of other workers' gradients it read (all-reduce)
    compute_seconds: list  # per worker: forward + backward
    allreduce_seconds: list  # per worker: the all-reduce, without waiting_seconds
    update_seconds: list  # per worker: clipping + optimizer update of its chunk
    seconds: float  # wall time of the whole step, seen by the parent
    # rank -> signal number, for workers that received SIGINT, SIGTERM or SIGHUP
    signals: dict = field(default_factory=dict)
    # per worker: waiting at the first barrier for the slowest worker's backward
    waiting_seconds: list = field(default_factory=list)


def _optimizer_spec(optimizer: AdamW) -> dict:
    if type(optimizer) not in (AdamW, AdamWeightDecay):
        raise TypeError(f"optimizer must be an AdamW or AdamWeightDecay, got "
                        f"{type(optimizer).__name__}")
    return {"class": type(optimizer).__name__, "betas": list(optimizer.betas),
            "eps": optimizer.eps, "weight_decay": optimizer.weight_decay,
            "bias_correction": optimizer.bias_correction,
            "no_decay_names": list(optimizer.no_decay_names)}


def child_environment(threads: int) -> dict[str, str]:
    """The environment of a worker process: ``threads`` BLAS threads, minibert importable."""
    env = dict(os.environ)
    for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[name] = str(threads)
    package_root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


class DataParallel:
    """Train a replica of ``model`` on each of N worker processes, one update per batch.

    Inputs:
        model: a BertForPreTraining, BertForMaskedLM or their ALBERT twins (any model with
            ``(config, seed, dtype)``, a backward taking ``mlm_weight``, and a config
            with ``to_dict``); its current weights are what every replica starts from.
        optimizer: the AdamW (or AdamWeightDecay) built on ``model``. It is the plan of
            the update: hyperparameters, schedule and state are copied into the shared
            memory; each step takes its learning rate and counts the step. ``pull()``
            copies the shared weights and moments back into it (and so into ``model``).
        num_workers: N >= 1 processes.
        clip: the global gradient-norm limit, or None.
        threads_per_worker: BLAS threads of each worker (OPENBLAS_NUM_THREADS and its
            kin in the worker's environment); N x threads should not exceed the cores.
        seed: seeds each worker's dropout masks (worker r draws from stream r).
        timeout: seconds to wait for any one reply before declaring the workers stuck.
        pair_loss_weight: the weight of the sentence-pair loss (NSP or SOP) in the loss
            the workers differentiate (1: the plain sum; ``backward_with``).

    The workers share one mapping (``SharedBuffers``): one copy of the weights and of
    Adam's moments, and a gradient slot per worker. A step: every worker runs forward and
    backward on its shard into its own slot; a barrier; worker r sums chunk r of the
    gradient over all slots (the reduce-scatter) and its share of the squared norm; a
    second barrier carries those shares (the clipping norm); worker r clips and updates
    chunk r of the weights and moments (ZeRO-1: each moment updated once, by one worker).
    The weights are shared, so the all-gather costs nothing: the next forward reads them.

    Use as a context manager, or call ``close()``: it stops the workers.
    """

    def __init__(self, model, optimizer: AdamW, num_workers: int, clip: float | None = 1.0,
                 threads_per_worker: int = 1, seed: int = 0, timeout: float = 600.0,
                 pair_loss_weight: float = 1.0) -> None:
        self.num_workers = check_int("num_workers", num_workers, minimum=1)
        self.pair_loss_weight = check_real("pair_loss_weight", pair_loss_weight, 0, above=True)
        threads_per_worker = check_int("threads_per_worker", threads_per_worker, minimum=1)
        self.clip = None if clip is None else check_real("clip", clip, 0, above=True)
        self.timeout = check_real("timeout", timeout, 0, above=True)
        seed = check_int("seed", seed, minimum=0)
        spec = _optimizer_spec(optimizer)
        if optimizer.model is not model:
            raise ValueError("optimizer must be the one built on model (AdamW(model, ...))")
        self.model, self.optimizer = model, optimizer
        self.processes: list[subprocess.Popen] = []
        self.controls: list[_Duplex] = []
        self._closed = False
        self.shared: SharedBuffers | None = None
        self.bounds = chunk_bounds(optimizer.flat_params.size, self.num_workers)
        try:
            self.shared = SharedBuffers(optimizer.flat_params.size, self.num_workers,
                                        optimizer.flat_params.dtype)
            self.shared.params[...] = optimizer.flat_params
            self.shared.exp_avg[...] = optimizer.flat_exp_avg
            self.shared.exp_avg_sq[...] = optimizer.flat_exp_avg_sq
            self._start(threads_per_worker)
            # The worker finds the model's class by name in its family (the registry's).
            init = {"model_type": model.config.model_type, "model_class": type(model).__name__,
                    "config": model.config.to_dict(),
                    "dtype": np.dtype(model.dtype).str, "optimizer": spec,
                    "step_count": optimizer.step_count, "clip": self.clip, "seed": seed,
                    "training": bool(model.training), "size": optimizer.flat_params.size}
            for rank, control in enumerate(self.controls):
                send_message(control.writer, "init", dict(init, rank=rank))
            self._replies("init")
        except BaseException:
            self.close(force=True)
            raise

    # -- processes ------------------------------------------------------------------------

    def _start(self, threads: int) -> None:
        n = self.num_workers
        inboxes = [os.pipe() for _ in range(n)]  # worker r reads inboxes[r][0]
        env = child_environment(threads)
        try:
            for rank in range(n):
                down_read, down_write = os.pipe()  # parent -> worker
                up_read, up_write = os.pipe()  # worker -> parent
                outboxes = [inboxes[other][1] for other in range(n) if other != rank]
                fds = [down_read, up_write, self.shared.fd, inboxes[rank][0], *outboxes]
                command = [sys.executable, "-m", "minibert.training._worker", str(rank), str(n),
                           *map(str, fds)]
                process = subprocess.Popen(command, pass_fds=fds, env=env,
                                           stdin=subprocess.DEVNULL)
                self.processes.append(process)
                os.close(down_read)
                os.close(up_write)
                self.controls.append(_Duplex(Connection(up_read, writable=False),
                                             Connection(down_write, readable=False)))
        finally:
            for read, write in inboxes:  # the workers hold their ends now
                for fd in (read, write):
                    with contextlib.suppress(OSError):
                        os.close(fd)

    def _replies(self, what: str) -> list[tuple[dict, dict]]:
        """Wait for one reply from every worker; on any failure stop all and raise.

        When one worker dies, the others wait for it at the next barrier; the error
        reported is the first worker's own.
        """
        pending = {control.reader: rank for rank, control in enumerate(self.controls)}
        replies: dict[int, tuple[dict, dict]] = {}
        errors: dict[int, tuple[str, str | None]] = {}  # rank -> (message, exit in words)
        deadline = time.monotonic() + self.timeout
        while pending:
            if errors:  # give the others a moment to report, then stop
                deadline = min(deadline, time.monotonic() + 0.5)
            ready = wait(list(pending), timeout=max(0.0, deadline - time.monotonic()))
            if not ready:
                if errors:
                    break
                self._fail(f"no reply to {what!r} from worker(s) "
                           f"{sorted(pending.values())} within {self.timeout:g} s")
            for reader in ready:
                rank = pending.pop(reader)
                try:
                    kind, meta, arrays = recv_message(reader)
                except (EOFError, OSError):
                    try:
                        code = self.processes[rank].wait(timeout=10)
                    except subprocess.TimeoutExpired:
                        code = None
                    how = describe_exit(code)
                    errors[rank] = (f"{how} (pid {self.processes[rank].pid})", how)
                    continue
                if kind == "error":
                    errors[rank] = (meta["message"], None)
                else:
                    replies[rank] = (meta, arrays)
        if errors:
            rank = min(errors)
            others = sorted(set(errors) - {rank})
            also = f" (then worker(s) {others} stopped too)" if others else ""
            message, how = errors[rank]
            self._fail(f"worker {rank} failed during {what!r}: {message}{also}; "
                       "all workers are stopped", rank, how)
        return [replies[rank] for rank in range(self.num_workers)]

    def _fail(self, message: str, rank: int | None = None, how: str | None = None):
        self.close(force=True)
        raise WorkerError(message, rank, how)

    def _broadcast(self, kind: str, metas: list[dict], arrays: list[dict] | None = None):
        if self._closed:
            raise RuntimeError("this DataParallel is closed; build a new one")
        for rank, control in enumerate(self.controls):
            try:
                send_message(control.writer, kind, metas[rank],
                             None if arrays is None else arrays[rank])
            except (BrokenPipeError, OSError):
                try:
                    code = self.processes[rank].wait(timeout=10)
                except subprocess.TimeoutExpired:
                    code = None
                how = describe_exit(code)
                self._fail(f"worker {rank} is gone ({how}); cannot send {kind!r}", rank, how)
        return self._replies(kind)

    def close(self, force: bool = False) -> None:
        """Stop every worker (politely, then by force) and wait for each to exit.

        ``force``: after a failure the others may be waiting for the dead one at a
        barrier; they are killed after half a second instead of ten.
        """
        if self._closed:
            return
        self._closed = True
        for control in self.controls:
            with contextlib.suppress(BrokenPipeError, OSError):
                send_message(control.writer, "stop")
            control.close()
        for process in self.processes:
            try:
                process.wait(timeout=0.5 if force else 10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self.shared is not None:
            self.shared.close()

    def __enter__(self) -> DataParallel:
        return self

    def __exit__(self, *exc) -> None:
        self.close(force=exc[0] is not None)

    def __del__(self) -> None:
        try:
            self.close()
        except Exception:
            pass

    # -- the step ---------------------------------------------------------------------------

    def _send_shards(self, kind: str, batch: dict, reduction: str, extra: dict):
        shards = shard_batch(batch, self.num_workers)
        weights = shard_weights(shards, reduction)
        metas = [dict(extra, weights=list(w), pair_loss_weight=self.pair_loss_weight)
                 for w in weights]
        arrays = [{k: v for k, v in shard.items() if v is not None} for shard in shards]
        return self._broadcast(kind, metas, arrays)

    def step(self, batch: dict, reduction: str = "global") -> StepResult:
        """One data-parallel update on ``batch`` (split into N shards); returns its figures."""
        start = time.perf_counter()
        lr = self.optimizer.current_lr
        replies = self._send_shards("step", batch, reduction, {"lr": lr})
        self.optimizer.step_count += 1
        metas = [meta for meta, _ in replies]
        return StepResult(
            loss=float(sum(meta["loss"] for meta in metas)),
            grad_norm=metas[0]["grad_norm"],
            bytes_sent=[meta["bytes_sent"] for meta in metas],
            compute_seconds=[meta["compute_seconds"] for meta in metas],
            allreduce_seconds=[meta["allreduce_seconds"] for meta in metas],
            update_seconds=[meta["update_seconds"] for meta in metas],
            seconds=time.perf_counter() - start,
            signals={rank: meta["signal"] for rank, meta in enumerate(metas)
                     if meta.get("signal")},
            waiting_seconds=[meta["waiting_seconds"] for meta in metas])

    def gradients(self, batch: dict, reduction: str = "global") -> dict[str, np.ndarray]:
        """The all-reduced gradient of ``batch`` (no update), as name -> array.

        Worker r's reduced chunk lies in its own slot; the chunks are gathered here.
        """
        self._send_shards("gradients", batch, reduction, {})
        flat = np.empty_like(self.shared.params)
        for rank, part in enumerate(self.bounds):
            flat[part] = self.shared.grads[rank, part]
        return self._unflatten(flat)

    def _unflatten(self, flat: np.ndarray) -> dict[str, np.ndarray]:
        out, start = {}, 0
        for name in self.optimizer.decay_names + self.optimizer.no_decay_names:
            shape = self.optimizer._params[name].shape
            size = math.prod(shape)
            out[name] = flat[start:start + size].reshape(shape)
            start += size
        return out

    def pull(self) -> None:
        """Copy the shared weights and Adam moments into the parent's model and optimizer."""
        if self._closed:
            raise RuntimeError("this DataParallel is closed; build a new one")
        self.optimizer.flat_params[...] = self.shared.params
        self.optimizer.flat_exp_avg[...] = self.shared.exp_avg
        self.optimizer.flat_exp_avg_sq[...] = self.shared.exp_avg_sq


class _Duplex:
    """The parent's two pipe ends to one worker: ``reader`` (replies), ``writer`` (orders)."""

    def __init__(self, reader: Connection, writer: Connection) -> None:
        self.reader, self.writer = reader, writer

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
