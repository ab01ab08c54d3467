"""Gradient checking: compare an analytic backward pass with centred finite differences.

The checker draws a random upstream gradient ``dout`` (never all ones: with all ones a
softmax's true input gradient is exactly zero, so a backward returning zeros would
pass), perturbs every entry of every input and parameter by +/- h, and compares the
slope of ``sum(f(x) * dout)`` with what the backward returned. Everything runs in
float64: float32's 7 digits cannot resolve a centred difference to 1e-7.

``rel_error`` is norm-wise, ||a - b|| / max(1e-12, ||a|| + ||b||). An elementwise ratio
(as in CS231n) is dominated by finite-difference noise wherever the true gradient is
near zero, e.g. GELU or tanh at large |x|, so a correct backward would "fail"; the table
reports the max absolute difference beside it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

import numpy as np

from minibert.layers import Dropout, Module

__all__ = [
    "rel_error", "numerical_gradient", "GradCheckRow", "GradCheckTable",
    "check_function", "check_module", "check_loss",
]


def rel_error(a, b) -> float:
    """Norm-wise relative error ||a - b|| / max(1e-12, ||a|| + ||b||)."""
    a = np.asarray(a, dtype=np.float64)
    b = np.asarray(b, dtype=np.float64)
    if a.shape != b.shape:
        raise ValueError(f"a and b must have the same shape, got {a.shape} and {b.shape}")
    return float(np.linalg.norm(a - b) / max(1e-12, np.linalg.norm(a) + np.linalg.norm(b)))


def _require_float64(name: str, x) -> None:
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array, got {type(x).__name__}")
    if x.dtype != np.float64:
        raise TypeError(
            f"{name} has dtype {x.dtype}, but gradient checks need float64: a centred "
            f"difference with h=1e-5 in float32 loses all but ~2 of its 7 digits, so a "
            f"correct backward cannot reach 1e-7. Pass {name}.astype(np.float64)."
        )


def numerical_gradient(f: Callable[[np.ndarray], np.ndarray], x: np.ndarray, dout,
                       h: float = 1e-5, indices=None) -> np.ndarray:
    """Centred differences of ``sum(f(x) * dout)`` with respect to x.

    Inputs: f maps x (modified in place and restored) to an array shaped like dout;
    x float64 array; dout the upstream gradient; indices an optional list of flat
    indices to probe (the others are left 0). Output: gradient, shape of x.
    """
    _require_float64("x", x)
    if not h > 0:
        raise ValueError(f"h must be > 0, got {h}")
    dout = np.asarray(dout, dtype=np.float64)
    grad = np.zeros(x.shape, dtype=np.float64)
    flat_grad = grad.reshape(-1)
    probe = range(x.size) if indices is None else indices
    for index in probe:
        # Index x itself (not a flattened copy), so views such as transposes work too.
        position = np.unravel_index(index, x.shape)
        original = x[position]
        x[position] = original + h
        plus = float(np.sum(np.asarray(f(x), dtype=np.float64) * dout))
        x[position] = original - h
        minus = float(np.sum(np.asarray(f(x), dtype=np.float64) * dout))
        x[position] = original
        flat_grad[index] = (plus - minus) / (2.0 * h)
    return grad


@dataclass
class GradCheckRow:
    """One checked array: its name, norm-wise relative error and max absolute difference."""

    name: str
    rel_error: float
    max_abs_diff: float
    checked: int  # how many entries were probed
    size: int  # how many entries the array has
    analytic_norm: float = 1.0  # ||analytic||: ~0 when the true gradient is exactly 0

    def passes(self, tol: float, zero_atol: float = 1e-9) -> bool:
        """rel_error below tol, or a gradient that is exactly zero.

        The key bias is the case: softmax ignores a constant added to a whole row of
        scores, and q . b_key is constant along the key axis, so its true gradient is 0.
        The analytic gradient is then ~1e-17 and the centred difference is pure rounding
        noise (~eps * |loss| / h ~ 1e-10), so their relative error means nothing; both
        must instead be below ``zero_atol``.
        """
        if self.rel_error < tol:
            return True
        return self.analytic_norm < zero_atol and self.max_abs_diff < zero_atol


@dataclass(repr=False)
class GradCheckTable:
    """Rows of a gradient check; prints as a table, asserts with ``assert_below``."""

    title: str = ""
    rows: list[GradCheckRow] = field(default_factory=list)

    def __iter__(self):
        return iter(self.rows)

    def __len__(self) -> int:
        return len(self.rows)

    def extend(self, other: GradCheckTable, prefix: str = "") -> None:
        """Append another table's rows, their names prefixed."""
        for row in other.rows:
            self.rows.append(GradCheckRow(prefix + row.name, row.rel_error, row.max_abs_diff,
                                          row.checked, row.size, row.analytic_norm))

    @property
    def max_rel_error(self) -> float:
        """Largest relative error among arrays whose gradient is not identically zero."""
        return max((row.rel_error for row in self.rows if row.analytic_norm >= 1e-9),
                   default=0.0)

    def failures(self, tol: float) -> list[GradCheckRow]:
        return [row for row in self.rows if not row.passes(tol)]

    def assert_below(self, tol: float) -> None:
        """Raise AssertionError listing every row at or above ``tol``."""
        bad = self.failures(tol)
        if bad:
            lines = "\n".join(f"  {r.name}: rel_error {r.rel_error:.3e}, "
                              f"max abs diff {r.max_abs_diff:.3e}" for r in bad)
            raise AssertionError(f"gradient check {self.title!r} failed (tol {tol:g}):\n{lines}")

    def to_text(self, tol: float | None = None) -> str:
        width = max([len("name")] + [len(r.name) for r in self.rows])
        header = f"{'name':<{width}}  {'rel_error':>10}  {'max_abs_diff':>12}  {'checked':>13}"
        if tol is not None:
            header += "  ok"
        lines = ([self.title] if self.title else []) + [header, "-" * len(header)]
        for r in self.rows:
            line = (f"{r.name:<{width}}  {r.rel_error:>10.2e}  {r.max_abs_diff:>12.2e}  "
                    f"{f'{r.checked}/{r.size}':>13}")
            if tol is not None:
                line += "  " + ("NO" if not r.passes(tol) else
                                "yes" if r.rel_error < tol else "yes (gradient is 0)")
            lines.append(line)
        return "\n".join(lines)

    __str__ = to_text
    __repr__ = to_text

    def _repr_html_(self) -> str:
        cells = "".join(
            f"<tr><td><code>{r.name}</code></td><td>{r.rel_error:.2e}</td>"
            f"<td>{r.max_abs_diff:.2e}</td><td>{r.checked}/{r.size}</td></tr>" for r in self.rows)
        caption = f"<caption>{self.title}</caption>" if self.title else ""
        return (f"<table>{caption}<tr><th>name</th><th>rel_error</th><th>max abs diff</th>"
                f"<th>checked</th></tr>{cells}</table>")


