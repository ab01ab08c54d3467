"""The gradient checker itself: its error measure, its differences, its refusals."""

import subprocess
import sys

import numpy as np
import pytest

from minibert import functional as F
from minibert.gradcheck import check_function, check_module, numerical_gradient, rel_error
from minibert.layers import Linear


def test_rel_error_is_normwise():
    a = np.array([1.0, 0.0])
    b = np.array([1.0, 1e-9])
    assert rel_error(a, b) == pytest.approx(1e-9 / 2, rel=1e-6)  # ||a-b|| / (||a||+||b||)
    assert rel_error(np.zeros(3), np.zeros(3)) == 0.0
    with pytest.raises(ValueError, match="same shape"):
        rel_error(np.zeros(2), np.zeros(3))


def test_numerical_gradient_of_a_cubic_and_restores_x():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((3, 4))
    saved = x.copy()
    dout = rng.standard_normal((3, 4))
    grad = numerical_gradient(lambda v: v**3, x, dout)
    assert rel_error(grad, 3 * saved**2 * dout) < 1e-9
    np.testing.assert_array_equal(x, saved)


def test_checker_refuses_float32_and_says_why():
    with pytest.raises(TypeError, match="gradient checks need float64"):
        check_function(F.tanh_forward, F.tanh_backward, {"x": np.zeros(3, dtype=np.float32)})
    with pytest.raises(TypeError, match="float64"):
        check_module(Linear(3, 2, np.random.default_rng(0)), {"x": np.zeros((2, 3))})
    with pytest.raises(TypeError, match="float64"):
        numerical_gradient(lambda v: v, np.zeros(2, dtype=np.float32), np.ones(2))


def test_upstream_gradient_is_random_not_ones():
    """With dout = ones, softmax's true input gradient is 0: a zero backward would pass."""
    seen = {}

    def spy_backward(dout, cache):
        seen["dout"] = dout
        return F.softmax_backward(dout, cache)

    check_function(F.softmax_forward, spy_backward, {"x": np.random.default_rng(0).random((2, 3))})
    assert np.unique(seen["dout"]).size == seen["dout"].size


def test_table_reports_every_input_and_parameter():
    rng = np.random.default_rng(0)
    layer = Linear(3, 2, rng, dtype=np.float64)
    table = check_module(layer, {"x": rng.standard_normal((4, 3))})
    assert [row.name for row in table] == ["x", "weight", "bias"]
    text = str(table)
    assert "rel_error" in text and "max_abs_diff" in text
    assert "<table>" in table._repr_html_()


def test_sampling_large_tables_probes_nonzero_entries():
    rng = np.random.default_rng(0)
    weight = rng.standard_normal((200, 3))
    ids = np.array([[1, 7, 7]])
    table = check_function(F.embedding_forward, F.embedding_backward,
                           {"ids": ids, "weight": weight}, max_entries=10)
    row = table.rows[0]
    assert row.checked == 10 and row.size == 600 and row.analytic_norm > 0
    assert row.rel_error < 1e-7


def test_cli_gradcheck_prints_a_passing_table():
    result = subprocess.run([sys.executable, "-m", "minibert", "gradcheck", "--no-model",
                             "--full"], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert "all gradient checks passed" in result.stdout
    for name in ("linear: weight", "attention: q", "cross_entropy: logits", "BertLayer:"):
        assert name in result.stdout


def test_numerical_gradient_of_a_non_contiguous_view():
    x = np.arange(6.0).reshape(2, 3).T  # a transposed view: reshape(-1) would copy
    dout = np.random.default_rng(1).standard_normal((3, 2))
    grad = numerical_gradient(lambda v: v**2, x, dout)
    assert rel_error(grad, 2 * x * dout) < 1e-9
