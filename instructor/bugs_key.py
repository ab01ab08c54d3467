"""The bug lab's key (instructor material: not in the installed package).

What each numbered bug of ``minibert/assignment/bugs.py``'s lab file is: the planted line,
its fix and what it breaks; ``instructor_notes`` is ``solutions/BUGS.md`` of the instructor
tree and ``fixed_source`` the lab file with every bug fixed.
"""

from __future__ import annotations

from dataclasses import dataclass

from minibert.assignment.bugs import BUG_COUNT, buggy_source

__all__ = ["BUGS", "Bug", "instructor_notes", "fixed_source"]


@dataclass(frozen=True)
class Bug:
    name: str
    planted: str  # the buggy line(s) in the lab file
    fixed: str  # the same line(s) fixed
    symptom: str  # what the grader says while the bug is there


BUGS: tuple[Bug, ...] = (
    Bug("inverted_mask", "np.where(mask == 0, scores, -np.inf)",
        "np.where(mask != 0, scores, -np.inf)",
        "attention_forward: padded keys get probability, real ones none (inverted mask)"),
    Bug("ignore_index_as_index",
        "labels[..., None], axis=-1)[..., 0]\n    loss = -picked.sum()",
        "safe_labels[..., None], axis=-1)[..., 0]\n    loss = -(picked * valid).sum()",
        "cross_entropy_forward: the loss differs from minibert's when labels hold -100"),
    Bug("missing_scale", "    scale = 1.0\n", "    scale = 1.0 / np.sqrt(q.shape[-1])\n",
        "attention_forward: the context differs from minibert's without a mask"),
    Bug("buffered_add",
        "dweight[cache.ids.reshape(-1)] += dout.reshape(-1, cache.weight_shape[1])",
        "np.add.at(dweight, cache.ids.reshape(-1), dout.reshape(-1, cache.weight_shape[1]))",
        "embedding_backward: a repeated id receives only one of its rows"),
    Bug("assigned_shared_weight",
        'self.grads["word_embeddings"] = embedding_backward(',
        'self.grads["word_embeddings"] += embedding_backward(',
        "TinyMaskedLM.backward: word_embeddings' gradient is off (a shared weight)"),
    Bug("missing_variance_term",
        "dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True))",
        "dx = rstd * (dx_hat - dx_hat.mean(axis=-1, keepdims=True)\n"
        "                 - x_hat * (dx_hat * x_hat).mean(axis=-1, keepdims=True))",
        "layernorm_backward: dx fails the gradient check"),
)

assert len(BUGS) == BUG_COUNT


def instructor_notes() -> str:
    """The lecturer's list: each bug's number, where it is, what it breaks, and its fix."""
    lines = ["# The bug lab: the lecturer's list (keep it private)", "",
             f"The student's report numbers the bugs (bug 1 ... bug {len(BUGS)}) and says "
             f"only \"still there\" or \"fixed\". This is what each number is.", ""]
    for number, bug in enumerate(BUGS, 1):
        lines += [f"## bug {number}: {bug.name}", "", f"What it breaks: {bug.symptom}.", "",
                  "Planted:", "", *[f"    {line}" for line in bug.planted.strip().splitlines()],
                  "", "Fixed:", "", *[f"    {line}" for line in bug.fixed.strip().splitlines()],
                  ""]
    return "\n".join(lines)


def fixed_source() -> str:
    """The lab file with every bug fixed (the instructor's copy)."""
    text = buggy_source()
    for bug in BUGS:
        text = text.replace(bug.planted, bug.fixed)
    return text
