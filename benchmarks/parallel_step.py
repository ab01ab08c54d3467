"""Data-parallel step time: one process against N worker processes (and MPI ranks).

    python benchmarks/parallel_step.py [--steps 30] [--workers 2] [--batch-size 64]
        [--counts 1,2,4,8] [--mpi] [--json] [--out FILE]

The demo's step shape (tiny preset, vocabulary 5,000, batch 64 of 32 tokens, 15% MLM
targets, NSP labels), float32, with AdamW and clipping at 1.0. Rows:

- one process with 1 BLAS thread, and with as many threads as workers (the fair
  comparison: the same cores, used by BLAS instead of by processes);
- ``minibert.training.workers.DataParallel`` with each worker count (1 .. --workers, or
  --counts), one BLAS thread per worker: the step's median, and each worker's
  forward + backward, waiting for the slowest worker, shared-memory all-reduce (its chunk
  summed over the slots, the clipping norm's shares exchanged) and update (its chunk);
- with --mpi and the mpi extra: ``mpiexec -n N`` ranks (minibert.bridges.mpi), the same
  figures (the all-reduce there includes the waiting).

Every row is timed in its own process, one after the other (never side by side). Medians
over ``--steps`` steps after 3 warm-up steps. Prints a table; --json prints the figures;
--out writes them as JSON too. Every row runs the pairs of ``minibert.functional``, as
the training jobs do.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
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


def _medians(results) -> dict:
    def median_of_slowest(key):
        return statistics.median(max(getattr(r, key)) for r in results)

    figures = {"seconds": statistics.median(r.seconds for r in results),
               "compute": median_of_slowest("compute_seconds"),
               "allreduce": median_of_slowest("allreduce_seconds"),
               "update": median_of_slowest("update_seconds"),
               "bytes_sent": results[0].bytes_sent[0]}
    if results[0].waiting_seconds:
        figures["waiting"] = median_of_slowest("waiting_seconds")
    return figures


def run_parallel(args, workers: int) -> dict:
    from minibert.training.workers import DataParallel

    model, optimizer = build(args.vocab)
    batches = make_batches(args.steps + 3, args.batch_size, args.seq_len, args.vocab)
    results = []
    with DataParallel(model, optimizer, workers, clip=1.0, threads_per_worker=1) as parallel:
        for index, batch in enumerate(batches):
            result = parallel.step(batch)
            if index >= 3:
                results.append(result)
    return {**_medians(results), "gradient_bytes": optimizer.flat_grads.nbytes}


def run_mpi(args) -> dict | None:
    """One MPI rank's side (under mpiexec); rank 0 returns the figures, the others None."""
    from minibert.bridges.mpi import MPIDataParallel, world

    mpi_world = world()
    model, optimizer = build(args.vocab)
    batches = make_batches(args.steps + 3, args.batch_size, args.seq_len, args.vocab)
    results = []
    with MPIDataParallel(model, optimizer, mpi_world, clip=1.0) as parallel:
        for index, batch in enumerate(batches):
            mpi_world.comm.Barrier()  # every step starts together, as the workers' steps do
            result = parallel.step(batch)
            if index >= 3:
                results.append(result)
    return {**_medians(results), "gradient_bytes": optimizer.flat_grads.nbytes} \
        if mpi_world.rank == 0 else None


def in_subprocess(args, mode: str, value: int) -> dict:
    env = dict(os.environ, OPENBLAS_NUM_THREADS=str(value if mode == "single" else 1),
               OMP_NUM_THREADS=str(value if mode == "single" else 1))
    command = [sys.executable, __file__, "--child", mode, str(value), "--steps", str(args.steps),
               "--batch-size", str(args.batch_size), "--seq-len", str(args.seq_len),
               "--vocab", str(args.vocab)]
    if mode == "mpi":
        command = [args.mpiexec, "-n", str(value), *command]
    out = subprocess.run(command, env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--counts", default=None,
                        help="comma-separated worker counts to time (default 1..--workers)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--seq-len", type=int, default=32)
    parser.add_argument("--vocab", type=int, default=5000)
    parser.add_argument("--mpi", action="store_true",
                        help="also time mpiexec -n N ranks for each count (needs the mpi extra)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--out", help="also write the figures as JSON to this file")
    parser.add_argument("--child", nargs=2, metavar=("MODE", "N"), help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        mode, value = args.child[0], int(args.child[1])
        figures = (run_single(args) if mode == "single" else run_mpi(args) if mode == "mpi"
                   else run_parallel(args, value))
        if figures is not None:
            print(json.dumps(figures))
        return 0
    counts = (sorted({int(c) for c in args.counts.split(",")}) if args.counts
              else list(range(1, args.workers + 1)))
    rows = []
    for threads in sorted({1, max(counts)}):
        rows.append((f"1 process, {threads} BLAS thread(s)", in_subprocess(args, "single",
                                                                             threads)))
    for workers in counts:
        rows.append((f"DataParallel, {workers} worker(s) x 1 thread",
                     in_subprocess(args, "parallel", workers)))
    if args.mpi:
        args.mpiexec = shutil.which("mpiexec", path=os.pathsep.join(
            [str(Path(sys.executable).parent), os.environ.get("PATH", "")]))
        if args.mpiexec is None:
            print("--mpi: no mpiexec on PATH (pip install 'minibert[mpi]')", file=sys.stderr)
            return 2
        for ranks in counts:
            if ranks > 1:
                try:
                    rows.append((f"MPI, {ranks} ranks x 1 thread",
                                 in_subprocess(args, "mpi", ranks)))
                except subprocess.CalledProcessError as error:
                    why = (error.stderr or error.stdout or "").strip().splitlines()
                    print(f"--mpi: mpiexec -n {ranks} failed: {why[-1] if why else error}",
                          file=sys.stderr)
                    break
    base = rows[0][1]["seconds"]
    if args.out:
        Path(args.out).write_text(json.dumps({
            "cores": os.cpu_count(), "batch_size": args.batch_size, "seq_len": args.seq_len,
            "steps": args.steps, "rows": dict(rows)}, indent=1))
    if args.json:
        print(json.dumps(dict(rows), indent=1))
        return 0
    print(f"batch {args.batch_size} x {args.seq_len} tokens, tiny preset, vocabulary "
          f"{args.vocab}, float32; medians of {args.steps} steps; "
          f"cores: {os.cpu_count()}")
    print(f"{'':34s} {'step ms':>8s} {'speed-up':>8s} {'fwd+bwd':>8s} {'waiting':>8s} "
          f"{'allred.':>8s} {'update':>8s}")
    for name, figures in rows:
        parts = [f"{1000 * figures[k]:8.1f}" if k in figures else f"{'':8s}"
                 for k in ("compute", "waiting", "allreduce", "update")]
        print(f"{name:34s} {1000 * figures['seconds']:8.1f} {base / figures['seconds']:8.2f} "
              + " ".join(parts))
    last = [figures for name, figures in rows if name.startswith("DataParallel")][-1]
    n = counts[-1]
    print(f"shared-memory all-reduce, {n} workers: each read {last['bytes_sent'] / 1e6:.2f} MB "
          f"of the others' slots, of a {last['gradient_bytes'] / 1e6:.2f} MB gradient "
          f"((N-1)/N = {(n - 1) / n:.3f}; a ring over pipes sends 2(N-1)/N = "
          f"{2 * (n - 1) / n:.3f})")
    print("waiting: at the first barrier, for the slowest worker's backward; all-reduce: "
          "the chunk's sum and the clipping norm's exchange; update: the chunk's AdamW")
    return 0


if __name__ == "__main__":
    sys.exit(main())
