"""The Module base and the thin stateful layers."""

import numpy as np
import pytest

from minibert import functional as F
from minibert import layers
from minibert.gradcheck.suite import SINGLE_LAYER_TOL, module_cases

MODULE_NAMES = [name for name, _ in module_cases(0)]


@pytest.mark.parametrize("name", MODULE_NAMES)
def test_layer_passes_gradient_check(name):
    """Every input and parameter of the layer, float64, three seeds."""
    for seed in (0, 1, 2):
        table = dict(module_cases(seed))[name]()
        assert len(table) > 0
        table.assert_below(SINGLE_LAYER_TOL)


def test_the_cases_cover_every_layer_and_block():
    assert {"Linear", "LayerNorm", "Embedding", "BertSelfAttention", "BertLayer"} <= set(
        MODULE_NAMES)


class Block(layers.Module):
    def __init__(self, rng):
        super().__init__()
        self.dense = layers.Linear(3, 4, rng)
        self.LayerNorm = layers.LayerNorm(4)
        self.dropout = layers.Dropout(0.5, rng)
        self.stack = layers.ModuleList([layers.Linear(4, 4, rng) for _ in range(2)])


def test_named_parameters_follow_attribute_paths():
    block = Block(np.random.default_rng(0))
    names = [name for name, _ in block.named_parameters(prefix="bert")]
    assert names == ["bert.dense.weight", "bert.dense.bias", "bert.LayerNorm.weight",
                     "bert.LayerNorm.bias", "bert.stack.0.weight", "bert.stack.0.bias",
                     "bert.stack.1.weight", "bert.stack.1.bias"]
    assert [n for n, _ in block.named_gradients(prefix="bert")] == names
    assert block.num_parameters() == 3 * 4 + 4 + 4 + 4 + 2 * (16 + 4)


def test_zero_grad_clears_in_place_and_train_eval_recurse():
    block = Block(np.random.default_rng(0))
    grads = dict(block.named_gradients())
    for grad in grads.values():
        grad += 1.0
    block.zero_grad()
    assert all(np.all(g == 0) for g in grads.values())
    assert all(a is b for a, b in zip(grads.values(), dict(block.named_gradients()).values()))
    block.eval()
    assert not block.dropout.training and not block.stack[1].training
    block.train()
    assert block.dropout.training and block.stack[0].training


def test_backward_adds_into_gradients():
    rng = np.random.default_rng(0)
    linear = layers.Linear(3, 2, rng, dtype=np.float64)
    x = rng.standard_normal((4, 3))
    dout = rng.standard_normal((4, 2))
    linear(x)
    linear.backward(dout)
    once = linear.grads["weight"].copy()
    linear(x)
    linear.backward(dout)
    np.testing.assert_allclose(linear.grads["weight"], 2 * once)


def test_gelu_flag_is_respected():
    x = np.linspace(-3, 3, 13)
    exact = layers.GELU("none")(x)
    tanh = layers.GELU("tanh")(x)
    assert not np.allclose(exact, tanh, atol=1e-6)
    np.testing.assert_array_equal(exact, F.gelu_forward(x, "none")[0])
    np.testing.assert_array_equal(tanh, F.gelu_forward(x, "tanh")[0])
    assert layers.get_activation("gelu").approximate == "none"
    assert layers.get_activation("gelu_new").approximate == "tanh"
    with pytest.raises(ValueError, match="hidden_act must be one of"):
        layers.get_activation("swish")
    with pytest.raises(ValueError, match="approximate must be 'none' or 'tanh'"):
        layers.GELU("exact")


def test_dropout_module_eval_identity_and_seeded_masks():
    x = np.ones((50, 50))
    a = layers.Dropout(0.4, np.random.default_rng(5))
    b = layers.Dropout(0.4, np.random.default_rng(5))
    np.testing.assert_array_equal(a(x), b(x))
    a.eval()
    assert a(x) is x


def test_module_rejects_non_float_parameters():
    module = layers.Module()
    with pytest.raises(TypeError, match="parameter 'w' must be a float32/float64"):
        module.add_parameter("w", np.zeros(3, dtype=np.int64))


def test_load_state_dict_checks_everything_before_copying():
    block = Block(np.random.default_rng(0))
    state = {k: v.copy() + 1 for k, v in block.state_dict().items()}
    before = {k: v.copy() for k, v in block.state_dict().items()}
    bad = dict(state)
    bad["stack.1.weight"] = np.zeros((3, 3), dtype=np.float32)
    with pytest.raises(ValueError, match=r"state\['stack.1.weight'\] has shape \(3, 3\)"):
        block.load_state_dict(bad)
    for key, value in block.state_dict().items():
        np.testing.assert_array_equal(value, before[key])
    missing = {k: v for k, v in state.items() if k != "dense.bias"}
    with pytest.raises(ValueError, match=r"missing keys: \['dense.bias'\]"):
        block.load_state_dict(missing)
    with pytest.raises(ValueError, match=r"unexpected keys: \['extra'\]"):
        block.load_state_dict({**state, "extra": np.zeros(1)})
    assert block.load_state_dict(missing, strict=False) == (["dense.bias"], [])
    block.load_state_dict(state)
    for key, value in block.state_dict().items():
        np.testing.assert_array_equal(value, state[key])
