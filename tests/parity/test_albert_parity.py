"""minibert's ALBERT against HuggingFace transformers + torch autograd, tensor by tensor.

As test_model_parity.py does for BERT: a small minibert ALBERT with perturbed weights
(LayerNorm included), its weights copied key for key into HF's model of the same class,
both run in float64 eval mode on a padded batch; every output, then every parameter's
gradient (torch autograd vs the hand-written backward, shared layers included) must
agree to 1e-9. Then state dicts both ways with strict=True, checkpoints both ways, and
parameter counts equal to HF's ``num_parameters()``.

Dimension legend: B batch, T sequence length, E embedding size, H hidden size, V vocabulary.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from small_models import hf_config, key_biases

from minibert.family.albert import (
    AlbertConfig,
    AlbertForMaskedLM,
    AlbertForPreTraining,
    AlbertModel,
)

pytest.importorskip("torch")
pytest.importorskip("transformers")

pytestmark = pytest.mark.parity

FLOAT64_RTOL = 1e-9

# Distinct sizes on every axis: V=97, E=10, H=24, N=3 heads of D=8, I=40.
SMALL = dict(vocab_size=97, embedding_size=10, hidden_size=24, num_attention_heads=3,
             intermediate_size=40, max_position_embeddings=32)
# Three layers running one shared block; four layers in two groups of two blocks each.
SHARING = {
    "one-group": dict(num_hidden_layers=3, num_hidden_groups=1, inner_group_num=1),
    "groups-and-inner": dict(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2),
}


def make_albert(cls=AlbertForPreTraining, seed=0, scale=0.1, sharing="one-group", **overrides):
    """A float64 minibert ALBERT with every parameter moved off its initial value."""
    config = AlbertConfig(**{**SMALL, **SHARING[sharing], **overrides})
    model = cls(config, seed=seed, dtype=np.float64)
    rng = np.random.default_rng(seed + 1)
    for _, value in model.named_parameters():
        value += scale * rng.standard_normal(value.shape)
    return model.eval()


def albert_batch(padded_batch, config, **kwargs):
    """conftest's padded batch, its pair label under ALBERT's name."""
    batch = padded_batch(config, **kwargs)
    batch["sentence_order_label"] = batch.pop("next_sentence_label")
    return batch


def compare_sequence_outputs(out, ref, assert_matches, config):
    blocks = config.num_hidden_layers * config.inner_group_num
    assert len(out.attentions) == len(ref.attentions) == blocks
    assert len(out.hidden_states) == len(ref.hidden_states) == blocks + 1
    for index, (ours, theirs) in enumerate(zip(out.attentions, ref.attentions, strict=True)):
        assert_matches(f"attentions[{index}]", ours, theirs.detach().numpy(), FLOAT64_RTOL)
    for index, (ours, theirs) in enumerate(zip(out.hidden_states, ref.hidden_states,
                                               strict=True)):
        assert_matches(f"hidden_states[{index}]", ours, theirs.detach().numpy(), FLOAT64_RTOL)


@pytest.mark.parametrize("sharing", list(SHARING))
def test_parameter_names_and_order_equal_hf(sharing, hf_twin):
    for cls in (AlbertForPreTraining, AlbertModel, AlbertForMaskedLM):
        model = make_albert(cls, sharing=sharing)
        twin = hf_twin(model)  # asserts the state-dict keys (aliases included) are equal
        assert [n for n, _ in model.named_parameters()] == [n for n, _ in
                                                            twin.named_parameters()]


@pytest.mark.parametrize("sharing, hidden_act", [("one-group", "gelu_new"),
                                                 ("groups-and-inner", "gelu"),
                                                 ("one-group", "relu")])
def test_pretraining_matches_hf_float64(sharing, hidden_act, hf_twin, padded_batch,
                                        to_torch, assert_matches, assert_gradients_match):
    model = make_albert(AlbertForPreTraining, sharing=sharing, hidden_act=hidden_act)
    twin = hf_twin(model)
    batch = albert_batch(padded_batch, model.config)
    assert (batch["attention_mask"] == 0).any()
    out = model(**batch, output_attentions=True, output_hidden_states=True)
    twin.zero_grad()
    ref = twin(**to_torch(batch), output_attentions=True, output_hidden_states=True)
    assert_matches("prediction_logits", out.prediction_logits,
                   ref.prediction_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("sop_logits", out.sop_logits, ref.sop_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
    compare_sequence_outputs(out, ref, assert_matches, model.config)

    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))


@pytest.mark.parametrize("sharing", list(SHARING))
def test_albert_model_matches_hf(sharing, hf_twin, padded_batch, to_torch, assert_matches,
                                 assert_gradients_match, hf):
    model = make_albert(AlbertModel, sharing=sharing, seed=2)
    twin = hf_twin(model)
    batch = padded_batch(model.config, lengths=(9, 6, 4), seed=2)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out = model(**inputs, output_attentions=True, output_hidden_states=True)
    ref = twin(**to_torch(inputs), output_attentions=True, output_hidden_states=True)
    assert_matches("last_hidden_state", out.last_hidden_state,
                   ref.last_hidden_state.detach().numpy(), FLOAT64_RTOL)
    assert_matches("pooler_output", out.pooler_output, ref.pooler_output.detach().numpy(),
                   FLOAT64_RTOL)
    compare_sequence_outputs(out, ref, assert_matches, model.config)

    rng = np.random.default_rng(3)
    d_last = rng.standard_normal(out.last_hidden_state.shape)  # (B, T, H)
    d_pooled = rng.standard_normal(out.pooler_output.shape)  # (B, H)
    model.zero_grad()
    model.backward(d_last, d_pooled)
    torch = hf.torch
    ((ref.last_hidden_state * torch.from_numpy(d_last)).sum()
     + (ref.pooler_output * torch.from_numpy(d_pooled)).sum()).backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))
    pad = model.config.pad_token_id
    assert np.all(dict(model.named_gradients())["embeddings.word_embeddings.weight"][pad] == 0)


def test_masked_lm_matches_hf(hf_twin, padded_batch, to_torch, assert_matches,
                              assert_gradients_match):
    model = make_albert(AlbertForMaskedLM, sharing="groups-and-inner", seed=4)
    twin = hf_twin(model)
    batch = padded_batch(model.config, seed=4)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask", "labels")}
    out = model(**inputs)
    ref = twin(**to_torch(inputs))
    assert_matches("logits", out.logits, ref.logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
    model.zero_grad()
    model.backward()
    ref.loss.backward()
    assert_gradients_match(model, twin, FLOAT64_RTOL, key_biases(model))


def test_hf_state_dict_loads_strictly_and_back(hf_twin, load_from_hf, padded_batch,
                                               to_torch, assert_matches, hf):
    twin = hf_twin(make_albert(AlbertForPreTraining, seed=6, sharing="groups-and-inner"))
    generator = hf.torch.Generator().manual_seed(7)
    with hf.torch.no_grad():
        for param in twin.parameters():
            param.add_(0.05 * hf.torch.randn(param.shape, generator=generator,
                                             dtype=param.dtype))
    # HF's own keys, alias keys (predictions.decoder.*) included, with strict=True.
    model = load_from_hf(make_albert(AlbertForPreTraining, seed=8, sharing="groups-and-inner"),
                         twin)
    batch = albert_batch(padded_batch, model.config, seed=9)
    out = model(**batch)
    ref = twin(**to_torch(batch))
    assert_matches("prediction_logits", out.prediction_logits,
                   ref.prediction_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("sop_logits", out.sop_logits, ref.sop_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("loss", out.loss, ref.loss.item(), FLOAT64_RTOL)
    # And back: minibert's state dict into a fresh HF model, strictly.
    fresh = hf.transformers.AlbertForPreTraining(hf_config(hf, model.config)).double().eval()
    result = fresh.load_state_dict({k: hf.torch.from_numpy(v.copy())
                                    for k, v in model.state_dict().items()}, strict=True)
    assert not result.missing_keys and not result.unexpected_keys
    again = fresh(**to_torch(batch))
    assert_matches("loss after the round trip", again.loss.item(), ref.loss.item(), FLOAT64_RTOL)


def test_checkpoints_both_ways(tmp_path, padded_batch, to_torch, assert_matches, hf):
    model = make_albert(AlbertForPreTraining, seed=10, sharing="groups-and-inner")
    batch = albert_batch(padded_batch, model.config, seed=11)
    out = model(**batch)
    model.save_pretrained(tmp_path / "ours")
    theirs = hf.transformers.AlbertForPreTraining.from_pretrained(
        tmp_path / "ours", attn_implementation="eager").double().eval()
    ref = theirs(**to_torch(batch))
    assert_matches("prediction_logits", out.prediction_logits,
                   ref.prediction_logits.detach().numpy(), FLOAT64_RTOL)
    assert_matches("sop_logits", out.sop_logits, ref.sop_logits.detach().numpy(), FLOAT64_RTOL)

    # HF writes it (float64), minibert reads it: the full model, and the encoder alone.
    theirs.save_pretrained(tmp_path / "hf")
    loaded = AlbertForPreTraining.from_pretrained(tmp_path / "hf", dtype=np.float64)
    assert loaded.loading_info["missing_keys"] == []
    assert loaded.loading_info["unexpected_keys"] == []
    assert_matches("loss via HF's checkpoint", loaded(**batch).loss, out.loss, FLOAT64_RTOL)
    theirs.albert.save_pretrained(tmp_path / "hf-base")  # keys without the "albert." prefix
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the heads are not in a base checkpoint
        base = AlbertForPreTraining.from_pretrained(tmp_path / "hf-base", dtype=np.float64)
    assert sorted(base.loading_info["initialized_heads"]) == ["predictions.LayerNorm",
                                                              "predictions.bias",
                                                              "predictions.dense",
                                                              "sop_classifier.classifier"]
    with pytest.warns(UserWarning, match="ignored 7 checkpoint weights"):  # the heads
        encoder = AlbertModel.from_pretrained(tmp_path / "hf", dtype=np.float64)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    assert_matches("last_hidden_state", encoder(**inputs).last_hidden_state,
                   theirs.albert(**to_torch(inputs)).last_hidden_state.detach().numpy(),
                   FLOAT64_RTOL)


ALBERT_BASE_V2 = dict(vocab_size=30000, embedding_size=128, hidden_size=768,
                      num_hidden_layers=12, num_hidden_groups=1, num_attention_heads=12,
                      intermediate_size=3072, inner_group_num=1)
ALBERT_LARGE_V2 = dict(ALBERT_BASE_V2, hidden_size=1024, num_hidden_layers=24,
                       num_attention_heads=16, intermediate_size=4096)


@pytest.mark.parametrize("fields", [
    ALBERT_BASE_V2, ALBERT_LARGE_V2, AlbertConfig.preset("tiny", vocab_size=5000).to_dict(),
    {**SMALL, **SHARING["groups-and-inner"]},
], ids=["albert-base-v2", "albert-large-v2", "tiny", "groups-and-inner"])
def test_parameter_counts_equal_hf(fields, hf):
    fields = {k: v for k, v in fields.items() if k != "model_type"}
    config = AlbertConfig(**fields)
    for ours_cls, hf_name in ((AlbertModel, "AlbertModel"),
                              (AlbertForPreTraining, "AlbertForPreTraining")):
        with hf.torch.random.fork_rng():
            hf.torch.manual_seed(0)
            theirs = getattr(hf.transformers, hf_name)(hf_config(hf, config)).num_parameters()
        ours = ours_cls(config).num_parameters()
        assert ours == theirs, (hf_name, ours, theirs)
        if ours_cls is AlbertModel:
            assert config.num_parameters_estimate() == theirs
    if fields == ALBERT_BASE_V2:
        assert config.num_parameters_estimate() == 11_683_584  # HF's AlbertModel count
