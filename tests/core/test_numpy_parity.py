"""minibert against transformers' numbers, with NumPy only: no torch needed.

tests/parity/make_reference.py ran tiny BERT, ALBERT and DistilBERT in ``transformers``
(float64, torch autograd) and wrote their parameters, a padded batch, the logits, the
loss, every parameter's gradient and the losses of 10 AdamW steps with clipping into
tests/parity/reference_float64.safetensors. Here minibert loads the same parameters, runs
the same batch with its reference pairs and must give the same numbers, tensor by tensor:
in float64 the two libraries differ by rounding alone (about 1e-15 relative), so 1e-9
leaves no room for a wrong term. The torch parity suite (tests/parity/) stays the
stronger check where torch is installed; this one runs everywhere.

Dimension legend: B batch, T sequence length, V vocabulary size.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import minibert as mb
from minibert import functional as F
from minibert.gradcheck import rel_error
from minibert.io import safetensors
from minibert.training.loop import train_step
from minibert.training.optim import AdamW

REFERENCE = Path(__file__).resolve().parents[1] / "parity" / "reference_float64.safetensors"
TOL = 1e-9
MODELS = {"bert": mb.BertForPreTraining, "albert": mb.AlbertForPreTraining,
          "distilbert": mb.DistilBertForMaskedLM}
CONFIGS = {"bert": mb.BertConfig, "albert": mb.AlbertConfig, "distilbert": mb.DistilBertConfig}
# What make_reference.py trained with.
LR, WEIGHT_DECAY, MAX_NORM = 1e-3, 0.01, 1.0


@pytest.fixture(scope="module")
def reference():
    tensors = safetensors.load_file(REFERENCE)
    _, metadata = safetensors.read_header(REFERENCE)
    return tensors, metadata


def part(tensors: dict, prefix: str) -> dict:
    return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}


def build(reference, family: str):
    """The minibert model of ``family`` with the reference's parameters, and the batch."""
    tensors, metadata = reference
    config = CONFIGS[family].from_dict(json.loads(metadata[f"{family}.config"]))
    model = MODELS[family](config, seed=0, dtype=np.float64).eval()
    model.load_state_dict(part(tensors, f"{family}.param."), strict=True)
    return model, part(tensors, f"{family}.input.")


def gradient_errors(model, expected: dict) -> dict[str, float]:
    """name -> ‖ours − theirs‖ / (‖ours‖ + ‖theirs‖ + 1e-6 G), G the reference's global norm.

    A few gradients are exactly 0 in exact arithmetic (the key biases: a constant added to a
    query's scores leaves its softmax unchanged); both libraries then return rounding
    noise, which the 1e-6 G term keeps from counting as a relative error.
    """
    scale = 1e-6 * np.sqrt(sum(float(np.sum(g * g)) for g in expected.values()))
    ours = dict(model.named_gradients())
    assert ours.keys() == expected.keys()
    return {name: float(np.linalg.norm(ours[name] - theirs)
                        / (np.linalg.norm(ours[name]) + np.linalg.norm(theirs) + scale))
            for name, theirs in expected.items()}


def forward_and_gradients(reference, family: str) -> dict[str, float]:
    """The largest error of each kind: logits, loss, gradient (by name)."""
    tensors, _ = reference
    model, batch = build(reference, family)
    out = model(**batch)
    model.backward()
    logits = out.logits if family == "distilbert" else out.prediction_logits
    errors = {"logits.mlm": rel_error(logits, tensors[f"{family}.logits.mlm"]),
              "loss": rel_error(np.array([out.loss]), tensors[f"{family}.loss"])}
    if family != "distilbert":
        pair = out.seq_relationship_logits if family == "bert" else out.sop_logits
        errors["logits.pair"] = rel_error(pair, tensors[f"{family}.logits.pair"])
    errors.update({f"grad.{name}": error for name, error in
                   gradient_errors(model, part(tensors, f"{family}.grad.")).items()})
    return errors


def test_the_reference_file_is_small_and_complete(reference):
    tensors, metadata = reference
    assert REFERENCE.stat().st_size <= 2 * 1024 * 1024
    for family in MODELS:
        assert f"{family}.config" in metadata
        assert tensors[f"{family}.train_losses"].shape == (10,)
        assert part(tensors, f"{family}.grad.").keys() == part(tensors, f"{family}.param.").keys()
        assert all(value.dtype == np.float64 for key, value in tensors.items()
                   if key.startswith(family) and ".input." not in key)


@pytest.mark.parametrize("family", list(MODELS))
def test_logits_loss_and_every_gradient_equal_transformers(reference, family):
    errors = forward_and_gradients(reference, family)
    worst = max(errors, key=errors.get)
    assert errors[worst] < TOL, f"{family}: {worst} differs by {errors[worst]:.2e}"


@pytest.mark.parametrize("family", list(MODELS))
def test_ten_adamw_steps_with_clipping_give_transformers_losses(reference, family):
    tensors, _ = reference
    model, batch = build(reference, family)
    model.train()  # dropout is 0 in these configs: train mode changes nothing else
    optimizer = AdamW(model, lr=LR, weight_decay=WEIGHT_DECAY)
    losses = [train_step(model, batch, optimizer, MAX_NORM)[0].loss for _ in range(10)]
    assert rel_error(np.array(losses), tensors[f"{family}.train_losses"]) < TOL


def test_a_broken_backward_is_caught(reference, monkeypatch):
    """The comparison can fail: LayerNorm's backward that forgets the variance's term."""
    reference_backward = F.layernorm_backward

    def layernorm_backward_without_the_variance(dout, cache):
        _, dweight, dbias = reference_backward(dout, cache)
        d_x_hat = dout * cache.weight  # (..., H)
        # forward: x_hat = (x - mean) * rstd; this dx treats rstd as a constant
        dx = cache.rstd * (d_x_hat - d_x_hat.mean(axis=-1, keepdims=True))
        return dx, dweight, dbias

    monkeypatch.setattr(F, "layernorm_backward", layernorm_backward_without_the_variance)
    errors = forward_and_gradients(reference, "bert")
    assert errors["logits.mlm"] < TOL  # the forward is untouched
    assert max(errors.values()) > 1e-3
