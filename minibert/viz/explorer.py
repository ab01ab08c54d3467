"""The explorer: one self-contained, interactive HTML page of a model's attention.

``explore(model, tokenizer, text, text_pair)`` runs the model once, reads the numbers a
lecture wants to point at from the model's own arrays, and returns an :class:`Explorer`
that displays in Jupyter (HTML plus a static PNG of the model view in the same display
bundle, for GitHub, nbviewer and PDF exports) and writes a standalone page with ``save``.
The page holds inline SVG, this package's own JavaScript (``explorer.js``) and the data as
JSON; it loads nothing from anywhere. Views:

- **head**: lines from each query token to the keys it attends to, opacity = weight;
  hover a token to isolate its lines and read the weights; A→B / B→A filters; special
  tokens kept, hidden or renormalized and word pieces merged, as in :func:`for_display`;
- **model**: every layer × head as a thumbnail with its head-job scores
  (:func:`job_scores`); click one to enlarge it;
- **neuron**: for one query and head, q, each k, q∘k, q·k, q·k/√D and the softmax, from q
  and k as each layer's attention received them (the rest recomputed from them in float64
  and checked against the probabilities the model returned);
- **backward**: the gradient of one output (a ``[MASK]``'s best MLM logit or the NSP
  logit) with respect to every attention probability, by the hand-written backward
  (:func:`attention_gradients`), and gradient × input per token;
- **aggregate**: mean over heads, over layers and heads, rollout; pick tokens to sum;
- **timeline**: the attention snapshots ``pretrain --snapshot-every K`` recorded.

The page opens on the head view of the head with the highest job score (previous or next
token, :func:`opening_head`), fills its window (for a projector: no browser zoom needed at
full screen), and colours attention as the slides and figures do (the ``cividis`` map of
:mod:`minibert.viz.style`: dark = 0, light = 1).

Layers and heads are counted from 0. Numbers are stored at reduced precision, stated on
the page: probabilities to 3 decimals, q·k and q·k/√D to 2, gradients, q and k to 1 part
in 127 of each head's largest magnitude; the data is deflate-compressed and unpacked by
the browser (``DecompressionStream``, in every browser since 2023).

Dimension legend: L layers, N heads, T tokens, D head size, H hidden size, S snapshots.
"""

from __future__ import annotations

import base64
import hashlib
import html
import io
import itertools
import json
import math
import os
import zlib
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

import numpy as np

from minibert.checks import is_int
from minibert.viz.attention import SPECIAL_TOKENS, attention_rollout, stack_attentions, word_groups
from minibert.viz.lecture_set import HEAD_JOBS
from minibert.viz.style import ATTENTION_CMAP

__all__ = [
    "Explorer",
    "explore",
    "load_model",
    "job_scores",
    "query_key_scores",
    "attention_gradients",
    "BACKWARD_TARGETS",
    "JOBS",
    "OPENING_JOBS",
    "opening_head",
    "MAX_PAGE_BYTES",
]

BACKWARD_TARGETS = ("auto", "mlm", "nsp", "none")
JOBS = HEAD_JOBS + ("same word",)
# The jobs whose best head the page opens on: their stripes read at a glance.
OPENING_JOBS = ("previous token", "next token")
MAX_PAGE_BYTES = 1_500_000  # the size budget: BERT-base with 64 tokens fits
PROBABILITY_DECIMALS = 3
SCORE_DECIMALS = 2
_DISPLAYS = itertools.count()  # numbers the notebook displays of this process


# -- the numbers ----------------------------------------------------------------------------

