"""Solution to the exercise of notebooks/04_feedforward_block.ipynb: GELU's backward.

Try the exercise first. The derivation is in the notebook (section 3) and in
docs/backprop.md#gelu.
"""

import math

import numpy as np

_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)


def my_gelu_backward(dout: np.ndarray, cache):
    """Gradient of the exact GELU, x * Phi(x).

    Inputs: dout (...); cache, the GeluCache of
    ``minibert.functional.gelu_forward(x, approximate="none")``: x (...) and cdf = Phi(x).
    Output: dx (...).
    """
    if cache.approximate != "none":
        raise ValueError(f"this solution covers the exact form only, got "
                         f"approximate={cache.approximate!r}")
    x, cdf = cache.x, cache.cdf
    # forward: out = x * Phi(x); product rule with Phi' = phi, the standard normal density
    pdf = _INV_SQRT_2PI * np.exp(-0.5 * x * x)  # (...)
    return dout * (cdf + x * pdf)
