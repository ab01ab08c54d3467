"""Fuzz of what a user gives minibert: options, files, texts, outputs, checkpoint variants.

    python benchmarks/fuzz_inputs.py [--cases 1000] [--variants 100] [--seed 0]
                                     [--time-limit 60] [--memory-limit-gb 4]

Command-line cases: a seeded generator starts from a valid invocation of a command
(fill-mask, attention, explore, embed, search, info, pretrain, finetune, distil, figures)
and mutates one to three things: an option's value (0, -1, inf, nan, 1e300, 10**20, text,
nothing), the model folder (config.json or vocab.txt that is /dev/zero, a FIFO, nested 5,000
levels deep, a vocab_size of 10**12, keys minibert refuses, tokenizer.json instead of
vocab.txt, truncated weights, a pickle-only folder...), the text (emoji, CJK, control
characters, 20,000 words, no [MASK], a lower-case [mask], a leading dash), or the output
(an existing file, a link to a file, a folder, a FIFO, a device node when run as root,
/dev/null, /dev/full, /dev/stdout, a dangling link, a link loop, a path under a file). Each
case runs in a forked child of this process (minibert is imported once, so a case costs its
own work only) under ``ulimit -v`` (RLIMIT_AS) and a wall-clock limit, in a case folder of
such odd entries, snapshotted before and after.

Outcomes of a command-line case:

- answered: exit 0; refused: exit 2 (3: a worker died) with a last stderr line
  "minibert CMD: error: ..." (or the demo's, or argparse's) and no traceback;
- slow: stopped at the time limit while it printed progress (a valid long run: not a failure);
- traceback (failure): a Python traceback, or an exit status that is neither;
- unbounded (failure): stopped at the time limit without progress, killed by a signal, or
  out of memory under the limit (the memory estimate must refuse first);
- changed outside (failure): an entry of the case folder other than the named output (and
  what a link there leads to) was created, changed or replaced;
- wrong answer (failure): ``search`` scoring +1.0000 a text that is not the query.

Checkpoint variants (needs torch and transformers): a random tiny BERT, DistilBERT or ALBERT
(class, activation, tie_word_embeddings, dtype, type_vocab_size, layer_norm_eps, and keys
minibert does not implement), saved by transformers, read back by transformers (float32) and
by minibert: the outputs must agree (max difference below 1e-4 of their scale), or minibert
must refuse with one line; anything else is a silent wrong answer (failure).

Prints the counts by command and outcome and each failure; exits 1 if there is any.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import shutil
import signal
import stat
import sys
import tempfile
import threading
import time
import traceback
from collections import Counter
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")

NUMBERS = ["0", "-1", "1", "2", "3", "7", "inf", "-inf", "nan", "1e300", "1e-300",
           "100000000000000000000", "1.5", "", " ", "abc", "0x10", "1e3", "-0"]
TEXTS = ["the [MASK] sat on the mat.", "she went to the bank to [MASK] money.",
         "no mask here at all", "[MASK] [MASK] [MASK]", "the [mask] was red",
         "🙂 🎉 [MASK]", "東京 は [MASK] です", "مرحبا [MASK]", "e\u0301\u0301\u0301 [MASK]",
         "tab\tand\rreturn [MASK]", "\u200b\u200b[MASK]\u200b", "[CLS] [SEP] [MASK]",
         "-x [MASK]", "   ", "", "word " * 20000 + "[MASK]", "[UNK] [MASK] [PAD]",
         "a" * 5000 + " [MASK]", "the bank", "\u202eevil [MASK]"]
FAILURES = ("traceback", "unbounded", "changed outside", "wrong answer")


# -- the model folders a case may name (built once, checked unchanged at the end) ------------

def _write_json(path: Path, data) -> None:
    path.write_text(json.dumps(data), encoding="utf-8")


def build_models(root: Path) -> dict[str, str]:
    """Folders derived from tiny-toy, each broken one way; name -> path."""
    from minibert.reference import reference_path

    source = reference_path("tiny-toy")
    config = json.loads((source / "config.json").read_text(encoding="utf-8"))
    vocab = (source / "vocab.txt").read_text(encoding="utf-8").splitlines()
    models = {"tiny-toy": "tiny-toy"}

    def variant(name, change):
        folder = root / name
        shutil.copytree(source, folder)
        change(folder)
        models[name] = str(folder)

    def relink(name, target):
        def change(folder):
            (folder / name).unlink()
            (folder / name).symlink_to(target)
        return change

    def with_config(**changes):
        return lambda folder: _write_json(folder / "config.json", {**config, **changes})

    def fifo(name):
        def change(folder):
            (folder / name).unlink()
            os.mkfifo(folder / name)
        return change

    def tokenizer_json(kind):
        def change(folder):
            (folder / "vocab.txt").unlink()
            _write_json(folder / "tokenizer.json", {
                "model": {"type": kind, "vocab": {token: i for i, token in enumerate(vocab)},
                          "unk_token": "[UNK]", "continuing_subword_prefix": "##"},
                "normalizer": {"type": "BertNormalizer", "lowercase": True},
                "pre_tokenizer": {"type": "BertPreTokenizer"}})
        return change

    def truncated(name, keep):
        def change(folder):
            data = (folder / name).read_bytes()
            (folder / name).write_bytes(data[:keep(len(data))])
        return change

    def deep(depth):
        def change(folder):
            text = json.dumps(config)[:-1] + ', "deep": ' + "[" * depth + "]" * depth + "}"
            (folder / "config.json").write_text(text, encoding="utf-8")
        return change

    def pickle_only(folder):
        (folder / "model.safetensors").unlink()
        (folder / "pytorch_model.bin").write_bytes(b"\x80\x04 never unpickled")

    variant("good", lambda folder: None)
    variant("zero-config", relink("config.json", "/dev/zero"))
    variant("zero-vocab", relink("vocab.txt", "/dev/zero"))
    variant("zero-weights", relink("model.safetensors", "/dev/zero"))
    variant("fifo-config", fifo("config.json"))
    variant("fifo-vocab", fifo("vocab.txt"))
    variant("deep-5000", deep(5000))
    variant("deep-900", deep(900))
    variant("huge-vocab-size", with_config(vocab_size=10**12))
    variant("untied", with_config(tie_word_embeddings=False))
    variant("decoder", with_config(is_decoder=True))
    variant("silu", with_config(hidden_act="silu"))
    variant("relative", with_config(position_embedding_type="relative_key"))
    variant("eps-string", with_config(layer_norm_eps="small"))
    variant("layers-huge", with_config(num_hidden_layers=10**9))
    variant("layers-fewer", with_config(num_hidden_layers=1))
    variant("tokenizer-json", tokenizer_json("WordPiece"))
    variant("tokenizer-bpe", tokenizer_json("BPE"))
    variant("no-vocab", lambda folder: (folder / "vocab.txt").unlink())
    variant("vocab-short", lambda folder: (folder / "vocab.txt").write_text(
        "\n".join(vocab[: len(vocab) // 2]) + "\n", encoding="utf-8"))
    variant("vocab-latin1", lambda folder: (folder / "vocab.txt").write_bytes(
        ("\n".join(vocab) + "\ncaf\u00e9\n").encode("latin-1", "replace")))
    variant("weights-half", truncated("model.safetensors", lambda n: n // 2))
    variant("weights-header", truncated("model.safetensors", lambda n: 7))
    variant("config-list", lambda folder: _write_json(folder / "config.json", [config]))
    variant("config-empty", lambda folder: (folder / "config.json").write_text(""))
    variant("pickle-only", pickle_only)
    empty = root / "empty-folder"
    empty.mkdir()
    models["empty-folder"] = str(empty)
    models["a-file"] = str(source / "config.json")
    models["missing"] = str(root / "no-such-model")
    models["empty-name"] = ""
    return models


# -- the case folder: odd entries beside the outputs ------------------------------------------

ODD = ("file", "link", "fifo", "null", "dir", "dangling", "loop")


def make_case_folder(folder: Path) -> None:
    """file.E, link.E -> file.E, fifo.E, null.E (a /dev/null twin, as root), dir.E/,
    dangling.E -> nowhere.E, loop.E -> loop.E, for E in png, html, pdf, and run-link ->
    run-target/."""
    folder.mkdir(parents=True)
    for ext in ("png", "html", "pdf"):
        (folder / f"file.{ext}").write_text("a file of the user's", encoding="utf-8")
        (folder / f"link.{ext}").symlink_to(f"file.{ext}")
        os.mkfifo(folder / f"fifo.{ext}")
        if os.geteuid() == 0:
            os.mknod(folder / f"null.{ext}", 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        (folder / f"dir.{ext}").mkdir()
        (folder / f"dangling.{ext}").symlink_to(f"nowhere.{ext}")
        (folder / f"loop.{ext}").symlink_to(f"loop.{ext}")
    (folder / "run-target").mkdir()
    (folder / "run-link").symlink_to("run-target")


def snapshot(folder: Path) -> dict:
    state = {}
    for root, folders, files in os.walk(folder):
        for name in folders + files:
            path = os.path.join(root, name)
            info = os.lstat(path)
            entry = (stat.S_IFMT(info.st_mode), info.st_ino, info.st_rdev)
            if stat.S_ISLNK(info.st_mode):
                entry += (os.readlink(path),)
            elif stat.S_ISREG(info.st_mode):
                entry += (info.st_size, info.st_mtime_ns)
            state[os.path.relpath(path, folder)] = entry
    return state


def outputs_of(folder: Path, output: str | None) -> list[str]:
    """The entries a case may change: its named output, what a link there leads to, and
    anything under either (relative to the case folder)."""
    if not output:
        return []
    named = os.path.relpath(os.path.join(folder, output), folder)
    allowed = [named]
    target = os.path.realpath(os.path.join(folder, output))
    if target.startswith(str(folder) + os.sep):
        allowed.append(os.path.relpath(target, folder))
    return allowed


def changed_outside(before: dict, after: dict, allowed: list[str]) -> list[str]:
    changed = [name for name in set(before) | set(after) if before.get(name) != after.get(name)]

    def inside(name):
        base = os.path.basename(name)
        return any(name == a or name.startswith(a + os.sep) or
                   base == f".{os.path.basename(a)}.lock" or
                   (a.startswith(name + os.sep) and name not in before)  # its new folders
                   for a in allowed)

    return sorted(name for name in changed if not inside(name))


# -- generating command lines ----------------------------------------------------------------

def _output(rng: random.Random, ext: str) -> str:
    choices = [f"new.{ext}"] * 4 + [f"{kind}.{ext}" for kind in ODD] + [
        "/dev/null", "/dev/full", "/dev/stdout", f"file.{ext}/x.{ext}", f"sub/deeper/new.{ext}",
        "", f"new.{'txt' if ext != 'txt' else 'png'}"]
    return rng.choice(choices)


def _run_output(rng: random.Random) -> str:
    return rng.choice(["run"] * 4 + ["run-link", "file.png", "dir.png", "fifo.png", "/dev/null",
                                     "file.png/run", "", "dangling.png", "loop.png"])


def generate(rng: random.Random, models: dict[str, str]) -> tuple[list[str], str | None]:
    """One command line (a list of arguments) and its named output (or None)."""
    model = "tiny-toy"
    command = rng.choices(
        ["fill-mask", "attention", "explore", "embed", "search", "info", "pretrain",
         "finetune", "distil", "figures"], weights=[20, 14, 8, 12, 12, 10, 5, 4, 3, 2])[0]
    text = "the [MASK] sat on the mat."
    options: dict[str, str | None] = {}
    positional: list[str] = []
    output = None
    if command == "fill-mask":
        positional, options = [text], {"--top-k": "3"}
    elif command == "attention":
        output = "new.png"
        positional, options = ["the bank"], {"--view": "layer", "--layer": "0", "-o": output}
    elif command == "explore":
        output = "new.html"
        positional, options = ["the bank"], {"-o": output}
    elif command == "embed":
        positional, options = ["the bank", "a river"], {"--max-seq-length": "16"}
    elif command == "search":
        positional, options = ["the bank", "a river"], {"--query": "money", "--max-seq-length":
                                                       "16"}
    elif command == "info":
        positional = []
    elif command == "pretrain":
        output = "run"
        options = {"-o": output, "--steps": "2", "--num-documents": "20", "--workers": "1",
                   "--save-seconds": "0", "--eval-every": "2"}
    elif command == "finetune":
        output = "run"
        options = {"-o": output, "--task": "classify", "--epochs": "1", "--train-size": "20",
                   "--test-size": "10"}
    elif command == "distil":
        output = "run"
        options = {"-o": output, "--steps": "2", "--num-documents": "20"}
    elif command == "figures":
        output = "dir.png"
        options = {"-o": output, "--formats": "png", "--dpi": "40"}
    numeric = {"fill-mask": ["--top-k"], "attention": ["--layer", "--head", "--dpi",
                                                        "--max-seq-length"],
               "explore": ["--neuron-layers"], "embed": ["--max-seq-length"],
               "search": ["--max-seq-length"], "info": [],
               "pretrain": ["--steps", "--batch-size", "--max-seq-length", "--lr", "--dropout",
                            "--layers", "--vocab-size", "--num-documents", "--workers",
                            "--warmup-fraction", "--save-seconds", "--seed", "--eval-every"],
               "finetune": ["--epochs", "--lr", "--batch-size", "--max-seq-length", "--lora",
                            "--train-size", "--min-steps"],
               "distil": ["--steps", "--batch-size", "--max-seq-length", "--temperature",
                          "--alpha-ce", "--student-layers", "--lr", "--dropout"],
               "figures": ["--dpi"]}[command]
    reads_model = command not in ("pretrain",) and not (command == "finetune" and
                                                        rng.random() < 0.3)
    for _ in range(rng.choice([1, 1, 2, 3])):
        kind = rng.choice(["number", "model", "text", "output", "flag"])
        if kind == "number" and numeric:
            options[rng.choice(numeric)] = rng.choice(NUMBERS)
        elif kind == "model" and reads_model:
            model = rng.choice(sorted(models))
        elif kind == "text" and positional:
            positional[rng.randrange(len(positional))] = rng.choice(TEXTS)
        elif kind == "output" and output is not None:
            output = _run_output(rng) if command in ("pretrain", "finetune", "distil") \
                else _output(rng, {"attention": "png", "explore": "html",
                                   "figures": "png"}[command])
            options["-o"] = output
        elif kind == "flag":
            options[rng.choice(["--overwrite", "--json", "--allow-partial", "--resume",
                                "--no-such-option"])] = None
        if command == "pretrain" and rng.random() < 0.2:
            options["--corpus"] = rng.choice(["/dev/zero", "fifo.png", "file.png", "dir.png",
                                              "missing.txt", "link.png"])
    argv = [command]
    if reads_model:
        if command == "info":
            argv.append(models[model])
        else:
            options["--model"] = models[model]
    for option, value in options.items():
        argv += [option] if value is None else [option, value]
    if command == "search" and rng.random() < 0.3:
        positional.append(options.get("--query") or "money")
    argv += positional
    return argv, output


# -- running one case in a forked child --------------------------------------------------------

def _drain_fifos(folder: Path, stop: threading.Event) -> threading.Thread:
    """Read every FIFO of the case folder while the case runs (a command writing into a FIFO
    needs a reader, as a pipe between two programs has)."""
    import select

    fds = [os.open(folder / f"fifo.{ext}", os.O_RDONLY | os.O_NONBLOCK)
           for ext in ("png", "html", "pdf")]

    def drain():
        while not stop.is_set():
            ready, _, _ = select.select(fds, [], [], 0.05)
            for fd in ready:
                os.read(fd, 1 << 16)
        for fd in fds:
            os.close(fd)

    thread = threading.Thread(target=drain, daemon=True)
    thread.start()
    return thread


def run_case(argv: list[str], folder: Path, time_limit: float, memory_limit: int) -> dict:
    stdout_path, stderr_path = folder.parent / f".{folder.name}.out", \
        folder.parent / f".{folder.name}.err"
    stop = threading.Event()
    drainer = _drain_fifos(folder, stop)
    started = time.monotonic()
    pid = os.fork()
    if pid == 0:  # the child: the command, as `minibert ARGV` runs it
        code = 1
        try:
            os.setpgid(0, 0)
            os.chdir(folder)
            resource.setrlimit(resource.RLIMIT_AS, (memory_limit, memory_limit))
            out = os.open(stdout_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            err = os.open(stderr_path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            os.dup2(out, 1)
            os.dup2(err, 2)
            for signum in (signal.SIGINT, signal.SIGTERM):
                signal.signal(signum, signal.SIG_DFL)
            from minibert.cli.main import main

            code = main(argv)
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None
                                                                   else 1)
        except BaseException:
            traceback.print_exc()
            code = 1
        finally:
            for stream in (sys.stdout, sys.stderr):
                try:
                    stream.flush()
                except Exception:  # noqa: BLE001 - a stream broken by the case itself
                    pass
            os._exit(code)
    timed_out = False
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() - started > time_limit:
            timed_out = True
            os.killpg(pid, signal.SIGKILL)
            _, status = os.waitpid(pid, 0)
            break
        time.sleep(0.02)
    try:  # workers a killed case left behind, in its process group
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    stop.set()
    drainer.join()
    stdout = stdout_path.read_bytes().decode("utf-8", "replace")
    stderr = stderr_path.read_bytes().decode("utf-8", "replace")
    stdout_path.unlink()
    stderr_path.unlink()
    return {"status": status, "timed_out": timed_out, "stdout": stdout, "stderr": stderr,
            "seconds": time.monotonic() - started}


def classify(argv: list[str], result: dict) -> tuple[str, str]:
    """(outcome, detail) of a case's result (see the module docstring)."""
    stderr, status = result["stderr"], result["status"]
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    last = lines[-1] if lines else ""
    if "Traceback (most recent call last)" in stderr:
        return "traceback", stderr.strip().splitlines()[-1][:300]
    if result["timed_out"]:
        if any(line.startswith(("step ", "epoch ")) or " step " in line for line in lines):
            return "slow", last[:200]
        return "unbounded", f"no progress within the time limit; stderr: {last[:200]}"
    if os.WIFSIGNALED(status):
        return "unbounded", f"killed by {signal.Signals(os.WTERMSIG(status)).name}: {last[:200]}"
    code = os.WEXITSTATUS(status)
    if code == 0:
        if argv[0] == "search" and "--json" not in argv:
            query = argv[argv.index("--query") + 1] if "--query" in argv else None
            for line in result["stdout"].splitlines():
                parts = line.split(None, 2)
                if len(parts) == 3 and parts[1] == "+1.0000" and parts[2] != query:
                    return "wrong answer", f"search scored {parts[2][:60]!r} +1.0000"
        return "answered", ""
    if code in (2, 3):
        if "out of memory" in last:
            return "unbounded", last[:200]
        if not last or "error" not in last:
            return "traceback", f"exit {code} without a one-line error: {stderr[-200:]!r}"
        return "refused", last[:200]
    return "traceback", f"exit status {code}: {last[:200]}"


