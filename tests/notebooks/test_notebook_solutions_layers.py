"""The exercise solutions of notebooks 02-05 are right, and the notebooks' checks can tell.

Notebook 02 has three exercises (a gradient checker, embedding, LayerNorm: the checker is tested in
test_notebook_checks_name_mistakes.py), 03 two (softmax, attention), 04 and 05
one each.

Each solution in ``notebooks/solutions/`` is compared with the backward in
``minibert.functional`` and checked against finite differences on inputs of its own. Then the
notebook's own check cell (tagged ``exercise-check``) is run exactly as committed: it must say
"pass" for the solution, "not implemented yet" for the unsolved stub, and "fail" for a
deliberately broken backward, so a student's wrong answer cannot pass.
"""

from __future__ import annotations

import importlib.util
import json
import math
from pathlib import Path

import numpy as np
import pytest

from minibert import functional as F
from minibert.gradcheck import check_function, rel_error

NOTEBOOK_DIR = Path(__file__).resolve().parents[2] / "notebooks"
TOL = 1e-7  # one layer, float64


def load_solution(stem: str, name: str):
    """The function ``name`` from notebooks/solutions/<stem>_solutions.py."""
    path = NOTEBOOK_DIR / "solutions" / f"{stem}_solutions.py"
    spec = importlib.util.spec_from_file_location(f"{stem}_solutions", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return getattr(module, name)


def notebook_check(stem: str, student_name: str, check_name: str, student):
    """Run the notebook's committed check cell (the one defining ``check_name``) with
    ``student`` as the exercise function.

    Returns the cell's verdict and the check function it defines, so that the check can be
    called on other candidates.
    """
    notebook = json.loads((NOTEBOOK_DIR / f"{stem}.ipynb").read_text(encoding="utf-8"))
    cells = [cell for cell in notebook["cells"]
             if "exercise-check" in cell.get("metadata", {}).get("tags", [])
             and f"def {check_name}(" in "".join(cell["source"])]
    assert len(cells) == 1, f"{stem}: expected one exercise-check cell defining {check_name}"
    code = "".join(cells[0]["source"])
    namespace = {student_name: student}
    exec(compile(code, f"{stem}:exercise-check", "exec"), namespace)
    return namespace["verdict"], namespace[check_name]


def stub(*args, **kwargs):
    """An exercise left unsolved: what a student's file holds before the work."""
    raise NotImplementedError("your turn")


def modifies_dout(backward):
    """A backward with the right gradients that zeroes its caller's dout afterwards."""
    def wrapped(dout, cache):
        result = backward(dout.copy(), cache)
        dout[...] = 0.0
        return result
    return wrapped


# ----------------------------------------------------------------------------------------
# 02: LayerNorm
# ----------------------------------------------------------------------------------------

LAYERNORM = ("02_embeddings_layernorm", "my_layernorm_backward", "check_layernorm_backward")


@pytest.mark.parametrize("shape", [(7, 5), (2, 3, 6), (2, 2, 3, 4)])
def test_layernorm_solution_matches_functional_and_finite_differences(shape):
    backward = load_solution(*LAYERNORM[:2])
    rng = np.random.default_rng(sum(shape))
    x = 1.5 * rng.standard_normal(shape) - 0.3
    weight, bias = 1.0 + rng.standard_normal(shape[-1]), rng.standard_normal(shape[-1])
    out, cache = F.layernorm_forward(x, weight, bias)
    dout = rng.standard_normal(out.shape)
    for got, expected in zip(backward(dout, cache), F.layernorm_backward(dout.copy(), cache),
                               strict=True):
        assert got.shape == expected.shape
        assert rel_error(got, expected) < 1e-12
    check_function(F.layernorm_forward, backward,
                   {"x": x, "weight": weight, "bias": bias}).assert_below(TOL)


def test_layernorm_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*LAYERNORM[:2])
    verdict, check = notebook_check(*LAYERNORM, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def forgets_the_mean(dout, cache):
        rstd, weight = cache.rstd, cache.weight
        dx, dweight, dbias = solution(dout, cache)
        dx_hat = dout * weight
        return dx + rstd * dx_hat.mean(axis=-1, keepdims=True), dweight, dbias

    assert check(forgets_the_mean) == "fail"
    assert check(modifies_dout(solution)) == "fail"
    assert "dout was modified in place" in capsys.readouterr().out
    assert check(lambda dout, cache: solution(dout, cache)[:2]) == "fail"


# ----------------------------------------------------------------------------------------
# 02: embedding
# ----------------------------------------------------------------------------------------

EMBEDDING = ("02_embeddings_layernorm", "my_embedding_backward", "check_embedding_backward")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_embedding_solution_matches_functional_and_finite_differences(dtype):
    backward = load_solution(*EMBEDDING[:2])
    rng = np.random.default_rng(3)
    ids = rng.integers(0, 6, size=(3, 7))  # (B, T) with V = 9: repeats and unused rows
    weight = rng.standard_normal((9, 4)).astype(dtype)  # (V, H)
    out, cache = F.embedding_forward(ids, weight)
    dout = rng.standard_normal(out.shape).astype(dtype)
    got = backward(dout, cache)
    assert got.dtype == dtype
    np.testing.assert_allclose(got, F.embedding_backward(dout, cache), rtol=1e-6, atol=1e-6)
    if dtype == np.float64:
        check_function(F.embedding_forward, backward,
                       {"ids": ids, "weight": weight}).assert_below(TOL)


def test_embedding_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*EMBEDDING[:2])
    verdict, check = notebook_check(*EMBEDDING, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def buffered_one_liner(dout, cache):
        dweight = np.zeros(cache.weight_shape, dtype=cache.dtype)
        dweight[cache.ids] += dout  # keeps one gradient per repeated id
        return dweight

    def always_float64(dout, cache):
        return solution(dout, cache).astype(np.float64)

    assert check(buffered_one_liner) == "fail"
    assert "rows [2, 3, 7] differ" in capsys.readouterr().out
    assert check(always_float64) == "fail"
    assert "use cache.dtype" in capsys.readouterr().out
    assert check(modifies_dout(solution)) == "fail"
    assert check(lambda dout, cache: solution(dout, cache)[:-1]) == "fail"


# ----------------------------------------------------------------------------------------
# 03: attention
# ----------------------------------------------------------------------------------------

ATTENTION = ("03_attention", "my_attention_backward", "check_attention_backward")


@pytest.mark.parametrize("with_mask", [False, True])
def test_attention_solution_matches_functional_and_finite_differences(with_mask):
    backward = load_solution(*ATTENTION[:2])
    rng = np.random.default_rng(7 + with_mask)
    q, k, v = (rng.standard_normal((2, 3, 6, 4)) for _ in range(3))  # (B, N, T, D)
    mask = None
    if with_mask:
        mask = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], dtype=bool)[:, None, None, :]
    out, cache = F.attention_forward(q, k, v, mask)
    dout = rng.standard_normal(out.shape)
    for got, expected in zip(backward(dout, cache), F.attention_backward(dout.copy(), cache),
                               strict=True):
        assert rel_error(got, expected) < 1e-12
    check_function(F.attention_forward, backward, {"q": q, "k": k, "v": v},
                   kwargs={"mask": mask}).assert_below(TOL)


