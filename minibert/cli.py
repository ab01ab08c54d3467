"""The ``minibert`` command line: one subcommand per job, each with ``--help``.

Bad input ends with a one-line message on stderr and exit status 2, never a traceback: a
message names the argument or path, what was wrong and what was expected, and repeats at
most a short excerpt of the user's text. Every file is written atomically, so a failed
write (permission, full disk) leaves nothing half-written.

One vocabulary for every command (docs/cli.md lists them all): ``--model DIR|NAME`` for a
model it reads (``_model_folder``), ``-o/--out`` for what it writes, ``--overwrite`` to
replace it, ``--json`` for results, ``--max-seq-length``; the old spellings are hidden
aliases. A new subcommand is an ``_add_<name>``/``_run_<name>`` pair plus an entry in
``_COMMANDS``; its parser is a ``_Parser`` (one-line errors, defaults in ``--help``).
SIGTERM and SIGHUP end a command as Ctrl-C does (a training run saves a checkpoint of the
step it was on and prints the command that resumes it); a closed pipe ends it quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import shlex
import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["main", "build_parser"]

USER_ERRORS = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    OSError,
)


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


# Old spellings of options, still accepted but not shown by --help (one vocabulary: --out,
# --max-seq-length, --model).
HIDDEN_ALIASES = frozenset({"--output", "--max-length", "--teacher"})

# Bounds a user can reason about (the lower bounds are each job's own checks).
MAX_STEPS = 10_000_000  # BERT-Base trained 1,000,000 steps
MAX_SEQ_LENGTH = 512  # BERT's position table
MAX_LAYERS = 48  # BERT-Large has 24
DPI_RANGE = (30, 1200)  # below 30 text cannot be drawn; above 1200 a figure takes GBs
# The toy tasks hold every example in memory (about 4 KB each while they are drawn, 1.5 ms
# each): 100,000 stays under half a GB and a few minutes.
MAX_EXAMPLES = 100_000
# The toy corpus: 100,000 documents take about 3 s and 150 MB to write, and become some two
# million pretraining instances (tiny-toy read 5,200 documents).
MAX_DOCUMENTS = 100_000
MAX_BATCH_SIZE = 4096  # sequences per step (BERT's pretraining used 256)
MAX_VOCAB_SIZE = 250_000  # WordPiece tokens (BERT's is 30,522; multilingual models' ~250k)
MAX_EPOCHS = 10_000


class _HelpFormatter(argparse.HelpFormatter):
    """--help that shows every option's default and leaves the hidden aliases out."""

    def _get_help_string(self, action):
        text = action.help or ""
        if (action.option_strings and action.default is not None
                and action.default is not False and action.default != argparse.SUPPRESS
                and "(default" not in text):
            text += (" " if text else "") + "(default: %(default)s)"
        return text

    def _format_action_invocation(self, action):
        shown = [o for o in action.option_strings if o not in HIDDEN_ALIASES]
        if shown == action.option_strings:
            return super()._format_action_invocation(action)
        visible = copy.copy(action)
        visible.option_strings = shown
        return super()._format_action_invocation(visible)


class _Parser(argparse.ArgumentParser):
    """An argument parser whose errors are one line (exit 2), as every other error."""

    def __init__(self, *args, **kwargs):
        # argparse's own ArgumentDefaultsHelpFormatter would print "(default: None)"
        if kwargs.get("formatter_class") in (None, argparse.ArgumentDefaultsHelpFormatter):
            kwargs["formatter_class"] = _HelpFormatter
        super().__init__(*args, **kwargs)

    def add_argument(self, *args, **kwargs):
        # Options without a help text still show their default.
        if args and str(args[0]).startswith("-") and not kwargs.get("help") and \
                kwargs.get("default") is not None and kwargs.get("default") is not False:
            kwargs["help"] = "(default: %(default)s)"
        return super().add_argument(*args, **kwargs)

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {message}; see {self.prog} --help\n")


def _bounded(value, argument: str, minimum=None, maximum=None):
    """``value`` if it lies in [minimum, maximum]; else a one-line error naming ``argument``."""
    if value is None:
        return value
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        allowed = (f"{minimum:,} to {maximum:,}" if minimum is not None and maximum is not None
                   else f">= {minimum:,}" if minimum is not None else f"<= {maximum:,}")
        raise CommandError(f"{argument} must be {allowed}, got {value:,}")
    return value


def _finite_output(values, what: str, model: str) -> None:
    """Refuse to print NaN or infinite results (weights loaded with --allow-partial that hold
    NaN, or an overflow): a number that is not one is no answer."""
    import numpy as np

    values = np.fromiter(values, dtype=np.float64) if not isinstance(values, np.ndarray) \
        else values
    if values.size and not np.isfinite(values).all():
        raise CommandError(f"the model {model!r} gave NaN or infinite numbers in {what}; its "
                           f"weights are broken (a diverged run?), so there is no answer")


def _nonempty_text(text: str | None, argument: str) -> str | None:
    """``text`` unless it is empty or blank: every command refuses an empty text alike (a
    model would read [CLS] [SEP] alone, and answer as confidently as for a sentence)."""
    if text is not None and not text.strip():
        raise CommandError(f"{argument} {text!r} is empty; give a sentence")
    return text


@contextlib.contextmanager
def _reading_model(args, folder: str) -> Iterator[None]:
    """Load the model of --model within: operating-system errors in one line, and with
    --allow-partial a folder whose config.json names fewer layers than its weights hold is
    loaded, with one line saying so (the answers are not those of the saved model)."""
    from minibert.io.checkpoint import checkpoint_summary, partial_loading

    with _file_access("--model must be a readable model folder"), \
            partial_loading(args.allow_partial):
        yield
        mismatches = checkpoint_summary(folder)["mismatches"] if args.allow_partial else []
    if mismatches:
        _progress(f"minibert {args.command}: warning: --allow-partial: config.json says "
                  f"{'; and '.join(mismatches)}; the answers come from the layers it names")


def _add_allow_partial(parser) -> None:
    """--allow-partial: load a model whose config.json names fewer blocks than its weights."""
    parser.add_argument("--allow-partial", action="store_true",
                        help="load a folder whose config.json names fewer layers than its "
                             "weights hold, using only those layers (refused by default: "
                             "the answers would be another model's)")


def _out_path(path: str, argument: str = "--out") -> str:
    """``path`` unless it is empty (an empty --out would write into the current folder)."""
    if not path.strip():
        raise CommandError(f"{argument} {path!r} is empty; give a folder or file name")
    return path


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _os_reason(error: OSError) -> str:
    """One line for an operating-system error: the path and what went wrong, in words."""
    from minibert.checks import os_error_line

    return os_error_line(error)


@contextlib.contextmanager
def _file_access(expected: str) -> Iterator[None]:
    """Turn an operating-system error into one line ending in what the command expected."""
    try:
        yield
    except OSError as error:
        if error.errno is None:
            raise
        raise CommandError(f"{_os_reason(error)}; {expected}") from None


def _model_folder(path: str, argument: str) -> str:
    """``path`` if it is a folder, else the shipped reference checkpoint of that name.

    A folder of the same name as a reference checkpoint wins: the name is only looked up
    when nothing is at ``path``. Anything else gets a clear error.
    """
    from minibert.reference import REFERENCES, reference_path

    if not path.strip():
        raise CommandError(f"{argument} {path!r} is empty; give a model folder or one of "
                           f"{', '.join(sorted(REFERENCES))}")
    folder = Path(path)
    if folder.is_dir():
        _check_model_files(folder, argument)
        return path
    if not folder.exists() and path in REFERENCES:
        return str(reference_path(path))
    what = "is a file, not a model folder" if folder.exists() else "does not exist"
    raise CommandError(f"{argument} {path!r} {what}; expected a folder with config.json, "
                       f"model.safetensors and vocab.txt (written by pretrain or "
                       f"save_pretrained), or a reference checkpoint: "
                       f"{', '.join(sorted(REFERENCES))}")


def _check_model_files(folder: Path, argument: str) -> None:
    """Refuse a model folder whose files cannot be what they should, naming the file.

    An interrupted pretraining run (a checkpoint, no model yet), a config.json or
    model.safetensors that is a folder, a vocab.txt whose length differs from the model's
    vocab_size (the embedding table's rows: a longer vocabulary gives ids the table lacks,
    a shorter one cannot spell the model's predictions). Anything else is left to the
    loader's own messages.
    """
    import json

    from minibert.io.checkpoint import CONFIG_NAME, VOCAB_NAME, WEIGHTS_NAME
    from minibert.io.fileio import running_job

    holder = running_job(folder)
    if holder:
        raise CommandError(f"{argument} {str(folder)!r} is in use by a running job ({holder}) "
                           f"that writes a model into it; wait for it to finish, or give "
                           f"another folder")
    for name in (CONFIG_NAME, WEIGHTS_NAME, VOCAB_NAME):
        if (folder / name).is_dir():
            raise CommandError(f"{argument}: {str(folder / name)!r} is a folder; expected "
                               f"the file {name}")
    if not (folder / CONFIG_NAME).exists() and (folder / "checkpoint").is_dir():
        raise CommandError(f"{argument} {str(folder)!r} holds an interrupted pretraining "
                           f"run (a checkpoint, no model yet); finish it with the pretrain "
                           f"command it printed (with --resume), then use the folder")
    try:
        vocab_size = json.loads((folder / CONFIG_NAME).read_text(encoding="utf-8"))[
            "vocab_size"]
        with open(folder / VOCAB_NAME, encoding="utf-8") as handle:
            tokens = sum(1 for _ in handle)
    except (OSError, ValueError, KeyError, TypeError):
        return  # missing or unreadable: the loader says which and why
    if isinstance(vocab_size, int) and tokens != vocab_size:
        raise CommandError(f"{argument}: {str(folder / VOCAB_NAME)!r} has {tokens:,} tokens "
                           f"but {CONFIG_NAME} says vocab_size {vocab_size:,} (the rows of "
                           f"the embedding table); they must be equal: was vocab.txt "
                           f"replaced by another model's?")


