"""Every layer of BERT as a pair of plain functions: ``*_forward`` and ``*_backward``.

Each ``*_forward(...)`` returns ``(out, cache)``; the matching ``*_backward(dout, cache)``
returns the gradients of ``sum(out * dout)`` with respect to the forward's floating-point
array inputs, in the order the forward takes them. The cache holds exactly what the
backward needs (named, so a reader can see what is kept).

Dimension legend: B batch, T sequence length, H hidden size, N attention heads,
D head size (H / N), I intermediate size, V vocabulary size, C classes.

The derivation of every backward pass is in ``docs/backprop.md`` (one section per pair,
linked below as ``docs/backprop.md#<name>``). Backward passes never modify ``dout``.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from minibert.checks import (
    IGNORE_INDEX,
    check_float_array,
    check_ids,
    check_probability,
    check_real,
)

__all__ = [
    "erf", "normal_cdf", "normal_cdf_and_pdf", "log_softmax", "column_sum", "row_mean",
    "linear_forward", "linear_backward",
    "embedding_forward", "embedding_backward",
    "layernorm_forward", "layernorm_backward",
    "gelu_forward", "gelu_backward",
    "relu_forward", "relu_backward",
    "tanh_forward", "tanh_backward",
    "softmax_forward", "softmax_backward",
    "dropout_forward", "dropout_backward",
    "attention_forward", "attention_backward",
    "cross_entropy_forward", "cross_entropy_backward",
    "LinearCache", "EmbeddingCache", "LayerNormCache", "GeluCache", "SoftmaxCache",
    "DropoutCache", "AttentionCache", "CrossEntropyCache",
]


# ----------------------------------------------------------------------------------------
# What each forward keeps for its backward, by name.
# ----------------------------------------------------------------------------------------

class LinearCache(NamedTuple):
    x: np.ndarray  # (..., in)
    weight: np.ndarray  # (out, in)
    has_bias: bool


class EmbeddingCache(NamedTuple):
    ids: np.ndarray  # int (...)
    weight_shape: tuple  # (V, H)
    dtype: np.dtype


class LayerNormCache(NamedTuple):
    x_hat: np.ndarray  # (..., H), the normalized input
    rstd: np.ndarray  # (..., 1), 1 / sqrt(var + eps)
    weight: np.ndarray  # (H,)


class GeluCache(NamedTuple):
    approximate: str  # "none" (erf form) or "tanh"
    x: np.ndarray  # (...)
    cdf: np.ndarray | None  # Phi(x) for the erf form
    tanh_inner: np.ndarray | None  # tanh(sqrt(2/pi) (x + 0.044715 x^3)) for the tanh form
    pdf: np.ndarray | None = None  # phi(x) for the erf form, from the exp that gave Phi


class SoftmaxCache(NamedTuple):
    probs: np.ndarray  # the output
    axis: int


class DropoutCache(NamedTuple):
    keep: np.ndarray  # bool, True where the unit was kept
    scale: np.floating  # 1 / (1 - p)


class AttentionCache(NamedTuple):
    q: np.ndarray  # (B, N, T, D)
    k: np.ndarray  # (B, N, T, D)
    v: np.ndarray  # (B, N, T, D)
    scale: np.floating  # 1 / sqrt(D)
    attention_probs: np.ndarray  # (B, N, T, T) softmax output, before dropout
    dropout: DropoutCache | None  # None when dropout was off
    dropped_probs: np.ndarray  # (B, N, T, T) the probabilities that multiplied v


class CrossEntropyCache(NamedTuple):
    log_probs: np.ndarray  # (..., C)
    safe_labels: np.ndarray  # int (...), ignored positions replaced by 0
    valid: np.ndarray  # bool (...), False where the label was ignore_index
    count: int  # number of valid labels


# ----------------------------------------------------------------------------------------
# erf: NumPy has none, and GELU (the exact form HF calls "gelu") needs it.
# ----------------------------------------------------------------------------------------

# W. J. Cody, "Rational Chebyshev approximations for the error function", Mathematics of
# Computation 23 (1969) 631-637, as in his CALERF routine (SPECFUN, netlib): three
# rational functions, each accurate to float64 rounding on its interval (max |error|
# 2.2e-16 against math.erf on 400,001 points of [-7, 7], tests/test_functional.py).
#   |x| <= 0.46875:        erf(x)  = x R1(x^2)
#   0.46875 < |x| <= 4:    erfc(x) = exp(-x^2) R2(|x|)
#   |x| > 4:               erfc(x) = exp(-x^2) / |x| (1/sqrt(pi) + R3(1/x^2) / x^2)
# Each R = P / Q is evaluated by Horner's rule, highest order first; erf is odd.
_ERF_SMALL = 0.46875
_ERF_MIDDLE = 4.0
_ERF_R1_P = (1.85777706184603153e-1, 3.16112374387056560e00, 1.13864154151050156e02,
             3.77485237685302021e02, 3.20937758913846947e03)
_ERF_R1_Q = (1.0, 2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
             2.84423683343917062e03)
_ERF_R2_P = (2.15311535474403846e-8, 5.64188496988670089e-1, 8.88314979438837594e00,
             6.61191906371416295e01, 2.98635138197400131e02, 8.81952221241769090e02,
             1.71204761263407058e03, 2.05107837782607147e03, 1.23033935479799725e03)
_ERF_R2_Q = (1.0, 1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
             1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
             3.43936767414372164e03, 1.23033935480374942e03)
_ERF_R3_P = (1.63153871373020978e-2, 3.05326634961232344e-1, 3.60344899949804439e-1,
             1.25781726111229246e-1, 1.60837851487422766e-2, 6.58749161529837803e-4)
_ERF_R3_Q = (1.0, 2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
             6.05183413124413191e-2, 2.33520497626869185e-3)
_INV_SQRT_PI = 1.0 / math.sqrt(math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
# float32 has no use for Cody's 1e-17: for float32 input normal_cdf computes the left tail
# Phi(-|x|) = exp(-x^2/2) P(|x|) / Q(|x|) with a rational function of degree 4/4 fitted in
# this project (benchmarks/fit_normal_tail.py: relative error 1.1e-8 on |x| <= 4 sqrt 2,
# 3.1e-7 when evaluated in float32), half the passes of Cody's degree-8 R2.
_TAIL32_LIMIT = 4.0 * math.sqrt(2.0)
_TAIL32_P = (5.33684812997996719e-05, 3.97347935820008491e-01, 3.32406284685955455e+00,
             1.11795947680817740e+01, 1.82509313350081541e+01)
_TAIL32_Q = (1.0, 8.27767852991921771e+00, 2.94753319515454564e+01, 5.14834353404096419e+01,
             3.65018630691519306e+01)
# erf works through its input in blocks of this many values, so that the dozen
# temporaries of a block stay in the CPU's cache between the ~40 passes over them.
_ERF_BLOCK = 1 << 17


def _rational(z: np.ndarray, numerator: tuple, denominator: tuple) -> np.ndarray:
    """P(z) / Q(z) by Horner's rule, coefficients highest order first; in z's dtype."""
    dtype = z.dtype.type
    p = z * dtype(numerator[0])
    q = z + dtype(denominator[1])  # every Q here has leading coefficient 1
    for a, b in zip(numerator[1:-1], denominator[2:]):
        p += dtype(a)
        p *= z
        q *= z
        q += dtype(b)
    p += dtype(numerator[-1])
    p /= q
    return p


def _erfc_nonnegative(y: np.ndarray) -> np.ndarray:
    """erfc(y) for y >= 0 (1-D), by the middle and large intervals' formulas."""
    beyond = y > _ERF_MIDDLE
    y_middle = np.minimum(y, y.dtype.type(_ERF_MIDDLE)) if beyond.any() else y
    erfc = _rational(y_middle, _ERF_R2_P, _ERF_R2_Q)
    erfc *= np.exp(-(y_middle * y_middle))
    if beyond.any():  # rare in a network (|GELU input| > 5.7)
        y_big = np.minimum(y[beyond], 27.0)  # erfc(27) = 5e-319: 0 in float32, 0 to float64
        inverse_square = 1.0 / (y_big * y_big)
        tail = _INV_SQRT_PI - inverse_square * _rational(inverse_square, _ERF_R3_P, _ERF_R3_Q)
        erfc[beyond] = np.exp(-(y_big * y_big)) * tail / y_big
    return erfc