def test_attention_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*ATTENTION[:2])
    verdict, check = notebook_check(*ATTENTION, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def forgets_the_scale(dout, cache):
        dq, dk, dv = solution(dout, cache)
        scale = cache.scale
        return dq / scale, dk, dv

    assert check(forgets_the_scale) == "fail"
    assert check(modifies_dout(solution)) == "fail"


# ----------------------------------------------------------------------------------------
# 03: softmax
# ----------------------------------------------------------------------------------------

SOFTMAX = ("03_attention", "my_softmax_backward", "check_softmax_backward")


@pytest.mark.parametrize("axis", [-1, 0, 2])
def test_softmax_solution_matches_functional_and_finite_differences(axis):
    backward = load_solution(*SOFTMAX[:2])
    rng = np.random.default_rng(9)
    x = 2.0 * rng.standard_normal((3, 4, 5))
    out, cache = F.softmax_forward(x, axis=axis)
    dout = rng.standard_normal(out.shape)
    assert rel_error(backward(dout, cache), F.softmax_backward(dout.copy(), cache)) < 1e-14
    check_function(F.softmax_forward, backward, {"x": x},
                   kwargs={"axis": axis}).assert_below(TOL)


def test_softmax_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*SOFTMAX[:2])
    verdict, check = notebook_check(*SOFTMAX, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def forgets_the_coupling(dout, cache):
        return cache.probs * dout  # the diagonal of the Jacobian only

    def last_axis_only(dout, cache):
        probs = cache.probs
        return probs * (dout - (dout * probs).sum(axis=-1, keepdims=True))

    def returns_zeros(dout, cache):  # passes a check whose upstream gradient is all ones
        return np.zeros_like(cache.probs)

    assert check(forgets_the_coupling) == "fail"
    assert check(last_axis_only) == "fail"
    assert "axis=1" in capsys.readouterr().out
    assert check(returns_zeros) == "fail"
    assert check(modifies_dout(solution)) == "fail"


# ----------------------------------------------------------------------------------------
# 04: GELU
# ----------------------------------------------------------------------------------------

GELU = ("04_feedforward_block", "my_gelu_backward", "check_gelu_backward")


def test_gelu_solution_matches_functional_and_finite_differences():
    backward = load_solution(*GELU[:2])
    rng = np.random.default_rng(11)
    x = 4.0 * rng.standard_normal((3, 7, 5))
    out, cache = F.gelu_forward(x, approximate="none")
    dout = rng.standard_normal(out.shape)
    assert rel_error(backward(dout, cache), F.gelu_backward(dout, cache)) < 1e-14
    check_function(F.gelu_forward, backward, {"x": x},
                   kwargs={"approximate": "none"}).assert_below(TOL)
    with pytest.raises(ValueError, match="exact form"):
        backward(dout, F.gelu_forward(x, approximate="tanh")[1])


def test_gelu_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*GELU[:2])
    verdict, check = notebook_check(*GELU, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def forgets_the_density_term(dout, cache):
        return dout * cache.cdf

    def uses_the_tanh_slope(dout, cache):
        x = cache.x
        inner = math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)
        tanh = np.tanh(inner)
        slope = math.sqrt(2 / math.pi) * (1 + 3 * 0.044715 * x**2)
        return dout * (0.5 * (1 + tanh) + 0.5 * x * (1 - tanh**2) * slope)

    assert check(forgets_the_density_term) == "fail"
    assert check(uses_the_tanh_slope) == "fail"  # close, but not the exact form's derivative
    assert check(modifies_dout(solution)) == "fail"