def _input_file(path: str, argument: str, expected: str) -> str:
    """``path`` if it is a readable file; otherwise a clear error."""
    target = Path(path)
    if target.is_dir():
        raise CommandError(f"{argument} {path!r} is a folder; expected {expected}")
    if not target.exists():
        raise CommandError(f"{argument} {path!r} does not exist; expected {expected}")
    with _file_access(f"{argument} expected {expected}"):
        with open(target, "rb"):
            pass
    return path


def _check_text_arguments(argv: list[str]) -> None:
    """Refuse arguments holding bytes that are not UTF-8.

    Python keeps such bytes as lone surrogates ("surrogateescape"); the tokenizer would
    drop them without a word, so that a model would read a different text than was typed.
    """
    from minibert.fill_mask import excerpt

    for position, argument in enumerate(argv, 1):
        bad = [i for i, char in enumerate(argument) if "\udc80" <= char <= "\udcff"]
        if bad:
            raw = argument.encode("utf-8", "surrogateescape")
            shown = excerpt(raw.decode("utf-8", "replace"))
            raise CommandError(f"argument {position} is not valid UTF-8 (byte "
                               f"0x{ord(argument[bad[0]]) - 0xDC00:02x} at character "
                               f"{bad[0]}, shown as U+FFFD: {shown}); command-line text "
                               f"must be UTF-8")


def _subcommand(subparsers, name: str, run: Callable[..., int],
                summary: str) -> argparse.ArgumentParser:
    """Add the subcommand ``name``: ``summary`` in the list of commands, the docstring of
    ``run`` (the function that carries it out) as its --help description."""
    parser = subparsers.add_parser(name, help=summary, description=run.__doc__)
    parser.set_defaults(handler=run)
    return parser


def _print_results(results: list, lines: list[str], as_json: bool) -> int:
    """Print ``results`` as indented JSON under --json, else ``lines`` one by one; the exit
    code 0."""
    if as_json:
        import json

        print(json.dumps(results, indent=2))
    else:
        for line in lines:
            print(line)
    return 0


# -- gradcheck -------------------------------------------------------------------------------


def _add_gradcheck(subparsers) -> None:
    parser = _subcommand(subparsers, "gradcheck", _run_gradcheck,
                         "check every backward pass against finite differences (float64)")
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs (>= 0)")
    parser.add_argument(
        "--no-model", action="store_true", help="skip the whole-model checks (the slowest part)"
    )
    parser.add_argument("--full", action="store_true",
                        help="print every array's row (wide: the names are parameter paths)")
    parser.add_argument("--json", action="store_true",
                        help="print every array's row as JSON, full precision")


SCREEN_COLUMNS = 100  # what a projector shows without wrapping


def _gradcheck_summary(table, failures: list[str]) -> str:
    """One line per check (its largest error over its arrays), at most SCREEN_COLUMNS wide."""
    cases: dict[str, list] = {}
    for row in table.rows:
        case, _, _ = row.name.partition(": ")
        cases.setdefault(case, []).append(row)
    failed = {name.split("/", 1)[0] for name in failures}
    figures = 2 + 8 + 2 + 13 + 2 + 12 + 2 + 3  # arrays, max rel_error, max abs diff, "yes"
    width = min(max(len("check"), *map(len, cases)), SCREEN_COLUMNS - figures)
    header = f"{'check':<{width}}  {'arrays':>8}  {'max rel_error':>13}  {'max abs diff':>12}  ok"
    lines = [header, "-" * len(header)]
    for case, rows in cases.items():
        shown = case if len(case) <= width else case[:width - 3] + "..."
        nonzero = [r.rel_error for r in rows if r.analytic_norm >= 1e-9]
        rel = f"{max(nonzero):.2e}" if nonzero else "0 (exact)"
        lines.append(f"{shown:<{width}}  {len(rows):>8}  {rel:>13}  "
                     f"{max(r.max_abs_diff for r in rows):>12.2e}  "
                     f"{'NO' if case in failed else 'yes'}")
    return "\n".join(lines)


def _run_gradcheck(args) -> int:
    """Run the float64 gradient check of every functional pair, every layer, BERT's blocks,
    the whole BertForPreTraining and AlbertForPreTraining, and print one line per check
    (--full: one per array)."""
    from minibert.gradcheck.suite import MODEL_TOL, SINGLE_LAYER_TOL, run_all

    _bounded(args.seed, "--seed", minimum=0)
    start = time.perf_counter()
    table, failures = run_all(
        seed=args.seed,
        include_model=not args.no_model,
        progress=lambda name: _progress(f"checking {name} ..."),
    )
    if args.json:
        import json

        print(json.dumps([{"name": r.name, "rel_error": r.rel_error,
                           "max_abs_diff": r.max_abs_diff, "checked": r.checked,
                           "size": r.size} for r in table.rows], indent=2))
        return 1 if failures else 0
    print(table.to_text(tol=SINGLE_LAYER_TOL) if args.full
          else _gradcheck_summary(table, failures))
    print(
        f"\n{len(table)} arrays checked in {time.perf_counter() - start:.1f} s; largest "
        f"relative error (nonzero gradients) {table.max_rel_error:.2e}\n"
        f"tolerance {SINGLE_LAYER_TOL:g} per layer, {MODEL_TOL:g} for the whole model"
    )
    if failures:
        print(f"FAILED: {', '.join(failures)}")
        return 1
    print("all gradient checks passed")
    return 0


# -- info ------------------------------------------------------------------------------------


def _add_info(subparsers) -> None:
    parser = _subcommand(subparsers, "info", _run_info,
                         "describe a checkpoint folder: config, parameter counts, dtype, heads")
    parser.add_argument("folder", metavar="DIR", nargs="?",
                        help="the same as --model (kept for the commands written before it)")
    parser.add_argument("--model", metavar="DIR|NAME",
                        help="checkpoint folder, or tiny-toy (the shipped reference checkpoint)")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")


def _run_info(args) -> int:
    """Read a checkpoint folder (config.json + model.safetensors) without loading its
    weights, and print its configuration, parameter counts by module, dtypes and which heads
    it has."""
    import json

    from minibert.family.registry import config_class_of
    from minibert.io.checkpoint import checkpoint_summary

    if (args.model is None) == (args.folder is None):
        raise CommandError("give the model once: --model DIR (or the folder alone)"
                           if args.model is None else
                           f"--model {args.model!r} and DIR {args.folder!r}: give one of them")
    argument = "--model" if args.model is not None else "DIR"
    folder = _model_folder(args.model or args.folder, argument)
    with _file_access(f"{argument} must be a readable model folder"):
        summary = checkpoint_summary(folder, config_class_of(folder))
    if args.json:
        print(json.dumps(summary, indent=2, sort_keys=True))
        return 0
    config = summary["config"]
    print(f"checkpoint: {summary['folder']}")
    print(f"architectures: {', '.join(config.get('architectures', ['?']))}")
    for key in (
        "vocab_size",
        "hidden_size",
        "num_hidden_layers",
        "num_attention_heads",
        "intermediate_size",
        "hidden_act",
        "max_position_embeddings",
        "type_vocab_size",
        "layer_norm_eps",
        # DistilBERT's names for its sizes (its config.json has none of the BERT names above)
        "dim", "n_layers", "n_heads", "hidden_dim", "activation", "sinusoidal_pos_embds",
        # ALBERT's: the width of its embedding tables and how its layers share blocks
        "embedding_size", "num_hidden_groups", "inner_group_num",
    ):
        if key in config:
            print(f"  {key:<26} {config[key]}")
    for mismatch in summary["mismatches"]:  # right under the values they contradict
        print(f"  MISMATCH: config.json says {mismatch}")
    if summary["mismatches"]:
        print("  (commands refuse this folder; --allow-partial loads the layers config.json "
              "names when the weights hold more)")
    print(f"dtypes: {', '.join(summary['dtypes'])}")
    print("parameters by module:")
    width = max(len(k) for k in summary["parameters"])
    for name, count in summary["parameters"].items():
        print(f"  {name:<{width}}  {count:>12,}")
    print(f"  {'total':<{width}}  {summary['total_parameters']:>12,}")
    heads = ", ".join(summary["heads"]) or "none (a base encoder checkpoint)"
    print(f"pooler: {'yes' if summary['pooler'] else 'no'}; heads: {heads}")
    print(f"vocab.txt: {'yes' if summary['vocab'] else 'no'}")
    return 0


# -- pretrain --------------------------------------------------------------------------------

def _add_output_folder(parser) -> None:
    """-o/--out DIR, the folder a training command (pretrain, finetune, distil) writes."""
    parser.add_argument("-o", "--out", required=True, metavar="DIR",
                        help="output folder (created; locked while the run writes into it)")


def _add_learning_rate(parser, default: float) -> None:
    """--lr, the peak of a training command's learning-rate schedule."""
    parser.add_argument("--lr", type=float, default=default, help="peak learning rate")


def _add_training_output_options(parser, metrics: str = "the metrics") -> None:
    """--overwrite and --json, as the training commands (pretrain, finetune, distil) read them."""
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a model already in --out (only the files minibert wrote "
                             "there are removed)")
    parser.add_argument("--json", action="store_true",
                        help=f"print {metrics} as JSON (as in OUT/metrics.json)")


