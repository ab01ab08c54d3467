"""The instructor's solutions: one clear function per task, the answer key (instructor material:
not in the installed package; ``minibert.assignment.instructor`` loads it from here).

Each task's solution file is the source of its function here (read with ``inspect`` when the
instructor tree is written), with the imports it needs. The layer backwards compute what
``minibert.functional``'s do (the tests grade both 100/100), written as a student would:
one step per line, each under the forward line it inverts. ``encoder_block_backward`` is
the flat page of one BERT layer's backward, the inverse of ``blocks.encoder_block_forward``.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from minibert import functional as F
from minibert.assignment.blocks import merge_heads, split_heads
from minibert.assignment.tasks import Task

__all__ = ["solution_source", "linear_backward", "embedding_backward", "layernorm_backward",
           "gelu_backward", "softmax_backward", "dropout_backward", "attention_backward",
           "cross_entropy_backward", "encoder_block_backward", "tied_mlm_backward",
           "check_model_gradients", "adamw_step", "clip_grad_norm", "mask_tokens",
           "make_nsp_pairs"]

_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_GELU_TANH_COEFF = 0.044715


def linear_backward(dout: np.ndarray, cache):
    """Gradients of the affine map: dx (..., in), dweight (out, in), dbias (out,) or None."""
    x, weight = cache.x, cache.weight
    out_features, in_features = weight.shape
    # forward: out = x @ weight.T + bias; matmul runs over every leading axis of x
    dx = dout @ weight  # (..., in)
    # each leading position is a row that used the same weight: sum over all of them
    rows_x = x.reshape(-1, in_features)  # (rows, in)
    rows_dout = dout.reshape(-1, out_features)  # (rows, out)
    dweight = rows_dout.T @ rows_x  # (out, in)
    dbias = rows_dout.sum(axis=0) if cache.has_bias else None  # (out,)
    return dx, dweight, dbias


def embedding_backward(dout: np.ndarray, cache):
    """Scatter-add the rows of dout back to the rows that were looked up. Returns dweight (V, H)."""
    rows, width = cache.weight_shape
    dweight = np.zeros((rows, width), dtype=cache.dtype)
    # forward: out = weight[ids]; an id used twice receives both gradients, so the rows
    # are added with np.add.at (dweight[ids] += dout would keep only one of them).
    np.add.at(dweight, cache.ids.reshape(-1), dout.reshape(-1, width))
    return dweight


def layernorm_backward(dout: np.ndarray, cache):
    """Returns dx (..., H), dweight (H,), dbias (H,)."""
    x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
    axes = tuple(range(dout.ndim - 1))  # every axis but the last: the rows
    # forward: out = x_hat * weight + bias
    dbias = dout.sum(axis=axes)  # (H,)
    dweight = (dout * x_hat).sum(axis=axes)  # (H,)
    dx_hat = dout * weight  # (..., H)
    # forward: x_hat = (x - mean) * rstd; mean and rstd depend on every x in the row, so
    # dx = rstd * (dx_hat - mean(dx_hat) - x_hat * mean(dx_hat * x_hat))
    dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)
                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))  # (..., H)
    return dx, dweight, dbias


def gelu_backward(dout: np.ndarray, cache):
    """Returns dx (...)."""
    x = cache.x
    if cache.approximate == "none":
        # forward: out = x * Phi(x);  d/dx = Phi(x) + x * phi(x), phi(x) = exp(-x^2/2) / sqrt(2 pi)
        pdf = np.exp(-0.5 * x * x) * _INV_SQRT_2PI  # phi(x)
        return dout * (cache.cdf + x * pdf)
    # forward: out = 0.5 x (1 + tanh(u)),  u = sqrt(2/pi) (x + c x^3)
    tanh_inner = cache.tanh_inner
    du_dx = _SQRT_2_OVER_PI * (1.0 + 3.0 * _GELU_TANH_COEFF * x * x)
    local = 0.5 * (1.0 + tanh_inner) + 0.5 * x * (1.0 - tanh_inner**2) * du_dx
    return dout * local


def softmax_backward(dout: np.ndarray, cache):
    """Returns dx: probs * (dout - sum(dout * probs)) along the softmax axis."""
    probs, axis = cache.probs, cache.axis
    return probs * (dout - (dout * probs).sum(axis=axis, keepdims=True))


def dropout_backward(dout: np.ndarray, cache):
    """Returns dx: dout through the same mask and scale (a copy of dout when cache is None)."""
    if cache is None:  # eval mode or p = 0: the forward was the identity
        return dout.copy()
    # forward: out = x * keep * scale; a dropped entry passes no gradient
    return np.where(cache.keep, dout * cache.scale, 0.0).astype(dout.dtype)


def attention_backward(dout: np.ndarray, cache):
    """Returns dq, dk, dv, each (B, N, T, D)."""
    q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
    probs, dropped = cache.attention_probs, cache.dropped_probs  # (B, N, T, T) each
    # forward: context[t] = sum over s of dropped[t, s] * v[s]
    dv = np.einsum("bnts,bntd->bnsd", dropped, dout)  # (B, N, T, D)
    d_dropped = np.einsum("bntd,bnsd->bnts", dout, v)  # (B, N, T, T)
    # forward: dropped = dropout(probs)
    d_probs = F.dropout_backward(d_dropped, cache.dropout)
    # forward: probs = softmax(scores) over the keys; a masked key has probability 0, so
    # its score gets gradient 0 and the mask needs no backward of its own.
    row_dot = np.einsum("bnts,bnts->bnt", d_probs, probs)[..., None]  # (B, N, T, 1)
    d_scores = probs * (d_probs - row_dot)  # (B, N, T, T)
    # forward: scores[t, s] = scale * q[t] . k[s]
    dq = scale * np.einsum("bnts,bnsd->bntd", d_scores, k)  # (B, N, T, D)
    dk = scale * np.einsum("bnts,bntd->bnsd", d_scores, q)  # (B, N, T, D)
    return dq, dk, dv


def cross_entropy_backward(dloss, cache):
    """Returns dlogits (..., C) = dloss * (softmax - one_hot) / count at valid positions, else 0."""
    probs = np.exp(cache.log_probs)  # softmax(logits), (..., C)
    if cache.count == 0:  # every label ignored: the loss is the constant 0
        return np.zeros_like(probs)
    # forward: loss = -(sum of log_probs[label] over valid positions) / count
    one_hot = np.arange(probs.shape[-1]) == cache.safe_labels[..., None]  # (..., C)
    weight = cache.valid[..., None] * (float(dloss) / cache.count)  # (..., 1)
    return ((probs - one_hot) * weight).astype(probs.dtype)


def encoder_block_backward(dout, cache):
    """Returns dx (B, T, H) and a dict of every parameter's gradient (see blocks.py)."""
    grads = {}

    def linear(name, d, linear_cache):
        dx, grads[f"{name}.weight"], grads[f"{name}.bias"] = F.linear_backward(d, linear_cache)
        return dx

    # forward: out = LayerNorm(attention_output + ffn)
    d_sum, grads["output.LayerNorm.weight"], grads["output.LayerNorm.bias"] = (
        F.layernorm_backward(dout, cache.output_layernorm))  # (B, T, H)
    # forward: ffn = output.dense(gelu(intermediate.dense(attention_output)))
    d_activated = linear("output.dense", d_sum, cache.output_dense)  # (B, T, I)
    d_intermediate = F.gelu_backward(d_activated, cache.intermediate_act)  # (B, T, I)
    d_attention_output = d_sum + linear("intermediate.dense", d_intermediate,
                                        cache.intermediate_dense)  # residual 2: both paths
    # forward: attention_output = LayerNorm(x + attention.output.dense(merged context))
    d_sum, grads["attention.output.LayerNorm.weight"], grads["attention.output.LayerNorm.bias"] = (
        F.layernorm_backward(d_attention_output, cache.attention_output_layernorm))
    d_context = linear("attention.output.dense", d_sum, cache.attention_output_dense)
    dq, dk, dv = F.attention_backward(split_heads(d_context, cache.num_heads), cache.attention)
    dx = d_sum.copy()  # residual 1: x reaches the LayerNorm directly
    for name, d_head, linear_cache in (("query", dq, cache.query), ("key", dk, cache.key),
                                       ("value", dv, cache.value)):
        dx += linear(f"attention.self.{name}", merge_heads(d_head), linear_cache)
    return dx, grads


