"""Shared fixtures of the parity suite: a minibert model beside its HuggingFace twin.

Every test under ``tests/parity/`` gets the ``parity`` mark. Fixtures that need torch or
transformers skip (never fail) when those are not installed; this file itself imports
neither at module level, so the rest of the suite runs without them.

The twin is built from the same ``BertConfig`` fields, with eager attention (so the
attention maps are returned), in eval mode, and with minibert's weights copied into it
key by key. Both models' weights are first moved away from BERT's initialization
(normal noise on every parameter, LayerNorm scales and shifts included), because
weights at exactly 0 or 1 can hide a missing term in a backward pass.

Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size.
"""

from __future__ import annotations

from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
from small_models import (
    HF_BUFFERS,
    assert_same_keys,
    exactly_zero_gradients,
    perturbed,
    relative_difference,
    twin_of,
    zero_gradient_partner,
)

import minibert as mb
from minibert.checks import IGNORE_INDEX

PARITY_DIR = Path(__file__).resolve().parent

# Small enough to run in well under a second, large enough that every axis is distinct:
# V=97, T<=32, H=24, N=3 heads of D=8, I=40.
PARITY_CONFIG = dict(vocab_size=97, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
                     intermediate_size=40, max_position_embeddings=32)



def pytest_collection_modifyitems(config, items):
    for item in items:
        if PARITY_DIR in Path(item.path).resolve().parents:
            item.add_marker(pytest.mark.parity)


@pytest.fixture(scope="session")
def hf():
    """torch and transformers as a namespace; skips the test when either is missing."""
    torch = pytest.importorskip("torch")
    transformers = pytest.importorskip("transformers")
    return SimpleNamespace(torch=torch, transformers=transformers)


@pytest.fixture
def make_model():
    """Factory: a small minibert model whose every parameter is moved off its initial value.

    ``make_model(cls=mb.BertForPreTraining, dtype=np.float64, seed=0, scale=0.1, **config)``
    where ``config`` overrides fields of ``PARITY_CONFIG`` (e.g. ``hidden_act="relu"``).
    """

    def build(cls=mb.BertForPreTraining, dtype=np.float64, seed=0, scale=0.1, **overrides):
        config = mb.BertConfig(**{**PARITY_CONFIG, **overrides})
        model = cls(config, seed=seed, dtype=dtype)
        perturbed(model, seed + 1, scale)
        return model.eval()

    return build


@pytest.fixture
def hf_twin(hf):
    """Factory: ``hf_twin(model)``, the HF model of the same class and config holding
    minibert's weights, with its dtype, in eval mode (``small_models.twin_of``: it asserts
    that both state dicts have the same keys, HF's buffers aside, and copies every array)."""
    return lambda model: twin_of(hf, model)


@pytest.fixture
def load_from_hf():
    """Factory: ``load_from_hf(model, twin)`` copies the HF twin's weights into minibert."""

    def load(model, twin):
        state = {name: value.detach().cpu().numpy()
                 for name, value in twin.state_dict().items() if not name.endswith(HF_BUFFERS)}
        assert_same_keys(model.state_dict(), state)
        model.load_state_dict(state, strict=True)
        return model

    return load


