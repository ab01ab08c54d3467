"""A small Module base and thin stateful layers that call the pairs in ``functional``.

A Module owns its parameters and their gradient buffers (dicts keyed by the HF name of
the attribute, e.g. ``"weight"``), its child modules (registered by assigning them as
attributes, so names follow the attribute path like HF's ``bert.encoder.layer.0...``),
and the cache of its last forward pass. The math lives in ``functional``; a layer here
only stores what the functions return and adds gradients into its buffers.

One rule for what a module keeps between its forward and its backward: ``self.cache``,
a named tuple (the pair's own cache for these layers, e.g. ``functional.LinearCache``),
None before the first forward.

Each layer calls its pair by reference, ``F.layernorm_forward(...)``: the attribute is
looked up in ``minibert.functional`` at each call, so a function put in its place there
(a student's, in the assignment) is what the model runs.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size,
I intermediate size, V vocabulary size.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from minibert import functional as F
from minibert.checks import IGNORE_INDEX

__all__ = [
    "Module", "ModuleList", "Linear", "TiedLinear", "Embedding", "LayerNorm",
    "GELU", "ReLU", "Tanh", "Softmax", "Dropout", "ScaledDotProductAttention",
    "CrossEntropyLoss", "get_activation", "ACTIVATIONS", "split_heads", "merge_heads",
]


class Module:
    """Base class: parameters, gradients, children, train/eval mode.

    Subclasses call ``self.add_parameter(name, array)`` for each parameter, assign child
    modules as attributes, and implement ``forward`` and ``backward``.
    """

    def __init__(self) -> None:
        object.__setattr__(self, "params", {})  # name -> array (updated in place)
        object.__setattr__(self, "grads", {})  # name -> gradient buffer, same shape/dtype
        object.__setattr__(self, "_modules", {})  # attribute name -> child Module
        object.__setattr__(self, "training", True)
        object.__setattr__(self, "cache", None)  # what the last forward kept for backward

    def __setattr__(self, name: str, value) -> None:
        if isinstance(value, Module):
            self._modules[name] = value
        elif name in self._modules:
            del self._modules[name]
        object.__setattr__(self, name, value)

    def add_parameter(self, name: str, value: np.ndarray) -> np.ndarray:
        """Register a parameter and a zeroed gradient buffer for it; returns the array."""
        if not isinstance(value, np.ndarray) or value.dtype not in (np.float32, np.float64):
            raise TypeError(f"parameter {name!r} must be a float32/float64 numpy array, "
                            f"got {type(value).__name__} {getattr(value, 'dtype', '')}")
        self.params[name] = value
        self.grads[name] = np.zeros_like(value)
        return value

    @property
    def __call__(self):
        """Calling a module runs its ``forward``: ``layer(x)`` is ``layer.forward(x)``.

        A property that hands over the bound method, so no extra frame stands between a
        model's call and its forward in a debugger or a traceback.
        """
        return self.forward

    def forward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError

    def backward(self, *args, **kwargs):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- traversal ---------------------------------------------------------------------
    def named_modules(self, prefix: str = "") -> Iterator[tuple[str, Module]]:
        """Yield (dotted name, module) for this module and every descendant."""
        yield prefix, self
        for name, child in self._modules.items():
            yield from child.named_modules(f"{prefix}.{name}" if prefix else name)

    def _named_parameters_and_gradients(self, prefix: str = ""):
        """Yield (HF name, array, gradient buffer) for every parameter, each array once
        (a tied array is listed under the first module that holds it)."""
        seen: set[int] = set()
        for module_name, module in self.named_modules(prefix):
            for name, value in module.params.items():
                if id(value) not in seen:
                    seen.add(id(value))
                    full_name = f"{module_name}.{name}" if module_name else name
                    yield full_name, value, module.grads[name]

    def named_parameters(self, prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
        """Yield (HF name, array) for every parameter, each array once."""
        return ((name, value) for name, value, _ in self._named_parameters_and_gradients(prefix))

    def named_gradients(self, prefix: str = "") -> Iterator[tuple[str, np.ndarray]]:
        """Yield (HF name, gradient buffer), with the same names as ``named_parameters``."""
        return ((name, grad) for name, _, grad in self._named_parameters_and_gradients(prefix))

    def parameters(self) -> list[np.ndarray]:
        return [value for _, value in self.named_parameters()]

    def num_parameters(self) -> int:
        """Number of scalar parameters, tied arrays counted once."""
        return int(sum(value.size for _, value in self.named_parameters()))

    def zero_grad(self) -> None:
        """Set every gradient buffer to zero (in place, so references stay valid)."""
        for module in self._all_modules():
            for grad in module.grads.values():
                grad.fill(0)

    def train(self, mode: bool = True) -> Module:
        """Switch dropout on (``mode=True``) or off for this module and its children."""
        for module in self._all_modules():
            object.__setattr__(module, "training", bool(mode))
        return self

    def eval(self) -> Module:
        """Switch dropout off: the model becomes deterministic."""
        return self.train(False)

    def _all_modules(self) -> Iterator[Module]:
        return (module for _, module in self.named_modules())

    # -- state dict ------------------------------------------------------------------------
    def _tied_aliases(self) -> dict[str, str]:
        """Alias key -> canonical key for arrays that HF lists under two names."""
        return {}

    def state_dict(self) -> dict[str, np.ndarray]:
        """Every parameter by HF name, plus the tied alias keys (the same arrays)."""
        state = dict(self.named_parameters())
        for alias, canonical in self._tied_aliases().items():
            state[alias] = state[canonical]
        return state

    def load_state_dict(self, state, strict: bool = True):
        """Copy arrays into the parameters in place, cast to the model's dtype.

        Alias keys are accepted. With strict=True, missing or unexpected keys raise
        ValueError listing them; a shape mismatch always raises. Nothing is modified
        unless every check passes. Returns (missing, unexpected) lists of keys.
        """
        if not hasattr(state, "items"):
            raise TypeError(f"state must be a mapping of name -> array, "
                            f"got {type(state).__name__}")
        aliases = self._tied_aliases()
        params = dict(self.named_parameters())
        incoming = {}
        for key, value in state.items():
            canonical = aliases.get(key, key)
            if key in aliases and canonical in state:
                continue  # the canonical key provides this array
            incoming[canonical] = value
        missing = sorted(set(params) - set(incoming))
        unexpected = sorted(set(incoming) - set(params))
        if strict and (missing or unexpected):
            parts = [f"missing keys: {missing}"] if missing else []
            parts += [f"unexpected keys: {unexpected}"] if unexpected else []
            raise ValueError("load_state_dict(strict=True) failed; " + "; ".join(parts))
        for key, value in incoming.items():
            if key not in params:
                continue
            array = np.asarray(value)
            if array.shape != params[key].shape:
                raise ValueError(f"state[{key!r}] has shape {array.shape}, but the model's "
                                 f"parameter has shape {params[key].shape}")
            if not np.issubdtype(array.dtype, np.floating):
                raise TypeError(f"state[{key!r}] must be a float array, got dtype {array.dtype}")
        for key, value in incoming.items():
            if key in params:
                np.copyto(params[key], np.asarray(value), casting="same_kind")
        return missing, unexpected

    @property
    def dtype(self) -> np.dtype:
        for _, value in self.named_parameters():
            return value.dtype
        return np.dtype(np.float32)


class ModuleList(Module):
    """Children named "0", "1", ... as HF's ``nn.ModuleList`` (``encoder.layer.0``)."""

    def __init__(self, modules) -> None:
        super().__init__()
        for index, module in enumerate(modules):
            setattr(self, str(index), module)

    def __len__(self) -> int:
        return len(self._modules)

    def __getitem__(self, index: int) -> Module:
        return self._modules[str(index % len(self))]

    def __iter__(self):
        return iter(self._modules.values())


