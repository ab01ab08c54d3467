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
from small_models import perturbed, relative_difference

import minibert as mb
from minibert.checks import IGNORE_INDEX

PARITY_DIR = Path(__file__).resolve().parent

# Small enough to run in well under a second, large enough that every axis is distinct:
# V=97, T<=32, H=24, N=3 heads of D=8, I=40.
PARITY_CONFIG = dict(vocab_size=97, hidden_size=24, num_hidden_layers=2, num_attention_heads=3,
                     intermediate_size=40, max_position_embeddings=32)

# HF keeps ``position_ids`` as a buffer; it is not a parameter and recent versions do not
# save it, but older ones listed it in state_dict().
HF_BUFFER_KEYS = {"bert.embeddings.position_ids", "embeddings.position_ids"}


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


def _hf_config(hf, config: mb.BertConfig):
    fields = {k: v for k, v in config.to_dict().items() if k != "model_type"}
    return hf.transformers.BertConfig(**fields, attn_implementation="eager")


def _hf_class(hf, model):
    name = type(model).__name__
    cls = getattr(hf.transformers, name, None)
    if cls is None:
        raise ValueError(f"model must be a minibert BERT class that transformers also has, "
                         f"got {name}")
    return cls


def _assert_same_keys(ours: dict, theirs: dict) -> None:
    theirs = set(theirs) - HF_BUFFER_KEYS
    assert set(ours) == theirs, (f"only in minibert: {sorted(set(ours) - theirs)}; "
                                 f"only in transformers: {sorted(theirs - set(ours))}")


@pytest.fixture
def hf_twin(hf):
    """Factory: the HF model of the same class and config, holding minibert's weights.

    ``hf_twin(model)`` asserts that both state dicts have the same keys (HF's
    ``position_ids`` buffer aside; the tied alias keys are in both) and copies every
    array with ``torch.from_numpy``. The twin has minibert's dtype and is in eval mode.
    """
    torch = hf.torch

    def build(model):
        kwargs = {}
        if isinstance(model, mb.BertModel):
            kwargs["add_pooling_layer"] = model.pooler is not None
        with torch.random.fork_rng():
            torch.manual_seed(0)  # HF draws its own (overwritten) initial weights
            twin = _hf_class(hf, model)(_hf_config(hf, model.config), **kwargs)
        twin = twin.to(torch.float64 if model.dtype == np.float64 else torch.float32)
        ours = model.state_dict()
        _assert_same_keys(ours, twin.state_dict())
        with torch.no_grad():
            for name, value in twin.state_dict().items():
                if name in ours:
                    value.copy_(torch.from_numpy(ours[name]))
        return twin.eval()

    return build


@pytest.fixture
def load_from_hf():
    """Factory: ``load_from_hf(model, twin)`` copies the HF twin's weights into minibert."""

    def load(model, twin):
        state = {name: value.detach().cpu().numpy()
                 for name, value in twin.state_dict().items() if name not in HF_BUFFER_KEYS}
        _assert_same_keys(model.state_dict(), state)
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


def zero_gradient_partner(name: str) -> str:
    """The parameter whose gradient sets the scale for an exactly-zero gradient ``name``.

    A key bias is measured against the query bias of the same attention; any other bias
    (the QA output bias, a LayerNorm bias) against the weight it is added to.
    """
    if name.endswith(".key.bias"):
        return name[: -len(".key.bias")] + ".query.bias"
    if name.endswith(".bias"):
        return name[: -len("bias")] + "weight"
    raise ValueError(f"name must end in '.bias', got {name!r}")


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
