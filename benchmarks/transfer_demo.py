"""Transfer learning on the toy world: does pretraining help when labels are few?

Fine-tunes the tiny BERT on topic classification (13 topics, one sentence per example)
from two starting points, with the same vocabulary, data, schedule and budget:

- **pretrained**: the encoder of a ``minibert pretrain`` run (MLM + NSP on the toy
  corpus), a fresh classifier on top;
- **scratch**: the same architecture from random weights.

for several numbers of labelled examples and several seeds (each seed draws its own
training and test sentences and initializes its own head), then prints the mean and
spread of test accuracy, writes every run to ``docs/transfer_results.json`` and draws
``docs/images/transfer.png``.

    python benchmarks/transfer_demo.py                      # pretrains first (~5-15 min)
    python benchmarks/transfer_demo.py --pretrained out/demo

BLAS threads default to 1: on a busy 2-core machine, OpenBLAS threads fighting over the
cores made one training step of the tiny model ~15x slower (0.9 s instead of 0.06 s).
Set OPENBLAS_NUM_THREADS yourself to override.
"""

from __future__ import annotations

import os

for _variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_variable, "1")  # must precede the first import of numpy

import argparse  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
from pathlib import Path  # noqa: E402

import numpy as np  # noqa: E402

from minibert.checkpoint import load_tokenizer  # noqa: E402
from minibert.data.corpus import TOPICS  # noqa: E402
from minibert.fileio import atomic_write_json  # noqa: E402
from minibert.finetune import FinetuneConfig, run_finetune, scratch_tokenizer  # noqa: E402
from minibert.trainer import TrainingConfig, pretrain  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
ARMS = ("pretrained", "scratch")


def log(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def pretrained_folder(args) -> Path:
    """The given --pretrained folder, or a default pretraining run (reused when present)."""
    if args.pretrained is not None:
        return Path(args.pretrained)
    folder = Path(args.pretrain_out)
    if (folder / "metrics.json").is_file():
        log(f"reusing the pretraining run in {folder}")
        return folder
    log(f"pretraining the tiny BERT with TrainingConfig defaults into {folder}")
    pretrain(TrainingConfig(), folder, progress=lambda message: None)
    return folder


def run_grid(args, model_dir: Path, tokenizer) -> list[dict]:
    """Every (seed, size, arm) run; returns one record per run."""
    records = []
    total = len(args.seeds) * len(args.sizes) * len(ARMS)
    for seed in args.seeds:
        for size in args.sizes:
            for arm in ARMS:
                config = FinetuneConfig(task="classify", train_size=size,
                                        test_size=args.test_size, epochs=args.epochs,
                                        batch_size=args.batch_size,
                                        learning_rate=args.lr[arm], seed=seed)
                start = time.perf_counter()
                _, _, metrics, _ = run_finetune(
                    config, model_dir if arm == "pretrained" else None, tokenizer,
                    progress=lambda message: None)
                records.append({"arm": arm, "train_size": size, "seed": seed,
                                "accuracy": metrics["accuracy"], "steps": metrics["steps"],
                                "final_train_loss": metrics["final_train_loss"],
                                "seconds": round(time.perf_counter() - start, 2)})
                log(f"[{len(records)}/{total}] seed {seed}  n={size:<4d} {arm:<10s} "
                    f"accuracy {metrics['accuracy']:.3f}  ({records[-1]['seconds']:.0f} s)")
    return records


def summarize(records: list[dict], sizes) -> dict:
    """Mean, standard deviation, min and max of accuracy per arm and training size."""
    summary = {}
    for arm in ARMS:
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
    print(f"{'labelled':>8}  {'pretrained':>22}  {'scratch':>22}  {'gain':>6}")
    for index, size in enumerate(sizes):
        cells = []
        for arm in ARMS:
            row = summary[arm][index]
            cells.append(f"{row['mean']:.3f} ± {row['std']:.3f} "
                         f"[{row['min']:.2f}-{row['max']:.2f}]")
        gain = summary["pretrained"][index]["mean"] - summary["scratch"][index]["mean"]
        print(f"{size:>8}  {cells[0]:>22}  {cells[1]:>22}  {gain:+.3f}")


def draw(summary: dict, sizes, path: Path, runs_per_point: int) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from minibert.viz_style import lecture_style, save_figure

    with lecture_style():
        fig, ax = plt.subplots(figsize=(9, 6))
        styles = {"pretrained": dict(marker="o", linestyle="-"),
                  "scratch": dict(marker="s", linestyle="--")}
        for arm in ARMS:
            means = [row["mean"] for row in summary[arm]]
            stds = [row["std"] for row in summary[arm]]
            ax.errorbar(sizes, means, yerr=stds, capsize=5, label=f"{arm} start",
                        **styles[arm])
        ax.axhline(1 / len(TOPICS), color="gray", linestyle=":", linewidth=1.5,
                   label=f"chance (1/{len(TOPICS)})")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sizes, [str(size) for size in sizes])
        ax.set_ylim(0, 1)
        ax.set_xlabel("labelled training sentences")
        ax.set_ylabel("test accuracy (13 topics)")
        ax.set_title("Fine-tuning the tiny BERT: pretrained vs random start")
        ax.legend(loc="lower right", title=f"mean ± std of {runs_per_point} seeds")
        ax.grid(alpha=0.3)
        fig.tight_layout()
        path.parent.mkdir(parents=True, exist_ok=True)
        save_figure(fig, path)
        plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pretrained", metavar="DIR",
                        help="an existing pretraining folder (e.g. out/demo); default: "
                             "pretrain with TrainingConfig defaults")
    parser.add_argument("--pretrain-out", default=str(ROOT / "out" / "transfer" / "pretrained"),
                        help="where to pretrain when --pretrained is not given")
    parser.add_argument("--sizes", type=int, nargs="+", default=[50, 100, 200, 400])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--test-size", type=int, default=500)
    parser.add_argument("--epochs", type=int, default=20)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr-pretrained", type=float, default=3e-4)
    parser.add_argument("--lr-scratch", type=float, default=3e-4)
    parser.add_argument("--results", default=str(ROOT / "docs" / "transfer_results.json"))
    parser.add_argument("--figure", default=str(ROOT / "docs" / "images" / "transfer.png"))
    args = parser.parse_args(argv)
    args.lr = {"pretrained": args.lr_pretrained, "scratch": args.lr_scratch}

    start = time.perf_counter()
    model_dir = pretrained_folder(args)
    tokenizer = load_tokenizer(model_dir)
    # Both arms share the pretrained folder's vocabulary; say whether it is also the one
    # `finetune --task classify` (no --model) would learn on its own.
    same_vocabulary = scratch_tokenizer(FinetuneConfig()).get_vocab() == tokenizer.get_vocab()
    records = run_grid(args, model_dir, tokenizer)
    summary = summarize(records, args.sizes)
    print_table(summary, args.sizes)
    seconds = round(time.perf_counter() - start, 1)
    atomic_write_json(Path(args.results), {
        "task": "classify: topic of one toy-world sentence, 13 classes",
        "pretrained_folder": str(model_dir),
        "vocabulary": {"size": len(tokenizer), "same_as_from_scratch_job": same_vocabulary},
        "settings": {"sizes": args.sizes, "seeds": args.seeds, "test_size": args.test_size,
                     "epochs": args.epochs, "batch_size": args.batch_size,
                     "learning_rate": args.lr, "max_length": None,
                     "schedule": "linear warmup (10%) and decay, AdamW, weight decay 0.01"},
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