def _add_pretrain(subparsers) -> None:
    from minibert.training.pretrain import TrainingConfig
    from minibert.training.pretrain_config import MAX_DEFAULT_WORKERS, default_workers

    defaults = TrainingConfig()
    parser = _subcommand(subparsers, "pretrain", _run_pretrain,
                         "pretrain a BERT with MLM + NSP on the toy corpus or a text file")
    _add_output_folder(parser)
    parser.add_argument("--preset", default=defaults.preset,
                        help="model size: tiny, mini, small, base or large (default tiny)")
    parser.add_argument("--layers", type=int, default=None, metavar="L",
                        help=f"transformer blocks, 1 to {MAX_LAYERS} (default: the preset's, "
                             f"2 for tiny)")
    parser.add_argument("--corpus", metavar="FILE",
                        help="UTF-8 text in BERT's format (one sentence per line, a blank line "
                             "between documents); default: the generated toy corpus")
    parser.add_argument("--architecture", default=defaults.architecture,
                        help="bert (default), albert (factorised embeddings, one block "
                             "shared by all layers, sentence-order prediction) or electra "
                             "(a generator fills the masks, the discriminator at --out finds "
                             "the replaced tokens; the generator in --out/generator)")
    parser.add_argument("--objective", default=None,
                        help="nsp (BERT), sop (ALBERT) or mlm (MLM only) (default: nsp for "
                             "bert, sop for albert, mlm for electra)")
    parser.add_argument("--steps", type=int, default=defaults.steps,
                        help=f"optimizer steps, at most {MAX_STEPS:,}")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size,
                        help=f"sequences per step, at most {MAX_BATCH_SIZE:,} and the number "
                             f"of training instances (and a batch that fits in memory: the "
                             f"run estimates it first)")
    parser.add_argument("--max-seq-length", type=int, default=defaults.max_seq_length,
                        help=f"tokens per instance, at most {MAX_SEQ_LENGTH}")
    parser.add_argument("--vocab-size", type=int, default=defaults.vocab_size,
                        help=f"largest WordPiece vocabulary learned from the corpus, at most "
                             f"{MAX_VOCAB_SIZE:,}")
    _add_learning_rate(parser, defaults.learning_rate)
    parser.add_argument("--dropout", type=float, default=defaults.dropout,
                        help=f"hidden and attention dropout (default {defaults.dropout})")
    parser.add_argument("--schedule", default=defaults.schedule,
                        help="warmup_stable_decay (the peak rate, then a linear decay to 0 over "
                             "the last --decay-fraction of the steps), constant, or linear "
                             f"(warmup, then decay to 0: BERT's) (default {defaults.schedule})")
    parser.add_argument("--decay-fraction", type=float, default=defaults.decay_fraction,
                        help="warmup_stable_decay: share of the steps spent decaying "
                             f"(default {defaults.decay_fraction})")
    parser.add_argument("--warmup-fraction", type=float, default=defaults.warmup_fraction,
                        help="linear and warmup_stable_decay: share of the steps spent "
                             f"warming up from 0 (default {defaults.warmup_fraction})")
    parser.add_argument("--optimizer", default=defaults.optimizer,
                        help="adamw or adam_weight_decay (BERT's, without bias correction)")
    parser.add_argument("--token-type-init", default=defaults.token_type_init,
                        choices=("zero", "normal"),
                        help="segment embeddings at the start: zero, or normal like the other "
                             "embeddings (BERT's); zero lets next-sentence prediction start "
                             f"sooner (docs/results.md) (default {defaults.token_type_init})")
    parser.add_argument("--balance-next-sentence", default=defaults.balance_next_sentence,
                        action=argparse.BooleanOptionalAction,
                        help="nsp: drop NotNext instances until the labels are 50/50 (the "
                             "paper's split) instead of keeping Google's cut (more NotNext "
                             "than IsNext at T=32); measured in docs/results.md")
    parser.add_argument("--next-sentence-weight", type=float, default=None, metavar="W",
                        help="nsp: the next-sentence loss's weight in the loss minimised, "
                             "MLM + W x NSP (BERT: 1) (default "
                             f"{defaults.next_sentence_weight:g})")
    parser.add_argument("--dynamic-masking", action="store_true",
                        help="re-mask every epoch (RoBERTa) instead of static masks (BERT)")
    parser.add_argument("--num-documents", type=int, default=defaults.num_documents,
                        help=f"toy-corpus training documents, at most {MAX_DOCUMENTS:,}")
    parser.add_argument("--eval-every", type=int, default=defaults.eval_every,
                        help="held-out evaluation every this many steps (and at the end), "
                             f"at most {MAX_STEPS:,}")
    parser.add_argument("--save-seconds", type=float, default=defaults.save_seconds,
                        metavar="S",
                        help="write a resumable checkpoint to OUT/checkpoint after step 1 and "
                             f"then after every S seconds of training (default "
                             f"{defaults.save_seconds:g}; 0: by --save-every only); it is "
                             "removed when the run finishes")
    parser.add_argument("--save-every", type=int, default=defaults.save_every, metavar="K",
                        help="also write the checkpoint every K steps (default 0: by time "
                             "only; 0 with --save-seconds 0: no checkpoints)")
    parser.add_argument("--snapshot-every", type=int, default=defaults.snapshot_every,
                        metavar="K",
                        help="record the attention of a fixed sentence pair before the first "
                             "step and every K steps into OUT/attention_snapshots.npz, for "
                             "explore --timeline (0: none)")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds corpus, vocabulary, masks, weights, batches and dropout")
    parser.add_argument("--workers", type=int, default=None, metavar="N",
                        help="data-parallel worker processes, one BLAS thread each (1: train "
                             "in this process) (default: the cores there are, at most "
                             f"{MAX_DEFAULT_WORKERS}: {default_workers()} here; 1 with "
                             "--dropout)")
    parser.add_argument("--resume", action="store_true",
                        help="continue the interrupted run in --out from its checkpoint "
                             "(with the same settings; the run prints this command at its "
                             "start)")
    _add_training_output_options(parser, "the final metrics")


def _check_corpus(path: str, objective: str) -> None:
    """Read --corpus once before the run starts, so that its errors name --corpus and come
    before any word about checkpoints."""
    from minibert.data.corpus import read_corpus

    _input_file(path, "--corpus", "a UTF-8 text file in BERT's format")
    with _file_access("--corpus must be a readable UTF-8 text file"):
        try:
            documents = read_corpus(path)
        except ValueError as error:
            message = str(error)
            raise CommandError("--corpus" + message.removeprefix("path")
                               if message.startswith("path ") else message) from None
    if objective != "mlm" and len(documents) < 2:
        raise CommandError(f"--corpus {path!r} has {len(documents)} document; the {objective} "
                           f"objective pairs sentences of different documents and needs at "
                           f"least 2 (a blank line ends a document), or use --objective mlm")


def _check_pretraining_memory(config) -> None:
    """Refuse a run whose weights, optimizer and activations would not fit in the memory
    this machine has left, before anything is allocated (training/memory.py's estimate, with
    the vocabulary at its cap --vocab-size)."""
    from minibert.config import BertConfig
    from minibert.family.albert import AlbertConfig
    from minibert.training.memory import (
        available_memory,
        format_bytes,
        pretraining_parameters,
        training_memory,
    )

    sizes = dict(vocab_size=config.vocab_size,
                 max_position_embeddings=max(128, config.max_seq_length))
    if config.num_layers is not None:
        sizes["num_hidden_layers"] = config.num_layers
    model = BertConfig.preset(config.preset, **sizes)
    parameters = pretraining_parameters(model)
    if config.architecture == "albert":  # one block shared by every layer
        parameters = AlbertConfig.preset(config.preset, **sizes).num_parameters_estimate()
    need = training_memory(model, config.batch_size, config.max_seq_length, config.workers,
                           parameters=parameters)
    available = available_memory()
    if available is None or need["total"] <= available[0]:
        return
    raise CommandError(
        f"--preset {config.preset} with {model.num_hidden_layers} layers, --batch-size "
        f"{config.batch_size}, --max-seq-length {config.max_seq_length} and --workers "
        f"{config.workers} needs about {format_bytes(need['total'])} of memory "
        f"({format_bytes(need['weights_and_optimizer'] + need['worker_gradients'])} for "
        f"{need['parameters']:,} parameters, their gradients and Adam's moments; "
        f"{format_bytes(need['activations'])} of activations), more than the "
        f"{format_bytes(available[0])} left ({available[1]}); lower --batch-size or "
        f"--max-seq-length, or choose fewer --layers or a smaller --preset")


def _resume_command(args) -> str:
    """This very invocation with --resume (and without --overwrite), ready to paste; under
    an MPI launcher, started again by ``mpiexec -n N`` (srun users write their own)."""
    from minibert.bridges.mpi import launched_ranks

    program = args.program
    if launched_ranks() > 1:
        program = ["mpiexec", "-n", str(launched_ranks()), *program]
    kept = [a for a in args.argv if not (len(a) > 3 and "--overwrite".startswith(a))]
    if not args.resume:
        kept.append("--resume")
    return shlex.join([*program, *kept])


def _pretrain_workers(args) -> int:
    """--workers, or its default: the cores (at most the batch), 1 with dropout or snapshots;
    under an MPI launcher, the number of ranks."""
    from minibert.bridges.mpi import launched_ranks
    from minibert.training.pretrain_config import default_workers

    if args.workers is not None:
        return _bounded(args.workers, "--workers", minimum=1)
    if launched_ranks() > 1:
        return launched_ranks()
    if args.dropout or args.snapshot_every or args.architecture == "electra":
        return 1
    return max(1, min(default_workers(), args.batch_size))


