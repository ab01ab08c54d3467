"""A catalogue of typical student mistakes, and a class of generated submissions.

``MISTAKES`` holds whole student files, each with one mistake students make (the issue
tracker and public from-scratch projects supplied them): the task it costs and the words
the grader's hint says. ``BROKEN`` holds files that cannot be graded as they are (a syntax
error, a top-level NameError, a loop, an autodiff import). ``write_class`` writes a folder
of submissions from them for ``minibert assignment grade-all`` (a rehearsal before a real
class, and what tests/assignment/test_mistakes.py and benchmarks/grade_all.py grade).
"""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from minibert.assignment.tasks import task_by_name
from minibert.assignment.workspace import MARKER

__all__ = ["MISTAKES", "BROKEN", "write_class", "write_submission"]

# (case id, task, the student's file, words the grader's line holds)
MISTAKES = [
    ("cross-entropy-ignored-rows-not-zeroed", "cross_entropy", """
        import numpy as np

        def cross_entropy_backward(dloss, cache):
            dlogits = np.exp(cache.log_probs)
            labels = cache.safe_labels[..., None]
            np.put_along_axis(dlogits, labels,
                              np.take_along_axis(dlogits, labels, axis=-1) - 1.0, axis=-1)
            return dlogits * dloss / cache.count
        """, "must get zero gradient: multiply by cache.valid"),
    ("cross-entropy-dloss-ignored", "cross_entropy", """
        import numpy as np

        def cross_entropy_backward(dloss, cache):
            dlogits = np.exp(cache.log_probs)
            labels = cache.safe_labels[..., None]
            np.put_along_axis(dlogits, labels,
                              np.take_along_axis(dlogits, labels, axis=-1) - 1.0, axis=-1)
            return dlogits * cache.valid[..., None] / cache.count
        """, "dloss is ignored: multiply by it"),
    ("attention-recomputes-probabilities-without-the-mask", "attention", """
        import numpy as np
        from minibert.functional import softmax_forward

        def attention_backward(dout, cache):
            q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
            probs, _ = softmax_forward((q @ k.swapaxes(-1, -2)) * scale)
            dv = probs.swapaxes(-1, -2) @ dout
            d_probs = dout @ v.swapaxes(-1, -2)
            d_scores = probs * (d_probs - (d_probs * probs).sum(-1, keepdims=True))
            return (d_scores @ k) * scale, (d_scores.swapaxes(-1, -2) @ q) * scale, dv
        """, "recomputed the probabilities without the mask"),
    ("attention-softmax-backward-on-dropped-probabilities", "attention", """
        from minibert.functional import dropout_backward

        def attention_backward(dout, cache):
            q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
            dv = cache.dropped_probs.swapaxes(-1, -2) @ dout
            d_probs = dropout_backward(dout @ v.swapaxes(-1, -2), cache.dropout)
            p = cache.dropped_probs
            d_scores = p * (d_probs - (d_probs * p).sum(-1, keepdims=True))
            return (d_scores @ k) * scale, (d_scores.swapaxes(-1, -2) @ q) * scale, dv
        """, "not the dropped probabilities"),
    ("attention-dv-from-probabilities-before-dropout", "attention", """
        from minibert.functional import dropout_backward

        def attention_backward(dout, cache):
            q, k, v, scale = cache.q, cache.k, cache.v, cache.scale
            dv = cache.attention_probs.swapaxes(-1, -2) @ dout
            d_probs = dropout_backward(dout @ v.swapaxes(-1, -2), cache.dropout)
            p = cache.attention_probs
            d_scores = p * (d_probs - (d_probs * p).sum(-1, keepdims=True))
            return (d_scores @ k) * scale, (d_scores.swapaxes(-1, -2) @ q) * scale, dv
        """, "the ones after dropout (cache.dropped_probs)"),
    ("softmax-jacobian-diagonal-only", "softmax", """
        def softmax_backward(dout, cache):
            return dout * cache.probs * (1.0 - cache.probs)
        """, "only the Jacobian's diagonal"),
    ("softmax-sum-along-the-last-axis", "softmax", """
        def softmax_backward(dout, cache):
            probs = cache.probs
            return probs * (dout - (dout * probs).sum(axis=-1, keepdims=True))
        """, "along cache.axis"),
    ("adamw-weight-decay-after-the-step", "adamw", """
        import math
        import numpy as np

        def adamw_step(param, grad, exp_avg, exp_avg_sq, lr, step, betas=(0.9, 0.999),
                       eps=1e-6, weight_decay=0.01):
            beta1, beta2 = betas
            exp_avg[...] = beta1 * exp_avg + (1 - beta1) * grad
            exp_avg_sq[...] = beta2 * exp_avg_sq + (1 - beta2) * grad * grad
            m_hat = exp_avg / (1 - beta1**step)
            v_hat = exp_avg_sq / (1 - beta2**step)
            param -= lr * m_hat / (np.sqrt(v_hat) + eps)
            param *= 1 - lr * weight_decay

        def clip_grad_norm(grads, max_norm):
            total = math.sqrt(sum(float((g * g).sum()) for g in grads))
            if total > max_norm:
                for g in grads:
                    g *= max_norm / (total + 1e-6)
            return total
        """, "weight decay applied after the Adam step"),
    ("gelu-always-the-erf-form", "gelu", """
        import math
        import numpy as np
        from minibert.functional import erf

        def gelu_backward(dout, cache):
            x = cache.x
            cdf = 0.5 * (1.0 + erf(x / math.sqrt(2.0)))
            return dout * (cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
        """, "the erf form's derivative for cache.approximate == 'tanh'"),
    ("gelu-erf-form-reading-cache-cdf", "gelu", """
        import math
        import numpy as np

        def gelu_backward(dout, cache):
            x = cache.x
            return dout * (cache.cdf + x * np.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi))
        """, "raised TypeError on the tanh form"),
    ("embedding-float64-gradient-for-a-float32-table", "embedding", """
        import numpy as np

        def embedding_backward(dout, cache):
            dweight = np.zeros(cache.weight_shape)
            np.add.at(dweight, cache.ids.reshape(-1), dout.reshape(-1, cache.weight_shape[1]))
            return dweight
        """, "dtype float64 for a float32 table"),
    ("gradient-checker-without-zero-grad", "model_gradcheck", """
        import numpy as np

        def check_model_gradients(model, compute_loss, num_entries=10, h=1e-5, seed=0):
            rng = np.random.default_rng(seed)
            compute_loss()
            model.backward()
            analytic = {n: g.copy() for n, g in model.named_gradients()}
            errors = {}
            for name, value in model.named_parameters():
                flat = value.reshape(-1)
                probe = rng.choice(flat.size, size=min(num_entries, flat.size), replace=False)
                numeric = []
                for i in probe:
                    saved = flat[i]
                    flat[i] = saved + h
                    plus = compute_loss()
                    flat[i] = saved - h
                    minus = compute_loss()
                    flat[i] = saved
                    numeric.append((plus - minus) / (2 * h))
                a, n = analytic[name].reshape(-1)[probe], np.array(numeric)
                errors[name] = float(np.linalg.norm(a - n)
                                     / max(1e-12, np.linalg.norm(a) + np.linalg.norm(n)))
            return errors
        """, "model.zero_grad() was never called"),
    ("gradient-checker-restoring-by-arithmetic", "model_gradcheck", """
        import numpy as np

        def check_model_gradients(model, compute_loss, num_entries=10, h=1e-5, seed=0):
            rng = np.random.default_rng(seed)
            compute_loss()
            model.zero_grad()
            model.backward()
            analytic = {n: g.copy() for n, g in model.named_gradients()}
            errors = {}
            for name, value in model.named_parameters():
                flat = value.reshape(-1)
                probe = rng.choice(flat.size, size=min(num_entries, flat.size), replace=False)
                numeric = []
                for i in probe:
                    flat[i] += h
                    plus = compute_loss()
                    flat[i] -= 2 * h
                    minus = compute_loss()
                    flat[i] += h
                    numeric.append((plus - minus) / (2 * h))
                a, n = analytic[name].reshape(-1)[probe], np.array(numeric)
                errors[name] = float(np.linalg.norm(a - n)
                                     / max(1e-12, np.linalg.norm(a) + np.linalg.norm(n)))
            return errors
        """, "restore the saved value (flat[i] = original)"),
    ("linear-float32-result", "linear", """
        import numpy as np

        def linear_backward(dout, cache):
            weight = cache.weight.astype(np.float32)
            rows = dout.reshape(-1, dout.shape[-1]).astype(np.float32)
            dx = (rows @ weight).reshape(*dout.shape[:-1], weight.shape[1])
            dweight = rows.T @ cache.x.reshape(-1, cache.x.shape[-1]).astype(np.float32)
            dbias = rows.sum(axis=0) if cache.has_bias else None
            return dx, dweight, dbias
        """, "dx is float32, expected float64"),
    ("layernorm-dout-changed-in-place", "layernorm", """
        def layernorm_backward(dout, cache):
            x_hat, rstd, weight = cache.x_hat, cache.rstd, cache.weight
            axes = tuple(range(dout.ndim - 1))
            dbias = dout.sum(axis=axes)
            dweight = (dout * x_hat).sum(axis=axes)
            dx = dout
            dx *= weight
            dx -= dx.mean(axis=-1, keepdims=True) + x_hat * (dx * x_hat).mean(axis=-1,
                                                                            keepdims=True)
            dx *= rstd
            return dx, dweight, dbias
        """, "changed dout in place"),
    ("softmax-dout-changed-in-place", "softmax", """
        def softmax_backward(dout, cache):
            probs, axis = cache.probs, cache.axis
            dout -= (dout * probs).sum(axis=axis, keepdims=True)
            dout *= probs
            return dout
        """, "changed dout in place"),
    ("gelu-tanh-form-for-both", "gelu", """
        import numpy as np

        def gelu_backward(dout, cache):
            x = cache.x
            root = np.sqrt(2.0 / np.pi)
            t = np.tanh(root * (x + 0.044715 * x ** 3))
            du_dx = root * (1.0 + 3 * 0.044715 * x * x)
            return dout * (0.5 * (1.0 + t) + 0.5 * x * (1.0 - t * t) * du_dx)
        """, "the tanh form's derivative (GELU's tanh approximation"),
]



