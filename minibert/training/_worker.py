"""One data-parallel worker process: ``python -m minibert.training._worker RANK N FDS...``.

Started by ``minibert.training.workers.DataParallel``, never by hand. The descriptors:
orders from the parent, replies to the parent, the shared memory (weights, moments and a
gradient slot per worker), the heartbeat slots, this worker's inbox from the other workers,
and the other workers' inboxes. A thread writes this worker's heartbeat every half second.
The worker builds its replica on the shared weights from the "init" message, then serves
"step" and "gradients" until "stop" or until the parent's pipe ends.
Any error is sent to the parent as one "error" message (saying whether it only followed
another worker's death), and the worker exits.

Signals: SIGINT, SIGTERM and SIGHUP do not stop a worker. Sent to the whole process
group (Ctrl-C, ``timeout``, a scheduler) they reach the parent too, which finishes the
step, saves a checkpoint and closes the workers; sent to one worker alone, the worker
reports it with its next reply and the parent stops the run the same way.
"""

from __future__ import annotations

import math
import signal
import sys
import threading
import time
import traceback
from multiprocessing.connection import Connection

import numpy as np

from minibert.training import parallel as P
from minibert.training import workers as W
from minibert.training.optim import AdamW, AdamWeightDecay

STOP_SIGNALS = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP")
                     if hasattr(signal, name))


class _FixedRate:
    """The learning rate the parent sends with each step (the parent owns the schedule)."""

    def __init__(self) -> None:
        self.lr = 0.0

    def lr_at(self, step: int) -> float:
        return self.lr


def _build(meta: dict, shared: W.SharedBuffers):
    """The replica and its optimizer, on the shared weights, moments and this worker's slot."""
    from minibert.family.registry import family_of

    family = family_of(meta["model_type"])  # the model's class, by name, in its family
    model_class = {cls.__name__: cls for cls in family.model_classes}[meta["model_class"]]
    model = model_class(family.config_class.from_dict(meta["config"]), seed=0,
                        dtype=np.dtype(meta["dtype"]))
    model.train(meta["training"])
    spec = meta["optimizer"]
    no_decay = set(spec["no_decay_names"])
    optimizer_class = {"AdamW": AdamW, "AdamWeightDecay": AdamWeightDecay}[spec["class"]]
    kwargs = {"betas": tuple(spec["betas"]), "eps": spec["eps"],
              "weight_decay": spec["weight_decay"]}
    if optimizer_class is AdamW:
        kwargs["bias_correction"] = spec["bias_correction"]
    rate = _FixedRate()
    optimizer = optimizer_class(model, lr=rate, no_decay=lambda name: name in no_decay,
                                buffers=shared.views(meta["rank"]), **kwargs)
    optimizer.step_count = meta["step_count"]
    # Dropout: each worker its own stream, so shards do not share masks.
    stream = np.random.SeedSequence([meta["seed"], meta["rank"]])
    model.dropout_rng.bit_generator.state = np.random.default_rng(stream).bit_generator.state
    return model, optimizer, rate


def _forward_backward(model, meta: dict, arrays: dict) -> float:
    weights = tuple(meta["weights"])
    out = model(**arrays)
    if out.loss is None:
        raise ValueError("the shard's forward computed no loss; every shard needs labels")
    if not math.isfinite(out.loss):  # the run diverged: the parent raises TrainingDiverged
        raise ArithmeticError(f"{W.DIVERGED} {out.loss}")
    P.backward_with(model, weights, meta["pair_loss_weight"])
    return P.shard_loss(out, weights)


def _clip_coefficient(total: float, clip: float) -> float:
    """clip_grad_norm's rule: scale by min(1, clip / (norm + 1e-6))."""
    if not math.isfinite(total):
        raise ValueError("gradients must be finite to be clipped, got NaN or inf")
    return clip / (total + 1e-6)


