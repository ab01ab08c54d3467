"""Fit the rational function behind float32 GELU: Phi(-a) exp(a^2 / 2) for 0 <= a <= 4 sqrt 2.

    python benchmarks/fit_normal_tail.py [--degree 4]

``numerics.normal_cdf`` computes, for float32 input, the left tail q = Phi(-|x|) as
exp(-x^2 / 2) P(|x|) / Q(|x|): the ratio is smooth and slowly varying (it is the Mills
ratio's relative), so a rational function of low degree reaches float32's resolution, at
half the cost of W. J. Cody's degree-8 float64 formula. This script finds P and Q: a
linearised least-squares fit of the relative error (the Sanathanan-Koerner iteration),
reweighted towards the largest errors (Lawson's idea) so that it approaches the minimax
fit, on 6,001 Chebyshev-spaced points. The reference values come from ``math.erfc``
(float64, within a few units in the last place). It prints the coefficients, highest order
first, scaled so that Q's leading coefficient is 1, and the largest relative error of the
fit in float64 and when evaluated in float32 as ``normal_cdf`` does.
"""

from __future__ import annotations

import argparse
import math

import numpy as np

LIMIT = 4 * math.sqrt(2)  # |x| beyond: Cody's asymptotic formula (rare in a network)


def target(a: np.ndarray) -> np.ndarray:
    """Phi(-a) exp(a^2 / 2) = erfc(a / sqrt 2) exp(a^2 / 2) / 2, float64."""
    return np.array([0.5 * math.erfc(v / math.sqrt(2)) * math.exp(v * v / 2) for v in a])


def fit(degree: int, iterations: int = 40):
    a = LIMIT / 2 * (1 + np.cos(np.linspace(np.pi, 0, 6001)))  # (6001,), Chebyshev spacing
    r = target(a)
    weights, q_previous, best = np.ones_like(a), np.ones_like(a), None
    powers = a[:, None] ** np.arange(degree + 1)  # (points, degree + 1)
    for _ in range(iterations):
        # P(a) - r (Q(a) - 1) = r, Q(0) = 1, each row scaled by 1 / (r Q_previous(a))
        system = np.hstack([powers, -r[:, None] * powers[:, 1:]])
        scale = weights / (r * q_previous)
        solution, *_ = np.linalg.lstsq(system * scale[:, None], r * scale, rcond=None)
        p = solution[:degree + 1]
        q = np.concatenate([[1.0], solution[degree + 1:]])
        q_previous = powers @ q
        error = (powers @ p) / q_previous / r - 1
        largest = np.abs(error).max()
        if best is None or largest < best[0]:
            best = (largest, p, q)
        weights *= 1 + 10 * np.abs(error) / largest
        weights /= weights.mean()
    largest, p, q = best
    # highest order first, Q's leading coefficient 1 (the form numerics._rational takes)
    return largest, (p / q[-1])[::-1], (q / q[-1])[::-1], a, r


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--degree", type=int, default=4)
    args = parser.parse_args()
    largest, p, q, a, r = fit(args.degree)
    print(f"degree {args.degree}/{args.degree} on [0, 4 sqrt 2]: largest relative error "
          f"{largest:.2e} in float64")
    a32 = a.astype(np.float32)
    num = np.full_like(a32, np.float32(p[0]))
    den = np.full_like(a32, np.float32(q[0]))
    for pk, qk in zip(p[1:], q[1:]):
        num = num * a32 + np.float32(pk)
        den = den * a32 + np.float32(qk)
    in_float32 = np.abs((num / den).astype(np.float64) / target(a32.astype(np.float64)) - 1)
    print(f"evaluated in float32: largest relative error {in_float32.max():.2e}")
    print("P =", ", ".join(f"{c:.17e}" for c in p))
    print("Q =", ", ".join(f"{c:.17e}" for c in q))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
