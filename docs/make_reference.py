"""Install a finished pretrain folder as the reference checkpoint ``tiny-toy``, then refresh
everything in the repository that shows it.

    python docs/make_reference.py RUN             # or: make reference RUN=DIR
    python docs/make_reference.py RUN --float16   # store the weights as float16
    python docs/make_reference.py --refresh       # only refresh, from the shipped folder
    python docs/make_reference.py RUN --skip notebooks --skip site

RUN is a ``minibert pretrain`` output folder (config.json, model.safetensors, vocab.txt,
tokenizer_config.json, training_config.json, metrics.json, history.json). The steps, in order:

1. **check**: the files are there, minibert loads the model with both heads, the folder fits
   ``minibert.reference.MAX_REFERENCE_BYTES`` (with ``--float16`` the weights are stored as
   float16, and both minibert and ``transformers`` must read them back), ``transformers``
   (when installed) gives minibert's logits, and the unknown-word line reads the vocabulary.
2. **install**: a staged copy beside the shipped folder gets the run's files and the
   records: ``command.txt`` (the ``minibert pretrain`` command that makes the run, from its
   training_config.json), the held-out figures (the run's metrics.json), the answers to the
   probe sets (fill_mask.json, paraphrases.json, readme_examples.json), the room sentences'
   score (room_sentences.json, ``benchmarks/room_sentences.py``) and the lecture checklist's
   answers (checklist.json). The staged folder is loaded again, then put in place by
   renaming: the shipped folder is the old one or the new one, never half of each.
3. **docs** (and **timing**, ``benchmarks/lecture_timing.py`` again, for the plan's "Timed"
   table): the lecture checklist's fill-mask table and its lines for the misses
   (docs/lecture_50min.md, written from checklist.json), the live figures the plan quotes
   (the ``−100`` row, the loss of that bug, the cut-off sentence's answer, the plateau, the
   size of the model), the reference's card in docs/results.md (between two
   ``reference-card`` comments, written there the first time) and the README's summary line.
4. **figures**: ``docs/make_figures.py`` (toy_*.png, board_*.png, the training curves; the
   MiniLM pictures are kept as they were, and no picture is added) and
   ``docs/make_screenshot.py`` (the explorer picture; needs chromium).
5. **notebooks**: every notebook whose code loads the reference is executed again and saved
   by its test file (``python tests/.../test_notebooks_*.py NAME``).
6. **site**: ``docs/site/build.py --out site`` (the explorer pages, the deck's pictures).

Each file is written atomically. A step that fails stops the run with its reason; the
installed folder stays, and ``--refresh`` repeats the steps after it. At the end the script
lists the lines of the docs, README and notebooks' prose that still quote a figure of the
replaced model (its vocabulary size, parameters, steps, held-out accuracies, probe count):
prose the script does not write, to be edited by hand.
"""

from __future__ import annotations

import argparse
import ast
import hashlib
import importlib.util
import json
import re
import shutil
import subprocess
import sys
import textwrap
import time
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))

from reference_checkpoint import (  # noqa: E402
    CORPUS_COMMAND,
    KEPT_FILES,
    pretrain_command,
    probe_results,
)
from room_sentences import room_table, score  # noqa: E402

from minibert.data.room import ROOM_SETS, RoomSentence  # noqa: E402
from minibert.fill_mask import fill_mask  # noqa: E402
from minibert.heads import BertForPreTraining  # noqa: E402
from minibert.io.fileio import (  # noqa: E402
    atomic_write_bytes,
    atomic_write_json,
    atomic_write_text,
)
from minibert.io.safetensors import load_file, load_metadata, save_file  # noqa: E402
from minibert.reference import MAX_REFERENCE_BYTES, REFERENCE_ROOT  # noqa: E402
from minibert.tokenization import load_tokenizer  # noqa: E402
from minibert.tokenization.unknown import unknown_words  # noqa: E402
from minibert.training.pretrain import TrainingConfig  # noqa: E402

NAME = "tiny-toy"
STEPS = ("check", "install", "docs", "timing", "figures", "notebooks", "site")
RECORDS = ("fill_mask.json", "paraphrases.json", "readme_examples.json", "room_sentences.json",
           "checklist.json", "command.txt")
PLAN = ROOT / "docs" / "lecture_50min.md"
RESULTS = ROOT / "docs" / "results.md"
README = ROOT / "README.md"
CHECKLIST_HEADING = "### Fill-mask: what works and what fails with tiny-toy\n"
CARD_BEGIN = ("<!-- reference-card: written by python docs/make_reference.py from the folder's "
              "files; edit the script, not this block -->")
CARD_END = "<!-- /reference-card -->"
RESULTS_HEADING = "## The reference checkpoint `tiny-toy`\n"
# A sentence "works" in the checklist when its first answer is sensible with this probability.
SURE = 0.9
# The lecture's own sentences (slide 2, the lecture guide, the old checklist), each with the
# answers a listener accepts; the room sentences (minibert.data.room) follow them.
LECTURE_SENTENCES = (
    RoomSentence("the [MASK] lent him money for a new roof.", ("bank",)),
    RoomSentence("the [MASK] of the river was muddy.", ("bank",)),
    RoomSentence("she deposited the money at the [MASK] before noon.", ("bank",)),
    RoomSentence("later she fished from the muddy [MASK] of the river.", ("bank",)),
    RoomSentence("the boat drifted toward the muddy [MASK] of the river.", ("bank",)),
    RoomSentence("the referee showed him a yellow [MASK].", ("card",)),
    RoomSentence("the train left the [MASK] on time.", ("station", "platform")),
    RoomSentence("the lighthouse flashed its warning across the dark [MASK].",
                 ("sea", "water", "bay", "night", "harbour", "harbor", "waves")),
    RoomSentence("withdraw cash from the [MASK].", ("bank", "atm", "machine", "account")),
    RoomSentence("the cat sat on the [MASK].", ("mat", "floor", "chair", "sofa", "bed", "table",
                                                "rug", "roof", "wall", "step", "fence", "couch",
                                                "grass", "windowsill")),
    RoomSentence("paris is the capital of [MASK].", ("france",)),
)
CHECKLIST_ROWS = (6, 6)  # at most this many room sentences that work, and that fail
# Sentences that go through the model to compare minibert with transformers.
PARITY_TEXTS = ("she deposited the money at the [MASK].",
                ("the bank of the river", "later she fished from the muddy bank."))