def fuzz_command_line(cases: int, seed: int, time_limit: float, memory_limit: int,
                      report=print, refusals: list | None = None) -> tuple[Counter, list]:
    """Run ``cases`` generated command lines; returns (counts by (command, outcome), the
    failures as (argv, outcome, detail)); ``refusals`` collects (argv, error line)."""
    rng = random.Random(seed)
    counts: Counter = Counter()
    failures = []
    with tempfile.TemporaryDirectory(prefix="minibert-fuzz-") as scratch:
        scratch = Path(scratch)
        models = build_models(scratch / "models")
        models_before = snapshot(scratch / "models")
        for index in range(cases):
            argv, output = generate(rng, models)
            folder = scratch / f"case-{index}"
            make_case_folder(folder)
            before = snapshot(folder)
            result = run_case(argv, folder, time_limit, memory_limit)
            outcome, detail = classify(argv, result)
            if outcome not in FAILURES:
                outside = changed_outside(before, snapshot(folder), outputs_of(folder, output))
                if outside:
                    outcome, detail = "changed outside", f"changed: {outside[:5]}"
            counts[(argv[0], outcome)] += 1
            if outcome == "refused" and refusals is not None:
                refusals.append((argv, detail))
            if outcome in FAILURES:
                failures.append((argv, outcome, detail))
                report(f"  case {index}: {outcome}: {_shown(argv)}: {detail}")
            shutil.rmtree(folder, ignore_errors=True)
            if (index + 1) % 100 == 0:
                report(f"  {index + 1}/{cases} command lines, {len(failures)} failures")
        moved = changed_outside(models_before, snapshot(scratch / "models"), [])
        if moved:
            counts[("models", "changed outside")] += 1
            failures.append((["models"], "changed outside", f"changed: {moved[:5]}"))
    return counts, failures


