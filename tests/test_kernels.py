"""The fast twins in minibert.kernels equal the reference pairs in minibert.functional.

Tolerances, and why:

- float64: a twin does the same arithmetic in another order (in-place updates, a sum as a
  BLAS product, the scale applied before the product), so the two differ by rounding
  alone: a few ulps of the values involved. Compared as a norm-wise relative error below
  1e-12 (float64's ulp is 2.2e-16; the longest sums here have a few hundred terms).
- float32, the same arithmetic: rounding of float32 (ulp 1.2e-7), again a few ulps:
  below 1e-5 norm-wise relative error.
- float32 GELU: the twin's Phi is Abramowitz & Stegun's 7.1.26 fit with absolute error
  below 2.7e-7 in float32 (the reference rounds the float64 erf), so |GELU error| <=
  3e-7 |x| plus rounding.
"""

import math
import subprocess
import sys

import numpy as np
import pytest

import minibert as mb
from minibert import functional as F
from minibert import kernels as K
from minibert.gradcheck import check_loss, rel_error
from minibert.gradcheck.suite import MODEL_TOL, perturb_parameters, small_config
from minibert.layers import pair_function

F64_TOL = 1e-12
F32_TOL = 1e-5


def relative_to_partner(a, b) -> float:
    """rel_error, but 0 when both are exactly zero (a zero array has no relative scale)."""
    a, b = np.asarray(a, np.float64), np.asarray(b, np.float64)
    if not a.any() and not b.any():
        return 0.0
    return rel_error(a, b)


def inputs_for(name, rng, dtype):
    x = (2 * rng.standard_normal((3, 7, 16))).astype(dtype)
    if name == "layernorm":
        return (x, (1.5 + rng.standard_normal(16)).astype(dtype),
                rng.standard_normal(16).astype(dtype)), {"eps": 1e-5}
    if name == "gelu_none":
        return (x,), {"approximate": "none"}
    if name == "gelu_tanh":
        return (x,), {"approximate": "tanh"}
    if name == "attention":
        q, k, v = (rng.standard_normal((2, 3, 5, 4)).astype(dtype) for _ in range(3))
        mask = np.ones((2, 1, 1, 5), dtype=bool)
        mask[1, ..., 3:] = False
        return (q, k, v, mask), {}
    if name == "linear":
        return (x, rng.standard_normal((5, 16)).astype(dtype),
                rng.standard_normal(5).astype(dtype)), {}
    if name == "cross_entropy":
        logits = (3 * rng.standard_normal((4, 6, 9))).astype(dtype)
        labels = rng.integers(0, 9, size=(4, 6))
        labels[1, 2] = labels[3, 0] = -100
        return (logits, labels), {}
    raise KeyError(name)


PAIRS = {
    "layernorm": (F.layernorm_forward, F.layernorm_backward),
    "linear": (F.linear_forward, F.linear_backward),
    "gelu_none": (F.gelu_forward, F.gelu_backward),
    "gelu_tanh": (F.gelu_forward, F.gelu_backward),
    "attention": (F.attention_forward, F.attention_backward),
    "cross_entropy": (F.cross_entropy_forward, F.cross_entropy_backward),
}


def twin(function):
    """The fast twin of a ``functional`` function, or the function itself if it has none."""
    return K.TWINS.get(function.__name__, function)


def compare_pair(name, dtype, seed=0):
    """Largest relative error between the twin and the reference, forward and backward."""
    forward, backward = PAIRS[name]
    rng = np.random.default_rng(seed)
    args, kwargs = inputs_for(name, rng, dtype)
    out_ref, cache_ref = forward(*args, **kwargs)
    out_fast, cache_fast = twin(forward)(*args, **kwargs)
    assert np.asarray(out_fast).dtype == np.asarray(out_ref).dtype == dtype
    dout = (rng.standard_normal(out_ref.shape).astype(dtype) if out_ref.ndim
            else float(rng.uniform(0.5, 2.0)))  # a loss gets a scalar upstream gradient
    kept = np.copy(dout)
    errors = [rel_error(out_fast, out_ref)]
    grads_ref = backward(dout, cache_ref)
    grads_fast = twin(backward)(dout, cache_fast)
    # the twin's backward also accepts its reference's cache (the switch turned on between)
    grads_crossed = twin(backward)(dout, cache_ref)
    assert np.array_equal(dout, kept), "a backward modified its upstream gradient"

    def as_tuple(grads):
        return grads if isinstance(grads, tuple) else (grads,)

    for ref, fast_, crossed in zip(as_tuple(grads_ref), as_tuple(grads_fast),
                                   as_tuple(grads_crossed), strict=True):
        errors += [relative_to_partner(fast_, ref), relative_to_partner(crossed, ref)]
    return max(errors)


