"""Adam with decoupled weight decay, as used to pretrain BERT, and global gradient clipping.

Two variants of one algorithm (the derivations and their differences are in docs/optim.md):

- ``AdamW``: torch.optim.AdamW's order of operations (Loshchilov & Hutter, "Decoupled Weight
  Decay Regularization", ICLR 2019): shrink the weights by ``1 - lr * weight_decay``, then take
  a bias-corrected Adam step.
- ``AdamWeightDecay``: Google BERT's ``AdamWeightDecayOptimizer`` (google-research/bert,
  optimization.py): no bias correction, and ``weight_decay * param`` added to the Adam update
  before it is scaled by the learning rate.

Both read the gradients from the model at every ``step()`` and update the parameter arrays in
place, so the model keeps seeing its own arrays. LayerNorm weights and all biases get no
weight decay (``no_weight_decay``), as in Google BERT.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable, Iterable

import numpy as np

from minibert.training.schedules import ConstantSchedule

__all__ = [
    "AdamW",
    "AdamWeightDecay",
    "OPTIMIZERS",
    "clip_grad_norm",
    "make_optimizer",
    "no_weight_decay",
]


def no_weight_decay(name: str) -> bool:
    """True for parameters that BERT trains without weight decay: LayerNorm weights and biases.

    Inputs: name, an HF parameter name such as
    ``bert.encoder.layer.0.attention.output.LayerNorm.weight``.
    Outputs: bool.
    """
    return "LayerNorm" in name or "layer_norm" in name or name.endswith("bias")


def _real(arg_name: str, value, allowed: str, ok: Callable[[float], bool]) -> float:
    """Return ``value`` as a float after checking it is a real number for which ``ok`` holds."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{arg_name} must be a real number, got {type(value).__name__} {value!r}")
    if not (math.isfinite(value) and ok(value)):
        raise ValueError(f"{arg_name} must be {allowed}, got {value!r}")
    return float(value)


def _nonneg(x: float) -> bool:
    return x >= 0


def _unit_interval(x: float) -> bool:
    return 0 <= x < 1


def _is_model(obj) -> bool:
    return hasattr(obj, "named_parameters") and hasattr(obj, "named_gradients")


def _check_gradient(name: str, param: np.ndarray, grad) -> None:
    if not isinstance(grad, np.ndarray):
        raise TypeError(f"gradient of {name!r} must be a numpy array, got {type(grad).__name__}")
    if grad.shape != param.shape or grad.dtype != param.dtype:
        raise ValueError(
            f"gradient of {name!r} must have the parameter's shape {param.shape} and dtype "
            f"{param.dtype}, got shape {grad.shape} and dtype {grad.dtype}"
        )