PARITY_TOLERANCE = 1e-4  # largest |logit difference| between minibert and transformers
# A number as the prose writes it, never taking the punctuation after it: 2,300 and 0.96.
INT, DEC = r"\d+(?:,\d{3})*", r"\d+\.\d+"
WIDTH = 92  # the docs' line length


class StepError(RuntimeError):
    """A check or a step that failed: its one-line reason."""


def say(message: str) -> None:
    print(message, flush=True)


# ----- 1. check --------------------------------------------------------------------------


def folder_bytes(folder: Path) -> int:
    return sum(path.stat().st_size for path in folder.iterdir() if path.is_file())


def _load(folder: Path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = BertForPreTraining.from_pretrained(folder).eval()
    return model, load_tokenizer(folder)


def _logits(model, tokenizer) -> list[np.ndarray]:
    found = []
    for text in PARITY_TEXTS:
        pair = (text,) if isinstance(text, str) else text
        enc = tokenizer(*pair, return_tensors="np")
        out = model(enc["input_ids"], enc["token_type_ids"], enc["attention_mask"])
        found += [out.prediction_logits.astype(np.float64),
                  out.seq_relationship_logits.astype(np.float64)]
    return found


def transformers_gap(folder: Path, model, tokenizer) -> float | None:
    """Largest |logit difference| between ``transformers`` and minibert on the folder, or
    None when transformers (with torch) is not installed."""
    try:
        import torch
        import transformers
    except ImportError:
        return None
    transformers.logging.set_verbosity_error()
    hf = transformers.BertForPreTraining.from_pretrained(folder).float().eval()
    gap = 0.0
    ours = iter(_logits(model, tokenizer))
    for text in PARITY_TEXTS:
        pair = (text,) if isinstance(text, str) else text
        enc = tokenizer(*pair, return_tensors="np")
        with torch.no_grad():
            out = hf(**{key: torch.tensor(value) for key, value in enc.items()})
        for theirs in (out.prediction_logits, out.seq_relationship_logits):
            gap = max(gap, float(np.abs(theirs.double().numpy() - next(ours)).max()))
    return gap


def check_run(run: Path) -> dict:
    """The run's files and model, before anything is written. Returns what was measured."""
    if not run.is_dir():
        raise StepError(f"RUN {str(run)!r} is not a folder; give a minibert pretrain output "
                        f"folder")
    missing = [name for name in KEPT_FILES if not (run / name).is_file()]
    if missing:
        raise StepError(f"RUN {str(run)!r} lacks {', '.join(missing)}; a finished minibert "
                        f"pretrain folder holds {', '.join(KEPT_FILES)}")
    if (run / "checkpoint").exists():
        raise StepError(f"RUN {str(run)!r} still holds checkpoint/: the run has not finished "
                        f"(resume it with its command and --resume)")
    TrainingConfig.from_dict(json.loads((run / "training_config.json").read_text("utf-8")))
    metrics = json.loads((run / "metrics.json").read_text(encoding="utf-8"))
    for key in ("masked_lm_accuracy", "next_sentence_accuracy", "steps", "parameters"):
        if key not in metrics:
            raise StepError(f"RUN's metrics.json lacks {key!r}: not the metrics of a finished "
                            f"pretrain run")
    model, tokenizer = _load(run)
    if model.num_parameters() != metrics["parameters"]:
        raise StepError(f"RUN's model has {model.num_parameters():,} parameters, its "
                        f"metrics.json says {metrics['parameters']:,}")
    note = unknown_words(tokenizer, "I am sleeping 🙂 ?").line()
    if "🙂" not in note:
        raise StepError(f"the unknown-word line does not name an emoji with RUN's vocabulary: "
                        f"{note!r}")
    return {"model": model, "tokenizer": tokenizer, "metrics": metrics, "note": note}


def store_float16(staging: Path, model32, tokenizer) -> float:
    """Rewrite the staged weights as float16; both readers must read them. Returns the
    largest change of a logit against the float32 weights."""
    path = staging / "model.safetensors"
    tensors = load_file(path)
    metadata = load_metadata(path) or {"format": "pt"}
    save_file({key: value.astype(np.float16) if value.dtype.kind == "f" else value
               for key, value in tensors.items()}, path, metadata=metadata)
    model16, _ = _load(staging)
    return max(float(np.abs(a - b).max()) for a, b in
               zip(_logits(model16, tokenizer), _logits(model32, tokenizer), strict=True))


def remeasure_float16(staging: Path, config: TrainingConfig, metrics: dict) -> None:
    """metrics.json measured again on the float16 weights (the shipped figures are the
    shipped model's), the float32 run's figures kept beside them."""
    from minibert.training.pretrain_eval import evaluate_pretrained

    corpus = None
    if config.corpus is not None:
        corpus = Path(config.corpus)
        if not corpus.is_file():
            raise StepError(f"--float16 measures the held-out figures again on the float16 "
                            f"weights, from the run's corpus {str(corpus)!r}, which is not there")
    again = evaluate_pretrained(staging, corpus=corpus)
    kept = {key: metrics[key] for key in again if key in metrics}
    atomic_write_json(staging / "metrics.json",
                      {**metrics, **again, "weights": "float16", "float32_heldout": kept})
    say(f"check: held-out on the float16 weights: masked-LM "
        f"{again['masked_lm_accuracy']:.4f} (float32 {metrics['masked_lm_accuracy']:.4f}), "
        f"next sentence {again.get('next_sentence_accuracy', float('nan')):.4f} "
        f"(float32 {metrics['next_sentence_accuracy']:.4f})")


# ----- 2. install ------------------------------------------------------------------------


def checklist_rows(model, tokenizer) -> list[dict]:
    """The model's first answer, its probability, the top 3 and the unknown-word line for the
    lecture's sentences and every room sentence."""
    rows = []
    sources = [("lecture", LECTURE_SENTENCES)] + [(f"room {name}", sentences)
                                                   for name, sentences in ROOM_SETS.items()]
    for source, sentences in sources:
        for sentence in sentences:
            answers = fill_mask(model, tokenizer, sentence.text, top_k=3)
            first = answers[0]
            rows.append({"text": sentence.text, "source": source,
                         "sensible": list(sentence.sensible),
                         "first": first["token_str"], "score": round(float(first["score"]), 4),
                         "top": [answer["token_str"] for answer in answers],
                         "unknown": answers.unknown_line})
    return rows


def corpus_check(config: TrainingConfig, corpus_command: str) -> str | None:
    """Whether ``corpus_command`` (the command.txt line that makes the corpus) writes the
    very file the run read: None when it does, else what to check. Only a
    ``python -m minibert.data.make_corpus -o FILE ...`` command is run (into a scratch folder)."""
    import shlex
    import tempfile

    corpus = Path(config.corpus)
    argv = shlex.split(corpus_command)
    if argv[:3] != ["python", "-m", "minibert.data.make_corpus"] or "-o" not in argv:
        return f"command.txt says the corpus comes from {corpus_command!r}: not checked"
    if not corpus.is_file():
        return f"the run's corpus {str(corpus)!r} is not there: its bytes are not checked"
    with tempfile.TemporaryDirectory() as scratch:
        argv[argv.index("-o") + 1] = str(Path(scratch) / corpus.name)
        subprocess.run([sys.executable, *argv[1:]], cwd=ROOT, capture_output=True, check=False)
        made = Path(scratch) / corpus.name
        if made.is_file() and made.read_bytes() == corpus.read_bytes():
            return None
    return (f"{corpus_command!r} does not write the corpus the run read ({corpus.name}): "
            f"command.txt would not remake it, and the slow re-evaluation test of "
            f"tests/core/test_reference.py fails; give the command that does with "
            f"--corpus-command")


def command_text(run: Path, config: TrainingConfig, corpus_command: str) -> str:
    lines = [pretrain_command(config)]
    if config.corpus is not None:
        corpus = Path(config.corpus)
        lines.append(f"# first: {corpus_command}")
        if corpus.is_file():
            digest = hashlib.sha256(corpus.read_bytes()).hexdigest()
            lines.append(f"# the corpus it read: {corpus.name}, {corpus.stat().st_size:,} bytes, "
                         f"sha256 {digest}")
    lines.append(f"# then keep: {', '.join(KEPT_FILES)}; installed with "
                 f"python docs/make_reference.py RUN, which writes {', '.join(RECORDS[:-1])}")
    return "\n".join(lines) + "\n"


def install(run: Path, checked: dict, float16: bool, corpus_command: str) -> dict:
    """Stage the run and its records beside the shipped folder, check, then swap them in."""
    destination = REFERENCE_ROOT / NAME
    staging = destination.with_name(f".{NAME}.new")
    retired = destination.with_name(f".{NAME}.old")
    shutil.rmtree(staging, ignore_errors=True)
    staging.mkdir(parents=True)
    try:
        for name in KEPT_FILES:
            shutil.copy2(run / name, staging / name)
        config = TrainingConfig.from_dict(
            json.loads((run / "training_config.json").read_text(encoding="utf-8")))
        if config.corpus is not None:  # the recipe names the file as make_corpus writes it
            saved = json.loads((run / "training_config.json").read_text(encoding="utf-8"))
            atomic_write_json(staging / "training_config.json",
                              {**saved, "corpus": Path(config.corpus).name})
        facts = {"float16_change": None}
        if float16:
            facts["float16_change"] = store_float16(staging, checked["model"], checked["tokenizer"])
            say(f"check: float16 weights change a logit by at most {facts['float16_change']:.2e}")
            remeasure_float16(staging, config, checked["metrics"])
        size = folder_bytes(staging)
        if size > MAX_REFERENCE_BYTES:
            raise StepError(f"the folder takes {size:,} bytes, more than the "
                            f"{MAX_REFERENCE_BYTES:,} a reference may take"
                            + ("" if float16 else "; --float16 stores the weights in half"))
        model, tokenizer = _load(staging)
        gap = transformers_gap(staging, model, tokenizer)
        if gap is None:
            say("check: transformers is not installed; its reading of the folder is not checked")
        elif gap > PARITY_TOLERANCE:
            raise StepError(f"transformers' logits differ from minibert's by {gap:.2e} "
                            f"(at most {PARITY_TOLERANCE:g} allowed)")
        else:
            say(f"check: transformers reads the folder; logits within {gap:.1e} of minibert's")
        for name, results in probe_results(staging).items():
            atomic_write_json(staging / name, results)
        room = {}
        for name, sentences in ROOM_SETS.items():
            rows = room_table(model, tokenizer, sentences)
            room[name] = {"score": score(rows), "rows": rows}
        atomic_write_json(staging / "room_sentences.json", room)
        atomic_write_json(staging / "checklist.json", checklist_rows(model, tokenizer))
        atomic_write_text(staging / "command.txt", command_text(run, config, corpus_command))
        facts.update(size=size, transformers_gap=gap, corpus=None)
        if config.corpus is not None:
            facts["corpus"] = corpus_check(config, corpus_command)
            say(f"check: {facts['corpus']}" if facts["corpus"] else
                f"check: {corpus_command!r} writes the very corpus the run read")
        # In place by two renames; the old folder comes back if the second one fails.
        shutil.rmtree(retired, ignore_errors=True)
        if destination.exists():
            destination.rename(retired)
        try:
            staging.rename(destination)
        except OSError:
            if retired.exists():
                retired.rename(destination)
            raise
        shutil.rmtree(retired, ignore_errors=True)
        return facts
    finally:
        shutil.rmtree(staging, ignore_errors=True)


# ----- 3. docs ---------------------------------------------------------------------------


def shipped_facts() -> dict:
    """What the docs quote, read from the shipped folder and computed from its model."""
    from types import SimpleNamespace

    from minibert.viz.lecture_set import best_head, head_job_scores, nsp_plateau
    from minibert.viz.slides import HEAD_SENTENCE, fill_mask_rows, minus_100_losses

    folder = REFERENCE_ROOT / NAME
    read = lambda name: json.loads((folder / name).read_text(encoding="utf-8"))  # noqa: E731
    model, tokenizer = _load(folder)
    # What the deck's live pages read (minibert.viz.slides), for the numbers the plan quotes.
    context = SimpleNamespace(model=model, tokenizer=tokenizer, name=NAME,
                              history=read("history.json"))
    held = [row for row in context.history if row.get("split") == "heldout"]
    floor, rise = nsp_plateau(held)
    before = [row["next_sentence_accuracy"] for row in held if rise is None or row["step"] < rise]
    right, buggy = minus_100_losses(context)
    page_2 = fill_mask_rows(context)
    cut = next(row for row in page_2 if row.get("cut"))
    scores = head_job_scores(context.model, context.tokenizer, [HEAD_SENTENCE])
    return {"config": read("config.json"), "metrics": read("metrics.json"),
            "training": read("training_config.json"),
            "probes": {name: read(name) for name in ("fill_mask.json", "paraphrases.json",
                                                     "readme_examples.json")},
            "room": read("room_sentences.json"), "checklist": read("checklist.json"),
            "command": (folder / "command.txt").read_text(encoding="utf-8").splitlines()[0],
            "bytes": folder_bytes(folder),
            "weights_bytes": (folder / "model.safetensors").stat().st_size,
            "plateau": {"floor": floor, "rise": rise, "low": min(before), "high": max(before),
                        "nsp_end": held[-1]["next_sentence_accuracy"],
                        "mlm_end": held[-1]["masked_lm_accuracy"]},
            "minus_100": (right, buggy), "cut": (cut["text"], *cut["top"][0]),
            "page_2": [(row["text"], *row["top"][0]) for row in page_2 if not row.get("cut")],
            "heads": {job: best_head(scores, job) for job in ("previous token", "next token")}}


def _quote(text: str) -> str:
    return text.replace("|", "\\|")


def _verdict(row: dict) -> str:
    """works: a sensible first answer above SURE; unsure: a sensible word in the top 3;
    fails: none in the top 3."""
    if row["first"] in row["sensible"] and row["score"] > SURE:
        return "works"
    return "unsure" if set(row["top"]) & set(row["sensible"]) else "fails"


def _paragraph(text: str, indent: str = "") -> str:
    return textwrap.fill(text, WIDTH, subsequent_indent=indent, break_long_words=False,
                         break_on_hyphens=False)


def checklist_section(facts: dict) -> str:
    """The checklist's fill-mask part: what to expect from the model, the table and what to
    say for each sentence that does not work, all from checklist.json."""
    rows = facts["checklist"]
    vocab = facts["config"]["vocab_size"]
    words = facts["metrics"].get("corpus_words")
    lecture = [row for row in rows if row["source"] == "lecture"]
    room = [row for row in rows if row["source"] != "lecture"]
    works = [row for row in room if _verdict(row) == "works"][:CHECKLIST_ROWS[0]]
    fails = [row for row in room if _verdict(row) == "fails"][:CHECKLIST_ROWS[1]]
    shown = lecture + works + fails
    sure = sum(_verdict(row) == "works" for row in room)
    top3 = sum(_verdict(row) != "fails" for row in room)
    sets = "; ".join(f"set {name} {value['score']['sensible']}/{value['score']['sentences']}"
                     for name, value in facts["room"].items())
    intro = ("tiny-toy has read only its generated corpus"
             + (f" ({words:,} words)" if words else "")
             + f", the toy world of [data.md](data.md), and knows {vocab:,} WordPiece pieces. "
             f"Of the {len(room)} room sentences (`minibert.data.room`, written before it was "
             f"trained and never trained on) it puts a sensible word in its top 3 for {top3} "
             f"({sets}; `python benchmarks/room_sentences.py`) and answers {sure} with a "
             f"sensible first word above {SURE:.0%}. The table holds the model's own answers: "
             f"the lecture's sentences, then room sentences that work and room sentences that "
             f"fail (*unsure*: a sensible word in its top 3, not first above {SURE:.0%}). "
             f"Every room sentence's top 3 and note line, misses included, is in the shipped "
             f"folder's room_sentences.json; `python docs/make_reference.py --refresh` writes "
             f"this part again from its checklist.json.")
    text = [CHECKLIST_HEADING, _paragraph(intro), "",
            "| sentence | tiny-toy's first answer | |", "|---|---|---|"]
    text += [f"| \"{_quote(row['text'])}\" | {row['first']} | {_verdict(row)} |"
             for row in shown]
    text += ["", _paragraph("What to say when a sentence does not work, for each of those above "
                            "(`fill-mask` prints a `note:` line before its answers when the "
                            "sentence holds a word it lacks):"), ""]
    for row in shown:
        verdict = _verdict(row)
        if verdict == "works":
            continue
        first = f"*{row['first']}* {row['score']:.2f}"
        found = [word for word in row["top"] if word in row["sensible"]]
        if verdict == "unsure":
            said = (f"its first guess is {first}, and *{found[0]}* is in its top 3 "
                    f"({', '.join(row['top'])}): close, not sure"
                    + (f"; it says first what it never read whole ({row['unknown']})"
                       if row["unknown"] else ""))
        elif row["unknown"]:
            said = (f"it answers {first}, and says first what it never read whole "
                    f"({row['unknown']}): it guesses from the words it knows")
        else:
            said = (f"it knows every word and answers {first} (top 3: "
                    f"{', '.join(row['top'])}): knowing the words is not knowing the world; "
                    f"its corpus did not teach it this one")
        text.append(_paragraph(f"- \"{row['text']}\": {said}.", indent="  "))
    text += ["", _paragraph("The point to make: *a model knows only its corpus* (BERT read "
                            "books and Wikipedia, so it knows Paris; this one read a generated "
                            "toy world). When the note line names a word, that is the answer "
                            "to give: the model says what it never saw."), ""]
    return "\n".join(text) + "\n"


def substitute(text: str, where: str, replacements, changed: list, missed: list) -> str:
    """Apply (pattern, replacement) pairs; note which found nothing."""
    for pattern, replacement in replacements:
        new, count = re.subn(pattern, replacement, text)
        (changed if count else missed).append(f"{where}: {pattern}")
        text = new
    return text


def refresh_plan(facts: dict, changed: list, missed: list) -> None:
    text = PLAN.read_text(encoding="utf-8")
    if CHECKLIST_HEADING not in text:
        missed.append(f"{PLAN.name}: the heading {CHECKLIST_HEADING.strip()!r}")
    else:
        head, rest = text.split(CHECKLIST_HEADING, 1)
        tail = rest[rest.index("\n### "):] if "\n### " in rest else ""
        text = head + checklist_section(facts).rstrip("\n") + "\n" + tail
        changed.append(f"{PLAN.name}: the checklist's fill-mask table and its lines")
    config, plateau = facts["config"], facts["plateau"]
    vocab, steps = config["vocab_size"], facts["metrics"]["steps"]
    right, buggy = facts["minus_100"]
    _, cut_word, cut_p = facts["cut"]
    (pl, ph), (nl, nh) = facts["heads"]["previous token"], facts["heads"]["next token"]
    next_head = f"head {nh}" if nl == pl else f"head {nh} of layer {nl}"
    rise = f"{plateau['rise']:,}" if plateau["rise"] is not None else "the end"
    text = substitute(text, PLAN.name, [
        (rf"row V − 100 \(row {INT} of tiny-toy's {INT}\)",
         f"row V − 100 (row {vocab - 100:,} of tiny-toy's {vocab:,})"),
        (rf"{DEC} nats instead of {DEC}", f"{buggy:.1f} nats instead of {right:.2f}"),
        (rf"alone gives \*[^*]+\* {DEC}", f"alone gives *{cut_word}* {cut_p:.2f}"),
        (r'answer "[^"]+"\?\*', f'answer "{cut_word}"?*'),
        (rf"of its corpus \({DEC}\)", f"of its corpus ({cut_p:.2f})"),
        (rf"L = \d+, H = \d+, A = \d+, V = {INT}, trained {INT} steps",
         f"L = {config['num_hidden_layers']}, H = {config['hidden_size']}, "
         f"A = {config['num_attention_heads']}, V = {vocab:,}, trained {steps:,} steps"),
        (rf"starts at the NotNext share, {DEC}", f"starts at the NotNext share, "
                                                 f"{plateau['floor']:.2f}"),
        (rf"moves between {DEC} and {DEC} until step {INT}",
         f"moves between {plateau['low']:.2f} and {plateau['high']:.2f} until step {rise}"),
        (rf"stays above {DEC} \(the share \+ 0\.1\), then rises to {DEC}",
         f"stays above {plateau['floor'] + 0.1:.2f} (the share + 0.1), then rises to "
         f"{plateau['nsp_end']:.2f}"),
        (rf"MLM ends at {DEC}", f"MLM ends at {plateau['mlm_end']:.2f}"),
        (r"head \d+ of layer \d+ looks at the previous token \(below the dotted diagonal\) and "
         r"head \d+( of layer \d+)? at the next token",
         f"head {ph} of layer {pl} looks at the previous token (below the dotted diagonal) and "
         f"{next_head} at the next token"),
    ], changed, missed)
    atomic_write_text(PLAN, text)
    for sentence, word, probability in facts["page_2"]:
        if word != "bank" or probability <= SURE:
            missed.append(f"minibert/viz/slides.py: CHECK slide 2 (FILL_MASK_SENTENCES): "
                          f"\"{sentence}\" now gives {word} {probability:.2f}, and the slide "
                          f"and the plan say both sentences give bank")


def reference_card(facts: dict) -> str:
    """The shipped reference in figures, every one read from its folder."""
    metrics, config = facts["metrics"], facts["config"]
    probes = facts["probes"]
    lines = [CARD_BEGIN, "", _paragraph(
             f"**The shipped folder, as `docs/make_reference.py` installed it** (all figures "
             f"from its files): {config['num_hidden_layers']} layers, H = "
             f"{config['hidden_size']}, {config['num_attention_heads']} heads, V = "
             f"{config['vocab_size']:,}; {metrics['parameters']:,} parameters; "
             f"model.safetensors {facts['weights_bytes'] / 1e6:.2f} MB"
             + (" (float16 weights; the held-out figures below are theirs)"
                if metrics.get("weights") == "float16" else "") + ", the folder "
             f"{facts['bytes'] / 1e6:.2f} MB. Trained by `{facts['command']}` "
             f"({metrics['steps']:,} steps, {metrics.get('train_seconds', 0):,.0f} s in the "
             f"training loop; command.txt says how to make its corpus)."), "",
             "| held-out (all {:,} sequences) | value |".format(
                 metrics.get("heldout_sequences", 0)), "|---|---|",
             f"| masked-LM accuracy | {metrics['masked_lm_accuracy']:.3f} (loss "
             f"{metrics['masked_lm_loss']:.3f}; unigram baseline "
             f"{metrics['unigram_baseline_accuracy']:.3f}) |",
             f"| next-sentence accuracy | {metrics['next_sentence_accuracy']:.3f} (loss "
             f"{metrics['next_sentence_loss']:.3f}) |"]
    for name, rows in probes.items():
        right = sum(row["correct"] for row in rows)
        missed = "; ".join(f"\"{_quote(row['text'])}\": {row['top'][0]['token_str']}"
                           for row in rows if not row["correct"])
        lines.append(f"| {name} | {right} of {len(rows)}" + (f" (misses: {missed})" if missed
                                                                 else "") + " |")
    for name, value in facts["room"].items():
        result = value["score"]
        lines.append(f"| room sentences, set {name} (a sensible word in the top 3) | "
                     f"{result['sensible']} of {result['sentences']} ({result['share']:.0%}); "
                     f"{result['misses_naming_unknown']} of {result['misses']} misses name an "
                     f"unknown word |")
    lines += ["", CARD_END]
    return "\n".join(lines)


def refresh_results(facts: dict, changed: list, missed: list) -> None:
    text = RESULTS.read_text(encoding="utf-8")
    card = reference_card(facts)
    if CARD_BEGIN in text and CARD_END in text:
        head, rest = text.split(CARD_BEGIN, 1)
        text = head + card + rest.split(CARD_END, 1)[1]
    elif RESULTS_HEADING in text:
        head, rest = text.split(RESULTS_HEADING, 1)
        text = head + RESULTS_HEADING + "\n" + card + "\n" + rest
    else:
        missed.append(f"{RESULTS.name}: the heading {RESULTS_HEADING.strip()!r}")
        return
    atomic_write_text(RESULTS, text)
    changed.append(f"{RESULTS.name}: the reference card")


def refresh_readme(facts: dict, changed: list, missed: list) -> None:
    text = README.read_text(encoding="utf-8")
    metrics, config = facts["metrics"], facts["config"]
    probes = facts["probes"]["fill_mask.json"]
    text = substitute(text, README.name, [
        (rf"\(\d+ layers, {INT} steps\) reaches {DEC} and answers \d+ of \d+ probes",
         f"({config['num_hidden_layers']} layers, {metrics['steps']:,} steps) reaches "
         f"{metrics['next_sentence_accuracy']:.3f} and answers "
         f"{sum(p['correct'] for p in probes)} of {len(probes)} probes"),
    ], changed, missed)
    atomic_write_text(README, text)
    for row in facts["probes"]["readme_examples.json"]:
        if not row["correct"]:
            missed.append(f"{README.name}: CHECK the example \"{row['text']}\": it now gives "
                          f"{row['top'][0]['token_str']}, not {'/'.join(row['expected'])}")


# ----- what is left to edit by hand --------------------------------------------------------


def old_figures(folder_at_head: dict) -> dict[str, str]:
    """The replaced model's figures as prose writes them -> what they are."""
    config, metrics = folder_at_head["config"], folder_at_head["metrics"]
    figures = {f"{config['vocab_size']:,}": "vocabulary size",
               f"{metrics['parameters']:,}": "parameters",
               f"{metrics['steps']:,} steps": "steps",
               f"{metrics['masked_lm_accuracy']:.3f}": "held-out MLM accuracy",
               f"{metrics['next_sentence_accuracy']:.3f}": "held-out NSP accuracy",
               f"{folder_at_head['training']['num_documents']:,} documents": "documents"}
    probes = folder_at_head.get("probes")
    if probes:
        right = sum(p["correct"] for p in probes)
        figures[f"{right} of {len(probes)} probes"] = "ambiguity probes answered"
        figures[f"{right}/{len(probes)}"] = "ambiguity probes answered"
    return figures


def folder_at_head() -> dict | None:
    """The reference's config, metrics and probes as committed (the model being replaced)."""
    found = {}
    for key, name in (("config", "config.json"), ("metrics", "metrics.json"),
                      ("probes", "fill_mask.json"), ("training", "training_config.json")):
        result = subprocess.run(["git", "show", f"HEAD:minibert/reference_checkpoints/{NAME}/"
                                 f"{name}"], cwd=ROOT, capture_output=True, text=True)
        if result.returncode != 0:
            return None
        found[key] = json.loads(result.stdout)
    return found


def changed_notebook_figures() -> dict[str, set[str]]:
    """For each notebook that loads the reference: the figures (three decimals or more, not
    0.000 or 1.000) it printed as committed (HEAD) and no longer prints after running again.
    Prose that quotes them quotes the old run."""
    number = re.compile(r"(?<![\d.])\d+\.\d{3,}(?![\d])")

    def printed(text: str) -> set[str]:
        cells = json.loads(text)["cells"]
        return {match for cell in cells if cell["cell_type"] == "code"
                for output in cell.get("outputs", [])
                for match in number.findall("".join(output.get("text", ""))
                                            + "".join(output.get("data", {}).get("text/plain",
                                                                                  "")))
                if float(match) not in (0.0, 1.0)}

    gone = {}
    for name in notebooks_that_load_the_reference():
        path = f"notebooks/{name}.ipynb"
        result = subprocess.run(["git", "show", f"HEAD:{path}"], cwd=ROOT, capture_output=True,
                                text=True)
        if result.returncode == 0:
            gone[name] = printed(result.stdout) - printed((ROOT / path).read_text("utf-8"))
    return gone


def stale_lines(figures: dict[str, str], notebook_figures: dict[str, set[str]]) -> list[str]:
    """Lines of the prose (README, docs, notebooks' markdown, the package's text) that quote
    a figure of the replaced model, outside the blocks this script writes; and lines of a
    notebook's prose, or lines elsewhere near a name of the notebook ("notebook 09" in the
    line or the six before it), quoting a
    figure that notebook no longer prints."""
    files = [README, *sorted(path for path in (ROOT / "docs").rglob("*.md")
                             if "results" not in path.parts),
             *sorted((ROOT / "notebooks").glob("*.ipynb")),
             *sorted((ROOT / "minibert").rglob("*.py"))]
    patterns = {figure: re.compile(rf"(?<![\d.,]){re.escape(figure)}(?![\d])")
                for figure in figures}
    found = []
    for path in files:
        own = {figure: f"notebook {name[:2]} printed it before it ran again"
               for name, gone in notebook_figures.items() for figure in gone
               if path.stem == name}
        if path.suffix == ".ipynb":
            cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
            lines = [line for cell in cells if cell["cell_type"] == "markdown"
                     for line in "".join(cell["source"]).splitlines()]
        else:
            text = path.read_text(encoding="utf-8")
            if CARD_BEGIN in text:
                head, rest = text.split(CARD_BEGIN, 1)
                text = head + rest.split(CARD_END, 1)[-1]
            lines = text.splitlines()
        for number, line in enumerate(lines, start=1):
            hits = [f"{figure} ({what})" for figure, what in figures.items()
                    if patterns[figure].search(line)]
            named = {figure: f"notebook {name[:2]} printed it before it ran again"
                     for name, gone in notebook_figures.items() for figure in gone
                     if re.search(rf"notebook {name[:2]}\b|{name}",
                                  " ".join(lines[max(0, number - 7):number]), re.IGNORECASE)}
            hits += [f"{figure} ({what})" for figure, what in {**own, **named}.items()
                     if re.search(rf"(?<![\d.]){re.escape(figure)}(?![\d])", line)]
            if hits:
                where = f"{path.relative_to(ROOT)}" + ("" if path.suffix == ".ipynb"
                                                        else f":{number}")
                found.append(f"{where}: {', '.join(hits)}: {line.strip()[:110]}")
    return found


# ----- 4-6: figures, notebooks, site ------------------------------------------------------


def run_command(argv: list[str], what: str) -> None:
    say(f"{what}: {' '.join(argv)}")
    start = time.monotonic()
    result = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True)
    if result.returncode != 0:
        shown = re.sub(r"\x1b\[[0-9;]*m", "", result.stderr or result.stdout)  # no colours
        tail = shown.strip().splitlines()[-3:]
        raise StepError(f"{what} failed (exit {result.returncode}): {' | '.join(tail)}")
    say(f"{what}: done in {time.monotonic() - start:.0f} s")