def _normal(rng: np.random.Generator, shape, std: float, dtype) -> np.ndarray:
    return (rng.standard_normal(shape) * std).astype(dtype)


class Linear(Module):
    """y = x @ weight.T + bias, weight (out, in) as in PyTorch/HF checkpoints."""

    def __init__(self, in_features: int, out_features: int, rng: np.random.Generator,
                 std: float = 0.02, bias: bool = True, dtype=np.float32) -> None:
        super().__init__()
        self.add_parameter("weight", _normal(rng, (out_features, in_features), std, dtype))
        if bias:
            self.add_parameter("bias", np.zeros(out_features, dtype=dtype))

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (..., in) -> (..., out)."""
        out, self.cache = F.linear_forward(x, self.params["weight"], self.params.get("bias"))
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        """dout (..., out) -> dx (..., in); adds into the weight and bias gradients."""
        dx, dweight, dbias = F.linear_backward(dout, self.cache)
        self.grads["weight"] += dweight
        if dbias is not None:
            self.grads["bias"] += dbias
        return dx


class TiedLinear(Module):
    """y = x @ table.T + bias, the table an Embedding's weight (V, in): the MLM decoder.

    The table is not a child (it is listed once, under the embeddings); the backward adds
    its gradient into the table's own buffer, where the lookup's gradient also goes. The
    bias belongs to the head that holds this layer (HF names it ``cls.predictions.bias``).
    """

    def __init__(self, embedding: Embedding) -> None:
        super().__init__()
        object.__setattr__(self, "embedding", embedding)  # tied, not a child

    def forward(self, x: np.ndarray, bias: np.ndarray) -> np.ndarray:
        """x (..., in), bias (V,) -> logits (..., V)."""
        out, self.cache = F.linear_forward(x, self.embedding.params["weight"], bias)
        return out

    def backward(self, dout: np.ndarray):
        """dout (..., V) -> (dx (..., in), dbias (V,)); adds into the table's gradient."""
        dx, dweight, dbias = F.linear_backward(dout, self.cache)
        self.embedding.grads["weight"] += dweight  # tied: the two uses' gradients add
        return dx, dbias


