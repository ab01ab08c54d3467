"""One call for a lecture's figures: attention views, saliency, training curves and the board
pictures of one model, each written as PNG and SVG (``minibert figures --model DIR -o DIR``).
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np

from minibert.viz.board import (
    attention_masks_figure,
    embedding_sum_figure,
    encoder_block_figure,
    multihead_figure,
    position_embeddings_figure,
)
from minibert.viz.heatmaps import attention_figure
from minibert.viz.saliency import fill_mask_saliency_figure
from minibert.viz.style import SAVE_FORMATS, save_figure
from minibert.viz.training import training_curves_figure

__all__ = ["LECTURE_PAIR", "LECTURE_MASKED", "lecture_figures", "write_lecture_figures"]

LECTURE_PAIR = ("she deposited the money at the bank before noon.",
                "later she fished from the muddy bank of the river.")
LECTURE_MASKED = "she deposited the money at the [MASK] before noon."


def lecture_figures(model, tokenizer, history=None) -> dict:
    """Every figure of a lecture for one BertForPreTraining/BertForMaskedLM in eval mode.

    Returns a dict name -> Figure: head, layer, model, rollout (attention on the "bank"
    pair), saliency (the [MASK] of ``LECTURE_MASKED``), training_curves (when ``history``,
    the trainer's list of dicts, is given) and the board pictures.
    """
    config = model.config
    encoding = tokenizer(*LECTURE_PAIR, return_tensors="np")
    ids, segments = encoding["input_ids"][0], encoding["token_type_ids"][0]
    tokens = tokenizer.convert_ids_to_tokens(ids.tolist())
    out = model.bert(encoding["input_ids"], encoding["token_type_ids"],
                     encoding["attention_mask"], output_attentions=True)
    common = {"token_type_ids": segments, "attention_mask": encoding["attention_mask"][0]}
    last = config.num_hidden_layers - 1
    embeddings = model.bert.embeddings
    word = embeddings.word_embeddings.params["weight"][ids]  # (T, H)
    segment = embeddings.token_type_embeddings.params["weight"][segments]  # (T, H)
    position = embeddings.position_embeddings.params["weight"][: len(ids)]  # (T, H)
    figures = {
        "head": attention_figure(out.attentions, tokens, "head", layer=last, head=0, **common),
        "layer": attention_figure(out.attentions, tokens, "layer", layer=last, **common),
        "model": attention_figure(out.attentions, tokens, "model", **common),
        "rollout": attention_figure(out.attentions, tokens, "rollout", **common),
        "saliency": fill_mask_saliency_figure(model, tokenizer, LECTURE_MASKED),
        "board_embedding_sum": embedding_sum_figure(tokens, word, segment, position,
                                                    word + segment + position),
        "board_encoder_block": encoder_block_figure(config.hidden_size,
                                                    config.num_attention_heads,
                                                    config.intermediate_size),
        "board_multihead": multihead_figure(),
        "board_masks": attention_masks_figure(tokens + ["[PAD]"] * 2,
                                              np.r_[np.ones(len(tokens)), 0, 0]),
        "board_position_embeddings": position_embeddings_figure(
            {"this model": embeddings.position_embeddings.params["weight"]}),
    }
    if history is not None:
        figures["training_curves"] = training_curves_figure(history)
    return figures


def write_lecture_figures(model_dir, out_dir, formats=("png", "svg"), dpi: int = 200) -> list:
    """Load the model folder (or ``tiny-toy``), draw :func:`lecture_figures` and write each
    in every format to ``out_dir``; the training curves come from ``history.json`` when the
    folder has one. Returns the paths written."""
    from minibert.io.checkpoint import load_tokenizer
    from minibert.model import BertForPreTraining
    from minibert.reference import REFERENCES, reference_path

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