def _shown(argv: list[str]) -> str:
    return " ".join(repr(a) if (not a or " " in a) and len(a) < 60 else
                    repr(a[:40] + "...") if len(a) >= 60 else a for a in argv)


# -- checkpoint variants ---------------------------------------------------------------------

def _variant(rng: random.Random) -> tuple[str, dict, str]:
    """(transformers class, config overrides, torch dtype name) of a random tiny model."""
    family = rng.choice(["bert"] * 6 + ["distilbert", "albert"])
    if family == "distilbert":
        class_name = rng.choice(["DistilBertForMaskedLM", "DistilBertModel"])
        overrides = {"activation": rng.choice(["gelu", "relu", "gelu_new", "silu"])}
    elif family == "albert":
        class_name = rng.choice(["AlbertForMaskedLM", "AlbertModel", "AlbertForPreTraining"])
        overrides = {"embedding_size": rng.choice([4, 8]),
                     "hidden_act": rng.choice(["gelu_new", "gelu", "relu"])}
    else:
        class_name = rng.choice(["BertModel", "BertForMaskedLM", "BertForPreTraining"])
        overrides = {"hidden_act": rng.choice(["gelu", "gelu_new", "relu",
                                               "gelu_pytorch_tanh", "silu", "tanh"]),
                     "type_vocab_size": rng.choice([1, 2, 3]),
                     "layer_norm_eps": rng.choice([1e-12, 1e-5, 0.1])}
    if family != "distilbert" and rng.random() < 0.15:
        overrides["position_embedding_type"] = rng.choice(["absolute", "relative_key"])
    if rng.random() < 0.4:
        overrides["tie_word_embeddings"] = rng.random() < 0.5
    if family == "bert" and rng.random() < 0.1:
        overrides["is_decoder"] = True
    return class_name, overrides, rng.choice(["float32", "float32", "float16", "bfloat16"])


