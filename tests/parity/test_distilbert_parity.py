"""minibert's DistilBERT against HuggingFace transformers + torch autograd, tensor by tensor.

As tests/parity/test_model_parity.py does for BERT: a small DistilBERT of distinct sizes
with perturbed weights, the HF model of the same class holding the same weights, both in
eval mode on one padded batch; every output, then every parameter's gradient, compared by
name in float64. Also: HF's state dict loads with strict=True, a save_pretrained folder
opens in transformers and back, the parameter counts are HF's, and the two distillation
losses equal torch's ``kl_div`` (batchmean, times T^2) and ``cosine_embedding_loss``.

Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size.
"""

from __future__ import annotations

import numpy as np
import pytest
from small_models import HF_BUFFERS, hf_config, relative_difference, twin_of

from minibert.checks import IGNORE_INDEX
from minibert.family import distillation as D
from minibert.family.distilbert import DistilBertConfig, DistilBertForMaskedLM, DistilBertModel

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.parity

FLOAT64_RTOL = 1e-9
# V=97, T<=11, H=24, N=3 heads of D=8, I=40: every axis distinct.
CONFIG = dict(vocab_size=97, max_position_embeddings=32, n_layers=2, n_heads=3, dim=24,
              hidden_dim=40, dropout=0.0, attention_dropout=0.0)
KEY_BIAS = "attention.k_lin.bias"


def make_distilbert(cls, seed=0, scale=0.1, **overrides):
    model = cls(DistilBertConfig(**{**CONFIG, **overrides}), seed=seed, dtype=np.float64)
    rng = np.random.default_rng(seed + 1)
    for _, value in model.named_parameters():
        value += scale * rng.standard_normal(value.shape)
    return model.eval()


def padded_batch(config, lengths=(11, 8, 5), seed=0):
    rng = np.random.default_rng(seed)
    batch, seq = len(lengths), max(lengths)
    input_ids = np.full((batch, seq), config.pad_token_id, dtype=np.int64)
    attention_mask = np.zeros((batch, seq), dtype=np.int64)
    labels = np.full((batch, seq), IGNORE_INDEX, dtype=np.int64)
    for row, length in enumerate(lengths):
        input_ids[row, :length] = rng.integers(1, config.vocab_size, length)
        attention_mask[row, :length] = 1
        targets = rng.random(length) < 1 / 3
        targets[rng.integers(length)] = True
        labels[row, :length][targets] = rng.integers(0, config.vocab_size, targets.sum())
    return input_ids, attention_mask, labels


def assert_close(name, ours, theirs, rtol=FLOAT64_RTOL):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert np.shape(ours) == np.shape(theirs), f"{name}: {np.shape(ours)} vs {np.shape(theirs)}"
    error = relative_difference(ours, theirs)
    assert error < rtol, f"{name}: relative difference {error}"


def assert_gradients_match(model, twin):
    ours = dict(model.named_gradients())
    theirs = {name: p.grad.detach().numpy() for name, p in twin.named_parameters()}
    assert set(ours) == set(theirs)
    for name, grad in ours.items():
        if name.endswith(KEY_BIAS):
            # softmax ignores a constant added to a row of scores: the true gradient is 0
            partner = np.linalg.norm(ours[name.replace("k_lin", "q_lin")])
            assert np.linalg.norm(grad) < FLOAT64_RTOL * partner, name
            assert np.linalg.norm(theirs[name]) < FLOAT64_RTOL * partner, name
            continue
        assert_close(f"grad {name}", grad, theirs[name])


def test_parameter_counts_equal_hf(hf):
    config = DistilBertConfig()
    twin = hf.transformers.DistilBertModel(hf_config(hf, config))
    counted = sum(p.numel() for p in twin.parameters())
    assert counted == config.num_parameters_estimate() == 66_362_880
    small = DistilBertConfig(**CONFIG)
    for cls in (DistilBertModel, DistilBertForMaskedLM):
        theirs = getattr(hf.transformers, cls.__name__)(hf_config(hf, small))
        assert cls(small).num_parameters() == sum(p.numel() for p in theirs.parameters())