class Worker:
    def __init__(self, rank: int, n: int, control_in: Connection, control_out: Connection,
                 shared_fd: int, inbox: int, outboxes: list[int]) -> None:
        self.rank, self.n = rank, n
        self.control_in, self.control_out = control_in, control_out
        self.shared_fd, self.peers = shared_fd, W.Peers(rank, n, inbox, outboxes)
        self.signals: list[int] = []
        self.shared = self.model = self.optimizer = self.rate = None

    def _step(self, kind: str, meta: dict, arrays: dict) -> None:
        optimizer, part = self.optimizer, self.part
        start = time.perf_counter()
        optimizer.zero_grad()  # this worker's slot
        loss = _forward_backward(self.model, meta, arrays)
        computed = time.perf_counter()
        self.peers.exchange()  # every slot is written
        waited = time.perf_counter()
        mine = self.shared.grads[self.rank, part]
        squares = P.reduce_chunk(self.shared.grads, part, self.scratch, mine)
        if kind == "gradients":  # the parent reads the chunks once every worker has replied
            W.send_message(self.control_out, "ok", {"loss": loss})
            return
        norm = None
        if self.clip is not None:
            norm = math.sqrt(sum(self.peers.exchange(squares)))  # the shares, in rank order
            coef = _clip_coefficient(norm, self.clip)
            if coef < 1.0:
                mine *= coef
        reduced = time.perf_counter()
        self.rate.lr = meta["lr"]
        optimizer.step(part)  # ZeRO-1: this worker's chunk of weights and moments
        done = time.perf_counter()
        itemsize = self.shared.params.dtype.itemsize
        W.send_message(self.control_out, "ok", {
            "loss": loss, "grad_norm": norm,
            "bytes_sent": (self.n - 1) * (part.stop - part.start) * itemsize,
            "compute_seconds": computed - start, "waiting_seconds": waited - computed,
            "allreduce_seconds": reduced - waited, "update_seconds": done - reduced,
            "signal": self.signals[0] if self.signals else 0})

    def serve(self) -> None:
        while True:
            try:
                kind, meta, arrays = W.recv_message(self.control_in)
            except (EOFError, OSError):
                return  # the parent is gone: exit quietly
            if kind == "stop":
                return
            try:
                if kind == "init":
                    self.shared = W.SharedBuffers(meta["size"], self.n, np.dtype(meta["dtype"]),
                                                  fd=self.shared_fd)
                    self.model, self.optimizer, self.rate = _build(meta, self.shared)
                    self.clip = meta["clip"]
                    self.part = P.chunk_bounds(meta["size"], self.n)[self.rank]
                    self.scratch = np.empty(max(1, min(AdamW._block, meta["size"])),
                                            self.shared.params.dtype)
                    W.send_message(self.control_out, "ok")
                elif kind in ("step", "gradients"):
                    self._step(kind, meta, arrays)
                else:
                    raise ValueError(f"unknown order {kind!r}")
            except BaseException as error:
                lines = traceback.format_exception_only(type(error), error)
                message = lines[-1].strip() if lines else repr(error)
                try:
                    W.send_message(self.control_out, "error", {
                        "message": message, "peer_gone": isinstance(error, W.PeerGone)})
                except OSError:
                    pass
                raise


def main(argv: list[str]) -> int:
    rank, n, *fds = map(int, argv)
    control_in = Connection(fds[0], writable=False)
    control_out = Connection(fds[1], readable=False)
    worker = Worker(rank, n, control_in, control_out, fds[2], fds[4], fds[5:])
    heartbeats = W.Heartbeats(n, fd=fds[3])

    def beat():
        while True:
            heartbeats.beat(rank)
            time.sleep(W.Heartbeats.INTERVAL)

    threading.Thread(target=beat, name="heartbeat", daemon=True).start()

    def record(signum, frame):  # reported with the next reply; the parent decides
        if signum not in worker.signals:
            worker.signals.append(signum)

    for signum in STOP_SIGNALS:
        signal.signal(signum, record)
    try:
        worker.serve()
    except BaseException:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
