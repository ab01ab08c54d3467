"""Worker processes on one machine: the plumbing of ``--workers N`` (the lesson is ``parallel``).

``DataParallel`` runs the steps of ``minibert.training.parallel`` on real processes. Each
worker is a fresh Python process (``python -m minibert.training._worker``) holding a replica
whose weights, Adam moments and gradient live in one shared mapping (``SharedBuffers``); the
parent sends shards and learning rates over pipes (a JSON header and raw array bytes:
nothing is pickled), the workers meet at barriers of 16-byte records (``Peers``), sum their
chunks (``parallel.reduce_chunk``), and each updates its own chunk of the shared weights
(ZeRO stage 1).

Stopping and failing (``minibert.training.transport``):

- The parent alone decides; the workers only obey. A signal a worker receives is recorded
  and sent with its reply to the step; the parent's own request and the workers' become the
  step's one ``StepResult.stop``, and the parent then saves and stops every worker.
- A worker that dies, reports an error or stops answering ends the run: the parent learns
  it from the end of that worker's pipe, its error message, or its heartbeat (a thread of
  each worker writes the time into a shared slot every half second; a slot older than
  ``heartbeat_timeout`` seconds names a stopped or hung worker), stops the others and
  raises ``WorkerError`` naming the worker that failed first. A worker whose peer died
  fails too (at the next barrier); that is a consequence, never reported as the cause.
- Workers exit when the parent closes them, when the parent dies (their pipe reaches
  end-of-file), and after reporting an error.

Dimension legend: P number of parameters, N workers.
"""

from __future__ import annotations

import contextlib
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
from multiprocessing.connection import Connection, wait

import numpy as np

from minibert.checks import check_int, check_real
from minibert.training.optim import AdamW, AdamWeightDecay
from minibert.training.parallel import chunk_bounds, shard_batch, shard_weights
from minibert.training.transport import StepResult, Transport, requested_stop

__all__ = ["DataParallel", "Heartbeats", "Peers", "PeerGone", "SharedBuffers", "WorkerError",
           "child_environment", "describe_exit", "recv_message", "send_message"]


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


# How a worker reports a loss that is NaN or infinite: not a failure of the worker, but of
# the run (too large a learning rate), which the parent raises as TrainingDiverged.
DIVERGED = "the loss of the shard became"


class WorkerError(RuntimeError):
    """A worker process failed or died; all workers have been stopped.

    ``rank`` is the worker that failed first and ``exit`` how it ended, in words ("killed
    by SIGKILL (killed: out of memory?)", "exited with code 1"), or None when it reported
    an error and exited by itself. ``signum``: the signal that ended it, else None.
    """

    def __init__(self, message: str, rank: int | None = None, exit: str | None = None,
                 signum: int | None = None) -> None:
        super().__init__(message)
        self.rank, self.exit, self.signum = rank, exit, signum


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



class PeerGone(EOFError):
    """Another worker died: this one fails as a consequence, never as the cause."""


class Heartbeats:
    """One float64 per worker in a nameless shared mapping: the time of its last heartbeat.

    A thread of each worker writes ``time.monotonic()`` (the same clock in every process of
    the machine) into its slot every ``INTERVAL`` seconds; the parent reads the slots only
    while it waits for a reply, so a step pays nothing for them.
    """

    INTERVAL = 0.5

    def __init__(self, num_workers: int, fd: int | None = None) -> None:
        nbytes = max(8 * num_workers, 8)
        self.fd = SharedBuffers._create(nbytes) if fd is None else fd
        self._map = mmap.mmap(self.fd, nbytes)
        self.times = np.frombuffer(self._map, np.float64, count=num_workers)

    def beat(self, rank: int) -> None:
        self.times[rank] = time.monotonic()

    def close(self) -> None:
        self.times = None
        with contextlib.suppress(BufferError):
            self._map.close()
        with contextlib.suppress(OSError):
            os.close(self.fd)


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
                raise PeerGone("another worker is gone (its end of the pipe closed)")
            data += more
        return self.RECORD.unpack(data)

    def exchange(self, value: float = 0.0) -> list[float]:
        """A barrier that carries one float: every worker's value, by rank."""
        self.round += 1
        record = self.RECORD.pack(self.round, self.rank, value)
        for fd in self.outboxes:
            try:
                os.write(fd, record)
            except BrokenPipeError:
                raise PeerGone("another worker is gone (its inbox closed)") from None
        values = {self.rank: value, **self.early.pop(self.round, {})}
        while len(values) < self.num_workers:
            round_, rank, got = self._read_record()
            if round_ == self.round:
                values[rank] = got
            else:
                self.early.setdefault(round_, {})[rank] = got
        return [values[rank] for rank in range(self.num_workers)]


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