@pytest.mark.parametrize("cls", [DistilBertModel, DistilBertForMaskedLM])
def test_parameter_names_and_order_equal_hf(hf, cls):
    model = make_distilbert(cls)
    twin = twin_of(hf, model)
    assert [name for name, _ in model.named_parameters()] == [
        name for name, _ in twin.named_parameters()]


@pytest.mark.parametrize("activation", ["gelu", "gelu_new", "relu"])
def test_masked_lm_matches_hf_float64(hf, activation):
    torch = hf.torch
    model = make_distilbert(DistilBertForMaskedLM, activation=activation)
    twin = twin_of(hf, model)
    input_ids, attention_mask, labels = padded_batch(model.config)
    out = model(input_ids, attention_mask, labels=labels, output_attentions=True,
                output_hidden_states=True)
    twin.zero_grad()
    ref = twin(input_ids=torch.from_numpy(input_ids),
               attention_mask=torch.from_numpy(attention_mask),
               labels=torch.from_numpy(labels), output_attentions=True,
               output_hidden_states=True)
    assert len(out.hidden_states) == len(ref.hidden_states) == model.config.n_layers + 1
    assert len(out.attentions) == len(ref.attentions) == model.config.n_layers
    assert_close("logits", out.logits, ref.logits)
    assert_close("loss", out.loss, ref.loss.item())
    for layer, (ours, theirs) in enumerate(zip(out.hidden_states, ref.hidden_states,
                                               strict=True)):
        assert_close(f"hidden_states[{layer}]", ours, theirs)
    for layer, (ours, theirs) in enumerate(zip(out.attentions, ref.attentions, strict=True)):
        assert_close(f"attentions[{layer}]", ours, theirs)
    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin)


def test_base_model_matches_hf_with_a_random_upstream_gradient(hf):
    torch = hf.torch
    model = make_distilbert(DistilBertModel, seed=2)
    twin = twin_of(hf, model)
    input_ids, attention_mask, _ = padded_batch(model.config, lengths=(9, 6, 4), seed=2)
    out = model(input_ids, attention_mask, output_attentions=True, output_hidden_states=True)
    ref = twin(input_ids=torch.from_numpy(input_ids),
               attention_mask=torch.from_numpy(attention_mask), output_attentions=True,
               output_hidden_states=True)
    assert_close("last_hidden_state", out.last_hidden_state, ref.last_hidden_state)
    for ours, theirs in zip(out.attentions, ref.attentions, strict=True):
        assert_close("attentions", ours, theirs)
        padding_keys = attention_mask[:, None, None, :] == 0
        assert np.all(np.where(padding_keys, ours, 0.0) == 0.0)
    d_last = np.random.default_rng(3).standard_normal(out.last_hidden_state.shape)
    model.zero_grad()
    model.backward(d_last)
    (ref.last_hidden_state * torch.from_numpy(d_last)).sum().backward()
    assert_gradients_match(model, twin)
    # nn.Embedding(padding_idx): the [PAD] row gets no gradient from the lookup, in both
    pad = model.config.pad_token_id
    assert np.all(dict(model.named_gradients())["embeddings.word_embeddings.weight"][pad] == 0)
    assert np.all(twin.embeddings.word_embeddings.weight.grad[pad].numpy() == 0)


