"""The assignment's tasks, in teaching order: one student file and one function per task.

Each task names the function a student writes, the file it lives in, its signature, the
points it is worth and a stub: the signature, a docstring with inputs, outputs, shapes and
the forward it inverts, and ``raise NotImplementedError``. The checks that grade a task are
in ``minibert.assignment.checks``; the solutions are instructor material
(``instructor/solutions.py`` in the repository, not in the installed package).
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Task", "TASKS", "TASK_NAMES", "EXTRA_FUNCTIONS", "LAYER_BACKWARDS", "task_by_name",
           "stub_source"]


@dataclass(frozen=True)
class Task:
    """One graded function: where it lives, how it is called and what it is worth."""

    name: str  # the task's name in the grader's table
    function: str  # the function the student writes
    file: str  # the student file that holds it, relative to the workspace
    arguments: tuple[str, ...]  # the positional arguments the checks pass it
    points: int
    part: str  # "layers", "composition" or "training"
    teaches: str  # one line for the lecturer's table
    stub: str  # the function's source in the student tree


_HEADER = '''"""{title}

Write the body of the function below; keep its name and signature. Run the public tests
with ``pytest`` in this folder, or ``minibert assignment grade .`` for the graded table.
Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size, V vocabulary size, C classes.
"""

import numpy as np
'''

TASKS: tuple[Task, ...] = (
    Task("linear", "linear_backward", "linear.py", ("dout", "cache"), 5, "layers",
         "matrix calculus of y = x W^T + b over any leading axes; gradients summed over rows",
         '''
def linear_backward(dout, cache):
    """Backward of ``minibert.functional.linear_forward``: y = x @ weight.T + bias.

    Inputs: dout (..., out), the gradient of the loss with respect to y; cache, the
    forward's LinearCache with fields x (..., in), weight (out, in) and has_bias (bool).
    Returns: dx (..., in), dweight (out, in), dbias (out,) -- or None when has_bias is False.
    Every leading axis of x (batch, time, ...) is a row that used the same weight.
    """
    raise NotImplementedError("linear_backward")
'''),
    Task("embedding", "embedding_backward", "embedding.py", ("dout", "cache"), 5, "layers",
         "a lookup's gradient is a scatter-add: an id used twice receives both rows",
         '''
def embedding_backward(dout, cache):
    """Backward of ``minibert.functional.embedding_forward``: out = weight[ids].

    Inputs: dout (..., H); cache, the forward's EmbeddingCache with fields ids int (...),
    weight_shape (V, H) and dtype.
    Returns: dweight (V, H) with dtype cache.dtype. Rows that were not looked up get zeros;
    an id that occurs several times in ids receives the sum of all its rows of dout.
    """
    raise NotImplementedError("embedding_backward")
'''),
    Task("layernorm", "layernorm_backward", "layernorm.py", ("dout", "cache"), 8, "layers",
         "a normalisation couples a row: the mean and variance terms of dx",
         '''
def layernorm_backward(dout, cache):
    """Backward of ``minibert.functional.layernorm_forward`` over the last axis.

    Forward: mean and var over the last axis, rstd = 1 / sqrt(var + eps),
    x_hat = (x - mean) * rstd, out = x_hat * weight + bias.
    Inputs: dout (..., H); cache, the forward's LayerNormCache with fields
    x_hat (..., H), rstd (..., 1) and weight (H,).
    Returns: dx (..., H), dweight (H,), dbias (H,).
    """
    raise NotImplementedError("layernorm_backward")
'''),
    Task("gelu", "gelu_backward", "gelu.py", ("dout", "cache"), 5, "layers",
         "the product rule on x Phi(x), in the exact erf form and the tanh approximation",
         '''
def gelu_backward(dout, cache):
    """Backward of ``minibert.functional.gelu_forward``: out = x * Phi(x).

    Forward, cache.approximate == "none": Phi(x) = (1 + erf(x / sqrt(2))) / 2, the normal
    CDF; its derivative is the normal density phi(x) = exp(-x^2 / 2) / sqrt(2 pi).
    Forward, cache.approximate == "tanh": out = 0.5 x (1 + tanh(u)),
    u = sqrt(2 / pi) (x + 0.044715 x^3).
    Inputs: dout (...); cache, the forward's GeluCache with fields approximate, x (...),
    cdf (...) (Phi(x), erf form; None otherwise), tanh_inner (...) (tanh(u), tanh form;
    None otherwise) and pdf (...) (phi(x) = exp(-x^2 / 2) / sqrt(2 pi), erf form; None
    otherwise).
    Returns: dx (...).
    """
    raise NotImplementedError("gelu_backward")
'''),
    Task("softmax", "softmax_backward", "softmax.py", ("dout", "cache"), 6, "layers",
         "a Jacobian-vector product without building the Jacobian, along any axis",
         '''
def softmax_backward(dout, cache):
    """Backward of ``minibert.functional.softmax_forward`` along ``cache.axis``.

    Forward: probs = exp(x) / sum(exp(x)) along cache.axis (any axis, not only the last).
    Inputs: dout, same shape as x; cache, the forward's SoftmaxCache with fields
    probs (same shape) and axis (int).
    Returns: dx, same shape. Do not build the (C, C) Jacobian.
    """
    raise NotImplementedError("softmax_backward")
'''),
    Task("dropout", "dropout_backward", "dropout.py", ("dout", "cache"), 3, "layers",
         "inverted dropout: the same mask and the same 1/(1-p) scale on the way back",
         '''
def dropout_backward(dout, cache):
    """Backward of ``minibert.functional.dropout_forward`` (inverted dropout).

    Forward: out = x * keep / (1 - p) while training; the identity otherwise.
    Inputs: dout (...); cache, the forward's DropoutCache with fields keep (...) bool and
    scale (1 / (1 - p)) -- or None when the forward was the identity (eval mode, p = 0).
    Returns: dx (...). Never modify dout in place.
    """
    raise NotImplementedError("dropout_backward")
'''),
    Task("attention", "attention_backward", "attention.py", ("dout", "cache"), 10, "layers",
         "scaled dot-product attention through softmax, the 1/sqrt(D) scale and the mask",
         '''
def attention_backward(dout, cache):
    """Backward of ``minibert.functional.attention_forward``.

    Forward: scores = q @ k^T * scale (scale = 1 / sqrt(D)); masked keys set to -inf;
    attention_probs = softmax(scores) over the keys; dropped_probs = dropout(attention_probs);
    context = dropped_probs @ v.
    Inputs: dout (B, N, T, D); cache, the forward's AttentionCache with fields q, k, v
    (B, N, T, D), scale, attention_probs (B, N, T, T), dropout (a DropoutCache, or None when
    dropout was off) and dropped_probs (B, N, T, T).
    Returns: dq, dk, dv, each (B, N, T, D). A masked key receives exactly zero gradient.
    You may call your softmax_backward and dropout_backward (from softmax import ...), or
    minibert.functional's.
    """
    raise NotImplementedError("attention_backward")
'''),
    Task("cross_entropy", "cross_entropy_backward", "cross_entropy.py", ("dloss", "cache"), 6,
         "layers", "softmax minus one-hot, averaged over the labels that count (-100 ignored)",
         '''
def cross_entropy_backward(dloss, cache):
    """Backward of ``minibert.functional.cross_entropy_forward``.

    Forward: loss = -mean of log_probs[label] over the positions whose label is not -100
    (0 when every label is ignored).
    Inputs: dloss, a float (the gradient of the final loss with respect to this loss);
    cache, the forward's CrossEntropyCache with fields log_probs (..., C), safe_labels int
    (...) (ignored positions replaced by 0), valid bool (...) (False where the label was
    -100) and count (the number of valid labels).
    Returns: dlogits (..., C), zero at every ignored position.
    """
    raise NotImplementedError("cross_entropy_backward")
'''),
    Task("encoder_block", "encoder_block_backward", "encoder_block.py", ("dout", "cache"), 12,
         "composition", "one BERT layer in reverse: heads split and merged, two residual sums",
         '''
def encoder_block_backward(dout, cache):
    """Backward of ``minibert.assignment.blocks.encoder_block_forward``: one BERT layer.

    Forward (read blocks.py):
        q, k, v = linear(x) three times, split into heads (B, N, T, D)
        context = attention(q, k, v, mask); merged back to (B, T, H)
        attention_output = LayerNorm(x + linear(context))                 # residual 1
        out = LayerNorm(attention_output + linear(gelu(linear(attention_output))))  # residual 2
    Inputs: dout (B, T, H); cache, the forward's EncoderBlockCache (its fields name each
    step's cache: query, key, value, attention, attention_output_dense,
    attention_output_layernorm, intermediate_dense, intermediate_act, output_dense,
    output_layernorm; and num_heads).
    Returns: dx (B, T, H) and a dict with a gradient for every key of the forward's params
    (the same names, e.g. "attention.self.query.weight", same shapes).
    Use minibert.functional's backward pairs (or your own).
    """
    raise NotImplementedError("encoder_block_backward")
'''),
    Task("tied_decoder", "tied_mlm_backward", "tied_decoder.py", ("dlogits", "cache"), 8,
         "composition", "a shared weight: the embedding's and the decoder's gradients add up",
         '''
def tied_mlm_backward(dlogits, cache):
    """Backward of ``minibert.assignment.blocks.tied_mlm_forward``.

    Forward (read blocks.py): embedded = word_embeddings[ids];
    transformed = gelu(linear(embedded, transform.weight, transform.bias));
    logits = transformed @ word_embeddings.T + decoder.bias -- the decoder's weight IS the
    embedding table, as in BERT's masked-LM head.
    Inputs: dlogits (B, T, V); cache, the forward's TiedMLMCache (fields embedding,
    transform, activation, decoder: each step's cache).
    Returns: a dict with the gradient of every parameter: "word_embeddings" (V, H),
    "transform.weight" (H, H), "transform.bias" (H,), "decoder.bias" (V,).
    """
    raise NotImplementedError("tied_mlm_backward")
'''),
    Task("model_gradcheck", "check_model_gradients", "model_gradcheck.py",
         ("model", "compute_loss", "num_entries", "h", "seed"), 8, "composition",
         "centred differences on a whole BERT: sampling entries, restoring parameters",
         '''
def check_model_gradients(model, compute_loss, num_entries=10, h=1e-5, seed=0):
    """Gradient check of a whole model: analytic gradients against centred differences.

    Inputs: model, a minibert model in float64 with named_parameters(), named_gradients(),
    zero_grad() and backward() (the gradient of the loss of its last forward);
    compute_loss(), runs the model's forward and returns the scalar loss; num_entries, how
    many entries of each parameter to probe (chosen with np.random.default_rng(seed));
    h, the step of the centred difference (loss(p + h) - loss(p - h)) / 2h.
    Returns: a dict parameter name -> relative error ||a - n|| / max(1e-12, ||a|| + ||n||)
    between the analytic (a) and numerical (n) gradients on the probed entries, one entry
    per name of named_parameters(). Every parameter must be bit-for-bit unchanged after.
    """
    raise NotImplementedError("check_model_gradients")
'''),
    Task("adamw", "adamw_step", "adamw.py", ("param", "grad", "exp_avg", "exp_avg_sq", "lr",
                                            "step", "betas", "eps", "weight_decay"), 10, "training",
         "AdamW's decoupled weight decay, bias correction, and global-norm clipping",
         '''
def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, step, betas=(0.9, 0.999), eps=1e-6,
               weight_decay=0.01):
    """One AdamW update of one parameter array, in place (Loshchilov & Hutter, 2019).

    Weight decay is decoupled: the parameter shrinks by the factor (1 - lr * weight_decay)
    before the Adam step, instead of adding weight_decay * param to the gradient.
    m = beta1 m + (1 - beta1) grad; v = beta2 v + (1 - beta2) grad^2;
    param -= lr * (m / (1 - beta1^step)) / (sqrt(v / (1 - beta2^step)) + eps).
    Inputs: param, grad, exp_avg (m), exp_avg_sq (v): arrays of one shape, param, exp_avg
    and exp_avg_sq updated in place; lr; step, t = 1, 2, ...
    Returns: None.
    """
    raise NotImplementedError("adamw_step")


def clip_grad_norm(grads, max_norm):
    """Scale every gradient in place so that their global L2 norm is at most max_norm.

    total = the L2 norm of all gradients together (one vector, not one norm per array);
    when total > max_norm, multiply every gradient by max_norm / (total + 1e-6).
    Inputs: grads, a list of arrays; max_norm > 0. Returns: total (float), before clipping.
    """
    raise NotImplementedError("clip_grad_norm")
'''),
    Task("masking", "mask_tokens", "masking.py", ("token_ids", "rng", "special_ids", "mask_id",
                                                 "vocab_size", "masked_lm_prob"), 7, "training",
         "BERT's 15% targets, 80% [MASK] / 10% random / 10% kept, and -100 labels",
         '''
def mask_tokens(token_ids, rng, special_ids, mask_id, vocab_size, masked_lm_prob=0.15):
    """Choose masked-LM targets in one sequence and corrupt them, BERT's 80/10/10 rule.

    The candidates are the positions whose id is not in special_ids ([CLS], [SEP], [PAD],
    ...). Choose num = max(1, round(len(candidates) * masked_lm_prob)) distinct candidates,
    uniformly (every candidate equally likely). Each chosen position independently:
    with probability 0.8 becomes mask_id; 0.1 becomes an id drawn uniformly from the
    non-special ids in [0, vocab_size); 0.1 keeps its token.
    Inputs: token_ids int (T,) (not modified); rng, a np.random.Generator (the only source
    of randomness); special_ids, a set of ints; mask_id; vocab_size.
    Returns: input_ids int (T,) the corrupted copy; labels int (T,): the original id at each
    chosen position, -100 everywhere else.
    """
    raise NotImplementedError("mask_tokens")
'''),
    Task("nsp", "make_nsp_pairs", "nsp.py", ("documents", "rng"), 7, "training",
         "next-sentence pairs: 50% the true next sentence, 50% one from another document",
         '''
def make_nsp_pairs(documents, rng):
    """Build next-sentence-prediction pairs from documents.

    For every document and every sentence i but its last: with probability 0.5 the pair is
    (sentence i, sentence i + 1, label 0: B follows A); otherwise (sentence i, a sentence
    chosen uniformly from a document chosen uniformly among the OTHER documents, label 1).
    Inputs: documents, a list of documents, each a list of sentences (each a list of ints);
    rng, a np.random.Generator. Raises ValueError when there are fewer than 2 documents.
    Returns: a list of (sentence_a, sentence_b, label) tuples, documents in order.
    """
    raise NotImplementedError("make_nsp_pairs")
'''),
)

TASK_NAMES: tuple[str, ...] = tuple(task.name for task in TASKS)

# A task may ask for a second function in the same file: name -> positional arguments.
EXTRA_FUNCTIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "adamw": {"clip_grad_norm": ("grads", "max_norm")},
}

LAYER_BACKWARDS: tuple[str, ...] = tuple(t.function for t in TASKS if t.part == "layers")


def task_by_name(name: str) -> Task:
    """The task called ``name``; ValueError naming the allowed names otherwise."""
    for task in TASKS:
        if task.name == name:
            return task
    raise ValueError(f"task must be one of {list(TASK_NAMES)}, got {name!r}")


def stub_source(task: Task) -> str:
    """The student file of ``task``: a header, then the stub."""
    title = f"Task {TASK_NAMES.index(task.name) + 1}: {task.function} -- {task.teaches}."
    return _HEADER.format(title=title) + "\n" + task.stub