def _probe_indices(size: int, analytic: np.ndarray, max_entries: int | None,
                   rng: np.random.Generator):
    """All indices, or a sample: half where the analytic gradient is nonzero, half uniform."""
    if max_entries is None or size <= max_entries:
        return None
    nonzero = np.flatnonzero(analytic.reshape(-1))
    half = max_entries // 2
    picked = set()
    if nonzero.size:
        picked.update(rng.choice(nonzero, size=min(half, nonzero.size), replace=False).tolist())
    remaining = max_entries - len(picked)
    picked.update(rng.choice(size, size=remaining, replace=False).tolist())
    return sorted(picked)


def _compare(name: str, analytic: np.ndarray, numeric: np.ndarray, indices) -> GradCheckRow:
    analytic = np.asarray(analytic, dtype=np.float64)
    size = int(numeric.size)
    if indices is not None:
        analytic = analytic.reshape(-1)[indices]
        numeric = numeric.reshape(-1)[indices]
    diff = np.abs(analytic - numeric)
    return GradCheckRow(name, rel_error(analytic, numeric), float(diff.max(initial=0.0)),
                        len(indices) if indices is not None else size, size,
                        float(np.linalg.norm(analytic)))


def _random_dout(out, rng: np.random.Generator) -> np.ndarray:
    # Standard normal, never all ones (see the module docstring).
    return rng.standard_normal(np.shape(out))


def check_function(forward: Callable, backward: Callable, inputs: Mapping[str, np.ndarray], *,
                   kwargs: Mapping | Callable[[], Mapping] | None = None, wrt=None,
                   seed: int = 0, h: float = 1e-5, max_entries: int | None = None,
                   title: str = "") -> GradCheckTable:
    """Check a functional pair ``forward(*inputs, **kwargs) -> (out, cache)``.

    ``backward(dout, cache)`` must return the gradients of the floating-point inputs in
    order (a single array when there is one). ``wrt`` names the inputs to check (default:
    every float input). ``kwargs`` may be a callable returning fresh keyword arguments
    per call, for functions that consume a random generator (dropout).
    """
    names = list(inputs)
    # An optional float input passed as None (a linear layer without bias) keeps its slot
    # in the backward's return tuple, where its gradient is None.
    float_names = [n for n in names if inputs[n] is None or (
        isinstance(inputs[n], np.ndarray) and np.issubdtype(inputs[n].dtype, np.floating))]
    for name in float_names:
        if inputs[name] is not None:
            _require_float64(name, inputs[name])
    if wrt is None:
        wrt = [n for n in float_names if inputs[n] is not None]
    wrt = list(wrt)
    unknown = [n for n in wrt if n not in float_names]
    if unknown:
        raise ValueError(f"wrt names {unknown} are not float inputs; allowed: {float_names}")

    def call():
        kw = kwargs() if callable(kwargs) else (kwargs or {})
        return forward(*[inputs[n] for n in names], **kw)

    rng = np.random.default_rng(seed)
    out, cache = call()
    dout = _random_dout(out, rng)
    grads = backward(dout, cache)
    if not isinstance(grads, tuple):
        grads = (grads,)
    if len(grads) != len(float_names):
        raise ValueError(f"backward returned {len(grads)} gradients but the forward has "
                         f"{len(float_names)} float inputs {float_names}")
    analytic = dict(zip(float_names, grads))
    table = GradCheckTable(title=title)
    for name in wrt:
        if analytic[name] is None:
            continue
        indices = _probe_indices(inputs[name].size, analytic[name], max_entries, rng)
        numeric = numerical_gradient(lambda _x: call()[0], inputs[name], dout, h, indices)
        table.rows.append(_compare(name, analytic[name], numeric, indices))
    return table