def _erf_small(y: np.ndarray) -> np.ndarray:
    """erf(y) for |y| <= 0.46875: y R1(y^2)."""
    return y * _rational(y * y, _ERF_R1_P, _ERF_R1_Q)


def _blockwise(function, x: np.ndarray) -> np.ndarray:
    """``function(block)`` over 1-D blocks of x, gathered into one array of x's shape."""
    out = np.empty_like(x)
    flat_x, flat_out = x.reshape(-1), out.reshape(-1)
    for start in range(0, flat_x.size, _ERF_BLOCK):
        stop = start + _ERF_BLOCK
        flat_out[start:stop] = function(flat_x[start:stop])
    return out


def _erf_block(x: np.ndarray) -> np.ndarray:
    y = np.abs(x)
    out = 1.0 - _erfc_nonnegative(y)
    small = y <= _ERF_SMALL
    if small.any():  # near 0, x R1(x^2) keeps erf's relative accuracy (1 - erfc would not)
        out[small] = _erf_small(y[small])
    return np.copysign(out, x, out=out)


def erf(x) -> np.ndarray:
    """Error function, vectorized, by W. J. Cody's rational approximations (see above).

    Inputs: x array-like (float32 stays float32; other input becomes float64).
    Output: erf(x), same shape and dtype: within float64 rounding of the true value for
    float64 input (relative accuracy near 0 too), within float32 rounding for float32
    input. NaN stays NaN. See docs/backprop.md#erf.
    """
    x = np.asarray(x)
    return _blockwise(_erf_block, x if x.dtype == np.float32 else x.astype(np.float64))