def _run_pretrain(args) -> int:
    """Pretrain BertForPreTraining from scratch. Writes OUT/config.json, model.safetensors,
    vocab.txt (loadable with from_pretrained), metrics.json and history.json."""
    from minibert.bridges.mpi import launched_rank
    from minibert.family.registry import FAMILIES
    from minibert.training.parallel import WorkerError
    from minibert.training.pretrain import TrainingConfig, pretrain

    _out_path(args.out)
    _bounded(args.steps, "--steps", maximum=MAX_STEPS)
    _bounded(args.max_seq_length, "--max-seq-length", maximum=MAX_SEQ_LENGTH)
    _bounded(args.seed, "--seed", minimum=0)
    _bounded(args.layers, "--layers", minimum=1, maximum=MAX_LAYERS)
    _bounded(args.batch_size, "--batch-size", maximum=MAX_BATCH_SIZE)
    _bounded(args.vocab_size, "--vocab-size", maximum=MAX_VOCAB_SIZE)
    _bounded(args.num_documents, "--num-documents", maximum=MAX_DOCUMENTS)
    for option in ("--eval-every", "--save-every", "--snapshot-every"):
        _bounded(getattr(args, option[2:].replace("-", "_")), option, maximum=MAX_STEPS)
    family = FAMILIES.get(args.architecture)  # an unknown one is refused by TrainingConfig
    objective = args.objective or (family.objective if family else None) or "nsp"
    config = TrainingConfig(
        preset=args.preset, num_layers=args.layers, architecture=args.architecture,
        objective=objective, steps=args.steps,
        batch_size=args.batch_size, max_seq_length=args.max_seq_length,
        vocab_size=args.vocab_size, learning_rate=args.lr, schedule=args.schedule,
        decay_fraction=args.decay_fraction, warmup_fraction=args.warmup_fraction,
        dropout=args.dropout, optimizer=args.optimizer, token_type_init=args.token_type_init,
        balance_next_sentence=args.balance_next_sentence,
        next_sentence_weight=args.next_sentence_weight,
        dynamic_masking=args.dynamic_masking, num_documents=args.num_documents,
        corpus=args.corpus, eval_every=args.eval_every, save_seconds=args.save_seconds,
        save_every=args.save_every, snapshot_every=args.snapshot_every, seed=args.seed,
        workers=_pretrain_workers(args))
    _check_pretraining_memory(config)
    if args.corpus is not None:
        _check_corpus(args.corpus, objective)
    command = _resume_command(args)
    try:
        with _file_access(f"--out {args.out!r} must be a folder you can write to"):
            metrics = pretrain(config, args.out, resume=args.resume,
                               overwrite=args.overwrite, progress=_progress,
                               resume_command=command)
    except KeyboardInterrupt as interruption:
        if launched_rank() > 0:  # MPI: rank 0 says it
            return _exit_status(interruption)
        how = _how_stopped(interruption)
        if getattr(interruption, "source", None):
            how += f" (received by {interruption.source})"
        _progress(f"minibert pretrain: {how}; {_saved_step(args.out, command)}")
        return _exit_status(interruption)
    except WorkerError as error:
        # One line, not a traceback: which worker, how it ended, what is saved.
        what = (error.exit if error.exit else str(error).split(": ", 1)[-1]
                .split("; all workers")[0])
        _progress(f"minibert pretrain: worker {error.rank} {what}; "
                  f"{_saved_step(args.out, command)}")
        return WORKER_DIED
    except Exception:
        if launched_rank() > 0:  # MPI: the error is rank 0's to print (or its own, the same)
            return 2
        raise
    if launched_rank() > 0:  # MPI: rank 0 reports the metrics
        return 0
    _report(metrics, args.out, args.json, "metrics.json")
    return 0


# Exit status of a training run whose worker process died or failed (docs/cli.md).
WORKER_DIED = 3


def _saved_step(out: str, command: str) -> str:
    """What a stopped training run left: the checkpoint's step and the resume command."""
    from minibert.training.pretrain import checkpoint_step

    step = checkpoint_step(out)
    if step is None:
        return "no checkpoint was written yet; start it again to train"
    return f"the checkpoint holds step {step}; resume with: {command}"


def _rounded(value):
    """A number as a person reads it: 4 significant digits (the JSON files keep them all)."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def _report(metrics: dict, out: str, as_json: bool, metrics_file: str) -> None:
    """The closing report of a training command: the metrics, then one line 'wrote OUT'.

    With --json, the metrics exactly as in the metrics file (full precision) and nothing
    else on stdout.
    """
    import json

    if as_json:
        print(json.dumps(metrics, indent=2, sort_keys=True))
        return
    flat = {}
    for key, value in metrics.items():
        if key == "config":  # every setting: in the metrics file
            continue
        if isinstance(value, dict):
            flat.update({f"{key}.{sub}": item for sub, item in value.items()})
        else:
            flat[key] = value
    for key, value in flat.items():
        value = _rounded(value)
        shown = f"{value:,}" if isinstance(value, int) and not isinstance(value, bool) \
            else str(value)
        print(f"  {key:<28} {shown}")
    print(f"wrote {out} (all metrics, full precision: {Path(out) / metrics_file})")


# -- fill-mask -------------------------------------------------------------------------------

def _add_fill_mask(subparsers) -> None:
    parser = _subcommand(subparsers, "fill-mask", _run_fill_mask,
                         "predict the [MASK] tokens of a text with a pretrained model")
    parser.add_argument("text", help='text with one or more "[MASK]", at most the model\'s '
                                     "max_position_embeddings tokens (128 for pretrain's "
                                     "models) with [CLS] and [SEP]")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a folder written by pretrain or save_pretrained (with vocab.txt), "
                             "or tiny-toy, the reference checkpoint shipped with minibert")
    parser.add_argument("--top-k", type=int, default=5,
                        help="answers per [MASK], 1 to the model's vocabulary size")
    _add_allow_partial(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def _run_fill_mask(args) -> int:
    """Print the top-k predictions for every [MASK] in TEXT, in the format of HF's fill-mask
    pipeline (score, token, token_str, sequence)."""
    import warnings

    from minibert.family.registry import family_of_folder
    from minibert.fill_mask import fill_mask
    from minibert.tokenization import load_tokenizer

    _nonempty_text(args.text, "TEXT")
    _bounded(args.top_k, "--top-k", minimum=1)
    folder = _model_folder(args.model, "--model")
    with _reading_model(args, folder):
        tokenizer = load_tokenizer(folder)
        family = family_of_folder(folder)
        if family.masked_lm is None:
            raise CommandError(f"fill-mask needs a model with an MLM head; {args.model!r} "
                               f"holds {family.article}")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # an NSP head in the folder is not needed here
            model = family.masked_lm.from_pretrained(folder)
    if model.loading_info["missing_keys"]:
        raise CommandError(f"{args.model!r} has no MLM head (missing "
                           f"{model.loading_info['missing_keys'][0]}); fill-mask needs one")
    _bounded(args.top_k, "--top-k", 1, model.config.vocab_size)  # the answers there are
    results = fill_mask(model, tokenizer, args.text, top_k=args.top_k)
    per_mask = results if isinstance(results[0], list) else [results]
    _finite_output((answer["score"] for answers in per_mask for answer in answers),
                   "its scores", args.model)
    lines = []
    for index, answers in enumerate(per_mask, 1):
        if len(per_mask) > 1:
            lines.append(f"[MASK] #{index}")
        for answer in answers:
            lines.append(f"  {answer['score']:.4f}  {answer['token_str']:<15} {answer['sequence']}")
    return _print_results(results, lines, args.json)


# -- attention -------------------------------------------------------------------------------

def _add_attention(subparsers) -> None:
    parser = _subcommand(subparsers, "attention", _run_attention,
                         "draw attention heatmaps of a model on a text (PNG, SVG or PDF)")
    parser.add_argument("text", help="sentence A")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a model folder with config.json, model.safetensors, vocab.txt, "
                             "or tiny-toy, the reference checkpoint shipped with minibert")
    parser.add_argument("--pair", metavar="TEXT", help="sentence B")
    parser.add_argument("--view", default=None,
                        help="head, layer, model, token, average, rollout, or saliency (which "
                             "words made the model fill the [MASK] of TEXT; default: head "
                             "when --head is given, else layer)")
    parser.add_argument("--layer", type=int, help="layer index, from 0")
    parser.add_argument("--head", type=int, help="head index, from 0")
    parser.add_argument("--token", help="for --view token: a word of the text or a position; "
                                        "for --view saliency: the word to explain (default: "
                                        "the top prediction)")
    parser.add_argument("--hide-special", default="keep",
                        help="keep, hide or renormalize [CLS]/[SEP] (padding is always dropped)")
    parser.add_argument("--merge-pieces", action="store_true",
                        help="merge WordPiece pieces into words (sum over keys, mean over "
                             "queries)")
    parser.add_argument("--annotate", action="store_true", help="write values in the cells")
    parser.add_argument("--max-seq-length", "--max-length", type=int, default=128,
                        help="longest input in tokens ([CLS] and [SEP] included); a longer "
                             f"one is refused, never cut (3 to {MAX_SEQ_LENGTH}, and at most "
                             "the model's max_position_embeddings)")
    _add_allow_partial(parser)
    parser.add_argument("--dpi", type=int, default=200,
                        help=f"resolution of a PNG, {DPI_RANGE[0]} to {DPI_RANGE[1]}")
    parser.add_argument("-o", "--out", "--output", default="attention.png", metavar="FILE",
                        help="output file, by default in the current folder; the format "
                             "comes from the extension (.png, .svg, .pdf)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the output file if it exists")


def _locks_output(run: Callable[..., int]) -> Callable[..., int]:
    """Run a command that writes -o/--out while holding that output's lock, so that a second
    command writing the same file (or figures folder) is refused rather than replacing the
    first's result without a word (io.fileio.output_lock)."""
    import functools

    @functools.wraps(run)
    def locked(args) -> int:
        from minibert.io.fileio import output_lock

        target = Path(args.out) if args.out.strip() else None
        if target is None or not target.parent.is_dir():
            return run(args)  # nothing there to race for: the command refuses or creates it
        with contextlib.ExitStack() as held:
            with _file_access("-o must name a file in a folder you can write to"):
                held.enter_context(output_lock(target, "-o"))
            return run(args)
    return locked


