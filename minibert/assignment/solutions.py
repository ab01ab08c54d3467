"""The instructor's solutions: the layer tasks come from ``minibert.functional`` itself.

For the eight layer tasks the solution file is the source of the reference backward in
``minibert.functional`` (read with ``inspect`` when the instructor tree is written, so it
is always the code the project tests); the other tasks' solutions are written here.
"""

from __future__ import annotations

import inspect
import math

import numpy as np

from minibert import functional as F
from minibert.assignment.blocks import merge_heads, split_heads
from minibert.assignment.tasks import Task

__all__ = ["solution_source", "encoder_block_backward", "tied_mlm_backward",
           "check_model_gradients", "adamw_step", "clip_grad_norm", "mask_tokens",
           "make_nsp_pairs"]


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


_LOCAL_SOLUTIONS = {
    "encoder_block_backward": encoder_block_backward,
    "tied_mlm_backward": tied_mlm_backward,
    "check_model_gradients": check_model_gradients,
    "adamw_step": adamw_step,
    "mask_tokens": mask_tokens,
    "make_nsp_pairs": make_nsp_pairs,
}


def _global_names(function) -> list[str]:
    """Module-level names of ``minibert.functional`` that ``function``'s code reads."""
    names = set()
    stack = [function.__code__]
    while stack:
        code = stack.pop()
        names.update(code.co_names)
        stack.extend(c for c in code.co_consts if inspect.iscode(c))
    module = vars(F)
    return sorted(n for n in names if n in module and n not in ("np", "math")
                  and not inspect.ismodule(module[n]))


def solution_source(task: Task) -> str:
    """The instructor's file for ``task``: working code with the stub's name and signature."""
    header = f'"""Solution: {task.function}."""\n\nimport math\n\nimport numpy as np\n'
    if task.name == "adamw":
        body = "\n\n" + inspect.getsource(adamw_step) + "\n\n" + inspect.getsource(clip_grad_norm)
        return header + body
    if task.function in _LOCAL_SOLUTIONS:
        function = _LOCAL_SOLUTIONS[task.function]
        imports = ("\nfrom minibert import functional as F\n"
                   "from minibert.assignment.blocks import merge_heads, split_heads\n"
                   if task.part == "composition" else "")
        return header + imports + "\n\n" + inspect.getsource(function)
    function = getattr(F, task.function)
    used = [n for n in _global_names(function) if n != task.function]
    imports = f"\nfrom minibert.functional import {', '.join(used)}\n" if used else ""
    return header + imports + "\n\n" + inspect.getsource(function)
