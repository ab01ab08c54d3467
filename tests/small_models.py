"""The helpers every test shares, each defined once: the small models and their batches,
the comparisons, and the command-line runner.

- ``small_config`` (BERT), ``small_albert_config``, ``small_electra_config``,
  ``small_distilbert_config``: the small configs of BERT and its relatives;
- ``make_batch``: a padded batch of random ids (with MLM and next-sentence labels, or the
  inputs alone); ``perturbed``: a model with every parameter moved off its initial value;
- ``log_softmax`` (an independent reference for the library's) and
  ``relative_difference`` (norm-wise, as the parity tests report it);
- ``cli``: ``python -m minibert ...`` in a subprocess; ``refused``: the checks of a refusal;
  ``start_pretrain``: a pretraining run in the background; ``weights`` and ``sha256`` of
  the model a run wrote;
- attention maps for the figure tests (``TOKENS``, ``softmax_attentions``, ``loop_rollout``);
- the gradients that are exactly 0 (``key_biases``, ``exactly_zero_gradients``) and the
  parameter each is measured against (``zero_gradient_partner``); a model's transformers
  twin (``hf_config``, ``twin_of``, ``assert_same_keys``: the parity suite's ``hf_twin``
  fixture and tests/parity/make_reference.py);
- safetensors' test arrays (``random_array``, ``same_array``).

Imported by the test modules of every folder below tests/ (``tests/`` is on ``sys.path``
when pytest runs them: its conftest.py's folder is put there); tests/project/test_layout.py
fails when a file anywhere below tests/ defines a helper again.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import signal
import subprocess
import sys
from pathlib import Path

import numpy as np

import minibert as mb
from minibert.checks import IGNORE_INDEX
from minibert.gradcheck import suite
from minibert.io import safetensors


def small_config(**overrides) -> mb.BertConfig:
    """The small BERT of the model tests: the gradient-check suite's sizes (H=16, 2 layers of
    2 heads, I=24, 16 positions; ``minibert.gradcheck.suite.small_config``) with V=60 and
    BERT's dropout of 0.1 unless overridden."""
    return suite.small_config(**{"vocab_size": 60, "hidden_dropout_prob": 0.1,
                                 "attention_probs_dropout_prob": 0.1, **overrides})


# ALBERT: V=41, E=6, H=8, N=2 heads of D=4, I=12: every axis distinct, E < H.
SMALL_ALBERT = dict(vocab_size=41, embedding_size=6, hidden_size=8, num_attention_heads=2,
                    intermediate_size=12, max_position_embeddings=16)
# How ALBERT's layers share blocks: one block for all three, or two groups of two.
ALBERT_SHARING = {
    "one-group": dict(num_hidden_layers=3, num_hidden_groups=1, inner_group_num=1),
    "groups-and-inner": dict(num_hidden_layers=4, num_hidden_groups=2, inner_group_num=2),
}


def small_albert_config(sharing="one-group", **overrides) -> mb.AlbertConfig:
    return mb.AlbertConfig(**{**SMALL_ALBERT, **ALBERT_SHARING[sharing], **overrides})


# ELECTRA: ALBERT's sizes (tables of width E < H, then embeddings_project), two layers,
# no dropout.
SMALL_ELECTRA = dict(SMALL_ALBERT, num_hidden_layers=2, hidden_dropout_prob=0.0,
                     attention_probs_dropout_prob=0.0)


def small_electra_config(**overrides) -> mb.ElectraConfig:
    return mb.ElectraConfig(**{**SMALL_ELECTRA, **overrides})


# DistilBERT (its own field names): V=37, H=12, I=20, no dropout.
SMALL_DISTILBERT = dict(vocab_size=37, max_position_embeddings=16, n_layers=2, n_heads=2,
                        dim=12, hidden_dim=20, dropout=0.0, attention_dropout=0.0)


def small_distilbert_config(**overrides) -> mb.DistilBertConfig:
    return mb.DistilBertConfig(**{**SMALL_DISTILBERT, **overrides})


