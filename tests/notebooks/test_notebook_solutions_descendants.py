"""The exercise solutions of notebook 13 (L2 normalisation's backward, a LoRA adapter's
gradients, ELECTRA's replaced-token labels and loss) pass the notebook's own check cells,
and those checks fail the usual mistakes."""

from __future__ import annotations

import numpy as np
import pytest
from test_notebook_solutions_layers import load_solution, notebook_check, stub

STEM = "13_descendants"
EXERCISES = {
    "l2": ("my_l2_normalize_backward", "check_l2_normalize_backward"),
    "lora": ("my_lora_backward", "check_lora_backward"),
    "rtd": ("my_rtd_loss", "check_rtd_loss"),
}


def no_projection(dout, unit, norm):
    return dout / norm  # forgets to remove the part along u


def unscaled_lora(dout, x, A, B, scaling):
    down = x @ A.T
    return (dout @ B @ A, (dout @ B).T @ x, dout.T @ down)  # scaling forgotten


def rtd_over_padding_too(original, corrupted, attention_mask, logits):
    labels = (corrupted != original).astype(int)
    softplus = np.maximum(logits, 0) + np.log1p(np.exp(-np.abs(logits)))
    return labels, float((softplus - logits * labels).mean())  # padding counted


@pytest.mark.parametrize("exercise", list(EXERCISES))
def test_solution_passes_and_stub_is_reported(exercise):
    student, check = EXERCISES[exercise]
    verdict, check_function = notebook_check(STEM, student, check,
                                             load_solution(STEM, student))
    assert verdict == "pass"
    assert check_function(stub) == "not implemented yet"


@pytest.mark.parametrize("exercise, mistake", [("l2", no_projection), ("lora", unscaled_lora),
                                               ("rtd", rtd_over_padding_too)])
def test_checks_fail_the_usual_mistakes(exercise, mistake):
    student, check = EXERCISES[exercise]
    _, check_function = notebook_check(STEM, student, check, load_solution(STEM, student))
    assert check_function(mistake).startswith("fail")


def rtd_padding_labelled(value):
    """The solution, with padding labelled ``value`` (0 as notebook 05 pads, or -100)."""
    solution = load_solution(STEM, "my_rtd_loss")

    def rtd_loss(original, corrupted, attention_mask, logits):
        labels, loss = solution(original, corrupted, attention_mask, logits)
        return np.where(attention_mask == 1, labels, value), loss
    return rtd_loss


@pytest.mark.parametrize("value", [0, -100])
def test_rtd_check_accepts_every_padding_label(value):
    _, check_function = notebook_check(STEM, *EXERCISES["rtd"],
                                       load_solution(STEM, "my_rtd_loss"))
    assert check_function(rtd_padding_labelled(value)) == "pass"


def rtd_inverted(original, corrupted, attention_mask, logits):
    labels = (corrupted == original).astype(int)
    return labels, 0.0


def rtd_overflowing(original, corrupted, attention_mask, logits):
    labels = (corrupted != original).astype(int)
    with np.errstate(over="ignore"):
        softplus = np.log(1.0 + np.exp(logits))  # inf for z = 800
    return labels, float((softplus - logits * labels)[attention_mask == 1].mean())


def l2_without_norm(dout, unit, norm):
    return dout - unit * (unit * dout).sum(axis=-1, keepdims=True)


def lora_transposed(dout, x, A, B, scaling):
    return (scaling * dout @ B @ A, scaling * x.T @ (dout @ B), scaling * dout.T @ (x @ A.T))


@pytest.mark.parametrize("exercise, mistake, named", [
    ("l2", no_projection, "the part along u is not removed"),
    ("l2", l2_without_norm, "not divided by the norm"),
    ("lora", unscaled_lora, "without the scaling"),
    ("lora", lora_transposed, "a transpose?"),
    ("rtd", rtd_over_padding_too, "padding counted"),
    ("rtd", rtd_inverted, "labels inverted"),
    ("rtd", rtd_overflowing, "softplus overflows"),
])
def test_checks_name_the_mistake(exercise, mistake, named, capsys):
    student, check = EXERCISES[exercise]
    _, check_function = notebook_check(STEM, student, check, load_solution(STEM, student))
    capsys.readouterr()
    assert check_function(mistake).startswith("fail")
    assert named in capsys.readouterr().out