@pytest.fixture
def padded_batch():
    """Factory: a padded pretraining batch of numpy arrays for a config.

    ``padded_batch(config, lengths=(11, 8, 5), seed=0)`` returns a dict with
    ``input_ids``, ``token_type_ids``, ``attention_mask`` (B, T) (padding at the end:
    [PAD] id, mask 0, segment 0), ``labels`` (B, T) with a target at about a third of
    the real positions (at least one per sequence) and -100 elsewhere, and
    ``next_sentence_label`` (B,) with both classes present.
    """

    def build(config: mb.BertConfig, lengths=(11, 8, 5), seed=0):
        rng = np.random.default_rng(seed)
        batch, seq_len = len(lengths), max(lengths)
        pad = config.pad_token_id
        input_ids = np.full((batch, seq_len), pad, dtype=np.int64)
        token_type_ids = np.zeros((batch, seq_len), dtype=np.int64)
        attention_mask = np.zeros((batch, seq_len), dtype=np.int64)
        labels = np.full((batch, seq_len), IGNORE_INDEX, dtype=np.int64)
        real_ids = np.array([i for i in range(config.vocab_size) if i != pad])
        for row, length in enumerate(lengths):
            input_ids[row, :length] = rng.choice(real_ids, size=length)
            token_type_ids[row, length // 2:length] = 1  # sentence B is the second half
            attention_mask[row, :length] = 1
            targets = rng.random(length) < 1 / 3
            targets[rng.integers(length)] = True
            labels[row, :length][targets] = rng.integers(0, config.vocab_size, targets.sum())
        next_sentence_label = np.arange(batch, dtype=np.int64) % 2
        rng.shuffle(next_sentence_label)
        return dict(input_ids=input_ids, token_type_ids=token_type_ids,
                    attention_mask=attention_mask, labels=labels,
                    next_sentence_label=next_sentence_label)

    return build


@pytest.fixture
def to_torch(hf):
    """``to_torch(batch)``: the same dict with every numpy array as a torch tensor."""

    def convert(batch: dict) -> dict:
        return {name: hf.torch.from_numpy(np.ascontiguousarray(value))
                for name, value in batch.items()}

    return convert


@pytest.fixture
def assert_matches():
    """``assert_matches(name, ours, theirs, rtol)``: same shape, relative difference below rtol.

    A norm-wise error (not an elementwise one) because a few entries that are nearly 0
    carry only rounding noise in both models.
    """

    def check(name: str, ours, theirs, rtol: float) -> None:
        ours = np.asarray(ours)
        theirs = np.asarray(theirs)
        assert ours.shape == theirs.shape, f"{name}: shape {ours.shape} vs {theirs.shape}"
        error = relative_difference(ours, theirs)
        max_abs = float(np.max(np.abs(ours.astype(np.float64) - theirs), initial=0.0))
        assert error < rtol, (f"{name}: relative difference {error:.3e} >= {rtol:g} "
                              f"(max abs diff {max_abs:.3e})")

    return check


@pytest.fixture
def assert_gradients_match(assert_matches):
    """``assert_gradients_match(model, twin, rtol, exactly_zero=())`` after both backward passes.

    Every minibert gradient must equal torch's, name by name. The names in
    ``exactly_zero`` are parameters whose true gradient is exactly 0 (a constant added to
    every score of a softmax changes nothing), so both libraries return only rounding
    noise there: for them, both gradients must be tiny next to their partner's
    (``zero_gradient_partner``).
    """

    def check(model, twin, rtol: float, exactly_zero=()) -> None:
        ours = dict(model.named_gradients())
        theirs = {name: p.grad.detach().numpy() for name, p in twin.named_parameters()}
        assert set(ours) == set(theirs)
        for name, grad in ours.items():
            if name in exactly_zero:
                scale = np.linalg.norm(theirs[zero_gradient_partner(name)])
                assert np.linalg.norm(grad) < rtol * scale, name
                assert np.linalg.norm(theirs[name]) < rtol * scale, name
                continue
            assert_matches(f"grad {name}", grad, theirs[name], rtol)

    return check


@pytest.fixture
def assert_twin_matches(assert_matches, assert_gradients_match):
    """``assert_twin_matches(model, twin, ours, theirs, outputs=("logits",), rtol=1e-9)``:
    runs both models forward on their inputs (``ours``: numpy, ``theirs``: torch) and
    backward from their losses; the named outputs, the loss, the last hidden state, the first
    attention map and every gradient are equal (``exactly_zero_gradients`` for the
    parameters whose true gradient is 0)."""

    def check(model, twin, ours: dict, theirs: dict, outputs=("logits",), rtol=1e-9) -> None:
        out = model(**ours, output_hidden_states=True, output_attentions=True)
        twin.zero_grad()
        ref = twin(**theirs, output_hidden_states=True, output_attentions=True)
        for name in outputs:
            assert_matches(name, getattr(out, name), getattr(ref, name).detach().numpy(), rtol)
        assert_matches("loss", out.loss, ref.loss.item(), rtol)
        assert len(out.hidden_states) == len(ref.hidden_states)
        assert_matches("hidden_states[-1]", out.hidden_states[-1],
                       ref.hidden_states[-1].detach().numpy(), rtol)
        assert_matches("attentions[0]", out.attentions[0], ref.attentions[0].detach().numpy(),
                       rtol)
        model.zero_grad()
        model.backward()
        ref.loss.backward()
        assert_gradients_match(model, twin, rtol, exactly_zero_gradients(model))

    return check
