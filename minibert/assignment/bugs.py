"""The bug-hunting lab: a tiny masked-language model with planted bugs to find and fix.

The bugs are mistakes public from-scratch projects made; the package knows them only by
number (``BUG_IDS``). ``grade_bug`` checks one bug, with the file's other functions replaced
by minibert's, so each fix counts on its own, and says only "fixed" or "still there". The
lecturer's list (what each bug is, where, and its fix) and the fixed file are instructor
material: ``instructor/bugs_key.py`` in the repository, never in the installed package.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import numpy as np

from minibert import functional as F
from minibert.gradcheck import numerical_gradient, rel_error

__all__ = ["BUG_COUNT", "BUG_IDS", "LAB_FILE", "LAB_README", "buggy_source", "grade_bug"]

LAB_FILE = "buggy_bert.py"

_SOURCE = '''"""A tiny masked-language model with six planted bugs.

Embedding, LayerNorm, one attention head with a residual, a decoder tied to the embedding
table, cross-entropy.

Find each with the tools of the course (a gradient check, a padding invariance, a
comparison with minibert.functional) and fix it where it is. Run this file to see the
whole model's gradient check: ``python buggy_bert.py``.
Dimension legend: B batch, T sequence length, H hidden size, V vocabulary size.
"""

import numpy as np

from minibert import functional as F


def attention_forward(q, k, v, mask=None):
    """One head of attention: q, k, v (B, 1, T, H); mask (B, 1, 1, T), 1 = real token."""
    scale = 1.0
    scores = (q @ k.swapaxes(-1, -2)) * scale  # (B, 1, T, T)
    if mask is not None:
        scores = np.where(mask == 0, scores, -np.inf)
    probs, _ = F.softmax_forward(scores, axis=-1)  # (B, 1, T, T)
    context = probs @ v  # (B, 1, T, H)
    return context, F.AttentionCache(q, k, v, scale, probs, None, probs)


def attention_backward(dout, cache):
    """Returns dq, dk, dv (B, 1, T, H)."""
    return F.attention_backward(dout, cache)


def cross_entropy_forward(logits, labels, ignore_index=-100):
    """Mean negative log-likelihood over the labels that are not ignore_index."""
    valid = labels != ignore_index
    count = int(valid.sum())
    shifted = logits - logits.max(axis=-1, keepdims=True)
    log_probs = shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))  # (..., V)
    safe_labels = np.where(valid, labels, 0)
    picked = np.take_along_axis(log_probs, labels[..., None], axis=-1)[..., 0]
    loss = -picked.sum() / max(count, 1)
    return loss, F.CrossEntropyCache(log_probs, safe_labels, valid, count)


def embedding_backward(dout, cache):
    """Returns dweight (V, H): each looked-up row receives its rows of dout."""
    dweight = np.zeros(cache.weight_shape, dtype=cache.dtype)
    dweight[cache.ids.reshape(-1)] += dout.reshape(-1, cache.weight_shape[1])
    return dweight


def layernorm_backward(dout, cache):
    """Returns dx (..., H), dweight (H,), dbias (H,)."""
    x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
    axes = tuple(range(dout.ndim - 1))
    dbias = dout.sum(axis=axes)
    dweight = (dout * x_hat).sum(axis=axes)
    dx_hat = dout * weight
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True))
    return dx, dweight, dbias


class TinyMaskedLM:
    """ids (B, T) -> logits (B, T, V); the decoder's weight is the embedding table."""

    def __init__(self, vocab_size=120, hidden_size=6, seed=0):
        rng = np.random.default_rng(seed)
        self.params = {
            "word_embeddings": rng.standard_normal((vocab_size, hidden_size)),
            "LayerNorm.weight": 1.0 + 0.3 * rng.standard_normal(hidden_size),
            "LayerNorm.bias": 0.3 * rng.standard_normal(hidden_size),
            "decoder.bias": 0.3 * rng.standard_normal(vocab_size),
        }
        self.grads = {name: np.zeros_like(value) for name, value in self.params.items()}

    def loss(self, ids, attention_mask, labels):
        """Forward pass; returns the mean cross-entropy over the labels that are not -100."""
        p = self.params
        embedded, self.embedding = F.embedding_forward(ids, p["word_embeddings"])  # (B, T, H)
        normed, self.layernorm = F.layernorm_forward(embedded, p["LayerNorm.weight"],
                                                     p["LayerNorm.bias"])  # (B, T, H)
        heads = normed[:, None]  # (B, 1, T, H)
        context, self.attention = attention_forward(heads, heads, heads,
                                                    attention_mask[:, None, None, :])
        hidden = normed + context[:, 0]  # (B, T, H) residual
        logits, self.decoder = F.linear_forward(hidden, p["word_embeddings"], p["decoder.bias"])
        loss, self.cross_entropy = cross_entropy_forward(logits, labels)
        return loss

    def backward(self):
        """Adds the gradient of the last loss into self.grads."""
        dlogits = F.cross_entropy_backward(1.0, self.cross_entropy)  # (B, T, V)
        dhidden, dtable, dbias = F.linear_backward(dlogits, self.decoder)
        self.grads["word_embeddings"] += dtable
        self.grads["decoder.bias"] += dbias
        dq, dk, dv = attention_backward(dhidden[:, None], self.attention)
        dnormed = dhidden + (dq + dk + dv)[:, 0]  # (B, T, H)
        dembedded, dweight, dbias = layernorm_backward(dnormed, self.layernorm)
        self.grads["LayerNorm.weight"] += dweight
        self.grads["LayerNorm.bias"] += dbias
        self.grads["word_embeddings"] = embedding_backward(dembedded, self.embedding)

    def zero_grad(self):
        for grad in self.grads.values():
            grad.fill(0.0)


