"""The BERT model without a reference framework: sizes, gradients, invariances, errors.

The comparison with HuggingFace + torch lives in ``tests/parity/``; everything here runs
with NumPy alone. Parameters are moved away from their initial values (biases 0,
LayerNorm 1 and 0) before any gradient is checked, because a term multiplied by an
exact 0 or 1 can hide a bug.

Dimension legend: B batch, T sequence length, H hidden size, N heads, V vocabulary size.
"""

from __future__ import annotations

import numpy as np
import pytest
from small_models import (
    exactly_zero_gradients,
    log_softmax,
    make_batch,
    perturbed,
    relative_difference,
    small_config,
    zero_gradient_partner,
)

import minibert as mb
from minibert import functional as F
from minibert.checks import IGNORE_INDEX
from minibert.gradcheck import check_loss, numerical_gradient
from minibert.layers import Embedding

GRADCHECK_TOL = 1e-6  # whole model in float64 (one layer alone reaches ~1e-10)


def small_model(cls=mb.BertForPreTraining, seed=0, **overrides):
    """A float64 model of the small config in eval mode, every parameter perturbed."""
    model = cls(small_config(**overrides), seed=seed, dtype=np.float64)
    return perturbed(model, seed + 100).eval()


def assert_gradients_agree(gradients: dict, reference: dict, exactly_zero: set[str],
                           rtol: float) -> None:
    """Every gradient equals the reference norm-wise; an exactly-zero one is below
    ``rtol`` times its partner's norm on both sides instead (two rounding noises have no
    meaningful relative difference)."""
    assert set(gradients) == set(reference)
    for name, grad in gradients.items():
        if name in exactly_zero:
            scale = np.linalg.norm(reference[zero_gradient_partner(name)])
            assert scale > 0, zero_gradient_partner(name)
            assert np.linalg.norm(grad) < rtol * scale, name
            assert np.linalg.norm(reference[name]) < rtol * scale, name
        else:
            assert relative_difference(grad, reference[name]) < rtol, name


def pretraining_check(model, batch, **kwargs):
    """check_loss of BertForPreTraining's loss (MLM + NSP) on ``batch``."""
    return check_loss(model, lambda: model(**batch).loss, model.backward, max_entries=30,
                      title="BertForPreTraining", **kwargs)


# ----------------------------------------------------------------------------------------
# Sizes
# ----------------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def base_pretraining_model():
    # ~440 MB of float32: built once for the module.
    return mb.BertForPreTraining(mb.BertConfig.preset("base"), seed=0)


@pytest.mark.slow
def test_base_parameter_counts_equal_hf(base_pretraining_model):
    model = base_pretraining_model
    # The numbers transformers reports for bert-base-uncased.
    assert model.bert.num_parameters() == 109_482_240
    assert model.num_parameters() == 110_106_428  # tied decoder weight counted once
    assert model.config.num_parameters_estimate() == 109_482_240


def test_large_parameter_count_from_the_config():
    config = mb.BertConfig.preset("large")
    h, i, layers = 1024, 4096, 24
    embeddings = (30522 + 512 + 2) * h + 2 * h  # word, position, segment tables; LayerNorm
    attention = 4 * (h * h + h) + 2 * h  # query, key, value, output dense; LayerNorm
    feed_forward = (h * i + i) + (i * h + h) + 2 * h  # H -> I, I -> H; LayerNorm
    pooler = h * h + h
    expected = embeddings + layers * (attention + feed_forward) + pooler
    assert expected == 335_141_888
    assert config.num_parameters_estimate() == expected


