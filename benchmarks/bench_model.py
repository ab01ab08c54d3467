"""Time one training step (forward + backward) of BertForPreTraining: minibert beside torch.

For each size, both libraries run the same step on the same kind of batch: float32,
train mode (dropout on), MLM labels at 15% of the positions and NSP labels, so the loss
is MLM + NSP. HuggingFace ``transformers`` with eager attention on the torch CPU backend
is timed in the same run when it is installed, with torch limited to as many threads as
NumPy's BLAS uses. Runs alternate (minibert, torch, minibert, ...) after one warm-up
each, and the table reports the median of each.

One difference in work is inherent, not tuned: minibert sends only the labelled
positions through the vocabulary projection, HF projects every position and lets the
loss ignore the rest.

    python benchmarks/bench_model.py             # 5 timed runs per library and size
    python benchmarks/bench_model.py --quick     # 2 timed runs: a smoke test
    python benchmarks/bench_model.py --threads 1
"""

from __future__ import annotations

import argparse
import os
import platform
import statistics
import time

# BLAS reads these when NumPy is first imported, so --threads must set them before that.
THREAD_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
TOY_VOCAB_SIZE = 2000  # a WordPiece vocabulary learned on the toy corpus
MLM_FRACTION = 0.15


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="2 timed runs instead of 5")
    parser.add_argument("--threads", type=int, default=None,
                        help="threads for NumPy's BLAS and torch (default: BLAS's own choice)")
    args = parser.parse_args(argv)
    if args.threads is not None and args.threads < 1:
        parser.error(f"--threads must be a positive integer, got {args.threads}")
    return args


def blas_threads() -> int:
    """Threads NumPy's BLAS will use: the environment's setting, else one per usable core."""
    for name in THREAD_ENV_VARS:
        if os.environ.get(name, "").isdigit():
            return int(os.environ[name])
    return len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()


def load_average() -> str:
    """The 1-minute load average beside the core count: timings mean little on a busy machine."""
    if not hasattr(os, "getloadavg"):
        return "load average: unavailable"
    return f"load average {os.getloadavg()[0]:.2f} on {os.cpu_count()} cores"


def sizes(mb) -> list[tuple[str, object, int, int]]:
    """(label, config, batch size B, sequence length T) of every benchmarked size."""
    return [
        (f"tiny, toy vocab V={TOY_VOCAB_SIZE}",
         mb.BertConfig.preset("tiny", vocab_size=TOY_VOCAB_SIZE), 32, 64),
        ("tiny, V=30522", mb.BertConfig.preset("tiny"), 32, 64),
        ("base, V=30522", mb.BertConfig.preset("base"), 8, 128),
    ]


def make_batch(np, config, batch_size: int, seq_len: int, seed: int = 0) -> dict:
    """Random ids in two segments, no padding, MLM labels at 15% of positions, NSP labels."""
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(1, config.vocab_size, (batch_size, seq_len))  # (B, T)
    token_type_ids = np.zeros((batch_size, seq_len), dtype=np.int64)
    token_type_ids[:, seq_len // 2:] = 1
    labelled = rng.random((batch_size, seq_len)) < MLM_FRACTION
    labels = np.where(labelled, rng.integers(0, config.vocab_size, (batch_size, seq_len)), -100)
    return dict(input_ids=input_ids.astype(np.int64), token_type_ids=token_type_ids,
                attention_mask=np.ones((batch_size, seq_len), dtype=np.int64),
                labels=labels.astype(np.int64),
                next_sentence_label=rng.integers(0, 2, batch_size).astype(np.int64))


def minibert_step(model, batch: dict) -> None:
    model.zero_grad()
    model(**batch)
    model.backward()


def torch_step(model, batch: dict) -> None:
    model.zero_grad(set_to_none=False)
    model(**batch).loss.backward()


def seconds(step, *args) -> float:
    start = time.perf_counter()
    step(*args)
    return time.perf_counter() - start


def load_torch(threads: int):
    """(torch, transformers) limited to ``threads``, or None when not installed."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    torch.set_num_threads(threads)
    transformers.logging.set_verbosity_error()
    return torch, transformers


def torch_model(torch, transformers, config):
    fields = {k: v for k, v in config.to_dict().items() if k != "model_type"}
    hf_config = transformers.BertConfig(**fields, attn_implementation="eager")
    torch.manual_seed(0)
    return transformers.BertForPreTraining(hf_config).float().train()


def main(argv=None) -> None:
    args = parse_args(argv)
    if args.threads is not None:
        for name in THREAD_ENV_VARS:
            os.environ[name] = str(args.threads)
    import numpy as np  # after the thread settings above

    import minibert as mb

    threads = blas_threads()
    repeats = 2 if args.quick else 5
    reference = load_torch(threads)
    print(f"numpy {np.__version__}, {platform.processor() or platform.machine()}, "
          f"BLAS threads {threads}, {repeats} timed runs after 1 warm-up, median shown")
    print(load_average())
    if reference is None:
        print("torch/transformers not installed: minibert only")
    else:
        torch, transformers = reference
        print(f"torch {torch.__version__} ({torch.get_num_threads()} threads), "
              f"transformers {transformers.__version__}, eager attention")
    print("step = forward + backward of BertForPreTraining, float32, train mode, "
          f"MLM labels at {MLM_FRACTION:.0%} of positions + NSP labels\n")

    rows = []
    for label, config, batch_size, seq_len in sizes(mb):
        print(f"{label}: L={config.num_hidden_layers} H={config.hidden_size} "
              f"N={config.num_attention_heads} I={config.intermediate_size}, "
              f"batch {batch_size} x {seq_len} ...", flush=True)
        batch = make_batch(np, config, batch_size, seq_len)
        ours = mb.BertForPreTraining(config, seed=0, dtype=np.float32).train()
        steps = [(minibert_step, ours, batch)]
        if reference is not None:
            theirs = torch_model(torch, transformers, config)
            torch_batch = {name: torch.from_numpy(value) for name, value in batch.items()}
            steps.append((torch_step, theirs, torch_batch))
        for step, model, inputs in steps:
            step(model, inputs)  # warm-up: first-touch allocation, lazy initialization
        times = [[] for _ in steps]
        for _ in range(repeats):
            for timings, (step, model, inputs) in zip(times, steps, strict=True):
                timings.append(seconds(step, model, inputs))
        medians = [statistics.median(timings) for timings in times]
        rows.append((label, f"{batch_size} x {seq_len}", *medians))
        del steps, ours

    header = f"{'size':<24} {'batch':>9} {'minibert ms':>12}"
    if reference is not None:
        header += f" {'torch ms':>10} {'minibert/torch':>15}"
    print("\n" + header + "\n" + "-" * len(header))
    for label, shape, *medians in rows:
        line = f"{label:<24} {shape:>9} {medians[0] * 1e3:>12.1f}"
        if reference is not None:
            line += f" {medians[1] * 1e3:>10.1f} {medians[0] / medians[1]:>15.2f}"
        print(line)
    print(load_average())


if __name__ == "__main__":
    main()
