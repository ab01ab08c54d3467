"""Gradient checks and properties of every functional pair (float64, random upstream grads)."""

import math

import numpy as np
import pytest

from minibert import functional as F
from minibert import numerics
from minibert.gradcheck import check_function
from minibert.gradcheck.suite import SINGLE_LAYER_TOL, function_cases

SEEDS = [0, 1, 2]


PAIR_NAMES = [name for name, _ in function_cases(0)]


@pytest.mark.parametrize("name", PAIR_NAMES)
def test_pair_passes_gradient_check(name):
    """float64 centred differences against a random upstream gradient, three seeds."""
    for seed in SEEDS:
        table = dict(function_cases(seed))[name]()
        assert len(table) > 0
        table.assert_below(SINGLE_LAYER_TOL)


SHAPES = [(3,), (2, 5), (2, 3, 4)]


@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("seed", [0, 5])
def test_pairs_on_several_shapes(shape, seed):
    rng = np.random.default_rng(seed)
    x = rng.standard_normal(shape)
    width = shape[-1]
    cases = [
        (F.linear_forward, F.linear_backward,
         {"x": x, "weight": rng.standard_normal((4, width)), "bias": rng.standard_normal(4)}, {}),
        (F.linear_forward, F.linear_backward,
         {"x": x, "weight": rng.standard_normal((4, width)), "bias": None}, {}),
        (F.layernorm_forward, F.layernorm_backward,
         {"x": x, "weight": 1.5 + rng.standard_normal(width), "bias": rng.standard_normal(width)},
         {"eps": 1e-5}),
        (F.gelu_forward, F.gelu_backward, {"x": 3 * x}, {"approximate": "none"}),
        (F.gelu_forward, F.gelu_backward, {"x": 3 * x}, {"approximate": "tanh"}),
        (F.tanh_forward, F.tanh_backward, {"x": x}, {}),
        (F.softmax_forward, F.softmax_backward, {"x": x}, {"axis": 0}),
        (F.softmax_forward, F.softmax_backward, {"x": x}, {"axis": -1}),
    ]
    for forward, backward, inputs, kwargs in cases:
        check_function(forward, backward, inputs, kwargs=kwargs, seed=seed).assert_below(
            SINGLE_LAYER_TOL)


def test_cross_entropy_gradient_on_flat_and_batched_logits():
    rng = np.random.default_rng(3)
    for shape in [(6, 5), (2, 4, 9)]:
        logits = 3 * rng.standard_normal(shape)
        labels = rng.integers(0, shape[-1], size=shape[:-1])
        labels.reshape(-1)[0] = -100
        check_function(F.cross_entropy_forward, F.cross_entropy_backward,
                       {"logits": logits, "labels": labels}).assert_below(SINGLE_LAYER_TOL)


def test_checker_catches_a_wrong_backward():
    rng = np.random.default_rng(0)

    def layernorm_backward_missing_term(dout, cache):
        x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
        dx_hat = dout * weight
        dx = rstd * (dx_hat - dx_hat.mean(-1, keepdims=True))  # the x_hat term is dropped
        axes = tuple(range(dout.ndim - 1))
        return dx, (dout * x_hat).sum(axes), dout.sum(axes)

    inputs = {"x": rng.standard_normal((3, 5)), "weight": 1 + rng.standard_normal(5),
              "bias": rng.standard_normal(5)}
    table = check_function(F.layernorm_forward, layernorm_backward_missing_term, inputs)
    with pytest.raises(AssertionError, match="x"):
        table.assert_below(SINGLE_LAYER_TOL)

    def softmax_backward_zeros(dout, cache):
        return np.zeros_like(cache.probs)

    table = check_function(F.softmax_forward, softmax_backward_zeros,
                           {"x": rng.standard_normal((2, 4))})
    with pytest.raises(AssertionError):
        table.assert_below(SINGLE_LAYER_TOL)


# -- erf ----------------------------------------------------------------------------------------