@pytest.mark.parametrize("seed", range(4))
def test_parameter_estimate_equals_real_count(seed):
    rng = np.random.default_rng(seed)
    heads = int(rng.integers(1, 4))
    config = mb.BertConfig(vocab_size=int(rng.integers(5, 50)), hidden_size=heads * 4,
                           num_hidden_layers=int(rng.integers(1, 4)), num_attention_heads=heads,
                           intermediate_size=int(rng.integers(3, 30)),
                           max_position_embeddings=int(rng.integers(4, 20)),
                           type_vocab_size=int(rng.integers(1, 4)))
    model = mb.BertModel(config, seed=seed)
    assert config.num_parameters_estimate() == model.num_parameters()
    pretraining = mb.BertForPreTraining(config, seed=seed)
    h, v = config.hidden_size, config.vocab_size
    heads_params = (h * h + h) + 2 * h + v + (2 * h + 2)  # transform, LayerNorm, bias, NSP
    assert pretraining.num_parameters() == model.num_parameters() + heads_params


# ----------------------------------------------------------------------------------------
# Gradients of the whole model
# ----------------------------------------------------------------------------------------

def test_pretraining_gradient_check_dropout_off():
    model = small_model()
    table = pretraining_check(model, make_batch(model.config))
    assert len(table) == len(list(model.named_parameters()))
    table.assert_below(GRADCHECK_TOL)


def test_pretraining_gradient_check_dropout_on():
    model = small_model(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1).train()
    batch = make_batch(model.config, seed=1)
    # Dropout is really active: two forwards draw different masks.
    assert model(**batch).loss != model(**batch).loss
    pretraining_check(model, batch, seed=1).assert_below(GRADCHECK_TOL)


def test_bert_model_gradient_check_with_both_upstream_gradients():
    bert = small_model(mb.BertModel, seed=2)
    batch = make_batch(bert.config, seed=2)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    out = bert(**inputs)
    rng = np.random.default_rng(2)
    # Zero at padding positions, as any loss on real tokens would be: there the [PAD]
    # row's gradient is deliberately not its true derivative (see the next test). Scaled
    # so the surrogate loss is O(1) like a mean-reduced loss: the finite differences'
    # rounding noise grows with |loss|, and the key bias's true gradient is 0.
    real = batch["attention_mask"][..., None]  # (B, T, 1)
    d_last = rng.standard_normal(out.last_hidden_state.shape) * real  # (B, T, H)
    d_last /= np.sqrt(d_last.size)
    d_pooled = rng.standard_normal(out.pooler_output.shape) / np.sqrt(out.pooler_output.size)

    def surrogate_loss():
        out = bert(**inputs)
        return np.sum(out.last_hidden_state * d_last) + np.sum(out.pooler_output * d_pooled)

    table = check_loss(bert, surrogate_loss, lambda: bert.backward(d_last, d_pooled),
                       max_entries=20, title="BertModel")
    table.assert_below(GRADCHECK_TOL)


def test_pad_row_gets_no_gradient_from_the_lookup():
    # As HF's nn.Embedding(padding_idx=pad_token_id): [PAD] stays an untrained vector
    # even where an upstream gradient reaches a padding position.
    bert = small_model(mb.BertModel, seed=2)
    batch = make_batch(bert.config, seed=2)
    inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
    pad, hidden = bert.config.pad_token_id, bert.config.hidden_size
    assert (inputs["input_ids"] == pad).any()
    out = bert(**inputs)
    d_last = np.random.default_rng(2).standard_normal(out.last_hidden_state.shape)  # (B, T, H)
    bert.zero_grad()
    bert.backward(d_last)
    word_grad = dict(bert.named_gradients())["embeddings.word_embeddings.weight"]
    assert np.all(word_grad[pad] == 0.0)
    used = np.unique(inputs["input_ids"][inputs["input_ids"] != pad])
    assert np.all(np.linalg.norm(word_grad[used], axis=1) > 0)
    # The outputs at padding positions do depend on the [PAD] vector: the zero is a
    # convention, not the derivative.
    weight = bert.embeddings.word_embeddings.params["weight"]
    numeric = numerical_gradient(lambda _w: bert(**inputs).last_hidden_state, weight, d_last,
                                 indices=range(pad * hidden, (pad + 1) * hidden))
    assert np.linalg.norm(numeric[pad]) > 1e-3