def _normal_tail_float32(x: np.ndarray, density: np.ndarray) -> np.ndarray:
    """q = Phi(-|x|) for float32 x (1-D), by the fitted rational function above; writes
    exp(-x^2 / 2), which it computes on the way, into ``density``."""
    a = np.abs(x)
    beyond = a > _TAIL32_LIMIT
    a_fit = np.minimum(a, np.float32(_TAIL32_LIMIT)) if beyond.any() else a
    tail = _rational(a_fit, _TAIL32_P, _TAIL32_Q)  # Phi(-|x|) exp(x^2 / 2)
    np.exp(np.float32(-0.5) * (x * x), out=density)
    if beyond.any():  # rare in a network (|x| > 5.7): Cody's asymptotic formula
        tail *= np.exp(np.float32(-0.5) * (a_fit * a_fit))
        tail[beyond] = 0.5 * _erfc_nonnegative(a[beyond] * np.float32(1.0 / math.sqrt(2.0)))
    else:
        tail *= density
    return tail


def _normal_cdf_block(x: np.ndarray, density: np.ndarray | None = None,
                      out: np.ndarray | None = None) -> np.ndarray:
    """Phi(x) of one 1-D block, into ``out`` when given; with ``density`` (x's shape and
    dtype) it also writes phi(x) there, from the same exp in float32."""
    if x.dtype == np.float32:
        exp_half_square = density if density is not None else np.empty_like(x)
        tail = _normal_tail_float32(x, exp_half_square)  # q = Phi(-|x|)
        if density is not None:
            density *= np.float32(_INV_SQRT_2PI)  # phi(x)
    else:
        if density is not None:
            np.exp(-0.5 * (x * x), out=density)
            density *= _INV_SQRT_2PI  # phi(x)
        y = np.abs(x) * (1.0 / math.sqrt(2.0))
        tail = _erfc_nonnegative(y)  # erfc(|x| / sqrt 2) = 2 Phi(-|x|)
        small = y <= _ERF_SMALL
        if small.any():  # near 0, erfc = 1 - y R1(y^2) to float64 rounding
            tail[small] = 1.0 - _erf_small(y[small])
        tail *= 0.5  # q = Phi(-|x|)
    # Phi(x) = q where x < 0 and 1 - q where x >= 0: q + [x >= 0] (1 - 2q), which keeps q
    # exact in the left tail and needs no masked copy
    step = (x >= 0).astype(x.dtype)  # 1.0 or 0.0
    step *= x.dtype.type(-2.0) * tail + x.dtype.type(1.0)
    return np.add(tail, step, out=out)


