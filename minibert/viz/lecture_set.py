"""One call for a lecture's figures: attention views, saliency, training curves and the board
pictures of one model, each written as PNG and SVG (``minibert figures --model DIR -o DIR``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from minibert.family.registry import encoder_of
from minibert.viz import board
from minibert.viz.heatmaps import attention_figure
from minibert.viz.saliency import fill_mask_saliency_figure
from minibert.viz.style import SAVE_FORMATS, save_figure
from minibert.viz.training import training_curves_figure

__all__ = ["HEAD_JOBS", "LECTURE_PAIR", "LECTURE_MASKED", "NSP_RISE_MARGIN", "WORKED_INSTANCE",
           "best_head", "head_job_scores", "lecture_figures", "nsp_plateau",
           "worked_instance_rows", "write_lecture_figures"]

LECTURE_PAIR = ("she deposited the money at the bank before noon.",
                "later she fished from the muddy bank of the river.")
LECTURE_MASKED = "she deposited the money at the [MASK] before noon."
HEAD_JOBS = ("previous token", "next token", "[SEP]", "[CLS]")

# The worked instance of notebook 06, section 5 (explain_instance on the first instance,
# in a fixed seeded order, whose MLM targets show all three branches), copied from its
# committed output; tests/viz/test_slides.py reads that output and compares.
WORKED_INSTANCE = {
    "tokens": ("[CLS] was cold and clear after the spring rain . a heron and a crane waded "
               "slowly along the bank . [SEP] she untangled the line slowly while kenji "
               "laughed . [SEP]").split(),
    "inputs": ("[CLS] was cold and clear after the spring rain . a [MASK] and ##mory crane "
               "waded slowly along the bank [MASK] [SEP] she untangled the line slowly while "
               "kenji laughed [MASK] [SEP]").split(),
    "branches": {11: "[MASK]", 13: "random", 20: "[MASK]", 25: "kept", 30: "[MASK]"},
    "first_b": 22,  # the position where segment B starts
    "next_sentence_label": 0,  # IsNext: B follows A in document 1176
}
# How far above the NotNext share next-sentence accuracy must climb to have left the
# plateau: 0.1 is about five standard errors of an accuracy measured on 512 pairs.
NSP_RISE_MARGIN = 0.1


def worked_instance_rows() -> list[dict]:
    """``WORKED_INSTANCE`` as :func:`minibert.data.explain_rows` rows: position, segment,
    token, input, target and branch (target and branch empty off the MLM targets)."""
    instance = WORKED_INSTANCE
    return [{"position": position, "segment": int(position >= instance["first_b"]),
             "token": token, "input": shown,
             "target": token if position in instance["branches"] else "",
             "branch": instance["branches"].get(position, "")}
            for position, (token, shown) in enumerate(zip(instance["tokens"],
                                                          instance["inputs"], strict=True))]


def nsp_plateau(history) -> tuple[float, int | None]:
    """Where next-sentence accuracy leaves its plateau, read from a run's history.

    Inputs: history, the trainer's list of dicts (``history.json``) with held-out rows
    (``split == "heldout"``, ``step``, ``next_sentence_accuracy``).
    Returns: (floor, step). floor is the first held-out NSP accuracy: an input-blind head
    answers NotNext everywhere, so it is the NotNext share of the evaluated pairs (notebook
    07 counts that share from the pairs themselves). step is the first evaluation from
    which the accuracy stays more than ``NSP_RISE_MARGIN`` above the floor; None if it
    never does.
    """
    held = [row for row in history if row.get("split") == "heldout"]
    if not held:
        raise ValueError("history must hold held-out rows (split 'heldout'), got none")
    accuracy = np.array([row["next_sentence_accuracy"] for row in held])  # (E,)
    floor = float(accuracy[0])
    above = accuracy > floor + NSP_RISE_MARGIN
    # The first evaluation after the last one that is still on the plateau.
    below = np.flatnonzero(~above)
    first = int(below[-1]) + 1 if below.size else 0
    return floor, (held[first]["step"] if first < len(held) else None)


def head_job_scores(model, tokenizer, texts) -> dict:
    """How much each head does one of Clark et al.'s (2019) simple jobs, on average.

    Inputs: a BertModel or a model with ``.bert``, its tokenizer, and a list of texts (each
    one sentence or a (sentence, pair) tuple).
    Returns: dict job -> (L, N) array, layers and heads counted from 0; the score is the
    attention a query gives to the job's target, averaged over the queries of every text
    (1 = every query puts all its attention there). Jobs: ``HEAD_JOBS``.
    """
    bert = encoder_of(model)
    shape = (bert.config.num_hidden_layers, bert.config.num_attention_heads)
    scores = {job: np.zeros(shape) for job in HEAD_JOBS}
    for text in texts:
        pair = (text,) if isinstance(text, str) else tuple(text)
        encoding = tokenizer(*pair, return_tensors="np")
        out = bert(encoding["input_ids"], encoding["token_type_ids"],
                   encoding["attention_mask"], output_attentions=True)
        attention = np.stack([a[0] for a in out.attentions]).astype(np.float64)  # (L, N, T, T)
        is_sep = encoding["input_ids"][0] == tokenizer.sep_token_id  # (T,)
        # Entry [i + 1, i] of a (T, T) map is query i + 1 looking at the token before it.
        scores["previous token"] += np.diagonal(attention, -1, -2, -1).mean(-1) / len(texts)
        scores["next token"] += np.diagonal(attention, 1, -2, -1).mean(-1) / len(texts)
        scores["[SEP]"] += attention[..., is_sep].sum(-1).mean(-1) / len(texts)
        scores["[CLS]"] += attention[..., 0].mean(-1) / len(texts)
    return scores


def best_head(scores: dict, job: str) -> tuple[int, int]:
    """(layer, head), counted from 0, of the head with the highest score for ``job``."""
    if job not in scores:
        raise ValueError(f"job must be one of {', '.join(scores)}, got {job!r}")
    layer, head = np.unravel_index(np.argmax(scores[job]), scores[job].shape)
    return int(layer), int(head)


def _has_heldout(history) -> bool:
    return bool(history) and any(row.get("split") == "heldout" for row in history)


def lecture_figures(model, tokenizer, history=None) -> dict:
    """Every figure of a lecture for one BertForPreTraining/BertForMaskedLM in eval mode.

    Returns a dict name -> Figure: head (the head with the highest previous-token score of
    :func:`head_job_scores` on the "bank" pair), head_next (the best next-token head), layer
    (that head's layer), model, rollout (on a stretched colour scale, stated on its colour
    bar), saliency (the [MASK] of ``LECTURE_MASKED``), training_curves (when ``history``,
    the trainer's list of dicts, is given) and the board pictures (the pretraining
    objective states the run's NotNext share when ``history`` is given).
    """
    config = model.config
    encoding = tokenizer(*LECTURE_PAIR, return_tensors="np")
    ids, segments = encoding["input_ids"][0], encoding["token_type_ids"][0]
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    out = model.bert(encoding["input_ids"], encoding["token_type_ids"],
                     encoding["attention_mask"], output_attentions=True)
    common = {"token_type_ids": segments, "attention_mask": encoding["attention_mask"][0]}
    scores = head_job_scores(model, tokenizer, [LECTURE_PAIR])
    previous, following = best_head(scores, "previous token"), best_head(scores, "next token")
    embeddings = model.bert.embeddings
    word = embeddings.word_embeddings.params["weight"][ids]  # (T, H)
    segment = embeddings.token_type_embeddings.params["weight"][segments]  # (T, H)
    position = embeddings.position_embeddings.params["weight"][: len(ids)]  # (T, H)
    figures = {
        "head": attention_figure(
            out.attentions, tokens, "head", layer=previous[0], head=previous[1],
            title=f"layer {previous[0]} · head {previous[1]}: the previous token "
                  f"(score {scores['previous token'][previous]:.2f})", **common),
        "head_next": attention_figure(
            out.attentions, tokens, "head", layer=following[0], head=following[1],
            title=f"layer {following[0]} · head {following[1]}: the next token "
                  f"(score {scores['next token'][following]:.2f})", **common),
        "layer": attention_figure(out.attentions, tokens, "layer", layer=previous[0], **common),
        "model": attention_figure(out.attentions, tokens, "model", **common),
        "rollout": attention_figure(out.attentions, tokens, "rollout", vmax="auto", **common),
        "saliency": fill_mask_saliency_figure(model, tokenizer, LECTURE_MASKED),
        "board_embedding_sum": board.embedding_sum_figure(tokens, word, segment, position,
                                                          word + segment + position),
        "board_encoder_block": board.encoder_block_figure(config.hidden_size,
                                                          config.num_attention_heads,
                                                          config.intermediate_size),
        "board_attention_backward": board.attention_backward_figure(),
        "board_pretraining_objective": board.pretraining_objective_figure(
            worked_instance_rows(), WORKED_INSTANCE["next_sentence_label"],
            nsp_plateau(history)[0] if _has_heldout(history) else None),
        "board_multihead": board.multihead_figure(),
        "board_masks": board.attention_masks_figure(tokens + ["[PAD]"] * 2,
                                                    np.r_[np.ones(len(tokens)), 0, 0]),
        "board_position_embeddings": board.position_embeddings_figure(
            {"this model": embeddings.position_embeddings.params["weight"]}),
    }
    if history is not None:
        figures["training_curves"] = training_curves_figure(history)
    return figures


def write_lecture_figures(model_dir, out_dir, formats=("png", "svg"), dpi: int = 200) -> list:
    """Load the model folder (or ``tiny-toy``), draw :func:`lecture_figures` and write each
    in every format to ``out_dir``; the training curves come from ``history.json`` when the
    folder has one. Returns the paths written."""
    from minibert.heads import BertForPreTraining
    from minibert.reference import REFERENCES, reference_path
    from minibert.tokenization import load_tokenizer

    bad = [f for f in formats if f not in SAVE_FORMATS]
    if bad or not formats:
        raise ValueError(f"formats must be some of {', '.join(SAVE_FORMATS)}, got {formats!r}")
    folder = reference_path(model_dir) if model_dir in REFERENCES else Path(model_dir)
    tokenizer = load_tokenizer(folder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a masked-LM-only folder has no NSP weights
        model = BertForPreTraining.from_pretrained(folder)
    history_file = folder / "history.json"
    history = (json.loads(history_file.read_text(encoding="utf-8"))
               if history_file.is_file() else None)
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, fig in lecture_figures(model.eval(), tokenizer, history).items():
        written += [save_figure(fig, out / f"{name}.{fmt}", dpi=dpi) for fmt in formats]
    return written
