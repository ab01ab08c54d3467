"""The checks that grade each task: public ones the student runs, hidden ones the instructor keeps.

``run_checks(task, functions, level, seed)`` runs the checks of one task on the student's
functions and raises ``CheckFailed`` with one line at the first failing check: the
function, the array, how far off it is, and a hint when the mistake is a known one
("layernorm_backward: dx off by rel 3e-01; the variance term is missing?").

Public checks: a float64 gradient check against centred finite differences with a random
upstream gradient (never all ones), the shapes, and one invariance per task. Hidden checks
(run with ``level="hidden"`` and the instructor's seed): other shapes and seeds, masks,
repeated ids, and gradients that must be exactly zero, measured against the scale of
their partner (the other entries of the same array), so rounding noise on any BLAS passes.
"""

from __future__ import annotations

import math

import numpy as np

from minibert import functional as F
from minibert.assignment import blocks
from minibert.gradcheck import numerical_gradient, rel_error

__all__ = ["CheckFailed", "run_checks", "LEVELS", "LAYER_TOL", "BLOCK_TOL"]

LEVELS = ("public", "hidden")
LAYER_TOL = 1e-7  # one layer in float64: a correct backward reaches ~1e-10
BLOCK_TOL = 1e-6  # a composition of layers in float64
ZERO_TOL = 1e-12  # an exact zero, relative to the largest entry of the same array


class CheckFailed(AssertionError):
    """A check failed; the message is the one line the grader prints."""


# ----------------------------------------------------------------------------------------
# Helpers
# ----------------------------------------------------------------------------------------

def _fail(message: str):
    raise CheckFailed(message)


def _tuple(function: str, result, names: tuple[str, ...]) -> dict:
    if len(names) == 1:
        if isinstance(result, tuple):
            _fail(f"{function}: returned a tuple of {len(result)}, expected one array "
                  f"d{names[0]}")
        result = (result,)
    if not isinstance(result, tuple) or len(result) != len(names):
        given = f"a tuple of {len(result)}" if isinstance(result, tuple) else type(result).__name__
        _fail(f"{function}: returned {given}, expected the tuple "
              f"({', '.join('d' + n for n in names)})")
    return dict(zip(names, result))


def _array(function: str, name: str, value, shape) -> np.ndarray:
    if not isinstance(value, np.ndarray):
        _fail(f"{function}: {name} is a {type(value).__name__}, expected a numpy array of "
              f"shape {tuple(shape)}")
    if value.shape != tuple(shape):
        _fail(f"{function}: {name} has shape {value.shape}, expected {tuple(shape)}")
    if not np.all(np.isfinite(value)):
        _fail(f"{function}: {name} holds NaN or inf")
    return value


def _close(function: str, name: str, got, expected, tol: float, hints=()) -> None:
    """Fail with the relative error and a hint: a known mistake that ``got`` matches, else
    what the difference looks like (a constant factor, all zeros, the wrong sign)."""
    error = rel_error(got, expected)
    if error <= tol:
        return
    message = f"{function}: {name} off by rel {error:.0e} (tolerance {tol:.0e})"
    for wrong, hint in hints:
        try:
            wrong_value = wrong() if callable(wrong) else wrong
        except Exception:  # a variant that does not apply to this case
            continue
        if wrong_value is not None and np.shape(wrong_value) == np.shape(got) and \
                rel_error(got, wrong_value) < min(1e-6, error / 10):
            _fail(f"{message}; {hint}")
    _fail(message + _shape_of_difference(got, expected))


def _shape_of_difference(got, expected) -> str:
    """'; <what the difference looks like>' when it has a simple form, else ''."""
    got, expected = np.asarray(got, dtype=np.float64), np.asarray(expected, dtype=np.float64)
    if got.shape != expected.shape or not np.any(expected):
        return ""
    if not np.any(got):
        return "; it is all zeros"
    factor = float((got * expected).sum() / (expected * expected).sum())
    if rel_error(got, factor * expected) > 1e-6:
        return ""
    if abs(factor + 1.0) < 1e-6:
        return "; the sign is flipped"
    text = f"; it is {factor:.3g} times the right value"
    for n in range(2, 1001):
        if abs(factor * n - 1.0) < 1e-6:
            return text + f" (1/{n}: divided by {n}, or a mean where a sum belongs?)"
        if abs(factor - n) < 1e-6 * n:
            return text + f" ({n}: counted {n} times, or a sum where a mean belongs?)"
    return text + ": a factor missing or extra?"


def _dtype(function: str, name: str, value: np.ndarray, expected) -> None:
    """Float64 in, float64 out: a gradient has its input's dtype."""
    if value.dtype != np.dtype(expected):
        _fail(f"{function}: {name} is {value.dtype}, expected {np.dtype(expected)} (the "
              f"input's dtype: float64 in, float64 out); a float32 constant or array, or an "
              f"astype, changes it?")


def _unchanged(function: str, name: str, given: np.ndarray, original: np.ndarray) -> None:
    """The upstream gradient is the caller's array: a backward never writes into it."""
    if not np.array_equal(given, original):
        _fail(f"{function}: changed {name} in place (it is the caller's array: write "
              f"dx = {name} * ..., not {name} *= ... or dx = {name}; dx -= ...)")


def _zero(function: str, name: str, part: np.ndarray, whole: np.ndarray, where: str) -> None:
    """``part`` must be zero up to rounding, measured against the largest entry of ``whole``."""
    scale = float(np.abs(whole).max(initial=0.0))
    largest = float(np.abs(part).max(initial=0.0))
    if largest > ZERO_TOL * max(scale, 1e-300):
        _fail(f"{function}: {name} is not zero {where} (largest {largest:.1e} against "
              f"{scale:.1e} elsewhere)")


def _gradcheck(function: str, backward, forward, inputs: dict, kwargs: dict, names: tuple,
               rng: np.random.Generator, tol: float = LAYER_TOL, hints=None) -> dict:
    """Call the student's backward on a random dout; compare each array with finite differences.

    Returns the gradients by input name (after their shapes are checked).
    """
    hints = hints or {}
    out, cache = forward(*inputs.values(), **kwargs)
    dout = rng.standard_normal(np.shape(out))
    given = dout.copy()
    grads = _tuple(function, backward(given, cache), names)
    for name in names:
        if inputs.get(name) is None:
            continue
        _array(function, f"d{name}", grads[name], inputs[name].shape)
        _dtype(function, f"d{name}", grads[name], inputs[name].dtype)
    _unchanged(function, "dout", given, dout)
    for name in names:
        if inputs.get(name) is None:
            continue
        numeric = numerical_gradient(lambda _x: forward(*inputs.values(), **kwargs)[0],
                                     inputs[name], dout)
        _close(function, f"d{name}", grads[name], numeric, tol,
               [(lambda w=w: w(dout, cache), h) for w, h in hints.get(name, ())])
    return grads