def job_scores(attentions, tokens) -> dict[str, np.ndarray]:
    """How much each head does the jobs Clark et al. (2019) found in BERT, for one example.

    The rules of :func:`minibert.viz.head_job_scores` (which runs a model over several
    texts), applied to arrays already computed, plus one job: the same word.

    Inputs:
        attentions: (L, N, T, T) probabilities of one example (or what the model returns).
        tokens: (T,) WordPiece tokens.
    Returns:
        job name (``JOBS``) -> (L, N) mean attention over the queries: to the previous
        token, to the next token, to ``[CLS]``, to ``[SEP]``, and, over the queries inside a
        word of several pieces, to the other pieces of that word (NaN when no word has
        several pieces). 1 means every query gives the job all its attention.
    """
    attention = stack_attentions(attentions)  # (L, N, T, T)
    tokens = list(tokens)
    length = attention.shape[-1]
    if len(tokens) != length or length < 2:
        raise ValueError(f"tokens has {len(tokens)} entries, attentions are {length} x "
                         f"{length}; they must agree, with at least 2 tokens")
    is_cls = np.array([t == "[CLS]" for t in tokens])  # (T,)
    is_sep = np.array([t == "[SEP]" for t in tokens])  # (T,)
    same_word = np.zeros((length, length), dtype=bool)  # (T, T) other pieces of my word
    for group in word_groups(tokens):
        if len(group) > 1:
            same_word[np.ix_(group, group)] = True
    np.fill_diagonal(same_word, False)
    in_word = same_word.any(axis=1)  # (T,) queries inside a word of several pieces
    neighbour = np.diagonal(attention, -1, -2, -1)  # (L, N, T-1): [i] is query i+1 on query i
    following = np.diagonal(attention, 1, -2, -1)  # (L, N, T-1): [i] is query i on query i+1
    words = (np.where(same_word, attention, 0.0).sum(-1)[..., in_word].mean(-1) if in_word.any()
             else np.full(attention.shape[:2], np.nan))
    scores = {
        "previous token": neighbour.mean(-1),
        "next token": following.mean(-1),
        "[SEP]": attention[..., is_sep].sum(-1).mean(-1),
        "[CLS]": attention[..., is_cls].sum(-1).mean(-1),
        "same word": words,
    }
    return {job: scores[job] for job in JOBS}


def opening_head(scores: dict[str, np.ndarray]) -> dict:
    """The head the page opens on: the highest score of ``OPENING_JOBS``.

    Inputs: scores, :func:`job_scores`' dict (job -> (L, N)).
    Returns: dict with ``layer``, ``head`` (counted from 0), ``job`` and ``score``.
    """
    best = None
    for job in OPENING_JOBS:
        values = np.nan_to_num(np.asarray(scores[job], np.float64), nan=-1.0)  # (L, N)
        layer, head = np.unravel_index(int(np.argmax(values)), values.shape)
        if best is None or values[layer, head] > best["score"]:
            best = {"layer": int(layer), "head": int(head), "job": job,
                    "score": round(float(values[layer, head]), 2)}
    return best


def _colormap_stops(count: int = 11) -> list[str]:
    """``ATTENTION_CMAP`` at ``count`` evenly spaced values, as hex colours for the page."""
    from matplotlib import colormaps
    from matplotlib.colors import to_hex

    cmap = colormaps[ATTENTION_CMAP]
    return [to_hex(cmap(value)) for value in np.linspace(0.0, 1.0, count)]


def _self_attention_modules(model) -> list:
    """The model's self-attention modules, each once (ALBERT's shared block runs L times):
    the modules that name their query, key and value projections in ``PROJECTIONS``."""
    seen, modules = set(), []
    for _, module in model.named_modules():
        if hasattr(module, "PROJECTIONS") and id(module) not in seen:
            seen.add(id(module))
            modules.append(module)
    if not modules:
        raise TypeError(f"model must be a minibert BERT, ALBERT or DistilBERT model, got "
                        f"{type(model).__name__}")
    return modules


class _Recorder:
    """Keeps what each attention call of a forward computed (its cache: q, k, v (B, N, T, D)
    and the probabilities), in forward order, and, optionally, the gradient reaching each
    call's context in the backward, for the duration of a ``with`` block.

    Every attention of BERT, ALBERT and DistilBERT runs ``functional.attention_forward`` and
    ``attention_backward``, looked up in ``minibert.functional`` at each call (the place where
    the assignment puts a student's pair): the recorder puts twins there that note their
    results and call the pairs, and puts the pairs back on leaving. Nothing of the model
    changes."""

    def __init__(self, model, backward: bool = False) -> None:
        _self_attention_modules(model)  # refuses a model that is no BERT, ALBERT or DistilBERT
        self.backward = backward
        self.caches: list = []  # functional.AttentionCache of each call, in forward order
        self.douts: list[np.ndarray] = []  # d context (B, N, T, D), in backward (reverse) order

    def __enter__(self) -> _Recorder:
        from minibert import functional as F

        self.pairs = forward, backward = F.attention_forward, F.attention_backward

        def recorded_forward(*args, **kwargs):
            context, cache = forward(*args, **kwargs)
            self.caches.append(cache)
            return context, cache

        def recorded_backward(dout, cache):
            self.douts.append(dout)
            return backward(dout, cache)

        F.attention_forward = recorded_forward
        if self.backward:
            F.attention_backward = recorded_backward
        return self

    def __exit__(self, *exc) -> None:
        from minibert import functional as F

        F.attention_forward, F.attention_backward = self.pairs