def refresh_timing(changed: list, missed: list) -> None:
    """benchmarks/lecture_timing.py again (it runs fill-mask on every sentence of the new
    checklist table), and the plan's "Timed" table and total written from what it measured."""
    path = ROOT / "benchmarks" / "lecture_timing.py"
    spec = importlib.util.spec_from_file_location("lecture_timing", path)
    timing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timing)
    old = json.loads(Path(timing.OUT).read_text(encoding="utf-8"))
    run_command([sys.executable, str(path.relative_to(ROOT)), "--repeats", "3"], "timing")
    new = json.loads(Path(timing.OUT).read_text(encoding="utf-8"))
    text = PLAN.read_text(encoding="utf-8")
    table = timing.markdown_table(old)
    if table not in text:
        missed.append(f"{PLAN.name}: the timing table as lecture_timing.json had it")
        return
    text = text.replace(table, timing.markdown_table(new))
    text = substitute(text, PLAN.name, [
        (rf"In all, {DEC} minutes of the 40 are spoken, run or switched \({DEC} at 100",
         f"In all, {new['total_minutes']:.1f} minutes of the 40 are spoken, run or switched "
         f"({new['total_minutes_slow']:.1f} at 100")], changed, missed)
    atomic_write_text(PLAN, text)
    changed.append(f"{PLAN.name}: the timing table")
    missed.append(f"{PLAN.name}: CHECK the prose under the timing table (the segments that "
                  f"overrun at 100 words a minute, the load average, the fill-mask and "
                  f"explorer seconds): it quotes the run before")


