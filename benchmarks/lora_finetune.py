"""Full fine-tuning against LoRA on the toy classification task: what trains, memory, accuracy.

Each arm fine-tunes the shipped tiny-toy checkpoint on ``minibert finetune --task classify``
(same examples, steps and schedule); LoRA arms train rank-r adapters on query and value plus
the new classifier, and merge them before scoring. Columns: parameters the optimizer
updates; the optimizer's own arrays (gradients it reads, Adam's m and v: 12 bytes per
trained float32 parameter); the peak of Python's traced allocations over the whole run
(weights, activations, every buffer: tracemalloc sees NumPy's arrays); test accuracy, the
median over seeds.

    OPENBLAS_NUM_THREADS=1 python benchmarks/lora_finetune.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import tracemalloc

import numpy as np

from minibert.reference import reference_path
from minibert.training.finetune import FinetuneConfig, run_finetune

ARMS = [("full fine-tuning", None, 1e-3), ("LoRA r=4", 4, 1e-3), ("LoRA r=4", 4, 5e-3),
        ("LoRA r=16", 16, 5e-3)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--train-size", type=int, default=200)
    parser.add_argument("--epochs", type=int, default=10)
    args = parser.parse_args()
    folder = reference_path("tiny-toy")
    print(f"tiny-toy, task classify, {args.train_size} training examples, {args.epochs} "
          f"epochs, seeds {args.seeds}")
    print(f"{'arm':<17} {'lr':>6} {'trained':>9} {'share':>6} {'optimizer MiB':>13} "
          f"{'peak MiB':>8} {'accuracy':>8}  per seed")
    for name, rank, lr in ARMS:
        accuracies, peaks, trained = [], [], None
        for seed in args.seeds:
            config = FinetuneConfig(task="classify", train_size=args.train_size,
                                    epochs=args.epochs, learning_rate=lr, seed=seed,
                                    lora_rank=rank)
            tracemalloc.start()
            model, _, metrics, _ = run_finetune(config, folder, progress=lambda _: None)
            peaks.append(tracemalloc.get_traced_memory()[1] / 2**20)
            tracemalloc.stop()
            accuracies.append(metrics["accuracy"])
            trained, total = metrics["trained_parameters"], model.num_parameters()
        optimizer_mib = 12 * trained / 2**20
        print(f"{name:<17} {lr:>6g} {trained:>9,} {trained / total:>6.1%} {optimizer_mib:>13.2f} "
              f"{np.median(peaks):>8.1f} {np.median(accuracies):>8.3f}  "
              f"{' '.join(f'{a:.3f}' for a in accuracies)}")


if __name__ == "__main__":
    main()