if __name__ == "__main__":
    from minibert.gradcheck import numerical_gradient, rel_error

    rng = np.random.default_rng(0)
    model = TinyMaskedLM()
    ids = rng.integers(0, 120, size=(2, 5))
    ids[1, 3] = ids[0, 1]  # a repeated id
    mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])
    labels = np.where(mask == 1, ids, -100)
    model.zero_grad()
    model.loss(ids, mask, labels)
    model.backward()
    for name, value in model.params.items():
        numeric = numerical_gradient(lambda _p: model.loss(ids, mask, labels), value, 1.0)
        print(f"{name:18s} rel_error {rel_error(model.grads[name], numeric):.1e}")
'''


BUG_COUNT = 6  # the lab's planted bugs, graded as bug 1 ... bug 6
BUG_IDS: tuple[str, ...] = tuple(f"bug{k}" for k in range(1, BUG_COUNT + 1))

LAB_README = f"""# Lab: hunting bugs in a tiny BERT-like model

`{LAB_FILE}` holds a small masked-language model (embedding, LayerNorm, one attention
head, a decoder tied to the embedding table, cross-entropy) with {BUG_COUNT} planted bugs,
each one a mistake that public from-scratch projects have made. Find them with the tools
of the course and fix each where it is:

- a gradient check (`minibert.gradcheck.check_function`, or `python {LAB_FILE}`, which
  checks the whole model's gradients);
- an invariance: padding must change nothing;
- a comparison with the reference pairs in `minibert.functional`.

    minibert assignment grade .     # bug 1 ... bug {BUG_COUNT}: "still there" or "fixed"

The report numbers the bugs and says only whether each is still there: where they are is
the hunt. Each bug is graded on its own: fixing one never depends on fixing another.
"""


def buggy_source() -> str:
    """The lab file as the student receives it."""
    return _SOURCE


def _load(folder: Path):
    path = folder / LAB_FILE
    spec = importlib.util.spec_from_file_location(f"_minibert_lab_{abs(hash(str(path)))}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _reference_module(module) -> None:
    """Replace every function the model calls with minibert's (fixed) version."""
    module.attention_forward = lambda q, k, v, mask=None: F.attention_forward(q, k, v, mask)
    module.cross_entropy_forward = F.cross_entropy_forward
    module.embedding_backward = F.embedding_backward
    module.layernorm_backward = F.layernorm_backward


def _check(module, name: str, rng: np.random.Generator) -> bool:
    if name == "bug1":
        q, k, v = (rng.standard_normal((2, 1, 5, 4)) for _ in range(3))
        mask = np.array([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]])[:, None, None, :]
        probs = module.attention_forward(q, k, v, mask)[1].attention_probs
        hidden = np.broadcast_to(mask == 0, probs.shape)
        return bool(np.all(probs[hidden] == 0) and np.allclose(probs.sum(-1), 1.0))
    if name == "bug3":
        q, k, v = (rng.standard_normal((2, 1, 5, 4)) for _ in range(3))
        return rel_error(module.attention_forward(q, k, v)[0],
                         F.attention_forward(q, k, v)[0]) < 1e-12
    if name == "bug2":
        logits = rng.standard_normal((2, 5, 120))
        labels = rng.integers(0, 120, size=(2, 5))
        labels[:, ::2] = -100
        got = float(module.cross_entropy_forward(logits, labels)[0])
        return abs(got - float(F.cross_entropy_forward(logits, labels)[0])) < 1e-12 * abs(got)
    if name == "bug4":
        ids = np.array([[1, 2, 1], [3, 1, 2]])
        _, cache = F.embedding_forward(ids, rng.standard_normal((5, 3)))
        dout = rng.standard_normal((2, 3, 3))
        return rel_error(module.embedding_backward(dout, cache),
                         F.embedding_backward(dout, cache)) < 1e-12
    if name == "bug6":
        x = rng.standard_normal((3, 6))
        _, cache = F.layernorm_forward(x, 1.0 + 0.3 * rng.standard_normal(6),
                                       rng.standard_normal(6))
        dout = rng.standard_normal((3, 6))
        return rel_error(module.layernorm_backward(dout, cache)[0],
                         F.layernorm_backward(dout, cache)[0]) < 1e-10
    # bug5: the model's table gradient against finite differences
    _reference_module(module)
    model = module.TinyMaskedLM(vocab_size=9, hidden_size=4, seed=int(rng.integers(1000)))
    ids = np.array([[1, 2, 3, 1], [4, 2, 5, 0]])
    mask = np.array([[1, 1, 1, 1], [1, 1, 1, 0]])
    labels = np.where(mask == 1, ids, -100)
    model.zero_grad()
    model.loss(ids, mask, labels)
    model.backward()
    table = model.params["word_embeddings"]
    numeric = numerical_gradient(lambda _t: model.loss(ids, mask, labels), table, 1.0)
    return rel_error(model.grads["word_embeddings"], numeric) < 1e-7


def grade_bug(folder: Path, name: str) -> tuple[bool, str]:
    """(fixed, one-line message) for the bug called ``name`` in the lab at ``folder``.

    The message is "fixed" or "still there": it never says where a bug is or what it
    breaks (that is the lecturer's list, ``instructor_notes``).
    """
    if name not in BUG_IDS:
        raise ValueError(f"bug must be one of {list(BUG_IDS)}, got {name!r}")
    try:
        module = _load(Path(folder))
        fixed = _check(module, name, np.random.default_rng(sum(map(ord, name))))
    except SyntaxError as error:
        return False, f"{LAB_FILE} line {error.lineno}: SyntaxError: {error.msg}"
    except Exception as error:  # the lab's code may raise anything: that bug is not fixed
        return False, f"still there (its check raised {type(error).__name__})"
    return (True, "fixed") if fixed else (False, "still there")