def normal_cdf(x: np.ndarray) -> np.ndarray:
    """Phi(x) = (1 + erf(x / sqrt 2)) / 2 = erfc(-x / sqrt 2) / 2, the standard normal CDF.

    Computed from the left tail Phi(-|x|) (Cody's erfc in float64, the fitted degree-4
    rational function above in float32), which keeps Phi's relative accuracy in the left
    tail. Inputs: x float32 or float64 (...). Output: same shape and dtype, within rounding
    of the true value (float32: |error| < 2.4e-7; float64: 2.2e-16).
    """
    return _blockwise(_normal_cdf_block, x)


def normal_cdf_and_pdf(x: np.ndarray, times_x: bool = False):
    """Phi(x) and phi(x) = exp(-x^2 / 2) / sqrt(2 pi), each (...): what GELU's forward keeps
    for its backward (in float32 both come from one exp). With ``times_x`` also x Phi(x),
    GELU itself, first: (x Phi(x), Phi(x), phi(x)), each block multiplied while it is in
    the cache."""
    cdf, pdf = np.empty_like(x), np.empty_like(x)
    gelu = np.empty_like(x) if times_x else None
    flat_x, flat_cdf, flat_pdf = x.reshape(-1), cdf.reshape(-1), pdf.reshape(-1)
    for start in range(0, flat_x.size, _ERF_BLOCK):
        block = slice(start, start + _ERF_BLOCK)
        _normal_cdf_block(flat_x[block], flat_pdf[block], out=flat_cdf[block])
        if times_x:
            np.multiply(flat_x[block], flat_cdf[block], out=gelu.reshape(-1)[block])
    return (gelu, cdf, pdf) if times_x else (cdf, pdf)


# ----------------------------------------------------------------------------------------
# Linear:  y = x @ W.T + b   (weights stored (out, in), the PyTorch / HF layout)
# ----------------------------------------------------------------------------------------

def check_linear_inputs(x, weight, bias) -> None:
    """Check the arguments of ``linear_forward``."""
    check_float_array("x", x)
    check_float_array("weight", weight)
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-D (out, in), got shape {weight.shape}")
    if x.ndim < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"x has {x.shape[-1] if x.ndim else 'no'} input features (shape {x.shape}) but "
            f"weight expects {weight.shape[1]} (weight shape {weight.shape}); "
            f"x must be (..., {weight.shape[1]})"
        )
    if bias is not None:
        check_float_array("bias", bias)
        if bias.shape != (weight.shape[0],):
            raise ValueError(f"bias must have shape ({weight.shape[0]},), got {bias.shape}")


def linear_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None):
    """Affine map over the last axis. See docs/backprop.md#linear.

    Inputs: x (..., in), weight (out, in), bias (out,) or None.
    Output: y (..., out). Cache: LinearCache(x, weight, has_bias).
    """
    check_linear_inputs(x, weight, bias)
    # One 2-D product over all rows: NumPy runs a stacked (B, T, in) @ (in, out) as B
    # small products, many times slower with a multithreaded BLAS.
    rows = x.reshape(-1, x.shape[-1])  # (rows, in)
    out = (rows @ weight.T).reshape(*x.shape[:-1], weight.shape[0])  # (..., out)
    if bias is not None:
        out += bias
    return out, LinearCache(x, weight, bias is not None)


def linear_backward(dout: np.ndarray, cache):
    """Gradients of the affine map: dx (..., in), dweight (out, in), dbias (out,) or None."""
    x, weight = cache.x, cache.weight
    # forward: out = x @ weight.T + bias
    dout_2d = dout.reshape(-1, dout.shape[-1])  # (rows, out)
    dx = (dout_2d @ weight).reshape(*dout.shape[:-1], weight.shape[1])  # (..., in)
    dweight = dout_2d.T @ x.reshape(-1, x.shape[-1])  # (out, in)
    dbias = column_sum(dout_2d) if cache.has_bias else None  # (out,)
    return dx, dweight, dbias


def row_mean(x: np.ndarray) -> np.ndarray:
    """Mean over the last axis, (..., H) -> (..., 1): x.mean(axis=-1, keepdims=True), as the
    product x @ (ones / H), which BLAS runs several times faster than NumPy's reduction over
    short rows."""
    width = x.shape[-1]
    means = x.reshape(-1, width) @ np.full(width, 1.0 / width, dtype=x.dtype)  # (rows,)
    return means.reshape(*x.shape[:-1], 1)


