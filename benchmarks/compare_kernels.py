"""The demo step's elementwise layers: an older commit's functions beside today's fast path.

    python benchmarks/compare_kernels.py BASE [--threads N] [--repeats 20]

Loads ``minibert/functional.py`` as it was at the git revision BASE (a file that needs
only NumPy, the layout of every commit so far) and times each layer the model runs on the
demo's shapes (64 x 32 tokens, H = 128, I = 512, 2 heads, the MLM cross-entropy over
300 labelled positions and 4,608 classes) with BASE's functions and with today's, that is
``minibert.kernels.fast(...)``: the fast twin where one exists, else the reference
pair. Before the reorganisation, functional.py held the model's fast versions itself.
Times are the best of two medians of ``--repeats`` calls, old and new in turns.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ARGS = None
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("base", help="a commit, e.g. HEAD~3 or a hash")
    parser.add_argument("--threads", type=int, default=os.cpu_count())
    parser.add_argument("--repeats", type=int, default=20)
    ARGS = parser.parse_args()
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(ARGS.threads)

import importlib.util  # noqa: E402

import numpy as np  # noqa: E402
from run import median_time  # noqa: E402  (benchmarks/run.py, beside this script)

from minibert import functional as F  # noqa: E402
from minibert import kernels as K  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]


def load_functional(revision: str):
    source = subprocess.run(["git", "-C", str(ROOT), "show", f"{revision}:minibert/functional.py"],
                            check=True, capture_output=True, text=True).stdout
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "functional_at_base.py"
        path.write_text(source, encoding="utf-8")
        spec = importlib.util.spec_from_file_location("functional_at_base", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    return module


def cases(module, now: bool):
    """name -> callable for each layer, with ``module``'s functions (or today's fast path)."""
    rng = np.random.default_rng(0)
    f32 = np.float32
    hidden = rng.standard_normal((64, 32, 512)).astype(f32)  # GELU's input (B, T, I)
    x = rng.standard_normal((64, 32, 128)).astype(f32)
    scale = (1 + 0.1 * rng.standard_normal(128)).astype(f32)
    shift = rng.standard_normal(128).astype(f32)
    q, k, v = (rng.standard_normal((64, 2, 32, 64)).astype(f32) for _ in range(3))
    mask = np.ones((64, 1, 1, 32), bool)
    mask[::3, ..., 25:] = False
    logits = rng.standard_normal((300, 4608)).astype(f32)
    labels = rng.integers(0, 4608, 300)
    weight = rng.standard_normal((512, 128)).astype(f32)
    bias = rng.standard_normal(512).astype(f32)

    def pick(name):
        return K.fast(getattr(F, name)) if now else getattr(module, name)

    gelu_cache = pick("gelu_forward")(hidden)[1]
    ln_cache = pick("layernorm_forward")(x, scale, shift)[1]
    attention_cache = pick("attention_forward")(q, k, v, mask)[1]
    ce_cache = pick("cross_entropy_forward")(logits, labels)[1]
    linear_cache = pick("linear_forward")(x, weight, bias)[1]
    return {
        "GELU forward (64, 32, 512)": lambda: pick("gelu_forward")(hidden),
        "GELU backward": lambda: pick("gelu_backward")(hidden, gelu_cache),
        "LayerNorm forward (64, 32, 128)": lambda: pick("layernorm_forward")(x, scale, shift),
        "LayerNorm backward": lambda: pick("layernorm_backward")(x, ln_cache),
        "attention forward (64, 2, 32, 64)": lambda: pick("attention_forward")(q, k, v, mask),
        "attention backward": lambda: pick("attention_backward")(q, attention_cache),
        "cross-entropy forward (300, 4608)": lambda: pick("cross_entropy_forward")(logits,
                                                                                   labels),
        "cross-entropy backward": lambda: pick("cross_entropy_backward")(1.0, ce_cache),
        "linear forward 128 -> 512": lambda: pick("linear_forward")(x, weight, bias),
        "linear backward": lambda: pick("linear_backward")(hidden, linear_cache),
    }


def main() -> int:
    old, new = cases(load_functional(ARGS.base), False), cases(None, True)
    print(f"demo-step layers, {ARGS.threads} BLAS threads: {ARGS.base} beside today's fast path")
    print(f"{'layer':36s} {'before ms':>10s} {'after ms':>9s} {'ratio':>6s}")
    for name in old:
        before = 1e3 * min(median_time(old[name], ARGS.repeats) for _ in range(2))
        after = 1e3 * min(median_time(new[name], ARGS.repeats) for _ in range(2))
        print(f"{name:36s} {before:10.3f} {after:9.3f} {before / after:6.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
