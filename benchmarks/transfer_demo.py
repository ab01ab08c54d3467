"""Transfer learning on the toy world: does pretraining help when labels are few?

Fine-tunes the tiny BERT on topic classification (13 topics, one sentence per example)
from several starting points, with the same vocabulary, data, schedule and budget:

- **pretrained**: the encoder of a ``minibert pretrain`` run (MLM + NSP on the toy
  corpus) with a fresh classifier on top; one arm per pretrained folder;
- **scratch**: the same architecture from random weights.

for several numbers of labelled examples and several seeds (each seed draws its own
training and test sentences and initializes its own head and dropout), then prints the
mean and spread of test accuracy, writes every run to ``docs/transfer_results.json`` and
draws ``docs/images/transfer.png``.

    python benchmarks/transfer_demo.py          # pretrains 6,000 steps first
    python benchmarks/transfer_demo.py --pretrained out/transfer/pretrained_6000 \
        out/transfer/pretrained_3000 out/transfer/pretrained_1500   # compare lengths

Without ``--pretrained`` it pretrains once into out/transfer/pretrained_STEPS, reusing that
folder when it is already there: the TrainingConfig defaults except ``--pretrain-steps``
(6,000), 32 sequences of up to 64 tokens per step, and BERT's own dropout 0.1 and linearly
decaying learning rate: the recipe the published results were measured with. 6,000 steps
because how long the encoder was pretrained decides the result: after 3,000 steps
(masked-LM accuracy 0.52) the pretrained start gains only with 50 labelled sentences,
after 6,000 (0.86) it wins by 13 to 28 points at every size (docs/finetuning.md,
section 7).

BLAS threads default to 1: on a busy 2-core machine, OpenBLAS threads fighting over the
cores made one training step of the tiny model ~15x slower (0.9 s instead of 0.06 s).
Set OPENBLAS_NUM_THREADS yourself to override.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # must precede the first import of numpy

import argparse  # noqa: E402
import json  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from minibert.data.templates import TOPICS  # noqa: E402
from minibert.io.fileio import atomic_write_json  # noqa: E402
from minibert.tokenization import load_tokenizer  # noqa: E402
from minibert.training.finetune import FinetuneConfig, run_finetune, scratch_tokenizer  # noqa: E402
from minibert.training.pretrain import TrainingConfig, pretrain  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
SCRATCH = "scratch"


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pretrained_folders(args) -> list[Path]:
    """The --pretrained folders, or one pretraining run of --pretrain-steps (reused)."""
    if args.pretrained:
        return [Path(folder) for folder in args.pretrained]
    folder = Path(args.pretrain_out) / f"pretrained_{args.pretrain_steps}"
    if (folder / "metrics.json").is_file():
        log(f"reusing the pretraining run in {folder}")
    else:
        log(f"pretraining the tiny BERT for {args.pretrain_steps} steps into {folder}")
        config = TrainingConfig(steps=args.pretrain_steps, batch_size=32, max_seq_length=64,
                                dropout=0.1, schedule="linear")
        pretrain(config, folder,
                 progress=lambda message: log(message) if "held-out" in message else None)
    return [folder]


def describe(folder: Path) -> dict:
    """Arm name and pretraining facts of a folder written by ``minibert pretrain``."""
    metrics_file = folder / "metrics.json"
    facts = json.loads(metrics_file.read_text()) if metrics_file.is_file() else {}
    steps = facts.get("steps")
    name = f"pretrained {steps} steps" if steps else f"pretrained {folder.name}"
    return {"arm": name, "folder": str(folder), "steps": steps,
            "masked_lm_accuracy": facts.get("masked_lm_accuracy"),
            "next_sentence_accuracy": facts.get("next_sentence_accuracy")}


def run_grid(args, arms: dict, tokenizer) -> list[dict]:
    """Every (seed, size, arm) run; ``arms`` maps arm name -> folder or None (scratch)."""
    records = []
    total = len(args.seeds) * len(args.sizes) * len(arms)
    for seed in args.seeds:
        for size in args.sizes:
            for arm, folder in arms.items():
                config = FinetuneConfig(task="classify", train_size=size,
                                        test_size=args.test_size, epochs=args.epochs,
                                        min_steps=args.min_steps, batch_size=args.batch_size,
                                        learning_rate=args.lr, seed=seed)
                start = time.perf_counter()
                _, _, metrics, _ = run_finetune(config, folder, tokenizer,
                                                progress=lambda message: None)
                records.append({"arm": arm, "train_size": size, "seed": seed,
                                "accuracy": metrics["accuracy"], "steps": metrics["steps"],
                                "final_train_loss": metrics["final_train_loss"],
                                "seconds": round(time.perf_counter() - start, 2)})
                log(f"[{len(records)}/{total}] seed {seed}  n={size:<4d} {arm:<24s} "
                    f"accuracy {metrics['accuracy']:.3f}  ({records[-1]['seconds']:.0f} s)")
    return records


def summarize(records: list[dict], arms, sizes) -> dict:
    """Mean, sample standard deviation, min and max of accuracy per arm and size."""
    summary = {}
    for arm in arms:
        summary[arm] = []
        for size in sizes:
            values = np.array([r["accuracy"] for r in records
                               if r["arm"] == arm and r["train_size"] == size])
            summary[arm].append({"train_size": size, "mean": float(values.mean()),
                                 "std": float(values.std(ddof=1)) if len(values) > 1 else 0.0,
                                 "min": float(values.min()), "max": float(values.max()),
                                 "runs": len(values)})
    return summary


def print_table(summary: dict, sizes) -> None:
    arms = list(summary)
    print(f"{'labelled':>8}  " + "  ".join(f"{arm:>30}" for arm in arms))
    for index, size in enumerate(sizes):
        cells = [f"{summary[arm][index]['mean']:.3f} ± {summary[arm][index]['std']:.3f} "
                 f"[{summary[arm][index]['min']:.2f}-{summary[arm][index]['max']:.2f}]"
                 for arm in arms]
        print(f"{size:>8}  " + "  ".join(f"{cell:>30}" for cell in cells))


def draw(summary: dict, sizes, path: Path, runs_per_point: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minibert.viz.style import lecture_style, save_figure

    # Okabe-Ito colours; the scratch arm keeps vermillion and a dashed line.
    styles = [dict(marker=marker, linestyle="-", color=color) for marker, color in
              zip(["o", "^", "D", "v"], ["#0072B2", "#009E73", "#CC79A7", "#000000"],
                  strict=True)]
    with lecture_style():
        fig, ax = plt.subplots(figsize=(10, 6.5))
        pretrained = [arm for arm in summary if arm != SCRATCH]
        for index, arm in enumerate([*pretrained, SCRATCH]):
            style = (dict(marker="s", linestyle="--", color="#D55E00") if arm == SCRATCH
                     else styles[index % len(styles)])
            means = [row["mean"] for row in summary[arm]]
            stds = [row["std"] for row in summary[arm]]
            label = "random start (scratch)" if arm == SCRATCH else arm
            ax.errorbar(sizes, means, yerr=stds, capsize=5, label=label, **style)
        ax.axhline(1 / len(TOPICS), color="gray", linestyle=":", linewidth=1.5,
                   label=f"chance (1/{len(TOPICS)})")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(size) for size in sizes])
        ax.set_ylim(0, 1)
        ax.set_xlabel("labelled training sentences")
        ax.set_ylabel(f"test accuracy ({len(TOPICS)} topics)")
        ax.set_title("Fine-tuning the tiny BERT: pretrained vs random start")
        ax.legend(loc="upper left", title=f"mean ± std over {runs_per_point} seeds",
                  fontsize=12, title_fontsize=12)
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        save_figure(fig, path)
        plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pretrained", metavar="DIR", nargs="+",
                        help="existing pretraining folders (e.g. out/demo), one arm each")
    parser.add_argument("--pretrain-steps", type=int, default=6000,
                        help="steps of the pretraining run made when --pretrained is absent")
    parser.add_argument("--pretrain-out", default=str(ROOT / "out" / "transfer"),
                        help="parent folder of that run")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--test-size", type=int, default=500)
    defaults = FinetuneConfig()
    parser.add_argument("--epochs", type=int, default=defaults.epochs)
    parser.add_argument("--min-steps", type=int, default=200,
                        help="at least this many steps per run (more epochs for small sets: "
                             "20 epochs of 50 sentences are only 80 steps)")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size)
    parser.add_argument("--lr", type=float, default=defaults.learning_rate,
                        help="peak learning rate, every arm")
    parser.add_argument("--results", default=str(ROOT / "docs" / "transfer_results.json"))
    parser.add_argument("--figure", default=str(ROOT / "docs" / "images" / "transfer.png"))
    args = parser.parse_args(argv)

    start = time.perf_counter()
    folders = pretrained_folders(args)
    starts = [describe(folder) for folder in folders]
    tokenizer = load_tokenizer(folders[0])
    for folder in folders[1:]:
        if load_tokenizer(folder).get_vocab() != tokenizer.get_vocab():
            raise SystemExit(f"{folder} has another vocabulary than {folders[0]}; the arms "
                             f"must share one")
    # Every arm uses this vocabulary; say whether it is also the one that
    # `minibert finetune` without --model learns on its own.
    same_vocabulary = scratch_tokenizer(FinetuneConfig()).get_vocab() == tokenizer.get_vocab()
    arms = {facts["arm"]: Path(facts["folder"]) for facts in starts}
    arms[SCRATCH] = None
    records = run_grid(args, arms, tokenizer)
    summary = summarize(records, arms, args.sizes)
    print_table(summary, args.sizes)
    seconds = round(time.perf_counter() - start, 1)
    atomic_write_json(Path(args.results), {
        "task": f"classify: the topic of one toy-world sentence, {len(TOPICS)} classes",
        "pretrained": starts,
        "vocabulary": {"size": len(tokenizer), "same_as_from_scratch_job": same_vocabulary},
        "settings": {"sizes": args.sizes, "seeds": args.seeds, "test_size": args.test_size,
                     "epochs": args.epochs, "min_steps": args.min_steps,
                     "batch_size": args.batch_size, "learning_rate": args.lr,
                     "optimizer": "AdamW, weight decay 0.01, clip 1.0, linear warmup 10% "
                                  "then linear decay"},
        "summary": summary,
        "runs": records,
        "total_seconds": seconds,
        "command": "python benchmarks/transfer_demo.py " + " ".join(sys.argv[1:]),
    })
    draw(summary, args.sizes, Path(args.figure), len(args.seeds))
    log(f"wrote {args.results} and {args.figure} in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