def make_batch(config, lengths=(9, 6, 4), seq_len=None, seed=0, *, segments=True,
               mlm_share=1 / 3, first_target=None, next_sentence=True) -> dict:
    """A padded batch of random ids: input_ids, token_type_ids, attention_mask, (B, T).

    Padding sits at the end ([PAD] id, mask 0, segment 0, label -100); ``seq_len`` (default
    the longest row) may add padding to every row. Options:
    ``segments``: token_type_ids with sentence B from the middle of each row (False: no
    token_type_ids, as DistilBERT reads none);
    ``mlm_share``: MLM ``labels`` at about that share of the real positions, at least one a
    row (at ``first_target``, or at a random position when None); None: no labels;
    ``next_sentence``: ``next_sentence_label`` 0, 1, 0, ... .
    """
    rng = np.random.default_rng(seed)
    batch, seq_len = len(lengths), seq_len or max(lengths)
    input_ids = np.full((batch, seq_len), config.pad_token_id, dtype=np.int64)
    token_type_ids = np.zeros((batch, seq_len), dtype=np.int64)
    attention_mask = np.zeros((batch, seq_len), dtype=np.int64)
    labels = np.full((batch, seq_len), IGNORE_INDEX, dtype=np.int64)
    for row, length in enumerate(lengths):
        input_ids[row, :length] = rng.integers(1, config.vocab_size, length)
        token_type_ids[row, length // 2:length] = 1
        attention_mask[row, :length] = 1
        if mlm_share is not None:
            targets = rng.random(length) < mlm_share
            targets[rng.integers(length) if first_target is None else first_target] = True
            labels[row, :length][targets] = rng.integers(0, config.vocab_size, targets.sum())
    out = dict(input_ids=input_ids, attention_mask=attention_mask)
    if segments:
        out["token_type_ids"] = token_type_ids
    if mlm_share is not None:
        out["labels"] = labels
    if next_sentence:
        out["next_sentence_label"] = np.arange(batch, dtype=np.int64) % 2
    return out


def perturbed(model, seed=0, scale=0.2):
    """``model`` with N(0, scale) noise from ``seed`` added to every parameter (in place, and
    returned): no weight stays at exactly 0 or 1, where a missing term can hide."""
    suite.perturb_parameters(model, np.random.default_rng(seed), scale)
    return model


def log_softmax(x: np.ndarray) -> np.ndarray:
    """log softmax over the last axis, written here as an independent reference."""
    shifted = x - x.max(axis=-1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=-1, keepdims=True))


def relative_difference(ours, theirs) -> float:
    """||ours - theirs|| / ||theirs||, norm-wise (0 when both are exactly zero)."""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    diff = float(np.linalg.norm(ours - theirs))
    scale = float(np.linalg.norm(theirs))
    return diff / scale if scale else (0.0 if diff == 0.0 else float("inf"))


# A sentence with one mask, for the commands that read text (fill-mask, attention, ...).
MASKED_TEXT = "she deposited the money at the [MASK] before noon."


def cli(*args, cwd=None, timeout=240) -> subprocess.CompletedProcess:
    """``python -m minibert ARGS`` in a subprocess: returncode, stdout, stderr (text)."""
    return subprocess.run([sys.executable, "-m", "minibert", *map(str, args)],
                          capture_output=True, text=True, timeout=timeout, cwd=cwd)


def refused(result, *fragments, command=None) -> None:
    """A refusal: exit 2, no traceback, one line of error holding every fragment.

    Without ``command`` that line is all of stderr; with it, the error is stderr's last line
    (after the run's progress lines) and reads ``minibert COMMAND: error: ...``.
    """
    assert result.returncode == 2, (result.returncode, result.stderr)
    assert "Traceback" not in result.stderr
    lines = result.stderr.strip().splitlines()
    if command is None:
        assert len(lines) == 1, result.stderr
    else:
        assert lines[-1].startswith(f"minibert {command}: error: "), result.stderr
    for fragment in fragments:
        assert fragment in lines[-1], result.stderr


def start_pretrain(out, *args, step=1, new_session=False):
    """``python -m minibert pretrain --out OUT ARGS`` in the background, returned with the
    stderr lines it printed once one starts "step STEP/"; ``new_session``: in a process
    group of its own (a signal to the group reaches it and its workers, not pytest)."""
    process = subprocess.Popen([sys.executable, "-m", "minibert", "pretrain", "--out", str(out),
                                *map(str, args)], stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True, start_new_session=new_session)
    seen = []
    for line in process.stderr:
        seen.append(line)
        if line.startswith(f"step {step}/"):
            return process, seen
    raise AssertionError("".join(seen))


