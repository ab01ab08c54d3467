"""The one-page BERT layer (``bert_layer_forward`` / ``bert_layer_backward``, in
minibert/model.py, also under ``minibert.flat_layer``): BertLayer runs it; it computes what the
sublayer modules compute when chained by hand (dropout and every activation included), and its
backward passes a float64 gradient check."""

import numpy as np
import pytest
from small_models import small_config

import minibert.flat_layer as flat
from minibert import functional as F
from minibert.base import make_init
from minibert.gradcheck import numerical_gradient, rel_error
from minibert.gradcheck.suite import SINGLE_LAYER_TOL, perturb_parameters
from minibert.model import BertLayer, padding_key_mask

ACTIVATIONS = ("gelu", "gelu_new", "relu")


def layer_and_inputs(seed=0, dropout=0.0, hidden_act="gelu"):
    config = small_config(hidden_size=8, num_attention_heads=2, intermediate_size=12,
                          hidden_act=hidden_act, hidden_dropout_prob=dropout,
                          attention_probs_dropout_prob=dropout)
    layer = BertLayer(make_init(config, seed, np.float64)).train(dropout > 0)
    rng = np.random.default_rng(seed)
    perturb_parameters(layer, rng)  # LayerNorm weights away from 1, biases away from 0
    x = rng.standard_normal((3, 5, 8))  # (B, T, H)
    attention_mask = np.ones((3, 5), dtype=np.int64)
    attention_mask[1, 3:] = 0  # padding in one sequence
    return config, layer, x, padding_key_mask(attention_mask), rng


def by_hand(layer, x, mask):
    """The layer chained from its sublayer modules, as HF's BertLayer chains them."""
    attention_output = layer.attention(x, mask)
    return layer.output(layer.intermediate(attention_output), attention_output)


def by_hand_backward(layer, dout):
    d_intermediate, d_attention_output = layer.output.backward(dout)
    return layer.attention.backward(d_attention_output
                                    + layer.intermediate.backward(d_intermediate))


@pytest.mark.parametrize("hidden_act", ACTIVATIONS)
@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_the_page_computes_what_the_sublayer_modules_compute(hidden_act, dropout):
    """Bit for bit, dropout masks included: the page draws from the model's dropout generator
    in the modules' order (the probabilities, after attention.output.dense, after output.dense)."""
    config, layer, x, mask, rng = layer_and_inputs(dropout=dropout, hidden_act=hidden_act)
    dout = rng.standard_normal(x.shape)
    state = layer.dropout_rng.bit_generator.state
    out = layer(x, mask)
    dx = layer.backward(dout)
    page_grads = {name: grad.copy() for name, grad in layer.named_gradients()}
    layer.zero_grad()
    layer.dropout_rng.bit_generator.state = state
    np.testing.assert_array_equal(out, by_hand(layer, x, mask))
    np.testing.assert_array_equal(dx, by_hand_backward(layer, dout))
    for name, grad in layer.named_gradients():
        np.testing.assert_array_equal(page_grads[name], grad, err_msg=name)
    assert (dropout > 0) == (layer.cache.output_dropout is not None)


def test_bert_layer_runs_the_page():
    config, layer, x, mask, rng = layer_and_inputs()
    params = flat.layer_parameters(layer)
    assert set(params) == set(flat.LAYER_PARAMETERS)
    assert all(value is dict(layer.named_parameters())[name] for name, value in params.items())
    out, cache = flat.bert_layer_forward(x, params, mask, config.num_attention_heads,
                                         config.layer_norm_eps)
    np.testing.assert_array_equal(out, layer(x, mask))
    assert isinstance(layer.cache, flat.FlatLayerCache)
    # each sublayer module holds its step's cache: heatmaps read the probabilities there
    assert layer.attention.self.attention_probs is layer.cache.attention.attention_probs
    assert layer.output.dense.cache is layer.cache.output_dense
    assert layer.attention.output.LayerNorm.cache is layer.cache.attention_output_layernorm