def refresh_figures() -> None:
    """docs/make_figures.py, keeping only what shows the reference: the MiniLM pictures come
    back byte for byte, and a picture the repository did not hold is not added."""
    images = ROOT / "docs" / "images"
    before = {path.name for path in images.iterdir()}
    minilm = {path: path.read_bytes() for path in images.glob("minilm_*.png")}
    try:
        run_command([sys.executable, "docs/make_figures.py"], "figures")
    finally:
        for path, data in minilm.items():
            if path.read_bytes() != data:
                atomic_write_bytes(path, data)
        for path in images.iterdir():
            if path.name not in before:
                path.unlink()


def notebooks_that_load_the_reference() -> list[str]:
    names = []
    for path in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
        if re.search(r"load_reference|reference_path|tiny-toy", code):
            names.append(path.stem)
    return names


def notebook_runners() -> dict[str, Path]:
    """Notebook name -> the test file whose NOTEBOOKS list runs it (``python FILE NAME``
    executes and saves it)."""
    found = {}
    for path in sorted((ROOT / "tests").rglob("test_notebooks_*.py")):
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if isinstance(node, ast.Assign) and getattr(node.targets[0], "id", "") == "NOTEBOOKS":
                for name in ast.literal_eval(node.value):
                    found[name] = path
    return found