def column_sum(x2d: np.ndarray) -> np.ndarray:
    """Sum over the rows of a (rows, H) array, (H,): x2d.sum(axis=0), as the product
    ones @ x2d, which BLAS runs several times faster than NumPy's column reduction."""
    return np.ones(x2d.shape[0], dtype=x2d.dtype) @ x2d


# ----------------------------------------------------------------------------------------
# Embedding lookup
# ----------------------------------------------------------------------------------------

def check_embedding_inputs(ids, weight, name: str = "ids") -> np.ndarray:
    """Check the arguments of ``embedding_forward``; returns the ids as an int64 array."""
    check_float_array("weight", weight)
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-D (V, H), got shape {weight.shape}")
    return check_ids(name, ids, weight.shape[0], "the rows of weight")


def embedding_forward(ids, weight: np.ndarray, name: str = "ids"):
    """Row lookup: out[...] = weight[ids[...]]. See docs/backprop.md#embedding.

    Inputs: ids int (...), weight (V, H). Output: (..., H).
    Cache: EmbeddingCache(ids, weight_shape, dtype).
    ``name`` is what an error calls the ids: the model's tables say "input_ids" and
    "token_type_ids", so an id outside the table is reported once, by the argument's name.
    """
    ids = check_embedding_inputs(ids, weight, name)
    return weight[ids], EmbeddingCache(ids, weight.shape, weight.dtype)


def embedding_backward(dout: np.ndarray, cache):
    """Scatter-add the rows of dout back to the rows that were looked up. Returns dweight (V, H)."""
    rows, width = cache.weight_shape
    dweight = np.zeros(rows * width, dtype=cache.dtype)  # (V * H,), the table's flat view
    # forward: out = weight[ids]; an id used twice receives both gradients, so they are
    # added with np.add.at (dweight[ids] += dout would keep only one of them). Element
    # (id, column) of the table is id * H + column of the flat view: np.add.at is several
    # times faster over single elements of a 1-D array than over whole rows.
    flat_index = (cache.ids.reshape(-1, 1) * width + np.arange(width)).reshape(-1)  # (n * H,)
    np.add.at(dweight, flat_index, dout.reshape(-1))
    return dweight.reshape(rows, width)


# ----------------------------------------------------------------------------------------
# LayerNorm over the last axis
# ----------------------------------------------------------------------------------------

def check_layernorm_inputs(x, weight, bias, eps) -> None:
    """Check the arguments of ``layernorm_forward``."""
    check_float_array("x", x)
    for name, p in (("weight", weight), ("bias", bias)):
        check_float_array(name, p)
        if p.shape != (x.shape[-1],):
            raise ValueError(f"{name} must have shape ({x.shape[-1]},) to match x {x.shape}, "
                             f"got {p.shape}")
    check_real("eps", eps, 0.0, above=True)


def layernorm_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-12):
    """Normalize each row to zero mean and unit variance, then scale and shift.

    See docs/backprop.md#layernorm. Inputs: x (..., H), weight (H,), bias (H,).
    Output: (..., H). Cache: LayerNormCache(x_hat, rstd, weight), rstd = 1/sqrt(var + eps).
    """
    check_layernorm_inputs(x, weight, bias, eps)
    mean = row_mean(x)  # (..., 1)
    x_hat = x - mean  # (..., H) centred; scaled in place below
    var = row_mean(np.square(x_hat))  # (..., 1)
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    x_hat *= rstd  # (..., H) normalized
    out = x_hat * weight
    out += bias  # (..., H)
    return out, LayerNormCache(x_hat, rstd, weight)


def layernorm_backward(dout: np.ndarray, cache):
    """Returns dx (..., H), dweight (H,), dbias (H,)."""
    x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
    width = dout.shape[-1]
    # forward: out = x_hat * weight + bias; the sums run over every row
    dbias = column_sum(dout.reshape(-1, width))  # (H,)
    dweight = column_sum((dout * x_hat).reshape(-1, width))  # (H,)
    dx_hat = dout * weight  # (..., H)
    # forward: x_hat = (x - mean) * rstd; mean and rstd depend on every x in the row, so
    # dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat)), built in place
    projection = row_mean(dx_hat * x_hat)  # (..., 1)
    dx = dx_hat
    dx -= row_mean(dx_hat)
    dx -= x_hat * projection
    dx *= rstd  # (..., H)
    return dx, dweight, dbias


