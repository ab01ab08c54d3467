"""ALBERT's and DistilBERT's blocks run BERT's one page (``minibert.model.PageLayer`` over
``bert_layer_forward`` / ``bert_layer_backward``) with their own hidden dropout sites.

Each block computes, bit for bit and dropout masks included, what its sublayer modules compute
when chained by hand as HF chains them (the composition these blocks had before they ran the
page); each passes a float64 gradient check with a random upstream gradient, dropout on; a
broken backward is caught; ALBERT's shared block keeps one page cache per use.

Dimension legend: B batch, T sequence length, H hidden size.
"""

from __future__ import annotations

import numpy as np
import pytest
from small_models import small_albert_config, small_distilbert_config

import minibert.model as model_module
from minibert import functional as F
from minibert.base import make_init
from minibert.family.albert import AlbertLayer, AlbertTransformer
from minibert.family.distilbert import DistilBertTransformerBlock
from minibert.gradcheck import numerical_gradient, rel_error
from minibert.gradcheck.suite import SINGLE_LAYER_TOL, perturb_parameters
from minibert.model import FlatLayerCache, bert_layer_forward, padding_key_mask

# -- the two families' blocks, and their compositions from the sublayer modules --------------


def albert_block(seed, dropout, hidden_act):
    config = small_albert_config(hidden_act=hidden_act, hidden_dropout_prob=dropout,
                                 attention_probs_dropout_prob=dropout)
    return AlbertLayer(make_init(config, seed, np.float64)), config


def distilbert_block(seed, dropout, hidden_act):
    config = small_distilbert_config(activation=hidden_act, dropout=dropout,
                                     attention_dropout=dropout)
    return DistilBertTransformerBlock(make_init(config, seed, np.float64)), config


def albert_by_hand(layer, x, mask):
    """HF's AlbertLayer: LayerNorm(x + dropout(dense(attention))), then
    full_layer_layer_norm(ffn_output(act(ffn(a))) + a), no dropout after ffn_output."""
    attention_output = layer.attention(x, mask)  # (B, T, H)
    ffn_output = layer.ffn_output(layer.activation(layer.ffn(attention_output)))  # (B, T, H)
    return layer.full_layer_layer_norm(ffn_output + attention_output)


def albert_by_hand_backward(layer, dout):
    d_sum = layer.full_layer_layer_norm.backward(dout)
    d_intermediate = layer.ffn_output.backward(d_sum)  # (B, T, I)
    d_attention_output = d_sum + layer.ffn.backward(layer.activation.backward(d_intermediate))
    return layer.attention.backward(d_attention_output)


def distilbert_by_hand(block, x, mask):
    """HF's TransformerBlock: sa_layer_norm(out_lin(attention) + x), no dropout there, then
    output_layer_norm(dropout(lin2(act(lin1(a)))) + a)."""
    attention_output = block.sa_layer_norm(block.attention(x, mask) + x)  # (B, T, H)
    return block.output_layer_norm(block.ffn(attention_output) + attention_output)


def distilbert_by_hand_backward(block, dout):
    d_sum = block.output_layer_norm.backward(dout)
    d_attention_output = block.ffn.backward(d_sum) + d_sum
    d_sum = block.sa_layer_norm.backward(d_attention_output)
    return block.attention.backward(d_sum) + d_sum


FAMILIES = {
    "albert": (albert_block, albert_by_hand, albert_by_hand_backward, ("attention_output",)),
    "distilbert": (distilbert_block, distilbert_by_hand, distilbert_by_hand_backward,
                   ("output",)),
}
ACTIVATIONS = {"albert": ("gelu_new", "relu"), "distilbert": ("gelu", "relu")}
CASES = [(family, act) for family in FAMILIES for act in ACTIVATIONS[family]]


def block_and_inputs(family, seed=0, dropout=0.0, hidden_act="relu"):
    """A float64 block, parameters moved off their initial values, in training mode when
    dropout > 0; x (B, T, H), a padding mask, and a generator for the test's arrays."""
    block, config = FAMILIES[family][0](seed, dropout, hidden_act)
    block.train(dropout > 0)
    rng = np.random.default_rng(seed + 10)
    perturb_parameters(block, rng)  # LayerNorm weights away from 1, biases away from 0
    x = rng.standard_normal((3, 5, config.hidden_size))  # (B, T, H)
    attention_mask = np.ones((3, 5), dtype=np.int64)
    attention_mask[1, 3:] = 0  # padding in one sequence
    return block, x, padding_key_mask(attention_mask), rng


# -- the page computes what the modules compute -------------------------------------------------