def test_broken_layernorm_backward_is_caught(monkeypatch):
    def layernorm_backward_without_variance_term(dout, cache):
        x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
        axes = tuple(range(dout.ndim - 1))
        dx_hat = dout * weight
        # The term through the variance, - x_hat * mean(dx_hat * x_hat), is dropped.
        dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True))
        return dx, (dout * x_hat).sum(axis=axes), dout.sum(axis=axes)

    # The layers call F.layernorm_backward through the module, so this reaches all of them.
    monkeypatch.setattr(F, "layernorm_backward", layernorm_backward_without_variance_term)
    model = small_model(seed=3)
    names = ["bert.embeddings.word_embeddings.weight",
             "bert.encoder.layer.0.attention.self.query.weight",
             "bert.encoder.layer.1.intermediate.dense.weight"]
    table = pretraining_check(model, make_batch(model.config, seed=3), names=names)
    assert [row.name for row in table] == names
    with pytest.raises(AssertionError, match="failed"):
        table.assert_below(GRADCHECK_TOL)


# ----------------------------------------------------------------------------------------
# Padding invariance
# ----------------------------------------------------------------------------------------

def test_padding_changes_nothing_at_real_positions():
    model = small_model(seed=4)
    short = make_batch(model.config, lengths=(9, 6, 4), seed=4)
    long = make_batch(model.config, lengths=(9, 6, 4), seq_len=14, seed=4)
    for name in short:  # the same batch, five more [PAD] columns
        if name != "next_sentence_label":
            assert np.all(long[name][:, :9] == short[name])
    assert np.all(long["attention_mask"][:, 9:] == 0)

    outputs, gradients = [], []
    for batch in (short, long):
        out = model(**batch, output_attentions=True, output_hidden_states=True)
        model.zero_grad()
        model.backward()
        outputs.append(out)
        gradients.append({k: g.copy() for k, g in model.named_gradients()})
    out_short, out_long = outputs

    real = short["attention_mask"].astype(bool)  # (B, T)
    assert relative_difference(out_long.loss, out_short.loss) < 1e-12
    assert relative_difference(out_long.seq_relationship_logits,
                               out_short.seq_relationship_logits) < 1e-12
    assert relative_difference(out_long.prediction_logits[:, :9][real],
                               out_short.prediction_logits[real]) < 1e-12
    for long_hidden, short_hidden in zip(out_long.hidden_states, out_short.hidden_states,
                                         strict=True):
        assert relative_difference(long_hidden[:, :9][real], short_hidden[real]) < 1e-12
    padding_keys = long["attention_mask"][:, None, None, :] == 0  # (B, 1, 1, T)
    for probs_long, probs_short in zip(out_long.attentions, out_short.attentions, strict=True):
        assert np.all(np.where(padding_keys, probs_long, 0.0) == 0.0)
        for row, length in enumerate((9, 6, 4)):
            assert relative_difference(probs_long[row, :, :length, :length],
                                       probs_short[row, :, :length, :length]) < 1e-12
    assert_gradients_agree(gradients[1], gradients[0], exactly_zero_gradients(model), 1e-12)


def test_pooler_output_ignores_padding():
    bert = small_model(mb.BertModel, seed=5)
    ids = np.array([[2, 7, 9, 4]])
    padded = np.array([[2, 7, 9, 4, 0, 0, 0]])
    mask = np.array([[1, 1, 1, 1, 0, 0, 0]])
    out = bert(ids)
    out_padded = bert(padded, attention_mask=mask)
    assert relative_difference(out_padded.pooler_output, out.pooler_output) < 1e-12
    assert relative_difference(out_padded.last_hidden_state[:, :4], out.last_hidden_state) < 1e-12


# ----------------------------------------------------------------------------------------
# Tied weights
# ----------------------------------------------------------------------------------------

