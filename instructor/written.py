"""Model answers and a rubric for the handout's written questions (instructor material).

``rubric_markdown()`` is ``solutions/RUBRIC.md`` of the instructor tree: for each question of
``minibert.assignment.handout.QUESTIONS``, a model answer and the points it is marked on
(4 points per question: each rubric line is worth 1).
"""

from __future__ import annotations

from minibert.assignment.handout import QUESTIONS

__all__ = ["ANSWERS", "rubric_markdown"]

# part -> one (model answer, rubric lines) per question, in the handout's order
ANSWERS: dict[str, tuple[tuple[str, tuple[str, ...]], ...]] = {
    "layers": (
        ("The loss still goes down because the wrong gradient is still a descent direction "
         "most of the time: dropping the variance term removes the projection of dx_hat on "
         "x_hat, so the update keeps the right sign on most entries and the optimiser "
         "follows it, only less well. A gradient check compares each entry with centred "
         "differences and shows a relative error around 1e-1 instead of 1e-10: the "
         "backward is wrong, whatever the curve says.",
         ("says the corrupted gradient is still (mostly) a descent direction",
          "names the missing term: the projection of dx_hat on x_hat, mean(dx_hat * x_hat)",
          "says a loss curve cannot tell a right gradient from a slightly wrong one",
          "says the gradient check shows a large relative error (about 1e-1, not 1e-10)")),
        ("With an all-ones upstream gradient the softmax backward is probs * (1 - sum(probs)) "
         "= 0 everywhere, because each row of probs sums to 1: a backward that returns zeros "
         "scores exactly right. A random upstream gradient makes the check sensitive to "
         "every entry of the Jacobian.",
         ("computes the all-ones case: probs * (1 - sum(probs)) = 0",
          "concludes a zero backward passes (full marks) with all ones",
          "explains that rows of probs sum to 1 (the Jacobian's rows sum to 0)",
          "says a random upstream gradient probes every entry of the Jacobian")),
    ),
    "composition": (
        ("dx = (residual 1) the path from x into the first LayerNorm directly, plus the "
         "paths through the query, key and value projections (each linear's dx after "
         "attention's dq, dk, dv); all of them pass the first LayerNorm's backward, and its "
         "input gradient comes from both residual 2's direct path and the feed-forward "
         "path through the second LayerNorm.",
         ("the direct path of residual 1 (x into the first LayerNorm)",
          "the three paths through q, k and v, summed",
          "residual 2: attention_output reaches the output directly and through the FFN",
          "the LayerNorm backwards sit on every path, in the right order")),
        ("Adding a key bias c adds q . c to every score of a query row: a constant along the "
         "keys, and softmax(s + c) = softmax(s), so the output does not depend on it and its "
         "gradient is exactly zero. A norm-wise relative error of two (near) zero vectors is "
         "0 / max(1e-12, ...) or noise over noise: the checker should report the absolute "
         "difference beside it and treat a tiny absolute error as a pass.",
         ("the bias adds the same value to every key's score of a row",
          "softmax is invariant to a constant added along its axis",
          "concludes the gradient is exactly zero",
          "explains what the relative error means for an all-zero array (use the abs diff)")),
    ),
    "training": (
        ("Adam divides each gradient by sqrt(v), its running scale. An L2 term added to the "
         "gradient is divided too, so parameters with large gradients are barely "
         "regularised and those with small ones strongly; decoupled decay shrinks every "
         "parameter by the same factor (1 - lr * wd). The difference is largest for "
         "parameters with large or very uneven gradients (embeddings of frequent words).",
         ("says the L2 gradient term is rescaled by 1 / sqrt(v) in Adam",
          "says decoupled decay shrinks every parameter by the same factor",
          "names which parameters differ most (large-gradient ones, e.g. frequent embeddings)",
          "cites Loshchilov & Hutter (2019) or states the update formulas correctly")),
        ("About half the pairs are NotNext with the rule of the assignment. minibert's data "
         "follows Google's create_pretraining_data.py, where a random next segment also "
         "puts the unused sentences of A's document back; and a document that is too "
         "short, or the last segment of a document, always draws a random B: those rules "
         "raise the NotNext share above 50%.",
         ("measures or computes the share for the student's own pairs (about 50%)",
          "names Google's rule that draws a random B when there is no next segment",
          "mentions that short documents / last segments push the share up",
          "links the difference to docs/data.md's figure")),
    ),
}


def rubric_markdown() -> str:
    """The instructor's RUBRIC.md: per question, the model answer and the marking lines."""
    lines = ["# Written questions: model answers and rubric (keep private)", "",
             "Each question is worth 4 points, one per rubric line; give the point when the "
             "answer says it in any words.", ""]
    for part, (title, questions) in QUESTIONS.items():
        lines += [f"## {title}", ""]
        for number, (question, (answer, rubric)) in enumerate(zip(questions, ANSWERS[part]), 1):
            lines += [f"### Question {number}", "", f"> {question}", "", "Model answer:", "",
                      answer, "", "Rubric (1 point each):", ""]
            lines += [f"- {line}" for line in rubric]
            lines.append("")
    return "\n".join(lines)