def _generator_states(module: Module) -> list[tuple[np.random.Generator, dict]]:
    """Snapshot every dropout generator so each forward of a check draws the same masks."""
    seen, states = set(), []
    for _, child in module.named_modules():
        if isinstance(child, Dropout) and id(child.rng) not in seen:
            seen.add(id(child.rng))
            states.append((child.rng, child.rng.bit_generator.state))
    return states


def _restore(states) -> None:
    for generator, state in states:
        generator.bit_generator.state = state


def check_module(module: Module, inputs: Mapping[str, np.ndarray], *, seed: int = 0,
                 h: float = 1e-5, max_entries: int | None = None, title: str = "",
                 forward_kwargs: Mapping | None = None) -> GradCheckTable:
    """Check a Module: every float input whose gradient ``backward`` returns, every parameter.

    ``module.forward(*inputs, **forward_kwargs)`` must return one array;
    ``module.backward(dout)`` returns dx (or a tuple, one per float input, or None).
    """
    names = list(inputs)
    float_names = [n for n in names if np.issubdtype(np.asarray(inputs[n]).dtype, np.floating)]
    for name in float_names:
        _require_float64(name, inputs[name])
    for name, value in module.named_parameters():
        _require_float64(f"parameter {name}", value)
    states = _generator_states(module)
    forward_kwargs = dict(forward_kwargs or {})

    def call():
        _restore(states)
        return module.forward(*[inputs[n] for n in names], **forward_kwargs)

    rng = np.random.default_rng(seed)
    out = call()
    dout = _random_dout(out, rng)
    module.zero_grad()
    dx = module.backward(dout)
    if dx is None:
        dx = ()
    elif not isinstance(dx, tuple):
        dx = (dx,)
    input_grads = dict(zip(float_names, dx))
    analytic_params = {name: grad.copy() for name, grad in module.named_gradients()}

    table = GradCheckTable(title=title)
    for name, analytic in input_grads.items():
        if analytic is None:
            continue
        indices = _probe_indices(inputs[name].size, analytic, max_entries, rng)
        numeric = numerical_gradient(lambda _x: call(), inputs[name], dout, h, indices)
        table.rows.append(_compare(name, analytic, numeric, indices))
    for name, value in module.named_parameters():
        analytic = analytic_params[name]
        indices = _probe_indices(value.size, analytic, max_entries, rng)
        numeric = numerical_gradient(lambda _x: call(), value, dout, h, indices)
        table.rows.append(_compare(name, analytic, numeric, indices))
    return table


def check_loss(model: Module, compute_loss: Callable[[], float], backward: Callable[[], None],
               *, seed: int = 0, h: float = 1e-5, max_entries: int | None = 40,
               title: str = "", names=None) -> GradCheckTable:
    """Check every parameter's gradient of a scalar loss (a whole model).

    ``compute_loss()`` runs the forward and returns the loss; ``backward()`` fills the
    model's gradient buffers from it. Large tables are sampled (``max_entries`` per array,
    half of them where the analytic gradient is nonzero).
    """
    for name, value in model.named_parameters():
        _require_float64(f"parameter {name}", value)
    states = _generator_states(model)

    def call():
        _restore(states)
        return np.float64(compute_loss())

    rng = np.random.default_rng(seed)
    call()
    model.zero_grad()
    backward()
    analytic_params = {name: grad.copy() for name, grad in model.named_gradients()}
    table = GradCheckTable(title=title)
    for name, value in model.named_parameters():
        if names is not None and name not in names:
            continue
        analytic = analytic_params[name]
        indices = _probe_indices(value.size, analytic, max_entries, rng)
        numeric = numerical_gradient(lambda _x: call(), value, 1.0, h, indices)
        table.rows.append(_compare(name, analytic, numeric, indices))
    return table
