"""The one-page BERT layer (minibert/flat_layer.py) is BertLayer, and its backward is right."""

import numpy as np
import pytest
from small_models import small_config

import minibert.flat_layer as flat
from minibert import functional as F
from minibert.base import make_init
from minibert.gradcheck import rel_error
from minibert.gradcheck.suite import SINGLE_LAYER_TOL, perturb_parameters
from minibert.model import BertLayer, padding_key_mask


def layer_and_inputs(seed=0):
    config = small_config(hidden_size=8, num_attention_heads=2, intermediate_size=12)
    layer = BertLayer(make_init(config, seed, np.float64)).eval()
    rng = np.random.default_rng(seed)
    perturb_parameters(layer, rng)  # LayerNorm weights away from 1, biases away from 0
    x = rng.standard_normal((3, 5, 8))  # (B, T, H)
    attention_mask = np.ones((3, 5), dtype=np.int64)
    attention_mask[1, 3:] = 0  # padding in one sequence
    return config, layer, x, padding_key_mask(attention_mask), rng


def test_the_flat_layer_computes_what_bert_layer_computes():
    config, layer, x, mask, rng = layer_and_inputs()
    params = flat.layer_parameters(layer)
    assert set(params) == set(flat.LAYER_PARAMETERS)
    out, cache = flat.bert_layer_forward(x, params, mask, config.num_attention_heads,
                                         config.layer_norm_eps)
    np.testing.assert_array_equal(out, layer(x, mask))
    dout = rng.standard_normal(out.shape)
    layer.zero_grad()
    dx_layer = layer.backward(dout)
    dx, grads = flat.bert_layer_backward(dout, cache)
    np.testing.assert_allclose(dx, dx_layer, rtol=1e-12, atol=1e-14)
    for name, grad in layer.named_gradients():
        scale = np.abs(grad).max()
        assert np.abs(grads[name] - grad).max() <= 1e-12 * scale + 1e-300, name


@pytest.mark.parametrize("seed", [0, 1])
def test_the_flat_backward_passes_a_float64_gradient_check(seed):
    config, layer, x, mask, rng = layer_and_inputs(seed)
    params = {name: value.copy() for name, value in flat.layer_parameters(layer).items()}
    heads = config.num_attention_heads
    dout = rng.standard_normal(x.shape)  # random, never all ones

    def objective():
        return float(np.sum(flat.bert_layer_forward(x, params, mask, heads)[0] * dout))

    _, cache = flat.bert_layer_forward(x, params, mask, heads)
    dx, grads = flat.bert_layer_backward(dout, cache)
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