def test_erf_matches_math_erf_on_the_whole_real_line():
    rng = np.random.default_rng(0)
    xs = np.concatenate([
        np.linspace(-8, 8, 40001), rng.standard_normal(20000) * 3,
        [0.0, -0.0, 1e-300, -1e-300, 1e-8, 1.9999999999999, 2.0, 2.0000000000001, 5.999999, 6.0,
         27.0, -27.0, 1e300, -1e300, np.inf, -np.inf],
    ])
    reference = np.array([math.erf(v) for v in xs])
    assert np.max(np.abs(F.erf(xs) - reference)) < 1e-12
    small = np.abs(xs) < 1e-3
    assert np.max(np.abs(F.erf(xs[small]) - reference[small]) / np.maximum(
        np.abs(reference[small]), 1e-300)) < 1e-12
    assert np.isnan(F.erf(np.array([np.nan])))[0]
    assert F.erf(3).dtype == np.float64 and F.erf(np.float32(0.5)).dtype == np.float32


def test_float32_erf_and_normal_cdf_are_within_float32_rounding():
    xs = np.concatenate([np.linspace(-12, 12, 48001), [0.0, 1e-30, -1e-30, 1e-6, np.inf, -np.inf]])
    as32 = xs.astype(np.float32)
    erf_reference = np.array([math.erf(v) for v in as32.astype(np.float64)])
    # one float32 ulp at 1 is 1.2e-7: each result within two of them, and near 0 (Cody's
    # first interval) within two ulps of its own size: relative accuracy is kept there
    erf32 = F.erf(as32)
    error = np.abs(erf32 - erf_reference)
    near_zero = np.abs(as32) <= 0.46875
    assert erf32.dtype == np.float32 and np.max(error) < 2.4e-7
    assert np.all(error[near_zero] <= 2.4e-7 * np.abs(erf_reference[near_zero]))
    cdf_reference = np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in as32.astype(np.float64)])
    cdf32 = F.normal_cdf(as32)
    assert cdf32.dtype == np.float32 and np.max(np.abs(cdf32 - cdf_reference)) < 2.4e-7
    # the left tail keeps its relative accuracy (Phi(-12) = 1.8e-33, a float32 normal number)
    left = (as32 < 0) & np.isfinite(as32)
    assert np.max(np.abs(cdf32 - cdf_reference)[left] / cdf_reference[left]) < 1e-4
    cdf64 = F.normal_cdf(xs)
    assert np.max(np.abs(cdf64 - np.array([0.5 * math.erfc(-v / math.sqrt(2)) for v in xs]))) \
        < 1e-15


# -- masking, stability -------------------------------------------------------------------------

def test_masked_keys_get_exactly_zero_and_empty_rows_give_zeros():
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))
    mask = np.ones((2, 1, 1, 4), dtype=np.int64)
    mask[0, ..., 2:] = 0
    mask[1] = 0  # no visible key at all for the second example
    context, cache = F.attention_forward(q, k, v, mask)
    probs = cache.attention_probs
    assert np.all(probs[0, :, :, 2:] == 0.0)
    np.testing.assert_allclose(probs[0].sum(-1), 1.0, rtol=1e-12)
    assert np.all(probs[1] == 0.0) and np.all(context[1] == 0.0)
    assert np.all(np.isfinite(context))
    dq, dk, dv = F.attention_backward(rng.standard_normal(context.shape), cache)
    assert all(np.all(np.isfinite(g)) for g in (dq, dk, dv))
    assert np.all(dk[0, :, 2:] == 0.0) and np.all(dv[0, :, 2:] == 0.0)


def test_attention_matches_a_per_head_loop_reference():
    rng = np.random.default_rng(1)
    q, k, v = (rng.standard_normal((2, 3, 4, 5)) for _ in range(3))
    mask = np.array([[1, 1, 1, 0], [1, 1, 1, 1]])[:, None, None, :]
    context, _ = F.attention_forward(q, k, v, mask)
    for b in range(2):
        for h in range(3):
            scores = q[b, h] @ k[b, h].T / math.sqrt(5)
            scores[:, mask[b, 0, 0] == 0] = -np.inf
            weights = np.exp(scores - scores.max(-1, keepdims=True))
            weights /= weights.sum(-1, keepdims=True)
            # Each context entry is a weighted mean of values, so the values' scale bounds
            # its rounding; an entry near 0 has no meaningful relative error of its own.
            scale = np.abs(v[b, h]).max()
            np.testing.assert_allclose(context[b, h], weights @ v[b, h], rtol=0,
                                       atol=1e-12 * scale)


