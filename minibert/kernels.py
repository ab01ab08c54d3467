"""Fast paths: the same math as ``functional``'s reference pairs, arranged for speed.

``functional`` is written to be read: each pair says what it computes in the fewest lines.
This module holds faster twins of some of them: fused and in-place versions that make
fewer passes over memory, a float32 Phi for GELU, one matrix product for the query, key
and value projections, and LayerNorm's row sums as BLAS products. Each twin takes the same
arguments and returns the same outputs as its reference; the tests prove each twin equal
to its reference (tests/test_kernels.py, with the tolerance of each stated and justified
there). Two twins keep more than their reference's cache (GELU's phi, the cross-entropy's
softmax) in caches of their own, ``GeluPdfCache`` and ``CrossEntropyProbsCache``; a twin's
backward also accepts its reference's cache.

Only ``minibert.layers`` chooses between a pair and its twin, and only while the switch is
on. It is off by default, so a model run in a notebook or a debugger runs the pairs of
``functional``; the training jobs (pretraining, fine-tuning, distillation) switch it on
for their steps and say so in their progress lines::

    import minibert as mb
    with mb.fast_kernels(True):        # the twins inside the block
        out = model(input_ids)
    mb.set_fast_kernels(True)          # the same, until switched back

Setting the environment variable ``MINIBERT_FAST_KERNELS=1`` starts with them on.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from contextlib import contextmanager
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.checks import FLOAT_DTYPES, IGNORE_INDEX, check_bool

__all__ = ["TWINS", "fast_kernels", "set_fast_kernels", "fast_kernels_enabled",
           "fast_kernels_for_job", "JOB_NOTE",
           "normal_cdf_float32", "GeluPdfCache", "CrossEntropyProbsCache", "qkv_forward",
           "qkv_backward"]

_enabled = os.environ.get("MINIBERT_FAST_KERNELS", "0").strip() in ("1", "true", "yes")


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


JOB_NOTE = ("fast kernels: on for this job (minibert.kernels, faster twins of the pairs in "
            "minibert.functional, equal to them up to rounding)")


@contextmanager
def fast_kernels_for_job(progress: Callable[[str], None] | None = None):
    """The twins on for a training job. With ``progress`` the job says so at once; a job
    that checks its inputs first (one line per refusal) passes none and prints
    ``JOB_NOTE`` itself when its training starts."""
    if progress is not None:
        progress(JOB_NOTE)
    with fast_kernels(True):
        yield


# The twin of each function of ``functional`` that has one, by the function's name.
TWINS: dict[str, Callable] = {}


def _twin(function: Callable) -> Callable:
    """Register ``function`` as the twin of the ``functional`` function of the same name."""
    TWINS[function.__name__] = function
    return function


# ----------------------------------------------------------------------------------------
# GELU in float32: Phi from one exp that the backward reuses
# ----------------------------------------------------------------------------------------

# Abramowitz & Stegun 7.1.26 ("Handbook of Mathematical Functions", 1964): for z >= 0,
#     erfc(z) = (a1 t + a2 t^2 + a3 t^3 + a4 t^4 + a5 t^5) exp(-z^2) + e,  t = 1 / (1 + p z),
# with |e| <= 1.5e-7. With z = |x| / sqrt 2, exp(-z^2) = exp(-x^2 / 2) = sqrt(2 pi) phi(x):
# the one exp gives the tail q = Phi(-|x|) = erfc(z) / 2 here and the density phi(x) that
# GELU's backward needs. Measured in float32 on 200,001 points of [-12, 12] against
# math.erfc: |Phi error| below 2.7e-7 everywhere (the fit plus float32 rounding); relative
# error below 1e-4 where Phi >= 1e-3 (x >= -3.1), growing into the far left tail (3% at
# x = -12, where Phi is 2e-33 and GELU(x) = x Phi(x) is -2e-32 instead of 0). GELU's error
# is then below 2.7e-7 |x|: float32 rounding level for the activations BERT sees.
_AS_P = np.float32(0.3275911 / math.sqrt(2.0))
# a5, a4, ..., a1, each halved: q = erfc / 2 comes straight out of the polynomial
_AS_HORNER = tuple(np.float32(a / 2) for a in (1.061405429, -1.453152027, 1.421413741,
                                               -0.284496736, 0.254829592))
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_F32 = np.float32
_BLOCK = 65536  # values per pass: 256 KiB per float32 buffer, so the passes stay in cache


def normal_cdf_float32(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Phi(x) and phi(x) for float32 x, both (...), from one exp (see the note above).

    The ~20 passes run over blocks of 64k values that stay in the CPU cache. The sign of
    x is handled with arithmetic, Phi = q + [x >= 0] (1 - 2q), which keeps q exact in the
    left tail (0.5 - q would round it away) and avoids a masked copy (``np.where`` on
    random signs is slower than all the other passes together).
    """
    flat = x.reshape(-1)
    cdf = np.empty_like(flat)
    pdf = np.empty_like(flat)
    t_buffer = np.empty(min(_BLOCK, flat.size), np.float32)
    for start in range(0, flat.size, _BLOCK):
        block = flat[start:start + _BLOCK]
        q, density = cdf[start:start + _BLOCK], pdf[start:start + _BLOCK]
        t = t_buffer[:block.size]
        np.multiply(block, block, out=density)
        density *= _F32(-0.5)
        np.exp(density, out=density)  # exp(-x^2 / 2)
        # t = 1 / (1 + p |x| / sqrt 2)
        np.abs(block, out=t)
        t *= _AS_P
        t += _F32(1.0)
        np.reciprocal(t, out=t)
        # q = (a1 t + ... + a5 t^5) / 2 * exp(-x^2 / 2), Horner from a5 down
        np.multiply(t, _AS_HORNER[0], out=q)
        for coeff in _AS_HORNER[1:]:
            q += coeff
            q *= t
        q *= density
        density *= _F32(_INV_SQRT_2PI)  # phi(x)
        # Phi = q where x < 0, 1 - q where x >= 0
        step = np.greater_equal(block, _F32(0.0), out=t)  # 1.0 or 0.0 (t is done)
        step *= _F32(-2.0) * q + _F32(1.0)
        q += step
    return cdf.reshape(x.shape), pdf.reshape(x.shape)