def tied_mlm_backward(dlogits, cache):
    """Returns the gradient of every parameter of ``tied_mlm_forward``; the table's adds up."""
    grads = {}
    # forward: logits = activated @ word_embeddings.T + decoder.bias
    d_activated, d_table_decoder, grads["decoder.bias"] = F.linear_backward(dlogits, cache.decoder)
    d_transformed = F.gelu_backward(d_activated, cache.activation)
    d_embedded, grads["transform.weight"], grads["transform.bias"] = F.linear_backward(
        d_transformed, cache.transform)
    # forward: embedded = word_embeddings[ids]; the same table, so its two gradients add
    grads["word_embeddings"] = d_table_decoder + F.embedding_backward(d_embedded, cache.embedding)
    return grads


def check_model_gradients(model, compute_loss, num_entries=10, h=1e-5, seed=0):
    """Relative error of each parameter's gradient on ``num_entries`` probed entries."""
    rng = np.random.default_rng(seed)
    compute_loss()
    model.zero_grad()
    model.backward()
    analytic = {name: grad.copy() for name, grad in model.named_gradients()}
    errors = {}
    for name, value in model.named_parameters():
        flat = value.reshape(-1)  # a view: writing it perturbs the parameter
        probe = rng.choice(flat.size, size=min(num_entries, flat.size), replace=False)
        numeric = np.empty(len(probe))
        for k, index in enumerate(probe):
            original = flat[index]
            flat[index] = original + h
            plus = float(compute_loss())
            flat[index] = original - h
            minus = float(compute_loss())
            flat[index] = original
            numeric[k] = (plus - minus) / (2.0 * h)
        a = analytic[name].reshape(-1)[probe]
        errors[name] = float(np.linalg.norm(a - numeric)
                             / max(1e-12, np.linalg.norm(a) + np.linalg.norm(numeric)))
    return errors


