"""Does a contrastive fine-tune raise held-out retrieval accuracy? Prints before and after.

The task (minibert.sentence.retrieval_pairs): each anchor is an echo question on a toy-corpus
sentence ("Who grew up in Ashby, a village on the river Alder?") and its positive that
sentence; every other held-out sentence is a distractor, many from the same templates with
other names. Accuracy is the share of held-out questions whose nearest sentence (cosine) is
their own. The model is the shipped tiny-toy checkpoint (pretrained with MLM + NSP only);
the training pairs come from other documents, and none of their sentences is held out.

    OPENBLAS_NUM_THREADS=1 python benchmarks/contrastive_retrieval.py --seeds 0 1 2
"""

from __future__ import annotations

import argparse
import time

import numpy as np

import minibert as mb
from minibert.sentence import contrastive_finetune, retrieval_pairs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--steps", type=int, default=200)
    parser.add_argument("--batch-size", type=int, default=16)
    parser.add_argument("--lr", type=float, default=1e-4)
    parser.add_argument("--train-pairs", type=int, default=800)
    parser.add_argument("--test-pairs", type=int, default=200)
    args = parser.parse_args()
    test = retrieval_pairs(args.test_pairs, seed=10_000)  # held out: its own documents
    print(f"held-out pairs: {len(test)} (chance {1 / len(test):.3f}); steps {args.steps}, "
          f"batch {args.batch_size}, lr {args.lr}")
    print(f"{'seed':>4}  {'before':>7}  {'after':>7}  {'first loss':>10}  {'last loss':>9}  "
          f"{'seconds':>7}")
    gains = []
    for seed in args.seeds:
        model, tokenizer = mb.load_reference("tiny-toy", model_class=mb.BertModel)
        held_out = {sentence for _, sentence in test}
        train = [pair for pair in retrieval_pairs(args.train_pairs, seed=seed + 1)
                 if pair[1] not in held_out]
        start = time.perf_counter()
        result = contrastive_finetune(model, tokenizer, train, test, steps=args.steps,
                                      batch_size=args.batch_size, learning_rate=args.lr,
                                      seed=seed)
        seconds = time.perf_counter() - start
        first, last = np.mean(result.losses[:10]), np.mean(result.losses[-10:])
        print(f"{seed:>4}  {result.accuracy_before:>7.3f}  {result.accuracy_after:>7.3f}  "
              f"{first:>10.3f}  {last:>9.3f}  {seconds:>7.1f}")
        gains.append(result.accuracy_after - result.accuracy_before)
    print(f"gain in accuracy: mean {np.mean(gains):+.3f}, min {np.min(gains):+.3f} over "
          f"{len(gains)} seeds")


if __name__ == "__main__":
    main()
