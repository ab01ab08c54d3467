"""minibert's BERT against HuggingFace transformers + torch autograd, tensor by tensor.

Each test builds a small minibert model with perturbed weights, copies them into the
HF model of the same class (see ``conftest.py``), runs both on the same padded batch in
eval mode and compares every output; then it backpropagates the same scalar in both
(torch autograd vs minibert's hand-written backward) and compares every parameter's
gradient by name. In float64 the two agree to about 1e-15, so the 1e-9 bound leaves
room only for rounding, not for a wrong term. A dropout-on comparison is impossible
here: the two libraries draw different random masks.

Dimension legend: B batch, T sequence length, H hidden size, N heads, V vocabulary size.
"""

from __future__ import annotations

import numpy as np
import pytest
from small_models import key_biases

import minibert as mb

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.parity

FLOAT64_RTOL = 1e-9
# float32 keeps ~7 digits; through two blocks with LayerNorm both libraries lose one or
# two of them to rounding, in different places.
FLOAT32_RTOL = 1e-5

ACTIVATIONS = ["gelu", "gelu_new", "relu"]
PAD_ROW_KEY = "embeddings.word_embeddings.weight"


def compare_pretraining(model, twin, batch, to_torch, assert_matches, assert_gradients_match,
                        rtol) -> None:
    """Forward outputs and gradients of BertForPreTraining on ``batch``."""
    out = model(**batch, output_attentions=True, output_hidden_states=True)
    twin.zero_grad()
    ref = twin(**to_torch(batch), output_attentions=True, output_hidden_states=True)
    config = model.config
    assert len(out.attentions) == len(ref.attentions) == config.num_hidden_layers
    assert len(out.hidden_states) == len(ref.hidden_states) == config.num_hidden_layers + 1

    assert_matches("prediction_logits", out.prediction_logits,
                   ref.prediction_logits.detach().numpy(), rtol)
    assert_matches("seq_relationship_logits", out.seq_relationship_logits,
                   ref.seq_relationship_logits.detach().numpy(), rtol)
    assert_matches("loss", out.loss, ref.loss.item(), rtol)
    for layer, (ours, theirs) in enumerate(zip(out.attentions, ref.attentions, strict=True)):
        assert_matches(f"attentions[{layer}]", ours, theirs.detach().numpy(), rtol)
    for layer, (ours, theirs) in enumerate(zip(out.hidden_states, ref.hidden_states, strict=True)):
        assert_matches(f"hidden_states[{layer}]", ours, theirs.detach().numpy(), rtol)

    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin, rtol, key_biases(model))


def test_state_dict_keys_equal_hf_for_every_model(make_model, hf_twin):
    # hf_twin asserts the key sets are equal before it copies anything.
    for cls in (mb.BertForPreTraining, mb.BertModel, mb.BertForMaskedLM,
                mb.BertForNextSentencePrediction):
        model = make_model(cls)
        twin = hf_twin(model)
        hf_names = [name for name, _ in twin.named_parameters()]
        assert [name for name, _ in model.named_parameters()] == hf_names, cls.__name__


@pytest.mark.parametrize("hidden_act", ACTIVATIONS)
def test_pretraining_matches_hf_float64(hidden_act, make_model, hf_twin, padded_batch,
                                        to_torch, assert_matches, assert_gradients_match):
    model = make_model(mb.BertForPreTraining, hidden_act=hidden_act)
    twin = hf_twin(model)
    batch = padded_batch(model.config)
    compare_pretraining(model, twin, batch, to_torch, assert_matches, assert_gradients_match,
                        FLOAT64_RTOL)


def test_pretraining_matches_hf_float32(make_model, hf_twin, padded_batch, to_torch,
                                        assert_matches, assert_gradients_match):
    model = make_model(mb.BertForPreTraining, dtype=np.float32)
    twin = hf_twin(model)
    assert model.dtype == np.float32
    batch = padded_batch(model.config, seed=1)
    compare_pretraining(model, twin, batch, to_torch, assert_matches, assert_gradients_match,
                        FLOAT32_RTOL)


def test_attention_to_padding_is_exactly_zero_in_both(make_model, hf_twin, padded_batch,
                                                      to_torch):
    model = make_model(mb.BertForPreTraining)
    twin = hf_twin(model)
    batch = padded_batch(model.config)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out = model(**inputs, output_attentions=True)
    ref = twin(**to_torch(inputs), output_attentions=True)
    padding_keys = batch["attention_mask"][:, None, None, :] == 0  # (B, 1, 1, T)
    for ours, theirs in zip(out.attentions, ref.attentions, strict=True):
        theirs = theirs.detach().numpy()
        assert np.all(np.where(padding_keys, ours, 0.0) == 0.0)
        assert np.all(np.where(padding_keys, theirs, 0.0) == 0.0)