def _model_inputs(model, encoding: dict) -> dict:
    """The encoding's arrays that the model's forward takes (DistilBERT reads no segments)."""
    from minibert.family.registry import forward_inputs

    return forward_inputs(model, {key: encoding[key] for key in (
        "input_ids", "token_type_ids", "attention_mask") if key in encoding})


def query_key_scores(model, encoding: dict) -> dict[str, np.ndarray]:
    """q and k of every layer, as its attention received them, and the steps from them to
    the attention probabilities, recomputed in float64, for one example.

    Inputs:
        model: a minibert BERT, ALBERT or DistilBERT model (any head), in eval mode.
        encoding: the tokenizer's output for one example (arrays (1, T)).
    Returns:
        dict with ``q``, ``k`` (L, N, T, D); ``scores`` q·k (L, N, T, T); ``scaled``
        scores / √D (L, N, T, T); ``probabilities`` softmax of ``scaled`` (L, N, T, T);
        ``attentions`` what the model returned (L, N, T, T); ``max_difference`` the largest
        |probabilities - attentions|, float rounding only.
    """
    with _Recorder(model) as recorder:
        out = model(**_model_inputs(model, encoding), output_attentions=True)
    attentions = stack_attentions(out.attentions)  # (L, N, T, T)
    q = np.stack([cache.q[0] for cache in recorder.caches])  # (L, N, T, D)
    k = np.stack([cache.k[0] for cache in recorder.caches])  # (L, N, T, D)
    scores = q.astype(np.float64) @ k.astype(np.float64).swapaxes(-1, -2)  # (L, N, T, T)
    scaled = scores / math.sqrt(q.shape[-1])
    mask = np.asarray(encoding.get("attention_mask", np.ones_like(encoding["input_ids"])))[0]
    shifted = np.where(mask.astype(bool), scaled, -np.inf)  # padding keys get probability 0
    shifted = np.exp(shifted - shifted.max(-1, keepdims=True))
    probabilities = shifted / shifted.sum(-1, keepdims=True)  # (L, N, T, T)
    return {"q": q, "k": k, "scores": scores, "scaled": scaled, "probabilities": probabilities,
            "attentions": attentions,
            "max_difference": float(np.abs(probabilities - attentions).max())}


@dataclass(frozen=True)
class AttentionGradients:
    """The gradient of one output with respect to every attention probability.

    Fields:
        target: ``"mlm"`` or ``"nsp"``; position: the token explained (MLM) or None;
        index: the vocabulary id (MLM) or the NSP class; label: words for the page;
        value: the output's value; gradients: (L, N, T, T) d value / d attention_probs;
        gradient_x_input: (T,) gradient × input of the word vectors.
    """

    target: str
    position: int | None
    index: int
    label: str
    value: float
    gradients: np.ndarray
    gradient_x_input: np.ndarray


def _backward_heads(model, target: str) -> None:
    """Refuse a model without the encoder and the head that ``target`` needs."""
    from minibert.model import BertSelfAttention

    heads = getattr(model, "cls", None)
    if getattr(model, "bert", None) is None or heads is None:
        raise ValueError(f"backward={target!r} needs a BERT with its pretraining heads "
                         f"(BertForPreTraining, BertForMaskedLM or "
                         f"BertForNextSentencePrediction), got {type(model).__name__}; "
                         f"pass backward='none'")
    if any(type(m) is not BertSelfAttention for m in _self_attention_modules(model)):
        raise ValueError(f"backward={target!r} is for BERT's attention; "
                         f"{type(model).__name__} has another kind")
    need = "predictions" if target == "mlm" else "seq_relationship"
    if not hasattr(heads, need):
        raise ValueError(f"backward={target!r} needs the {'MLM' if target == 'mlm' else 'NSP'} "
                         f"head, which {type(model).__name__} lacks")
    initialized = getattr(model, "loading_info", {}).get("initialized_heads", [])
    if any(name.startswith("cls") for name in initialized):
        raise ValueError(f"backward={target!r}: the checkpoint has no trained pretraining "
                         f"heads ({', '.join(initialized)} were initialized at random); "
                         f"pass backward='none'")