def split_heads(x: np.ndarray, num_heads: int) -> np.ndarray:
    """(B, T, N*D) -> (B, N, T, D): the hidden features cut into N heads of D (a view)."""
    batch, seq_len, hidden = x.shape
    return x.reshape(batch, seq_len, num_heads, hidden // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x: np.ndarray) -> np.ndarray:
    """(B, N, T, D) -> (B, T, N*D): the heads side by side again."""
    batch, heads, seq_len, head_size = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq_len, heads * head_size)


class ScaledDotProductAttention(Module):
    """softmax(q k^T / sqrt(D), masked) with dropout, times v: ``functional.attention_*``."""

    def __init__(self, dropout_p: float, rng: np.random.Generator) -> None:
        super().__init__()
        self.dropout_p = dropout_p
        self.rng = rng

    @property
    def attention_probs(self) -> np.ndarray | None:
        """(B, N, T, T) probabilities of the last forward (before dropout), for heatmaps."""
        return None if self.cache is None else self.cache.attention_probs

    def forward(self, q: np.ndarray, k: np.ndarray, v: np.ndarray, mask) -> np.ndarray:
        """q, k, v (B, N, T, D), mask broadcastable to (B, N, T, T) or None -> (B, N, T, D)."""
        context, self.cache = F.attention_forward(
            q, k, v, mask, dropout_p=self.dropout_p, rng=self.rng, training=self.training)
        return context

    def backward(self, dout: np.ndarray):
        """dout (B, N, T, D) -> (dq, dk, dv), each (B, N, T, D)."""
        return F.attention_backward(dout, self.cache)


class CrossEntropyLoss(Module):
    """Mean cross-entropy of logits (..., C) against int labels (...), as HF's loss_fct.

    Labels equal to ``ignore_index`` (-100 by default) are skipped; the QA head sets it to
    T, the value its ignored positions take.
    """

    def forward(self, logits: np.ndarray, labels, ignore_index: int = IGNORE_INDEX):
        """logits (..., C), labels int (...) -> the loss, a scalar of the logits' dtype."""
        loss, self.cache = F.cross_entropy_forward(logits, labels, ignore_index=ignore_index)
        return loss

    def backward(self, dloss: float = 1.0) -> np.ndarray:
        """d loss (a number) -> d logits (..., C)."""
        return F.cross_entropy_backward(dloss, self.cache)