@pytest.mark.parametrize("hidden_act", ACTIVATIONS)
@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_the_page_passes_a_float64_gradient_check(hidden_act, dropout):
    config, layer, x, mask, rng = layer_and_inputs(1, dropout, hidden_act)
    params = {name: value.copy() for name, value in flat.layer_parameters(layer).items()}
    heads = config.num_attention_heads
    dout = rng.standard_normal(x.shape)  # random, never all ones
    dropout_rng = np.random.default_rng(7)
    state = dropout_rng.bit_generator.state  # the same masks at every forward

    def forward():
        dropout_rng.bit_generator.state = state
        return flat.bert_layer_forward(x, params, mask, heads, config.layer_norm_eps, hidden_act,
                                       dropout, dropout, dropout_rng, training=dropout > 0)

    dx, grads = flat.bert_layer_backward(dout, forward()[1])
    checked = dict(grads, x=dx)
    arrays = dict(params, x=x)
    for name, analytic in checked.items():
        if name.endswith("attention.self.key.bias"):
            continue  # its true gradient is exactly 0 (docs/backprop.md): rounding noise only
        numeric = numerical_gradient(lambda _changed: forward()[0], arrays[name], dout)
        assert rel_error(analytic, numeric) < SINGLE_LAYER_TOL, name


def test_a_broken_backward_is_caught():
    """Drop the second residual's gradient: the comparison with the modules fails."""
    config, layer, x, mask, rng = layer_and_inputs()
    out, cache = flat.bert_layer_forward(x, flat.layer_parameters(layer), mask,
                                         config.num_attention_heads)
    dout = rng.standard_normal(out.shape)
    by_hand(layer, x, mask)
    dx_modules = by_hand_backward(layer, dout)
    broken = cache._replace(attention_output_layernorm=F.LayerNormCache(
        cache.attention_output_layernorm.x_hat, cache.attention_output_layernorm.rstd * 1.01,
        cache.attention_output_layernorm.weight))
    dx, _ = flat.bert_layer_backward(dout, broken)
    assert rel_error(dx, dx_modules) > 1e-4


def test_an_unknown_activation_is_refused():
    config, layer, x, mask, _ = layer_and_inputs()
    with pytest.raises(ValueError, match=r"hidden_act must be one of .*got 'swish'"):
        flat.bert_layer_forward(x, flat.layer_parameters(layer), mask, 2, hidden_act="swish")


def test_the_hidden_dropout_sites():
    """By default both sites drop (BERT); a site left out draws nothing and keeps no mask;
    naming both is the default bit for bit; an unknown site is refused by name."""
    config, layer, x, mask, _ = layer_and_inputs(dropout=0.2)
    params = flat.layer_parameters(layer)
    heads, eps = config.num_attention_heads, config.layer_norm_eps

    def run(rng, **sites):
        return flat.bert_layer_forward(x, params, mask, heads, eps, "gelu", 0.2, 0.2, rng,
                                       True, **sites)

    default, default_cache = run(np.random.default_rng(3))
    both, _ = run(np.random.default_rng(3), hidden_dropout_sites=("attention_output", "output"))
    np.testing.assert_array_equal(default, both)
    assert default_cache.attention_output_dropout is not None
    assert default_cache.output_dropout is not None
    for sites, kept in ((("attention_output",), "attention_output_dropout"),
                        (("output",), "output_dropout"), ((), None)):
        rng = np.random.default_rng(3)
        _, cache = run(rng, hidden_dropout_sites=sites)
        for field in ("attention_output_dropout", "output_dropout"):
            assert (getattr(cache, field) is not None) == (field == kept), (sites, field)
        draws = np.random.default_rng(3)
        # what was drawn: the probabilities' mask, then one (B, T, H) mask per site named
        draws.random(default_cache.attention.dropout.keep.shape)
        for _ in sites:
            draws.random(x.shape)
        assert rng.bit_generator.state == draws.bit_generator.state, sites
    for sites in (("ffn",), "output", None):
        with pytest.raises(ValueError, match=r"hidden_dropout_sites must be a tuple of names "
                                             r"from \['attention_output', 'output'\], got"):
            run(np.random.default_rng(3), hidden_dropout_sites=sites)
