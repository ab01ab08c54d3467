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

import numpy as np

__all__ = [
    "erf",
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
]

_FLOAT_DTYPES = (np.float32, np.float64)


def _check_float_array(name: str, x) -> None:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    if x.dtype not in _FLOAT_DTYPES:
        raise TypeError(f"{name} must have dtype float32 or float64, got {x.dtype}")


# ----------------------------------------------------------------------------------------
# erf: NumPy has none, and GELU (the exact form HF calls "gelu") needs it.
# ----------------------------------------------------------------------------------------

# For |x| < 2 the Maclaurin series  erf(x) = 2/sqrt(pi) * sum_n (-1)^n x^(2n+1) / (n! (2n+1))
# converges fast: at |x| = 2 the terms' absolute values sum to about 19, so cancellation costs
# at most one digit, and 34 terms bring the tail below 1e-17.
_ERF_SERIES_TERMS = 34
_ERF_SERIES_COEFFS = np.array(
    [(-1) ** n / (math.factorial(n) * (2 * n + 1)) for n in range(_ERF_SERIES_TERMS)]
) * (2.0 / math.sqrt(math.pi))
# For |x| >= 2, erfc has the continued fraction (Abramowitz & Stegun 7.1.14)
#   erfc(x) = exp(-x^2)/sqrt(pi) * 1/(x + (1/2)/(x + 1/(x + (3/2)/(x + 2/(x + ...)))))
# which converges fast for large x; 60 levels give erfc(2) to ~1e-16 relative.
_ERFC_CF_DEPTH = 60
# erf(x) rounds to exactly 1.0 in float64 beyond this point (erfc(6) ~ 2e-17).
_ERF_SATURATION = 6.0


def erf(x) -> np.ndarray:
    """Error function, vectorized, float64, accurate to about 1e-15 absolute on all reals.

    Inputs: x array-like. Output: float64 array, same shape. Uses the Maclaurin series
    for |x| < 2 and the erfc continued fraction for 2 <= |x| < 6; erf is odd, and
    exactly +/-1 beyond 6 in float64. NaN stays NaN. See docs/backprop.md#erf.
    """
    x = np.asarray(x, dtype=np.float64)
    a = np.abs(x)
    result = np.empty_like(a)

    small = a < 2.0
    if small.any():
        a_small = a[small]
        y = a_small * a_small
        # Horner in y = x^2 over the series coefficients, highest order first.
        acc = np.full_like(a_small, _ERF_SERIES_COEFFS[-1])
        for coeff in _ERF_SERIES_COEFFS[-2::-1]:
            acc *= y
            acc += coeff
        result[small] = a_small * acc

    middle = (a >= 2.0) & (a < _ERF_SATURATION)
    if middle.any():
        a_mid = a[middle]
        # Evaluate the continued fraction bottom-up: level k has numerator k/2.
        tail = a_mid.copy()
        for k in range(_ERFC_CF_DEPTH, 0, -1):
            tail = a_mid + (k / 2.0) / tail
        erfc = np.exp(-a_mid * a_mid) / (math.sqrt(math.pi) * tail)
        result[middle] = 1.0 - erfc

    result[a >= _ERF_SATURATION] = 1.0
    result[np.isnan(a)] = np.nan
    return np.copysign(result, x)


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


def _normal_cdf_float32(x: np.ndarray) -> np.ndarray:
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
# Linear:  y = x @ W.T + b   (weights stored (out, in), the PyTorch / HF layout)
# ----------------------------------------------------------------------------------------

def linear_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray | None):
    """Affine map over the last axis. See docs/backprop.md#linear.

    Inputs: x (..., in), weight (out, in), bias (out,) or None.
    Output: y (..., out). Cache: (x, weight, has_bias).
    """
    _check_float_array("x", x)
    _check_float_array("weight", weight)
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-D (out, in), got shape {weight.shape}")
    if x.ndim < 1 or x.shape[-1] != weight.shape[1]:
        raise ValueError(
            f"x has {x.shape[-1] if x.ndim else 'no'} input features (shape {x.shape}) but "
            f"weight expects {weight.shape[1]} (weight shape {weight.shape}); "
            f"x must be (..., {weight.shape[1]})"
        )
    if bias is not None:
        _check_float_array("bias", bias)
        if bias.shape != (weight.shape[0],):
            raise ValueError(f"bias must have shape ({weight.shape[0]},), got {bias.shape}")
    # One 2-D product over all rows: NumPy runs a stacked (B, T, in) @ (in, out) as B
    # small products, many times slower with a multithreaded BLAS.
    rows = x.reshape(-1, x.shape[-1])  # (rows, in)
    out = (rows @ weight.T).reshape(*x.shape[:-1], weight.shape[0])  # (..., out)
    if bias is not None:
        out += bias
    return out, (x, weight, bias is not None)