def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, step, betas=(0.9, 0.999), eps=1e-6,
               weight_decay=0.01):
    """One AdamW update in place; the decay multiplies the parameter, not the gradient."""
    beta1, beta2 = betas
    param *= 1.0 - lr * weight_decay
    exp_avg[...] = beta1 * exp_avg + (1.0 - beta1) * grad
    exp_avg_sq[...] = beta2 * exp_avg_sq + (1.0 - beta2) * grad * grad
    m_hat = exp_avg / (1.0 - beta1**step)
    v_hat = exp_avg_sq / (1.0 - beta2**step)
    param -= lr * m_hat / (np.sqrt(v_hat) + eps)


def clip_grad_norm(grads, max_norm):
    """One global norm over every array; every array scaled by the same factor."""
    total = math.sqrt(sum(float(np.sum(g.astype(np.float64) ** 2)) for g in grads))
    if total > max_norm:
        for g in grads:
            g *= max_norm / (total + 1e-6)
    return total


def mask_tokens(token_ids, rng, special_ids, mask_id, vocab_size, masked_lm_prob=0.15):
    """BERT's 80/10/10 rule on ``round(candidates * masked_lm_prob)`` distinct targets."""
    token_ids = np.asarray(token_ids)
    candidates = np.flatnonzero(~np.isin(token_ids, list(special_ids)))
    num = max(1, round(len(candidates) * masked_lm_prob))
    chosen = rng.choice(candidates, size=num, replace=False)
    replacements = np.setdiff1d(np.arange(vocab_size), list(special_ids))
    input_ids = token_ids.copy()
    labels = np.full_like(token_ids, -100)
    labels[chosen] = token_ids[chosen]
    for position in chosen:
        draw = rng.random()
        if draw < 0.8:
            input_ids[position] = mask_id
        elif draw < 0.9:
            input_ids[position] = rng.choice(replacements)
    return input_ids, labels


def make_nsp_pairs(documents, rng):
    """Half true next sentences (label 0), half from another document (label 1)."""
    if len(documents) < 2:
        raise ValueError(f"documents must hold at least 2 documents, got {len(documents)}")
    pairs = []
    for index, document in enumerate(documents):
        for i in range(len(document) - 1):
            if rng.random() < 0.5:
                pairs.append((document[i], document[i + 1], 0))
            else:
                other = rng.integers(len(documents) - 1)
                other += other >= index  # skip the document itself
                sentences = documents[other]
                pairs.append((document[i], sentences[rng.integers(len(sentences))], 1))
    return pairs


_GELU_CONSTANTS = ("\n_SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)\n"
                   "_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)\n"
                   "_GELU_TANH_COEFF = 0.044715\n")


def solution_source(task: Task) -> str:
    """The instructor's file for ``task``: working code with the stub's name and signature."""
    header = f'"""Solution: {task.function}."""\n\nimport math\n\nimport numpy as np\n'
    if task.name == "adamw":
        body = "\n\n" + inspect.getsource(adamw_step) + "\n\n" + inspect.getsource(clip_grad_norm)
        return header + body
    function = globals()[task.function]
    imports = ""
    if task.part == "composition" or task.name == "attention":
        imports = "\nfrom minibert import functional as F\n"
        if task.name == "encoder_block":
            imports += "from minibert.assignment.blocks import merge_heads, split_heads\n"
    if task.name == "gelu":
        imports = _GELU_CONSTANTS
    return header + imports + "\n\n" + inspect.getsource(function)
