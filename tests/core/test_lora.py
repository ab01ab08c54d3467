"""LoRA: the adapter's gradient, the first step's dA = 0, frozen weights, merge/unmerge,
a model with adapters checked end to end, and bad input. Parity with peft is in
tests/parity/test_lora_parity.py."""

from __future__ import annotations

import json

import numpy as np
import pytest

import minibert as mb
from minibert import functional as F
from minibert.gradcheck import check_loss, check_module, numerical_gradient, rel_error
from minibert.gradcheck.suite import MODEL_TOL, SINGLE_LAYER_TOL, perturb_parameters, small_config
from minibert.layers import Linear
from minibert.lora import LoRALinear, apply_lora, lora_trainable, merge_lora


def _adapter(r=2, alpha=6.0, dropout=0.0, seed=0):
    rng = np.random.default_rng(seed)
    base = Linear(7, 5, rng, dtype=np.float64)
    base.params["weight"] += rng.normal(0, 0.3, (5, 7))
    base.params["bias"] += rng.normal(0, 0.3, 5)
    adapter = LoRALinear(base, r, alpha, dropout, np.random.default_rng(seed + 1))
    return adapter, rng


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_adapter_gradient_check(dropout):
    adapter, rng = _adapter(dropout=dropout)
    adapter.lora_B.params["weight"] += rng.normal(0, 0.5, (5, 2))  # B = 0 would hide dA
    x, upstream = rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 5))
    state = adapter.rng.bit_generator.state  # the same dropout mask at every forward

    def loss():
        adapter.rng.bit_generator.state = state
        return float((adapter(x) * upstream).sum())

    def backward():
        backward.dx = adapter.backward(upstream)

    table = check_loss(adapter, loss, backward, max_entries=None,
                       names={"lora_A.weight", "lora_B.weight"})
    assert [row.name for row in table] == ["lora_A.weight", "lora_B.weight"]
    table.assert_below(SINGLE_LAYER_TOL)
    numeric = numerical_gradient(lambda _x: loss(), x, 1.0)
    assert rel_error(backward.dx, numeric) < SINGLE_LAYER_TOL
    # the frozen W and b: no gradient computed
    assert not adapter.base_layer.grads["weight"].any() and not adapter.base_layer.grads[
        "bias"].any()


def test_broken_backward_is_caught():
    adapter, rng = _adapter()
    adapter.lora_B.params["weight"] += rng.normal(0, 0.5, (5, 2))

    class Unscaled(LoRALinear):
        def backward(self, dout):  # forgets alpha / r on the adapter's path
            dx = dout @ self.base_layer.params["weight"]
            return dx + self.lora_A.backward(self.lora_B.backward(dout))

    broken = Unscaled(adapter.base_layer, 2, 6.0, 0.0, np.random.default_rng(1))
    broken.lora_B.params["weight"][...] = adapter.lora_B.params["weight"]
    assert check_module(broken, {"x": rng.standard_normal((2, 7))}).failures(SINGLE_LAYER_TOL)


def test_first_step_da_is_exactly_zero_and_frozen_weights_get_nothing():
    adapter, rng = _adapter()
    adapter(rng.standard_normal((4, 7)))
    adapter.backward(rng.standard_normal((4, 5)))
    assert np.all(adapter.lora_B.params["weight"] == 0.0)
    assert np.all(adapter.lora_A.grads["weight"] == 0.0)  # B = 0: no signal reaches A
    assert np.linalg.norm(adapter.lora_B.grads["weight"]) > 0.1  # B alone moves first
    assert np.all(adapter.base_layer.grads["weight"] == 0.0)
    assert np.all(adapter.base_layer.grads["bias"] == 0.0)


def test_the_merged_route_is_the_adapter():
    """What BertLayer's page runs: x @ (W + s B A)^T + b, and dA, dB from the merged weight's
    gradient, equal the adapter's own forward and backward (dropout off)."""
    adapter, rng = _adapter()
    adapter.lora_B.params["weight"] += rng.normal(0, 0.5, (5, 2))
    x, upstream = rng.standard_normal((2, 3, 7)), rng.standard_normal((2, 3, 5))
    expected = adapter(x)
    adapter.backward(upstream)
    expected_grads = {name: grad.copy() for name, grad in adapter.named_gradients()}
    adapter.zero_grad()
    weight, bias = adapter.merged_parameters()
    out, cache = F.linear_forward(x, weight, bias)
    assert rel_error(out, expected) < 1e-14
    _, dweight, _ = F.linear_backward(upstream, cache)
    adapter.merged_backward(dweight)
    for name, grad in adapter.named_gradients():  # the frozen W and b: zero in both
        np.testing.assert_allclose(grad, expected_grads[name], rtol=1e-12, atol=1e-14,
                                   err_msg=name)
    with_dropout, _ = _adapter(dropout=0.3)
    with pytest.raises(ValueError, match=r"dropout=0.3 in training mode has no merged weight"):
        with_dropout.merged_parameters()
    with_dropout.eval().merged_parameters()  # eval: the dropout is off, the weight exact