def linear_backward(dout: np.ndarray, cache):
    """Gradients of the affine map: dx (..., in), dweight (out, in), dbias (out,) or None."""
    x, weight, has_bias = cache
    # forward: out = x @ weight.T + bias
    dout_2d = dout.reshape(-1, dout.shape[-1])  # (rows, out)
    dx = (dout_2d @ weight).reshape(*dout.shape[:-1], weight.shape[1])  # (..., in)
    dweight = dout_2d.T @ x.reshape(-1, x.shape[-1])  # (out, in)
    dbias = dout_2d.sum(axis=0) if has_bias else None  # (out,)
    return dx, dweight, dbias


# ----------------------------------------------------------------------------------------
# Embedding lookup
# ----------------------------------------------------------------------------------------

def _check_ids(name: str, ids, num_rows: int) -> np.ndarray:
    ids = np.asarray(ids)
    if not np.issubdtype(ids.dtype, np.integer):
        raise TypeError(f"{name} must be an integer array, got dtype {ids.dtype}")
    if ids.size and (ids.min() < 0 or ids.max() >= num_rows):
        bad = ids[(ids < 0) | (ids >= num_rows)].ravel()[0]
        raise IndexError(f"{name} contains {bad}, outside the allowed range [0, {num_rows})")
    return ids


def embedding_forward(ids, weight: np.ndarray):
    """Row lookup: out[...] = weight[ids[...]]. See docs/backprop.md#embedding.

    Inputs: ids int (...), weight (V, H). Output: (..., H). Cache: (ids, weight shape/dtype).
    """
    _check_float_array("weight", weight)
    if weight.ndim != 2:
        raise ValueError(f"weight must be 2-D (V, H), got shape {weight.shape}")
    ids = _check_ids("ids", ids, weight.shape[0])
    return weight[ids], (ids, weight.shape, weight.dtype)


def embedding_backward(dout: np.ndarray, cache):
    """Scatter-add the rows of dout back to the rows that were looked up. Returns dweight (V, H)."""
    ids, weight_shape, dtype = cache
    rows, width = weight_shape
    dweight = np.zeros(rows * width, dtype=dtype)  # flat view of (V, H)
    # forward: out = weight[ids]; an id used twice receives both gradients (np.add.at, not
    # dweight[ids] += dout, which would keep only one of them). The scatter addresses single
    # elements, row * H + column, of the flat table: np.add.at has a fast path for 1-D
    # targets, ~5x faster than scattering whole rows, with the additions in the same order.
    flat_index = (ids.reshape(-1, 1) * width + np.arange(width)).reshape(-1)  # (N * H,)
    np.add.at(dweight, flat_index, dout.reshape(-1))
    return dweight.reshape(rows, width)


# ----------------------------------------------------------------------------------------
# LayerNorm over the last axis
# ----------------------------------------------------------------------------------------

def layernorm_forward(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float = 1e-12):
    """Normalize each row to zero mean and unit variance, then scale and shift.

    See docs/backprop.md#layernorm. Inputs: x (..., H), weight (H,), bias (H,).
    Output: (..., H). Cache: (x_hat, rstd, weight), rstd = 1/sqrt(var + eps) of shape (..., 1).
    """
    _check_float_array("x", x)
    for name, p in (("weight", weight), ("bias", bias)):
        _check_float_array(name, p)
        if p.shape != (x.shape[-1],):
            raise ValueError(f"{name} must have shape ({x.shape[-1]},) to match x {x.shape}, "
                             f"got {p.shape}")
    if not eps > 0:
        raise ValueError(f"eps must be > 0, got {eps}")
    mean = x.mean(axis=-1, keepdims=True)  # (..., 1)
    x_hat = x - mean  # (..., H), centred; scaled in place below
    var = np.mean(np.square(x_hat), axis=-1, keepdims=True)  # (..., 1)
    rstd = 1.0 / np.sqrt(var + eps)  # (..., 1)
    x_hat *= rstd  # (..., H): x_hat = (x - mean) * rstd
    out = x_hat * weight  # (..., H)
    out += bias
    return out, (x_hat, rstd, weight)