# (case id, task, the student's file, words the grader's line holds)
BROKEN = [
    ("syntax-error", "linear", """
        import numpy as np

        def linear_backward(dout, cache):
            dx = dout @ cache.weight)
            return dx, None, None
        """, "linear.py line 4: SyntaxError"),
    ("top-level-name-error", "gelu", """
        import numpy as np

        undefined_helper()

        def gelu_backward(dout, cache):
            return dout
        """, "gelu.py line 3: NameError while loading gelu.py"),
    ("infinite-loop", "nsp", """
        def make_nsp_pairs(documents, rng):
            while True:
                pass
        """, "exceeded while the checks ran (an infinite loop?)"),
    ("wrong-signature", "layernorm", """
        def layernorm_backward(dout):
            return dout
        """, "has the wrong signature"),
    ("minibert-s-own-answer", "layernorm", """
        from minibert.functional import layernorm_backward  # noqa: F401
        """, "ok"),
]


def write_submission(target, solutions, files: dict[str, str] | None = None,
                     marker: bool = True) -> Path:
    """A submission at ``target``: the instructor's ``solutions`` folder copied, then some
    files replaced by a student's text (file name -> source, its indentation removed).

    With ``marker`` the workspace's marker file comes too (``minibert assignment grade``
    needs it); without it, the folder is what a course's site hands in. Returns ``target``.
    """
    target, solutions = Path(target), Path(solutions)
    target.mkdir(parents=True)
    for path in solutions.iterdir():
        if path.suffix == ".py" and path.name != "test_public.py" or (
                marker and path.name == MARKER):
            shutil.copyfile(path, target / path.name)
    for name, text in (files or {}).items():
        (target / name).write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return target


def write_class(folder, solutions, count: int = 30) -> list[tuple[str, str]]:
    """Write ``count`` submissions into ``folder`` (one subfolder each), from the instructor's
    ``solutions`` folder: two correct, then one per mistake and per broken file, in turn.

    Returns (submission name, what it holds) in name order. The submissions carry no
    workspace marker, as files handed in through a course's site would not.
    """
    folder, solutions = Path(folder), Path(solutions)
    folder.mkdir(parents=True, exist_ok=True)
    cases = [("correct", None, None)] * 2 + [(c[0], c[1], c[2]) for c in MISTAKES + BROKEN]
    written = []
    for index in range(count):
        case, task, source = cases[index % len(cases)]
        name = f"student{index + 1:03d}"
        files = {} if task is None else {task_by_name(task).file: source}
        write_submission(folder / name, solutions, files, marker=False)
        written.append((name, case))
    return written
