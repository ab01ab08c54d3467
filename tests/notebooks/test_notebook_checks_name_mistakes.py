"""The exercise checks of notebooks 02-05 name the likely mistake.

Each case is a wrong answer students write; the notebook's committed check cell (tagged
``exercise-check``) must say "fail" and print the words that name that mistake. The checks
also pass the solutions in ``notebooks/solutions/`` (tested beside them in
``test_notebook_solutions_layers.py``), and notebook 02's first exercise, a gradient checker,
is tested here: the solution passes and each usual mistake is named.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from test_notebook_solutions_layers import NOTEBOOK_DIR, load_solution, notebook_check, stub

from minibert import functional as F


def _mean(a):
    return a.mean(axis=-1, keepdims=True)


# ----------------------------------------------------------------------------------------
# 02: the gradient checker
# ----------------------------------------------------------------------------------------

GRADCHECK = ("02_embeddings_layernorm", "check_gradient_checker")


def gradient_checker_check():
    """The committed check cell run with the solutions: (its verdict, its check function)."""
    notebook = json.loads((NOTEBOOK_DIR / f"{GRADCHECK[0]}.ipynb").read_text(encoding="utf-8"))
    cells = ["".join(cell["source"]) for cell in notebook["cells"]
             if "exercise-check" in cell.get("metadata", {}).get("tags", [])
             and f"def {GRADCHECK[1]}(" in "".join(cell["source"])]
    assert len(cells) == 1
    namespace = {name: load_solution(GRADCHECK[0], name)
                 for name in ("my_numerical_gradient", "my_rel_error")}
    exec(compile(cells[0], f"{GRADCHECK[0]}:exercise-check", "exec"), namespace)
    return namespace["verdict"], namespace[GRADCHECK[1]]


def run_gradient_checker_check(numerical, relative):
    verdict, check = gradient_checker_check()
    return verdict, check(numerical or load_solution(GRADCHECK[0], "my_numerical_gradient"),
                          relative or load_solution(GRADCHECK[0], "my_rel_error"))


def one_sided(f, x, dout, h=1e-5):
    grad, base = np.zeros_like(x), float(np.sum(f(x) * dout))
    for index in np.ndindex(*x.shape):
        x[index] += h
        grad[index] = (np.sum(f(x) * dout) - base) / h
        x[index] -= h
    return grad


def divided_by_h(f, x, dout, h=1e-5):
    solution = load_solution("02_embeddings_layernorm", "my_numerical_gradient")
    return 2.0 * solution(f, x, dout, h)


def not_restored(f, x, dout, h=1e-5):
    grad = np.zeros_like(x)
    for index in np.ndindex(*x.shape):
        x[index] += h
        plus = np.sum(f(x) * dout)
        x[index] -= 2 * h
        grad[index] = (plus - np.sum(f(x) * dout)) / (2 * h)
    return grad  # x ends h below where it started, at every entry


def without_dout(f, x, dout, h=1e-5):
    solution = load_solution("02_embeddings_layernorm", "my_numerical_gradient")
    return solution(f, x, np.ones_like(dout), h)


def entry_wise(a, b):
    return float((np.abs(a - b) / np.maximum(np.abs(a) + np.abs(b), 1e-12)).max())


def no_floor(a, b):
    return float(np.linalg.norm(a - b) / (np.linalg.norm(a) + np.linalg.norm(b)))


def relative_to_b(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def test_gradient_checker_check_passes_the_solution_and_accepts_entry_wise_errors(capsys):
    verdict, again = run_gradient_checker_check(None, None)
    assert verdict == again == "pass"
    assert run_gradient_checker_check(None, entry_wise)[1] == "pass"  # CS231n's convention
    _, check = gradient_checker_check()
    assert check(stub, stub) == "not implemented yet"


@pytest.mark.parametrize("numerical, relative, named", [
    (one_sided, None, "a one-sided difference"),
    (divided_by_h, None, "divide by 2h"),
    (not_restored, None, "x was not restored"),
    (without_dout, None, "dout is ignored"),
    (None, no_floor, "guard the denominator"),
    (None, relative_to_b, "not symmetric"),
    (None, lambda a, b: np.abs(a - b), "one number for the whole array"),
], ids=["one-sided", "divided by h", "not restored", "dout ignored", "no floor",
        "not symmetric", "an array"])
def test_gradient_checker_check_names_each_mistake(numerical, relative, named, capsys):
    assert run_gradient_checker_check(numerical, relative)[1] == "fail"
    assert named in capsys.readouterr().out


# ----------------------------------------------------------------------------------------
# 02-05: the backward passes
# ----------------------------------------------------------------------------------------

def layernorm_without_mean(dout, cache):
    d_hat = dout * cache.weight
    dx = cache.rstd * (d_hat - cache.x_hat * _mean(d_hat * cache.x_hat))
    axes = tuple(range(dout.ndim - 1))
    return dx, (dout * cache.x_hat).sum(axis=axes), dout.sum(axis=axes)


def layernorm_without_variance(dout, cache):
    d_hat = dout * cache.weight
    axes = tuple(range(dout.ndim - 1))
    return (cache.rstd * (d_hat - _mean(d_hat)), (dout * cache.x_hat).sum(axis=axes),
            dout.sum(axis=axes))


def layernorm_swapped(dout, cache):
    solution = load_solution("02_embeddings_layernorm", "my_layernorm_backward")
    dx, dweight, dbias = solution(dout, cache)
    return dx, dbias, dweight


def softmax_diagonal(dout, cache):
    return dout * cache.probs * (1.0 - cache.probs)


def softmax_last_axis(dout, cache):
    p = cache.probs
    return p * (dout - (dout * p).sum(axis=-1, keepdims=True))


def attention_variant(scale=True, transpose_k=True):
    def backward(dout, cache):
        q, k, v, p = cache.q, cache.k, cache.v, cache.attention_probs
        dv = p.swapaxes(-1, -2) @ dout
        dp = dout @ v.swapaxes(-1, -2)
        ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
        s = cache.scale if scale else 1.0
        return (ds @ k) * s, ((ds.swapaxes(-1, -2) if transpose_k else ds) @ q) * s, dv
    return backward


def attention_unmasked(dout, cache):
    q, k, v = cache.q, cache.k, cache.v
    p, _ = F.softmax_forward((q @ k.swapaxes(-1, -2)) * cache.scale)
    dv = p.swapaxes(-1, -2) @ dout
    dp = dout @ v.swapaxes(-1, -2)
    ds = p * (dp - (dp * p).sum(axis=-1, keepdims=True))
    return (ds @ k) * cache.scale, (ds.swapaxes(-1, -2) @ q) * cache.scale, dv


def gelu_without_x_pdf(dout, cache):
    return dout * cache.cdf


def gelu_tanh_derivative(dout, cache):
    return F.gelu_backward(dout, F.gelu_forward(cache.x, approximate="tanh")[1])


def cross_entropy_variant(zero_ignored=True, use_dloss=True, sign=1.0):
    def backward(dloss, cache):
        probs = np.exp(cache.log_probs)
        one_hot = np.eye(probs.shape[-1])[cache.safe_labels]
        grad = sign * (probs - one_hot) / max(cache.count, 1)
        if zero_ignored:
            grad = grad * cache.valid[..., None]
        return grad * (dloss if use_dloss else 1.0)
    return backward


def cross_entropy_nan_when_empty(dloss, cache):
    probs = np.exp(cache.log_probs)
    one_hot = np.eye(probs.shape[-1])[cache.safe_labels]
    with np.errstate(invalid="ignore", divide="ignore"):
        return dloss * (probs - one_hot) * cache.valid[..., None] / np.float64(cache.count)


CASES = [
    ("02_embeddings_layernorm", "my_layernorm_backward", "check_layernorm_backward",
     layernorm_without_mean, "the mean term is missing"),
    ("02_embeddings_layernorm", "my_layernorm_backward", "check_layernorm_backward",
     layernorm_without_variance, "the variance term is missing"),
    ("02_embeddings_layernorm", "my_layernorm_backward", "check_layernorm_backward",
     layernorm_swapped, "swapped"),
    ("03_attention", "my_softmax_backward", "check_softmax_backward", softmax_diagonal,
     "only the Jacobian's diagonal"),
    ("03_attention", "my_softmax_backward", "check_softmax_backward", softmax_last_axis,
     "summed along the last axis, not along cache.axis"),
    ("03_attention", "my_attention_backward", "check_attention_backward",
     attention_variant(scale=False), "the 1/sqrt(D) scale is missing"),
    ("03_attention", "my_attention_backward", "check_attention_backward",
     attention_variant(transpose_k=False), "the transpose is missing"),
    ("03_attention", "my_attention_backward", "check_attention_backward", attention_unmasked,
     "recomputed without the mask"),
    ("04_feedforward_block", "my_gelu_backward", "check_gelu_backward", gelu_without_x_pdf,
     "the x phi(x) term is missing"),
    ("04_feedforward_block", "my_gelu_backward", "check_gelu_backward", gelu_tanh_derivative,
     "the tanh form's derivative"),
    ("05_heads_and_losses", "my_cross_entropy_backward", "check_cross_entropy_backward",
     cross_entropy_variant(zero_ignored=False), "ignored rows must get zero gradient"),
    ("05_heads_and_losses", "my_cross_entropy_backward", "check_cross_entropy_backward",
     cross_entropy_variant(use_dloss=False), "dloss is ignored"),
    ("05_heads_and_losses", "my_cross_entropy_backward", "check_cross_entropy_backward",
     cross_entropy_variant(sign=-1.0), "the sign"),
    ("05_heads_and_losses", "my_cross_entropy_backward", "check_cross_entropy_backward",
     cross_entropy_nan_when_empty, "not 0 / 0"),
]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")
@pytest.mark.parametrize("stem, student, check_name, wrong, named", CASES,
                         ids=[f"{case[0][:2]}-{case[3].__name__}-{case[4][:20]}" for case in CASES])
def test_check_names_the_mistake(stem, student, check_name, wrong, named, capsys):
    _, check = notebook_check(stem, student, check_name, load_solution(stem, student))
    capsys.readouterr()
    assert check(wrong) == "fail"
    printed = capsys.readouterr().out
    assert f"likely mistake: {named}" in printed or named in printed, printed
