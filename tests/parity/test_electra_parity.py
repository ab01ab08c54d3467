"""ELECTRA against transformers in float64: outputs, losses and every gradient of the
discriminator and the generator, and folders that each library opens from the other."""

from __future__ import annotations

import numpy as np
import pytest

import minibert as mb

# V=97, E=16 < H=24 (embeddings_project), N=3 heads of D=8, I=40.
CONFIG = dict(vocab_size=97, embedding_size=16, hidden_size=24, num_hidden_layers=2,
              num_attention_heads=3, intermediate_size=40, max_position_embeddings=32)


def _pair(hf, cls):
    torch = hf.torch
    model = cls(mb.ElectraConfig(**CONFIG), seed=0, dtype=np.float64)
    rng = np.random.default_rng(1)
    for _, value in model.named_parameters():  # away from 0 and 1
        value += 0.1 * rng.standard_normal(value.shape)
    model.eval()
    fields = {k: v for k, v in model.config.to_dict().items() if k != "model_type"}
    with torch.random.fork_rng():
        torch.manual_seed(0)
        twin = getattr(hf.transformers, cls.__name__)(
            hf.transformers.ElectraConfig(**fields, attn_implementation="eager")).double()
    ours = model.state_dict()
    theirs = twin.state_dict()
    assert set(ours) == set(theirs) - {"electra.embeddings.position_ids",
                                       "electra.embeddings.token_type_ids"}
    with torch.no_grad():
        for name, value in theirs.items():
            if name in ours:
                value.copy_(torch.from_numpy(ours[name]))
    return model, twin.eval()


def _batch(padded_batch):
    """A padded batch (B=3, T=11) with MLM labels at about a third of the real tokens."""
    return padded_batch(mb.BertConfig(vocab_size=97, hidden_size=24, num_attention_heads=3,
                                      max_position_embeddings=32))


@pytest.mark.parametrize("cls", [mb.ElectraForPreTraining, mb.ElectraForMaskedLM])
def test_electra_matches_transformers(cls, hf, padded_batch, to_torch, assert_matches):
    torch = hf.torch
    model, twin = _pair(hf, cls)
    batch = _batch(padded_batch)
    if cls is mb.ElectraForPreTraining:
        rng = np.random.default_rng(2)
        labels = rng.integers(0, 2, size=batch["input_ids"].shape)
    else:
        labels = batch["labels"]
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out = model(**inputs, labels=labels)
    model.zero_grad()
    model.backward()
    theirs = twin(**to_torch(inputs), labels=torch.from_numpy(labels))
    theirs.loss.backward()
    assert_matches("logits", out.logits, theirs.logits.detach().numpy(), 1e-12)
    reference = theirs.loss.item()
    if cls is mb.ElectraForPreTraining:
        # HF casts the labels with .float(), so its loss comes out in float32: the same
        # formula over the real tokens in float64 is the reference to 1e-12.
        real = torch.from_numpy(inputs["attention_mask"] == 1)
        reference = torch.nn.functional.binary_cross_entropy_with_logits(
            theirs.logits[real], torch.from_numpy(labels)[real].double()).item()
        assert abs(out.loss - theirs.loss.item()) <= 1e-6 * reference
    assert abs(out.loss - reference) <= 1e-12 * reference
    grads = dict(model.named_gradients())
    for name, parameter in twin.named_parameters():
        if name.endswith("key.bias"):  # exactly zero in truth: rounding noise in both
            scale = np.linalg.norm(grads[name.replace("key.bias", "query.bias")])
            assert np.linalg.norm(grads[name]) < 1e-10 * scale
            continue
        assert_matches(f"grad {name}", grads[name], parameter.grad.numpy(), 1e-10)
    assert len(grads) == len(list(twin.named_parameters()))


@pytest.mark.parametrize("cls", [mb.ElectraForPreTraining, mb.ElectraForMaskedLM])
def test_folders_open_both_ways(cls, hf, tmp_path, padded_batch, to_torch, assert_matches):
    model, _ = _pair(hf, cls)
    model.save_pretrained(tmp_path / "ours")
    twin = getattr(hf.transformers, cls.__name__).from_pretrained(
        tmp_path / "ours", torch_dtype=hf.torch.float64).eval()
    inputs = {k: v for k, v in _batch(padded_batch).items()
              if k in ("input_ids", "token_type_ids", "attention_mask")}
    with hf.torch.no_grad():
        reference = twin(**to_torch(inputs)).logits.numpy()
    assert_matches("logits", model(**inputs).logits, reference, 1e-12)
    twin.save_pretrained(tmp_path / "theirs")
    reloaded = cls.from_pretrained(tmp_path / "theirs", dtype=np.float64)
    assert_matches("reloaded logits", reloaded(**inputs).logits, reference, 1e-12)


def test_sequence_classifier_matches_transformers(hf, padded_batch, to_torch, assert_matches):
    torch = hf.torch
    model = mb.ElectraForSequenceClassification(mb.ElectraConfig(**CONFIG), seed=0,
                                                dtype=np.float64, num_labels=3)
    rng = np.random.default_rng(3)
    for _, value in model.named_parameters():
        value += 0.1 * rng.standard_normal(value.shape)
    model.eval()
    fields = {k: v for k, v in model.config.to_dict().items() if k != "model_type"}
    with torch.random.fork_rng():
        torch.manual_seed(0)
        twin = hf.transformers.ElectraForSequenceClassification(
            hf.transformers.ElectraConfig(**fields, attn_implementation="eager")).double()
    ours = model.state_dict()
    assert set(ours) == set(twin.state_dict()) - {"electra.embeddings.position_ids",
                                                  "electra.embeddings.token_type_ids"}
    with torch.no_grad():
        for name, value in twin.state_dict().items():
            if name in ours:
                value.copy_(torch.from_numpy(ours[name]))
    twin.eval()
    inputs = {k: v for k, v in _batch(padded_batch).items()
              if k in ("input_ids", "token_type_ids", "attention_mask")}
    labels = np.array([0, 2, 1])
    out = model(**inputs, labels=labels)
    model.zero_grad()
    model.backward()
    theirs = twin(**to_torch(inputs), labels=torch.from_numpy(labels))
    theirs.loss.backward()
    assert_matches("logits", out.logits, theirs.logits.detach().numpy(), 1e-12)
    assert abs(out.loss - theirs.loss.item()) <= 1e-12 * theirs.loss.item()
    grads = dict(model.named_gradients())
    for name, parameter in twin.named_parameters():
        if name.endswith("key.bias"):
            continue  # exactly zero in truth
        assert_matches(f"grad {name}", grads[name], parameter.grad.numpy(), 1e-10)