def layernorm_backward(dout: np.ndarray, cache):
    """Returns dx (..., H), dweight (H,), dbias (H,)."""
    x_hat, rstd, weight = cache
    axes = tuple(range(dout.ndim - 1))
    # forward: out = x_hat * weight + bias
    dbias = dout.sum(axis=axes)
    dx_hat = dout * weight  # (..., H)
    dweight = (dout * x_hat).sum(axis=axes)
    # forward: x_hat = (x - mean) * rstd; mean and rstd depend on every x in the row, so
    # dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat)), built in place.
    projection = (dx_hat * x_hat).mean(axis=-1, keepdims=True)  # (..., 1)
    dx = dx_hat
    dx -= dx_hat.mean(axis=-1, keepdims=True)
    dx -= x_hat * projection
    dx *= rstd
    return dx, dweight, dbias


# ----------------------------------------------------------------------------------------
# Activations
# ----------------------------------------------------------------------------------------

_SQRT_2 = math.sqrt(2.0)
_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_TANH_COEFF = 0.044715
_GELU_APPROXIMATIONS = ("none", "tanh")


def gelu_forward(x: np.ndarray, approximate: str = "none"):
    """GELU(x) = x * Phi(x). See docs/backprop.md#gelu.

    approximate="none" is the exact erf form (HF "gelu"); "tanh" is
    0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (HF "gelu_new", Google's BERT code).
    The exact form uses the float64 ``erf`` for float64 input and, for float32 input, an
    erfc fit whose error (below 3e-7 absolute in Phi) is at float32's rounding level.
    Inputs: x (...). Output: (...). Cache depends on the form.
    """
    _check_float_array("x", x)
    if approximate not in _GELU_APPROXIMATIONS:
        raise ValueError(f"approximate must be one of {_GELU_APPROXIMATIONS}, got {approximate!r}")
    if approximate == "none":
        if x.dtype == np.float32:
            cdf = _normal_cdf_float32(x)  # Phi(x) to float32 precision, ~10x cheaper
        else:
            cdf = 0.5 * (1.0 + erf(x / _SQRT_2))  # Phi(x), float64 to ~1e-16
        return x * cdf, ("none", x, cdf)
    # x * x * x, not x**3: NumPy sends a cube to the general (slow, scalar) pow routine.
    inner = _SQRT_2_OVER_PI * (x + _GELU_TANH_COEFF * (x * x * x))
    tanh_inner = np.tanh(inner, out=inner)
    return 0.5 * x * (1.0 + tanh_inner), ("tanh", x, tanh_inner)


def gelu_backward(dout: np.ndarray, cache):
    """Returns dx (...)."""
    form, x, saved = cache
    if form == "none":
        cdf = saved
        # forward: out = x * Phi(x);  d/dx = Phi(x) + x * phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi)
        local = x * x  # one buffer, updated in place into dout * (Phi + x phi)
        local *= -0.5
        np.exp(local, out=local)
        local *= x
        local *= _INV_SQRT_2PI
        local += cdf
        local *= dout
        return local
    tanh_inner = saved
    # forward: out = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + c x^3)
    du_dx = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_COEFF * x * x)
    local = 0.5 * (1.0 + tanh_inner) + 0.5 * x * (1.0 - tanh_inner**2) * du_dx
    return dout * local


def relu_forward(x: np.ndarray):
    """max(x, 0). Inputs: x (...). Output: (...). Cache: the mask x > 0."""
    _check_float_array("x", x)
    positive = x > 0
    return x * positive, positive


def relu_backward(dout: np.ndarray, cache):
    """Returns dx (...): dout where x > 0, else 0 (the subgradient at 0 is taken as 0)."""
    return dout * cache


def tanh_forward(x: np.ndarray):
    """tanh(x), used by the pooler. Inputs: x (...). Output: (...). Cache: the output."""
    _check_float_array("x", x)
    out = np.tanh(x)
    return out, out


def tanh_backward(dout: np.ndarray, cache):
    """Returns dx (...). forward: out = tanh(x);  d/dx = 1 - out^2. See docs/backprop.md#tanh."""
    out = cache
    return dout * (1.0 - out * out)


# ----------------------------------------------------------------------------------------
# Softmax
# ----------------------------------------------------------------------------------------

def softmax_forward(x: np.ndarray, axis: int = -1):
    """Numerically stable softmax along ``axis``. See docs/backprop.md#softmax.

    Inputs: x (...). Output: probabilities, same shape. Cache: (probs, axis).
    """
    _check_float_array("x", x)
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"axis must be in [{-x.ndim}, {x.ndim}) for x of shape {x.shape}, "
                         f"got {axis}")
    shifted = x - x.max(axis=axis, keepdims=True)  # the largest entry becomes 0: no overflow
    exp = np.exp(shifted)
    probs = exp / exp.sum(axis=axis, keepdims=True)
    return probs, (probs, axis)