# ----------------------------------------------------------------------------------------
# 05: cross-entropy
# ----------------------------------------------------------------------------------------

CROSS_ENTROPY = ("05_heads_and_losses", "my_cross_entropy_backward",
                 "check_cross_entropy_backward")


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_cross_entropy_solution_matches_functional(dtype):
    backward = load_solution(*CROSS_ENTROPY[:2])
    rng = np.random.default_rng(5)
    logits = (2.0 * rng.standard_normal((4, 6, 9))).astype(dtype)
    labels = rng.integers(0, 9, size=(4, 6))
    labels[rng.random((4, 6)) < 0.5] = -100
    labels[0, 0] = 3
    _, cache = F.cross_entropy_forward(logits, labels)
    got = backward(1.3, cache)
    assert got.dtype == dtype
    assert rel_error(got, F.cross_entropy_backward(1.3, cache)) < 1e-6
    assert not got[labels == -100].any()
    _, empty = F.cross_entropy_forward(logits, np.full((4, 6), -100))
    np.testing.assert_array_equal(backward(1.0, empty), np.zeros_like(logits))


def test_cross_entropy_solution_passes_finite_differences():
    backward = load_solution(*CROSS_ENTROPY[:2])
    rng = np.random.default_rng(6)
    labels = rng.integers(0, 8, size=(3, 5))
    labels[1, 2] = labels[2, 4] = -100
    check_function(F.cross_entropy_forward, backward,
                   {"logits": rng.standard_normal((3, 5, 8)), "labels": labels}).assert_below(TOL)


def test_cross_entropy_notebook_check_passes_solution_and_catches_mistakes(capsys):
    solution = load_solution(*CROSS_ENTROPY[:2])
    verdict, check = notebook_check(*CROSS_ENTROPY, solution)
    assert verdict == "pass"
    assert capsys.readouterr().out.strip().endswith("pass")
    assert check(stub) == "not implemented yet"

    def ignores_dloss(dloss, cache):
        return solution(1.0, cache)

    def divides_by_all_rows(dloss, cache):
        return solution(dloss, cache) * cache.count / cache.valid.size

    def nan_when_all_ignored(dloss, cache):
        if cache.count == 0:
            return np.full_like(cache.log_probs, np.nan)
        return solution(dloss, cache)

    assert check(ignores_dloss) == "fail"
    assert check(divides_by_all_rows) == "fail"
    assert check(nan_when_all_ignored) == "fail"