class Embedding(Module):
    """A lookup table: ids (...) -> rows of weight (V, H).

    ``padding_idx`` (as ``torch.nn.Embedding``): that row starts at 0 and its gradient is
    left alone by the backward, so [PAD] stays the zero vector while the model trains.
    ``ids_name`` is what an error calls the ids this table looks up ("input_ids").
    """

    def __init__(self, num_embeddings: int, embedding_dim: int, rng: np.random.Generator,
                 std: float = 0.02, dtype=np.float32, padding_idx: int | None = None,
                 ids_name: str = "ids") -> None:
        super().__init__()
        weight = self.add_parameter("weight",
                                    _normal(rng, (num_embeddings, embedding_dim), std, dtype))
        self.padding_idx = padding_idx
        self.ids_name = ids_name
        if padding_idx is not None:
            weight[padding_idx] = 0.0

    def forward(self, ids) -> np.ndarray:
        """ids int (...) -> (..., H)."""
        out, self.cache = F.embedding_forward(ids, self.params["weight"], self.ids_name)
        return out

    def backward(self, dout: np.ndarray) -> None:
        """Adds dout's rows into the looked-up rows of the weight gradient. Ids get no gradient."""
        dweight = F.embedding_backward(dout, self.cache)  # (V, H)
        if self.padding_idx is not None:
            dweight[self.padding_idx] = 0.0
        self.grads["weight"] += dweight


class LayerNorm(Module):
    """LayerNorm over the last axis with learned scale ``weight`` and shift ``bias``."""

    def __init__(self, hidden_size: int, eps: float = 1e-12, dtype=np.float32) -> None:
        super().__init__()
        self.eps = eps
        self.add_parameter("weight", np.ones(hidden_size, dtype=dtype))
        self.add_parameter("bias", np.zeros(hidden_size, dtype=dtype))

    def forward(self, x: np.ndarray) -> np.ndarray:
        """x (..., H) -> (..., H)."""
        out, self.cache = F.layernorm_forward(x, self.params["weight"], self.params["bias"],
                                              self.eps)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        dx, dweight, dbias = F.layernorm_backward(dout, self.cache)
        self.grads["weight"] += dweight
        self.grads["bias"] += dbias
        return dx


class GELU(Module):
    """GELU, exact erf form (``approximate="none"``) or tanh form (``"tanh"``)."""

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        if approximate not in ("none", "tanh"):
            raise ValueError(f"approximate must be 'none' or 'tanh', got {approximate!r}")
        self.approximate = approximate

    def forward(self, x: np.ndarray) -> np.ndarray:
        out, self.cache = F.gelu_forward(x, self.approximate)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return F.gelu_backward(dout, self.cache)


class ReLU(Module):
    """max(x, 0)."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        out, self.cache = F.relu_forward(x)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return F.relu_backward(dout, self.cache)


class Tanh(Module):
    """tanh, the pooler's activation."""

    def forward(self, x: np.ndarray) -> np.ndarray:
        out, self.cache = F.tanh_forward(x)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return F.tanh_backward(dout, self.cache)


class Softmax(Module):
    """Softmax along ``axis``."""

    def __init__(self, axis: int = -1) -> None:
        super().__init__()
        self.axis = axis

    def forward(self, x: np.ndarray) -> np.ndarray:
        out, self.cache = F.softmax_forward(x, self.axis)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return F.softmax_backward(dout, self.cache)


class Dropout(Module):
    """Inverted dropout with its own seeded generator; the identity in eval mode."""

    def __init__(self, p: float, rng: np.random.Generator) -> None:
        super().__init__()
        self.p = F.check_dropout_p(p)
        self.rng = rng

    def forward(self, x: np.ndarray) -> np.ndarray:
        out, self.cache = F.dropout_forward(x, self.p, self.rng, self.training)
        return out

    def backward(self, dout: np.ndarray) -> np.ndarray:
        return F.dropout_backward(dout, self.cache)


ACTIVATIONS = {
    "gelu": lambda: GELU("none"),  # exact erf form, HF's default
    "gelu_new": lambda: GELU("tanh"),  # tanh form, as Google's BERT code later and OpenAI GPT
    "gelu_pytorch_tanh": lambda: GELU("tanh"),
    "relu": ReLU,
}


def get_activation(name: str) -> Module:
    """An activation module by its HF ``hidden_act`` name."""
    if name not in ACTIVATIONS:
        raise ValueError(f"hidden_act must be one of {sorted(ACTIVATIONS)}, got {name!r}")
    return ACTIVATIONS[name]()
