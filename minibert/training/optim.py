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
passes over the whole model instead of a dozen per array. The decay group comes first in
the buffer, so weight decay is one slice. The update itself is written once, as the
formulas read, in ``adamw_update`` and ``adam_weight_decay_update``: ``step()`` runs those
functions on 1 MiB blocks of the flat buffers (or on one worker's chunk of them, in data
parallelism), and a reader of them reads the code that trains. LayerNorm weights and all
biases get no weight decay (``no_weight_decay``), as in Google BERT.
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
    "adam_weight_decay_update",
    "adamw_reference",
    "adamw_update",
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
# The updates, as the formulas read: one function each, run by the optimizers
# ------------------------------------------------------------------------------------------


def update_moments(grad, exp_avg, exp_avg_sq, betas: tuple[float, float], tmp) -> None:
    """Adam's two running moments of the gradient, in place (both updates below start so):
    m = beta1 m + (1 - beta1) g and v = beta2 v + (1 - beta2) g^2; ``tmp`` is a working
    array like ``grad``."""
    beta1, beta2 = betas
    exp_avg *= beta1  # m = beta1 m + (1 - beta1) g
    exp_avg += np.multiply(grad, 1.0 - beta1, out=tmp)
    exp_avg_sq *= beta2  # v = beta2 v + (1 - beta2) g^2
    np.multiply(grad, grad, out=tmp)
    tmp *= 1.0 - beta2
    exp_avg_sq += tmp


def adamw_update(param, grad, exp_avg, exp_avg_sq, lr: float, step: int,
                 betas: tuple[float, float], eps: float, weight_decay: float,
                 bias_correction: bool = True, scratch: np.ndarray | None = None) -> None:
    """One AdamW update, in place, of arrays of one shape; ``step`` is t = 1, 2, ...

    The arrays are one parameter and its gradient and moments, or a slice of the flat
    buffers: ``AdamW.step`` calls this very function on blocks of them, so the optimizer
    that trains is the code a reader reads. Each line is one in-place pass; ``scratch``
    (an array like ``param``) is the one working array, allocated when not given. Scalars
    stay Python floats, so float32 arrays are updated in float32 arithmetic.
    """
    beta1, beta2 = betas
    tmp = np.empty_like(param) if scratch is None else scratch
    if weight_decay:
        param *= 1.0 - lr * weight_decay  # decoupled decay: p = p (1 - lr wd)
    update_moments(grad, exp_avg, exp_avg_sq, betas, tmp)
    step_size = lr
    np.sqrt(exp_avg_sq, out=tmp)
    if bias_correction:
        # m / (1 - beta1^t) and v / (1 - beta2^t) undo the bias towards the zero start;
        # folded into the step size and the denominator, so m and v are never copied.
        tmp /= math.sqrt(1.0 - beta2**step)
        step_size = lr / (1.0 - beta1**step)
    tmp += eps  # sqrt(v_hat) + eps
    np.divide(exp_avg, tmp, out=tmp)
    tmp *= step_size
    param -= tmp  # p = p - lr m_hat / (sqrt(v_hat) + eps)


def adam_weight_decay_update(param, grad, exp_avg, exp_avg_sq, lr: float,
                             betas: tuple[float, float], eps: float, weight_decay: float,
                             scratch: np.ndarray | None = None) -> None:
    """One Google BERT update, in place (``AdamWeightDecay.step`` runs this function).

    ``scratch``: two working arrays like ``param`` (shape (2, *param.shape)), or None.
    """
    if scratch is None:
        scratch = np.empty((2, *np.shape(param)), np.asarray(param).dtype)
    update, tmp = scratch[0], scratch[1]
    update_moments(grad, exp_avg, exp_avg_sq, betas, tmp)
    np.sqrt(exp_avg_sq, out=update)
    update += eps
    np.divide(exp_avg, update, out=update)  # m / (sqrt(v) + eps)
    if weight_decay:
        update += np.multiply(param, weight_decay, out=tmp)  # + weight_decay * p
    update *= lr
    param -= update  # p = p - lr * update


# The names the assignment's checks (and older notebooks) use: the same functions.
adamw_reference = adamw_update
adam_weight_decay_reference = adam_weight_decay_update


# ------------------------------------------------------------------------------------------
# One buffer for all parameters
# ------------------------------------------------------------------------------------------