@pytest.mark.parametrize("name", sorted(PAIRS))
@pytest.mark.parametrize("seed", [0, 1])
def test_twins_equal_the_reference_in_float64(name, seed):
    forward, backward = PAIRS[name]
    assert twin(forward) is not forward or twin(backward) is not backward, "no twin"
    assert compare_pair(name, np.float64, seed) < F64_TOL


@pytest.mark.parametrize("name", ["layernorm", "linear", "gelu_tanh", "attention",
                                  "cross_entropy"])
def test_twins_equal_the_reference_in_float32(name):
    assert compare_pair(name, np.float32) < F32_TOL


def test_a_broken_twin_is_caught(monkeypatch):
    def broken_layernorm_backward(dout, cache):
        dx, dweight, dbias = K.layernorm_backward(dout, cache)
        return dx * 1.0001, dweight, dbias

    monkeypatch.setitem(K.TWINS, "layernorm_backward", broken_layernorm_backward)
    assert compare_pair("layernorm", np.float64) > 1e-5


def test_embedding_backward_twin_adds_in_the_same_order():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((11, 6)).astype(np.float32)
    ids = rng.integers(0, 11, size=(4, 9))  # repeated ids
    _, cache = F.embedding_forward(ids, weight)
    dout = rng.standard_normal((4, 9, 6)).astype(np.float32)
    assert np.array_equal(K.embedding_backward(dout, cache), F.embedding_backward(dout, cache))


def test_float32_gelu_twin_is_within_the_phi_fit_error():
    x64 = np.concatenate([np.linspace(-12, 12, 100001),
                          np.random.default_rng(4).standard_normal(50000) * 4])
    x32 = x64.astype(np.float32)
    exact = F.gelu_forward(x32.astype(np.float64), "none")[0]  # same rounded inputs
    out, cache = K.gelu_forward(x32, "none")
    assert out.dtype == np.float32
    # |x| * |Phi error| with Phi accurate to 3e-7, plus float32 rounding of the product
    bound = 3e-7 * np.abs(x64) + 1e-7 * np.abs(exact) + 1e-30
    assert np.all(np.abs(out - exact) <= bound)
    reference = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x32.astype(np.float64)])
    assert np.max(np.abs(cache.cdf.astype(np.float64) - reference)) < 2.7e-7
    # the backward from this cache: Phi's error again, times |dout|
    dout = np.random.default_rng(5).standard_normal(x32.shape).astype(np.float32)
    exact_grad = F.gelu_backward(dout.astype(np.float64),
                                 F.gelu_forward(x32.astype(np.float64), "none")[1])
    grad = K.gelu_backward(dout, cache)
    assert np.all(np.abs(grad - exact_grad)
                  <= np.abs(dout) * (3e-7 + 3e-7 * np.abs(x64)) + 2e-7 * np.abs(exact_grad))


def test_float32_normal_cdf_and_density_errors_are_as_stated():
    x = np.linspace(-12, 12, 200001).astype(np.float32)
    cdf, pdf = K.normal_cdf_float32(x)
    assert cdf.dtype == pdf.dtype == np.float32
    x64 = x.astype(np.float64)
    reference = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in x64])
    error = np.abs(cdf - reference)
    assert error.max() < 2.7e-7
    # relative error where Phi >= 1e-3; the left tail is tiny but never negative or NaN
    assert (error / reference)[x >= -3.1].max() < 1e-4
    assert np.all(cdf >= 0) and np.all(np.isfinite(cdf))
    assert np.all(np.diff(cdf[x > 0]) >= -3e-7)  # (nearly) monotone where Phi is large
    density = np.exp(-0.5 * x64 * x64) / math.sqrt(2 * math.pi)
    # exp's rounding, and float32's rounding of x^2 / 2 carried into exp (relative 6e-8 of
    # the exponent): the error grows with x^2
    assert np.all(np.abs(pdf - density) <= (3e-7 + 1.2e-7 * x64**2) * density)
    # both signs right, and the sign handling keeps q itself in the left tail
    both = np.array([-2.5, -0.5, 0.0, 0.5, 2.5], dtype=np.float32)
    expected = [0.5 * math.erfc(-v / math.sqrt(2)) for v in both.astype(np.float64)]
    np.testing.assert_allclose(K.normal_cdf_float32(both)[0], expected, rtol=1e-5, atol=0)


# -- the whole model ------------------------------------------------------------------------

