"""One training step and the evaluation mode: what pretraining and fine-tuning share.

``train_step`` is the whole of an update, in the order every job uses:

    zero the gradients -> forward (the loss) -> stop on a NaN/inf loss -> backward
    -> clip the global gradient norm -> optimizer step

``eval_mode`` switches dropout off around an evaluation loop and restores the model's
mode after it, however the loop ends.
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator

from minibert.training.optim import AdamW, clip_grad_norm

__all__ = ["TrainingDiverged", "train_step", "eval_mode"]


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the weights (and any checkpoint) are left untouched."""


def train_step(model, batch: dict, optimizer: AdamW, clip: float | None,
               loss_weights: dict | None = None):
    """One optimizer update of ``model`` on one batch.

    Inputs: model, a minibert model whose forward computes ``loss`` from the labels in
    ``batch`` and whose ``backward()`` differentiates it; batch, the keyword inputs of that
    forward (a dict, e.g. ``PretrainingBatch.model_inputs()``); optimizer, built on
    ``model``; clip, the largest global gradient norm allowed, or None for no clipping;
    loss_weights, keyword arguments of ``model.backward`` that weigh the parts of the loss
    (e.g. ``{"nsp_weight": 3.0}``), or None to differentiate the forward's ``loss``.
    Outputs: (out, grad_norm): the forward's output, and the global gradient norm before
    clipping (None when ``clip`` is None).
    Raises TrainingDiverged when the loss is NaN or infinite, before any weight changes.
    """
    optimizer.zero_grad()
    out = model(**batch)
    if not math.isfinite(out.loss):
        raise TrainingDiverged(f"the loss became {out.loss} at step "
                               f"{optimizer.step_count + 1}; try a smaller learning rate")
    model.backward(**(loss_weights or {}))
    grad_norm = None if clip is None else clip_grad_norm(optimizer, clip)
    optimizer.step()
    return out, grad_norm


@contextlib.contextmanager
def eval_mode(model) -> Iterator:
    """Dropout off inside the ``with`` block; the model's previous mode restored after it."""
    was_training = model.training
    model.eval()
    try:
        yield model
    finally:
        model.train(was_training)
