"""The one-page BERT layer (minibert/flat_layer.py) is BertLayer, dropout and every activation
included, and its backward passes a float64 gradient check."""

import numpy as np
import pytest
from small_models import small_config

import minibert.flat_layer as flat
from minibert import functional as F
from minibert.base import make_init
from minibert.gradcheck import rel_error
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


def page_of(layer, config, x, mask, training):
    """The page run over ``layer``'s parameters, drawing from the layer's dropout generator."""
    return flat.bert_layer_forward(x, flat.layer_parameters(layer), mask,
                                   config.num_attention_heads, config.layer_norm_eps,
                                   config.hidden_act, config.attention_probs_dropout_prob,
                                   config.hidden_dropout_prob, layer.output.dropout.rng, training)


@pytest.mark.parametrize("hidden_act", ACTIVATIONS)
@pytest.mark.parametrize("dropout", [0.0, 0.2])
def test_the_flat_layer_computes_what_bert_layer_computes(hidden_act, dropout):
    """Bit for bit, dropout masks included: the page draws from the model's dropout generator
    in BertLayer's order (the probabilities, after attention.output.dense, after output.dense)."""
    config, layer, x, mask, rng = layer_and_inputs(dropout=dropout, hidden_act=hidden_act)
    params = flat.layer_parameters(layer)
    assert set(params) == set(flat.LAYER_PARAMETERS)
    dout = rng.standard_normal(x.shape)
    generator = layer.output.dropout.rng  # the one every dropout of the model draws from
    state = generator.bit_generator.state
    out, cache = page_of(layer, config, x, mask, training=dropout > 0)
    dx, grads = flat.bert_layer_backward(dout, cache)
    generator.bit_generator.state = state
    np.testing.assert_array_equal(out, layer(x, mask))
    layer.zero_grad()
    np.testing.assert_array_equal(dx, layer.backward(dout))
    for name, grad in layer.named_gradients():
        np.testing.assert_array_equal(grads[name], grad, err_msg=name)
    assert (dropout > 0) == (cache.output_dropout is not None)


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

    def objective():
        return float(np.sum(forward()[0] * dout))

    dx, grads = flat.bert_layer_backward(dout, forward()[1])
    checked = dict(grads, x=dx)
    arrays = dict(params, x=x)
    for name, analytic in checked.items():
        if name.endswith("attention.self.key.bias"):
            continue  # its true gradient is exactly 0 (docs/backprop.md): rounding noise only
        target = arrays[name]
        numeric = np.zeros_like(target)
        for index in np.ndindex(target.shape):
            saved = target[index]
            target[index] = saved + 1e-5
            plus = objective()
            target[index] = saved - 1e-5
            minus = objective()
            target[index] = saved
            numeric[index] = (plus - minus) / 2e-5
        assert rel_error(analytic, numeric) < SINGLE_LAYER_TOL, name


def test_a_broken_backward_is_caught():
    """Drop the second residual's gradient: the comparison with BertLayer fails."""
    config, layer, x, mask, rng = layer_and_inputs()
    out, cache = flat.bert_layer_forward(x, flat.layer_parameters(layer), mask,
                                         config.num_attention_heads)
    dout = rng.standard_normal(out.shape)
    layer(x, mask)
    layer.zero_grad()
    dx_layer = layer.backward(dout)
    broken = cache._replace(attention_output_layernorm=F.LayerNormCache(
        cache.attention_output_layernorm.x_hat, cache.attention_output_layernorm.rstd * 1.01,
        cache.attention_output_layernorm.weight))
    dx, _ = flat.bert_layer_backward(dout, broken)
    assert rel_error(dx, dx_layer) > 1e-4


def test_an_unknown_activation_is_refused():
    config, layer, x, mask, _ = layer_and_inputs()
    with pytest.raises(ValueError, match=r"hidden_act must be one of .*got 'swish'"):
        flat.bert_layer_forward(x, flat.layer_parameters(layer), mask, 2, hidden_act="swish")