def refresh_notebooks(corpus: Path | None) -> None:
    """Execute again and save every notebook that loads the reference. A reference trained
    on a corpus file: notebook 07 cuts its held-out pairs again from the recipe, which names
    the file without a folder; ``corpus`` is linked into notebooks/ under that name while
    the notebooks run (and removed afterwards)."""
    runners = notebook_runners()
    names = notebooks_that_load_the_reference()
    orphans = [name for name in names if name not in runners]
    if orphans:
        raise StepError(f"no tests/**/test_notebooks_*.py lists {', '.join(orphans)}")
    by_runner: dict[Path, list[str]] = {}
    for name in names:
        by_runner.setdefault(runners[name], []).append(name)
    recipe = json.loads((REFERENCE_ROOT / NAME / "training_config.json").read_text("utf-8"))
    linked = None
    if recipe.get("corpus"):
        place = ROOT / "notebooks" / recipe["corpus"]
        if not place.exists():
            if corpus is None or not corpus.is_file():
                raise StepError(f"the reference was trained on {recipe['corpus']}; give that "
                                f"file with --corpus FILE (notebook 07 cuts its held-out pairs "
                                f"again from it)")
            place.symlink_to(corpus.resolve())
            linked = place
    try:
        for runner, chosen in by_runner.items():
            run_command([sys.executable, str(runner.relative_to(ROOT)), *chosen],
                        f"notebooks {', '.join(chosen)}")
    finally:
        if linked is not None:
            linked.unlink()