def weights(folder) -> dict:
    """The arrays of a model folder's model.safetensors, read into memory."""
    return safetensors.load_file(Path(folder) / "model.safetensors", mmap=False)


def sha256(folder) -> str:
    """The SHA-256 of a model folder's model.safetensors: equal weights, equal bits."""
    return hashlib.sha256((Path(folder) / "model.safetensors").read_bytes()).hexdigest()


# Attention maps for the figure tests: a pair of sentences with word pieces and padding.
TOKENS = [
    "[CLS]", "the", "river", "bank", "was", "un", "##bel", "##ievably", "steep", "[SEP]",
    "she", "sat", "there", "[SEP]", "[PAD]", "[PAD]",
]  # fmt: skip
SEGMENTS = [0] * 10 + [1] * 4 + [0] * 2
N_REAL = 14  # TOKENS without the two [PAD]


def softmax_attentions(rng, n_layers, batch, n_heads, mask):
    """Attention probabilities from random logits; masked keys get exactly 0.

    mask: (B, T), 1 = real token. Returns a tuple of L arrays (B, N, T, T), like the model.
    """
    length = mask.shape[1]
    logits = 2.0 * rng.normal(size=(n_layers, batch, n_heads, length, length))
    logits = np.where(mask[None, :, None, None, :] > 0, logits, -np.inf)
    probs = np.exp(logits - logits.max(axis=-1, keepdims=True))
    probs /= probs.sum(axis=-1, keepdims=True)
    return tuple(probs)


def heatmaps(fig):
    """The heatmap axes of a figure, in drawing order (colour bars hold no image)."""
    return [ax for ax in fig.axes if ax.images]


def drawn(ax):
    """The array an axes' image shows."""
    return np.asarray(ax.images[0].get_array(), dtype=np.float64)


def tick_texts(labels):
    return [label.get_text() for label in labels]


def real(matrix):
    """Rows and columns of the first example's real tokens."""
    return matrix[..., :N_REAL, :N_REAL]


def loop_rollout(stack):
    """Attention rollout written with plain loops, as an independent reference."""
    n_layers, n_heads, length, _ = stack.shape
    result = []
    previous = None
    for layer in range(n_layers):
        mixed = [[0.0] * length for _ in range(length)]
        for i in range(length):
            row = [
                sum(stack[layer, h, i, j] for h in range(n_heads)) / n_heads
                + (1.0 if i == j else 0.0)
                for j in range(length)
            ]
            total = sum(row)
            mixed[i] = [value / total for value in row]
        if previous is None:
            current = mixed
        else:
            current = [
                [sum(mixed[i][k] * previous[k][j] for k in range(length)) for j in range(length)]
                for i in range(length)
            ]
        result.append(current)
        previous = current
    return np.array(result)


# The processes a test started (``subprocess.Popen``), registered with ``STARTED.append``;
# tests/conftest.py calls ``end_started`` after every test, whatever happened.
STARTED: list[subprocess.Popen] = []


def end_started() -> None:
    """End every registered process: its whole group where it leads one, else itself."""
    while STARTED:
        process = STARTED.pop()
        if process.poll() is None:
            with contextlib.suppress(OSError):
                if os.getpgid(process.pid) == process.pid:
                    os.killpg(process.pid, signal.SIGKILL)
                else:
                    process.kill()
        process.wait(timeout=60)


# ---- exactly-zero gradients and a model's transformers twin (the parity suite, the model's
# tests and tests/parity/make_reference.py) ------------------------------------------------

# A key bias adds q . b_key, one constant along the key axis, to every score of a query row,
# and softmax ignores that: its true gradient is exactly 0 (BERT's, ALBERT's, DistilBERT's).
KEY_BIASES = ("attention.self.key.bias", "attention.key.bias", "attention.k_lin.bias")


def key_biases(model) -> set[str]:
    """The names of ``model``'s key biases, whose true gradient is exactly 0."""
    return {name for name, _ in model.named_parameters() if name.endswith(KEY_BIASES)}


def exactly_zero_gradients(model) -> set[str]:
    """Parameters whose true gradient is exactly 0, so two libraries return rounding noise.

    The key biases; for question answering also ``qa_outputs.bias`` and the bias of the last
    LayerNorm: each adds the same vector at every position, which shifts all T start scores
    (and all T end scores) of a row by one constant, and a softmax over positions ignores it.
    """
    names = key_biases(model)
    if isinstance(model, mb.BertForQuestionAnswering):
        last = model.config.num_hidden_layers - 1
        names |= {"qa_outputs.bias", f"bert.encoder.layer.{last}.output.LayerNorm.bias"}
    return names


