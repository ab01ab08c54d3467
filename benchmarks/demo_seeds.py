"""The demo with several seeds: held-out NSP and MLM at its end and the wall time of each run.

    python benchmarks/demo_seeds.py                          # seeds 0-4, the demo's workers
    python benchmarks/demo_seeds.py --seeds 0 1 --workers 1  # one process, two seeds
    python benchmarks/demo_seeds.py --workers 1 2 --seeds 0  # the same seed, 1 and 2 workers

Runs ``python -m minibert.demo --seed S --workers N --out DIR`` (what ``make demo`` runs)
one after the other, never side by side, each timed from start to exit, and prints one
row per run and the demo's targets: held-out next-sentence accuracy >= 0.90 and masked-LM
accuracy >= 5x the unigram baseline, within 300 s. Wall times mean something only on an
otherwise idle machine; say which when quoting them.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from minibert.training.pretrain_config import default_workers

TIME_LIMIT = 300.0
NSP_TARGET = 0.90
MLM_FACTOR = 5.0


def run_demo(seed: int, workers: int, out: Path, steps: int | None) -> dict:
    """One demo run; its metrics.json, probe count and wall-clock seconds."""
    command = [sys.executable, "-m", "minibert.demo", "--out", str(out), "--seed", str(seed),
               "--workers", str(workers)]
    if steps is not None:
        command += ["--steps", str(steps)]
    start = time.perf_counter()
    subprocess.run(command, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    wall = time.perf_counter() - start
    metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
    probes = json.loads((out / "fill_mask.json").read_text(encoding="utf-8"))
    return {"seed": seed, "workers": workers, "wall_seconds": round(wall, 1),
            "steps": metrics["steps"], "train_seconds": metrics["train_seconds"],
            "next_sentence_accuracy": round(metrics["next_sentence_accuracy"], 4),
            "masked_lm_accuracy": round(metrics["masked_lm_accuracy"], 4),
            "unigram_baseline_accuracy": round(metrics["unigram_baseline_accuracy"], 4),
            "probes": f"{sum(p['correct'] for p in probes)}/{len(probes)}"}


def meets_targets(row: dict) -> bool:
    return (row["next_sentence_accuracy"] >= NSP_TARGET
            and row["masked_lm_accuracy"] >= MLM_FACTOR * row["unigram_baseline_accuracy"]
            and row["wall_seconds"] <= TIME_LIMIT)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3, 4])
    parser.add_argument("--workers", type=int, nargs="+", default=[default_workers()],
                        help=f"worker counts to run each seed with (default {default_workers()}, "
                             "the demo's here)")
    parser.add_argument("--steps", type=int, default=None, help="default: the demo's")
    parser.add_argument("--keep", metavar="DIR", help="keep the runs in DIR/seedS-wN")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    threads = os.environ.get("OPENBLAS_NUM_THREADS", "unset")
    rows = []
    with tempfile.TemporaryDirectory() as scratch:
        root = Path(args.keep) if args.keep else Path(scratch)
        for workers in args.workers:
            for seed in args.seeds:
                row = run_demo(seed, workers, root / f"seed{seed}-w{workers}", args.steps)
                rows.append(row)
                if not args.json:
                    print(f"seed {row['seed']}  workers {row['workers']}  steps {row['steps']}  "
                          f"NSP {row['next_sentence_accuracy']:.3f}  MLM "
                          f"{row['masked_lm_accuracy']:.3f} "
                          f"({row['masked_lm_accuracy'] / row['unigram_baseline_accuracy']:.1f}x"
                          f" unigram)  probes {row['probes']}  wall {row['wall_seconds']:.0f} s "
                          f"(train {row['train_seconds']:.0f} s)  "
                          f"{'meets' if meets_targets(row) else 'MISSES'} the targets",
                          flush=True)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        print(f"{sum(map(meets_targets, rows))} of {len(rows)} runs meet NSP >= {NSP_TARGET}, "
              f"MLM >= {MLM_FACTOR:g}x unigram within {TIME_LIMIT:.0f} s; cores "
              f"{os.cpu_count()}, OPENBLAS_NUM_THREADS {threads}")
    return 0 if all(map(meets_targets, rows)) else 1


if __name__ == "__main__":
    sys.exit(main())
