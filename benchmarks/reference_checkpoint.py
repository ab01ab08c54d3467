"""Train the reference checkpoint ``tiny-toy`` again and compare its metrics with the shipped ones.

    python benchmarks/reference_checkpoint.py                 # retrain in a temporary folder
    python benchmarks/reference_checkpoint.py --out runs/ref  # keep the retrained folder
    python benchmarks/reference_checkpoint.py --write         # replace the shipped folder
    python benchmarks/reference_checkpoint.py --from RUN      # compare a finished run instead

The recipe is the shipped folder's own ``training_config.json`` (``command.txt`` gives the
same run as a ``minibert pretrain`` command). A run is deterministic for its seed on one
machine, but BLAS kernels differ between CPUs and thread counts in the last bits, and those
differences grow over thousands of steps: so this compares metrics, not bytes. It prints
the shipped and the retrained held-out figures and probes side by side, and fails when an
accuracy moves by more than ``--tolerance`` (default 0.02) or the probes by more than one.

A run on the everyday world (``--corpus everyday.txt`` in its recipe) first writes that file
with ``python -m minibert.data.make_corpus -o everyday.txt`` (12,000 documents, seed 0); the
shipped folder names the file without a folder, and command.txt says how to make it.

``--write`` is how the shipped folder was made: it keeps config.json, model.safetensors,
vocab.txt, tokenizer_config.json, metrics.json, training_config.json, history.json, the
fill-mask answers to the 12 ambiguity probes (fill_mask.json), to the 45 paraphrases of
them written before it was trained (paraphrases.json, ``minibert.data.PARAPHRASE_PROBES``)
and to the README's two examples (readme_examples.json), and command.txt; nothing else
(no checkpoint/).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
import tempfile
from pathlib import Path

from minibert.data import PARAPHRASE_PROBES, FillMaskProbe
from minibert.demo import run_probes
from minibert.io.fileio import atomic_write_json, atomic_write_text
from minibert.reference import REFERENCE_ROOT
from minibert.training.pretrain import TrainingConfig, pretrain

NAME = "tiny-toy"
KEPT_FILES = ("config.json", "model.safetensors", "vocab.txt", "tokenizer_config.json",
              "metrics.json", "training_config.json", "history.json")
# The README's fill-mask examples, both the river's bank settled by the words around it.
README_EXAMPLES = (
    FillMaskProbe("she deposited the money at the [MASK].", frozenset({"bank"}), "deposited",
                  "before", "bank: money"),
    FillMaskProbe("she fished from the muddy [MASK] of the river.", frozenset({"bank"}), "river",
                  "after", "bank: river"),
)
PROBE_FILES = {"fill_mask.json": None, "paraphrases.json": PARAPHRASE_PROBES,
               "readme_examples.json": README_EXAMPLES}
# The file name a corpus run's recipe gives its text (made by minibert.data.make_corpus).
CORPUS_FILE = "everyday.txt"
CORPUS_COMMAND = f"python -m minibert.data.make_corpus -o {CORPUS_FILE}"
COMPARED = ("masked_lm_accuracy", "next_sentence_accuracy", "masked_lm_loss",
            "next_sentence_loss", "unigram_baseline_accuracy")


def pretrain_command(config: TrainingConfig) -> str:
    """The ``minibert pretrain`` command line that runs ``config``."""
    defaults = TrainingConfig()
    flags = {"preset": "--preset", "num_layers": "--layers",
             "num_documents": "--num-documents", "steps": "--steps", "batch_size": "--batch-size",
             "max_seq_length": "--max-seq-length", "vocab_size": "--vocab-size",
             "learning_rate": "--lr", "schedule": "--schedule",
             "decay_fraction": "--decay-fraction", "warmup_fraction": "--warmup-fraction",
             "dropout": "--dropout", "eval_every": "--eval-every", "seed": "--seed",
             "token_type_init": "--token-type-init", "workers": "--workers",
             "balance_next_sentence": "--balance-next-sentence",
             "next_sentence_weight": "--next-sentence-weight"}
    parts = ["minibert pretrain --out DIR"]
    if config.corpus is not None:
        parts.append(f"--corpus {Path(config.corpus).name}")
    for field, flag in flags.items():
        value = getattr(config, field)
        # Every recipe field is written out, even at its default, so the command stays true
        # when a default changes; eval_every only when it differs (it changes no weight).
        if value is None:
            continue  # num_layers None: the preset's
        if isinstance(value, bool):
            parts.append(flag if value else f"--no-{flag[2:]}")
        elif field != "eval_every" or value != getattr(defaults, field):
            parts.append(f"{flag} {value}")
    return " ".join(parts)


def probe_results(run: Path) -> dict[str, list[dict]]:
    """The fill-mask answers of a run to each probe set, by the file that keeps them."""
    return {name: run_probes(run) if probes is None else run_probes(run, probes=probes)
            for name, probes in PROBE_FILES.items()}


def write_reference(run: Path, destination: Path, config: TrainingConfig) -> None:
    """Copy the kept files of a finished run into ``destination`` (replaced whole)."""
    staging = destination.with_name(f".{destination.name}.new")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    for name in KEPT_FILES:
        shutil.copy2(run / name, staging / name)
    first = ""
    if config.corpus is not None:
        # The shipped recipe names the file as make_corpus writes it, in the current folder.
        saved = json.loads((run / "training_config.json").read_text(encoding="utf-8"))
        atomic_write_json(staging / "training_config.json",
                          {**saved, "corpus": Path(config.corpus).name})
        first = f"# first: {CORPUS_COMMAND} (12,000 documents, seed 0)\n"
    for name, results in probe_results(run).items():
        atomic_write_json(staging / name, results)
    atomic_write_text(staging / "command.txt",
                      f"{pretrain_command(config)}\n{first}"
                      f"# then keep: {', '.join(KEPT_FILES)}; {', '.join(PROBE_FILES)} from "
                      f"minibert.demo.run_probes (benchmarks/reference_checkpoint.py --write)\n")
    shutil.rmtree(destination, ignore_errors=True)
    staging.rename(destination)


def compare(shipped: Path, run: Path, tolerance: float) -> bool:
    old = json.loads((shipped / "metrics.json").read_text(encoding="utf-8"))
    new = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    new_results = probe_results(run)
    ok = True
    print(f"{'metric':<27} {'shipped':>9} {'retrained':>10}")
    for key in COMPARED:
        if key not in old:
            continue
        flag = ""
        if key.endswith("accuracy") and abs(old[key] - new[key]) > tolerance:
            flag, ok = "  <- moved", False
        print(f"{key:<27} {old[key]:>9.4f} {new[key]:>10.4f}{flag}")
    for name, new_probes in new_results.items():
        path = shipped / name
        old_probes = json.loads(path.read_text(encoding="utf-8")) if path.is_file() else []
        old_correct = sum(p["correct"] for p in old_probes) if old_probes else "-"
        new_correct = sum(p["correct"] for p in new_probes)
        if old_probes and abs(old_correct - new_correct) > max(1, len(new_probes) // 20):
            ok = False
        print(f"{name + ' answered':<27} {old_correct:>9} {new_correct:>10}  "
              f"(of {len(new_probes)})")
        for probe in new_probes:
            if not probe["correct"]:
                print(f"    missed: {probe['text']}  ->  {probe['top'][0]['token_str']} "
                      f"(expected {'/'.join(probe['expected'])})")
    print(f"{'train seconds':<27} {old['train_seconds']:>9.0f} {new['train_seconds']:>10.0f}")
    print("metrics agree" if ok else f"metrics moved by more than {tolerance}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", metavar="DIR", help="keep the retrained run here")
    parser.add_argument("--write", action="store_true",
                        help=f"replace the shipped {NAME} folder with the retrained run")
    parser.add_argument("--from", dest="existing", metavar="RUN",
                        help="a finished pretrain folder of the same recipe, used instead of "
                             "training again")
    parser.add_argument("--tolerance", type=float, default=0.02,
                        help="largest accepted change of an accuracy (default 0.02)")
    args = parser.parse_args()
    shipped = REFERENCE_ROOT / NAME
    recipe_source = Path(args.existing) if args.existing else shipped
    config = TrainingConfig.from_dict(
        json.loads((recipe_source / "training_config.json").read_text(encoding="utf-8")))
    print(f"recipe: {pretrain_command(config)}")
    with tempfile.TemporaryDirectory() as scratch:
        if args.existing:
            run = Path(args.existing)
        else:
            run = Path(args.out) if args.out else Path(scratch) / NAME
            if config.corpus is not None and not Path(config.corpus).is_file():
                from minibert.data.make_corpus import main as make_corpus

                corpus = Path(scratch) / CORPUS_FILE
                make_corpus(["-o", str(corpus)])
                config = dataclasses.replace(config, corpus=str(corpus))
            pretrain(config, run, overwrite=True)
        if args.write:
            write_reference(run, shipped, config)
            print(f"wrote {shipped}")
            return 0
        return 0 if compare(shipped, run, args.tolerance) else 1


if __name__ == "__main__":
    sys.exit(main())
