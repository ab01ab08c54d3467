"""ELECTRA beside BERT at equal compute on the toy corpus: does training on every token pay?

    OPENBLAS_NUM_THREADS=1 python benchmarks/electra_comparison.py --out out/electra

1. Seconds per training step of BERT (MLM + NSP, the tiny preset) and of ELECTRA (the tiny
   discriminator and a generator a quarter as wide, MLM + 50 RTD), both on a 64 x 32 batch,
   measured alternately in this process (median of 5 rounds of 10
   steps each): a busy machine slows both alike, so their ratio stays meaningful.
2. ELECTRA pretrained with the family comparison's settings (the demo's: batch 64, lr,
   schedule) for round(bert_steps * t_bert / t_electra) steps: the compute of
   ``bert_steps`` BERT steps.
3. The discriminator fine-tuned on the toy "classify" task exactly as the family
   comparison fine-tunes every recipe (200 examples, seed S), beside the BERT and
   RoBERTa-style figures of docs/results/family_comparison.json (1,000 steps, same seeds,
   same protocol; runs are pure functions of their settings, so they are not re-run).

Writes OUT/seedS/ (the runs) and OUT/electra_comparison.json; prints the table.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

BATCH_SIZE, SEQ_LEN, VOCAB = 64, 32, 5000


def synthetic_batch(rng: np.random.Generator) -> dict:
    """A 64 x 32 batch with about 15% MLM targets (at most 10 a row), as pretraining's."""
    input_ids = rng.integers(5, VOCAB, size=(BATCH_SIZE, SEQ_LEN))
    labels = np.full((BATCH_SIZE, SEQ_LEN), -100)
    for row in range(BATCH_SIZE):
        where = rng.choice(np.arange(1, SEQ_LEN - 1), size=5, replace=False)
        labels[row, where] = input_ids[row, where]
        input_ids[row, where] = 4  # plays [MASK]
    return {"input_ids": input_ids, "token_type_ids": np.zeros_like(input_ids),
            "attention_mask": np.ones_like(input_ids), "labels": labels}


def step_times(rounds: int = 5, steps: int = 10) -> dict[str, float]:
    """Median seconds per step of BERT and ELECTRA, measured alternately."""
    import minibert as mb
    from minibert.family.electra import ElectraPreTrainer
    from minibert.training.loop import train_step
    from minibert.training.optim import AdamW

    rng = np.random.default_rng(0)
    batches = [synthetic_batch(rng) for _ in range(3)]
    bert = mb.BertForPreTraining(mb.BertConfig.preset("tiny", vocab_size=VOCAB,
                                                      max_position_embeddings=128,
                                                      hidden_dropout_prob=0.0,
                                                      attention_probs_dropout_prob=0.0))
    electra = ElectraPreTrainer(mb.ElectraConfig.preset("tiny", vocab_size=VOCAB,
                                                        max_position_embeddings=128,
                                                        hidden_dropout_prob=0.0,
                                                        attention_probs_dropout_prob=0.0))
    models = {"bert": (bert, AdamW(bert, lr=1e-4)), "electra": (electra, AdamW(electra, lr=1e-4))}
    times = {name: [] for name in models}
    for _ in range(rounds):
        for name, (model, optimizer) in models.items():
            for index in range(steps + 1):
                batch = dict(batches[index % 3])
                if name == "bert":
                    batch["next_sentence_label"] = np.zeros(BATCH_SIZE, dtype=np.int64)
                start = time.perf_counter()
                train_step(model, batch, optimizer, 1.0)
                if index:  # the first step of a round warms the caches
                    times[name].append(time.perf_counter() - start)
    return {name: statistics.median(values) for name, values in times.items()}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0],
                                     formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--bert-steps", type=int, default=1000)
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    from minibert.training.finetune import finetune
    from minibert.training.pretrain import pretrain
    from minibert.training.pretrain_config import TrainingConfig

    seconds = step_times()
    steps = round(args.bert_steps * seconds["bert"] / seconds["electra"])
    print(f"seconds per step (median, busy machine, one BLAS thread): BERT "
          f"{seconds['bert']:.3f}, ELECTRA {seconds['electra']:.3f}; ELECTRA steps for the "
          f"compute of {args.bert_steps} BERT steps: {steps}", flush=True)
    results = []
    for seed in args.seeds:
        folder = args.out / f"seed{seed}"
        start = time.perf_counter()
        metrics = pretrain(TrainingConfig(architecture="electra", objective="mlm", steps=steps,
                                          seed=seed, save_seconds=0), folder, overwrite=True,
                           progress=lambda message: None)
        trained = time.perf_counter() - start
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            tuned = finetune("classify", folder, folder / "classify", seed=seed,
                             overwrite=True, progress=lambda message: None)
        results.append({"seed": seed, "steps": steps, "classify_accuracy": tuned["accuracy"],
                        "generator_heldout_mlm_accuracy": metrics["masked_lm_accuracy"],
                        "pretrain_seconds": round(trained, 1)})
        print(f"seed {seed}: classify {tuned['accuracy']:.3f} (generator MLM accuracy "
              f"{metrics['masked_lm_accuracy']:.3f})", flush=True)
    family = json.loads((ROOT / "docs" / "results" / "family_comparison.json").read_text())
    values = [r["classify_accuracy"] for r in results]
    report = {"seconds_per_step": seconds, "bert_steps": args.bert_steps,
              "electra_steps": steps, "electra": results,
              "classify_accuracy": {"electra": {"mean": statistics.mean(values),
                                                "std": statistics.stdev(values)
                                                if len(values) > 1 else 0.0,
                                                "values": values}}}
    for recipe in ("bert", "roberta"):
        report["classify_accuracy"][recipe] = family["recipes"][recipe]["classify_accuracy"]
    (args.out / "electra_comparison.json").write_text(json.dumps(report, indent=1))
    print("\nrecipe                          classify accuracy (mean +- std over seeds)")
    for recipe, label in (("bert", "BERT (MLM + NSP), 1000 steps"),
                          ("roberta", "RoBERTa-style (MLM), 1000 steps"),
                          ("electra", f"ELECTRA, {steps} steps")):
        entry = report["classify_accuracy"][recipe]
        shown = " ".join(f"{v:.3f}" for v in entry["values"])
        print(f"{label:<32} {entry['mean']:.3f} +- {entry['std']:.3f}   ({shown})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