def zero_gradient_partner(name: str) -> str:
    """The parameter whose gradient sets the scale for an exactly-zero gradient ``name``.

    A key bias is measured against the query bias of the same attention (its own value is
    rounding noise, which varies with the BLAS kernel); any other bias (the QA output bias,
    a LayerNorm bias) against the weight it is added to.
    """
    for key, query in (("key.bias", "query.bias"), ("k_lin.bias", "q_lin.bias")):
        if name.endswith("." + key):
            return name[: -len(key)] + query
    if name.endswith(".bias"):
        return name[: -len("bias")] + "weight"
    raise ValueError(f"name must end in '.bias', got {name!r}")


# Buffers transformers keeps in some state dicts that are no parameters (recent versions do
# not save them; older ones listed them in state_dict()).
HF_BUFFERS = ("embeddings.position_ids", "embeddings.token_type_ids")


def assert_same_keys(ours, theirs) -> None:
    """minibert's state-dict keys are transformers' (its buffers aside)."""
    theirs = {name for name in theirs if not name.endswith(HF_BUFFERS)}
    assert set(ours) == theirs, (f"only in minibert: {sorted(set(ours) - theirs)}; "
                                 f"only in transformers: {sorted(theirs - set(ours))}")


def hf_config(hf, config):
    """transformers' config of the same class name and fields, with eager attention (so that
    the attention maps are returned); ``hf`` holds the module ``transformers``."""
    fields = {k: v for k, v in config.to_dict().items() if k != "model_type"}
    return getattr(hf.transformers, type(config).__name__)(**fields, attn_implementation="eager")


def twin_of(hf, model, hf_class=None):
    """transformers' model of the same class (or ``hf_class``) and config, holding
    ``model``'s weights, with its dtype, in eval mode. ``hf`` holds the modules ``torch``
    and ``transformers`` (a namespace: this file imports neither).

    Asserts that both state dicts have the same keys (transformers' buffers aside; the tied
    alias keys are in both) and copies every array with ``torch.from_numpy``.
    """
    torch = hf.torch
    if hf_class is None:
        hf_class = getattr(hf.transformers, type(model).__name__, None)
        if hf_class is None:
            raise ValueError(f"model must be a minibert class that transformers also has, "
                             f"got {type(model).__name__}")
    kwargs = {}
    if type(model).__name__ in ("BertModel", "AlbertModel"):
        kwargs["add_pooling_layer"] = model.pooler is not None
    with torch.random.fork_rng():
        torch.manual_seed(0)  # transformers draws its own initial weights, all overwritten
        twin = hf_class(hf_config(hf, model.config), **kwargs)
    twin = twin.to(torch.float64 if np.dtype(model.dtype) == np.float64 else torch.float32)
    ours, theirs = model.state_dict(), twin.state_dict()
    assert_same_keys(ours, theirs)
    with torch.no_grad():
        for name, value in theirs.items():
            if name in ours:
                value.copy_(torch.from_numpy(ours[name]))
    return twin.eval()


# ---- safetensors' arrays (tests/io/test_safetensors.py and its parity file) -------------------

def random_array(dtype, shape, rng):
    """Random values over the dtype's whole range; floats also get inf, nan, -0 and subnormals."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return np.asarray(rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True))
    tiny = np.finfo(dtype).smallest_subnormal
    magnitudes = 10.0 ** rng.integers(-3, 4, size=shape)
    values = np.asarray(rng.standard_normal(shape) * magnitudes, dtype=dtype)
    specials = np.array([np.inf, -np.inf, np.nan, -0.0, tiny, -3 * tiny], dtype=dtype)
    flat = values.reshape(-1)
    flat[: min(flat.size, specials.size)] = specials[: flat.size]
    return values


def same_array(loaded, original):
    """Same dtype, shape and bytes (so NaNs and -0.0 count too)."""
    original = np.asarray(original)
    return (loaded.dtype == original.dtype and loaded.shape == original.shape
            and loaded.tobytes() == np.ascontiguousarray(original).tobytes())