@_locks_output
def _run_attention(args) -> int:
    # The checks that need no model come first, before matplotlib is imported.
    """Run a model on TEXT (and --pair) and draw its attention: one head, one layer's heads,
    the whole model, one token's view, the head average or attention rollout. Layers and
    heads count from 0."""
    _out_path(args.out, "-o")
    _bounded(args.dpi, "--dpi", *DPI_RANGE)
    _bounded(args.max_seq_length, "--max-seq-length", minimum=3, maximum=MAX_SEQ_LENGTH)
    _nonempty_text(args.text, "TEXT")
    _nonempty_text(args.pair, "--pair")
    _new_output(args.out, args.overwrite)

    import warnings

    import numpy as np

    from minibert import viz
    from minibert.family.registry import family_of_folder
    from minibert.fill_mask import excerpt
    from minibert.heads import forward_inputs
    from minibert.tokenization import load_tokenizer

    suffix = args.out.rsplit(".", 1)[-1].lower() if "." in args.out else ""
    if suffix not in viz.SAVE_FORMATS:
        raise ValueError(f"-o {excerpt(args.out)}: the extension must be one of "
                         f"{', '.join('.' + f for f in viz.SAVE_FORMATS)}")
    view = args.view or ("head" if args.head is not None else "layer")
    if view == "saliency":
        return _run_saliency(args)
    if view not in viz.VIEWS:
        raise ValueError(f"--view must be one of {', '.join((*viz.VIEWS, 'saliency'))}, "
                         f"got {excerpt(view)}")
    if view == "token" and args.token is None:
        raise CommandError("--view token needs --token: a word of the text or a position "
                           "(0 is [CLS])")
    folder = _model_folder(args.model, "--model")
    with _reading_model(args, folder):
        tokenizer = load_tokenizer(folder)
        family = family_of_folder(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pretraining heads are not needed for attention
            model = family.base_model.from_pretrained(folder, **family.base_model_options)
    encoding = tokenizer(args.text, args.pair, return_tensors="np")
    limit = min(args.max_seq_length, model.config.max_position_embeddings)
    length = encoding["input_ids"].shape[1]
    if length > limit:
        which = ("--max-seq-length" if args.max_seq_length <= model.config.max_position_embeddings
                 else "the model's max_position_embeddings")
        what, them = ("TEXT and --pair are", "them") if args.pair else ("TEXT is", "it")
        raise CommandError(f"{what} {length:,} tokens long ([CLS] and [SEP] included), more "
                           f"than {limit} ({which}); shorten {them}: got {excerpt(args.text)}")
    # DistilBERT reads no token types (forward_inputs drops them); the figure still shows
    # the two segments of a pair.
    out = model(**forward_inputs(model, {key: encoding[key] for key in (
        "input_ids", "token_type_ids", "attention_mask")}), output_attentions=True)
    _finite_output(np.concatenate([a.ravel() for a in out.attentions]), "its attention",
                   args.model)
    _bounded(args.layer, "--layer", 0, len(out.attentions) - 1)
    _bounded(args.head, "--head", 0, out.attentions[0].shape[1] - 1)
    tokens = tokenizer.convert_ids_to_tokens(encoding["input_ids"][0].tolist())
    token = args.token
    if token is not None and token.isdigit():
        token = int(token)
    layer = args.layer
    if layer is None and view == "head" or (layer is None and view == "layer"):
        layer = 0
    fig = viz.attention_figure(
        out.attentions, tokens, view=view, layer=layer, head=args.head, token=token,
        token_type_ids=encoding["token_type_ids"][0],
        attention_mask=encoding["attention_mask"][0], hide_special=args.hide_special,
        merge_pieces=args.merge_pieces, annotate=args.annotate)
    with _file_access("-o must name a file in a folder you can write to"):
        path = viz.save_figure(fig, args.out, dpi=args.dpi)
    print(f"wrote {path} ({view} view, {len(tokens)} tokens)")
    return 0


# -- figures ---------------------------------------------------------------------------------

def _add_figures(subparsers) -> None:
    parser = _subcommand(subparsers, "figures", _run_figures,
                         "write a lecture's figures (attention, saliency, curves, board pictures)")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a model folder with vocab.txt, or tiny-toy (the reference)")
    parser.add_argument("-o", "--out", "--output", required=True, metavar="DIR",
                        help="output folder (created if needed)")
    parser.add_argument("--formats", default="png,svg", help="comma-separated: png, svg, pdf")
    parser.add_argument("--dpi", type=int, default=200,
                        help=f"resolution of the PNGs, {DPI_RANGE[0]} to {DPI_RANGE[1]}")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace figures already in the output folder")


@_locks_output
def _run_figures(args) -> int:
    """Draw every figure of a lecture for one model: head, layer, model and rollout views on
    a 'bank' pair, saliency of a fill-mask prediction, the training curves (when the folder
    has history.json) and the board pictures; each as PNG and SVG."""
    _out_path(args.out, "-o")
    _bounded(args.dpi, "--dpi", *DPI_RANGE)
    formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
    allowed = ("png", "svg", "pdf")
    if not formats or any(f not in allowed for f in formats):
        raise CommandError(f"--formats must be a comma-separated choice of "
                           f"{', '.join(allowed)}, got {args.formats[:40]!r}")
    from minibert.viz.lecture_set import write_lecture_figures

    folder = _model_folder(args.model, "--model")
    with _file_access("--model must be a readable model folder"):
        _require_mlm_head(folder, args.model, "figures")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CommandError(f"-o {args.out!r} is a file; expected a folder for the figures")
    existing = sorted(p.name for p in out.glob("*") if p.suffix.lstrip(".") in formats) \
        if out.is_dir() else []
    if existing and not args.overwrite:
        raise CommandError(f"-o {args.out!r} already holds figures ({existing[0]}, ...); pass "
                           f"--overwrite to replace them")
    with _file_access("-o must name a folder you can write to"):
        paths = write_lecture_figures(folder, args.out, formats, dpi=args.dpi)
    print(f"wrote {len(paths)} files to {args.out}")
    return 0


def _new_output(path: str, overwrite: bool) -> None:
    """Refuse to replace an existing output file without --overwrite."""
    target = Path(path)
    if target.is_dir():
        raise CommandError(f"-o {path!r} is a folder; expected a file name such as "
                           f"{str(target / 'attention.png')!r}")
    if target.exists() and not overwrite:
        raise CommandError(f"-o {path!r} already exists; pass --overwrite to replace it")


def _require_bert(folder: str, name: str, command: str) -> None:
    """Refuse a folder of another family (ALBERT, DistilBERT) for a BERT-only command."""
    from minibert.family.registry import family_of_folder

    family = family_of_folder(folder)
    if family.model_type != "bert":
        raise CommandError(f"{command} needs a BERT folder; {name!r} holds {family.article}")


def _require_mlm_head(folder: str, name: str, command: str) -> None:
    """Refuse a BERT folder without trained MLM weights (a classifier, a bare encoder).

    Loading one would draw the head from a seed: confident answers from random weights.
    """
    from minibert.io.checkpoint import checkpoint_summary

    _require_bert(folder, name, command)
    heads = checkpoint_summary(folder)["heads"]
    if "cls.predictions" not in heads:
        shown = ", ".join(heads) or "none"
        raise CommandError(f"{command} needs a model with trained MLM weights "
                           f"(cls.predictions); {name!r} has none (its heads: {shown}), "
                           f"e.g. a fine-tuned classifier; use a pretrain folder or tiny-toy")


def _run_saliency(args) -> int:
    """--view saliency: gradient × input, integrated gradients and rollout for the [MASK]."""
    import warnings

    from minibert import viz
    from minibert.family.registry import family_of_folder
    from minibert.heads import BertForMaskedLM
    from minibert.tokenization import load_tokenizer

    folder = _model_folder(args.model, "--model")
    with _file_access("--model must be a readable model folder"):
        tokenizer = load_tokenizer(folder)
        family = family_of_folder(folder)
        if family.model_type != "bert":
            raise CommandError(f"--view saliency needs a BERT folder; {args.model!r} holds "
                               f"{family.article} (the other views work for it)")
        _require_mlm_head(folder, args.model, "--view saliency")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the next-sentence head is not needed
            model = BertForMaskedLM.from_pretrained(folder)
    fig = viz.fill_mask_saliency_figure(model.eval(), tokenizer, args.text, args.pair,
                                        word=args.token)
    with _file_access("-o must name a file in a folder you can write to"):
        path = viz.save_figure(fig, args.out, dpi=args.dpi)
    print(f"wrote {path} (saliency view)")
    return 0


# -- finetune --------------------------------------------------------------------------------

def _add_finetune(subparsers) -> None:
    from minibert.training.finetune import FinetuneConfig

    defaults = FinetuneConfig()
    parser = _subcommand(subparsers, "finetune", _run_finetune,
                         "fine-tune a pretrained (or fresh) BERT on a toy task")
    parser.add_argument("--task", required=True, help="classify, tag or qa")
    parser.add_argument("--model", metavar="DIR|NAME",
                        help="pretrained folder with vocab.txt (e.g. from pretrain or "
                             "distil; ALBERT and DistilBERT folders for --task classify "
                             "only) or tiny-toy; omit to start a BERT from random weights")
    _add_output_folder(parser)
    parser.add_argument("--train-size", type=int, default=defaults.train_size,
                        help=f"labelled training examples, at most {MAX_EXAMPLES:,}")
    parser.add_argument("--test-size", type=int, default=defaults.test_size,
                        help=f"test examples, at most {MAX_EXAMPLES:,}")
    parser.add_argument("--epochs", type=int, default=defaults.epochs,
                        help=f"passes over the training examples, at most {MAX_EPOCHS:,}")
    parser.add_argument("--min-steps", type=int, default=defaults.min_steps,
                        help="train at least this many steps (more epochs for small sets), "
                             f"at most {MAX_STEPS:,}")
    _add_learning_rate(parser, defaults.learning_rate)
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size,
                        help=f"examples per step, at most {MAX_BATCH_SIZE:,}")
    parser.add_argument("--max-seq-length", "--max-length", type=int, default=None,
                        help="tokens per example (default: 48, or 128 for qa; at most the "
                             "model's max_position_embeddings)")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds the examples, the head, dropout and the batch order")
    _add_training_output_options(parser)
    parser.add_argument("--lora", type=int, default=None, metavar="R",
                        help="train LoRA adapters of rank R on query and value (and the "
                             "head) instead of every weight; merged into the saved model")
    parser.add_argument("--lora-alpha", type=float, default=defaults.lora_alpha,
                        help="LoRA's update is scaled by alpha / R")