# ----- the command ---------------------------------------------------------------------------


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0].replace("\n", " "))
    parser.add_argument("run", nargs="?", metavar="RUN",
                        help="a finished minibert pretrain folder to install as tiny-toy")
    parser.add_argument("--refresh", action="store_true",
                        help="install nothing: refresh the docs, figures, notebooks and site "
                             "from the shipped folder")
    parser.add_argument("--float16", action="store_true",
                        help="store the weights as float16 (minibert and transformers both "
                             "read them back as float32; checked)")
    parser.add_argument("--skip", action="append", default=[], choices=STEPS[2:],
                        help="leave out a refresh step (repeatable)")
    parser.add_argument("--corpus-command", default=CORPUS_COMMAND,
                        help="for a run on a corpus file, the command that makes that file "
                             "(written to command.txt; default: %(default)s)")
    parser.add_argument("--corpus", metavar="FILE",
                        help="the corpus file the reference was trained on, for the notebooks "
                             "that cut its data again (default: the one RUN's "
                             "training_config.json names)")
    args = parser.parse_args(argv)
    if (args.run is None) == (not args.refresh):
        parser.error("give RUN (a pretrain folder) or --refresh, not both or neither")
    start = time.monotonic()
    before = folder_at_head()
    changed: list[str] = []
    missed: list[str] = []
    try:
        if not args.refresh:
            run = Path(args.run)
            checked = check_run(run)
            say(f"check: {run} holds a finished run ({checked['metrics']['parameters']:,} "
                f"parameters); the unknown-word line reads its vocabulary: {checked['note']}")
            facts = install(run, checked, args.float16, args.corpus_command)
            say(f"install: {REFERENCE_ROOT / NAME} replaced ({facts['size']:,} bytes)")
            if facts["corpus"]:
                missed.append(f"CHECK the corpus: {facts['corpus']}")
        elif not (REFERENCE_ROOT / NAME / "checklist.json").is_file():
            raise StepError(f"the shipped {NAME} has no checklist.json: install a run first "
                            f"(python docs/make_reference.py RUN)")
        if "docs" not in args.skip:
            facts = shipped_facts()
            refresh_plan(facts, changed, missed)
            refresh_results(facts, changed, missed)
            refresh_readme(facts, changed, missed)
            say(f"docs: {len(changed)} refreshed" + (f", {len(missed)} not found" if missed
                                                      else ""))
        if "timing" not in args.skip and (ROOT / "benchmarks" / "lecture_timing.py").is_file():
            refresh_timing(changed, missed)
        if "figures" not in args.skip:
            refresh_figures()
            if shutil.which("chromium") or shutil.which("chromium-browser"):
                run_command([sys.executable, "docs/make_screenshot.py"], "screenshot")
            else:
                missed.append("docs/images/explorer_head_view.png: no chromium here; run "
                              "python docs/make_screenshot.py where there is one")
        if "notebooks" not in args.skip:
            if args.corpus is None and not args.refresh:
                recipe = json.loads((Path(args.run) / "training_config.json").read_text("utf-8"))
                args.corpus = recipe.get("corpus")
            refresh_notebooks(Path(args.corpus) if args.corpus else None)
        if "site" not in args.skip:
            run_command([sys.executable, "docs/site/build.py", "--out", "site"], "site")
    except StepError as error:
        print(f"make_reference: error: {error}", file=sys.stderr)
        return 2
    for line in changed:
        say(f"refreshed  {line}")
    for line in missed:
        say(line if line.startswith("CHECK") or ": CHECK" in line else f"NOT FOUND  {line}")
    if before is not None:
        stale = stale_lines(old_figures(before), changed_notebook_figures())
        say(f"\n{len(stale)} lines still quote a figure of the committed model (edit by hand, "
            f"or ignore where the figure is another's):")
        for line in stale:
            say(f"  {line}")
    say(f"\nmake_reference: finished in {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
