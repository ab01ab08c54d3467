"""BERT's family on one toy corpus: BERT, RoBERTa-style, ALBERT and a distilled student.

    python benchmarks/family_comparison.py --out out/family            # everything
    python benchmarks/family_comparison.py --out out/family --phase time

Four recipes, each over --seeds (default 0 1 2), with the same steps, batch (64 x 32
tokens), learning rate and schedule (the demo's):

- ``bert``: BertForPreTraining, MLM + NSP, static masks (Devlin et al., 2019);
- ``roberta``: the same model, MLM only, masks drawn afresh every epoch (Liu et al., 2019);
- ``albert``: AlbertForPreTraining, factorised embeddings (E = 64) and one layer shared by
  all four, MLM + sentence-order prediction (Lan et al., 2020);
- ``distil``: a DistilBERT with half its teacher's layers, initialised from the reference
  checkpoint (tiny-toy) and distilled from it (Sanh et al., 2019), the distillation job's
  own defaults except the steps and batch.

Phases (each skips what is already in --out, so an interrupted run continues):

- ``train``: the runs, into OUT/RECIPE/seedS;
- ``eval``: every model on one held-out set (260 toy documents from corpus seed 1234,
  cut with each model's own vocabulary, 15% MLM targets): MLM accuracy; the fill-mask
  probes answered; fine-tuning on the toy "classify" task (200 examples, seed S);
- ``time``: seconds per training step of each recipe, median of 20 steps on the same
  batch shape, each recipe in its own process, one after the other;
- ``report``: the table (mean ± standard deviation over seeds) and the figure, written to
  docs/results/family_comparison.json and docs/images/family_comparison.png.

``--recipes`` measures only some recipes again (train, eval and time): the report keeps the
other rows of docs/results/family_comparison.json as they were, each with the date it was
measured, so a new reference checkpoint needs only ``--recipes distil``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402

from minibert.io.fileio import atomic_write_json, atomic_write_text  # noqa: E402

RECIPES = ("bert", "roberta", "albert", "distil")
LABELS = {"bert": "BERT (MLM + NSP)", "roberta": "RoBERTa-style (MLM, dynamic)",
          "albert": "ALBERT (shared, E=64, SOP)", "distil": "DistilBERT student"}
EVAL_CORPUS_SEED = 1234
BATCH_SIZE, SEQ_LEN = 64, 32


def model_class(folder: Path):
    from minibert.family.registry import family_of_folder

    return family_of_folder(folder).masked_lm


# -- train ---------------------------------------------------------------------------------


def train(out: Path, recipe: str, seed: int, steps: int) -> None:
    folder = out / recipe / f"seed{seed}"
    if (folder / "metrics.json").is_file():
        return
    from minibert.training.pretrain import pretrain
    from minibert.training.pretrain_config import TrainingConfig

    def quiet(message: str) -> None:
        del message  # the runs' progress lines are not shown

    start = time.perf_counter()
    if recipe == "distil":
        import minibert as mb
        from minibert.training.distillation import DistillConfig, distil

        distil(DistillConfig(steps=steps, batch_size=BATCH_SIZE, seed=seed),
               mb.reference_path(), folder, overwrite=True, progress=quiet)
    else:
        settings = {"bert": {"objective": "nsp"},
                    "roberta": {"objective": "mlm", "dynamic_masking": True},
                    "albert": {"architecture": "albert", "objective": "sop"}}[recipe]
        pretrain(TrainingConfig(steps=steps, seed=seed, save_seconds=0, **settings), folder,
                 overwrite=True, progress=quiet)
    print(f"trained {recipe} seed {seed} in {time.perf_counter() - start:.0f} s", flush=True)


# -- eval ----------------------------------------------------------------------------------


def heldout_batches(tokenizer):
    from minibert.data import ToyCorpus
    from minibert.data.pretraining import PretrainingDataConfig
    from minibert.training.pretrain_data import batches_of, heldout_instances

    corpus = ToyCorpus.generate(10, 260, seed=EVAL_CORPUS_SEED)
    config = PretrainingDataConfig(max_seq_length=SEQ_LEN, masked_lm_prob=0.15,
                                   max_predictions_per_seq=10, dupe_factor=1,
                                   random_seed=EVAL_CORPUS_SEED, objective="mlm")
    return list(batches_of(heldout_instances(corpus.heldout, tokenizer, config), tokenizer,
                           BATCH_SIZE, 10))


def mlm_accuracy(model, batches) -> float:
    correct = total = 0
    model.eval()
    for batch in batches:
        inputs = {"input_ids": batch.input_ids, "attention_mask": batch.attention_mask}
        if "token_type_ids" in model.forward.__code__.co_varnames:
            inputs["token_type_ids"] = batch.token_type_ids
        out = model(**inputs)
        logits = getattr(out, "prediction_logits", None)
        logits = out.logits if logits is None else logits
        where = batch.labels != -100
        correct += int((logits[where].argmax(-1) == batch.labels[where]).sum())
        total += int(where.sum())
    return correct / total


def evaluate_one(out: Path, recipe: str, seed: int) -> None:
    folder = out / recipe / f"seed{seed}"
    result_file = folder / "comparison.json"
    if result_file.is_file():
        return
    from minibert.data.probes import AMBIGUITY_PROBES
    from minibert.fill_mask import fill_mask
    from minibert.tokenization import load_tokenizer
    from minibert.training.finetune import finetune

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = model_class(folder).from_pretrained(folder)
    tokenizer = load_tokenizer(folder)
    accuracy = mlm_accuracy(model, heldout_batches(tokenizer))
    probes = sum(fill_mask(model, tokenizer, probe.text, top_k=1)[0]["token_str"]
                 in probe.answers for probe in AMBIGUITY_PROBES)
    tuned = finetune("classify", folder, folder / "classify", seed=seed, overwrite=True,
                     progress=lambda message: None)
    result = {"recipe": recipe, "seed": seed, "parameters": model.num_parameters(),
              "layers": model.config.num_hidden_layers,
              "heldout_mlm_accuracy": accuracy, "probes": probes,
              "probes_total": len(AMBIGUITY_PROBES),
              "classify_accuracy": tuned["accuracy"],
              "train_metrics": json.loads((folder / "metrics.json").read_text())}
    atomic_write_json(result_file, result)
    print(f"evaluated {recipe} seed {seed}: MLM {accuracy:.3f}, probes {probes}, "
          f"classify {tuned['accuracy']:.3f}", flush=True)


# -- time ----------------------------------------------------------------------------------


def time_recipe(out: Path, recipe: str, steps: int = 20) -> float:
    """Median seconds of one training step of ``recipe`` (run in this process)."""
    import minibert as mb
    from minibert.family.registry import family_of_folder
    from minibert.tokenization import load_tokenizer
    from minibert.training.loop import train_step
    from minibert.training.optim import AdamW

    folder = out / recipe / "seed0"
    tokenizer = load_tokenizer(folder)
    batches = heldout_batches(tokenizer)
    batches = [b for b in batches if b.input_ids.shape[0] == BATCH_SIZE][:3]
    if recipe == "distil":
        from minibert.family.distillation import DistillationObjective, load_teacher

        teacher, _ = load_teacher(mb.reference_path())
        student = mb.DistilBertForMaskedLM.from_pretrained(folder).train()
        model = DistillationObjective(teacher, student)
        optimizer = AdamW(student, lr=1e-4)

        def make(b):
            return {"input_ids": b.input_ids, "attention_mask": b.attention_mask,
                    "labels": b.labels}
    else:
        cls = family_of_folder(folder).pretraining
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            model = cls.from_pretrained(folder).train()
        optimizer = AdamW(model, lr=1e-4)
        label = "sentence_order_label" if recipe == "albert" else "next_sentence_label"

        def make(b):
            inputs = {"input_ids": b.input_ids, "token_type_ids": b.token_type_ids,
                      "attention_mask": b.attention_mask, "labels": b.labels}
            if recipe != "roberta":
                inputs[label] = np.zeros(b.input_ids.shape[0], dtype=np.int64)
            return inputs
    times = []
    for index in range(steps + 3):
        batch = make(batches[index % len(batches)])
        start = time.perf_counter()
        train_step(model, batch, optimizer, 1.0)
        if index >= 3:
            times.append(time.perf_counter() - start)
    return statistics.median(times)


# -- report --------------------------------------------------------------------------------


def report(out: Path, steps: int, seeds: list[int]) -> dict:
    """The table and figure: recipes measured in ``out``, the others kept from the last report."""
    timing = json.loads((out / "timing.json").read_text()) if (out / "timing.json").is_file() \
        else {}
    results_file = ROOT / "docs" / "results" / "family_comparison.json"
    previous = json.loads(results_file.read_text()) if results_file.is_file() else {}
    rows = {}
    for recipe in RECIPES:
        files = [out / recipe / f"seed{s}" / "comparison.json" for s in seeds]
        if not all(file.is_file() for file in files):
            kept = previous.get("recipes", {}).get(recipe)
            if kept is None or previous.get("steps") != steps or previous.get("seeds") != seeds:
                raise SystemExit(f"{recipe}: no runs in {out} and none kept with --steps "
                                 f"{steps} --seeds {' '.join(map(str, seeds))}; measure it")
            rows[recipe] = kept
            continue
        runs = [json.loads(file.read_text()) for file in files]

        def spread(key, runs=runs):
            values = [run[key] for run in runs]
            return {"mean": statistics.mean(values),
                    "std": statistics.stdev(values) if len(values) > 1 else 0.0,
                    "values": values}

        label = LABELS[recipe]
        if recipe == "distil":
            layers = runs[0]["layers"]
            label += f" ({layers} layer{'s' if layers != 1 else ''})"
        rows[recipe] = {"label": label, "measured": time.strftime("%Y-%m-%d"),
                        "parameters": runs[0]["parameters"],
                        "seconds_per_step": timing.get(recipe),
                        "heldout_mlm_accuracy": spread("heldout_mlm_accuracy"),
                        "probes": spread("probes"), "probes_total": runs[0]["probes_total"],
                        "classify_accuracy": spread("classify_accuracy")}
    results = {"steps": steps, "seeds": seeds, "batch": [BATCH_SIZE, SEQ_LEN],
               "eval_corpus_seed": EVAL_CORPUS_SEED,
               "timing": timing.get("_meta", previous.get("timing")), "recipes": rows}
    # in the order of RECIPES, which the table and the figure follow
    atomic_write_text(results_file, json.dumps(results, indent=1) + "\n")
    from minibert.viz.family import family_comparison_figure

    figure = family_comparison_figure(results)
    figure.savefig(ROOT / "docs" / "images" / "family_comparison.png", dpi=100)
    print(markdown_table(results))
    return results


def markdown_table(results: dict) -> str:
    lines = ["| recipe | parameters | s / step | held-out MLM | probes | classify |",
             "|---|---:|---:|---:|---:|---:|"]
    for row in results["recipes"].values():
        seconds = row["seconds_per_step"]
        lines.append(
            f"| {row['label']} | {row['parameters']:,} | "
            f"{'' if seconds is None else f'{seconds:.3f}'} | "
            f"{row['heldout_mlm_accuracy']['mean']:.3f} ± {row['heldout_mlm_accuracy']['std']:.3f}"
            f" | {row['probes']['mean']:.1f} ± {row['probes']['std']:.1f} of "
            f"{row['probes_total']} | {row['classify_accuracy']['mean']:.3f} ± "
            f"{row['classify_accuracy']['std']:.3f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--steps", type=int, default=1200)
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2])
    parser.add_argument("--phase", choices=("train", "eval", "time", "report", "all"),
                        default="all")
    parser.add_argument("--recipes", nargs="+", choices=RECIPES, default=list(RECIPES),
                        help="train/eval only these (to run two jobs side by side)")
    parser.add_argument("--time-one", choices=RECIPES, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.time_one:
        print(json.dumps(time_recipe(args.out, args.time_one)))
        return 0
    if args.phase in ("train", "all"):
        for seed in args.seeds:
            for recipe in args.recipes:
                train(args.out, recipe, seed, args.steps)
    if args.phase in ("eval", "all"):
        for seed in args.seeds:
            for recipe in args.recipes:
                evaluate_one(args.out, recipe, seed)
    if args.phase in ("time", "all"):
        timing = {"_meta": {"threads": os.environ.get("OPENBLAS_NUM_THREADS", "all"),
                            "cores": os.cpu_count(), "steps": 20}}
        if (args.out / "timing.json").is_file():
            timing = {**json.loads((args.out / "timing.json").read_text()), **timing}
        for recipe in args.recipes:
            done = subprocess.run([sys.executable, __file__, "--out", str(args.out),
                                   "--time-one", recipe], capture_output=True, text=True,
                                  check=True)
            timing[recipe] = json.loads(done.stdout.strip().splitlines()[-1])
            print(f"{recipe}: {timing[recipe]:.3f} s a step", flush=True)
        atomic_write_json(args.out / "timing.json", timing)
    if args.phase in ("report", "all"):
        report(args.out, args.steps, args.seeds)
    return 0


if __name__ == "__main__":
    sys.exit(main())