def _run_finetune(args) -> int:
    """Fine-tune on a labelled toy task drawn from the toy world: classify (topic of a
    sentence), tag (BIO entities) or qa (extractive questions, some unanswerable). Writes
    OUT/config.json, model.safetensors, vocab.txt, metrics.json and history.json."""
    from minibert.training.finetune import finetune

    _out_path(args.out)
    _bounded(args.train_size, "--train-size", maximum=MAX_EXAMPLES)
    _bounded(args.test_size, "--test-size", maximum=MAX_EXAMPLES)
    _bounded(args.max_seq_length, "--max-seq-length", maximum=MAX_SEQ_LENGTH)
    _bounded(args.seed, "--seed", minimum=0)
    _bounded(args.batch_size, "--batch-size", maximum=MAX_BATCH_SIZE)
    _bounded(args.epochs, "--epochs", maximum=MAX_EPOCHS)
    _bounded(args.min_steps, "--min-steps", maximum=MAX_STEPS)
    model = None if args.model is None else _model_folder(args.model, "--model")
    with _file_access(f"--out {args.out!r} must be a folder you can write to"):
        metrics = finetune(args.task, model, args.out, train_size=args.train_size,
                           seed=args.seed, overwrite=args.overwrite,
                           test_size=args.test_size, epochs=args.epochs,
                           min_steps=args.min_steps, learning_rate=args.lr,
                           batch_size=args.batch_size, max_length=args.max_seq_length,
                           lora_rank=args.lora, lora_alpha=args.lora_alpha,
                           progress=_progress)
    _report(metrics, args.out, args.json, "metrics.json")
    return 0


# -- distil ----------------------------------------------------------------------------------

def _add_distil(subparsers) -> None:
    from minibert.training.distillation import DistillConfig

    defaults = DistillConfig()
    parser = _subcommand(subparsers, "distil", _run_distil,
                         "distil a BERT teacher into a DistilBERT student (Sanh et al. 2019)")
    parser.add_argument("--model", "--teacher", required=True, metavar="DIR|NAME",
                        help="the teacher: a BERT checkpoint folder with its MLM head and "
                             "vocab.txt, or tiny-toy (the reference checkpoint)")
    _add_output_folder(parser)
    parser.add_argument("--steps", type=int, default=defaults.steps,
                        help=f"optimizer steps, at most {MAX_STEPS:,}")
    parser.add_argument("--batch-size", type=int, default=defaults.batch_size,
                        help=f"sequences per step, at most {MAX_BATCH_SIZE:,}")
    parser.add_argument("--max-seq-length", type=int, default=defaults.max_seq_length,
                        help="tokens per sequence, at most the teacher's "
                             "max_position_embeddings")
    parser.add_argument("--temperature", type=float, default=defaults.temperature,
                        help=f"T of the soft targets (default {defaults.temperature:g})")
    parser.add_argument("--alpha-ce", type=float, default=defaults.alpha_ce,
                        help=f"weight of the soft-target loss (default {defaults.alpha_ce:g})")
    parser.add_argument("--alpha-mlm", type=float, default=defaults.alpha_mlm,
                        help=f"weight of the MLM loss (default {defaults.alpha_mlm:g})")
    parser.add_argument("--alpha-cos", type=float, default=defaults.alpha_cos,
                        help=f"weight of the cosine loss (default {defaults.alpha_cos:g})")
    parser.add_argument("--restrict-ce-to-mask", action="store_true",
                        help="soft-target loss at the MLM targets only (default: every real "
                             "token)")
    parser.add_argument("--student-layers", type=int, default=None, metavar="N",
                        help="student depth (default half the teacher's)")
    parser.add_argument("--teacher-layers", default=None, metavar="I,J,...",
                        help="teacher layer copied into each student layer (default every "
                             "other: 0,2,4,...)")
    _add_learning_rate(parser, defaults.learning_rate)
    parser.add_argument("--dropout", type=float, default=defaults.dropout,
                        help="the student's dropout")
    parser.add_argument("--num-documents", type=int, default=defaults.num_documents,
                        help=f"toy-corpus training documents, at most {MAX_DOCUMENTS:,}")
    parser.add_argument("--seed", type=int, default=defaults.seed,
                        help="seeds the corpus, the masks, the batches and dropout")
    _add_training_output_options(parser)


def _layer_list(text: str | None, argument: str) -> tuple[int, ...] | None:
    """"0,2,4" -> (0, 2, 4); a clear error for anything else."""
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise CommandError(f"{argument} must be comma-separated layer indices such as 0,2,4, "
                           f"got {text[:60]!r}")
    return tuple(int(part) for part in parts)


def _run_distil(args) -> int:
    """Initialise a DistilBERT from a BERT MLM checkpoint (every other layer, embeddings and
    MLM head copied) and train it on the toy corpus's MLM batches with alpha_ce * T^2 KL +
    alpha_mlm * MLM + alpha_cos * cosine. Writes OUT/config.json, model.safetensors,
    vocab.txt, metrics.json, history.json."""
    from minibert.config import BertConfig
    from minibert.training.distillation import DistillConfig, distil

    _out_path(args.out)
    _bounded(args.steps, "--steps", maximum=MAX_STEPS)
    _bounded(args.max_seq_length, "--max-seq-length", maximum=MAX_SEQ_LENGTH)
    _bounded(args.seed, "--seed", minimum=0)
    _bounded(args.batch_size, "--batch-size", maximum=MAX_BATCH_SIZE)
    _bounded(args.num_documents, "--num-documents", maximum=MAX_DOCUMENTS)
    config = DistillConfig(
        steps=args.steps, batch_size=args.batch_size, max_seq_length=args.max_seq_length,
        temperature=args.temperature, alpha_ce=args.alpha_ce, alpha_mlm=args.alpha_mlm,
        alpha_cos=args.alpha_cos, restrict_ce_to_mask=args.restrict_ce_to_mask,
        student_layers=args.student_layers,
        teacher_layers=_layer_list(args.teacher_layers, "--teacher-layers"),
        learning_rate=args.lr, dropout=args.dropout, num_documents=args.num_documents,
        seed=args.seed)
    # The teacher is named as the user named it (--teacher is the old spelling of --model).
    argument = "--teacher" if "--teacher" in args.argv else "--model"
    teacher = _model_folder(args.model, argument)
    with _file_access(f"{argument} must be a readable model folder"):
        _require_bert(teacher, args.model, f"distil ({argument}, the teacher)")
        depth = BertConfig.from_json_file(Path(teacher) / "config.json").num_hidden_layers
    _bounded(args.student_layers, "--student-layers", 1, depth)
    try:
        with _file_access(f"--out {args.out!r} must be a folder you can write to"):
            metrics = distil(config, teacher, args.out, overwrite=args.overwrite,
                             progress=_progress)
    except (ValueError, FileNotFoundError) as error:  # the library names the teacher --teacher
        raise CommandError(_one_line(error).replace("--teacher ", f"{argument} ")) from None
    _report(metrics, args.out, args.json, "metrics.json")
    return 0


# -- embed, search ---------------------------------------------------------------------------

def _add_sentence_model_arguments(parser) -> None:
    """--model and --max-seq-length, as embed and search both read them."""
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a BERT folder with vocab.txt (e.g. all-MiniLM-L6-v2's, or "
                             "tiny-toy)")
    parser.add_argument("--max-seq-length", type=int, default=None,
                        help=f"tokens per text after truncation, at most {MAX_SEQ_LENGTH} and "
                             f"the model's max_position_embeddings (default: 256, or the "
                             f"model's max_position_embeddings if fewer)")
    _add_allow_partial(parser)


def _add_embed(subparsers) -> None:
    parser = _subcommand(subparsers, "embed", _run_embed,
                         "sentence embeddings: one unit vector per text (mean pooling, normalised)")
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="the texts to embed")
    _add_sentence_model_arguments(parser)
    parser.add_argument("--json", action="store_true",
                        help="print JSON: a list of {text, embedding}")


def _sentence_model(args, texts: list[str]):
    """The model and tokenizer of embed and search, after the checks of their options:
    no empty text, --max-seq-length within 512 and the model's positions (set to its
    default when not given)."""
    from minibert.sentence import load_sentence_model

    for index, text in enumerate(texts, 1):
        _nonempty_text(text, f"TEXT {index}" if len(texts) > 1 else "TEXT")
    _bounded(args.max_seq_length, "--max-seq-length", minimum=3, maximum=MAX_SEQ_LENGTH)
    folder = _model_folder(args.model, "--model")
    with _reading_model(args, folder):
        model, tokenizer = load_sentence_model(folder)
    positions = model.config.max_position_embeddings
    if args.max_seq_length is None:
        args.max_seq_length = min(256, positions)
    elif args.max_seq_length > positions:
        raise CommandError(f"--max-seq-length {args.max_seq_length} is more than the model "
                           f"{args.model!r} reads (max_position_embeddings {positions}); give "
                           f"at most {positions}")
    return model, tokenizer


