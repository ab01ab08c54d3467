"""Fast paths: the same math as ``functional``'s reference pairs, arranged for speed.

``functional`` is written to be read: each pair says what it computes in the fewest lines.
This module holds the faster twins the model uses for training and inference: fused and
in-place versions that make fewer passes over memory, a float32 Phi for GELU, one matrix
product for the query, key and value projections, and LayerNorm's row sums as BLAS
products. Each twin takes the same arguments and returns the same outputs and the same
named cache as its reference, so either backward accepts either forward's cache; the
tests prove each twin equal to its reference (tests/test_kernels.py, with the tolerance
of each stated and justified there).

The switch::

    import minibert as mb
    with mb.fast_kernels(False):       # the reference pairs only, e.g. in a notebook
        out = model(input_ids)
    mb.set_fast_kernels(False)         # the same, until switched back

Setting the environment variable ``MINIBERT_FAST_KERNELS=0`` starts with them off.
Layers pick an implementation with ``fast(F.gelu_forward)``: the twin while fast kernels
are on, the reference itself while they are off (or for a function with no twin).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from contextlib import contextmanager

import numpy as np

from minibert import functional as F
from minibert.checks import check_bool

__all__ = ["fast", "fast_kernels", "set_fast_kernels", "fast_kernels_enabled",
           "normal_cdf_float32"]

_enabled = os.environ.get("MINIBERT_FAST_KERNELS", "1").strip() not in ("0", "false", "no")


def fast_kernels_enabled() -> bool:
    """True while the model uses the fast twins, False while it uses the reference pairs."""
    return _enabled


def set_fast_kernels(enabled: bool) -> bool:
    """Switch the fast twins on or off for every model; returns the previous setting."""
    global _enabled
    previous, _enabled = _enabled, check_bool("enabled", enabled)
    return previous


@contextmanager
def fast_kernels(enabled: bool):
    """Context manager: fast twins on (True) or off (False) inside the ``with`` block."""
    previous = set_fast_kernels(enabled)
    try:
        yield
    finally:
        set_fast_kernels(previous)


_TWINS: dict[Callable, Callable] = {}


def _twin_of(reference: Callable):
    def register(function: Callable) -> Callable:
        _TWINS[reference] = function
        return function
    return register


def fast(reference: Callable) -> Callable:
    """The fast twin of a ``functional`` function while fast kernels are on, else itself."""
    return _TWINS.get(reference, reference) if _enabled else reference


# ----------------------------------------------------------------------------------------
# Phi for float32: a Chebyshev fit of erfc, blocked so that its passes stay in cache
# ----------------------------------------------------------------------------------------

# Numerical Recipes' erfcc (Press et al., "Numerical Recipes", 2nd ed., section 6.2): a
# Chebyshev fit with fractional error below 1.2e-7 for every x >= 0, i.e. float32's own
# rounding level, at the cost of one exp and ten multiply-adds:
#     erfc(z) = t exp(-z^2 + c0 + c1 t + ... + c9 t^9),   t = 1 / (1 + z/2).
_ERFC_FAST_COEFFS = (-1.26551223, 1.00002368, 0.37409196, 0.09678418, -0.18628806,
                     0.27886807, -1.13520398, 1.48851587, -0.82215223, 0.17087277)
_F32 = np.float32
_CDF_HORNER = tuple(_F32(c) for c in _ERFC_FAST_COEFFS[:0:-1])  # c9, c8, ..., c1
# exp(c0 + ln 1/2) = exp(c0) / 2: the factor 1/2 of Phi = erfc / 2 rides inside the exp.
_CDF_C0 = _F32(_ERFC_FAST_COEFFS[0] + math.log(0.5))
_CDF_BLOCK = 16384  # values per pass: 64 KiB per float32 buffer, so the passes stay in cache


def normal_cdf_float32(x: np.ndarray) -> np.ndarray:
    """Phi(x) = 0.5 erfc(-x / sqrt(2)) in float32: absolute error below 3e-7 everywhere.

    Phi goes through erfc (not 1 + erf) so that the left tail, where Phi is tiny, keeps
    a small relative error too (below 1e-6 for x >= -3, below 1e-5 down to x = -12, where
    float32's rounding of x^2 inside the exp dominates). The ~25 passes of the formula run
    over blocks of 16k values, which stay in the CPU cache, instead of over the whole
    array; the sign is handled with arithmetic, because a masked copy (``np.where`` /
    ``copyto(where=)``) on random signs costs more than all the other passes together.
    """
    flat_x = x.reshape(-1)
    cdf = np.empty_like(flat_x)
    t_buffer = np.empty(min(_CDF_BLOCK, flat_x.size), np.float32)
    poly_buffer = np.empty_like(t_buffer)
    for start in range(0, flat_x.size, _CDF_BLOCK):
        block = flat_x[start:start + _CDF_BLOCK]
        out = cdf[start:start + _CDF_BLOCK]
        t, poly = t_buffer[:block.size], poly_buffer[:block.size]
        # t = 1 / (1 + z/2) with z = |x| / sqrt(2)
        np.abs(block, out=t)
        t *= _F32(0.5 / math.sqrt(2.0))
        t += _F32(1.0)
        np.reciprocal(t, out=t)
        # poly = c0 + ln(1/2) + c1 t + ... + c9 t^9 (Horner, highest order first)
        np.multiply(t, _CDF_HORNER[0], out=poly)
        for coeff in _CDF_HORNER[1:]:
            poly += coeff
            poly *= t
        poly += _CDF_C0
        # q = t exp(poly - z^2) = 0.5 erfc(|x| / sqrt 2), the smaller tail of Phi
        np.multiply(block, block, out=out)
        out *= _F32(-0.5)  # -z^2 = -x^2 / 2
        poly += out
        np.exp(poly, out=poly)
        poly *= t
        # Phi = q where x < 0 and 1 - q where x >= 0, i.e. q + step * (1 - 2q)
        step = np.greater_equal(block, _F32(0.0), out=t)  # 1.0 or 0.0 (t is done)
        np.multiply(poly, _F32(-2.0), out=out)
        out += _F32(1.0)
        out *= step
        out += poly
    return cdf.reshape(x.shape)



# ----------------------------------------------------------------------------------------
# GELU: the float32 Phi above, and the backward built in one buffer
# ----------------------------------------------------------------------------------------

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_COEFF = 0.044715


@_twin_of(F.gelu_forward)
def gelu_forward(x: np.ndarray, approximate: str = "none"):
    """Twin of ``F.gelu_forward``: float32 Phi from the erfc fit (error below 3e-7)."""
    if approximate == "none" and isinstance(x, np.ndarray) and x.dtype == np.float32:
        cdf = normal_cdf_float32(x)
        return x * cdf, F.GeluCache("none", x, cdf, None)
    if approximate == "tanh" and isinstance(x, np.ndarray) and x.dtype in F.FLOAT_DTYPES:
        # x * x * x, not x**3: NumPy sends a cube to its general (slow) pow routine.
        inner = x * x
        inner *= x
        inner *= _GELU_TANH_COEFF
        inner += x
        inner *= _SQRT_2_OVER_PI
        tanh_inner = np.tanh(inner, out=inner)
        out = tanh_inner + 1.0
        out *= x
        out *= 0.5
        return out, F.GeluCache("tanh", x, None, tanh_inner)
    return F.gelu_forward(x, approximate)


@_twin_of(F.gelu_backward)
def gelu_backward(dout: np.ndarray, cache):
    """Twin of ``F.gelu_backward``: dout * (Phi + x phi) built in place in one buffer."""
    if cache.approximate != "none":
        return F.gelu_backward(dout, cache)
    x = cache.x
    local = x * x
    local *= -0.5
    np.exp(local, out=local)
    local *= x
    local *= _INV_SQRT_2PI
    local += cache.cdf
    local *= dout
    return local


# ----------------------------------------------------------------------------------------
# LayerNorm: in place, with the row sums as BLAS matrix-vector products
# ----------------------------------------------------------------------------------------

def _row_mean(x2d: np.ndarray) -> np.ndarray:
    """Mean of each row of a (rows, H) array, as one matrix-vector product: (rows, 1)."""
    width = x2d.shape[1]
    return (x2d @ np.full(width, 1.0 / width, dtype=x2d.dtype))[:, None]


@_twin_of(F.layernorm_forward)
def layernorm_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-12):
    """Twin of ``F.layernorm_forward``: centred and scaled in one buffer."""
    F.check_layernorm_inputs(x, weight, bias, eps)
    x2d = x.reshape(-1, x.shape[-1])  # (rows, H)
    x_hat = x2d - _row_mean(x2d)  # centred; scaled in place below
    var = _row_mean(np.square(x_hat))  # (rows, 1)
    var += eps
    rstd = np.sqrt(var, out=var)
    np.reciprocal(rstd, out=rstd)
    x_hat *= rstd
    out = x_hat * weight
    out += bias
    shape = x.shape
    return out.reshape(shape), F.LayerNormCache(x_hat.reshape(shape),
                                                rstd.reshape(*shape[:-1], 1), weight)


@_twin_of(F.layernorm_backward)
def layernorm_backward(dout: np.ndarray, cache):
    """Twin of ``F.layernorm_backward``: dx built in place in the dx_hat buffer."""
    width = dout.shape[-1]
    dout2d = dout.reshape(-1, width)
    x_hat = cache.x_hat.reshape(-1, width)
    dbias = dout2d.sum(axis=0)
    dweight = (dout2d * x_hat).sum(axis=0)
    dx = dout2d * cache.weight  # dx_hat, turned into dx in place
    projection = _row_mean(dx * x_hat)  # (rows, 1)
    dx -= _row_mean(dx)
    dx -= x_hat * projection
    dx *= cache.rstd.reshape(-1, 1)
    return dx.reshape(dout.shape), dweight, dbias


# ----------------------------------------------------------------------------------------
# Embedding: the scatter-add over single elements of the flat table
# ----------------------------------------------------------------------------------------

@_twin_of(F.embedding_backward)
def embedding_backward(dout: np.ndarray, cache):
    """Twin of ``F.embedding_backward``: np.add.at over a 1-D target.

    np.add.at has a fast path for 1-D targets, several times faster than scattering whole
    rows; the element (row, column) of the table is row * H + column of the flat view, and
    the additions happen in the same order as the reference's.
    """
    rows, width = cache.weight_shape
    dweight = np.zeros(rows * width, dtype=cache.dtype)
    flat_index = (cache.ids.reshape(-1, 1) * width + np.arange(width)).reshape(-1)  # (N * H,)
    np.add.at(dweight, flat_index, dout.reshape(-1))
    return dweight.reshape(rows, width)


# ----------------------------------------------------------------------------------------
# Attention: the softmax in place in the scores buffer
# ----------------------------------------------------------------------------------------

@_twin_of(F.attention_forward)
def attention_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask=None,
                      dropout_p: float = 0.0, rng: np.random.Generator | None = None,
                      training: bool = False):
    """Twin of ``F.attention_forward``: scores, masking and softmax in one (B, N, T, T) buffer."""
    mask = F.check_attention_inputs(q, k, v, mask)
    scale = q.dtype.type(1.0 / math.sqrt(q.shape[-1]))
    scores = (q * scale) @ k.swapaxes(-1, -2)  # (B, N, T, T); q scaled: the smaller array
    if mask is not None:
        hidden = mask == 0  # the mask's own (small) shape
        if hidden.any():
            np.copyto(scores, -np.inf, where=np.broadcast_to(hidden, scores.shape))
    row_max = scores.max(axis=-1, keepdims=True)  # (B, N, T, 1)
    row_max[~np.isfinite(row_max)] = 0.0  # a row with no visible key: avoid -inf - -inf
    scores -= row_max
    probs = np.exp(scores, out=scores)  # a hidden key: exp(-inf) = 0 exactly
    row_sum = probs.sum(axis=-1, keepdims=True)
    row_sum[row_sum == 0.0] = 1.0  # a row with no visible key stays all zeros
    probs /= row_sum
    dropped, dropout_cache = F.dropout_forward(probs, dropout_p, rng, training)
    context = dropped @ v  # (B, N, T, D)
    return context, F.AttentionCache(q, k, v, scale, probs, dropout_cache, dropped)


@_twin_of(F.attention_backward)
def attention_backward(dout: np.ndarray, cache):
    """Twin of ``F.attention_backward``: the softmax backward in place in d_probs."""
    dv = cache.dropped_probs.swapaxes(-1, -2) @ dout  # (B, N, T, D)
    d_probs = F.dropout_backward(dout @ cache.v.swapaxes(-1, -2), cache.dropout)  # fresh
    probs = cache.attention_probs
    row_dot = (d_probs * probs).sum(axis=-1, keepdims=True)  # (B, N, T, 1)
    d_scores = d_probs
    d_scores -= row_dot
    d_scores *= probs
    dq = d_scores @ cache.k
    dq *= cache.scale
    dk = d_scores.swapaxes(-1, -2) @ cache.q
    dk *= cache.scale
    return dq, dk, dv


# ----------------------------------------------------------------------------------------
# Query, key and value as one matrix product
# ----------------------------------------------------------------------------------------

def qkv_forward(x: np.ndarray, weights, biases):
    """x (..., H) @ [Wq; Wk; Wv].T + [bq; bk; bv] as one product -> (q, k, v), LinearCache.

    One (rows, H) x (H, 3H) product runs faster than three (rows, H) x (H, H) ones; the
    three weights are concatenated for it, a copy of 3 H^2 values (small beside the
    product's rows x 3 H^2 multiply-adds).
    """
    weight = np.concatenate(weights)  # (3H, H)
    bias = np.concatenate(biases)  # (3H,)
    qkv, cache = F.linear_forward(x, weight, bias)  # (..., 3H)
    return np.split(qkv, 3, axis=-1), cache


def qkv_backward(dq: np.ndarray, dk: np.ndarray, dv: np.ndarray, cache):
    """Gradients of ``qkv_forward``: dx (..., H) and the three (dweight, dbias) pairs."""
    d_qkv = np.concatenate([dq, dk, dv], axis=-1)  # (..., 3H)
    dx, dweight, dbias = F.linear_backward(d_qkv, cache)
    return dx, list(zip(np.split(dweight, 3), np.split(dbias, 3)))