def pretraining_step(dtype, fast_on: bool, seed=0):
    config = small_config(hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1)
    model = mb.BertForPreTraining(config, seed=seed, dtype=dtype)
    perturb_parameters(model, np.random.default_rng(seed))
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, config.vocab_size, size=(3, 8))
    mask = np.ones_like(ids)
    mask[1, 6:] = 0
    labels = np.where(rng.random(ids.shape) < 0.3, ids, -100)
    labels[0, 1] = ids[0, 1]
    with mb.fast_kernels(fast_on):
        out = model(ids, rng.integers(0, 2, size=ids.shape), mask, labels=labels,
                    next_sentence_label=np.array([0, 1, 1]), output_attentions=True)
        model.backward()
    return out, dict(model.named_gradients())


@pytest.mark.parametrize("dtype, tol", [(np.float64, 1e-10), (np.float32, 1e-4)])
def test_model_fast_and_reference_paths_agree(dtype, tol):
    # Dropout on: both paths draw the same masks from the same generator.
    fast_out, fast_grads = pretraining_step(dtype, True)
    ref_out, ref_grads = pretraining_step(dtype, False)
    assert abs(fast_out.loss - ref_out.loss) <= tol * abs(ref_out.loss)
    for a, b in zip(fast_out.attentions, ref_out.attentions, strict=True):
        assert rel_error(a, b) < tol
    for name, grad in ref_grads.items():
        if name.endswith("attention.self.key.bias"):
            # Exactly zero in exact arithmetic (softmax ignores a shift shared by all keys):
            # both paths hold rounding noise, measured against the query bias's gradient.
            partner = ref_grads[name.replace("key.bias", "query.bias")]
            assert np.linalg.norm(fast_grads[name] - grad) < tol * np.linalg.norm(partner)
        else:
            assert relative_to_partner(fast_grads[name], grad) < tol, name


@pytest.mark.slow
@pytest.mark.parametrize("fast_on", [True, False])
def test_whole_model_gradient_check_on_both_paths(fast_on):
    config = small_config()
    model = mb.BertForPreTraining(config, seed=1, dtype=np.float64)
    perturb_parameters(model, np.random.default_rng(1))
    model.eval()
    rng = np.random.default_rng(1)
    ids = rng.integers(1, config.vocab_size, size=(2, 6))
    mask = np.ones_like(ids)
    mask[1, 4:] = 0
    labels = np.where(rng.random(ids.shape) < 0.4, ids, -100)
    labels[0, 2] = ids[0, 2]
    nsp = np.array([1, 0])

    def loss():
        return model(ids, attention_mask=mask, labels=labels, next_sentence_label=nsp).loss

    with mb.fast_kernels(fast_on):
        table = check_loss(model, loss, model.backward, max_entries=40)
    table.assert_below(MODEL_TOL)


# -- the switch --------------------------------------------------------------------------------

def test_switch_restores_the_previous_setting_and_checks_its_argument():
    assert not K.fast_kernels_enabled()  # off by default: the model runs what is read
    with mb.fast_kernels(True):
        assert K.fast_kernels_enabled()
        assert pair_function("gelu_forward") is K.gelu_forward
        with mb.fast_kernels(False):
            assert pair_function("gelu_forward") is F.gelu_forward
        assert K.fast_kernels_enabled()
        assert pair_function("relu_forward") is F.relu_forward  # no twin: the reference
    assert not K.fast_kernels_enabled()
    with pytest.raises(TypeError, match="enabled must be True or False, got int 0"):
        mb.set_fast_kernels(0)


def test_environment_variable_starts_with_the_twins():
    code = "import minibert.kernels as K; print(K.fast_kernels_enabled())"
    for value, expected in (("1", "True"), ("0", "False"), ("", "False")):
        result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                                env={"MINIBERT_FAST_KERNELS": value, "PATH": ""}, check=True)
        assert result.stdout.strip() == expected


def test_layers_run_a_replaced_reference_pair_while_the_twins_are_off(monkeypatch):
    # An assignment grader puts a student's function in place of functional.<name>: the
    # model must run it, so the layers look the pair up at each call.
    calls, reference = [], F.layernorm_forward

    def counted_layernorm_forward(*args, **kwargs):
        calls.append(1)
        return reference(*args, **kwargs)

    monkeypatch.setattr(F, "layernorm_forward", counted_layernorm_forward)
    model = mb.BertModel(small_config(), seed=0)
    with mb.fast_kernels(False):
        model(np.array([[2, 5, 7, 3]]))
    assert len(calls) == 1 + 2 * small_config().num_hidden_layers  # embeddings + 2 per block
    calls.clear()
    with mb.fast_kernels(True):
        model(np.array([[2, 5, 7, 3]]))
    assert not calls  # the twin ran instead
