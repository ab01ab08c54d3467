"""One data-parallel worker process: ``python -m minibert.training._worker RANK N FDS...``.

Started by ``minibert.training.parallel.DataParallel``, never by hand. The four file
descriptors are its pipes: orders from the parent, replies to the parent, the ring link
from worker RANK - 1 and the ring link to worker RANK + 1. The worker builds its replica
from the "init" message (model class, config, dtype, weights and optimizer state), then
serves "step", "gradients" and "state" until "stop" or until the parent's pipe ends.
Any error is sent to the parent as one "error" message, and the worker exits.
"""

from __future__ import annotations

import importlib
import math
import signal
import sys
import time
import traceback
from multiprocessing.connection import Connection

import numpy as np

from minibert.training import parallel as P
from minibert.training.optim import AdamW, AdamWeightDecay, clip_grad_norm


class _FixedRate:
    """The learning rate the parent sends with each step (the parent owns the schedule)."""

    def __init__(self) -> None:
        self.lr = 0.0

    def lr_at(self, step: int) -> float:
        return self.lr


def _build(meta: dict, arrays: dict):
    """The replica and its optimizer, with the parent's weights and optimizer state."""
    config_class = getattr(importlib.import_module(meta["config_module"]), meta["config_class"])
    model_class = getattr(importlib.import_module(meta["model_module"]), meta["model_class"])
    model = model_class(config_class.from_dict(meta["config"]), seed=0,
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
                                **kwargs)
    optimizer.flat_params[...] = arrays["params"]
    optimizer.flat_exp_avg[...] = arrays["exp_avg"]
    optimizer.flat_exp_avg_sq[...] = arrays["exp_avg_sq"]
    optimizer.step_count = meta["step_count"]
    # Dropout: each worker its own stream, so shards do not share masks.
    stream = np.random.SeedSequence([meta["seed"], meta["rank"]])
    model.dropout_rng.bit_generator.state = np.random.default_rng(stream).bit_generator.state
    return model, optimizer, rate


def _forward_backward(model, meta: dict, arrays: dict) -> float:
    weights = tuple(meta["weights"])
    out = model(**arrays)
    if out.loss is None or not math.isfinite(out.loss):
        raise ValueError(f"the shard's loss is {out.loss}; every shard needs labels and a "
                         "finite loss")
    P.backward_with(model, weights, meta["pair_loss_weight"])
    return P.shard_loss(out, weights)


def serve(rank: int, n: int, control_in: Connection, control_out: Connection,
          ring_in: Connection, ring_out: Connection) -> None:
    model = optimizer = rate = None
    clip = None
    while True:
        try:
            kind, meta, arrays = P.recv_message(control_in)
        except (EOFError, OSError):
            return  # the parent is gone: exit quietly
        if kind == "stop":
            return
        try:
            if kind == "init":
                model, optimizer, rate = _build(meta, arrays)
                clip = meta["clip"]
                P.send_message(control_out, "ok")
            elif kind in ("step", "gradients"):
                start = time.perf_counter()
                optimizer.zero_grad()
                loss = _forward_backward(model, meta, arrays)
                computed = time.perf_counter()
                sent = P.ring_allreduce_pipes(optimizer.flat_grads, rank, n, ring_out, ring_in)
                reduced = time.perf_counter()
                if kind == "gradients":
                    P.send_message(control_out, "ok", {"loss": loss},
                                   {"grads": optimizer.flat_grads})
                    continue
                norm = None if clip is None else clip_grad_norm(optimizer, clip)
                rate.lr = meta["lr"]
                optimizer.step()
                done = time.perf_counter()
                P.send_message(control_out, "ok", {
                    "loss": loss, "grad_norm": norm, "bytes_sent": sent,
                    "compute_seconds": computed - start, "allreduce_seconds": reduced - computed,
                    "update_seconds": done - reduced})
            elif kind == "state":
                P.send_message(control_out, "ok", {}, {
                    "params": optimizer.flat_params, "exp_avg": optimizer.flat_exp_avg,
                    "exp_avg_sq": optimizer.flat_exp_avg_sq})
            else:
                raise ValueError(f"unknown order {kind!r}")
        except BaseException as error:
            lines = traceback.format_exception_only(type(error), error)
            message = lines[-1].strip() if lines else repr(error)
            try:
                P.send_message(control_out, "error", {
                    "message": message, "ring": isinstance(error, P.RingError)})
            except OSError:
                pass
            raise


def main(argv: list[str]) -> int:
    rank, n, *fds = map(int, argv)
    # Ctrl-C (and a closed terminal) signal the whole process group; the parent owns the
    # run and stops it after the step under way, which needs the workers until it closes them.
    for name in ("SIGINT", "SIGHUP"):
        if hasattr(signal, name):
            signal.signal(getattr(signal, name), signal.SIG_IGN)
    control_in = Connection(fds[0], writable=False)
    control_out = Connection(fds[1], readable=False)
    ring_in, ring_out = Connection(fds[2], writable=False), Connection(fds[3], readable=False)
    try:
        serve(rank, n, control_in, control_out, ring_in, ring_out)
    except BaseException:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
