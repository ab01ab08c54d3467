"""The demo's training step at two commits, timed in turns: the speed-up of a change.

    python benchmarks/compare_commits.py BASE [OTHER] [--rounds 20] [--steps 8] [--threads N]

Checks out BASE and OTHER (default: the working tree) into temporary git worktrees, starts
one worker process for each, lets both prepare the data and model of the ``minibert
pretrain`` defaults (tiny preset, toy corpus, 64 x 32 tokens), and then asks them in turn,
``--rounds`` times, to run ``--steps`` full training steps (zero_grad, forward, backward,
clipping, AdamW). Taking turns every second or so means both see the same machine: on a
shared or thermally limited CPU the speed of the same code drifts by 10-30% over minutes,
so timings taken minutes apart cannot be compared. Prints each side's median step time
and the median of the paired ratios BASE / OTHER (above 1: OTHER is faster).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# The worker runs inside one checkout; it finds the pretraining API where either layout
# of the package keeps it (minibert.trainer before the reorganisation, training/ after).
WORKER = r"""
import sys, time
try:
    from minibert.trainer import TrainingConfig, prepare_data, Trainer
    from minibert.optim import clip_grad_norm
except ImportError:
    from minibert.training.pretrain import TrainingConfig, prepare_data, Trainer
    from minibert.training.optim import clip_grad_norm
try:  # commits before the one-program change: their jobs switched fast twins on
    from minibert.kernels import set_fast_kernels
    set_fast_kernels(True)
except ImportError:  # before the switch moved there, the twins were on by default
    pass
config = TrainingConfig(steps=10, eval_every=10**9, log_every=10**9, save_seconds=0)
data = prepare_data(config, progress=lambda message: None)
trainer = Trainer(config, data, progress=lambda message: None)
model, optimizer = trainer.model, trainer.optimizer
batches = [next(data.train_batches) for _ in range(8)]
count = 0
def step():
    global count
    batch = batches[count % len(batches)]
    count += 1
    model.zero_grad()
    model(**batch.model_inputs())
    model.backward()
    clip_grad_norm(model, config.max_grad_norm)
    optimizer.step()
for _ in range(5):
    step()
print("ready", flush=True)
for line in sys.stdin:
    steps = int(line)
    start = time.perf_counter()
    for _ in range(steps):
        step()
    print((time.perf_counter() - start) / steps, flush=True)
"""


def start_worker(folder: Path, threads: int) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(folder))
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        env[variable] = str(threads)
    worker = subprocess.Popen([sys.executable, "-c", WORKER], cwd=folder, env=env, text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    if worker.stdout.readline().strip() != "ready":
        raise RuntimeError(f"the worker in {folder} did not start")
    return worker


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="a commit, e.g. HEAD~3 or a hash")
    parser.add_argument("other", nargs="?", default=None,
                        help="another commit (default: the working tree)")
    parser.add_argument("--rounds", type=int, default=20)
    parser.add_argument("--steps", type=int, default=8, help="steps per turn")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        folders = {}
        for label, revision in (("base", args.base), ("other", args.other)):
            if revision is None:
                folders[label] = ROOT
                continue
            folder = Path(scratch) / label
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "-q",
                            str(folder), revision], check=True)
            folders[label] = folder
        try:
            workers = {label: start_worker(folder, args.threads)
                       for label, folder in folders.items()}
            times = {label: [] for label in workers}
            for round_index in range(args.rounds):
                order = ("base", "other") if round_index % 2 == 0 else ("other", "base")
                for label in order:
                    workers[label].stdin.write(f"{args.steps}\n")
                    workers[label].stdin.flush()
                    times[label].append(float(workers[label].stdout.readline()))
            for worker in workers.values():
                worker.stdin.close()
                worker.wait()
        finally:
            for folder in folders.values():
                if folder != ROOT:
                    subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force",
                                    str(folder)], check=False)
    base, other = np.array(times["base"]), np.array(times["other"])
    ratio = base / other
    print(f"demo training step, {args.threads} BLAS threads, {args.rounds} turns of "
          f"{args.steps} steps each")
    print(f"  {args.base}: median {np.median(base) * 1e3:.1f} ms")
    print(f"  {args.other or 'working tree'}: median {np.median(other) * 1e3:.1f} ms")
    print(f"  speed-up (paired ratio, median): {np.median(ratio):.3f} "
          f"(quartiles {np.percentile(ratio, 25):.3f}-{np.percentile(ratio, 75):.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