class DataParallel(Transport):
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
        heartbeat_timeout: seconds without a worker's heartbeat before it is declared
            stopped or hung (its process frozen, or stuck holding the interpreter).
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
                 pair_loss_weight: float = 1.0, heartbeat_timeout: float = 10.0) -> None:
        self.num_workers = check_int("num_workers", num_workers, minimum=1)
        self.heartbeat_timeout = check_real("heartbeat_timeout", heartbeat_timeout, 0,
                                            above=True)
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
        self.heartbeats: Heartbeats | None = None
        self.bounds = chunk_bounds(optimizer.flat_params.size, self.num_workers)
        try:
            self.shared = SharedBuffers(optimizer.flat_params.size, self.num_workers,
                                        optimizer.flat_params.dtype)
            self.heartbeats = Heartbeats(self.num_workers)
            self.heartbeats.times[:] = time.monotonic()
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
            self._broadcast("init", [dict(init, rank=rank) for rank in range(self.num_workers)])
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
                fds = [down_read, up_write, self.shared.fd, self.heartbeats.fd,
                       inboxes[rank][0], *outboxes]
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

        The worker reported is the one that failed first: a worker that died, reported an
        error of its own or stopped beating; a worker that failed only because a peer was
        gone (``PeerGone``) is named only when no other cause is known.
        """
        pending = {control.reader: rank for rank, control in enumerate(self.controls)}
        replies: dict[int, tuple[dict, dict]] = {}
        # rank -> (message, exit in words, a consequence of another's failure), in the
        # order the failures were seen
        errors: dict[int, tuple[str, str | None, bool]] = {}
        deadline = time.monotonic() + self.timeout
        grace = None  # once a failure is seen: how long the others get to report theirs
        while pending:
            now = time.monotonic()
            if errors and grace is None:
                grace = now + 1.0
            limit = min(deadline, grace) if grace is not None else deadline
            if now >= limit:
                if errors:
                    break
                self._fail(f"no reply to {what!r} from worker(s) "
                           f"{sorted(pending.values())} within {self.timeout:g} s")
            ready = wait(list(pending), timeout=min(1.0, limit - now))
            if not ready:  # a slow step, or a worker that stopped answering
                self._check_heartbeats(pending.values(), errors)
                continue
            for reader in ready:
                rank = pending.pop(reader)
                try:
                    kind, meta, arrays = recv_message(reader)
                except (EOFError, OSError):
                    how = self._exit_of(rank)
                    errors.setdefault(rank, (f"{how} (pid {self.processes[rank].pid})", how,
                                             False))
                    continue
                if kind == "error":
                    errors.setdefault(rank, (meta["message"], None,
                                             bool(meta.get("peer_gone"))))
                else:
                    replies[rank] = (meta, arrays)
        if errors:
            order = list(errors)
            causes = [rank for rank in order if not errors[rank][2]] or order
            rank = causes[0]
            others = sorted(set(errors) - {rank})
            also = f" (then worker(s) {others} stopped too)" if others else ""
            message, how, _ = errors[rank]
            if DIVERGED in message:
                from minibert.training.loop import TrainingDiverged

                self.close(force=True)
                loss = message.split(DIVERGED, 1)[1].split()[0]
                raise TrainingDiverged(
                    f"the loss became {loss} at step {self.optimizer.step_count + 1} (in "
                    f"worker {rank}'s shard): the run diverged; try a smaller learning rate "
                    f"(resuming with the same settings diverges again)")
            self._fail(f"worker {rank} failed during {what!r}: {message}{also}; "
                       "all workers are stopped", rank, how)
        return [replies[rank] for rank in range(self.num_workers)]

    def _exit_of(self, rank: int) -> str:
        """How worker ``rank`` ended, in words (it closed its pipe: it is ending)."""
        try:
            code = self.processes[rank].wait(timeout=10)
        except subprocess.TimeoutExpired:
            code = None
        return describe_exit(code)

    def _check_heartbeats(self, ranks, errors: dict) -> None:
        """Record, as a failure, every waited-for worker whose heartbeat is too old."""
        now = time.monotonic()
        for rank in ranks:
            silent = now - float(self.heartbeats.times[rank])
            if silent > self.heartbeat_timeout and rank not in errors:
                code = self.processes[rank].poll()
                how = (describe_exit(code) if code is not None else
                       f"stopped answering (no heartbeat for {silent:.0f} s: its process is "
                       f"stopped or hung)")
                errors[rank] = (f"{how} (pid {self.processes[rank].pid})", how, False)

    def _fail(self, message: str, rank: int | None = None, how: str | None = None):
        code = None if rank is None else self.processes[rank].poll()
        self.close(force=True)
        raise WorkerError(message, rank, how, -code if code is not None and code < 0 else None)

    def _broadcast(self, kind: str, metas: list[dict], arrays: list[dict] | None = None):
        if self._closed:
            raise RuntimeError("this DataParallel is closed; build a new one")
        for rank, control in enumerate(self.controls):
            try:
                send_message(control.writer, kind, metas[rank],
                             None if arrays is None else arrays[rank])
            except (BrokenPipeError, OSError):
                how = self._exit_of(rank)
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
        if self.heartbeats is not None:
            self.heartbeats.close()

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

    process_name = "worker"

    def step(self, batch: dict, requested=0, reduction: str = "global") -> StepResult:
        """One data-parallel update on ``batch`` (split into N shards); returns its figures.

        ``requested``: the parent's stop request (a signal number, 0 for none, or a
        function returning it, read once every worker has replied); the result's ``stop``
        is it, or else the signal the lowest-numbered worker received, 0 for none.
        """
        start = time.perf_counter()
        lr = self.optimizer.current_lr
        replies = self._send_shards("step", batch, reduction, {"lr": lr})
        self.optimizer.step_count += 1
        metas = [meta for meta, _ in replies]
        signals = {rank: meta["signal"] for rank, meta in enumerate(metas) if meta.get("signal")}
        stop, source = requested_stop(requested), None
        if not stop and signals:
            first = min(signals)
            stop, source = signals[first], f"worker {first}"
        return StepResult(
            loss=float(sum(meta["loss"] for meta in metas)),
            grad_norm=metas[0]["grad_norm"],
            bytes_sent=[meta["bytes_sent"] for meta in metas],
            compute_seconds=[meta["compute_seconds"] for meta in metas],
            allreduce_seconds=[meta["allreduce_seconds"] for meta in metas],
            update_seconds=[meta["update_seconds"] for meta in metas],
            seconds=time.perf_counter() - start,
            signals=signals, waiting_seconds=[meta["waiting_seconds"] for meta in metas],
            stop=int(stop), source=source)

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