_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_GELU_TANH_COEFF = 0.044715


class GeluPdfCache(NamedTuple):
    x: np.ndarray  # (...) float32
    cdf: np.ndarray  # (...) Phi(x)
    pdf: np.ndarray  # (...) phi(x), from the exp that gave Phi: the backward reuses it


@_twin
def gelu_forward(x: np.ndarray, approximate: str = "none"):
    """Twin of ``F.gelu_forward``: float32 Phi and phi from one exp; tanh form in place."""
    if approximate == "none" and isinstance(x, np.ndarray) and x.dtype == np.float32:
        cdf, pdf = normal_cdf_float32(x)
        return x * cdf, GeluPdfCache(x, cdf, pdf)
    if approximate == "tanh" and isinstance(x, np.ndarray) and x.dtype in FLOAT_DTYPES:
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


@_twin
def gelu_backward(dout: np.ndarray, cache):
    """Twin of ``F.gelu_backward``: dout * (Phi + x phi), phi kept by the forward."""
    if not isinstance(cache, GeluPdfCache):
        return F.gelu_backward(dout, cache)
    local = cache.x * cache.pdf
    local += cache.cdf
    local *= dout
    return local


# ----------------------------------------------------------------------------------------
# Sums over the rows as BLAS matrix-vector products
# ----------------------------------------------------------------------------------------

def _column_sum(x2d: np.ndarray) -> np.ndarray:
    """Sum over the rows of a (rows, H) array, ones @ x: (H,), about 3x NumPy's sum(axis=0)."""
    return np.ones(x2d.shape[0], dtype=x2d.dtype) @ x2d


@_twin
def linear_backward(dout: np.ndarray, cache):
    """Twin of ``F.linear_backward``: the bias gradient as a matrix-vector product."""
    x, weight = cache.x, cache.weight
    dout_2d = dout.reshape(-1, dout.shape[-1])  # (rows, out)
    dx = (dout_2d @ weight).reshape(*dout.shape[:-1], weight.shape[1])  # (..., in)
    dweight = dout_2d.T @ x.reshape(-1, x.shape[-1])  # (out, in)
    return dx, dweight, _column_sum(dout_2d) if cache.has_bias else None


# ----------------------------------------------------------------------------------------
# LayerNorm: in place, with the row sums as BLAS matrix-vector products
# ----------------------------------------------------------------------------------------