# ----------------------------------------------------------------------------------------
# The layer tasks
# ----------------------------------------------------------------------------------------

def _linear(fns, level, rng):
    backward = fns["linear_backward"]
    shape = (2, 3, 4) if level == "public" else (5, 3)
    x = rng.standard_normal(shape)
    weight = rng.standard_normal((6, shape[-1]))
    hints = {"bias": [(lambda d, c: d.reshape(-1, d.shape[-1])[0],
                       "sum dout over every row, not only the first")]}
    if level == "public":
        _gradcheck("linear_backward", backward, F.linear_forward,
                   {"x": x, "weight": weight, "bias": rng.standard_normal(6)}, {},
                   ("x", "weight", "bias"), rng, hints=hints)
        # Invariance: the rows' arrangement does not matter, only which rows there are.
        _, cache = F.linear_forward(x.reshape(-1, 4), weight, None)
        dout = rng.standard_normal((6, 6))
        flat = _tuple("linear_backward", backward(dout, cache), ("x", "weight", "bias"))
        if flat["bias"] is not None:
            _fail("linear_backward: dbias must be None when the forward had no bias")
        _, cache3 = F.linear_forward(x, weight, None)
        stacked = _tuple("linear_backward", backward(dout.reshape(2, 3, 6), cache3),
                         ("x", "weight", "bias"))
        _close("linear_backward", "dweight of (2, 3, 4) rows against the same rows flattened",
               stacked["weight"], flat["weight"], 1e-12)
        return
    # hidden: 2-D input without bias, then a 4-D input
    _gradcheck("linear_backward", backward, F.linear_forward,
               {"x": x, "weight": weight, "bias": None}, {}, ("x", "weight", "bias"), rng)
    _gradcheck("linear_backward", backward, F.linear_forward,
               {"x": rng.standard_normal((2, 2, 2, 3)), "weight": rng.standard_normal((4, 3)),
                "bias": rng.standard_normal(4)}, {}, ("x", "weight", "bias"), rng, hints=hints)


def _buffered_embedding(dout, cache):
    dweight = np.zeros(cache.weight_shape)
    dweight[cache.ids.reshape(-1)] += dout.reshape(-1, cache.weight_shape[1])
    return dweight


def _embedding(fns, level, rng):
    backward = fns["embedding_backward"]
    hint = (_buffered_embedding, "an id used twice keeps only one row: dweight[ids] += dout is "
            "buffered, use np.add.at")
    if level == "public":
        ids = rng.integers(0, 6, size=(2, 5))
        ids[1, 4] = ids[0, 0]  # at least one repeated id
        weight = rng.standard_normal((8, 3))
        dout = rng.standard_normal((2, 5, 3))
        _, cache = F.embedding_forward(ids, weight)
        got = _array("embedding_backward", "dweight", backward(dout, cache), weight.shape)
        expected = np.zeros_like(weight)
        for position, i in enumerate(ids.reshape(-1)):  # one row at a time, as the sum reads
            expected[i] += dout.reshape(-1, 3)[position]
        _close("embedding_backward", "dweight", got, expected, 1e-12,
               [(lambda: hint[0](dout, cache), hint[1])])
        unused = np.setdiff1d(np.arange(8), ids)
        _zero("embedding_backward", "dweight", got[unused], got, "at rows never looked up")
        _embedding_dtype(backward)
        return
    # hidden: every id the same, a 3-D id array, and float32 keeps its dtype
    for ids in (np.full((3, 4), 2), rng.integers(0, 3, size=(2, 2, 3))):
        weight = rng.standard_normal((5, 4))
        dout = rng.standard_normal((*ids.shape, 4))
        _, cache = F.embedding_forward(ids, weight)
        got = _array("embedding_backward", "dweight", backward(dout, cache), weight.shape)
        expected = np.zeros_like(weight)
        np.add.at(expected, ids.reshape(-1), dout.reshape(-1, 4))
        _close("embedding_backward", "dweight with repeated ids", got, expected, 1e-12,
               [(lambda d=dout, c=cache: hint[0](d, c), hint[1])])
    _embedding_dtype(backward)


def _embedding_dtype(backward) -> None:
    """A float32 table (what training uses) gets a float32 gradient."""
    _, cache = F.embedding_forward(np.array([0, 1, 0]), np.full((3, 2), 0.5, dtype=np.float32))
    got = backward(np.ones((3, 2), dtype=np.float32), cache)
    if getattr(got, "dtype", None) != np.float32:
        _fail(f"embedding_backward: dweight has dtype {getattr(got, 'dtype', None)} for a "
              f"float32 table; create it with dtype=cache.dtype (np.zeros makes float64, "
              f"which doubles the gradient's memory and changes the optimizer's arithmetic)")


def _layernorm_hints():
    def no_mean(dout, cache):
        d_hat = dout * cache.weight
        return cache.rstd * (d_hat - cache.x_hat * (d_hat * cache.x_hat).mean(-1, keepdims=True))

    def no_variance(dout, cache):
        d_hat = dout * cache.weight
        return cache.rstd * (d_hat - d_hat.mean(-1, keepdims=True))

    def neither(dout, cache):
        return cache.rstd * dout * cache.weight

    return {"x": [(no_mean, "the mean term is missing?"),
                  (no_variance, "the variance term is missing?"),
                  (neither, "mean and rstd depend on every x of the row: both terms are missing?")],
            "weight": [(lambda d, c: d.reshape(-1, d.shape[-1]).sum(0),
                        "dweight is sum(dout * x_hat), dbias is sum(dout): swapped?")]}


def _layernorm(fns, level, rng):
    backward = fns["layernorm_backward"]
    shape = (2, 3, 5) if level == "public" else (7, 4)
    x = 2.0 * rng.standard_normal(shape) + 0.5
    inputs = {"x": x, "weight": 1.0 + 0.3 * rng.standard_normal(shape[-1]),
              "bias": 0.3 * rng.standard_normal(shape[-1])}
    eps = 1e-12 if level == "public" else 1e-3
    grads = _gradcheck("layernorm_backward", backward, F.layernorm_forward, inputs, {"eps": eps},
                       ("x", "weight", "bias"), rng, hints=_layernorm_hints())
    if level == "public":
        # Invariance: out does not change when a row is shifted, so dx sums to 0 in each row.
        _zero("layernorm_backward", "the row sums of dx", grads["x"].sum(-1), grads["x"],
              "(adding a constant to a row changes nothing)")


