"""erf and the normal distribution's Phi and phi, vectorized: what GELU's exact form needs.

NumPy has no erf. Here it is by W. J. Cody's rational approximations (float64 rounding),
and Phi for float32 input by a rational function of degree 4/4 fitted in this project;
both are evaluated over cache-sized blocks of the input. ``minibert.functional`` takes
``erf``, ``normal_cdf`` and ``normal_cdf_and_pdf`` from here (and re-exports them), so
functional.py opens with its first layer pair. See docs/backprop.md#erf.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["erf", "normal_cdf", "normal_cdf_and_pdf", "ERF_BLOCK"]

# ----------------------------------------------------------------------------------------
# erf: NumPy has none, and GELU (the exact form HF calls "gelu") needs it.
# ----------------------------------------------------------------------------------------

# W. J. Cody, "Rational Chebyshev approximations for the error function", Mathematics of
# Computation 23 (1969) 631-637, as in his CALERF routine (SPECFUN, netlib): three
# rational functions, each accurate to float64 rounding on its interval (max |error|
# 2.2e-16 against math.erf on 400,001 points of [-7, 7], tests/core/test_functional.py).
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
ERF_BLOCK = 1 << 17


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
    for start in range(0, flat_x.size, ERF_BLOCK):
        stop = start + ERF_BLOCK
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
    for start in range(0, flat_x.size, ERF_BLOCK):
        block = slice(start, start + ERF_BLOCK)
        _normal_cdf_block(flat_x[block], flat_pdf[block], out=flat_cdf[block])
        if times_x:
            np.multiply(flat_x[block], flat_cdf[block], out=gelu.reshape(-1)[block])
    return (gelu, cdf, pdf) if times_x else (cdf, pdf)