def test_softmax_and_cross_entropy_are_finite_and_exact_for_huge_logits():
    logits = np.array([[1e4, -1e4, 0.0], [-1e4, -1e4, -1e4]])
    probs, _ = F.softmax_forward(logits)
    np.testing.assert_array_equal(probs[0], [1.0, 0.0, 0.0])
    np.testing.assert_allclose(probs[1], 1 / 3, rtol=1e-15)
    loss, cache = F.cross_entropy_forward(logits, np.array([0, 2]))
    assert np.isfinite(loss)
    np.testing.assert_allclose(loss, math.log(3) / 2, rtol=1e-14)
    loss_wrong, cache_wrong = F.cross_entropy_forward(logits, np.array([1, 2]))
    np.testing.assert_allclose(loss_wrong, (2e4 + math.log(3)) / 2, rtol=1e-14)
    assert np.all(np.isfinite(F.cross_entropy_backward(1.0, cache_wrong)))


def test_layernorm_of_a_constant_row_is_finite():
    x = np.full((2, 8), 3.25)
    for dtype in (np.float32, np.float64):
        out, cache = F.layernorm_forward(x.astype(dtype), np.ones(8, dtype), np.zeros(8, dtype))
        assert np.all(np.isfinite(out)) and np.all(out == 0)
        dx, _, _ = F.layernorm_backward(np.ones_like(out), cache)
        assert np.all(np.isfinite(dx))


def test_cross_entropy_with_every_label_ignored():
    logits = np.random.default_rng(0).standard_normal((3, 4))
    loss, cache = F.cross_entropy_forward(logits, np.full(3, -100))
    assert loss == 0.0
    dlogits = F.cross_entropy_backward(1.0, cache)
    assert dlogits.shape == logits.shape and np.all(dlogits == 0.0)


def test_cross_entropy_ignores_labels_exactly():
    rng = np.random.default_rng(2)
    logits = rng.standard_normal((5, 6))
    labels = np.array([1, -100, 3, -100, 0])
    loss, _ = F.cross_entropy_forward(logits, labels)
    keep = labels != -100
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    expected = -log_probs[keep, labels[keep]].mean()
    np.testing.assert_allclose(loss, expected, rtol=1e-14)


# -- dropout ------------------------------------------------------------------------------------

def test_dropout_identity_in_eval_and_with_p_zero():
    x = np.random.default_rng(0).standard_normal((4, 5))
    out, cache = F.dropout_forward(x, 0.5, np.random.default_rng(1), training=False)
    assert out is x and cache is None
    out, cache = F.dropout_forward(x, 0.0, np.random.default_rng(1), training=True)
    assert out is x and F.dropout_backward(x, cache) is x


def test_dropout_mask_reproducible_and_expectation_preserved():
    x = np.ones((400, 500))
    a, _ = F.dropout_forward(x, 0.3, np.random.default_rng(42))
    b, _ = F.dropout_forward(x, 0.3, np.random.default_rng(42))
    c, _ = F.dropout_forward(x, 0.3, np.random.default_rng(43))
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)
    kept = a != 0
    np.testing.assert_allclose(a[kept], 1 / 0.7)
    # mean of 200,000 scaled Bernoulli(0.7) draws: std of the mean ~ 0.0015
    assert abs(a.mean() - 1.0) < 0.01
    assert abs(kept.mean() - 0.7) < 0.01


def test_dropout_works_in_float32():
    x = np.ones((10, 10), dtype=np.float32)
    out, cache = F.dropout_forward(x, 0.5, np.random.default_rng(0))
    assert out.dtype == np.float32 and F.dropout_backward(x, cache).dtype == np.float32


# -- dtypes -------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_every_forward_keeps_the_dtype(dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 3, 4)).astype(dtype)
    w = rng.standard_normal((5, 4)).astype(dtype)
    assert F.linear_forward(x, w, np.zeros(5, dtype))[0].dtype == dtype
    assert F.layernorm_forward(x, np.ones(4, dtype), np.zeros(4, dtype))[0].dtype == dtype
    for form in ("none", "tanh"):
        out, cache = F.gelu_forward(x, form)
        assert out.dtype == dtype and F.gelu_backward(x, cache).dtype == dtype
    assert F.softmax_forward(x)[0].dtype == dtype
    assert F.tanh_forward(x)[0].dtype == dtype
    q = x[None]
    context, cache = F.attention_forward(q, q, q, np.ones((1, 1, 1, 3)))
    assert context.dtype == dtype
    assert all(g.dtype == dtype for g in F.attention_backward(context, cache))
    loss, cache = F.cross_entropy_forward(x, np.zeros((2, 3), dtype=np.int64))
    assert F.cross_entropy_backward(1.0, cache).dtype == dtype
    assert F.embedding_forward(np.array([0, 1]), w)[0].dtype == dtype