def _gelu_hints():
    def no_pdf(dout, cache):
        return dout * cache.cdf if cache.cdf is not None else None

    def erf_form(dout, cache):  # the exact form's derivative, whatever cache.approximate says
        x = cache.x
        cdf = 0.5 * (1.0 + F.erf(x / math.sqrt(2.0)))
        return dout * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))

    def tanh_parts(du_dx):
        def wrong(dout, cache):
            if cache.tanh_inner is None:
                return None
            x, t = cache.x, cache.tanh_inner
            return dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx(x))
        return wrong

    def tanh_form(dout, cache):  # the tanh form's derivative, whatever cache.approximate says
        x = cache.x
        t = np.tanh(root * (x + 0.044715 * x ** 3))
        return dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * root
                       * (1.0 + 3 * 0.044715 * x * x))

    root = math.sqrt(2.0 / math.pi)
    return {"x": [(no_pdf, "the product rule's x * phi(x) term is missing?"),
                  (tanh_form, "the tanh form's derivative (GELU's tanh approximation, "
                   "'gelu_new') for cache.approximate == 'none'? The exact form is x Phi(x), "
                   "Phi the normal CDF with erf"),
                  (erf_form, "the erf form's derivative for cache.approximate == 'tanh'? "
                   "The tanh form differentiates 0.5 x (1 + tanh(u))"),
                  (tanh_parts(lambda x: 1.0), "the chain rule through u = sqrt(2/pi) (x + "
                   "0.044715 x^3) is missing du/dx?"),
                  (tanh_parts(lambda x: root * (1.0 + 0.044715 * x * x)),
                   "du/dx of 0.044715 x^3 is 3 * 0.044715 x^2: the 3 is missing?")]}


def _gelu(fns, level, rng):
    backward = fns["gelu_backward"]
    if level == "public":
        _gradcheck("gelu_backward", backward, F.gelu_forward,
                   {"x": 2.0 * rng.standard_normal((3, 4))}, {"approximate": "none"}, ("x",),
                   rng, hints=_gelu_hints())
        # Invariance: the derivative of x Phi(x) at 0 is Phi(0) = 1/2.
        _, cache = F.gelu_forward(np.zeros(3), "none")
        _close("gelu_backward", "dx at x = 0", backward(np.ones(3), cache), np.full(3, 0.5), 1e-12)
        # The tanh form (HF "gelu_new"): the cache holds tanh_inner, and cdf is None.
        _gelu_tanh(backward, 2.0 * rng.standard_normal((2, 5)), rng)
        return
    for form in ("tanh", "none"):
        x = 3.0 * rng.standard_normal((2, 3, 5))
        if form == "tanh":
            _gelu_tanh(backward, x, rng)
            continue
        _gradcheck("gelu_backward", backward, F.gelu_forward, {"x": x}, {"approximate": form},
                   ("x",), rng, hints=_gelu_hints())


def _gelu_tanh(backward, x, rng) -> None:
    def guarded(dout, cache):
        try:
            return backward(dout, cache)
        except NotImplementedError:
            raise
        except Exception as error:
            _fail(f"gelu_backward raised {type(error).__name__} on the tanh form: {error}; "
                  f"when cache.approximate == 'tanh', cache.cdf is None and cache.tanh_inner "
                  f"holds tanh(u)")
    _gradcheck("gelu_backward", guarded, F.gelu_forward, {"x": x}, {"approximate": "tanh"},
               ("x",), rng, hints=_gelu_hints())


def _softmax_hints():
    def along(axis):
        def wrong(dout, cache):
            if axis is not None and (axis - cache.axis) % cache.probs.ndim == 0:
                return None  # the right axis
            p = cache.probs
            return p * (dout - (dout * p).sum(axis=axis, keepdims=True))
        return wrong

    def diagonal(dout, cache):
        return dout * cache.probs * (1.0 - cache.probs)

    wrong_axis = "the sum must run along cache.axis, not always the last axis"
    return {"x": [(diagonal, "only the Jacobian's diagonal: the sum(dout * probs) term is "
                   "missing?"),
                  (along(-1), wrong_axis),
                  *[(along(a), "the sum must run along cache.axis, the softmax's own axis")
                    for a in (0, 1, 2)],
                  (along(None), "the sum must run along cache.axis, not over the whole array")]}


def _softmax(fns, level, rng):
    backward = fns["softmax_backward"]
    axes = (-1, 1) if level == "public" else (0, -2, 2)
    for axis in axes:
        x = 2.0 * rng.standard_normal((3, 4, 5))
        grads = _gradcheck("softmax_backward", backward, F.softmax_forward, {"x": x},
                           {"axis": axis}, ("x",), rng, hints=_softmax_hints())
        if level == "public":
            # Invariance: softmax(x + c) = softmax(x), so dx sums to 0 along the axis.
            _zero("softmax_backward", "the sums of dx along the axis", grads["x"].sum(axis),
                  grads["x"], "(adding a constant along the axis changes nothing)")
    if level == "hidden":
        # -inf entries (a masked key) have probability 0 and must get gradient exactly 0
        x = rng.standard_normal((2, 6))
        x[:, 4:] = -np.inf
        _, cache = F.softmax_forward(x)
        got = _array("softmax_backward", "dx", backward(rng.standard_normal((2, 6)), cache),
                     (2, 6))
        _zero("softmax_backward", "dx", got[:, 4:], got, "at -inf entries (probability 0)")


def _dropout(fns, level, rng):
    backward = fns["dropout_backward"]
    p = 0.3 if level == "public" else 0.6
    x = rng.standard_normal((4, 5) if level == "public" else (2, 3, 4))
    seed = int(rng.integers(1 << 30))
    hints = {"x": [(lambda d, c: d * c.keep, "the kept units are scaled by 1/(1-p) in the "
                    "forward: the backward scales too")]}
    grads = _gradcheck("dropout_backward", backward,
                       lambda x, p: F.dropout_forward(x, p, np.random.default_rng(seed)),
                       {"x": x}, {"p": p}, ("x",), rng, hints=hints)
    _, cache = F.dropout_forward(x, p, np.random.default_rng(seed))
    _zero("dropout_backward", "dx", grads["x"][~cache.keep], grads["x"], "at dropped units")
    dout = rng.standard_normal(x.shape)
    kept = dout.copy()
    backward(dout, cache)
    if not np.array_equal(dout, kept):
        _fail("dropout_backward: modified dout in place; return a new array")
    _, identity = F.dropout_forward(x, p, None, training=False)
    got = _array("dropout_backward", "dx in eval mode", backward(dout, identity), x.shape)
    _close("dropout_backward", "dx in eval mode (cache None, the identity)", got, dout, 0.0)