def attention_gradients(model, tokenizer, encoding: dict, target: str = "mlm",
                        position: int | None = None) -> AttentionGradients:
    """d output / d attention_probs for every layer and head, by the hand-written backward.

    The output is one logit: ``"mlm"``, the best answer's logit at ``position`` (default:
    the first ``[MASK]``); ``"nsp"``, the IsNext logit. In layer l, context = P @ v, so the
    backward that reaches the context (B, N, T, D) gives dP = d context @ v^T.

    Inputs:
        model: a BertForPreTraining / BertForMaskedLM / BertForNextSentencePrediction in
            eval mode (float64 for gradient checks); tokenizer; encoding (arrays (1, T)).
    Returns:
        an :class:`AttentionGradients` with (L, N, T, T) gradients.
    """
    from minibert import attribution

    if target not in ("mlm", "nsp"):
        raise ValueError(f"target must be 'mlm' or 'nsp', got {target!r}")
    _backward_heads(model, target)
    ids = np.asarray(encoding["input_ids"])
    if target == "mlm":
        if position is None:
            masks = np.flatnonzero(ids[0] == tokenizer.mask_token_id)
            if masks.size == 0:
                raise ValueError("backward='mlm' explains a [MASK] token, and the text has "
                                 "none; put [MASK] in the text or use backward='nsp'")
            position = int(masks[0])
        out = model(**_model_inputs(model, encoding))
        logits = getattr(out, "prediction_logits", None)
        logits = out.logits if logits is None else logits  # (1, T, V)
        index = int(np.argmax(logits[0, position]))
        chosen = attribution.mlm_target(position, index)
        label = (f"MLM logit of {tokenizer.convert_ids_to_tokens([index])[0]!r} at position "
                 f"{position} ({tokenizer.convert_ids_to_tokens([int(ids[0, position])])[0]})")
    else:
        chosen, index = attribution.nsp_target(0), 0
        label = "NSP logit of IsNext (class 0)"
    table = model.bert.embeddings.word_embeddings.params["weight"]  # (V, H)
    words = table[ids]  # (1, T, H)
    with _Recorder(model, backward=True) as recorder:
        values, gradient = attribution.target_and_gradient(
            model, ids, encoding.get("token_type_ids"), encoding.get("attention_mask"),
            target=chosen, word_vectors=words)
    douts = recorder.douts[::-1]  # the backward ran from the last layer down
    gradients = []
    for d_context, cache in zip(douts, recorder.caches, strict=True):
        v = cache.v[0]  # (N, T, D)
        gradients.append(d_context[0] @ v.swapaxes(-1, -2))  # (N, T, T) forward: context = P v
    scores = (gradient[0] * words[0]).sum(-1).astype(np.float64)  # (T,)
    return AttentionGradients(target, position if target == "mlm" else None, index, label,
                              float(values[0]), np.stack(gradients).astype(np.float64), scores)


# -- packing arrays for the page ------------------------------------------------------------

_INT_TYPES = (("u8", np.uint8), ("i8", np.int8), ("u16", np.uint16), ("i16", np.int16),
              ("i32", np.int32))


def _pack_ints(ints: np.ndarray, steps, decimals: int | None) -> dict:
    """Integers -> the smallest type that holds them, deflated and base64-encoded."""
    low, high = (int(ints.min()), int(ints.max())) if ints.size else (0, 0)
    name, kind = next((name, kind) for name, kind in _INT_TYPES
                      if np.iinfo(kind).min <= low and high <= np.iinfo(kind).max)
    data = np.ascontiguousarray(ints.astype(np.dtype(kind).newbyteorder("<")))
    return {"dtype": name, "shape": list(ints.shape), "steps": [float(s) for s in steps],
            "decimals": decimals,
            "data": base64.b64encode(zlib.compress(data.tobytes(), 9)).decode("ascii")}


def _on_grid(values: np.ndarray, decimals: int) -> dict:
    """Values rounded to ``decimals`` places: the page shows exactly the rounded value."""
    return _pack_ints(np.rint(np.asarray(values, np.float64) * 10 ** decimals).astype(np.int64),
                      [10.0 ** -decimals], decimals)