def test_hf_state_dict_loads_strictly(hf):
    torch = hf.torch
    config = DistilBertConfig(**CONFIG)
    with torch.random.fork_rng():
        torch.manual_seed(4)
        twin = hf.transformers.DistilBertForMaskedLM(hf_config(hf, config)).to(torch.float64)
    state = {name: value.detach().numpy() for name, value in twin.state_dict().items()
             if not name.endswith(HF_BUFFERS)}
    assert "vocab_projector.weight" in state  # the tied alias, listed as HF lists it
    model = DistilBertForMaskedLM(config, dtype=np.float64)
    assert model.load_state_dict(state, strict=True) == ([], [])
    input_ids, attention_mask, _ = padded_batch(config, seed=4)
    ref = twin.eval()(input_ids=torch.from_numpy(input_ids),
                      attention_mask=torch.from_numpy(attention_mask))
    assert_close("logits", model.eval()(input_ids, attention_mask).logits, ref.logits)


def test_save_pretrained_round_trips_through_transformers(hf, tmp_path):
    torch = hf.torch
    model = make_distilbert(DistilBertForMaskedLM, seed=5)
    model.save_pretrained(tmp_path / "ours")
    twin = hf.transformers.DistilBertForMaskedLM.from_pretrained(
        tmp_path / "ours", torch_dtype=torch.float64, attn_implementation="eager").eval()
    input_ids, attention_mask, _ = padded_batch(model.config, seed=5)
    ref = twin(input_ids=torch.from_numpy(input_ids),
               attention_mask=torch.from_numpy(attention_mask))
    assert_close("logits", model(input_ids, attention_mask).logits, ref.logits)
    twin.save_pretrained(tmp_path / "theirs")
    again = DistilBertForMaskedLM.from_pretrained(tmp_path / "theirs", dtype=np.float64)
    assert again.loading_info["missing_keys"] == again.loading_info["unexpected_keys"] == []
    assert_close("logits", again(input_ids, attention_mask).logits, ref.logits)


def test_sinusoidal_initialization_equals_hf(hf):
    config = DistilBertConfig(**{**CONFIG, "sinusoidal_pos_embds": True})
    twin = hf.transformers.DistilBertModel(hf_config(hf, config))
    theirs = twin.embeddings.position_embeddings.weight.detach().numpy()  # float32
    ours = DistilBertModel(config, dtype=np.float64).embeddings.position_embeddings.params[
        "weight"]
    np.testing.assert_allclose(ours, theirs, rtol=0, atol=1e-7)


def test_distillation_losses_equal_torch(hf):
    torch = hf.torch
    rng = np.random.default_rng(6)
    student = 3.0 * rng.standard_normal((3, 6, 11))  # (B, T, V)
    teacher = 3.0 * rng.standard_normal((3, 6, 11))
    mask = rng.random((3, 6)) < 0.6
    for temperature in (0.5, 1.0, 2.0, 4.0):
        loss, cache = D.soft_target_kl_forward(student, teacher, mask, temperature)
        s = torch.tensor(student[mask], requires_grad=True)
        ref = torch.nn.functional.kl_div(
            torch.log_softmax(s / temperature, dim=-1),
            torch.softmax(torch.from_numpy(teacher[mask]) / temperature, dim=-1),
            reduction="batchmean") * temperature**2
        ref.backward()
        assert_close(f"kl loss T={temperature}", loss, ref.item())
        d_student, _ = D.soft_target_kl_backward(1.0, cache)
        assert_close(f"kl grad T={temperature}", d_student[mask], s.grad)
    hidden_s = rng.standard_normal((3, 6, 24))
    hidden_t = rng.standard_normal((3, 6, 24))
    loss, cache = D.cosine_embedding_forward(hidden_s, hidden_t, mask)
    s = torch.tensor(hidden_s[mask], requires_grad=True)
    target = torch.ones(int(mask.sum()), dtype=torch.float64)
    ref = torch.nn.functional.cosine_embedding_loss(s, torch.from_numpy(hidden_t[mask]), target)
    ref.backward()
    assert_close("cosine loss", loss, ref.item())
    d_student, _ = D.cosine_embedding_backward(1.0, cache)
    assert_close("cosine grad", d_student[mask], s.grad)
    assert np.all(d_student[~mask] == 0.0)
