"""Solutions to the exercises of notebooks/14_layer_by_hand.ipynb: one BERT layer, forward and
backward with dropout, and an AdamW step.

Try the exercises first. The derivations are in the notebook and, in long form,
in docs/backprop.md (sections *attention*, *softmax*, *dropout*, *layernorm*, *gelu*). The
layer computes what ``minibert.flat_layer.bert_layer_forward`` and ``BertLayer`` compute,
with dropout at BERT's three places in a layer: on the attention probabilities, after
``attention.output.dense`` and after ``output.dense``.

Dimension legend: B batch, T sequence length, H hidden size, N heads, D head size (H / N),
I intermediate size.
"""

import math

import numpy as np

from minibert import functional as F


def split_heads(x, num_heads):
    """(B, T, H) -> (B, N, T, D)."""
    batch, seq, hidden = x.shape
    return x.reshape(batch, seq, num_heads, hidden // num_heads).transpose(0, 2, 1, 3)


def merge_heads(x):
    """(B, N, T, D) -> (B, T, H)."""
    batch, heads, seq, size = x.shape
    return x.transpose(0, 2, 1, 3).reshape(batch, seq, heads * size)


def dropout_with(x, keep, drop_p):
    """Dropout with a given keep mask: the kept units scaled by 1/(1 - p). Its backward is the
    same function applied to the upstream gradient (the mask and the scale are constants)."""
    if keep is None:
        return x
    return x * keep / (1.0 - drop_p)


def my_layer_forward(x, p, mask, num_heads, keep=None, drop_p=0.0):
    """One post-LN BERT layer. x (B, T, H); p, the parameters by their HF names; mask
    (B, 1, 1, T), nonzero = may attend; keep, None (no dropout) or a dict of boolean keep
    masks {"attention_probs": (B, N, T, T), "attention_output": (B, T, H),
    "output": (B, T, H)} with drop probability drop_p. Returns out (B, T, H) and a cache."""
    keep = keep or {}
    c = {"num_heads": num_heads, "drop_p": drop_p, "keep": keep}
    # q, k, v: three projections of the same x, split into heads
    q, c["query"] = F.linear_forward(x, p["attention.self.query.weight"],
                                     p["attention.self.query.bias"])  # (B, T, H)
    k, c["key"] = F.linear_forward(x, p["attention.self.key.weight"],
                                   p["attention.self.key.bias"])  # (B, T, H)
    v, c["value"] = F.linear_forward(x, p["attention.self.value.weight"],
                                     p["attention.self.value.bias"])  # (B, T, H)
    q, k, v = (split_heads(a, num_heads) for a in (q, k, v))  # (B, N, T, D)
    scale = 1.0 / math.sqrt(q.shape[-1])
    scores = (q @ k.swapaxes(-1, -2)) * scale  # (B, N, T, T)
    scores = np.where(mask == 0, -np.inf, scores)  # a masked key can never be chosen
    shifted = np.exp(scores - scores.max(axis=-1, keepdims=True))  # (B, N, T, T)
    probs = shifted / shifted.sum(axis=-1, keepdims=True)  # each query's row sums to 1
    dropped = dropout_with(probs, keep.get("attention_probs"), drop_p)  # (B, N, T, T)
    context = dropped @ v  # (B, N, T, D)
    attended, c["attention_dense"] = F.linear_forward(
        merge_heads(context), p["attention.output.dense.weight"],
        p["attention.output.dense.bias"])  # (B, T, H)
    attended = dropout_with(attended, keep.get("attention_output"), drop_p)
    # residual 1, then LayerNorm
    attention_output, c["attention_layernorm"] = F.layernorm_forward(
        x + attended, p["attention.output.LayerNorm.weight"],
        p["attention.output.LayerNorm.bias"])  # (B, T, H)
    # feed-forward: H -> I, GELU (exact), I -> H
    hidden, c["intermediate"] = F.linear_forward(attention_output, p["intermediate.dense.weight"],
                                                 p["intermediate.dense.bias"])  # (B, T, I)
    activated, c["gelu"] = F.gelu_forward(hidden)  # (B, T, I)
    ffn, c["output_dense"] = F.linear_forward(activated, p["output.dense.weight"],
                                              p["output.dense.bias"])  # (B, T, H)
    ffn = dropout_with(ffn, keep.get("output"), drop_p)
    # residual 2, then LayerNorm
    out, c["output_layernorm"] = F.layernorm_forward(attention_output + ffn,
                                                     p["output.LayerNorm.weight"],
                                                     p["output.LayerNorm.bias"])  # (B, T, H)
    c.update(q=q, k=k, v=v, scale=scale, probs=probs, dropped=dropped)
    return out, c


def my_layer_backward(dout, c):
    """dout (B, T, H) and the forward's cache -> dx (B, T, H), {name: gradient}."""
    keep, drop_p, grads = c["keep"], c["drop_p"], {}
    # forward: out = LayerNorm(attention_output + ffn)
    d_sum2, grads["output.LayerNorm.weight"], grads["output.LayerNorm.bias"] = \
        F.layernorm_backward(dout, c["output_layernorm"])  # (B, T, H)
    # forward: ffn = dropout(output.dense(activated))
    d_ffn = dropout_with(d_sum2, keep.get("output"), drop_p)
    d_activated, grads["output.dense.weight"], grads["output.dense.bias"] = \
        F.linear_backward(d_ffn, c["output_dense"])  # (B, T, I)
    # forward: activated = gelu(hidden)
    d_hidden = F.gelu_backward(d_activated, c["gelu"])  # (B, T, I)
    # forward: hidden = intermediate.dense(attention_output)
    d_attention_output, grads["intermediate.dense.weight"], grads["intermediate.dense.bias"] = \
        F.linear_backward(d_hidden, c["intermediate"])  # (B, T, H)
    d_attention_output = d_attention_output + d_sum2  # residual 2
    # forward: attention_output = LayerNorm(x + attended)
    d_sum1, grads["attention.output.LayerNorm.weight"], grads["attention.output.LayerNorm.bias"] = \
        F.layernorm_backward(d_attention_output, c["attention_layernorm"])  # (B, T, H)
    # forward: attended = dropout(attention.output.dense(merge_heads(context)))
    d_attended = dropout_with(d_sum1, keep.get("attention_output"), drop_p)
    d_merged, grads["attention.output.dense.weight"], grads["attention.output.dense.bias"] = \
        F.linear_backward(d_attended, c["attention_dense"])  # (B, T, H)
    d_context = split_heads(d_merged, c["num_heads"])  # (B, N, T, D)
    # forward: context = dropped @ v
    dv = c["dropped"].swapaxes(-1, -2) @ d_context  # (B, N, T, D)
    d_dropped = d_context @ c["v"].swapaxes(-1, -2)  # (B, N, T, T)
    # forward: dropped = dropout(probs)
    d_probs = dropout_with(d_dropped, keep.get("attention_probs"), drop_p)
    # forward: probs = softmax(scores) per row; the Jacobian collapses to one line
    probs = c["probs"]
    d_scores = probs * (d_probs - (d_probs * probs).sum(axis=-1, keepdims=True))  # (B, N, T, T)
    # forward: scores = q @ k^T * scale
    dq = (d_scores @ c["k"]) * c["scale"]  # (B, N, T, D)
    dk = (d_scores.swapaxes(-1, -2) @ c["q"]) * c["scale"]  # (B, N, T, D)
    # forward: q, k, v = query(x), key(x), value(x); x also reached the first sum directly
    dx = d_sum1.copy()  # residual 1
    for name, d_heads in (("query", dq), ("key", dk), ("value", dv)):
        d_x, grads[f"attention.self.{name}.weight"], grads[f"attention.self.{name}.bias"] = \
            F.linear_backward(merge_heads(d_heads), c[name])  # (B, T, H)
        dx = dx + d_x
    return dx, grads


def my_adamw_step(param, grad, m, v, lr, step, betas=(0.9, 0.999), eps=1e-8,
                  weight_decay=0.0):
    """One AdamW update of one parameter, in place (param, m and v change; returns None).

    step is the number of this update, 1, 2, ...; m and v start at zero.
    """
    beta1, beta2 = betas
    param *= 1.0 - lr * weight_decay  # decoupled weight decay: shrink first
    m *= beta1
    m += (1.0 - beta1) * grad  # running mean of the gradient
    v *= beta2
    v += (1.0 - beta2) * grad * grad  # running mean of its square
    m_hat = m / (1.0 - beta1**step)  # bias correction: m and v started at 0
    v_hat = v / (1.0 - beta2**step)
    param -= lr * m_hat / (np.sqrt(v_hat) + eps)