# ----------------------------------------------------------------------------------------
# Activations
# ----------------------------------------------------------------------------------------

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_COEFF = 0.044715
_GELU_APPROXIMATIONS = ("none", "tanh")


def check_gelu_inputs(x, approximate) -> None:
    """Check the arguments of ``gelu_forward``."""
    check_float_array("x", x)
    if approximate not in _GELU_APPROXIMATIONS:
        raise ValueError(f"approximate must be one of {_GELU_APPROXIMATIONS}, got {approximate!r}")


def gelu_forward(x: np.ndarray, approximate: str = "none"):
    """GELU(x) = x * Phi(x). See docs/backprop.md#gelu.

    approximate="none" is the exact erf form (HF "gelu", Google's BERT code as first
    released), Phi(x) = (1 + erf(x / sqrt 2)) / 2 (``normal_cdf``, in x's dtype); "tanh"
    is 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (HF "gelu_new", the form Google's
    code switched to later).
    Inputs: x (...). Output: (...). Cache: GeluCache(approximate, x, cdf, tanh_inner, pdf).
    """
    check_gelu_inputs(x, approximate)
    if approximate == "none":
        out, cdf, pdf = normal_cdf_and_pdf(x, times_x=True)  # x Phi(x), Phi(x), phi(x)
        return out, GeluCache("none", x, cdf, None, pdf)
    # x * x * x, not x**3: NumPy sends a cube to its general (slow) power routine
    inner = x * x * x
    inner *= _GELU_TANH_COEFF
    inner += x
    inner *= _SQRT_2_OVER_PI  # u = sqrt(2/pi) (x + c x^3)
    tanh_inner = np.tanh(inner, out=inner)
    out = tanh_inner + 1.0
    out *= x
    out *= 0.5
    return out, GeluCache("tanh", x, None, tanh_inner)


def gelu_backward(dout: np.ndarray, cache):
    """Returns dx (...)."""
    x = cache.x
    if cache.approximate == "none":
        # forward: out = x * Phi(x);  d/dx = Phi(x) + x * phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi)
        local = x * cache.pdf  # x phi(x), phi kept by the forward
        local += cache.cdf  # Phi(x) + x phi(x)
        local *= dout
        return local
    # forward: out = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + c x^3)
    tanh_inner = cache.tanh_inner
    du_dx = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_COEFF * x * x)
    local = 0.5 * (1.0 + tanh_inner) + 0.5 * x * (1.0 - tanh_inner * tanh_inner) * du_dx
    return dout * local


def relu_forward(x: np.ndarray):
    """max(x, 0). Inputs: x (...). Output: (...). Cache: the mask x > 0."""
    check_float_array("x", x)
    positive = x > 0
    return x * positive, positive


def relu_backward(dout: np.ndarray, cache):
    """Returns dx (...): dout where x > 0, else 0 (the subgradient at 0 is taken as 0)."""
    return dout * cache


def tanh_forward(x: np.ndarray):
    """tanh(x), used by the pooler. Inputs: x (...). Output: (...). Cache: the output."""
    check_float_array("x", x)
    out = np.tanh(x)
    return out, out


def tanh_backward(dout: np.ndarray, cache):
    """Returns dx (...). forward: out = tanh(x);  d/dx = 1 - out^2. See docs/backprop.md#tanh."""
    out = cache
    return dout * (1.0 - out * out)


# ----------------------------------------------------------------------------------------
# Softmax
# ----------------------------------------------------------------------------------------

def check_softmax_inputs(x, axis) -> None:
    """Check the arguments of ``softmax_forward``."""
    check_float_array("x", x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"got {axis}")


def softmax_forward(x: np.ndarray, axis: int = -1):
    """Numerically stable softmax along ``axis``. See docs/backprop.md#softmax.

    Entries of -inf get probability exactly 0; a slice that is -inf everywhere (nothing
    to choose from, e.g. a query that may attend to no key) gives all zeros, not NaN.
    Inputs: x (...). Output: probabilities, same shape. Cache: SoftmaxCache(probs, axis).
    """
    check_softmax_inputs(x, axis)
    # Subtracting the largest entry makes it 0, so exp cannot overflow; an all -inf slice
    # subtracts 0 instead, and its exp is all zeros.
    largest = x.max(axis=axis, keepdims=True)
    largest[~np.isfinite(largest)] = 0.0
    probs = x - largest
    np.exp(probs, out=probs)  # unnormalized, in place
    total = probs.sum(axis=axis, keepdims=True)
    total[total == 0.0] = 1.0  # an all -inf slice stays all zeros
    probs /= total
    return probs, SoftmaxCache(probs, axis)