def test_merge_and_unmerge_give_identical_outputs():
    adapter, rng = _adapter()
    adapter.lora_B.params["weight"] += rng.normal(0, 0.5, (5, 2))
    original = adapter.base_layer.params["weight"].copy()
    x = rng.standard_normal((3, 7))
    separate = adapter(x)
    adapter.merge()
    merged = adapter(x)
    adapter.unmerge()
    again = adapter(x)
    scale = np.abs(separate).max()
    assert np.abs(merged - separate).max() <= 1e-12 * scale
    assert np.abs(again - separate).max() <= 1e-12 * scale
    assert np.abs(adapter.base_layer.params["weight"] - original).max() <= 1e-14
    with pytest.raises(RuntimeError, match="merged"):
        adapter.merge()
        adapter.backward(np.ones((3, 5)))


def test_classifier_with_adapters_end_to_end():
    config = small_config(num_labels=3)
    model = mb.BertForSequenceClassification(config, seed=0, dtype=np.float64).eval()
    perturb_parameters(model, np.random.default_rng(2))
    names = apply_lora(model, r=2, alpha=4.0, seed=3)
    assert len(names) == 2 * config.num_hidden_layers
    assert "bert.encoder.layer.0.attention.self.query" in names
    trainable = lora_trainable(model, also=["classifier"])
    for name, value in trainable.named_parameters():
        if "lora_B" in name:  # away from 0 for the check
            value += np.random.default_rng(4).normal(0, 0.3, value.shape)
    rng = np.random.default_rng(5)
    input_ids = rng.integers(1, config.vocab_size, size=(3, 6))
    mask = np.ones_like(input_ids)
    mask[2, 4:] = 0
    labels = np.array([0, 2, 1])

    def loss():
        return model(input_ids, attention_mask=mask, labels=labels).loss

    frozen_before = {name: grad.copy() for name, grad in model.named_gradients()
                     if "base_layer" in name}
    table = check_loss(trainable, loss, model.backward, max_entries=12)
    table.assert_below(MODEL_TOL)
    assert {row.name for row in table} == {name for name, _ in trainable.named_parameters()}
    for name, grad in model.named_gradients():
        if "base_layer" in name:
            assert np.array_equal(grad, frozen_before[name]), name  # never computed
    adapted = model(input_ids, attention_mask=mask).logits
    assert merge_lora(model) == len(names)
    assert not any("lora" in name for name, _ in model.named_parameters())
    merged = model(input_ids, attention_mask=mask).logits
    assert np.abs(merged - adapted).max() <= 1e-12 * np.abs(adapted).max()


@pytest.mark.parametrize("kwargs, message", [
    (dict(r=0), r"r \(the LoRA rank\) must be an integer in \[1, min\(in, out\) = 5\].*got 0"),
    (dict(r=6), r"min\(in, out\) = 5.*got 6"),
    (dict(r=2, alpha=0.0), "alpha"),
    (dict(r=2, alpha=-1.0), "alpha"),
    (dict(r=2, dropout=1.0), "dropout"),
])
def test_bad_input_is_one_clear_line(kwargs, message):
    base = Linear(7, 5, np.random.default_rng(0), dtype=np.float64)
    with pytest.raises(ValueError, match=message):
        LoRALinear(base, **{"alpha": 8.0, **kwargs})


def test_apply_lora_refuses_unknown_targets():
    model = mb.BertModel(small_config(), seed=0)
    with pytest.raises(ValueError, match="target_modules .* name no Linear"):
        apply_lora(model, r=2, target_modules=["nonexistent"])
    with pytest.raises(ValueError, match="no LoRA adapter"):
        lora_trainable(model)


def test_finetune_with_lora_trains_adapters_and_head_only(tmp_path, capsys):
    from minibert.cli import main

    out = tmp_path / "lora"
    assert main(["finetune", "--task", "classify", "--model", "tiny-toy", "-o", str(out),
                 "--train-size", "16", "--test-size", "8", "--epochs", "1", "--lora", "2",
                 "--json"]) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    config = mb.BertConfig.from_json_file(out / "config.json")
    hidden, layers, labels = config.hidden_size, config.num_hidden_layers, config.num_labels
    adapters = layers * 2 * 2 * (hidden + hidden)  # query and value: A (2, H) and B (H, 2)
    assert metrics["trained_parameters"] == adapters + labels * hidden + labels
    reloaded = mb.BertForSequenceClassification.from_pretrained(out)  # merged: plain names
    assert not any("lora" in name for name, _ in reloaded.named_parameters())
    capsys.readouterr()
    assert main(["finetune", "--task", "classify", "--model", "tiny-toy", "-o",
                 str(tmp_path / "bad"), "--lora", "0"]) == 2
    assert "--lora" in capsys.readouterr().err
    assert main(["finetune", "--task", "classify", "--model", "tiny-toy", "-o",
                 str(tmp_path / "bad"), "--lora", "1000", "--train-size", "16"]) == 2
    assert "min(in, out) = 128" in capsys.readouterr().err