def _per_head(values: np.ndarray, levels: int) -> dict:
    """Values (L, N, ...) with one step per head: the largest magnitude -> ``levels``."""
    values = np.asarray(values, np.float64)
    blocks = values.reshape(values.shape[0] * values.shape[1], -1)  # (L*N, ...)
    largest = np.abs(blocks).max(axis=1)
    steps = np.where(largest > 0, largest / levels, 1.0)  # (L*N,)
    ints = np.rint(blocks / steps[:, None]).astype(np.int64).reshape(values.shape)
    return _pack_ints(ints, steps, None)


# -- the explorer ---------------------------------------------------------------------------

def _check_text(value, name: str, required: bool) -> str | None:
    if value is None and not required:
        return None
    if not isinstance(value, str):
        raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    if not value.strip():
        raise ValueError(f"{name} is empty; give the explorer at least one word")
    return value


def _encode(model, tokenizer, text: str, text_pair: str | None) -> dict:
    encoding = tokenizer(text, text_pair, return_tensors="np")
    length = encoding["input_ids"].shape[1]
    limit = model.config.max_position_embeddings
    if length > limit:
        raise ValueError(f"text{' and text_pair' if text_pair else ''} make {length} tokens; "
                         f"this model reads at most {limit} (max_position_embeddings); "
                         f"shorten the text")
    return encoding


def _unknown_line(tokenizer, text: str, text_pair: str | None) -> str:
    """The words of the texts the vocabulary lacks, in one line for the page ("" if none)."""
    from minibert.tokenization.unknown import unknown_words

    lines = [unknown_words(tokenizer, t).line() for t in (text, text_pair) if t]
    return "; ".join(line for line in lines if line)


def _unknown_tokens(tokens: list[str], unk_token: str) -> list[bool]:
    """Per token: is it [UNK], or a piece of a word the vocabulary holds only in pieces?"""
    return [token == unk_token or token.startswith("##")
            or (i + 1 < len(tokens) and tokens[i + 1].startswith("##"))
            for i, token in enumerate(tokens)]


def _architecture(model) -> str:
    """BERT, ALBERT, DistilBERT or ELECTRA: the model's family (else its class name)."""
    from minibert.family.registry import family_of

    try:
        return family_of(model).name
    except ValueError:
        return type(model).__name__