def _attention_variant(cache, dout, probs=None, dropped=None, softmax_probs=None,
                       through_dropout=True, scale=None):
    """attention's backward with one ingredient swapped: the shape of a known mistake."""
    probs = cache.attention_probs if probs is None else probs
    dropped = cache.dropped_probs if dropped is None else dropped
    softmax_probs = probs if softmax_probs is None else softmax_probs
    scale = cache.scale if scale is None else scale
    dv = dropped.swapaxes(-1, -2) @ dout  # (B, N, T, D)
    d_dropped = dout @ cache.v.swapaxes(-1, -2)  # (B, N, T, T)
    d_probs = F.dropout_backward(d_dropped, cache.dropout) if through_dropout else d_dropped
    d_scores = softmax_probs * (d_probs - (d_probs * softmax_probs).sum(-1, keepdims=True))
    return {"q": (d_scores @ cache.k) * scale, "k": (d_scores.swapaxes(-1, -2) @ cache.q) * scale,
            "v": dv}


def _unmasked_probs(cache):
    return F.softmax_forward((cache.q @ cache.k.swapaxes(-1, -2)) * cache.scale)[0]


def _attention_hints():
    def variant(name, **swap):
        def wrong(dout, cache):
            chosen = {key: value(cache) if callable(value) else value
                      for key, value in swap.items()}
            return _attention_variant(cache, dout, **chosen)[name]
        return wrong

    recomputed = "recomputed the probabilities without the mask? Use cache.attention_probs " \
                 "(a masked key has probability 0 there)"
    missing = "the 1/sqrt(D) scale of the scores is missing?"
    softmax_of_dropped = ("the softmax backward takes its own output, cache.attention_probs, "
                          "not the dropped probabilities")
    skipped_dropout = ("the gradient skips dropout's backward: d(dropped_probs) must go "
                       "through the same mask and 1/(1-p) (cache.dropout) before the softmax")
    hints = {}
    for name in ("q", "k", "v"):
        hints[name] = [
            (variant(name, probs=_unmasked_probs, dropped=_unmasked_probs), recomputed),
            (variant(name, softmax_probs=_unmasked_probs), recomputed),
            (variant(name, softmax_probs=lambda c: c.dropped_probs), softmax_of_dropped),
            (variant(name, through_dropout=False), skipped_dropout),
            (variant(name, scale=1.0), missing),
        ]
    hints["v"].insert(0, (variant("v", dropped=lambda c: c.attention_probs),
                          "dv = dropped_probs^T @ dout: the probabilities that multiplied v are "
                          "the ones after dropout (cache.dropped_probs)"))
    return hints