def test_decoder_weight_is_the_word_embedding_array():
    model = mb.BertForPreTraining(small_config(), seed=0)
    word = model.bert.embeddings.word_embeddings.params["weight"]
    assert model.cls.predictions.word_embeddings.params["weight"] is word
    state = model.state_dict()
    assert state["cls.predictions.decoder.weight"] is word
    assert state["cls.predictions.decoder.bias"] is state["cls.predictions.bias"]
    names = [name for name, _ in model.named_parameters()]
    assert "cls.predictions.decoder.weight" not in names
    assert "cls.predictions.decoder.bias" not in names
    arrays = [id(value) for _, value in model.named_parameters()]
    assert len(arrays) == len(set(arrays))
    assert set(state) == set(names) | {"cls.predictions.decoder.weight",
                                       "cls.predictions.decoder.bias"}


def test_tied_gradient_is_the_sum_of_both_uses():
    model = small_model(seed=6)
    batch = make_batch(model.config, seed=6)
    model(**batch)
    model.zero_grad()
    model.backward()
    tied = dict(model.named_gradients())["bert.embeddings.word_embeddings.weight"].copy()

    # The same weights with the decoder reading its own copy of the table: each use now
    # collects its gradient in a separate buffer.
    untied = small_model(seed=6)
    word = untied.bert.embeddings.word_embeddings
    decoder = Embedding(*word.params["weight"].shape, np.random.default_rng(0),
                        dtype=np.float64)
    decoder.params["weight"][...] = word.params["weight"]
    object.__setattr__(untied.cls.predictions.decoder, "embedding", decoder)
    untied(**batch)
    untied.zero_grad()
    untied.backward()
    lookup_part = word.grads["weight"]
    decoder_part = decoder.grads["weight"]
    assert np.linalg.norm(lookup_part) > 0 and np.linalg.norm(decoder_part) > 0
    assert relative_difference(tied, lookup_part + decoder_part) < 1e-12
    assert relative_difference(tied, decoder_part) > 1e-3


# ----------------------------------------------------------------------------------------
# Initialization
# ----------------------------------------------------------------------------------------

def test_initialization_follows_bert():
    config = mb.BertConfig(vocab_size=3000, hidden_size=64, num_hidden_layers=2,
                           num_attention_heads=4, intermediate_size=128,
                           max_position_embeddings=64)
    model = mb.BertForPreTraining(config, seed=0)
    std = config.initializer_range
    for name, value in model.named_parameters():
        if name.endswith("LayerNorm.weight"):
            assert np.all(value == 1.0), name
        elif name.endswith("bias"):
            assert np.all(value == 0.0), name
        elif value.size >= 4096:
            # mean within 4 standard errors of 0, spread within 5% of initializer_range
            assert abs(value.mean()) < 4 * std / np.sqrt(value.size), name
            assert abs(value.std() / std - 1) < 0.05, name
    word = model.bert.embeddings.word_embeddings.params["weight"]
    assert np.all(word[config.pad_token_id] == 0.0)
    others = np.delete(word, config.pad_token_id, axis=0)
    # A normal puts 68.3% of its mass within one std (a uniform of the same std: 57.7%).
    assert abs(np.mean(np.abs(others) < std) - 0.6827) < 0.01


def test_same_seed_same_weights_other_seed_other_weights():
    first = dict(mb.BertForPreTraining(small_config(), seed=3).named_parameters())
    again = dict(mb.BertForPreTraining(small_config(), seed=3).named_parameters())
    other = dict(mb.BertForPreTraining(small_config(), seed=4).named_parameters())
    assert all(np.array_equal(first[name], again[name]) for name in first)
    for name in first:
        if not name.endswith(("bias", "LayerNorm.weight")):
            assert not np.array_equal(first[name], other[name]), name


# ----------------------------------------------------------------------------------------
# Outputs
# ----------------------------------------------------------------------------------------