class AdamW:
    """Adam with decoupled weight decay, in torch.optim.AdamW's order of operations.

    For each parameter p with gradient g, at update t = 1, 2, ... with learning rate lr:

        p = p * (1 - lr * weight_decay)              # only for decay_names
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    With ``bias_correction=False`` both ``1 - beta**t`` factors are 1, which is Google BERT's
    update (see AdamWeightDecay).

    Inputs:
        params: a model (anything with ``named_parameters()`` and ``named_gradients()``, HF
            names; gradients are read from it at every step), or a list of
            ``(name, param, grad)`` triples whose grad arrays are filled in place.
        lr: a float >= 0, or a schedule (an object with ``lr_at(step)``, see
            minibert.training.schedules); ``step`` is the number of updates already made.
        betas: (beta1, beta2), each in [0, 1).
        eps: > 0. Default 1e-8, torch's and HF Trainer's; Google BERT uses 1e-6.
        weight_decay: >= 0, multiplied by lr as in torch (per-update shrink 1 - lr * wd).
        bias_correction: divide the moments by 1 - beta**t (Adam) or not (Google BERT).
        no_decay: name -> bool, True for parameters trained without weight decay.
    """

    # Parameter-sized working arrays one update needs (see _update).
    _scratch_rows = 1

    def __init__(
        self,
        params,
        lr=1e-4,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        weight_decay: float = 0.01,
        bias_correction: bool = True,
        no_decay: Callable[[str], bool] = no_weight_decay,
    ):
        if hasattr(lr, "lr_at"):
            self.schedule = lr
        else:
            self.schedule = ConstantSchedule(_real("lr", lr, "a finite number >= 0", _nonneg))
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = (
            _real("betas[0]", betas[0], "in [0, 1)", _unit_interval),
            _real("betas[1]", betas[1], "in [0, 1)", _unit_interval),
        )
        self.eps = _real("eps", eps, "a finite number > 0", lambda x: x > 0)
        self.weight_decay = _real("weight_decay", weight_decay, "a finite number >= 0", _nonneg)
        if not isinstance(bias_correction, bool):
            raise TypeError(f"bias_correction must be a bool, got {bias_correction!r}")
        self.bias_correction = bias_correction
        if not callable(no_decay):
            raise TypeError(f"no_decay must be a callable name -> bool, got {no_decay!r}")

        self._model = params if _is_model(params) else None
        named = self._read_params(params)
        self._params = {n: p for n, p, _ in named}
        self._fixed_grads = None if self._model is not None else {n: g for n, _, g in named}
        self.decay_names = tuple(n for n in self._params if not no_decay(n))
        self.no_decay_names = tuple(n for n in self._params if no_decay(n))
        self._decay = set(self.decay_names)
        self.step_count = 0
        self.exp_avg = {n: np.zeros_like(p) for n, p in self._params.items()}
        self.exp_avg_sq = {n: np.zeros_like(p) for n, p in self._params.items()}
        # Scratch buffers reused by every update, one set per dtype, as large as the largest
        # parameter: step() then allocates nothing of parameter size.
        largest = {}
        for p in self._params.values():
            largest[p.dtype] = max(largest.get(p.dtype, 0), p.size)
        self._scratch = {
            dtype: np.empty((self._scratch_rows, size), dtype=dtype)
            for dtype, size in largest.items()
        }

    def _read_params(self, params) -> list[tuple[str, np.ndarray, np.ndarray | None]]:
        """Validate ``params``; return (name, param, grad) triples, grad None for a model."""
        if self._model is not None:
            items = [(n, p, None) for n, p in params.named_parameters()]
        elif isinstance(params, Iterable) and not isinstance(params, (str, bytes, np.ndarray)):
            items = list(params)
            for item in items:
                if not (isinstance(item, tuple) and len(item) == 3):
                    raise TypeError(
                        "params must be a model or a list of (name, param, grad) triples, "
                        f"got an item {item!r}"
                    )
        else:
            raise TypeError(
                "params must be a model (with named_parameters() and named_gradients()) or a "
                f"list of (name, param, grad) triples, got {type(params).__name__}"
            )
        if not items:
            raise ValueError("params must contain at least one parameter, got none")
        seen_names, seen_arrays = set(), set()
        for name, param, grad in items:
            if not isinstance(name, str):
                raise TypeError(f"parameter names must be str, got {name!r}")
            if not isinstance(param, np.ndarray) or not np.issubdtype(param.dtype, np.floating):
                raise TypeError(
                    f"parameter {name!r} must be a floating-point numpy array, got "
                    f"{type(param).__name__} {getattr(param, 'dtype', '')}"
                )
            if name in seen_names:
                raise ValueError(f"parameter name {name!r} is listed twice in params")
            if id(param) in seen_arrays:
                raise ValueError(
                    f"parameter {name!r} is an array already listed under another name; "
                    "list tied arrays once"
                )
            seen_names.add(name)
            seen_arrays.add(id(param))
            if grad is not None:
                _check_gradient(name, param, grad)
        return items

    def _gradients(self) -> dict[str, np.ndarray]:
        """The current gradient of every parameter, checked against the parameters."""
        if self._model is None:
            return self._fixed_grads
        params = dict(self._model.named_parameters())
        grads = dict(self._model.named_gradients())
        for name, param in self._params.items():
            if params.get(name) is not param:
                raise ValueError(
                    f"the model's parameter {name!r} is no longer the array the optimizer was "
                    "built with; parameters must be updated in place, not rebound"
                )
            if name not in grads:
                raise ValueError(f"the model gives no gradient for parameter {name!r}")
            _check_gradient(name, param, grads[name])
        return grads

    @property
    def current_lr(self) -> float:
        """The learning rate the next ``step()`` will use."""
        return float(self.schedule.lr_at(self.step_count))

    def step(self) -> None:
        """Update every parameter in place from its current gradient."""
        grads = self._gradients()
        lr = self.current_lr
        self.step_count += 1
        for name, param in self._params.items():
            scratch = self._scratch[param.dtype][:, : param.size]
            self._update(
                param,
                grads[name],
                self.exp_avg[name],
                self.exp_avg_sq[name],
                lr,
                self.weight_decay if name in self._decay else 0.0,
                [row.reshape(param.shape) for row in scratch],
            )

    def _update(self, param, grad, exp_avg, exp_avg_sq, lr, weight_decay, scratch) -> None:
        """One AdamW update of one parameter, in place; ``scratch`` is free working memory."""
        beta1, beta2 = self.betas
        (tmp,) = scratch
        # Scalars stay Python floats so float32 arrays are updated in float32 arithmetic.
        if weight_decay != 0.0:
            param *= 1.0 - lr * weight_decay
        exp_avg *= beta1
        np.multiply(grad, 1.0 - beta1, out=tmp)
        exp_avg += tmp  # m = beta1 * m + (1 - beta1) * g
        exp_avg_sq *= beta2
        np.multiply(grad, grad, out=tmp)
        tmp *= 1.0 - beta2
        exp_avg_sq += tmp  # v = beta2 * v + (1 - beta2) * g^2
        np.sqrt(exp_avg_sq, out=tmp)
        step_size = lr
        if self.bias_correction:
            # m / (1 - beta1^t) and v / (1 - beta2^t) undo the bias towards the zero start;
            # folded into the step size and the denominator so m and v are never copied.
            step_size = lr / (1.0 - beta1**self.step_count)
            tmp /= math.sqrt(1.0 - beta2**self.step_count)
        tmp += self.eps  # denominator sqrt(v_hat) + eps
        np.divide(exp_avg, tmp, out=tmp)
        tmp *= step_size
        param -= tmp

    def zero_grad(self) -> None:
        """Set every gradient to zero in place."""
        grads = self._gradients()
        for name in self._params:
            grads[name].fill(0)

    def state_dict(self) -> dict[str, np.ndarray]:
        """A flat copy of the optimizer state, ready for safetensors.

        Outputs: ``exp_avg.<name>`` and ``exp_avg_sq.<name>`` (parameter shape and dtype) for
        every parameter, and ``step``: int64 0-d array, the number of updates made.
        Hyperparameters and the schedule are not included: rebuild the optimizer with them.
        """
        state = {"step": np.array(self.step_count, dtype=np.int64)}
        for name in self._params:
            state[f"exp_avg.{name}"] = self.exp_avg[name].copy()
            state[f"exp_avg_sq.{name}"] = self.exp_avg_sq[name].copy()
        return state

    def load_state_dict(self, state: dict[str, np.ndarray]) -> None:
        """Restore a ``state_dict()``; the next ``step()`` continues bit-identically.

        Everything is checked before anything changes: a missing, unexpected or mis-shaped
        key raises ValueError naming it.
        """
        if not isinstance(state, dict):
            raise TypeError(f"state must be a dict of arrays, got {type(state).__name__}")
        expected = {"step"}
        for name in self._params:
            expected.update((f"exp_avg.{name}", f"exp_avg_sq.{name}"))
        missing = sorted(expected - state.keys())
        if missing:
            raise ValueError(f"state is missing key {missing[0]!r} ({len(missing)} missing)")
        unexpected = sorted(state.keys() - expected)
        if unexpected:
            raise ValueError(
                f"state has unexpected key {unexpected[0]!r}; allowed: 'step', "
                "'exp_avg.<name>' and 'exp_avg_sq.<name>' for this optimizer's parameters"
            )
        step = np.asarray(state["step"])
        if step.shape != () or not np.issubdtype(step.dtype, np.integer) or step < 0:
            raise ValueError(
                f"state key 'step' must be a 0-d integer array >= 0, got {state['step']!r}"
            )
        for key in sorted(expected - {"step"}):
            value = state[key]
            target = self.exp_avg_sq if key.startswith("exp_avg_sq.") else self.exp_avg
            param_shape = target[key.split(".", 1)[1]].shape
            if not isinstance(value, np.ndarray) or not np.issubdtype(value.dtype, np.floating):
                raise ValueError(
                    f"state key {key!r} must be a floating-point numpy array, got "
                    f"{type(value).__name__} {getattr(value, 'dtype', '')}"
                )
            if value.shape != param_shape:
                raise ValueError(
                    f"state key {key!r} must have shape {param_shape}, got {value.shape}"
                )
            if not np.all(np.isfinite(value)):
                raise ValueError(f"state key {key!r} must be finite, got NaN or inf")
            if key.startswith("exp_avg_sq.") and np.any(value < 0):
                raise ValueError(
                    f"state key {key!r} holds squared gradients and must be >= 0, "
                    f"got minimum {float(value.min())}"
                )
        for key in expected - {"step"}:
            target = self.exp_avg_sq if key.startswith("exp_avg_sq.") else self.exp_avg
            np.copyto(target[key.split(".", 1)[1]], state[key])
        self.step_count = int(step)