def _padding_mask(rng, batch, seq):
    lengths = rng.integers(max(1, seq // 2), seq, size=batch)
    lengths[0] = seq
    return (np.arange(seq)[None, :] < lengths[:, None]).astype(np.int64)  # (B, T)


def _attention(fns, level, rng):
    backward = fns["attention_backward"]
    shape = (2, 2, 5, 3) if level == "public" else (3, 1, 6, 4)
    q, k, v = (rng.standard_normal(shape) for _ in range(3))
    mask = _padding_mask(rng, shape[0], shape[2])[:, None, None, :]  # (B, 1, 1, T)
    names = ("q", "k", "v")
    grads = _gradcheck("attention_backward", backward, F.attention_forward,
                       {"q": q, "k": k, "v": v}, {"mask": mask}, names, rng,
                       hints=_attention_hints())
    hidden_keys = np.broadcast_to((mask[:, 0, 0, :] == 0)[:, None, :, None], shape)  # (B, N, T, D)
    for name in ("k", "v"):
        _zero("attention_backward", f"d{name}", grads[name][hidden_keys], grads[name],
              "at masked keys")
    # dropout on the probabilities, as BERT trains (the same seeded mask in every call)
    seed = int(rng.integers(1 << 30))
    _gradcheck("attention_backward", backward,
               lambda q, k, v: F.attention_forward(q, k, v, mask, 0.3,
                                                   np.random.default_rng(seed), True),
               {"q": q, "k": k, "v": v}, {}, names, rng, hints=_attention_hints())
    if level == "hidden":
        # a causal (B, N, T, T) mask and no mask at all
        causal = np.tril(np.ones((shape[2], shape[2]), dtype=np.int64))
        _gradcheck("attention_backward", backward, F.attention_forward,
                   {"q": q, "k": k, "v": v}, {"mask": causal}, names, rng)
        _gradcheck("attention_backward", backward, F.attention_forward,
                   {"q": q, "k": k, "v": v}, {"mask": None}, names, rng)


def _cross_entropy(fns, level, rng):
    backward = fns["cross_entropy_backward"]
    shape = (3, 4, 6) if level == "public" else (9, 5)
    logits = 2.0 * rng.standard_normal(shape)
    labels = rng.integers(0, shape[-1], size=shape[:-1])
    labels.reshape(-1)[[1, 4]] = -100

    def not_by_count(dloss, cache):
        d = np.exp(cache.log_probs)
        np.put_along_axis(d, cache.safe_labels[..., None],
                          np.take_along_axis(d, cache.safe_labels[..., None], -1) - 1.0, -1)
        return d * cache.valid[..., None] * dloss / cache.valid.size

    def softmax_minus_one_hot(cache):
        d = np.exp(cache.log_probs)
        np.put_along_axis(d, cache.safe_labels[..., None],
                          np.take_along_axis(d, cache.safe_labels[..., None], -1) - 1.0, -1)
        return d

    dloss = float(rng.uniform(0.5, 2.0))

    def forward(logits):
        return F.cross_entropy_forward(logits, labels)

    _, cache = forward(logits)
    hints = [
        (lambda: not_by_count(dloss, cache), "divide by the number of labels that count "
         "(cache.count), not by every position"),
        (lambda: softmax_minus_one_hot(cache) * dloss / cache.count,
         "the ignored positions (label -100) must get zero gradient: multiply by cache.valid"),
        (lambda: softmax_minus_one_hot(cache) * cache.valid[..., None] / cache.count,
         f"dloss is ignored: multiply by it (the upstream gradient, here {dloss:.3g}, not 1)"),
        (lambda: softmax_minus_one_hot(cache) / cache.count, "dloss is ignored and the ignored "
         "positions get gradient: multiply by dloss and by cache.valid"),
    ]
    got = _array("cross_entropy_backward", "dlogits", backward(dloss, cache), shape)
    _dtype("cross_entropy_backward", "dlogits", got, logits.dtype)
    numeric = numerical_gradient(lambda _x: forward(logits)[0], logits, dloss)
    _close("cross_entropy_backward", "dlogits", got, numeric, LAYER_TOL, hints)
    _zero("cross_entropy_backward", "dlogits", got[labels == -100], got,
          "at ignored positions (label -100)")
    if level == "public":
        # Invariance: softmax minus one-hot sums to 0 over the classes of each position.
        _zero("cross_entropy_backward", "the class sums of dlogits", got.sum(-1), got,
              "(adding a constant to a position's logits changes nothing)")
        return
    _, cache = F.cross_entropy_forward(logits, np.full(shape[:-1], -100))
    got = _array("cross_entropy_backward", "dlogits with every label ignored",
                 backward(1.0, cache), shape)
    if np.any(got != 0):
        _fail("cross_entropy_backward: dlogits must be all zeros when every label is -100 "
              "(the loss is the constant 0)")


# ----------------------------------------------------------------------------------------
# The composition tasks
# ----------------------------------------------------------------------------------------

_BLOCK_HINTS = {
    "x": "go through blocks.py in reverse: the two residual sums, the heads' split and merge",
    "attention.self": "split the heads' gradients back: (B, N, T, D) -> (B, T, H)",
    "intermediate": "the second residual: attention_output feeds the LayerNorm too",
}


def _block_hint(name: str) -> str:
    for prefix, hint in _BLOCK_HINTS.items():
        if name.startswith(prefix):
            return f"; {hint}?"
    return ""


def _params_check(function, got: dict, params: dict, numeric: dict, tol: float) -> None:
    if not isinstance(got, dict):
        _fail(f"{function}: the gradients must be a dict name -> array, got "
              f"{type(got).__name__}")
    missing = sorted(set(params) - set(got))
    if missing:
        _fail(f"{function}: no gradient for {missing[0]!r} ({len(missing)} names missing)")
    for name in params:
        _array(function, f"d {name}", got[name], params[name].shape)
    for name in params:
        if name.endswith("key.bias"):
            # softmax ignores a constant added to a row of scores, and q . key.bias is one:
            # the true gradient is 0, so finite differences give only noise. Measured
            # against its partner, the key weight's gradient, it must vanish.
            _zero(function, f"d {name}", got[name], got[name[:-4] + "weight"],
                  "(q . key.bias adds the same score to every key; softmax ignores it)")
            continue
        error = rel_error(got[name], numeric[name])
        if error > tol:
            _fail(f"{function}: d {name} off by rel {error:.0e}{_block_hint(name)}")


def _numeric_params(loss_of, params: dict, dout) -> dict:
    return {name: numerical_gradient(lambda _p: loss_of(), value, dout)
            for name, value in params.items()}


def _block_dx_variant(dout, cache, mistake: str) -> np.ndarray:
    """The block's dx with one known mistake ("residual 1", "residual 2", "heads")."""
    c = cache
    d_sum = F.layernorm_backward(dout, c.output_layernorm)[0]
    d_intermediate = F.gelu_backward(F.linear_backward(d_sum, c.output_dense)[0],
                                     c.intermediate_act)
    d_attention_output = F.linear_backward(d_intermediate, c.intermediate_dense)[0]
    if mistake != "residual 2":
        d_attention_output = d_attention_output + d_sum
    d_sum = F.layernorm_backward(d_attention_output, c.attention_output_layernorm)[0]
    d_context = F.linear_backward(d_sum, c.attention_output_dense)[0]  # (B, T, H)
    if mistake == "heads":  # a reshape without the transpose
        batch, seq, hidden = d_context.shape
        split = d_context.reshape(batch, c.num_heads, seq, hidden // c.num_heads)
    else:
        split = blocks.split_heads(d_context, c.num_heads)
    dq, dk, dv = F.attention_backward(split, c.attention)
    dx = np.zeros_like(d_sum) if mistake == "residual 1" else d_sum.copy()
    for d_head, linear_cache in ((dq, c.query), (dk, c.key), (dv, c.value)):
        merged = (d_head.reshape(d_context.shape) if mistake == "heads"
                  else blocks.merge_heads(d_head))
        dx += F.linear_backward(merged, linear_cache)[0]
    return dx


_BLOCK_MISTAKES = {
    "residual 1": "dx gets both paths of the first residual: through attention and around it "
                  "(x reaches the first LayerNorm directly)?",
    "residual 2": "the second residual: attention_output feeds the second LayerNorm directly "
                  "too, so its gradient adds the LayerNorm's dx?",
    "heads": "split the heads' gradients back with the transpose: (B, T, H) -> (B, T, N, D) "
             "-> (B, N, T, D), not a plain reshape?",
}


def _encoder_block(fns, level, rng):
    backward = fns["encoder_block_backward"]
    batch, seq, hidden, heads, inter = (2, 4, 6, 2, 8) if level == "public" else (3, 5, 8, 4, 12)
    params = blocks.encoder_block_params(rng, hidden, inter)
    x = rng.standard_normal((batch, seq, hidden))
    mask = _padding_mask(rng, batch, seq)

    def forward():
        return blocks.encoder_block_forward(x, params, mask, heads)

    out, cache = forward()
    dout = rng.standard_normal(out.shape)
    if level == "public":
        dout[mask == 0] = 0.0  # padded positions' own outputs are not used
    result = backward(dout.copy(), cache)
    if not isinstance(result, tuple) or len(result) != 2:
        _fail("encoder_block_backward: return (dx, grads), a tuple of 2")
    dx, got = result
    _array("encoder_block_backward", "dx", dx, x.shape)
    numeric_x = numerical_gradient(lambda _x: forward()[0], x, dout)
    error = rel_error(dx, numeric_x)
    if error > BLOCK_TOL:
        for mistake, hint in _BLOCK_MISTAKES.items():
            if rel_error(dx, _block_dx_variant(dout, cache, mistake)) < min(1e-6, error / 10):
                _fail(f"encoder_block_backward: dx off by rel {error:.0e}; {hint}")
        _fail(f"encoder_block_backward: dx off by rel {error:.0e}{_block_hint('x')}")
    _params_check("encoder_block_backward", got, params,
                  _numeric_params(lambda: forward()[0], params, dout), BLOCK_TOL)
    if level == "public":
        # Invariance: padding is invisible, so a padded position's input gets no gradient
        # when its own output is unused.
        _zero("encoder_block_backward", "dx", dx[mask == 0], dx, "at padded positions whose "
              "output is unused (a padded key must not be attended)")


def _tied_decoder(fns, level, rng):
    backward = fns["tied_mlm_backward"]
    vocab, hidden, shape = (7, 4, (2, 3)) if level == "public" else (11, 5, (3, 4))
    params = blocks.tied_mlm_params(rng, vocab, hidden)
    ids = rng.integers(0, vocab, size=shape)
    ids.reshape(-1)[-1] = ids.reshape(-1)[0]  # a repeated id

    def forward():
        return blocks.tied_mlm_forward(ids, params)

    logits, cache = forward()
    dlogits = rng.standard_normal(logits.shape)
    got = backward(dlogits.copy(), cache)
    numeric = _numeric_params(lambda: forward()[0], params, dlogits)
    if isinstance(got, dict) and isinstance(got.get("word_embeddings"), np.ndarray):
        d_activated, decoder_part, _ = F.linear_backward(dlogits, cache.decoder)
        d_embedded = F.linear_backward(F.gelu_backward(d_activated, cache.activation),
                                       cache.transform)[0]
        lookup_part = F.embedding_backward(d_embedded, cache.embedding)
        for part, hint in ((decoder_part, "it holds only the decoder's gradient: the lookup's "
                            "must be added (+=), not assigned?"),
                           (lookup_part, "it holds only the lookup's gradient: the decoder's "
                            "(dlogits^T @ activated) must be added too, one array used twice?")):
            if got["word_embeddings"].shape == part.shape and rel_error(
                    got["word_embeddings"], part) < 1e-9:
                _fail(f"tied_mlm_backward: d word_embeddings off by rel "
                      f"{rel_error(part, numeric['word_embeddings']):.0e}; {hint}")
    _params_check("tied_mlm_backward", got, params, numeric, LAYER_TOL)


def _micro_model(rng):
    from minibert.config import BertConfig
    from minibert.heads import BertForPreTraining

    config = BertConfig(vocab_size=19, hidden_size=8, num_hidden_layers=1,
                           num_attention_heads=2, intermediate_size=12,
                           max_position_embeddings=8, hidden_dropout_prob=0.0,
                           attention_probs_dropout_prob=0.0)
    model = BertForPreTraining(config, seed=int(rng.integers(1 << 30)), dtype=np.float64)
    model.eval()
    for _, value in model.named_parameters():
        value += rng.normal(0.0, 0.2, value.shape)
        value[...] = _unrestorable(value, rng)
    batch, seq = 2, 6
    ids = rng.integers(1, config.vocab_size, size=(batch, seq))
    mask = np.ones((batch, seq), dtype=np.int64)
    mask[1, 4:] = 0
    labels = np.where(rng.random((batch, seq)) < 0.5, ids, -100)
    labels[:, 1] = ids[:, 1]
    labels[mask == 0] = -100
    nsp = rng.integers(0, 2, size=batch)

    def compute_loss():
        return model(ids, attention_mask=mask, labels=labels, next_sentence_label=nsp).loss

    return model, compute_loss


def _unrestorable(value: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """``value`` with about 30% of its entries set near 1e-7, far below the step h = 1e-5:
    p + h keeps fewer of their bits, so (p + h) - h and (p - h) + h round to another float
    than p, and only restoring the saved value puts them back bit for bit."""
    tiny = rng.random(value.shape) < 0.3
    return np.where(tiny, 1e-7 * rng.standard_normal(value.shape), value)


def _model_gradcheck(fns, level, rng):
    check = fns["check_model_gradients"]
    model, compute_loss = _micro_model(rng)
    before = {name: value.copy() for name, value in model.named_parameters()}
    seed = int(rng.integers(1 << 30))
    # The buffers hold the gradients of an earlier backward, as after a training step:
    # a checker that never calls zero_grad() reads their sum.
    compute_loss()
    model.backward()
    zero_grad_calls = []
    original_zero_grad = model.zero_grad

    def counted_zero_grad(*args, **kwargs):
        zero_grad_calls.append(1)
        return original_zero_grad(*args, **kwargs)

    model.zero_grad = counted_zero_grad
    if level == "public":
        errors = check(model, compute_loss, 4, 1e-5, seed)
    else:
        # a model whose LayerNorm backward lost its variance term must be caught
        original = F.layernorm_backward

        def no_variance(dout, cache):
            _, dweight, dbias = original(dout, cache)
            d_hat = dout * cache.weight
            return cache.rstd * (d_hat - d_hat.mean(-1, keepdims=True)), dweight, dbias

        F.layernorm_backward = no_variance
        try:
            errors = check(model, compute_loss, 5, 1e-5, seed)
        finally:
            F.layernorm_backward = original
    if not isinstance(errors, dict):
        _fail(f"check_model_gradients: must return a dict name -> relative error, got "
              f"{type(errors).__name__}")
    missing = sorted(set(before) - set(errors))
    if missing:
        _fail(f"check_model_gradients: no entry for {missing[0]!r} ({len(missing)} parameters "
              f"missing)")
    for name, value in model.named_parameters():
        if not np.array_equal(value, before[name]):
            change = float(np.abs(value - before[name]).max())
            if change < 1e-9:
                _fail(f"check_model_gradients: parameter {name!r} changed by {change:.0e} "
                      f"after probing; restore the saved value (flat[i] = original): (p - h) "
                      f"+ h rounds to another float than p")
            _fail(f"check_model_gradients: parameter {name!r} changed by {change:.0e}; "
                  f"restore each entry after probing it")
    values = {name: float(errors[name]) for name in before}
    if any(not math.isfinite(e) or e < 0 for e in values.values()):
        _fail("check_model_gradients: relative errors must be finite and >= 0")
    if level == "public":
        # A gradient that is exactly 0 (the key bias: softmax ignores it) leaves only
        # finite-difference noise to compare; such arrays are not graded.
        norms = {n: float(np.linalg.norm(g)) for n, g in model.named_gradients()}
        largest = max(norms.values())
        values = {n: e for n, e in values.items() if norms[n] > 1e-6 * largest}
        worst = max(values, key=values.get)
        if values[worst] > BLOCK_TOL:
            if not zero_grad_calls:
                _fail(f"check_model_gradients: reports rel {values[worst]:.0e} for {worst!r} "
                      f"on a correct model (expected < 1e-6); model.zero_grad() was never "
                      f"called: backward() adds (+=) to the gradients the model already held")
            _fail(f"check_model_gradients: reports rel {values[worst]:.0e} for {worst!r} on a "
                  f"correct model (expected < 1e-6); centred differences, "
                  f"(loss(p + h) - loss(p - h)) / 2h?")
        return
    caught = [n for n, e in values.items() if "LayerNorm" in n and e > 1e-3]
    if not caught:
        _fail("check_model_gradients: a model with a wrong LayerNorm backward passed (every "
              "LayerNorm error below 1e-3); is the analytic gradient read after backward()?")


# ----------------------------------------------------------------------------------------
# The training tasks
# ----------------------------------------------------------------------------------------

def _adam(param, grad, m, v, lr, step, betas, eps, decay, bias_correction=True,
          decay_after=False):
    """AdamW in place (Loshchilov & Hutter), and the variants of known mistakes."""
    beta1, beta2 = betas
    if not decay_after:
        param *= 1.0 - lr * decay
    m[...] = beta1 * m + (1.0 - beta1) * grad
    v[...] = beta2 * v + (1.0 - beta2) * grad * grad
    m_hat = m / (1.0 - beta1**step) if bias_correction else m
    v_hat = v / (1.0 - beta2**step) if bias_correction else v
    param -= lr * m_hat / (np.sqrt(v_hat) + eps)
    if decay_after:
        param *= 1.0 - lr * decay


def _adamw(fns, level, rng):
    step_fn, clip = fns["adamw_step"], fns["clip_grad_norm"]
    lr, decay = (1e-2, 0.1) if level == "public" else (3e-3, 0.5)
    betas = (0.9, 0.999) if level == "public" else (0.8, 0.99)
    shape = (3, 4) if level == "public" else (7,)
    param = rng.standard_normal(shape)
    state = [param.copy(), np.zeros(shape), np.zeros(shape)]
    mine = [param.copy(), np.zeros(shape), np.zeros(shape)]
    for step in range(1, 6):
        grad = rng.standard_normal(shape)
        # every variant starts from the student's state, so only this step's update differs
        before = [a.copy() for a in mine]
        _adam(*state[:1], grad, *state[1:], lr, step, betas, 1e-6, decay)
        result = step_fn(mine[0], grad.copy(), mine[1], mine[2], lr, step, betas, 1e-6, decay)
        if result is not None:
            _fail("adamw_step: update param, exp_avg and exp_avg_sq in place and return None")
        variants = []
        for kwargs, hint in (
                ({"coupled": True}, "weight decay added to the gradient (L2) instead of "
                 "multiplying the parameter by (1 - lr * weight_decay)?"),
                ({"bias_correction": False}, "the bias correction 1 - beta^step is missing?"),
                ({"decay_after": True}, "weight decay applied after the Adam step: shrink the "
                 "parameter by (1 - lr * weight_decay) first, then take the step (a small "
                 "difference, but no rounding error)")):
            wrong = [a.copy() for a in before]
            if kwargs.pop("coupled", False):
                _adam(wrong[0], grad + decay * before[0], wrong[1], wrong[2], lr, step, betas,
                      1e-6, 0.0)
            else:
                _adam(wrong[0], grad, wrong[1], wrong[2], lr, step, betas, 1e-6, decay,
                      **kwargs)
            variants.append((wrong[0], hint))
        for name, got, expected in zip(("param", "exp_avg", "exp_avg_sq"), mine, state):
            _close("adamw_step", f"{name} after step {step}", got, expected, 1e-10,
                   variants if name == "param" else ())
    # Invariance: with a zero gradient and fresh moments only the decay acts.
    p = rng.standard_normal(shape)
    q = p.copy()
    step_fn(q, np.zeros(shape), np.zeros(shape), np.zeros(shape), lr, 1, betas, 1e-6, decay)
    _close("adamw_step", "param after a zero-gradient step (decay alone)", q,
           p * (1 - lr * decay), 1e-12)
    # clipping: a global norm over every array
    grads = [rng.standard_normal((3, 2)), rng.standard_normal(4)]
    total_expected = math.sqrt(sum(float((g**2).sum()) for g in grads))
    max_norm = total_expected / 2 if level == "public" else total_expected * 0.9
    clipped = [g.copy() for g in grads]
    total = clip(clipped, max_norm)
    if not isinstance(total, (float, np.floating)) or abs(total - total_expected) > 1e-9 * (
            total_expected):
        _fail(f"clip_grad_norm: returned {total!r}, expected the norm before clipping "
              f"{total_expected:.6g}")
    factor = max_norm / (total_expected + 1e-6)
    for i, (got, g) in enumerate(zip(clipped, grads)):
        own = g * min(1.0, max_norm / (float(np.linalg.norm(g)) + 1e-6))
        _close("clip_grad_norm", f"gradient {i} after clipping", got, g * factor, 1e-12,
               [(own, "each array clipped by its own norm? The norm is global, over every "
                 "array together"),
                (g, f"not scaled, although the global norm {total_expected:.3g} exceeds "
                 f"max_norm {max_norm:.3g}: multiply every gradient by max_norm / (total + "
                 f"1e-6), in place")])
    small = [g * 1e-3 for g in grads]
    kept = [g.copy() for g in small]
    clip(small, max_norm)
    for got, g in zip(small, kept):
        _close("clip_grad_norm", "a gradient already below max_norm", got, g, 0.0)


def _masking(fns, level, rng):
    mask_tokens = fns["mask_tokens"]
    vocab_size, mask_id, cls, sep, pad = 30, 3, 1, 2, 0
    special = {pad, cls, sep, mask_id}
    is_special = np.isin(np.arange(vocab_size), list(special))  # (V,) a lookup table
    prob = 0.15 if level == "public" else 0.3
    seq_len = 40 if level == "public" else 12
    counts = {"mask": 0, "changed": 0, "kept": 0}
    chosen_at = np.zeros(seq_len)
    replacement_counts = np.zeros(vocab_size)
    trials = 600 if level == "public" else 1500
    for trial in range(trials):
        tokens = rng.integers(4, vocab_size, size=seq_len)
        length = seq_len - int(rng.integers(0, seq_len // 4))
        tokens[0], tokens[length - 1], tokens[length:] = cls, sep, pad
        original = tokens.copy()
        result = mask_tokens(tokens, np.random.default_rng(trial), special, mask_id,
                             vocab_size, prob)
        if not isinstance(result, tuple) or len(result) != 2:
            _fail("mask_tokens: return (input_ids, labels)")
        input_ids, labels = (np.asarray(r) for r in result)
        if not np.array_equal(tokens, original):
            _fail("mask_tokens: modified token_ids in place; return a corrupted copy")
        for name, arr in (("input_ids", input_ids), ("labels", labels)):
            if arr.shape != tokens.shape:
                _fail(f"mask_tokens: {name} has shape {arr.shape}, expected {tokens.shape}")
        targets = labels != -100
        candidates = length - 2
        expected = max(1, round(candidates * prob))
        if targets.sum() != expected:
            _fail(f"mask_tokens: chose {int(targets.sum())} targets among {candidates} "
                  f"candidates, expected max(1, round({candidates} * {prob})) = {expected}")
        if is_special[original[targets]].any():
            _fail("mask_tokens: chose a special token ([CLS], [SEP], [PAD]) as a target")
        if not np.array_equal(labels[targets], original[targets]):
            _fail("mask_tokens: labels must hold the original id at each target")
        if not np.array_equal(input_ids[~targets], original[~targets]):
            _fail("mask_tokens: a position that is not a target was changed")
        got = input_ids[targets]
        if got.size and not (np.issubdtype(got.dtype, np.integer) and 0 <= got.min()
                             and got.max() < vocab_size):
            _fail(f"mask_tokens: input_ids holds {got.min()!r} .. {got.max()!r} at the "
                  f"targets; ids must be integers in [0, vocab_size = {vocab_size})")
        replaced = (got != mask_id) & (got != original[targets])
        if is_special[got[replaced]].any():
            _fail("mask_tokens: a random replacement was a special id; draw among the "
                  "non-special ids")
        counts["mask"] += int((got == mask_id).sum())
        counts["changed"] += int(replaced.sum())
        counts["kept"] += int((got == original[targets]).sum())
        chosen_at[:length] += targets[:length]
        np.add.at(replacement_counts, got[replaced], 1)
    total = sum(counts.values())
    share_other = 1.0 / (vocab_size - len(special))  # a random draw equal to the original
    expected = {"mask": 0.8, "changed": 0.1 * (1 - share_other),
                "kept": 0.1 + 0.1 * share_other}
    for branch, share in expected.items():
        got_share = counts[branch] / total
        # five standard deviations of a binomial share: a correct rule fails 1 in 10^6 seeds
        bound = 5 * math.sqrt(share * (1 - share) / total)
        if abs(got_share - share) > bound:
            shares = {b: counts[b] / total for b in counts}
            hint = ""
            if shares["changed"] < 0.02 or shares["kept"] < 0.02:
                hint = ("; one draw per target, cumulative thresholds: < 0.8 [MASK], < 0.9 a "
                        "random id, else kept?")
            elif abs(shares["mask"] - 0.9) < 0.03:
                hint = "; [MASK] for 90% of the targets: the first threshold is 0.8?"
            _fail(f"mask_tokens: {branch} share {got_share:.3f} over {total} targets, "
                  f"expected {share:.3f} +/- {bound:.3f} (80% [MASK], 10% random, 10% "
                  f"kept){hint}")
    if level == "hidden":
        # every non-special id equally likely as a replacement; every inner position as target
        used = replacement_counts[4:]  # (26,) the non-special ids
        expected_count = used.sum() / used.size
        chi2 = float(((used - expected_count) ** 2).sum() / expected_count)
        # 25 degrees of freedom: a uniform draw exceeds 80 with probability below 1e-7
        if chi2 > 80.0:
            _fail(f"mask_tokens: random replacements are not uniform over the non-special ids "
                  f"(chi-square {chi2:.0f} on 25 degrees of freedom)")
        inner = chosen_at[1:seq_len - seq_len // 4 - 1]
        if inner.min() < 0.5 * inner.mean():
            _fail("mask_tokens: some positions are rarely chosen; choose targets uniformly")


def _nsp(fns, level, rng):
    make_pairs = fns["make_nsp_pairs"]
    num_docs = 8 if level == "public" else 2
    lengths = rng.integers(1 if level == "hidden" else 2, 9, size=num_docs)
    lengths[0] = max(lengths[0], 4)  # pairs to count in every draw
    documents = [[[1000 * d + s, 7] for s in range(n)] for d, n in enumerate(lengths)]
    where = {1000 * d + s: (d, s) for d, n in enumerate(lengths) for s in range(n)}
    rounds = 120 if level == "public" else 400
    firsts = counted = 0
    for r in range(rounds):
        pairs = make_pairs([[list(s) for s in doc] for doc in documents],
                           np.random.default_rng(r))
        if not isinstance(pairs, list) or len(pairs) != int((lengths - 1).sum()):
            _fail(f"make_nsp_pairs: expected a list of {int((lengths - 1).sum())} pairs "
                  f"(one per sentence that has a next one), got "
                  f"{len(pairs) if isinstance(pairs, list) else type(pairs).__name__}")
        for pair in pairs:
            if not isinstance(pair, tuple) or len(pair) != 3:
                _fail("make_nsp_pairs: each pair must be a tuple (sentence_a, sentence_b, label)")
            a, b, label = pair
            (da, sa), (db, sb) = where[a[0]], where[b[0]]
            if label == 0 and (db != da or sb != sa + 1):
                _fail("make_nsp_pairs: a label-0 pair whose B is not the sentence after A")
            if label == 1 and db == da:
                _fail("make_nsp_pairs: a label-1 pair took B from A's own document; it "
                      "must come from another document")
            if label not in (0, 1):
                _fail(f"make_nsp_pairs: label must be 0 or 1, got {label!r}")
            firsts += label == 0
            counted += 1
    share = firsts / counted
    bound = 5 * math.sqrt(0.25 / counted)
    if abs(share - 0.5) > bound:
        _fail(f"make_nsp_pairs: {share:.3f} of the pairs are true next sentences, expected "
              f"0.5 +/- {bound:.3f}")
    if level == "hidden":
        try:
            make_pairs([[[1, 2], [3, 4]]], np.random.default_rng(0))
        except ValueError:
            return
        _fail("make_nsp_pairs: a single document must raise ValueError (no other document "
              "to draw from)")


_CHECKS = {
    "linear": _linear, "embedding": _embedding, "layernorm": _layernorm, "gelu": _gelu,
    "softmax": _softmax, "dropout": _dropout, "attention": _attention,
    "cross_entropy": _cross_entropy, "encoder_block": _encoder_block,
    "tied_decoder": _tied_decoder, "model_gradcheck": _model_gradcheck, "adamw": _adamw,
    "masking": _masking, "nsp": _nsp,
}


def run_checks(task: str, functions: dict, level: str = "public", seed: int = 0) -> None:
    """Run the ``level`` checks of ``task`` on ``functions`` (name -> callable).

    Raises CheckFailed with one line at the first failing check; returns None when all pass.
    The public checks use a fixed seed (what the student sees locally is what is graded);
    the hidden ones the instructor's ``seed``.
    """
    if level not in LEVELS:
        raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
    rng = np.random.default_rng([seed, sum(map(ord, task)), LEVELS.index(level)])
    _CHECKS[task](functions, level, rng)