def test_output_shapes_and_attention_rows():
    model = small_model(seed=7)
    config = model.config
    batch = make_batch(config, seed=7)
    out = model(**batch, output_attentions=True, output_hidden_states=True)
    b, t = batch["input_ids"].shape
    h, n, v = config.hidden_size, config.num_attention_heads, config.vocab_size
    assert len(out.hidden_states) == config.num_hidden_layers + 1
    assert all(hidden.shape == (b, t, h) for hidden in out.hidden_states)
    assert len(out.attentions) == config.num_hidden_layers
    assert out.prediction_logits.shape == (b, t, v)
    assert out.seq_relationship_logits.shape == (b, 2)
    real_keys = batch["attention_mask"][:, None, None, :].astype(bool)  # (B, 1, 1, T)
    for probs in out.attentions:
        assert probs.shape == (b, n, t, t)
        np.testing.assert_allclose(np.where(real_keys, probs, 0.0).sum(-1), 1.0, rtol=1e-12)
        assert np.all(probs >= 0)
    no_hidden = model(**batch)
    assert no_hidden.hidden_states is None and no_hidden.attentions is None


def test_eval_is_deterministic_train_is_not():
    model = small_model(seed=8, hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    batch = make_batch(model.config, seed=8)
    model.eval()
    first, second = model(**batch), model(**batch)
    assert np.array_equal(first.prediction_logits, second.prediction_logits)
    assert first.loss == second.loss
    model.train()
    first, second = model(**batch), model(**batch)
    assert not np.array_equal(first.prediction_logits, second.prediction_logits)
    assert first.loss != second.loss


@pytest.mark.parametrize("dtype", [None, np.float64])
def test_dtype_float32_by_default_float64_on_request(dtype):
    kwargs = {} if dtype is None else {"dtype": dtype}
    model = mb.BertForPreTraining(small_config(), seed=0, **kwargs)
    expected = np.float32 if dtype is None else np.float64
    assert model.dtype == expected
    assert all(value.dtype == expected for _, value in model.named_parameters())
    assert all(grad.dtype == expected for _, grad in model.named_gradients())
    out = model(**make_batch(model.config), output_hidden_states=True)
    assert out.prediction_logits.dtype == expected
    assert out.seq_relationship_logits.dtype == expected
    assert all(hidden.dtype == expected for hidden in out.hidden_states)
    model.backward()
    assert all(grad.dtype == expected for _, grad in model.named_gradients())


def test_losses_equal_cross_entropy_over_labelled_positions():
    model = small_model(seed=9)
    batch = make_batch(model.config, seed=9)
    out = model(**batch)
    labels = batch["labels"]
    labelled = labels != IGNORE_INDEX  # (B, T)
    log_probs = log_softmax(out.prediction_logits)[labelled]  # (M, V)
    masked_lm_loss = -np.mean(log_probs[np.arange(len(log_probs)), labels[labelled]])
    nsp = log_softmax(out.seq_relationship_logits)
    next_sentence_loss = -np.mean(nsp[np.arange(len(nsp)), batch["next_sentence_label"]])
    # Averaging over every position instead would give a different number.
    all_positions = -np.mean(np.take_along_axis(
        log_softmax(out.prediction_logits), np.maximum(labels, 0)[..., None], axis=-1))
    assert abs(all_positions - masked_lm_loss) > 1e-3
    assert out.masked_lm_loss == pytest.approx(masked_lm_loss, rel=1e-12)
    assert out.next_sentence_loss == pytest.approx(next_sentence_loss, rel=1e-12)
    assert out.loss == pytest.approx(masked_lm_loss + next_sentence_loss, rel=1e-12)


def test_prediction_logits_access_does_not_disturb_backward():
    model = small_model(seed=10)
    batch = make_batch(model.config, seed=10)
    model(**batch)
    model.zero_grad()
    model.backward()
    expected = {k: g.copy() for k, g in model.named_gradients()}
    out = model(**batch)
    assert out.prediction_logits.shape[-1] == model.config.vocab_size
    model.zero_grad()
    model.backward()
    for name, grad in model.named_gradients():
        assert np.array_equal(grad, expected[name]), name