def _run_embed(args) -> int:
    """Embed each TEXT as all-MiniLM-L6-v2 does (the mean of the last hidden states over the
    real tokens, scaled to length 1) and print the vectors."""
    import json

    from minibert.sentence import sentence_embeddings

    model, tokenizer = _sentence_model(args, args.texts)
    vectors = sentence_embeddings(model, tokenizer, args.texts, max_length=args.max_seq_length)
    _finite_output(vectors.ravel(), "the embeddings", args.model)
    if args.json:
        print(json.dumps([{"text": text, "embedding": [round(float(v), 7) for v in vector]}
                          for text, vector in zip(args.texts, vectors, strict=True)]))
        return 0
    for text, vector in zip(args.texts, vectors, strict=True):
        shown = " ".join(f"{v:+.4f}" for v in vector[:6])
        print(f"{text[:40]!r:<44} [{shown} ...] ({vector.size} numbers)")
    return 0


def _add_search(subparsers) -> None:
    parser = _subcommand(subparsers, "search", _run_search,
                         "rank texts by cosine similarity to a query (sentence embeddings)")
    parser.add_argument("texts", nargs="+", metavar="TEXT", help="the texts to rank")
    parser.add_argument("--query", required=True, help="the text to search for")
    _add_sentence_model_arguments(parser)
    parser.add_argument("--json", action="store_true",
                        help="print JSON: a list of {rank, score, text}, best first")


def _run_search(args) -> int:
    """Embed --query and every TEXT, and print the texts best first with their cosine
    similarity to the query."""
    from minibert.sentence import rank, sentence_embeddings

    _nonempty_text(args.query, "--query")
    model, tokenizer = _sentence_model(args, args.texts)
    vectors = sentence_embeddings(model, tokenizer, [args.query, *args.texts],
                                  max_length=args.max_seq_length)
    _finite_output(vectors.ravel(), "the embeddings", args.model)
    order, scores = rank(vectors[0], vectors[1:])
    results = [{"rank": place, "score": round(float(score), 6), "text": args.texts[index]}
               for place, (index, score) in enumerate(zip(order, scores, strict=True), 1)]
    lines = [f"{result['rank']:>3}  {result['score']:+.4f}  {result['text']}"
             for result in results]
    return _print_results(results, lines, args.json)


# -- explore ---------------------------------------------------------------------------------

def _add_explore(subparsers) -> None:
    parser = _subcommand(subparsers, "explore", _run_explore,
                         "write an interactive, self-contained HTML page of a model's attention")
    parser.add_argument("text", help="sentence A (put [MASK] in it for the MLM backward view)")
    parser.add_argument("pair", nargs="?", default=None, help="sentence B (optional)")
    parser.add_argument("--model", required=True, metavar="DIR|NAME",
                        help="a model folder (BERT, ALBERT, DistilBERT, MiniLM) or tiny-toy, "
                             "the reference checkpoint shipped with minibert")
    parser.add_argument("--backward", default="auto",
                        help="the output the backward view explains: mlm (the best answer at "
                             "the first [MASK]), nsp, none, or auto (mlm with a [MASK], else "
                             "nsp for a pair, when the model has that head)")
    parser.add_argument("--timeline", action="store_true",
                        help="add the training timeline recorded in the model folder by "
                             "pretrain --snapshot-every K")
    parser.add_argument("--neuron-layers", metavar="L,L,...",
                        help="layers the neuron view carries (default: as many as fit in "
                             "1.5 MB, all of them for small models)")
    parser.add_argument("-o", "--out", default="explorer.html", metavar="FILE",
                        help="the page to write (.html)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the output file if it exists")
    _add_allow_partial(parser)


@_locks_output
def _run_explore(args) -> int:
    """Run a model on TEXT (and PAIR) and write one HTML page that works offline: head view,
    model view with head-job scores, neuron view (q, k, q.k, softmax), backward view
    (gradients of an output with respect to every attention probability), aggregation and,
    with --timeline, the attention snapshots of training. Layers and heads count from 0."""
    from minibert.viz.explorer import explore, load_model

    _out_path(args.out, "-o")
    if not args.out.lower().endswith((".html", ".htm")):
        raise CommandError(f"-o {args.out!r}: the page is HTML; give a name ending in .html")
    _nonempty_text(args.text, "TEXT")
    _nonempty_text(args.pair, "PAIR")
    _new_output(args.out, args.overwrite)
    neuron_layers = _layer_list(args.neuron_layers, "--neuron-layers")
    folder = _model_folder(args.model, "--model")
    with _reading_model(args, folder):
        model, tokenizer = load_model(folder)
    length, limit = len(tokenizer(args.text, args.pair)["input_ids"]), \
        model.config.max_position_embeddings
    if length > limit:
        from minibert.fill_mask import excerpt

        what, them = ("TEXT and PAIR are", "them") if args.pair else ("TEXT is", "it")
        raise CommandError(f"{what} {length:,} tokens long ([CLS] and [SEP] included), more "
                           f"than the {limit} the model reads (max_position_embeddings); "
                           f"shorten {them}: got {excerpt(args.text)}")
    page = explore(model, tokenizer, args.text, args.pair, backward=args.backward,
                   timeline=folder if args.timeline else None, neuron_layers=neuron_layers)
    with _file_access("-o must name a file in a folder you can write to"):
        path = page.save(args.out)
    print(f"wrote {path} ({path.stat().st_size:,} bytes, {len(page.data['tokens'])} tokens; "
          f"open it in a browser)")
    return 0


# -- assignment ------------------------------------------------------------------------------