def softmax_backward(dout: np.ndarray, cache):
    """Returns dx: probs * (dout - sum(dout * probs)) along the softmax axis."""
    probs, axis = cache.probs, cache.axis
    dx = dout - (dout * probs).sum(axis=axis, keepdims=True)
    dx *= probs
    return dx


# ----------------------------------------------------------------------------------------
# Dropout (inverted: scale the kept units at training time, identity at eval)
# ----------------------------------------------------------------------------------------

def check_dropout_p(p) -> float:
    """``p`` as a float, after checking it is a probability in [0, 1)."""
    return check_probability("dropout probability p", p, open_at_one=True)


def check_dropout_inputs(x, p, rng, training) -> None:
    """Check the arguments of ``dropout_forward``: a generator only when it will draw."""
    check_float_array("x", x)
    if check_dropout_p(p) > 0.0 and training and not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator when training with p > 0, "
                        f"got {type(rng).__name__}")


def dropout_forward(x: np.ndarray, p: float, rng: np.random.Generator | None,
                    training: bool = True):
    """Zero each unit with probability p and scale the rest by 1/(1-p), so E[out] = x.

    Inputs: x (...), p in [0, 1), rng an np.random.Generator (needed only when training
    and p > 0). Output: (...). Cache: DropoutCache(keep, scale), or None for the identity.
    See docs/backprop.md#dropout.
    """
    check_dropout_inputs(x, p, rng, training)
    if not training or p == 0.0:
        return x, None
    keep = rng.random(x.shape, dtype=x.dtype) >= p  # (...) bool: 1 byte per unit kept
    scale = x.dtype.type(1.0 / (1.0 - p))
    out = x * keep
    out *= scale
    return out, DropoutCache(keep, scale)


def dropout_backward(dout: np.ndarray, cache):
    """Returns dx: dout through the same mask and scale (identity when cache is None)."""
    if cache is None:
        return dout
    dx = dout * cache.keep
    dx *= cache.scale
    return dx


# ----------------------------------------------------------------------------------------
# Scaled dot-product attention over all heads at once
# ----------------------------------------------------------------------------------------

def check_attention_inputs(q, k, v, mask):
    """Check q, k, v and the mask of ``attention_forward``; returns the mask as an array."""
    for name, arr in (("q", q), ("k", k), ("v", v)):
        check_float_array(name, arr)
        if arr.ndim != 4:
            raise ValueError(f"{name} must be 4-D (B, N, T, D), got shape {arr.shape}")
    if k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q, k, v shapes are incompatible: q {q.shape}, k {k.shape}, "
                         f"v {v.shape}; allowed: q (B, N, Tq, D), k and v (B, N, Tk, D)")
    if mask is None:
        return None
    mask = np.asarray(mask)
    target = (*q.shape[:3], k.shape[2])
    try:
        if np.broadcast_shapes(mask.shape, target) != target:
            raise ValueError
    except ValueError:
        raise ValueError(f"mask of shape {mask.shape} does not broadcast to (B, N, T, T) = "
                         f"{target}; a padding mask is usually (B, 1, 1, T)") from None
    return mask


def attention_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask=None,
                      dropout_p: float = 0.0, rng: np.random.Generator | None = None,
                      training: bool = False):
    """softmax(q k^T / sqrt(D)) v with a key mask. See docs/backprop.md#attention.

    Inputs: q, k, v (B, N, T, D); mask broadcastable to (B, N, T, T), nonzero = may attend
    (a padding mask is usually (B, 1, 1, T)); optional dropout on the probabilities.
    Output: context (B, N, T, D). Cache: AttentionCache, whose ``attention_probs``
    (B, N, T, T) are the probabilities before dropout (what heatmaps show). A masked key
    gets probability exactly 0; a query row with no visible key gets all zeros (never NaN).
    """
    mask = check_attention_inputs(q, k, v, mask)
    scale = q.dtype.type(1.0 / math.sqrt(q.shape[-1]))
    scores = (q * scale) @ k.swapaxes(-1, -2)  # (B, N, T, T); scaling q is the smaller pass
    if mask is not None and not mask.all():
        # a hidden key can never be chosen: its score becomes -inf, in place
        np.copyto(scores, -np.inf, where=np.broadcast_to(mask == 0, scores.shape))
    attention_probs, _ = softmax_forward(scores, axis=-1)  # (B, N, T, T)
    dropped_probs, dropout_cache = dropout_forward(attention_probs, dropout_p, rng, training)
    context = dropped_probs @ v  # (B, N, T, D)
    return context, AttentionCache(q, k, v, scale, attention_probs, dropout_cache, dropped_probs)


