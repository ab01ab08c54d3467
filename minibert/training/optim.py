"""Adam with decoupled weight decay, as used to pretrain BERT, and global gradient clipping.

Two variants of one algorithm (the derivations and their differences are in docs/optim.md):

- ``AdamW``: torch.optim.AdamW's order of operations (Loshchilov & Hutter, "Decoupled Weight
  Decay Regularization", ICLR 2019): shrink the weights by ``1 - lr * weight_decay``, then take
  a bias-corrected Adam step.
- ``AdamWeightDecay``: Google BERT's ``AdamWeightDecayOptimizer`` (google-research/bert,
  optimization.py): no bias correction, and ``weight_decay * param`` added to the Adam update
  before it is scaled by the learning rate.

All parameters in one buffer, as llm.c keeps GPT-2's: on construction the optimizer moves
the model's parameters into one flat array and their gradients into another
(``flatten_parameters``). Every ``module.params[name]`` and ``module.grads[name]`` becomes a
view of them, so the model computes exactly as before, and an update is a dozen in-place
ufuncs over the whole model instead of a dozen per array. The decay group comes first in
the buffer, so weight decay is one slice. ``adamw_reference`` and
``adam_weight_decay_reference`` are the same updates for one array, written as the formulas
read; tests/test_optim.py proves the flat updates equal to them bit for bit. LayerNorm
weights and all biases get no weight decay (``no_weight_decay``), as in Google BERT.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np

from minibert.checks import check_bool, check_probability, check_real
from minibert.training.schedules import ConstantSchedule

__all__ = [
    "AdamW",
    "AdamWeightDecay",
    "OPTIMIZERS",
    "adam_weight_decay_reference",
    "adamw_reference",
    "clip_grad_norm",
    "flatten_parameters",
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


# ------------------------------------------------------------------------------------------
# The updates of one array, as the formulas read
# ------------------------------------------------------------------------------------------


def adamw_reference(param, grad, exp_avg, exp_avg_sq, lr: float, step: int,
                    betas: tuple[float, float], eps: float, weight_decay: float,
                    bias_correction: bool = True) -> None:
    """One AdamW update of one parameter array, in place; ``step`` is t = 1, 2, ...

    The readable twin of ``AdamW.step``, which does the same over the flat buffers without
    temporaries. The factors are grouped as ``step`` groups them, so the two agree exactly.
    """
    beta1, beta2 = betas
    param *= 1.0 - lr * weight_decay
    exp_avg[...] = beta1 * exp_avg + (1.0 - beta1) * grad  # m
    exp_avg_sq[...] = beta2 * exp_avg_sq + (grad * grad) * (1.0 - beta2)  # v
    if bias_correction:  # m_hat = m / (1 - beta1^t), v_hat = v / (1 - beta2^t)
        step_size = lr / (1.0 - beta1**step)
        denominator = np.sqrt(exp_avg_sq) / math.sqrt(1.0 - beta2**step) + eps
    else:
        step_size, denominator = lr, np.sqrt(exp_avg_sq) + eps
    param -= exp_avg / denominator * step_size  # p = p - lr * m_hat / (sqrt(v_hat) + eps)


def adam_weight_decay_reference(param, grad, exp_avg, exp_avg_sq, lr: float,
                                betas: tuple[float, float], eps: float,
                                weight_decay: float) -> None:
    """One Google BERT update of one parameter array, in place (``AdamWeightDecay.step``)."""
    beta1, beta2 = betas
    exp_avg[...] = beta1 * exp_avg + (1.0 - beta1) * grad
    exp_avg_sq[...] = beta2 * exp_avg_sq + (grad * grad) * (1.0 - beta2)
    update = exp_avg / (np.sqrt(exp_avg_sq) + eps) + param * weight_decay
    param -= update * lr


# ------------------------------------------------------------------------------------------
# One buffer for all parameters
# ------------------------------------------------------------------------------------------


def flatten_parameters(model, names: Sequence[str]) -> tuple[np.ndarray, np.ndarray]:
    """Move the named parameters of ``model`` and their gradients into one flat buffer each.

    The buffers hold the arrays one after the other in the order of ``names``. Every
    ``module.params[...]`` and ``module.grads[...]`` entry of the model that held one of
    these arrays then holds a view of the buffer, with the array's shape and values; the
    holders of a tied array all get the same view, so it stays one array.
    Inputs: model, a minibert Module with floating-point parameters of one dtype; names,
    each name of ``model.named_parameters()`` once.
    Outputs: (params, grads), two flat arrays (P,), P the number of scalar parameters.
    """
    params, grads = dict(model.named_parameters()), dict(model.named_gradients())
    if sorted(names) != sorted(params):
        raise ValueError("names must list every parameter of the model once")
    dtypes = {params[name].dtype for name in names}
    if len(dtypes) != 1:
        raise TypeError(f"the parameters must share one dtype to share one buffer, got "
                        f"{sorted(str(dtype) for dtype in dtypes)}")
    total, dtype = sum(params[name].size for name in names), dtypes.pop()
    flat_params, flat_grads = np.empty(total, dtype), np.empty(total, dtype)
    moved = {}  # id(old array) -> its view in the buffer
    start = 0
    for name in names:
        for old, flat in ((params[name], flat_params), (grads[name], flat_grads)):
            view = flat[start:start + old.size].reshape(old.shape)
            view[...] = old
            moved[id(old)] = view
        start += params[name].size
    for _, module in model.named_modules():
        for table in (module.params, module.grads):
            for key, array in list(table.items()):
                table[key] = moved.get(id(array), array)
    return flat_params, flat_grads


def _views(flat: np.ndarray, shapes: dict[str, tuple]) -> dict[str, np.ndarray]:
    """name -> view of ``flat`` with that shape, consecutive in the order of ``shapes``."""
    views, start = {}, 0
    for name, shape in shapes.items():
        size = math.prod(shape)
        views[name] = flat[start:start + size].reshape(shape)
        start += size
    return views


def _check_model(model) -> None:
    if not all(hasattr(model, attr) for attr in ("named_modules", "named_parameters",
                                                   "named_gradients")):
        raise TypeError(f"model must be a minibert Module (its parameters move into one "
                        f"buffer), got {type(model).__name__}")
    for (name, param), (_, grad) in zip(model.named_parameters(), model.named_gradients(),
                                        strict=True):
        if not isinstance(grad, np.ndarray) or grad.shape != param.shape \
                or grad.dtype != param.dtype:
            raise ValueError(f"gradient of {name!r} must be an array of the parameter's shape "
                             f"{param.shape} and dtype {param.dtype}, got "
                             f"{getattr(grad, 'shape', type(grad).__name__)} "
                             f"{getattr(grad, 'dtype', '')}")


# ------------------------------------------------------------------------------------------
# The optimizers
# ------------------------------------------------------------------------------------------


class AdamW:
    """Adam with decoupled weight decay, in torch.optim.AdamW's order of operations.

    For every parameter p with gradient g, at update t = 1, 2, ... with learning rate lr:

        p = p * (1 - lr * weight_decay)              # only for decay_names
        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        p = p - lr / (1 - beta1**t) * m / (sqrt(v) / sqrt(1 - beta2**t) + eps)

    With ``bias_correction=False`` both ``1 - beta**t`` factors are 1, which is Google BERT's
    update (see AdamWeightDecay).

    Inputs:
        model: a minibert Module; its parameters and gradient buffers move into the
            optimizer's flat buffers (``flat_params``, ``flat_grads``), the module keeping
            views of them. One optimizer per model: a second one moves them again.
        lr: a float >= 0, or a schedule (an object with ``lr_at(step)``, see
            minibert.training.schedules); ``step`` is the number of updates already made.
        betas: (beta1, beta2), each in [0, 1).
        eps: > 0. Default 1e-8, torch's and HF Trainer's; Google BERT uses 1e-6.
        weight_decay: >= 0, multiplied by lr as in torch (per-update shrink 1 - lr * wd).
        bias_correction: divide the moments by 1 - beta**t (Adam) or not (Google BERT).
        no_decay: name -> bool, True for parameters trained without weight decay.
    """

    _scratch_rows = 1  # working arrays one update needs
    _block = 1 << 18  # values per pass of the update: 1 MiB of float32, so the passes stay in cache

    def __init__(self, model, lr=1e-4, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01, bias_correction: bool = True,
                 no_decay: Callable[[str], bool] = no_weight_decay):
        self.schedule = lr if hasattr(lr, "lr_at") else ConstantSchedule(lr)
        if not (isinstance(betas, (tuple, list)) and len(betas) == 2):
            raise TypeError(f"betas must be a pair (beta1, beta2), got {betas!r}")
        self.betas = tuple(check_probability(f"betas[{i}]", beta, open_at_one=True)
                           for i, beta in enumerate(betas))
        self.eps = check_real("eps", eps, 0, above=True)
        self.weight_decay = check_real("weight_decay", weight_decay, 0)
        self.bias_correction = check_bool("bias_correction", bias_correction)
        if not callable(no_decay):
            raise TypeError(f"no_decay must be a callable name -> bool, got {no_decay!r}")
        _check_model(model)
        shapes = {name: param.shape for name, param in model.named_parameters()}
        if not shapes:
            raise ValueError("model must have at least one parameter, got none")
        self.decay_names = tuple(name for name in shapes if not no_decay(name))
        self.no_decay_names = tuple(name for name in shapes if no_decay(name))
        layout = {name: shapes[name] for name in self.decay_names + self.no_decay_names}
        self.model = model
        self.flat_params, self.flat_grads = flatten_parameters(model, list(layout))
        self._params = dict(model.named_parameters())  # the views the model must keep holding
        self._grads = dict(model.named_gradients())
        self._view_ids = {id(view) for views in (self._params, self._grads)
                          for view in views.values()}
        self._num_decay = sum(math.prod(layout[name]) for name in self.decay_names)
        self.step_count = 0
        self.flat_exp_avg = np.zeros_like(self.flat_params)  # m
        self.flat_exp_avg_sq = np.zeros_like(self.flat_params)  # v
        self.exp_avg = _views(self.flat_exp_avg, layout)
        self.exp_avg_sq = _views(self.flat_exp_avg_sq, layout)
        # Working memory reused by every update, one block long: step() allocates nothing,
        # and the update's extra memory stays a few MiB whatever the model's size.
        self._scratch = np.empty((self._scratch_rows, min(self._block, self.flat_params.size)),
                                 self.flat_params.dtype)

    @property
    def current_lr(self) -> float:
        """The learning rate the next ``step()`` will use."""
        return float(self.schedule.lr_at(self.step_count))

    def _check_buffers(self) -> None:
        """Refuse to update a model whose modules no longer hold views of the buffers."""
        for module_name, module in self.model.named_modules():
            for kind, table in (("parameter", module.params), ("gradient", module.grads)):
                for key, array in table.items():
                    if id(array) not in self._view_ids:
                        name = f"{module_name}.{key}" if module_name else key
                        raise ValueError(
                            f"the model's {kind} {name!r} is no longer the array the "
                            f"optimizer was built with; update arrays in place, never rebind")

    def _blocks(self):
        """Consecutive slices of the flat buffers, each at most ``_block`` long."""
        size = self.flat_params.size
        for start in range(0, size, self._block):
            yield slice(start, min(start + self._block, size))

    def _update_moments(self, block: slice, tmp: np.ndarray) -> None:
        """m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g², in place, on a block."""
        beta1, beta2 = self.betas
        grad = self.flat_grads[block]
        exp_avg, exp_avg_sq = self.flat_exp_avg[block], self.flat_exp_avg_sq[block]
        # Scalars stay Python floats, so float32 arrays are updated in float32 arithmetic.
        exp_avg *= beta1
        np.multiply(grad, 1.0 - beta1, out=tmp)
        exp_avg += tmp
        exp_avg_sq *= beta2
        np.multiply(grad, grad, out=tmp)
        tmp *= 1.0 - beta2
        exp_avg_sq += tmp

    def step(self) -> None:
        """Update every parameter in place from its current gradient."""
        self._check_buffers()
        lr = self.current_lr
        self.step_count += 1
        beta1, beta2 = self.betas
        if self.weight_decay:
            self.flat_params[: self._num_decay] *= 1.0 - lr * self.weight_decay  # decay group
        step_size = lr
        if self.bias_correction:
            # m / (1 - beta1^t) and v / (1 - beta2^t) undo the bias towards the zero start;
            # folded into the step size and the denominator so m and v are never copied.
            step_size = lr / (1.0 - beta1**self.step_count)
        for block in self._blocks():
            tmp = self._scratch[0, : block.stop - block.start]
            self._update_moments(block, tmp)
            np.sqrt(self.flat_exp_avg_sq[block], out=tmp)
            if self.bias_correction:
                tmp /= math.sqrt(1.0 - beta2**self.step_count)
            tmp += self.eps  # sqrt(v_hat) + eps
            np.divide(self.flat_exp_avg[block], tmp, out=tmp)
            tmp *= step_size
            self.flat_params[block] -= tmp  # p = p - lr * m_hat / (sqrt(v_hat) + eps)

    def zero_grad(self) -> None:
        """Set every gradient to zero in place."""
        self.flat_grads.fill(0)

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
        targets = {"step": None}
        for name in self._params:
            targets[f"exp_avg.{name}"] = self.exp_avg[name]
            targets[f"exp_avg_sq.{name}"] = self.exp_avg_sq[name]
        missing = sorted(targets.keys() - state.keys())
        if missing:
            raise ValueError(f"state is missing key {missing[0]!r} ({len(missing)} missing)")
        unexpected = sorted(state.keys() - targets.keys())
        if unexpected:
            raise ValueError(f"state has unexpected key {unexpected[0]!r}; allowed: 'step', "
                             "'exp_avg.<name>' and 'exp_avg_sq.<name>' for this optimizer's "
                             "parameters")
        step = np.asarray(state["step"])
        if step.shape != () or not np.issubdtype(step.dtype, np.integer) or step < 0:
            raise ValueError(f"state key 'step' must be a 0-d integer array >= 0, "
                             f"got {state['step']!r}")
        for key in sorted(targets.keys() - {"step"}):
            value = state[key]
            if not isinstance(value, np.ndarray) or not np.issubdtype(value.dtype, np.floating):
                raise ValueError(f"state key {key!r} must be a floating-point numpy array, got "
                                 f"{type(value).__name__} {getattr(value, 'dtype', '')}")
            if value.shape != targets[key].shape:
                raise ValueError(f"state key {key!r} must have shape {targets[key].shape}, "
                                 f"got {value.shape}")
            if not np.all(np.isfinite(value)):
                raise ValueError(f"state key {key!r} must be finite, got NaN or inf")
            if key.startswith("exp_avg_sq.") and np.any(value < 0):
                raise ValueError(f"state key {key!r} holds squared gradients and must be >= 0, "
                                 f"got minimum {float(value.min())}")
        for key, target in targets.items():
            if target is not None:
                np.copyto(target, state[key])
        self.step_count = int(step)


class AdamWeightDecay(AdamW):
    """Google BERT's AdamWeightDecayOptimizer: Adam without bias correction, decay in the update.

    For every parameter p with gradient g and learning rate lr (google-research/bert,
    optimization.py):

        m = beta1 * m + (1 - beta1) * g
        v = beta2 * v + (1 - beta2) * g * g
        update = m / (sqrt(v) + eps) + weight_decay * p    # decay term only for decay_names
        p = p - lr * update

    Expanding the last line gives ``p * (1 - lr * weight_decay) - lr * m / (sqrt(v) + eps)``:
    the same numbers as ``AdamW(bias_correction=False)`` up to rounding.

    Inputs: as AdamW, without bias_correction; eps defaults to Google's 1e-6.
    """

    _scratch_rows = 2  # the update and the weight-decay term are both needed before adding

    def __init__(self, model, lr=1e-4, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-6, weight_decay: float = 0.01,
                 no_decay: Callable[[str], bool] = no_weight_decay):
        super().__init__(model, lr, betas, eps, weight_decay, False, no_decay)

    def step(self) -> None:
        """Update every parameter in place, in Google's order of operations."""
        self._check_buffers()
        lr = self.current_lr
        self.step_count += 1
        for block in self._blocks():
            size = block.stop - block.start
            update, tmp = self._scratch[0, :size], self._scratch[1, :size]
            param = self.flat_params[block]
            self._update_moments(block, tmp)
            np.sqrt(self.flat_exp_avg_sq[block], out=update)
            update += self.eps
            np.divide(self.flat_exp_avg[block], update, out=update)  # m / (sqrt(v) + eps)
            decayed = max(0, min(size, self._num_decay - block.start))  # the decay group
            if self.weight_decay and decayed:
                np.multiply(param[:decayed], self.weight_decay, out=tmp[:decayed])
                update[:decayed] += tmp[:decayed]  # + weight_decay * p
            update *= lr
            param -= update


