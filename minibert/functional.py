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
from minibert.numerics import erf, normal_cdf, normal_cdf_and_pdf  # re-exported: the contract

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
# Linear:  y = x @ W.T + b   (weights stored (out, in), the PyTorch / HF layout)
# ----------------------------------------------------------------------------------------

class LinearCache(NamedTuple):
    x: np.ndarray  # (..., in)
    weight: np.ndarray  # (out, in)
    has_bias: bool


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

class EmbeddingCache(NamedTuple):
    ids: np.ndarray  # int (...)
    weight_shape: tuple  # (V, H)
    dtype: np.dtype


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

class LayerNormCache(NamedTuple):
    x_hat: np.ndarray  # (..., H), the normalized input
    rstd: np.ndarray  # (..., 1), 1 / sqrt(var + eps)
    weight: np.ndarray  # (H,)


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

class GeluCache(NamedTuple):
    approximate: str  # "none" (erf form) or "tanh"
    x: np.ndarray  # (...)
    cdf: np.ndarray | None  # Phi(x) for the erf form
    tanh_inner: np.ndarray | None  # tanh(sqrt(2/pi) (x + 0.044715 x^3)) for the tanh form
    pdf: np.ndarray | None = None  # phi(x) for the erf form, from the exp that gave Phi


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

class SoftmaxCache(NamedTuple):
    probs: np.ndarray  # the output
    axis: int


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

class DropoutCache(NamedTuple):
    keep: np.ndarray  # bool, True where the unit was kept
    scale: np.floating  # 1 / (1 - p)


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

class AttentionCache(NamedTuple):
    q: np.ndarray  # (B, N, T, D)
    k: np.ndarray  # (B, N, T, D)
    v: np.ndarray  # (B, N, T, D)
    scale: np.floating  # 1 / sqrt(D)
    attention_probs: np.ndarray  # (B, N, T, T) softmax output, before dropout
    dropout: DropoutCache | None  # None when dropout was off
    dropped_probs: np.ndarray  # (B, N, T, T) the probabilities that multiplied v


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

class CrossEntropyCache(NamedTuple):
    log_probs: np.ndarray  # (..., C)
    safe_labels: np.ndarray  # int (...), ignored positions replaced by 0
    valid: np.ndarray  # bool (...), False where the label was ignore_index
    count: int  # number of valid labels


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