class AdamWeightDecay(AdamW):
    """Google BERT's AdamWeightDecayOptimizer: Adam without bias correction, decay in the update.

    For each parameter p with gradient g and learning rate lr (google-research/bert,
    optimization.py):

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        update = m / (sqrt(v) + eps) + weight_decay * p    # decay term only for decay_names
        p = p - lr * update

    Expanding the last line gives ``p * (1 - lr * weight_decay) - lr * m / (sqrt(v) + eps)``:
    the same numbers as ``AdamW(bias_correction=False)`` up to rounding.

    Inputs: as AdamW, without bias_correction; eps defaults to Google's 1e-6.
    """

    # The update and the weight-decay term are both needed before they are added.
    _scratch_rows = 2

    def __init__(
        self,
        params,
        lr=1e-4,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-6,
        weight_decay: float = 0.01,
        no_decay: Callable[[str], bool] = no_weight_decay,
    ):
        super().__init__(params, lr, betas, eps, weight_decay, False, no_decay)

    def _update(self, param, grad, exp_avg, exp_avg_sq, lr, weight_decay, scratch) -> None:
        """One Google BERT update of one parameter, in place, in Google's order of operations."""
        beta1, beta2 = self.betas
        update, tmp = scratch
        exp_avg *= beta1
        np.multiply(grad, 1.0 - beta1, out=tmp)
        exp_avg += tmp  # m = beta1 * m + (1 - beta1) * g
        exp_avg_sq *= beta2
        np.multiply(grad, grad, out=tmp)
        tmp *= 1.0 - beta2
        exp_avg_sq += tmp  # v = beta2 * v + (1 - beta2) * g^2
        np.sqrt(exp_avg_sq, out=update)
        update += self.eps
        np.divide(exp_avg, update, out=update)  # m / (sqrt(v) + eps)
        if weight_decay != 0.0:
            np.multiply(param, weight_decay, out=tmp)
            update += tmp
        update *= lr
        param -= update