def flatten_parameters(model, names: Sequence[str],
                       out: tuple[np.ndarray, np.ndarray] | None = None
                       ) -> tuple[np.ndarray, np.ndarray]:
    """Move the named parameters of ``model`` and their gradients into one flat buffer each.

    The buffers hold the arrays one after the other in the order of ``names``. Every
    ``module.params[...]`` and ``module.grads[...]`` entry of the model that held one of
    these arrays then holds a view of the buffer, with the array's shape and values; the
    holders of a tied array all get the same view, so it stays one array.
    Inputs: model, a minibert Module with floating-point parameters of one dtype; names,
    each name of ``model.named_parameters()`` once.
    out: (params, grads), two flat arrays (P,) of the parameters' dtype to use as the
    buffers, keeping the values they hold (the model takes them over: data-parallel
    workers share one buffer of weights this way); default: new buffers, the model's values.
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
    if out is None:
        flat_params, flat_grads = np.empty(total, dtype), np.empty(total, dtype)
    else:
        flat_params, flat_grads = out
        for flat in out:
            if not isinstance(flat, np.ndarray) or flat.shape != (total,) or flat.dtype != dtype:
                raise ValueError(f"out must hold two flat arrays of shape ({total},) and dtype "
                                 f"{dtype}, got {getattr(flat, 'shape', type(flat).__name__)} "
                                 f"{getattr(flat, 'dtype', '')}")
    moved = {}  # id(old array) -> its view in the buffer
    start = 0
    for name in names:
        for old, flat in ((params[name], flat_params), (grads[name], flat_grads)):
            view = flat[start:start + old.size].reshape(old.shape)
            if out is None:
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
        buffers: None, or flat arrays to hold the state instead of new ones, keeping their
            values: {"params", "grads", "exp_avg", "exp_avg_sq"}, each (P,) of the model's
            dtype (data-parallel workers map them from shared memory; the model's own
            weights are replaced by the buffer's).
    """

    _scratch_rows = 1  # working arrays one update needs
    _block = 1 << 18  # values per pass of the update: 1 MiB of float32, so the passes stay in cache

    def __init__(self, model, lr=1e-4, betas: tuple[float, float] = (0.9, 0.999),
                 eps: float = 1e-8, weight_decay: float = 0.01, bias_correction: bool = True,
                 no_decay: Callable[[str], bool] = no_weight_decay,
                 buffers: dict[str, np.ndarray] | None = None):
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
        if buffers is not None and (not isinstance(buffers, dict) or set(buffers) != {
                "params", "grads", "exp_avg", "exp_avg_sq"}):
            raise ValueError("buffers must be a dict with exactly 'params', 'grads', 'exp_avg' "
                             "and 'exp_avg_sq'")
        self.flat_params, self.flat_grads = flatten_parameters(
            model, list(layout), None if buffers is None else (buffers["params"],
                                                               buffers["grads"]))
        self._params = dict(model.named_parameters())  # the views the model must keep holding
        self._grads = dict(model.named_gradients())
        self._view_ids = {id(view) for views in (self._params, self._grads)
                          for view in views.values()}
        self._num_decay = sum(math.prod(layout[name]) for name in self.decay_names)
        self.step_count = 0
        if buffers is None:
            self.flat_exp_avg = np.zeros_like(self.flat_params)  # m
            self.flat_exp_avg_sq = np.zeros_like(self.flat_params)  # v
        else:
            for key in ("exp_avg", "exp_avg_sq"):
                if buffers[key].shape != self.flat_params.shape \
                        or buffers[key].dtype != self.flat_params.dtype:
                    raise ValueError(f"buffers[{key!r}] must be like buffers['params'] "
                                     f"{self.flat_params.shape} {self.flat_params.dtype}")
            self.flat_exp_avg, self.flat_exp_avg_sq = buffers["exp_avg"], buffers["exp_avg_sq"]
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

    def _blocks(self, start: int, stop: int):
        """(slice, decayed) pieces of flat[start:stop]: at most ``_block`` long, one group each.

        Blocks of 1 MiB (float32) keep each pass's operands in cache between passes; a
        block never straddles the decay and no-decay groups, so its decay is one number.
        """
        for low, high, decayed in ((start, min(stop, self._num_decay), True),
                                   (max(start, self._num_decay), stop, False)):
            for first in range(low, high, self._block):
                yield slice(first, min(first + self._block, high)), decayed

    def step(self, part: slice | None = None) -> None:
        """Update every parameter in place from its current gradient.

        ``part``: update only this slice of the flat buffers (a data-parallel worker's
        chunk, the ZeRO-1 split: see minibert.training.parallel); the step still counts once.
        """
        self._check_buffers()
        lr = self.current_lr
        self.step_count += 1
        start, stop = (0, self.flat_params.size) if part is None else (part.start, part.stop)
        for block, decayed in self._blocks(start, stop):
            self._update(block, lr, self.weight_decay if decayed else 0.0,
                         self._scratch[:, : block.stop - block.start])

    def _update(self, block: slice, lr: float, weight_decay: float,
                scratch: np.ndarray) -> None:
        adamw_update(self.flat_params[block], self.flat_grads[block], self.flat_exp_avg[block],
                     self.flat_exp_avg_sq[block], lr, self.step_count, self.betas, self.eps,
                     weight_decay, self.bias_correction, scratch[0])

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
                 no_decay: Callable[[str], bool] = no_weight_decay,
                 buffers: dict[str, np.ndarray] | None = None):
        super().__init__(model, lr, betas, eps, weight_decay, False, no_decay, buffers)

    def _update(self, block: slice, lr: float, weight_decay: float,
                scratch: np.ndarray) -> None:
        adam_weight_decay_update(self.flat_params[block], self.flat_grads[block],
                                 self.flat_exp_avg[block], self.flat_exp_avg_sq[block], lr,
                                 self.betas, self.eps, weight_decay, scratch)


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
