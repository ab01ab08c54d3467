"""The main job: pretrain the tiny BERT on the toy corpus, then show what it learned.

``python -m minibert.demo --out out/demo`` (what ``make demo`` runs) writes:

- the model folder (config.json, model.safetensors, vocab.txt) and metrics.json,
  history.json from ``minibert.training.pretrain.pretrain``;
- fill_mask.json / fill_mask.txt: the top answers for every ambiguity probe, with whether
  the expected sense won;
- attention_head.png, attention_layer.png, attention_rollout.png: heatmaps of the trained
  model on a "bank" sentence pair; training_curves.png.

On a terminal the training's progress is one line, updated in place; into a file or a
pipe, a line at every tenth of the run. The run ends with a short summary: what the model
learned, its probe answers and where the files are (at most 60 lines in all).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import warnings
from pathlib import Path

from minibert.checks import os_error_line, wrap_for_terminal
from minibert.data import AMBIGUITY_PROBES
from minibert.fill_mask import fill_mask
from minibert.heads import BertForMaskedLM
from minibert.io.fileio import atomic_write_json, atomic_write_text, output_lock
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


class _DemoProgress:
    """The training's progress lines, cut down to what a projector can show.

    On a terminal, each "step" line replaces the one before (a carriage return); elsewhere
    a step line and a held-out line are kept at every tenth of the run (and the first and
    last step). Every other message (corpus, vocabulary, model, ...) is printed as it comes.
    """

    STEP = re.compile(r"^step (\d+)/(\d+)\b")
    METRIC = re.compile(r"(masked_lm_accuracy|next_sentence_accuracy) ([0-9.]+)")

    def __init__(self, stream=sys.stderr) -> None:
        self.stream, self.live = stream, stream.isatty()
        self.tenth_shown, self.heldout_tenth, self.tenth, self.open_line = -1, -1, 0, False
        self.step = 0

    def __call__(self, message: str) -> None:
        step = self.STEP.match(message)
        if step:
            done, total = int(step.group(1)), int(step.group(2))
            self.step, self.tenth = done, 10 * done // max(total, 1)
            if self.live:
                self._write(f"\r\x1b[K{message}", end="")
                self.open_line = True
            elif done in (1, total) or self.tenth > self.tenth_shown:
                self.tenth_shown = self.tenth
                self._write(message)
            return
        if message.startswith("held-out (") and self.tenth <= self.heldout_tenth:
            return  # one held-out line per tenth of the run; all are in history.json
        if message.startswith("held-out ("):
            self.heldout_tenth = self.tenth
            found = dict(self.METRIC.findall(message))
            names = {"masked_lm_accuracy": "masked words", "next_sentence_accuracy":
                     "next sentence"}
            message = f"held-out at step {self.step}: " + ", ".join(
                f"{names[key]} {float(value):.1%} right" for key, value in found.items())
        self._write(wrap_for_terminal(message, self.stream))

    def close(self) -> None:
        """End the updating line, so that what follows starts a line of its own."""
        if self.open_line:
            print(file=self.stream, flush=True)
            self.open_line = False

    def _write(self, text: str, end: str = "\n") -> None:
        if self.open_line and end:  # end the updating line before a message of its own
            text, self.open_line = "\n" + text, False
        print(text, end=end, file=self.stream, flush=True)


def _summary(metrics: dict, results: list[dict], out: Path, written: list[Path]) -> str:
    """The closing lines: what the model learned, its probe answers, where the files are."""
    mlm, baseline = metrics.get("masked_lm_accuracy"), metrics.get("unigram_baseline_accuracy")
    nsp = metrics.get("next_sentence_accuracy")
    lines = ["", "what the model learned (held-out text it never trained on):"]
    if mlm is not None:
        lines.append(f"  masked words: {mlm:.1%} right, against {baseline:.1%} for always "
                     f"guessing the most frequent word" if baseline is not None else
                     f"  masked words: {mlm:.1%} right")
    if nsp is not None:
        lines.append(f"  next sentence: {nsp:.1%} right (50% is a coin toss)")
    if "train_seconds" in metrics:
        lines.append(f"  {metrics.get('steps', '?')} steps in {metrics['train_seconds']:.0f} s "
                     f"of training")
    correct = sum(r["correct"] for r in results)
    lines += ["", f"fill-mask probes (a word whose sense only the context settles): {correct} "
                  f"of {len(results)} answered with the expected sense"]
    for result in results:
        top = result["top"][0]
        expected = "" if result["correct"] else f" (not {'/'.join(result['expected'])})"
        lines.append(f"  {'ok' if result['correct'] else '--'}  {result['text']}  "
                     f"{top['token_str']} {top['score']:.2f}{expected}")
    lines += ["", f"files in {out}: the model (config.json, model.safetensors, vocab.txt), "
                  f"metrics.json, history.json, fill_mask.txt and {len(written)} figures "
                  f"({', '.join(path.name for path in written)})",
              _reference_note(out)]
    return "\n".join(lines)


def _reference_note(out: Path) -> str:
    """One line on tiny-toy, the reference checkpoint, read from its own files: it is the
    stronger model, so that nobody takes the demo's few minutes for the best minibert does."""
    from minibert.reference import reference_path

    def layers(folder: Path) -> int:
        return json.loads((folder / "config.json").read_text(encoding="utf-8"))[
            "num_hidden_layers"]

    reference = reference_path("tiny-toy")
    steps = json.loads((reference / "metrics.json").read_text(encoding="utf-8"))["steps"]
    probes = json.loads((reference / "fill_mask.json").read_text(encoding="utf-8"))
    return (f"this demo's model has {layers(out)} layers and a few minutes of training; "
            f"tiny-toy, shipped with minibert, is the stronger {layers(reference)}-layer "
            f"model ({steps:,} steps, {sum(p['correct'] for p in probes)} of {len(probes)} "
            f"probes): minibert fill-mask --model tiny-toy \"she deposited the money at "
            f"the [MASK].\"")


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
                             "at most 8: %(default)s here; 1 trains in this process)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the demo interrupted in --out from its checkpoint "
                             "(with the same --steps, --seed and --workers; an interrupted "
                             "demo prints this command)")
    args = parser.parse_args(argv)

    progress = _DemoProgress()
    if not args.out.strip():
        print(f"demo: error: --out {args.out!r} is empty; give a folder name", file=sys.stderr)
        return 2
    out = Path(args.out)
    try:
        try:
            with output_lock(out, "--out"):  # a second demo into --out meanwhile is refused
                return _run(args, out, progress)
        finally:
            progress.close()
    except (ValueError, TypeError, OSError, MemoryError) as error:
        reason = os_error_line(error) if isinstance(error, OSError) else str(error)
        print(wrap_for_terminal(f"demo: error: {reason}", sys.stderr), file=sys.stderr)
        return 2
    except KeyboardInterrupt as interruption:
        print(f"demo: interrupted ({interruption}); {_how_to_go_on(args, out)}",
              file=sys.stderr)
        return 128 + getattr(interruption, "signum", 2)


def _how_to_go_on(args, out: Path) -> str:
    """The command that resumes an interrupted demo from its checkpoint, if it wrote one."""
    import shlex

    from minibert.training.pretrain import checkpoint_step

    step = checkpoint_step(out)
    if step is None:
        return "no checkpoint was written yet; run it again to start over"
    command = shlex.join(["python", "-m", "minibert.demo", "--out", str(out), "--steps",
                          str(args.steps), "--seed", str(args.seed), "--workers",
                          str(args.workers), "--resume"])
    return f"the checkpoint holds step {step}; resume with: {command}"


def _run(args, out: Path, progress) -> int:
    """Train, probe, draw and summarise (main holds --out's lock meanwhile)."""
    config = TrainingConfig(steps=args.steps, seed=args.seed, workers=args.workers)
    metrics = pretrain(config, out, resume=args.resume, overwrite=not args.resume,
                       progress=progress)
    results = run_probes(out)
    atomic_write_json(out / "fill_mask.json", results)
    report = _probe_report(results)
    atomic_write_text(out / "fill_mask.txt", report + "\n")
    history = json.loads((out / "history.json").read_text(encoding="utf-8"))
    written = draw_figures(out, history)
    print(_summary(metrics, results, out, written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