@pytest.mark.parametrize("family, hidden_act", CASES)
@pytest.mark.parametrize("dropout", [0.0, 0.2], ids=["eval", "dropout"])
def test_the_block_computes_what_its_modules_compute(family, hidden_act, dropout):
    """Bit for bit, dropout masks included: the page draws from the model's generator in the
    order the modules drew (the probabilities, then the family's one hidden site)."""
    _, by_hand, by_hand_backward, sites = FAMILIES[family]
    block, x, mask, rng = block_and_inputs(family, 0, dropout, hidden_act)
    dout = rng.standard_normal(x.shape)  # (B, T, H)
    state = block.dropout_rng.bit_generator.state
    out = block(x, mask)
    dx = block.backward(dout)
    after_page = block.dropout_rng.bit_generator.state
    page_grads = {name: grad.copy() for name, grad in block.named_gradients()}
    assert all(np.any(grad != 0) for grad in page_grads.values())
    block.zero_grad()
    block.dropout_rng.bit_generator.state = state
    np.testing.assert_array_equal(out, by_hand(block, x, mask))
    np.testing.assert_array_equal(dx, by_hand_backward(block, dout))
    assert block.dropout_rng.bit_generator.state == after_page  # as many draws
    for name, grad in block.named_gradients():
        np.testing.assert_array_equal(page_grads[name], grad, err_msg=name)
    # the page with the family's sites named explicitly: the same again
    block.dropout_rng.bit_generator.state = state
    explicit, cache = bert_layer_forward(
        x, block.page_parameters(), mask, block.num_heads, block.eps, hidden_act, dropout,
        dropout, block.dropout_rng, dropout > 0, hidden_dropout_sites=sites)
    np.testing.assert_array_equal(out, explicit)
    # a dropout cache only at the family's site, and only when training with dropout
    kept = {"attention_output": cache.attention_output_dropout, "output": cache.output_dropout}
    for site, dropout_cache in kept.items():
        assert (dropout_cache is not None) == (dropout > 0 and site in sites), site


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_block_hands_each_module_its_steps_cache(family):
    """Heatmaps read the attention's probabilities; the holders keep their steps' caches."""
    block, x, mask, _ = block_and_inputs(family, 2, 0.1)
    block(x, mask)
    assert isinstance(block.cache, FlatLayerCache)
    assert block.attention.attention_probs is block.cache.attention.attention_probs
    for name, holder in block.holders():
        step = model_module.HOLDER_STEPS[name]
        assert holder.cache is getattr(block.cache, step), name
    for field, module in block.step_modules():
        assert module.cache is getattr(block.cache, field), field


@pytest.mark.parametrize(("make_block", "hidden_act", "modules"), [
    (albert_block, "gelu_new",
     ("full_layer_layer_norm", "attention.query", "attention.key", "attention.value",
      "attention.dense", "attention.LayerNorm", "ffn", "ffn_output")),
    (distilbert_block, "gelu",
     ("attention.q_lin", "attention.k_lin", "attention.v_lin", "attention.out_lin",
      "sa_layer_norm", "ffn.lin1", "ffn.lin2", "output_layer_norm")),
], ids=["albert", "distilbert"])
def test_block_parameter_names_stay_hf_names(make_block, hidden_act, modules):
    block, _ = make_block(0, 0.0, hidden_act)
    assert [name for name, _ in block.named_parameters()] == [
        f"{module}.{kind}" for module in modules for kind in ("weight", "bias")]


# -- gradient checks ----------------------------------------------------------------------------


def worst_errors(block, x, mask, dout):
    """Each parameter's and x's relative error, the block's backward against central
    differences of sum(block(x) * dout), the same dropout masks at every forward."""
    state = block.dropout_rng.bit_generator.state

    def output(_changed=None):
        block.dropout_rng.bit_generator.state = state
        return block(x, mask)

    output()
    block.zero_grad()
    dx = block.backward(dout)
    analytic = dict(block.named_gradients(), x=dx)
    arrays = dict(block.named_parameters(), x=x)
    return {name: rel_error(analytic[name], numerical_gradient(output, target, dout))
            for name, target in arrays.items()}


# The key's bias shifts every score of a query equally: the softmax cancels it, and its true
# gradient is exactly 0 (docs/backprop.md); both sides hold rounding noise only.
KEY_BIAS = {"albert": "attention.key.bias", "distilbert": "attention.k_lin.bias"}


@pytest.mark.parametrize("family, hidden_act", CASES)
@pytest.mark.parametrize("dropout", [0.0, 0.3], ids=["eval", "dropout"])
def test_the_block_passes_a_float64_gradient_check(family, hidden_act, dropout):
    block, x, mask, rng = block_and_inputs(family, 1, dropout, hidden_act)
    dout = rng.standard_normal(x.shape)  # random, never all ones
    errors = worst_errors(block, x, mask, dout)
    del errors[KEY_BIAS[family]]
    assert len(errors) == 16  # the 15 other parameters and x
    failing = {name: error for name, error in errors.items() if error >= SINGLE_LAYER_TOL}
    assert not failing, failing


@pytest.mark.parametrize("family", list(FAMILIES))
def test_a_broken_backward_is_caught(family, monkeypatch):
    """The page's backward fed a wrong statistic of the first LayerNorm: the check fails."""
    correct = model_module.bert_layer_backward

    def broken(dout, cache):
        norm = cache.attention_output_layernorm
        wrong = cache._replace(attention_output_layernorm=F.LayerNormCache(
            norm.x_hat, norm.rstd * 1.01, norm.weight))
        return correct(dout, wrong)

    monkeypatch.setattr(model_module, "bert_layer_backward", broken)
    block, x, mask, rng = block_and_inputs(family, 1, 0.3)
    errors = worst_errors(block, x, mask, rng.standard_normal(x.shape))
    assert errors["x"] > 1e-4
    assert max(errors.values()) > 1e-4


# -- ALBERT's shared block keeps one page cache per use ----------------------------------------


def test_albert_snapshots_the_page_cache_of_every_use():
    config = small_albert_config(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    encoder = AlbertTransformer(make_init(config, 0, np.float64))
    rng = np.random.default_rng(4)
    x = rng.standard_normal((2, 5, config.embedding_size))  # (B, T, E)
    _, _, attentions = encoder(x, None, output_attentions=True)
    block = encoder.albert_layer_groups[0].albert_layers[0]
    index = [m for _, m in encoder.albert_layer_groups[0].named_modules()].index(block)
    page_caches = [caches[index] for _, caches in encoder.cache.uses]
    assert len(page_caches) == config.num_hidden_layers
    assert all(isinstance(cache, FlatLayerCache) for cache in page_caches)
    assert len({id(cache) for cache in page_caches}) == config.num_hidden_layers
    for cache, probs in zip(page_caches, attentions, strict=True):
        assert cache.attention.attention_probs is probs  # the heatmap of that use