OPTIMIZERS = {"adamw": AdamW, "adam_weight_decay": AdamWeightDecay}


def make_optimizer(name: str, params, **kwargs) -> AdamW:
    """Build an optimizer by name.

    Inputs: name, "adamw" (torch.optim.AdamW) or "adam_weight_decay" (Google BERT); params and
    keyword arguments as for that class.
    Outputs: the optimizer.
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"name must be one of {tuple(OPTIMIZERS)}, got {name!r}")
    return OPTIMIZERS[name](params, **kwargs)


def clip_grad_norm(grads, max_norm: float = 1.0) -> float:
    """Scale all gradients in place so that their global L2 norm is at most ``max_norm``.

    torch.nn.utils.clip_grad_norm_'s rule: with ``total`` the L2 norm of all gradients
    concatenated, multiply every gradient by ``min(1, max_norm / (total + 1e-6))``.

    Inputs: grads, a dict name -> gradient array or a model with ``named_gradients()``;
    max_norm, > 0.
    Outputs: total, the norm before clipping (float).
    """
    max_norm = _real("max_norm", max_norm, "a finite number > 0", lambda x: x > 0)
    if hasattr(grads, "named_gradients"):
        grads = dict(grads.named_gradients())
    if not isinstance(grads, dict):
        raise TypeError(
            f"grads must be a dict name -> array or a model, got {type(grads).__name__}"
        )
    squares = {}
    for name, grad in grads.items():
        if not isinstance(grad, np.ndarray) or not np.issubdtype(grad.dtype, np.floating):
            raise TypeError(
                f"gradient {name!r} must be a floating-point numpy array, got "
                f"{type(grad).__name__} {getattr(grad, 'dtype', '')}"
            )
        flat = grad.reshape(-1)
        # Sum the squares in float64 (as torch does on CPU): float32 sums of millions of
        # squares lose digits, and squares above 3.4e38 would overflow.
        squares[name] = float(np.einsum("i,i->", flat, flat, dtype=np.float64))
    total = math.sqrt(sum(squares.values()))
    if not math.isfinite(total):
        bad = next(name for name, square in squares.items() if not math.isfinite(square))
        raise ValueError(
            f"gradients must be finite to be clipped, got NaN or inf in gradient {bad!r}"
        )
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for grad in grads.values():
            grad *= coef
    return total