def fuzz_checkpoints(variants: int, seed: int, report=print) -> tuple[Counter, list]:
    """Random tiny checkpoints written by transformers: equal or refused, never else."""
    import warnings

    import numpy as np
    import torch
    import transformers

    import minibert as mb

    transformers.logging.set_verbosity_error()
    transformers.logging.disable_progress_bar()
    rng = random.Random(seed + 1)
    counts: Counter = Counter()
    failures = []
    sizes = dict(vocab_size=61, hidden_size=16, num_hidden_layers=2, num_attention_heads=2,
                 intermediate_size=24, max_position_embeddings=20)
    ids = np.array([[2, 5, 7, 9, 11, 13, 3], [2, 17, 19, 23, 3, 0, 0]])
    mask = (ids != 0).astype(np.int64)
    with tempfile.TemporaryDirectory(prefix="minibert-variants-") as scratch:
        for index in range(variants):
            class_name, overrides, dtype = _variant(rng)
            if class_name.startswith("DistilBert"):
                config = transformers.DistilBertConfig(
                    vocab_size=61, dim=16, n_layers=2, n_heads=2, hidden_dim=24,
                    max_position_embeddings=20, **overrides)
            elif class_name.startswith("Albert"):
                config = transformers.AlbertConfig(**sizes, **overrides)
            else:
                config = transformers.BertConfig(**sizes, **overrides)
            torch.manual_seed(index)
            model = getattr(transformers, class_name)(config)
            with torch.no_grad():
                for parameter in model.parameters():
                    parameter.add_(torch.randn_like(parameter) * 0.2)
            folder = Path(scratch) / f"variant-{index}"
            model.to(getattr(torch, dtype)).save_pretrained(folder)
            reference = getattr(transformers, class_name).from_pretrained(
                folder, dtype=torch.float32, attn_implementation="eager").eval()
            segments = np.zeros_like(ids) if getattr(config, "type_vocab_size", 2) == 1 \
                else (np.arange(ids.shape[1]) >= 3).astype(np.int64)[None].repeat(2, 0)
            kwargs = {"input_ids": torch.from_numpy(ids), "attention_mask": torch.from_numpy(mask)}
            if not class_name.startswith("DistilBert"):
                kwargs["token_type_ids"] = torch.from_numpy(segments)
            with torch.no_grad():
                theirs = reference(**kwargs)
            label = f"{class_name} {dtype} {overrides}"
            try:
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    ours_model = getattr(mb, class_name).from_pretrained(folder,
                                                                         dtype=np.float64)
                    inputs = {"input_ids": ids, "attention_mask": mask}
                    if not class_name.startswith("DistilBert"):
                        inputs["token_type_ids"] = segments
                    ours = ours_model(**inputs)
            except (ValueError, TypeError) as error:
                outcome = "refused" if "\n" not in str(error) else "wrong answer"
                counts[outcome] += 1
                if outcome != "refused":
                    failures.append(([label], outcome, str(error)[:200]))
                continue
            except Exception as error:  # noqa: BLE001 - a crash is what is counted
                counts["traceback"] += 1
                failures.append(([label], "traceback", f"{type(error).__name__}: {error}"))
                report(f"  variant {index}: traceback: {label}: {error}")
                continue
            worst = 0.0
            for name in ("last_hidden_state", "logits", "prediction_logits",
                         "seq_relationship_logits", "sop_logits"):
                mine, reference_out = getattr(ours, name, None), getattr(theirs, name, None)
                if mine is None or reference_out is None:
                    continue
                mine, reference_out = np.asarray(mine), reference_out.numpy()
                if mine.ndim == 3:
                    mine, reference_out = mine[mask.astype(bool)], \
                        reference_out[mask.astype(bool)]
                scale = max(1.0, float(np.abs(reference_out).max()))
                worst = max(worst, float(np.abs(mine - reference_out).max()) / scale)
            outcome = "equal" if worst < 1e-4 else "wrong answer"
            counts[outcome] += 1
            if outcome == "wrong answer":
                failures.append(([label], outcome, f"max difference {worst:.3g} of the scale"))
                report(f"  variant {index}: wrong answer: {label}: {worst:.3g}")
    return counts, failures


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=1000, help="command-line cases")
    parser.add_argument("--variants", type=int, default=100,
                        help="checkpoint variants (0 without transformers)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--time-limit", type=float, default=60.0,
                        help="seconds a command-line case may run")
    parser.add_argument("--memory-limit-gb", type=float, default=4.0,
                        help="address space of a command-line case (ulimit -v)")
    parser.add_argument("--samples", type=int, default=0,
                        help="print this many refusals, drawn at random, to read them")
    args = parser.parse_args(argv)
    import minibert.cli.main  # noqa: F401 - imported once, before the cases fork

    started = time.monotonic()
    refusals: list = []
    counts, failures = fuzz_command_line(args.cases, args.seed, args.time_limit,
                                         int(args.memory_limit_gb * 2**30), refusals=refusals)
    commands = sorted({command for command, _ in counts})
    outcomes = ["answered", "refused", "slow", *FAILURES]
    print(f"\ncommand-line cases: {sum(counts.values())} ({time.monotonic() - started:.0f} s)")
    print(f"{'command':<12}" + "".join(f"{o:>10}" for o in
                                         ("answered", "refused", "slow", "traceback",
                                          "unbounded", "outside", "wrong")))
    for command in commands:
        print(f"{command:<12}" + "".join(f"{counts[(command, o)]:>10}" for o in outcomes))
    totals = Counter()
    for (_, outcome), count in counts.items():
        totals[outcome] += count
    print(f"{'all':<12}" + "".join(f"{totals[o]:>10}" for o in outcomes))
    if args.samples:
        print(f"\n{args.samples} of the refusals, at random:")
        for argv_, detail in random.Random(args.seed).sample(
                refusals, min(args.samples, len(refusals))):
            print(f"  {_shown(argv_)}\n      {detail}")
    if args.variants:
        started = time.monotonic()
        variant_counts, variant_failures = fuzz_checkpoints(args.variants, args.seed)
        failures += variant_failures
        print(f"\ncheckpoint variants: {sum(variant_counts.values())} "
              f"({time.monotonic() - started:.0f} s): " +
              ", ".join(f"{variant_counts[o]} {o}" for o in
                        ("equal", "refused", "traceback", "wrong answer")))
    generated = sum(counts.values()) + (sum(variant_counts.values()) if args.variants else 0)
    by_kind = Counter(outcome for _, outcome, _ in failures)
    print(f"\n{generated} generated inputs: {by_kind['traceback']} tracebacks, "
          f"{by_kind['wrong answer']} silent wrong answers, {by_kind['unbounded']} unbounded, "
          f"{by_kind['changed outside']} changed outside their output")
    for argv_, outcome, detail in failures:
        print(f"  {outcome}: {_shown(argv_)}: {detail}")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
