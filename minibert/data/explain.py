"""Explain an instance for a lecture: what the model reads at each position, and predicts.

``explain_rows`` gives one dict per position; ``explain_instance`` prints them as a table
under a line saying what the pair label means. See ``docs/data.md``, section 5.
"""

from __future__ import annotations

from minibert.data.masking import MaskedTokens
from minibert.data.pretraining import PretrainingInstance

__all__ = ["explain_instance", "explain_rows"]


def explain_rows(
    instance: PretrainingInstance, tokenizer, masking: MaskedTokens | None = None
) -> list[dict]:
    """One dict per position: what the model reads there and what it must predict.

    Keys: ``position``, ``segment`` (token type), ``token`` (original), ``input`` (what the
    model reads), ``target`` (the token to predict, "" if none) and ``branch`` ("[MASK]",
    "random", "kept", or "" when the position was not chosen). ``masking`` defaults to the
    instance's own fixed masks.
    """
    masking = instance.masking if masking is None else masking
    if masking is None:
        raise ValueError(
            "instance has no masking; pass masking=mask_tokens(instance.token_ids, rng, vocab)"
        )
    if len(masking.input_ids) != len(instance.token_ids):
        raise ValueError(
            f"masking has {len(masking.input_ids)} positions but the instance has "
            f"{len(instance.token_ids)}"
        )
    originals = tokenizer.convert_ids_to_tokens(list(instance.token_ids))
    inputs = tokenizer.convert_ids_to_tokens(list(masking.input_ids))
    branch_at = dict(zip(masking.masked_lm_positions, masking.masked_lm_branches, strict=True))
    rows = []
    for position, (original, read, segment) in enumerate(
        zip(originals, inputs, instance.token_type_ids, strict=True)
    ):
        chosen = position in branch_at
        rows.append(
            {
                "position": position,
                "segment": int(segment),
                "token": original,
                "input": read,
                "target": original if chosen else "",
                "branch": branch_at.get(position, ""),
            }
        )
    return rows


def explain_instance(
    instance: PretrainingInstance, tokenizer, masking: MaskedTokens | None = None
) -> str:
    """A printable table of ``explain_rows`` under a line saying what the pair label means."""
    rows = explain_rows(instance, tokenizer, masking)
    label = instance.next_sentence_label
    if label is None:
        header = f"single segment (objective 'mlm'), starting in document {instance.a_document}"
    elif instance.a_document != instance.b_document:
        header = (
            f"next_sentence_label = {label} (NotNext: A from document "
            f"{instance.a_document}, B from document {instance.b_document})"
        )
    elif label == 1:
        header = (
            f"next_sentence_label = {label} (swapped: B came before A in document "
            f"{instance.a_document})"
        )
    else:
        header = (
            f"next_sentence_label = {label} (IsNext: B follows A in document {instance.a_document})"
        )
    columns = ("position", "segment", "token", "input", "target", "branch")
    cells = [[str(row[column]) for column in columns] for row in rows]
    widths = [
        max(len(column), *(len(line[c]) for line in cells)) for c, column in enumerate(columns)
    ]
    lines = [header]
    for line in [list(columns), *cells]:
        padded = (cell.ljust(width) for cell, width in zip(line, widths, strict=True))
        lines.append("  ".join(padded).rstrip())
    branches = [row["branch"] for row in rows if row["branch"]]
    lines.append(
        f"{len(branches)} of {len(rows)} positions are MLM targets: "
        f"{branches.count('[MASK]')} [MASK], {branches.count('random')} random, "
        f"{branches.count('kept')} kept"
    )
    return "\n".join(lines)