def softmax_backward(dout: np.ndarray, cache):
    """Returns dx: probs * (dout - sum(dout * probs)) along the softmax axis."""
    probs, axis = cache
    return probs * (dout - (dout * probs).sum(axis=axis, keepdims=True))


# ----------------------------------------------------------------------------------------
# Dropout (inverted: scale the kept units at training time, identity at eval)
# ----------------------------------------------------------------------------------------

def _check_dropout_p(p) -> None:
    if isinstance(p, bool) or not isinstance(p, (int, float, np.floating)) or not 0.0 <= p < 1.0:
        raise ValueError(f"dropout probability p must be a number in [0, 1), got {p!r}")


def dropout_forward(x: np.ndarray, p: float, rng: np.random.Generator | None,
                    training: bool = True):
    """Zero each unit with probability p and scale the rest by 1/(1-p), so E[out] = x.

    Inputs: x (...), p in [0, 1), rng an np.random.Generator (needed only when training
    and p > 0). Output: (...). Cache: (boolean keep-mask, 1/(1-p)), or None for the identity.
    See docs/backprop.md#dropout.
    """
    _check_float_array("x", x)
    _check_dropout_p(p)
    if not training or p == 0.0:
        return x, None
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator when training with p > 0, "
                        f"got {type(rng).__name__}")
    keep = rng.random(x.shape, dtype=x.dtype) >= p  # (...) bool: 1 byte per unit kept
    scale = x.dtype.type(1.0 / (1.0 - p))
    out = x * keep
    out *= scale
    return out, (keep, scale)


def dropout_backward(dout: np.ndarray, cache):
    """Returns dx: dout through the same mask and scale (identity when cache is None)."""
    if cache is None:
        return dout
    keep, scale = cache
    dx = dout * keep
    dx *= scale
    return dx


# ----------------------------------------------------------------------------------------
# Scaled dot-product attention over all heads at once
# ----------------------------------------------------------------------------------------

def attention_forward(q: np.ndarray, k: np.ndarray, v: np.ndarray, mask=None,
                      dropout_p: float = 0.0, rng: np.random.Generator | None = None,
                      training: bool = False):
    """softmax(q k^T / sqrt(D)) v with a key mask. See docs/backprop.md#attention.

    Inputs: q, k, v (B, N, T, D); mask broadcastable to (B, N, T, T), nonzero = may attend
    (a padding mask is usually (B, 1, 1, T)); optional dropout on the probabilities.
    Output: context (B, N, T, D). Cache keeps ``attention_probs`` (B, N, T, T) (before
    dropout: what heatmaps show). A masked key gets probability exactly 0; a query row
    with no visible key gets all zeros (never NaN).
    """
    for name, arr in (("q", q), ("k", k), ("v", v)):
        _check_float_array(name, arr)
        if arr.ndim != 4:
            raise ValueError(f"{name} must be 4-D (B, N, T, D), got shape {arr.shape}")
    if k.shape != v.shape or q.shape[:2] != k.shape[:2] or q.shape[3] != k.shape[3]:
        raise ValueError(f"q, k, v shapes are incompatible: q {q.shape}, k {k.shape}, "
                         f"v {v.shape}; allowed: q (B, N, Tq, D), k and v (B, N, Tk, D)")
    batch, heads, t_query, head_size = q.shape
    t_key = k.shape[2]
    scale = q.dtype.type(1.0 / math.sqrt(head_size))
    # The scale is applied to q (B, N, T, D) rather than to the scores (B, N, T, T).
    scores = (q * scale) @ k.transpose(0, 1, 3, 2)  # (B, N, T, T)
    if mask is not None:
        mask = np.asarray(mask)
        target = (batch, heads, t_query, t_key)
        try:
            if np.broadcast_shapes(mask.shape, target) != target:
                raise ValueError
        except ValueError:
            raise ValueError(f"mask of shape {mask.shape} does not broadcast to (B, N, T, T) = "
                             f"{target}; a padding mask is usually (B, 1, 1, T)") from None
        hidden = mask == 0  # still the mask's own (small) shape
        if hidden.any():  # (a batch without padding skips a full pass over the scores)
            # masked keys: score -inf, in place
            np.copyto(scores, -np.inf, where=np.broadcast_to(hidden, target))
    # softmax over keys, in place in the scores buffer
    row_max = scores.max(axis=-1, keepdims=True)  # (B, N, T, 1)
    row_max[~np.isfinite(row_max)] = 0.0  # rows with no visible key: avoid -inf - -inf
    scores -= row_max
    attention_probs = np.exp(scores, out=scores)  # masked entries: exp(-inf) = 0 exactly
    row_sum = attention_probs.sum(axis=-1, keepdims=True)
    row_sum[row_sum == 0.0] = 1.0  # a row with no visible key stays all zeros
    attention_probs /= row_sum
    dropped_probs, dropout_cache = dropout_forward(attention_probs, dropout_p, rng, training)
    context = dropped_probs @ v  # (B, N, T, D)
    cache = (q, k, v, attention_probs, dropped_probs, dropout_cache, scale)
    return context, cache


