"""LoRA (Hu et al. 2021): fine-tune a frozen model through low-rank updates of its Linears.

A Linear y = x W^T + b with W (out, in) gets an adapter of rank r:

    y = x W^T + b + (alpha / r) * dropout(x) A^T B^T        A (r, in), B (out, r)

W and b stay frozen (their gradients are never computed); only A and B train, r (in + out)
numbers instead of in * out. B starts at zero, so the adapted model starts as the
pretrained one, and the first step's gradient of A, (alpha / r) B^T dout ..., is exactly
zero: only B moves at first. ``merge`` folds (alpha / r) B A into W for inference at no
extra cost; ``unmerge`` takes it out again. Names follow peft's (``query.base_layer.weight``,
``query.lora_A.weight``, ``query.lora_B.weight``; peft adds the adapter's name, ``default``).
See docs/descendants.md.

Dimension legend: B batch, T sequence length, r rank; in / out the Linear's widths.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import NamedTuple

import numpy as np

from minibert import functional as F
from minibert.checks import check_int, check_probability, check_real
from minibert.layers import Linear, Module

__all__ = ["LoRALinear", "apply_lora", "merge_lora", "lora_trainable", "DEFAULT_TARGETS"]

DEFAULT_TARGETS = ("query", "value")  # the attention projections Hu et al. adapt (section 7.1)


class LoRACache(NamedTuple):
    dropout: F.DropoutCache | None  # None when dropout was off


class LoRALinear(Module):
    """A frozen ``Linear`` (``base_layer``) plus a trainable low-rank update (lora_A, lora_B).

    Inputs: base, the Linear to adapt (its arrays are kept, not copied); r, the rank, in
    [1, min(in, out)]; alpha > 0, the update is scaled by alpha / r; dropout in [0, 1),
    applied to the adapter's input in training mode; rng, draws A (Kaiming-uniform, as
    peft) and the dropout masks.
    """

    def __init__(self, base: Linear, r: int, alpha: float, dropout: float = 0.0,
                 rng: np.random.Generator | None = None) -> None:
        super().__init__()
        if not isinstance(base, Linear):
            raise TypeError(f"base must be a minibert Linear, got {type(base).__name__}")
        out_features, in_features = base.params["weight"].shape
        largest = min(in_features, out_features)
        if not isinstance(r, (int, np.integer)) or isinstance(r, bool) or not 1 <= r <= largest:
            raise ValueError(f"r (the LoRA rank) must be an integer in [1, min(in, out) = "
                             f"{largest}] for a Linear of shape ({out_features}, {in_features}), "
                             f"got {r!r}")
        self.r = int(r)
        self.alpha = check_real("alpha", alpha, 0, above=True)
        self.dropout_p = check_probability("dropout", dropout, open_at_one=True)
        self.scaling = self.alpha / self.r
        self.rng = rng if rng is not None else np.random.default_rng(0)
        dtype = base.params["weight"].dtype
        self.base_layer = base
        self.lora_A = Linear(in_features, self.r, self.rng, bias=False, dtype=dtype)
        self.lora_B = Linear(self.r, out_features, self.rng, bias=False, dtype=dtype)
        bound = 1.0 / math.sqrt(in_features)  # kaiming_uniform_(a=sqrt(5)), peft's choice
        self.lora_A.params["weight"][...] = self.rng.uniform(-bound, bound, (self.r, in_features))
        self.lora_B.params["weight"][...] = 0.0
        self.merged = False

    def delta_weight(self) -> np.ndarray:
        """The update the adapter adds to W: (alpha / r) B A, shape (out, in)."""
        return self.scaling * (self.lora_B.params["weight"] @ self.lora_A.params["weight"])

    def merge(self) -> None:
        """W += (alpha / r) B A: the forward then costs what the plain Linear costs."""
        if not self.merged:
            self.base_layer.params["weight"] += self.delta_weight()
            self.merged = True

    def unmerge(self) -> None:
        """W -= (alpha / r) B A: back to the frozen weight and a separate adapter."""
        if self.merged:
            self.base_layer.params["weight"] -= self.delta_weight()
            self.merged = False

    def check_unmerged(self) -> None:
        """Refuse a backward through a merged adapter (its update is inside W: nothing trains)."""
        if self.merged:
            raise RuntimeError("backward() through a merged adapter would train nothing; "
                               "call unmerge() before training")

    def merged_parameters(self) -> tuple[np.ndarray, np.ndarray | None]:
        """(W + (alpha / r) B A (out, in), b (out,)): the one weight and bias that compute what
        this adapter computes, for a forward that multiplies by the weight itself
        (``BertLayer``'s page). W itself is left alone (unlike ``merge``). Exact when the
        adapter's dropout is off; a dropout mask that differs per row has no single weight."""
        if not self.merged and self.training and self.dropout_p > 0:
            raise ValueError(f"an adapter with dropout={self.dropout_p} in training mode has no "
                             f"merged weight (its dropout differs per row); use dropout=0.0 "
                             f"(peft's default) inside a block that runs the page "
                             f"(BERT's, ALBERT's, DistilBERT's), or eval()")
        weight, bias = self.base_layer.params["weight"], self.base_layer.params.get("bias")
        return (weight if self.merged else weight + self.delta_weight()), bias

    def merged_backward(self, dweight: np.ndarray) -> None:
        """The gradient of the merged weight, dweight (out, in) -> lora_A's and lora_B's
        (added). forward: W' = W + s B A, s = alpha / r, so dA = s B^T dW', dB = s dW' A^T;
        W and b are frozen: their gradients are not computed."""
        self.check_unmerged()
        self.lora_A.grads["weight"] += self.scaling * (self.lora_B.params["weight"].T @ dweight)
        self.lora_B.grads["weight"] += self.scaling * (dweight @ self.lora_A.params["weight"].T)

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (..., in) -> (..., out)."""
        weight, bias = self.base_layer.params["weight"], self.base_layer.params.get("bias")
        out, _ = F.linear_forward(x, weight, bias)  # (..., out), frozen: nothing kept
        if self.merged:
            self.cache = None
            return out
        dropout_cache = None
        if self.training and self.dropout_p > 0:
            x, dropout_cache = F.dropout_forward(x, self.dropout_p, self.rng)
        update = self.lora_B(self.lora_A(x))  # (..., out)
        self.cache = LoRACache(dropout_cache)
        return out + self.scaling * update

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (..., out) -> dx (..., in); adds into lora_A's and lora_B's gradients only."""
        self.check_unmerged()
        # forward: x @ W^T + b with W and b frozen: their gradients are not computed
        dx = dout @ self.base_layer.params["weight"]  # (..., in)
        # forward: scaling * lora_B(lora_A(dropout(x)))
        d_adapter_input = self.lora_A.backward(self.lora_B.backward(self.scaling * dout))
        if self.cache.dropout is not None:
            d_adapter_input = F.dropout_backward(d_adapter_input, self.cache.dropout)
        return dx + d_adapter_input


def _linears(model: Module, targets: Iterable[str]):
    """(parent, attribute, dotted name) of every Linear whose attribute name is a target."""
    targets = set(targets)
    for name, module in list(model.named_modules()):
        if isinstance(module, LoRALinear):
            continue
        for attribute, child in list(module._modules.items()):
            if attribute in targets and isinstance(child, Linear):
                yield module, attribute, f"{name}.{attribute}" if name else attribute


def apply_lora(model: Module, r: int, alpha: float = 16.0, dropout: float = 0.0,
               target_modules: Iterable[str] = DEFAULT_TARGETS, seed: int = 0) -> list[str]:
    """Wrap every Linear named in ``target_modules`` (e.g. "query", "value") in a LoRALinear.

    The model is changed in place; returns the dotted names of the adapted Linears. Each
    adapter draws its A from its own stream of ``seed``.
    """
    seed = check_int("seed", seed, minimum=0)
    found = list(_linears(model, target_modules))
    if not found:
        raise ValueError(f"target_modules {sorted(target_modules)} name no Linear of "
                         f"{type(model).__name__}")
    streams = np.random.SeedSequence(seed).spawn(len(found))
    for (parent, attribute, _), stream in zip(found, streams, strict=True):
        adapter = LoRALinear(getattr(parent, attribute), r, alpha, dropout,
                             np.random.default_rng(stream))
        adapter.train(parent.training)
        setattr(parent, attribute, adapter)
    return [name for _, _, name in found]


def merge_lora(model: Module) -> int:
    """Fold every adapter into its Linear and put the plain Linear back (peft's
    ``merge_and_unload``): the model has its original names and size again. Returns how
    many adapters were merged."""
    count = 0
    for _, module in list(model.named_modules()):
        for attribute, child in list(module._modules.items()):
            if isinstance(child, LoRALinear):
                child.merge()
                setattr(module, attribute, child.base_layer)
                count += 1
    return count


class _Trainable(Module):
    """The modules that train, under their names in the model (for the optimizer)."""

    def __init__(self, modules: dict[str, Module]) -> None:
        super().__init__()
        for name, module in modules.items():
            setattr(self, name, module)


def lora_trainable(model: Module, also: Iterable[str] = ()) -> Module:
    """A Module holding only what trains: every adapter's lora_A and lora_B, and the model's
    modules named in ``also`` (e.g. a classifier head). Give it to the optimizer: the
    parameters are the model's own arrays under the model's names, and nothing else of the
    model is updated."""
    modules = {}
    for name, module in model.named_modules():
        if isinstance(module, LoRALinear):
            modules[f"{name}.lora_A"] = module.lora_A
            modules[f"{name}.lora_B"] = module.lora_B
    if not modules:
        raise ValueError(f"{type(model).__name__} has no LoRA adapter; call apply_lora first")
    named = dict(model.named_modules())
    for name in also:
        if name not in named:
            raise ValueError(f"also names {name!r}, which is not a module of "
                             f"{type(model).__name__}")
        modules[name] = named[name]
    return _Trainable(modules)