def attention_backward(dout: np.ndarray, cache):
    """Returns dq, dk, dv, each (B, N, T, D)."""
    q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
    # forward: context = dropped_probs @ v
    dv = cache.dropped_probs.swapaxes(-1, -2) @ dout  # (B, N, T, D)
    d_dropped = dout @ v.swapaxes(-1, -2)  # (B, N, T, T)
    # forward: dropped_probs = dropout(attention_probs)
    d_probs = dropout_backward(d_dropped, cache.dropout)
    # forward: attention_probs = softmax(scores); a masked key has probability 0, so the
    # softmax backward gives it gradient 0 and the mask needs no backward of its own.
    d_scores = softmax_backward(d_probs, SoftmaxCache(cache.attention_probs, -1))
    # forward: scores = (q @ k^T) * scale
    dq = (d_scores @ k) * scale  # (B, N, T, D)
    dk = (d_scores.swapaxes(-1, -2) @ q) * scale  # (B, N, T, D)
    return dq, dk, dv


# ----------------------------------------------------------------------------------------
# Softmax cross-entropy with ignored labels
# ----------------------------------------------------------------------------------------

def check_cross_entropy_inputs(logits, labels, ignore_index) -> np.ndarray:
    """Check the arguments of ``cross_entropy_forward``; returns the labels as an array."""
    check_float_array("logits", logits)
    labels = check_ids("labels", labels, logits.shape[-1], "the number of classes",
                       ignore=ignore_index)
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"labels must have shape logits.shape[:-1] = {logits.shape[:-1]}, "
                         f"got {labels.shape}")
    return labels


def log_softmax(x: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, (..., C) -> (..., C): the shift by the row's largest
    entry keeps exp from overflowing, and the log of the normalizer is taken once per row."""
    shifted = x - x.max(axis=-1, keepdims=True)  # (..., C)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., C)


def cross_entropy_forward(logits: np.ndarray, labels, ignore_index: int = IGNORE_INDEX):
    """Mean negative log-likelihood over the labels that are not ``ignore_index``.

    See docs/backprop.md#cross-entropy. Inputs: logits (..., C), labels int (...) equal to
    logits.shape[:-1], each in [0, C) or equal to ignore_index. Output: scalar loss (0 when
    every label is ignored). Cache: CrossEntropyCache(log_probs, safe_labels, valid, count).
    """
    labels = check_cross_entropy_inputs(logits, labels, ignore_index)
    valid = labels != ignore_index
    count = int(valid.sum())
    log_probs = log_softmax(logits)  # (..., C)
    safe_labels = np.where(valid, labels, 0)  # never index with ignore_index
    picked = np.take_along_axis(log_probs, safe_labels[..., None], axis=-1)[..., 0]  # (...)
    loss = -(picked * valid).sum() / max(count, 1)
    return logits.dtype.type(loss), CrossEntropyCache(log_probs, safe_labels, valid, count)


def cross_entropy_backward(dloss, cache):
    """Returns dlogits (..., C) = dloss * (softmax - one_hot) / count at valid positions, else 0."""
    if cache.count == 0:
        return np.zeros_like(cache.log_probs)
    dlogits = np.exp(cache.log_probs)  # softmax(logits)
    # forward: loss = -mean(log_probs[label]); d/dlogits = softmax - one_hot(label)
    labels = cache.safe_labels[..., None]
    np.put_along_axis(dlogits, labels, np.take_along_axis(dlogits, labels, axis=-1) - 1.0,
                      axis=-1)
    dlogits *= (cache.valid[..., None] * (float(dloss) / cache.count)).astype(dlogits.dtype)
    return dlogits