def _add_assignment(subparsers) -> None:
    parser = _subcommand(subparsers, "assignment", _run_assignment,
                         "write the graded backward-pass assignment or the bug lab; grade it")
    actions = parser.add_subparsers(dest="action", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create", help="write a student workspace (or the instructor's tree)",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    create.add_argument("dir", metavar="DIR", help="the folder to write")
    create.add_argument("--instructor", action="store_true",
                        help="write DIR/student (to hand out), DIR/solutions and DIR/hidden "
                             "(keep these two private)")
    create.add_argument("--lab", choices=["bugs"], default=None,
                        help="write the bug-hunting lab instead of the backward-pass tasks")
    create.add_argument("--pdf", action="store_true",
                        help="also draw the student's README (the handout) as README.pdf")
    create.add_argument("--overwrite", action="store_true",
                        help="replace a workspace that exists at DIR")
    create.set_defaults(handler=_run_assignment)
    grade = actions.add_parser(
        "grade", help="grade a workspace: a table of tasks, points and the first failing check",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    grade.add_argument("dir", metavar="DIR", help="the student's workspace")
    _add_grading_options(grade)
    grade.add_argument("--json", action="store_true", help="print the report as JSON")
    grade.add_argument("--gradescope", metavar="FILE", default=None,
                       help="also write Gradescope's results.json to FILE")
    grade.set_defaults(handler=_run_assignment)
    grade_all = actions.add_parser(
        "grade-all", help="grade a folder of submissions (one subfolder or .zip per student) "
                          "into one CSV", formatter_class=argparse.ArgumentDefaultsHelpFormatter)
    grade_all.add_argument("submissions", metavar="SUBMISSIONS",
                           help="the folder of submissions, one subfolder or .zip per student")
    _add_grading_options(grade_all)
    grade_all.add_argument("-o", "--out", default="grades.csv", metavar="FILE.csv",
                           help="the CSV to write: one row per submission")
    grade_all.add_argument("--overwrite", action="store_true", help="replace an existing CSV")
    grade_all.set_defaults(handler=_run_assignment)


def _add_grading_options(parser) -> None:
    parser.add_argument("--hidden", metavar="DIR", default=None,
                        help="the instructor's hidden/ folder: add the hidden tests")
    parser.add_argument("--time-limit", type=float, default=60.0, metavar="SECONDS",
                        help="time limit of each task's checks, counted after its file loaded")
    parser.add_argument("--import-limit", type=float, default=120.0, metavar="SECONDS",
                        help="time limit to load each task's file (its imports)")
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="how many tasks are graded at once")


def _run_assignment(args) -> int:
    """create DIR writes a student workspace (one stub per task, public tests, the handout);
    grade DIR grades it task by task, each in its own process with a time limit;
    grade-all SUBMISSIONS --hidden DIR grades a class and writes one CSV. See
    docs/assignments.md."""
    from minibert.assignment import create_workspace, grade, grade_all

    if args.action == "create":
        try:
            path = create_workspace(args.dir, instructor=args.instructor, lab=args.lab,
                                    overwrite=args.overwrite, pdf=args.pdf)
        except FileExistsError as error:
            raise CommandError(_os_reason(error)) from None  # in words, never "[Errno 17]"
        what = "the instructor's tree" if args.instructor else "a student workspace"
        print(f"wrote {what} to {path}")
        return 0
    for option, value in (("--time-limit", args.time_limit),
                          ("--import-limit", args.import_limit)):
        if not value > 0:
            raise CommandError(f"{option} {value:g} must be > 0 seconds")
    if args.jobs < 1:
        raise CommandError(f"--jobs {args.jobs} must be >= 1")
    if args.action == "grade":
        if args.gradescope is not None:
            _out_path(args.gradescope, "--gradescope")
        report = grade(args.dir, hidden=args.hidden, time_limit=args.time_limit,
                       jobs=args.jobs, import_limit=args.import_limit)
        if args.gradescope is not None:
            from minibert.io.fileio import atomic_write_json

            with _file_access("--gradescope must name a file in a folder you can write to"):
                atomic_write_json(args.gradescope, report.to_gradescope())
        print(report.to_json() if args.json else report.table())
        return 0
    _out_path(args.out, "-o")
    if Path(args.out).exists() and not args.overwrite:
        raise CommandError(f"-o {args.out!r} exists; pass --overwrite to replace it")
    started = time.monotonic()

    def progress(done: int, total: int, name: str, report) -> None:
        _progress(f"[{done}/{total}] {name}: {report.total}/{report.max_total}")

    with _file_access("-o must name a file in a folder you can write to"):
        graded = grade_all(args.submissions, hidden=args.hidden, out=args.out,
                           time_limit=args.time_limit, jobs=args.jobs,
                           import_limit=args.import_limit, progress=progress)
    flagged = sum(1 for _, report, _ in graded if report is not None and report.flags)
    unusable = sum(1 for _, report, _ in graded if report is None)
    print(f"wrote {args.out}: {len(graded)} submissions graded in "
          f"{time.monotonic() - started:.1f} s ({flagged} flagged, {unusable} without task "
          f"files)")
    return 0


def _add_slides(subparsers) -> None:
    parser = _subcommand(subparsers, "slides", _run_slides,
                         "write the 50-minute lecture as a 16:9 PDF deck")
    parser.add_argument("-o", "--out", required=True, metavar="FILE.pdf", help="the PDF to write")
    parser.add_argument("--handout", default=None, metavar="FILE.pdf",
                        help="also write the handout (fine-tuning, published results, "
                             "homework) to this PDF")
    parser.add_argument("--model", default="tiny-toy", metavar="DIR",
                        help="a model folder with vocab.txt (history.json for the curves), or "
                             "tiny-toy (the reference)")
    parser.add_argument("--overwrite", action="store_true", help="replace an existing PDF")


@_locks_output
def _run_slides(args) -> int:
    """Draw the lecture of docs/lecture_50min.md as one PDF, a 1280 x 720 page (16:9) per
    slide, text at least 20 pt, with live figures from a model (fill-mask, the heads with
    jobs, training curves, saliency, a gradient check); --handout writes fine-tuning,
    Devlin et al. (2019)'s published results and the homework to a second PDF."""
    from minibert.viz.slides import write_slides

    _out_path(args.out, "-o")
    if not args.out.lower().endswith(".pdf"):
        raise CommandError(f"-o {args.out!r} must end in .pdf")
    if Path(args.out).exists() and not args.overwrite:
        raise CommandError(f"-o {args.out!r} exists; pass --overwrite to replace it")
    if args.handout is not None:
        _out_path(args.handout, "--handout")
        if not args.handout.lower().endswith(".pdf"):
            raise CommandError(f"--handout {args.handout!r} must end in .pdf")
        if Path(args.handout).exists() and not args.overwrite:
            raise CommandError(f"--handout {args.handout!r} exists; pass --overwrite to "
                               f"replace it")
        if Path(args.handout).resolve() == Path(args.out).resolve():
            raise CommandError(f"--handout {args.handout!r} must be another file than -o")
    folder = _model_folder(args.model, "--model")
    with _file_access("--model must be a readable model folder"):
        _require_mlm_head(folder, args.model, "slides")
    path = write_slides(args.out, model=folder, overwrite=args.overwrite, handout=args.handout)
    print(f"wrote {path}" + (f" and {args.handout}" if args.handout else ""))
    return 0


_COMMANDS: list[Callable] = [_add_gradcheck, _add_pretrain, _add_fill_mask, _add_attention,
                             _add_figures, _add_finetune, _add_info, _add_distil,
                             _add_embed, _add_search, _add_explore,
                             _add_assignment, _add_slides]


def build_parser() -> argparse.ArgumentParser:
    from minibert import __version__

    parser = _Parser(prog="minibert", description="BERT rebuilt in pure NumPy for teaching.")
    parser.add_argument("--version", action="version", version=f"minibert {__version__}")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(subparsers)
    return parser


def _program(argv: list[str] | None) -> list[str]:
    """How this process was started, as a command a user can type again."""
    if argv is not None:
        return ["minibert"]
    if Path(sys.argv[0]).name == "__main__.py":
        return [sys.executable, "-m", "minibert"]
    return [sys.argv[0]]


def _one_line(error: BaseException, options: frozenset = frozenset({"--allow-partial"})
              ) -> str:
    """The message of ``error`` in one line, whole (a long one is wrapped by ``_wrapped``
    on a terminal, never cut: its end holds the advice). ``options``: the command's, so
    that the advice names only options it has."""
    from minibert.io.checkpoint import ConfigMismatch

    if isinstance(error, ConfigMismatch):
        if not error.partial:
            return error.reason()
        return error.reason() + ("; pass --allow-partial to load only what config.json "
                                 "describes" if "--allow-partial" in options else
                                 "; correct config.json (or use a command with "
                                 "--allow-partial, such as fill-mask)")
    if isinstance(error, MemoryError):
        reason = str(error).rstrip(".") or "an allocation failed"
        return (f"out of memory ({reason[:1].lower() + reason[1:]}); "
                f"choose smaller sizes (--batch-size, --max-seq-length, --preset, ...)")
    text = _os_reason(error) if isinstance(error, OSError) else str(error)
    lines = text.strip().splitlines()
    return " ".join(line.strip() for line in lines) if lines else repr(error)


@contextlib.contextmanager
def _warnings_as_lines(command: str) -> Iterator[None]:
    """Python warnings as one line each, 'minibert CMD: warning: ...' (not a file name, a line
    number and a line of source, which mean nothing to a user of the command)."""
    import warnings

    def show(message, category, filename, lineno, file=None, line=None):
        print(_wrapped(f"minibert {command}: warning: {message}"), file=sys.stderr)

    with warnings.catch_warnings():
        warnings.showwarning = show
        yield


# Library arguments whose option is not their name with dashes.
_OPTION_OF_ARGUMENT = {"learning_rate": "--lr", "num_layers": "--layers",
                       "max_length": "--max-seq-length", "lora_rank": "--lora", "r": "--lora"}


def _command_options(parser, command: str) -> frozenset:
    """Every option string of the subcommand ``command`` ("--model", "-o", ...)."""
    commands = parser._subparsers._group_actions[0].choices if parser._subparsers else {}
    return frozenset(flag for action in getattr(commands.get(command), "_actions", ())
                     for flag in action.option_strings)


def _option_names(message: str, parser, command: str) -> str:
    """A message that starts with a library argument ("max_length=300 is longer ...",
    "dropout must be ...") names the command's option instead ("--max-seq-length 300 ...")."""
    import re

    found = re.match(r"([a-z][a-z0-9_]*)(=| )", message)
    if not found:
        return message
    name = found.group(1)
    option = _OPTION_OF_ARGUMENT.get(name, "--" + name.replace("_", "-"))
    commands = parser._subparsers._group_actions[0].choices if parser._subparsers else {}
    positional = {action.dest: action.metavar or action.dest.upper()
                  for action in getattr(commands.get(command), "_actions", ())
                  if not action.option_strings}
    if name in positional:  # fill-mask's "text must contain '[MASK]'": TEXT
        option = positional[name]
    elif message.startswith(f"{name} ({option}) "):  # "batch_size (--batch-size) 64 is ..."
        return option + message[len(f"{name} ({option})"):]
    elif option not in _command_options(parser, command) or option in message:
        return message
    return option + " " + message[found.end(1):].removeprefix("=").lstrip()


def _wrapped(message: str) -> str:
    """``message`` for stderr: wrapped at word breaks on a terminal, one line elsewhere."""
    from minibert.checks import wrap_for_terminal

    return wrap_for_terminal(message, sys.stderr)


class Stopped(KeyboardInterrupt):
    """SIGTERM or SIGHUP: handled as Ctrl-C is (say what was saved, how to go on)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


def _raise_stopped(signum, frame):
    raise Stopped(signum)


def _how_stopped(interruption: KeyboardInterrupt) -> str:
    """'interrupted' for Ctrl-C, 'stopped by SIGTERM' (or SIGHUP) for the others."""
    signum = getattr(interruption, "signum", signal.SIGINT)
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def _exit_status(interruption: KeyboardInterrupt) -> int:
    """128 + the signal's number, as a shell reports a process a signal ended."""
    return 128 + getattr(interruption, "signum", signal.SIGINT)


@contextlib.contextmanager
def _stop_signals() -> Iterator[None]:
    """SIGTERM and SIGHUP raise Stopped, so that they end a command as Ctrl-C does."""
    names = [name for name in ("SIGTERM", "SIGHUP") if hasattr(signal, name)]
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {name: signal.signal(getattr(signal, name), _raise_stopped) for name in names}
    try:
        yield
    finally:
        for name, handler in previous.items():
            signal.signal(getattr(signal, name), handler)


def main(argv: list[str] | None = None) -> int:
    from minibert.training.loop import TrainingDiverged

    arguments = list(sys.argv[1:] if argv is None else argv)
    try:
        _check_text_arguments(arguments)
    except CommandError as error:
        print(f"minibert: error: {error}", file=sys.stderr)
        return 2
    parser = build_parser()
    args = parser.parse_args(arguments)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    args.program, args.argv = _program(argv), arguments
    try:
        with _stop_signals(), _warnings_as_lines(args.command):
            status = int(args.handler(args) or 0)
            sys.stdout.flush()
        return status
    except BrokenPipeError:
        # The reader went away (`minibert fill-mask --json ... | head -1`): what it wanted
        # was printed; say nothing more, and keep Python from complaining at exit.
        with contextlib.suppress(OSError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 128 + 13  # as a process that SIGPIPE ended
    except KeyboardInterrupt as interruption:
        print(f"minibert {args.command}: {_how_stopped(interruption)}", file=sys.stderr)
        return _exit_status(interruption)
    except (CommandError, TrainingDiverged, MemoryError, *USER_ERRORS) as error:
        message = _option_names(_one_line(error, _command_options(parser, args.command)),
                                parser, args.command)
        print(_wrapped(f"minibert {args.command}: error: {message}"), file=sys.stderr)
        return 2