@pytest.mark.parametrize("padded", [True, False], ids=["padded", "unpadded"])
def test_bert_model_matches_hf(padded, make_model, hf_twin, padded_batch, to_torch,
                               assert_matches, assert_gradients_match, hf):
    model = make_model(mb.BertModel, hidden_act="gelu")
    twin = hf_twin(model)
    batch = padded_batch(model.config, lengths=(9, 6, 4) if padded else (7, 7, 7), seed=2)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out = model(**inputs, output_attentions=True, output_hidden_states=True)
    ref = twin(**to_torch(inputs), output_attentions=True, output_hidden_states=True)
    assert_matches("last_hidden_state", out.last_hidden_state,
                   ref.last_hidden_state.detach().numpy(), FLOAT64_RTOL)
    assert_matches("pooler_output", out.pooler_output, ref.pooler_output.detach().numpy(),
                   FLOAT64_RTOL)
    for layer, (ours, theirs) in enumerate(zip(out.attentions, ref.attentions, strict=True)):
        assert_matches(f"attentions[{layer}]", ours, theirs.detach().numpy(), FLOAT64_RTOL)
    for layer, (ours, theirs) in enumerate(zip(out.hidden_states, ref.hidden_states, strict=True)):
        assert_matches(f"hidden_states[{layer}]", ours, theirs.detach().numpy(), FLOAT64_RTOL)

    rng = np.random.default_rng(3)
    d_last = rng.standard_normal(out.last_hidden_state.shape)  # (B, T, H)
    d_pooled = rng.standard_normal(out.pooler_output.shape)  # (B, H)
    model.zero_grad()
    model.backward(d_last, d_pooled)
    torch = hf.torch
    surrogate = ((ref.last_hidden_state * torch.from_numpy(d_last)).sum()
                 + (ref.pooler_output * torch.from_numpy(d_pooled)).sum())
    surrogate.backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))

    # nn.Embedding(padding_idx=pad_token_id): the [PAD] row gets no gradient from the
    # lookup even where [PAD] is looked up; every other used row does.
    pad = model.config.pad_token_id
    word_grad = dict(model.named_gradients())[PAD_ROW_KEY]
    assert np.all(twin.embeddings.word_embeddings.weight.grad[pad].numpy() == 0.0)
    assert np.all(word_grad[pad] == 0.0)
    if padded:
        assert (batch["input_ids"] == pad).any()
    used = np.unique(batch["input_ids"][batch["input_ids"] != pad])
    assert np.all(np.linalg.norm(word_grad[used], axis=1) > 0)


def test_pad_row_gradient_is_decoder_use_only(make_model, hf_twin, padded_batch, to_torch):
    model = make_model(mb.BertForPreTraining)
    twin = hf_twin(model)
    batch = padded_batch(model.config)
    model(**batch)
    model.zero_grad()
    model.backward()
    twin(**to_torch(batch)).loss.backward()
    pad = model.config.pad_token_id
    ours = dict(model.named_gradients())["bert." + PAD_ROW_KEY][pad]
    theirs = twin.bert.embeddings.word_embeddings.weight.grad[pad].numpy()
    # The [PAD] row is still a decoder row (the logit of predicting [PAD]), so it has a
    # gradient, and only that one: minibert's equals torch's, lookup excluded in both.
    assert np.linalg.norm(theirs) > 0
    assert np.linalg.norm(ours - theirs) < FLOAT64_RTOL * np.linalg.norm(theirs)


def test_masked_lm_matches_hf(make_model, hf_twin, padded_batch, to_torch, assert_matches,
                              assert_gradients_match):
    model = make_model(mb.BertForMaskedLM, hidden_act="gelu_new")
    twin = hf_twin(model)
    batch = padded_batch(model.config, seed=4)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask", "labels")}
    out = model(**inputs, output_attentions=True)
    ref = twin(**to_torch(inputs), output_attentions=True)
    assert_matches("logits", out.logits, ref.logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
    for layer, (ours, theirs) in enumerate(zip(out.attentions, ref.attentions, strict=True)):
        assert_matches(f"attentions[{layer}]", ours, theirs.detach().numpy(), FLOAT64_RTOL)
    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))


def test_next_sentence_prediction_matches_hf(make_model, hf_twin, padded_batch, to_torch,
                                             assert_matches, assert_gradients_match):
    model = make_model(mb.BertForNextSentencePrediction, hidden_act="relu")
    twin = hf_twin(model)
    batch = padded_batch(model.config, seed=5)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    inputs["labels"] = batch["next_sentence_label"]
    out = model(**inputs)
    ref = twin(**to_torch(inputs))
    assert_matches("logits", out.logits, ref.logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))


def test_weights_copied_from_hf_give_hf_outputs(make_model, hf_twin, load_from_hf, padded_batch,
                                                to_torch, assert_matches, hf):
    # The other direction: HF's own (perturbed) weights, loaded into a fresh minibert
    # model through HF's state_dict, alias keys included.
    twin = hf_twin(make_model(mb.BertForPreTraining, seed=6))
    generator = hf.torch.Generator().manual_seed(7)
    with hf.torch.no_grad():
        for param in twin.parameters():
            param.add_(0.05 * hf.torch.randn(param.shape, generator=generator,
                                             dtype=param.dtype))
    model = load_from_hf(make_model(mb.BertForPreTraining, seed=8), twin)
    batch = padded_batch(model.config, seed=9)
    out = model(**batch)
    ref = twin(**to_torch(batch))
    assert_matches("prediction_logits", out.prediction_logits,
                   ref.prediction_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
