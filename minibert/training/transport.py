"""How a training loop takes its steps: in this process, on worker processes, on MPI ranks.

The loop (``minibert.training.pretrain.Trainer``) knows one small interface, whatever runs
the step:

    with transport:                                  # starts (and always ends) the processes
        result = transport.step(batch, requested)    # one update on the whole batch
        result.stop                                  # the stop every process agreed on
        transport.pull()                             # the weights into this model (to read)
        transport.writes                             # whether this process saves and prints

``OneProcess`` (here), ``minibert.training.workers.DataParallel`` (worker processes on this
machine) and ``minibert.bridges.mpi.MPIDataParallel`` (MPI ranks) implement it.

The stop agreement. A stop request (a signal to any process of the run) is data:
``requested()`` is this process's request (a signal number, 0 for none), read at the last
moment the transport can still share it, and it travels with the step's own messages: on
MPI ranks, as one more element of the gradient all-reduce; with workers, in the replies the
parent gathers for the step anyway (the parent alone decides, after the replies).
``result.stop`` is then the same on every process (0: go on), so every process finishes
that same step, the writer saves it and every process ends with 128 + the signal. No
process ever decides alone and then waits for the others at a collective they never
reach: that is how a run hangs.

The MPI world. A job run on MPI ranks is handed its world by its caller (``world=``: what
``minibert.bridges.mpi.world()`` returns; the command line passes it under mpiexec), and
uses it through these names alone: ``rank`` and ``size``; ``start()``, the meeting of the
ranks before the first step; ``fail(error)`` before that meeting and ``abort(error)`` after
it, for a rank that fails; ``describe_run(out_dir, resume_command)``, what is named if
every rank is killed at once; ``finished``, set once every rank left the loop; and
``transport(model, optimizer, clip=..., pair_loss_weight=...)``, this rank's side of the
step (a ``Transport``). training/ never imports the bridge: the bridge builds on it.
Reading the launcher's variables (``launched_ranks``) is all training/ knows of MPI by
itself: enough to refuse a job that several ranks started without their world.

Dimension legend: none (whole batches in, figures out).
"""

from __future__ import annotations

import os
import signal
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from minibert.training.loop import train_step

__all__ = ["STOP_SIGNALS", "OneProcess", "RunInterrupted", "StepResult", "Transport",
           "launched_rank", "launched_ranks", "refuse_ranks_without_world", "requested_stop"]

# The signals that stop a run cleanly: the step under way finishes, a checkpoint is written.
STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class RunInterrupted(KeyboardInterrupt):
    """A run stopped by a signal after saving a checkpoint at ``step`` (None: no checkpoint).

    ``source``: which process received the signal when it was not this one ("worker 1",
    "rank 2"), else None.
    """

    def __init__(self, signum: int, step: int | None, source: str | None = None) -> None:
        super().__init__(f"{signal.Signals(signum).name} at step {step}")
        self.signum, self.step, self.source = signum, step, source


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


def refuse_ranks_without_world(world, command: str) -> None:
    """Refuse a job that an MPI launcher started on several ranks but gave no ``world``.

    Each rank would train the whole run alone, and every one of them would write into the
    same output folder. ``command``: the job's command ("pretrain"), for the message.
    """
    ranks = launched_ranks()
    if world is None and ranks > 1:
        raise ValueError(f"world is None, but an MPI launcher started this process as rank "
                         f"{launched_rank()} of {ranks}; run python -m minibert {command} "
                         f"under the launcher, or pass world=minibert.bridges.mpi.world()")


def requested_stop(requested: Callable[[], int] | int) -> int:
    """This process's stop request now: ``requested()`` when callable, else the number."""
    return int(requested() if callable(requested) else requested)


@dataclass
class StepResult:
    """What one step measured (every process's figures, by rank) and the stop agreed on."""

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
    # The stop every process of the run agreed on at this step: a signal number, 0 for none.
    stop: int = 0
    # Which process received that signal when it was not this one ("worker 1", "rank 2").
    source: str | None = None
    # The forward's output when this process ran the whole batch (OneProcess), else None.
    out: object = None


class Transport:
    """The interface of the loop's step (see the module docstring); a context manager."""

    num_workers = 1
    writes = True  # this process saves checkpoints, evaluates and prints
    process_name = "process"  # what one of its processes is called: "worker", "rank"

    def step(self, batch: dict, requested: Callable[[], int] | int = 0) -> StepResult:
        """One update on the whole ``batch``; ``requested``: this process's stop request."""
        raise NotImplementedError

    def pull(self) -> None:
        """Make this process's model hold the current weights (before reading them)."""

    def close(self) -> None:
        """End every process this transport started."""

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        self.close()


class OneProcess(Transport):
    """The whole batch in this process (``train_step``); the stop request is the agreement."""

    def __init__(self, model, optimizer, clip: float | None,
                 loss_weights: dict | None = None) -> None:
        self.model, self.optimizer, self.clip = model, optimizer, clip
        self.loss_weights = loss_weights

    def step(self, batch: dict, requested: Callable[[], int] | int = 0) -> StepResult:
        start = time.perf_counter()
        out, grad_norm = train_step(self.model, batch, self.optimizer, self.clip,
                                    self.loss_weights)
        seconds = time.perf_counter() - start
        return StepResult(loss=out.loss, grad_norm=grad_norm, bytes_sent=[0],
                          compute_seconds=[seconds], allreduce_seconds=[0.0],
                          update_seconds=[0.0], seconds=seconds,
                          stop=requested_stop(requested), out=out)