def attention_backward(dout: np.ndarray, cache):
    """Returns dq, dk, dv, each (B, N, T, D)."""
    q, k, v, attention_probs, dropped_probs, dropout_cache, scale = cache
    # forward: context = dropped_probs @ v
    dv = dropped_probs.transpose(0, 1, 3, 2) @ dout  # (B, N, T, D)
    d_dropped = dout @ v.transpose(0, 1, 3, 2)  # (B, N, T, T)
    # forward: dropped_probs = dropout(attention_probs)
    d_probs = dropout_backward(d_dropped, dropout_cache)
    # forward: attention_probs = softmax(scores) over visible keys; masked entries have
    # probability 0, so they receive gradient 0 through this formula automatically.
    # d_scores = probs * (d_probs - sum(d_probs * probs)), built in the d_probs buffer
    # (a fresh array here, never the caller's dout).
    row_dot = (d_probs * attention_probs).sum(axis=-1, keepdims=True)  # (B, N, T, 1)
    d_scores = d_probs
    d_scores -= row_dot
    d_scores *= attention_probs
    # forward: scores = (q * scale) @ k^T
    dq = d_scores @ k  # (B, N, T, D)
    dq *= scale
    dk = d_scores.transpose(0, 1, 3, 2) @ q  # (B, N, T, D)
    dk *= scale
    return dq, dk, dv


# ----------------------------------------------------------------------------------------
# Softmax cross-entropy with ignored labels
# ----------------------------------------------------------------------------------------

def cross_entropy_forward(logits: np.ndarray, labels, ignore_index: int = -100):
    """Mean negative log-likelihood over the labels that are not ``ignore_index``.

    See docs/backprop.md#cross-entropy. Inputs: logits (..., C), labels int (...) equal to
    logits.shape[:-1], each in [0, C) or equal to ignore_index. Output: scalar loss (0 when
    every label is ignored). Cache: (log_probs, safe_labels, valid, count).
    """
    _check_float_array("logits", logits)
    labels = np.asarray(labels)
    if not np.issubdtype(labels.dtype, np.integer):
        raise TypeError(f"labels must be an integer array, got dtype {labels.dtype}")
    if labels.shape != logits.shape[:-1]:
        raise ValueError(f"labels must have shape logits.shape[:-1] = {logits.shape[:-1]}, "
                         f"got {labels.shape}")
    num_classes = logits.shape[-1]
    valid = labels != ignore_index
    bad = valid & ((labels < 0) | (labels >= num_classes))
    if bad.any():
        raise IndexError(f"labels contains {labels[bad].ravel()[0]}; allowed: [0, {num_classes}) "
                         f"or ignore_index={ignore_index}")
    count = int(valid.sum())
    shifted = logits - logits.max(axis=-1, keepdims=True)  # (..., C)
    log_norm = np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., 1)
    log_probs = shifted - log_norm  # (..., C)
    safe_labels = np.where(valid, labels, 0)  # never index with ignore_index
    picked = np.take_along_axis(log_probs, safe_labels[..., None], axis=-1)[..., 0]  # (...)
    loss = -(picked * valid).sum() / max(count, 1)
    cache = (log_probs, safe_labels, valid, count)
    return logits.dtype.type(loss), cache


def cross_entropy_backward(dloss, cache):
    """Returns dlogits (..., C) = dloss * (softmax - one_hot) / count at valid positions, else 0."""
    log_probs, safe_labels, valid, count = cache
    if count == 0:
        return np.zeros_like(log_probs)
    dlogits = np.exp(log_probs)  # softmax(logits)
    # forward: loss = -mean(log_probs[label]); d/dlogits = softmax - one_hot(label)
    np.put_along_axis(dlogits, safe_labels[..., None],
                      np.take_along_axis(dlogits, safe_labels[..., None], axis=-1) - 1.0, axis=-1)
    dlogits *= (valid[..., None] * (float(dloss) / count)).astype(dlogits.dtype)
    return dlogits
