"""Similarity of code, renaming-proof: normalised tokens, then shared runs of them (MOSS-style).

``tokens(text)`` reads Python source with ``tokenize`` and keeps its shape only: comments,
strings (docstrings included) and blank lines go; every name that is not a keyword or an
attribute (``.sum``, ``.reshape``) becomes ``V``, so renaming a variable changes nothing.
``fingerprint`` is the set of runs of ``K`` consecutive tokens; ``containment(a, b)`` is the
share of ``b``'s runs found in ``a`` (1.0: all of ``b`` is in ``a``, whatever else ``a``
holds), ``similarity(a, b)`` the share of the smaller one's runs found in the other.

The grader uses it twice: each task file against minibert's own answer to that task
(``library_matches``, a flag for the lecturer), and in ``grade_all`` every pair of
submissions and each against the answer key (``pair_report``). Short functions (a few
lines that every correct answer writes alike) are never compared: see ``MIN_TOKENS``.
"""

from __future__ import annotations

import importlib
import inspect
import io
import keyword
import textwrap
import tokenize
from functools import cache

__all__ = ["K", "MIN_TOKENS", "LIBRARY_THRESHOLD", "PAIR_THRESHOLD", "LIBRARY_ANSWERS",
           "tokens", "fingerprint", "containment", "similarity", "library_matches", "warm"]

K = 6  # tokens per run
MIN_TOKENS = 60  # a function shorter than this is not compared: every answer looks alike
LIBRARY_THRESHOLD = 0.85  # share of minibert's answer found in a task file: flagged
PAIR_THRESHOLD = 0.9  # two submissions' files alike: reported

# task -> minibert's own answers to it ("module:function"), what a copy would come from
LIBRARY_ANSWERS: dict[str, tuple[str, ...]] = {
    "linear": ("minibert.functional:linear_backward",),
    "embedding": ("minibert.functional:embedding_backward",),
    "layernorm": ("minibert.functional:layernorm_backward",),
    "gelu": ("minibert.functional:gelu_backward",),
    "softmax": ("minibert.functional:softmax_backward",),
    "dropout": ("minibert.functional:dropout_backward",),
    "attention": ("minibert.functional:attention_backward",),
    "cross_entropy": ("minibert.functional:cross_entropy_backward",),
    "encoder_block": ("minibert.flat_layer:bert_layer_backward",),
    "model_gradcheck": ("minibert.gradcheck.check:numerical_gradient",),
    "adamw": ("minibert.training.optim:adamw_update", "minibert.training.optim:clip_grad_norm"),
    "masking": ("minibert.data.masking:mask_tokens",),
}


def tokens(text: str) -> list[str]:
    """The normalised tokens of Python source (``[]`` when it does not tokenize)."""
    out: list[str] = []
    previous = ""
    skip = (tokenize.COMMENT, tokenize.NL, tokenize.ENCODING, tokenize.ENDMARKER,
            tokenize.INDENT, tokenize.DEDENT, tokenize.STRING)
    try:
        for token in tokenize.generate_tokens(io.StringIO(text).readline):
            if token.type in skip:
                continue
            value = token.string
            if token.type == tokenize.NEWLINE:
                value = ";"
            elif token.type == tokenize.NAME and not keyword.iskeyword(value) \
                    and previous != ".":
                value = "V"
            out.append(value)
            previous = token.string
    except (tokenize.TokenError, IndentationError, SyntaxError, ValueError):
        return []
    return out


def fingerprint(text_or_tokens) -> frozenset:
    """The runs of ``K`` consecutive normalised tokens (hashed)."""
    words = tokens(text_or_tokens) if isinstance(text_or_tokens, str) else text_or_tokens
    return frozenset(hash(tuple(words[i:i + K])) for i in range(len(words) - K + 1))


def containment(a: frozenset, b: frozenset) -> float:
    """The share of ``b``'s runs that are in ``a`` (0 when ``b`` is empty)."""
    return len(a & b) / len(b) if b else 0.0


def similarity(a: frozenset, b: frozenset) -> float:
    """The share of the smaller fingerprint's runs found in the other."""
    return len(a & b) / min(len(a), len(b)) if a and b else 0.0


@cache
def _library_fingerprint(name: str) -> tuple[frozenset, int]:
    module, _, function = name.partition(":")
    try:
        source = textwrap.dedent(inspect.getsource(getattr(importlib.import_module(module),
                                                           function)))
    except (ImportError, AttributeError, OSError, TypeError):
        return frozenset(), 0
    words = tokens(source)
    return fingerprint(words), len(words)


def warm() -> None:
    """Read minibert's answers once (a process that forks the grader's jobs calls it)."""
    for names in LIBRARY_ANSWERS.values():
        for name in names:
            _library_fingerprint(name)


def library_matches(text: str, task: str) -> list[tuple[str, float]]:
    """minibert's answers to ``task`` that ``text`` (a task file) holds a copy of:
    (``module:function``, share) for each share >= LIBRARY_THRESHOLD."""
    found = fingerprint(text)
    matches = []
    for name in LIBRARY_ANSWERS.get(task, ()):
        reference, length = _library_fingerprint(name)
        if length < MIN_TOKENS:
            continue
        share = containment(found, reference)
        if share >= LIBRARY_THRESHOLD:
            matches.append((name, share))
    return matches