OPTIMIZERS = {"adamw": AdamW, "adam_weight_decay": AdamWeightDecay}


def make_optimizer(name: str, model, **kwargs) -> AdamW:
    """Build an optimizer by name.

    Inputs: name, "adamw" (torch.optim.AdamW) or "adam_weight_decay" (Google BERT); model and
    keyword arguments as for that class.
    Outputs: the optimizer.
    """
    if name not in OPTIMIZERS:
        raise ValueError(f"name must be one of {tuple(OPTIMIZERS)}, got {name!r}")
    return OPTIMIZERS[name](model, **kwargs)


# ------------------------------------------------------------------------------------------
# Gradient clipping
# ------------------------------------------------------------------------------------------


def _sum_of_squares(array: np.ndarray) -> float:
    # Summed in float64 (as torch does on CPU): float32 sums of millions of squares lose
    # digits, and squares above 3.4e38 would overflow.
    flat = array.reshape(-1)
    return float(np.einsum("i,i->", flat, flat, dtype=np.float64))


def clip_grad_norm(grads, max_norm: float = 1.0) -> float:
    """Scale all gradients in place so that their global L2 norm is at most ``max_norm``.

    torch.nn.utils.clip_grad_norm_'s rule: with ``total`` the L2 norm of all gradients
    concatenated, multiply every gradient by ``min(1, max_norm / (total + 1e-6))``.

    Inputs: grads, the gradients: an optimizer (its flat gradient buffer, so the norm is one
    dot product), a model with ``named_gradients()``, or a dict name -> array; max_norm, > 0.
    Outputs: total, the norm before clipping (float).
    """
    max_norm = check_real("max_norm", max_norm, 0, above=True)
    if isinstance(grads, AdamW):
        named, buffers = grads._grads, [grads.flat_grads]
    else:
        named = dict(grads.named_gradients()) if hasattr(grads, "named_gradients") else grads
        if not isinstance(named, dict):
            raise TypeError(f"grads must be an optimizer, a model or a dict name -> array, "
                            f"got {type(grads).__name__}")
        for name, grad in named.items():
            if not isinstance(grad, np.ndarray) or not np.issubdtype(grad.dtype, np.floating):
                raise TypeError(f"gradient {name!r} must be a floating-point numpy array, got "
                                f"{type(grad).__name__} {getattr(grad, 'dtype', '')}")
        buffers = list(named.values())
    total = math.sqrt(sum(_sum_of_squares(buffer) for buffer in buffers))
    if not math.isfinite(total):
        bad = next((name for name, grad in named.items()
                    if not math.isfinite(_sum_of_squares(grad))), "(their sum overflows)")
        raise ValueError(f"gradients must be finite to be clipped, got NaN or inf in "
                         f"gradient {bad!r}")
    coef = max_norm / (total + 1e-6)
    if coef < 1.0:
        for buffer in buffers:
            buffer *= coef
    return total