def _row_mean(x2d: np.ndarray) -> np.ndarray:
    """Mean of each row of a (rows, H) array, as one matrix-vector product: (rows, 1)."""
    width = x2d.shape[1]
    return (x2d @ np.full(width, 1.0 / width, dtype=x2d.dtype))[:, None]


@_twin
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


@_twin
def layernorm_backward(dout: np.ndarray, cache):
    """Twin of ``F.layernorm_backward``: dx built in place in the dx_hat buffer."""
    width = dout.shape[-1]
    dout2d = dout.reshape(-1, width)
    x_hat = cache.x_hat.reshape(-1, width)
    dbias = _column_sum(dout2d)
    dweight = _column_sum(dout2d * x_hat)
    dx = dout2d * cache.weight  # dx_hat, turned into dx in place
    projection = _row_mean(dx * x_hat)  # (rows, 1)
    dx -= _row_mean(dx)
    dx -= x_hat * projection
    dx *= cache.rstd.reshape(-1, 1)
    return dx.reshape(dout.shape), dweight, dbias


# ----------------------------------------------------------------------------------------
# Embedding: the scatter-add over single elements of the flat table
# ----------------------------------------------------------------------------------------

@_twin
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

@_twin
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


@_twin
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


def qkv_backward(head_grads, cache):
    """Gradients of ``qkv_forward`` from dq, dk, dv split in heads, each (B, N, T, D).

    Returns dx (B, T, H) and the three (dweight, dbias) pairs. Each head gradient is
    copied once, straight into its place in the (B, T, 3H) gradient of the fused product.
    """
    batch, heads, seq_len, head_size = head_grads[0].shape
    d_qkv = np.empty((batch, seq_len, 3, heads, head_size), dtype=head_grads[0].dtype)
    for index, grad in enumerate(head_grads):
        d_qkv[:, :, index] = grad.transpose(0, 2, 1, 3)  # (B, T, N, D)
    dx, dweight, dbias = linear_backward(d_qkv.reshape(batch, seq_len, -1), cache)
    return dx, list(zip(np.split(dweight, 3), np.split(dbias, 3)))


# ----------------------------------------------------------------------------------------
# Cross-entropy: the softmax kept from the forward, so the backward needs no second exp
# ----------------------------------------------------------------------------------------

class CrossEntropyProbsCache(NamedTuple):
    log_probs: np.ndarray  # (..., C)
    safe_labels: np.ndarray  # int (...), ignored positions replaced by 0
    valid: np.ndarray  # bool (...), False where the label was ignore_index
    count: int  # number of valid labels
    probs: np.ndarray  # (..., C) softmax(logits): the backward scales it, no second exp


@_twin
def cross_entropy_forward(logits: np.ndarray, labels, ignore_index: int = IGNORE_INDEX):
    """Twin of ``F.cross_entropy_forward``: one exp, whose softmax the cache keeps."""
    labels = F.check_cross_entropy_inputs(logits, labels, ignore_index)
    valid = labels != ignore_index
    count = int(valid.sum())
    log_probs = logits - logits.max(axis=-1, keepdims=True)  # (..., C), shifted
    probs = np.exp(log_probs)  # (..., C), unnormalized
    total = probs.sum(axis=-1, keepdims=True)  # (..., 1)
    log_probs -= np.log(total)
    probs /= total
    safe_labels = np.where(valid, labels, 0)
    picked = np.take_along_axis(log_probs, safe_labels[..., None], axis=-1)[..., 0]  # (...)
    loss = -(picked * valid).sum() / max(count, 1)
    return logits.dtype.type(loss), CrossEntropyProbsCache(log_probs, safe_labels, valid, count,
                                                           probs)


@_twin
def cross_entropy_backward(dloss, cache):
    """Twin of ``F.cross_entropy_backward``: scales the kept softmax instead of exp again."""
    if not isinstance(cache, CrossEntropyProbsCache) or cache.count == 0:
        return F.cross_entropy_backward(dloss, cache)
    dlogits = cache.probs * cache.probs.dtype.type(float(dloss) / cache.count)
    rows = np.take_along_axis(dlogits, cache.safe_labels[..., None], axis=-1)
    rows -= cache.probs.dtype.type(float(dloss) / cache.count)
    np.put_along_axis(dlogits, cache.safe_labels[..., None], rows, axis=-1)
    if not cache.valid.all():
        dlogits[~cache.valid] = 0.0
    return dlogits