def test_backward_never_modifies_the_upstream_gradient():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2, 2, 3, 4))
    dout = rng.standard_normal((2, 2, 3, 4))
    saved = dout.copy()
    _, cache = F.attention_forward(x, x, x, np.ones((2, 1, 1, 3)), dropout_p=0.1,
                                   rng=np.random.default_rng(0), training=True)
    F.attention_backward(dout, cache)
    _, cache = F.layernorm_forward(x, np.ones(4), np.zeros(4))
    F.layernorm_backward(dout, cache)
    _, cache = F.gelu_forward(x)
    F.gelu_backward(dout, cache)
    _, cache = F.softmax_forward(x)
    F.softmax_backward(dout, cache)
    _, cache = F.gelu_forward(x, "tanh")
    F.gelu_backward(dout, cache)
    _, cache = F.tanh_forward(x)
    F.tanh_backward(dout, cache)
    _, cache = F.linear_forward(x, rng.standard_normal((4, 4)), rng.standard_normal(4))
    F.linear_backward(dout, cache)
    _, cache = F.dropout_forward(x, 0.5, np.random.default_rng(1))
    F.dropout_backward(dout, cache)
    np.testing.assert_array_equal(dout, saved)


def test_forward_never_modifies_its_inputs():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 2, 3, 4)).astype(np.float32)
    saved = x.copy()
    mask = np.array([1, 1, 0])[None, None, None, :]
    F.attention_forward(x, x, x, mask)
    F.layernorm_forward(x, np.ones(4, np.float32), np.zeros(4, np.float32))
    for form in ("none", "tanh"):
        F.gelu_forward(x, form)
    F.softmax_forward(x)
    F.cross_entropy_forward(x, np.zeros((2, 2, 3), dtype=np.int64))
    F.erf(x)
    F.normal_cdf(x)
    np.testing.assert_array_equal(x, saved)


def test_erf_and_normal_cdf_work_through_several_blocks():
    """Inputs longer than one block give each value what it gets on its own."""
    block = numerics.ERF_BLOCK
    x = np.random.default_rng(2).standard_normal(block * 2 + 7).astype(np.float32) * 3
    whole_erf, whole_cdf = F.erf(x), F.normal_cdf(x)
    for piece in (slice(0, 5), slice(block - 3, block + 3), slice(-5, None)):
        np.testing.assert_array_equal(whole_erf[piece], F.erf(x[piece]))
        np.testing.assert_array_equal(whole_cdf[piece], F.normal_cdf(x[piece]))


def test_embedding_backward_accumulates_repeated_ids():
    weight = np.random.default_rng(0).standard_normal((5, 3))
    ids = np.array([[1, 1, 4]])
    _, cache = F.embedding_forward(ids, weight)
    dout = np.arange(9.0).reshape(1, 3, 3)
    dweight = F.embedding_backward(dout, cache)
    np.testing.assert_array_equal(dweight[1], dout[0, 0] + dout[0, 1])
    np.testing.assert_array_equal(dweight[4], dout[0, 2])
    assert np.all(dweight[[0, 2, 3]] == 0)


def test_float32_gelu_is_within_float32_rounding_of_the_float64_form():
    x = np.random.default_rng(4).standard_normal(1000).astype(np.float32) * 4
    out, cache = F.gelu_forward(x, "none")
    assert out.dtype == cache.cdf.dtype == np.float32
    exact = F.gelu_forward(x.astype(np.float64), "none")[0]
    # Phi in float32 within 2.4e-7 (two ulps at 1), times x, then one float32 product
    assert np.all(np.abs(out - exact) <= 2.4e-7 * np.abs(x) + 6e-8 * np.abs(exact))
