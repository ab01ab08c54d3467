"""Data-parallel step time: one process against N worker processes, on this machine.

    python benchmarks/parallel_step.py [--steps 30] [--workers 2] [--batch-size 64]

The demo's step shape (tiny preset, vocabulary 5,000, batch 64 of 32 tokens, 15% MLM
targets, NSP labels), float32, with AdamW and clipping at 1.0. Rows:

- one process with 1 BLAS thread, and with as many threads as workers (the fair
  comparison: the same cores, used by BLAS instead of by processes);
- ``minibert.training.parallel.DataParallel`` with 1 .. N workers of one thread each,
  with each worker's forward + backward, all-reduce and update times.

Every row is timed in its own process, one after the other (never side by side). Medians
over ``--steps`` steps after 3 warm-up steps. Prints a table; --json prints the figures.
The fast twins (``minibert.kernels``) are on, as the training jobs switch them on;
``--reference`` times the reference pairs of ``minibert.functional`` instead.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def make_batches(count: int, batch_size: int, seq_len: int, vocab: int, seed: int = 0):
    import numpy as np

    rng = np.random.default_rng(seed)
    batches = []
    for _ in range(count):
        ids = rng.integers(5, vocab, (batch_size, seq_len))
        lengths = rng.integers(seq_len // 2, seq_len + 1, batch_size)
        mask = (np.arange(seq_len)[None] < lengths[:, None]).astype(np.int64)
        ids = np.where(mask == 1, ids, 0)
        labels = np.where((rng.random((batch_size, seq_len)) < 0.15) & (mask == 1), ids, -100)
        types = ((np.arange(seq_len)[None] >= lengths[:, None] // 2) & (mask == 1))
        batches.append({"input_ids": ids, "token_type_ids": types.astype(np.int64),
                        "attention_mask": mask, "labels": labels,
                        "next_sentence_label": rng.integers(0, 2, batch_size)})
    return batches


def build(vocab: int):
    import numpy as np

    import minibert as mb
    from minibert.training.optim import AdamW

    config = mb.BertConfig.preset("tiny", vocab_size=vocab, hidden_dropout_prob=0.0,
                                  attention_probs_dropout_prob=0.0)
    model = mb.BertForPreTraining(config, seed=0, dtype=np.float32)
    return model, AdamW(model, lr=1e-3, weight_decay=0.01)


def run_single(args) -> dict:
    from minibert.training.loop import train_step

    model, optimizer = build(args.vocab)
    batches = make_batches(args.steps + 3, args.batch_size, args.seq_len, args.vocab)
    times = []
    for index, batch in enumerate(batches):
        start = time.perf_counter()
        train_step(model, batch, optimizer, 1.0)
        if index >= 3:
            times.append(time.perf_counter() - start)
    return {"seconds": statistics.median(times)}


def run_parallel(args, workers: int) -> dict:
    from minibert.training.parallel import DataParallel

    model, optimizer = build(args.vocab)
    batches = make_batches(args.steps + 3, args.batch_size, args.seq_len, args.vocab)
    results = []
    with DataParallel(model, optimizer, workers, clip=1.0, threads_per_worker=1) as parallel:
        for index, batch in enumerate(batches):
            result = parallel.step(batch)
            if index >= 3:
                results.append(result)
    return {
        "seconds": statistics.median(r.seconds for r in results),
        "compute": statistics.median(max(r.compute_seconds) for r in results),
        "allreduce": statistics.median(max(r.allreduce_seconds) for r in results),
        "update": statistics.median(max(r.update_seconds) for r in results),
        "bytes_sent": results[0].bytes_sent[0],
        "gradient_bytes": optimizer.flat_grads.nbytes,
    }


def in_subprocess(args, mode: str, value: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(value if mode == "single" else 1),
               OMP_NUM_THREADS=str(value if mode == "single" else 1),
               MINIBERT_FAST_KERNELS="0" if args.reference else "1")
    command = [sys.executable, __file__, "--child", mode, str(value), "--steps", str(args.steps),
               "--batch-size", str(args.batch_size), "--seq-len", str(args.seq_len),
               "--vocab", str(args.vocab)]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--reference", action="store_true",
                        help="time the reference pairs instead of the fast twins")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, value = args.child[0], int(args.child[1])
        figures = run_single(args) if mode == "single" else run_parallel(args, value)
        print(json.dumps(figures))
        return 0
    rows = []
    for threads in sorted({1, args.workers}):
        rows.append((f"1 process, {threads} BLAS thread(s)", in_subprocess(args, "single",
                                                                             threads)))
    for workers in range(1, args.workers + 1):
        rows.append((f"DataParallel, {workers} worker(s) x 1 thread",
                     in_subprocess(args, "parallel", workers)))
    if args.json:
        print(json.dumps(dict(rows), indent=1))
        return 0
    base = rows[0][1]["seconds"]
    kernels = "reference pairs" if args.reference else "fast twins on"
    print(f"batch {args.batch_size} x {args.seq_len} tokens, tiny preset, vocabulary "
          f"{args.vocab}, float32, {kernels}; medians of {args.steps} steps; "
          f"cores: {os.cpu_count()}")
    print(f"{'':40s} {'step ms':>8s} {'speed-up':>8s} {'fwd+bwd':>8s} {'allred.':>8s} "
          f"{'update':>8s}")
    for name, figures in rows:
        parts = [f"{1000 * figures[k]:8.1f}" if k in figures else f"{'':8s}"
                 for k in ("compute", "allreduce", "update")]
        print(f"{name:40s} {1000 * figures['seconds']:8.1f} {base / figures['seconds']:8.2f} "
              + " ".join(parts))
    last = rows[-1][1]
    print(f"all-reduce: each worker sent {last['bytes_sent'] / 1e6:.2f} MB of a "
          f"{last['gradient_bytes'] / 1e6:.2f} MB gradient "
          f"({last['bytes_sent'] / last['gradient_bytes']:.3f} of it; 2(N-1)/N = "
          f"{2 * (args.workers - 1) / args.workers:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
