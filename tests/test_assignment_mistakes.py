"""Typical student mistakes, each written as a student would: the task it costs, the hint's
words, the score.

Every file here is a whole student file (not a patch of the solutions), so the cases read as
what a student hands in and do not depend on the text of minibert's own backward passes.
``PUBLIC`` mistakes are caught by the public checks alone (what the student runs); the
report of a workspace holding one of them costs exactly its task's points.
"""

import shutil
import textwrap
from pathlib import Path

import pytest

from minibert.assignment import TASKS, check_task, create_workspace, grade_task, task_by_name

SEED = 4321


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("course") / "hw", instructor=True, seed=SEED)


def _student(tree: Path, target: Path, **files: str) -> Path:
    """The solutions with some files replaced by a student's text (file name -> source)."""
    shutil.copytree(tree / "solutions", target)
    for name, text in files.items():
        (target / name).write_text(textwrap.dedent(text).lstrip())
    return target


# (case id, task, the student's file, words the grader's line must hold)
PUBLIC = [
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
]


@pytest.mark.parametrize("case,task,source,said", PUBLIC, ids=[c[0] for c in PUBLIC])
def test_public_checks_name_the_mistake(tree, tmp_path, case, task, source, said):
    spec = task_by_name(task)
    student = _student(tree, tmp_path / "s", **{spec.file: source})
    passed, message = grade_task(student, task)  # the public checks alone
    assert not passed
    assert message.startswith(spec.function.split("_step")[0]), message
    assert said in message, message
    assert "\n" not in message


@pytest.mark.slow
def test_a_planted_mistake_costs_exactly_its_task(tree, tmp_path):
    """The whole grader (processes, hidden tests) on one mistake: one task's points lost."""
    from minibert.assignment import grade

    case = PUBLIC[0]
    student = _student(tree, tmp_path / "one", **{task_by_name(case[1]).file: case[2]})
    report = grade(student, hidden=tree / "hidden")
    rows = {row.task: row for row in report.rows}
    assert report.total == 100 - task_by_name(case[1]).points
    assert case[3] in rows[case[1]].message
    assert all(row.passed for row in report.rows if row.task != case[1])


def test_the_solutions_pass_every_case_above(tree):
    """The same checks pass minibert's own answers, with the hidden tests too."""
    for task in sorted({case[1] for case in PUBLIC}):
        assert grade_task(tree / "solutions", task, hidden_seed=SEED) == (True, "ok"), task


def test_every_task_is_in_the_handout_s_hidden_list():
    from minibert.assignment.handout import HIDDEN_CHECKS

    assert set(HIDDEN_CHECKS) == {task.name for task in TASKS}


def test_flags_do_not_change_the_score(tree, tmp_path):
    student = _student(tree, tmp_path / "f", **{"layernorm.py": """
        from minibert.functional import layernorm_backward  # noqa: F401
        """})
    result = check_task(student, "layernorm")
    assert (result.passed, result.message) == (True, "ok")
    assert any("imports minibert's own layernorm_backward" in flag for flag in result.flags)