def _evenly(count: int, keep: int) -> list[int]:
    """``keep`` of ``range(count)`` spread evenly: first and last, or the middle one alone."""
    if keep >= count:
        return list(range(count))
    if keep == 1:
        return [count // 2]
    return sorted({round(i * (count - 1) / (keep - 1)) for i in range(keep)})


def _page_bytes(data: dict) -> int:
    return len(_page(data).encode("utf-8"))


def _check_neuron_layers(neuron_layers, layers: int) -> list[int] | None:
    """``neuron_layers`` as sorted distinct ints in 0..L-1, or None (the budget chooses)."""
    if neuron_layers is None:
        return None
    chosen = list(neuron_layers) if isinstance(neuron_layers, (list, tuple, range)) else []
    if not chosen or not all(is_int(layer) and 0 <= layer < layers for layer in chosen):
        raise ValueError(f"neuron_layers must list layers in 0..{layers - 1}, got "
                         f"{neuron_layers!r}")
    return sorted({int(layer) for layer in chosen})


def _backward_target(model, tokenizer, ids: np.ndarray, backward: str, pair: bool) -> str:
    """``backward`` with ``"auto"`` resolved: MLM at a [MASK], else NSP for a pair, else none."""
    if backward != "auto":
        return backward
    wanted = {"mlm": bool((ids == tokenizer.mask_token_id).any()), "nsp": pair}
    for candidate in ("mlm", "nsp"):
        if wanted[candidate]:
            try:
                _backward_heads(model, candidate)
            except ValueError:
                continue
            return candidate
    return "none"


def _timeline_data(timeline, model) -> dict | None:
    from minibert.training.snapshots import load_snapshots

    if timeline is None:
        return None
    snapshots = load_snapshots(timeline) if isinstance(timeline, (str, os.PathLike)) else timeline
    if not isinstance(snapshots, dict) or "attentions" not in snapshots:
        raise TypeError(f"timeline must be a folder, a snapshot file or what load_snapshots "
                        f"returns, got {type(timeline).__name__}")
    attentions = np.asarray(snapshots["attentions"], np.float64)  # (S, L, N, T, T)
    if attentions.shape[1:3] != (model.config.num_hidden_layers,
                                 model.config.num_attention_heads):
        raise ValueError(f"timeline has {attentions.shape[1]} layers x {attentions.shape[2]} "
                         f"heads, the model {model.config.num_hidden_layers} x "
                         f"{model.config.num_attention_heads}")
    tokens = [str(t) for t in snapshots["tokens"]]
    jobs = [{name: np.round(np.nan_to_num(v, nan=-1.0), 2).tolist()
             for name, v in job_scores(a, tokens).items()} for a in attentions]
    return {"steps": [int(s) for s in snapshots["steps"]], "tokens": tokens,
            "segments": [int(s) for s in snapshots["token_type_ids"]],
            "attentions": _on_grid(attentions, PROBABILITY_DECIMALS), "jobs": jobs}


# The held-out series of a history.json the timeline tab draws, by the name it shows.
HISTORY_SERIES = {"masked_lm_accuracy": "masked LM accuracy",
                  "next_sentence_accuracy": "next-sentence accuracy"}


def _history_data(history) -> dict | None:
    """The held-out rows of a training record (history.json's list, or its path) as the
    timeline tab's curves: {"steps": [...], "series": {name: [...]}}; None without any."""
    if history is None:
        return None
    if isinstance(history, (str, os.PathLike)):
        path = Path(history)
        path = path / "history.json" if path.is_dir() else path
        if not path.is_file():
            return None
        history = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(history, list):
        raise TypeError(f"history must be history.json's list of rows or its path, got "
                        f"{type(history).__name__}")
    held = [row for row in history if isinstance(row, dict) and row.get("split") == "heldout"
            and all(isinstance(row.get(key), (int, float)) for key in HISTORY_SERIES)]
    if not held:
        return None
    return {"steps": [int(row["step"]) for row in held],
            "series": {name: [round(float(row[key]), 4) for row in held]
                       for key, name in HISTORY_SERIES.items()}}


def _no_backward_reason(model, tokenizer, ids: np.ndarray, pair: bool) -> str:
    """Why ``backward="auto"`` found no output to explain, in the words the page shows."""
    has_mask = bool((ids == tokenizer.mask_token_id).any())
    if not has_mask and not pair:
        return ("No output to explain: the text has no [MASK] and no second sentence. Put "
                "[MASK] in place of a word (the view then explains the model's answer there), "
                "or give a sentence pair (it explains the next-sentence logit).")
    wanted = "mlm" if has_mask else "nsp"
    try:
        _backward_heads(model, wanted)
    except ValueError as error:
        return f"No backward view: {error}"
    return "No backward view in this page (backward='none')."


def explore(model, tokenizer, text: str, text_pair: str | None = None, *,
            backward: str = "auto", timeline=None, neuron_layers=None,
            title: str | None = None, max_bytes: int = MAX_PAGE_BYTES,
            history=None) -> Explorer:
    """Build the interactive page for one text (or sentence pair).

    Inputs:
        model: a minibert BERT, ALBERT or DistilBERT model (a pretraining model for the
            backward view); run in eval mode whatever its mode, and left as it was.
        tokenizer: its :class:`BertTokenizer`.
        text, text_pair: sentence A and the optional sentence B.
        backward: ``"mlm"`` (the best answer's logit at the first ``[MASK]``), ``"nsp"``,
            ``"none"``, or ``"auto"``: MLM if the text has a ``[MASK]`` and the model an MLM
            head, else NSP if it has that head and a pair was given, else none.
        timeline: a folder (or ``attention_snapshots.npz``) written by
            ``pretrain --snapshot-every K``, or ``load_snapshots``' dict; None for no timeline.
        neuron_layers: layers whose q and k the neuron view carries; None = as many as the
            size budget allows, spread evenly (all of them for small models).
        title: the page title; default names the model and the text.
        max_bytes: size budget of the page.
        history: the model's training record (``history.json``'s rows, or the path of
            that file or of its folder); without attention snapshots the timeline tab
            draws its held-out accuracies by step. None: no record.
    Returns:
        an :class:`Explorer`.
    """
    from minibert.training.loop import eval_mode

    text = _check_text(text, "text", True)
    text_pair = _check_text(text_pair, "text_pair", False)
    if backward not in BACKWARD_TARGETS:
        raise ValueError(f"backward must be one of {', '.join(BACKWARD_TARGETS)}, got "
                         f"{backward!r}")
    if not is_int(max_bytes) or max_bytes < 1:
        raise ValueError(f"max_bytes must be a positive int, got {max_bytes!r}")
    config = model.config
    layers, heads = config.num_hidden_layers, config.num_attention_heads
    neuron_layers = _check_neuron_layers(neuron_layers, layers)
    encoding = _encode(model, tokenizer, text, text_pair)
    ids = encoding["input_ids"][0]
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    unknown_line = _unknown_line(tokenizer, text, text_pair)
    with eval_mode(model):
        neuron = query_key_scores(model, encoding)
        backward = _backward_target(model, tokenizer, ids, backward, text_pair is not None)
        gradients = (None if backward == "none"
                     else attention_gradients(model, tokenizer, encoding, backward))
        snapshots = _timeline_data(timeline, model)
    attentions = neuron["attentions"]  # (L, N, T, T)
    segments = np.asarray(encoding.get("token_type_ids", np.zeros_like(encoding["input_ids"])))[0]
    title = title or f"{_architecture(model)}: {text}" + (f" / {text_pair}" if text_pair else "")
    scores = job_scores(attentions, tokens)
    data = {
        "title": title,
        "model": {"architecture": _architecture(model), "class": type(model).__name__,
                  "layers": layers, "heads": heads, "head_size": int(neuron["q"].shape[-1]),
                  "hidden_size": config.hidden_size},
        "tokens": tokens, "segments": [int(s) for s in segments],
        "special": [t in SPECIAL_TOKENS for t in tokens],
        "unknown": _unknown_tokens(tokens, tokenizer.unk_token), "unknown_line": unknown_line,
        "pair": text_pair is not None,
        "attentions": _on_grid(attentions, PROBABILITY_DECIMALS),
        "rollout": _on_grid(attention_rollout(attentions), PROBABILITY_DECIMALS),
        "jobs": {name: np.round(np.nan_to_num(v, nan=-1.0), 2).tolist()
                 for name, v in scores.items()},
        "opening": opening_head(scores),
        "colormap": _colormap_stops(),
        "neuron": None, "backward": None, "timeline": snapshots,
        "history": _history_data(history),
    }
    if gradients is None:
        data["backward_why"] = _no_backward_reason(model, tokenizer, ids, text_pair is not None)
    if gradients is not None:
        data["backward"] = {
            "label": gradients.label, "value": round(gradients.value, 4),
            "position": gradients.position, "gradients": _per_head(gradients.gradients, 127),
            "gradient_x_input": np.round(gradients.gradient_x_input, 4).tolist()}

    def neuron_part(chosen: list[int]) -> dict:
        index = np.asarray(chosen, dtype=np.intp)
        return {"layers": chosen, "max_difference": neuron["max_difference"],
                "q": _per_head(neuron["q"][index], 127), "k": _per_head(neuron["k"][index], 127),
                "scores": _on_grid(neuron["scores"][index], SCORE_DECIMALS),
                "scaled": _on_grid(neuron["scaled"][index], SCORE_DECIMALS)}

    if neuron_layers is None:
        # As many layers as the budget leaves room for, from the size of all of them.
        full = neuron_part(list(range(layers)))
        room = max_bytes - _page_bytes(data)
        keep = int(max(1, min(layers, room // (len(json.dumps(full)) / layers))))
        data["neuron"] = neuron_part(_evenly(layers, keep)) if keep < layers else full
        while _page_bytes(data) > max_bytes and keep > 1:
            keep -= 1
            data["neuron"] = neuron_part(_evenly(layers, keep))
    else:
        data["neuron"] = neuron_part(neuron_layers)
    size = _page_bytes(data)
    if size > max_bytes:
        raise ValueError(f"the page would take {size:,} bytes, over max_bytes={max_bytes:,}; "
                         f"use a shorter text, neuron_layers=[one layer] or backward='none'")
    return Explorer(data, _fallback_png(attentions, tokens, segments))


def load_model(folder):
    """A model folder as the explorer wants it: ``(model, tokenizer)``, the model in eval mode.

    A BERT folder with trained pretraining heads loads as ``BertForPreTraining`` (so that
    the backward view can explain its outputs), any other BERT folder (a classifier, a
    sentence encoder) as ``BertModel``; ALBERT and DistilBERT folders as their encoders.
    """
    import warnings

    from minibert.family.registry import family_of_folder
    from minibert.io.checkpoint import checkpoint_summary
    from minibert.tokenization import load_tokenizer

    tokenizer = load_tokenizer(folder)
    family = family_of_folder(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # heads the explorer does not read are left out
        if {"cls.predictions", "cls.seq_relationship"} <= set(checkpoint_summary(folder)["heads"]):
            model = family.pretraining.from_pretrained(folder)
        else:
            model = family.base_model.from_pretrained(folder, **family.base_model_options)
    return model.eval(), tokenizer


def _fallback_png(attentions: np.ndarray, tokens, segments) -> bytes:
    """The model view as a PNG, for wherever the page's script cannot run."""
    from minibert.viz.heatmaps import attention_figure

    figure = attention_figure(attentions, tokens, view="model", token_type_ids=segments,
                              title="Attention of every layer and head (static view)")
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=100, bbox_inches="tight")  # title kept whole
    return buffer.getvalue()


def _script() -> str:
    return resources.files("minibert.viz").joinpath("explorer.js").read_text(encoding="utf-8")


def _json_for_script(data: dict) -> str:
    """JSON that cannot end its <script> element: <, > and & become \\u escapes."""
    text = json.dumps(data, ensure_ascii=True, allow_nan=False, separators=(",", ":"))
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _fragment(data: dict, suffix: str = "", png: bytes | None = None) -> str:
    """The explorer as an HTML fragment: a root element, its data and the script.

    Element ids come from the data (a page is reproducible) plus ``suffix``, which keeps two
    displays of the same explorer in one notebook apart. ``png``, when given, is shown
    inside the root until the script replaces it: an untrusted notebook or a renderer that
    strips scripts (GitHub) still shows the model view.
    """
    payload = _json_for_script(data)
    uid = hashlib.sha256(payload.encode("ascii")).hexdigest()[:12] + suffix
    image = ("" if png is None else '<img alt="the model view, as a static image" src="data:'
             f'image/png;base64,{base64.b64encode(png).decode("ascii")}"><br>')
    return (f'<div class="mbx" id="mbx-{uid}">{image}<p class="mbx-loading">minibert '
            f'explorer: the interactive views need JavaScript</p></div>\n'
            f'<script type="application/json" id="mbx-data-{uid}">{payload}'
            f'</script>\n<script>\n{_script()}\nminibertExplore("mbx-{uid}", "mbx-data-{uid}");'
            f'\n</script>\n')


def _page(data: dict) -> str:
    """The standalone page."""
    return (f'<!DOCTYPE html>\n<html lang="en">\n<head>\n<meta charset="utf-8">\n'
            f'<meta name="viewport" content="width=device-width, initial-scale=1">\n'
            f'<title>{html.escape(data["title"])}</title>\n</head>\n<body>\n'
            f'{_fragment(data)}</body>\n</html>\n')


class Explorer:
    """The explorer of one text: displays in Jupyter, ``save(path)`` writes the page.

    Fields: ``data`` (what the page shows, as JSON-ready Python), ``png`` (the static
    model view, bytes).
    """

    def __init__(self, data: dict, png: bytes) -> None:
        self.data, self.png = data, png

    def to_html(self) -> str:
        """The standalone page, as text."""
        return _page(self.data)

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict:
        return {"text/html": _fragment(self.data, f"-{next(_DISPLAYS)}", self.png),
                "image/png": base64.b64encode(self.png).decode("ascii")}

    def save(self, path) -> Path:
        """Write the standalone page to ``path`` (``.html``) atomically; returns the path."""
        from minibert.io.fileio import atomic_write_bytes

        path = Path(path)
        if path.suffix.lower() not in (".html", ".htm"):
            raise ValueError(f"path must end in .html, got {str(path)!r}")
        atomic_write_bytes(path, self.to_html().encode("utf-8"))
        return path

    def __repr__(self) -> str:
        model = self.data["model"]
        return (f"Explorer({model['architecture']}, {model['layers']} layers x "
                f"{model['heads']} heads, {len(self.data['tokens'])} tokens)")
