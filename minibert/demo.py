"""The main job: pretrain the tiny BERT on the toy corpus, then show what it learned.

``python -m minibert.demo --out out/demo`` (what ``make demo`` runs) writes:

- the model folder (config.json, model.safetensors, vocab.txt) and metrics.json,
  history.json from ``minibert.training.pretrain.pretrain``;
- fill_mask.json / fill_mask.txt: the top answers for every ambiguity probe, with whether
  the expected sense won;
- attention_head.png, attention_layer.png, attention_rollout.png: heatmaps of the trained
  model on a "bank" sentence pair; training_curves.png.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

from minibert.data import AMBIGUITY_PROBES
from minibert.fill_mask import fill_mask
from minibert.heads import BertForMaskedLM
from minibert.io.fileio import atomic_write_json, atomic_write_text
from minibert.model import BertModel
from minibert.tokenization import load_tokenizer
from minibert.training.pretrain import TrainingConfig, pretrain
from minibert.training.pretrain_config import default_workers

__all__ = ["run_probes", "draw_figures", "main"]

HEATMAP_TEXT = ("she deposited the money at the bank before noon.",
                "later she fished from the muddy bank of the river.")


def run_probes(model_dir: Path, top_k: int = 5, probes=AMBIGUITY_PROBES) -> list[dict]:
    """Fill-mask answers for every probe of ``probes`` (the toy corpus's ambiguity probes).

    ``probes``: FillMaskProbe objects, e.g. ``minibert.data.PARAPHRASE_PROBES``.
    """
    tokenizer = load_tokenizer(model_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BertForMaskedLM.from_pretrained(model_dir)
    results = []
    for probe in probes:
        answers = fill_mask(model, tokenizer, probe.text, top_k=top_k)
        results.append({
            "text": probe.text, "expected": sorted(probe.answers), "sense": probe.sense,
            "deciding_word": probe.deciding_word, "deciding_side": probe.side,
            "top": [{"token_str": a["token_str"], "score": round(a["score"], 4)}
                    for a in answers],
            "correct": answers[0]["token_str"] in probe.answers,
        })
    return results


def draw_figures(model_dir: Path, history: list[dict]) -> list[Path]:
    """Heatmaps of the trained model on a "bank" pair, and the training curves."""
    from minibert import viz

    tokenizer = load_tokenizer(model_dir)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BertModel.from_pretrained(model_dir)
    encoding = tokenizer(*HEATMAP_TEXT, return_tensors="np")
    out = model(encoding["input_ids"], encoding["token_type_ids"], encoding["attention_mask"],
                output_attentions=True)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    common = dict(token_type_ids=encoding["token_type_ids"][0],
                  attention_mask=encoding["attention_mask"][0])
    # The head with a job (the best previous-token head), not a fixed index.
    layer, head = viz.best_head(viz.head_job_scores(model, tokenizer, [HEATMAP_TEXT]),
                                "previous token")
    figures = {
        "attention_head.png": viz.attention_figure(out.attentions, tokens, view="head",
                                                   layer=layer, head=head, **common),
        "attention_layer.png": viz.attention_figure(out.attentions, tokens, view="layer",
                                                    layer=layer, **common),
        "attention_rollout.png": viz.attention_figure(out.attentions, tokens, view="rollout",
                                                      vmax="auto", **common),
        "training_curves.png": viz.training_curves_figure(history),
    }
    return [viz.save_figure(fig, model_dir / name) for name, fig in figures.items()]


def _probe_report(results: list[dict]) -> str:
    lines = []
    for result in results:
        mark = "ok " if result["correct"] else "-- "
        top = ", ".join(f"{a['token_str']} {a['score']:.2f}" for a in result["top"][:3])
        lines.append(f"{mark} {result['text']}\n      expected {'/'.join(result['expected'])} "
                     f"({result['sense']}; context {result['deciding_side']} the mask): {top}")
    correct = sum(r["correct"] for r in results)
    lines.append(f"{correct}/{len(results)} probes answered with the expected sense")
    return "\n".join(lines)


class _DemoParser(argparse.ArgumentParser):
    """Errors on one line (exit 2), as every other error of the demo and the CLI."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def main(argv: list[str] | None = None) -> int:
    parser = _DemoParser(
        prog="python -m minibert.demo",
        description="Pretrain the tiny BERT on the toy corpus and write its metrics, "
                    "fill-mask answers and attention heatmaps.",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("-o", "--out", default="out/demo",
                        help="output folder (what an earlier demo wrote there is replaced)")
    parser.add_argument("--steps", type=int, default=TrainingConfig.steps,
                        help="optimizer steps")
    parser.add_argument("--seed", type=int, default=0, help="seed of the whole run")
    parser.add_argument("--workers", type=int, default=default_workers(), metavar="N",
                        help="data-parallel worker processes (default: the cores there are, "
                             "at most 4: %(default)s here; 1 trains in this process)")
    args = parser.parse_args(argv)

    def progress(message: str) -> None:
        print(message, file=sys.stderr, flush=True)

    if not args.out.strip():
        print(f"demo: error: --out {args.out!r} is empty; give a folder name", file=sys.stderr)
        return 2
    out = Path(args.out)
    try:
        config = TrainingConfig(steps=args.steps, seed=args.seed, workers=args.workers)
        metrics = pretrain(config, out, overwrite=True, progress=progress)
    except (ValueError, TypeError, OSError) as error:
        print(f"demo: error: {error}", file=sys.stderr)
        return 2
    except KeyboardInterrupt as interruption:
        # The demo always starts afresh; `minibert pretrain --resume` continues the run.
        print(f"demo: interrupted ({interruption}); run it again to start over",
              file=sys.stderr)
        return 128 + getattr(interruption, "signum", 2)
    results = run_probes(out)
    atomic_write_json(out / "fill_mask.json", results)
    report = _probe_report(results)
    atomic_write_text(out / "fill_mask.txt", report + "\n")
    history = json.loads((out / "history.json").read_text(encoding="utf-8"))
    written = draw_figures(out, history)
    print("\nheld-out metrics:")
    for key in ("masked_lm_accuracy", "unigram_baseline_accuracy", "masked_lm_loss",
                "next_sentence_accuracy", "next_sentence_loss", "steps", "train_seconds",
                "total_seconds"):
        if key in metrics:
            value = metrics[key]
            print(f"  {key:<27} {f'{value:.4g}' if isinstance(value, float) else value}")
    print("\nfill-mask probes:\n" + report)
    print(f"\nwrote {out} (metrics.json, fill_mask.txt, {len(written)} figures and the model)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
