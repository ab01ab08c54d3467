"""The command line: what every command shares: the parser's style, the bounds of every option,
model folders, output paths, progress lines and the one-line errors.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import signal
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

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


class Parser(argparse.ArgumentParser):
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


def bounded(value, argument: str, minimum=None, maximum=None):
    """``value`` if it lies in [minimum, maximum]; else a one-line error naming ``argument``."""
    if value is None:
        return value
    if (minimum is not None and value < minimum) or (maximum is not None and value > maximum):
        allowed = (f"{minimum:,} to {maximum:,}" if minimum is not None and maximum is not None
                   else f">= {minimum:,}" if minimum is not None else f"<= {maximum:,}")
        raise CommandError(f"{argument} must be {allowed}, got {value:,}")
    return value


def finite_output(values, what: str, model: str) -> None:
    """Refuse to print NaN or infinite results (weights loaded with --allow-partial that hold
    NaN, or an overflow): a number that is not one is no answer."""
    import numpy as np

    values = np.fromiter(values, dtype=np.float64) if not isinstance(values, np.ndarray) \
        else values
    if values.size and not np.isfinite(values).all():
        raise CommandError(f"the model {model!r} gave NaN or infinite numbers in {what}; its "
                           f"weights are broken (a diverged run?), so there is no answer")


def nonempty_text(text: str | None, argument: str) -> str | None:
    """``text`` unless it is empty or blank: every command refuses an empty text alike (a
    model would read [CLS] [SEP] alone, and answer as confidently as for a sentence)."""
    if text is not None and not text.strip():
        raise CommandError(f"{argument} {text!r} is empty; give a sentence")
    return text


@contextlib.contextmanager
def reading_model(args, folder: str) -> Iterator[None]:
    """Load the model of --model within: operating-system errors in one line, and with
    --allow-partial a folder whose config.json names fewer layers than its weights hold is
    loaded, with one line saying so (the answers are not those of the saved model)."""
    from minibert.io.checkpoint import checkpoint_summary, partial_loading

    with file_access("--model must be a readable model folder"), \
            partial_loading(args.allow_partial):
        yield
        mismatches = checkpoint_summary(folder)["mismatches"] if args.allow_partial else []
    if mismatches:
        progress_line(f"minibert {args.command}: warning: --allow-partial: config.json says "
                  f"{'; and '.join(mismatches)}; the answers come from the layers it names")


def add_allow_partial(parser) -> None:
    """--allow-partial: load a model whose config.json names fewer blocks than its weights."""
    parser.add_argument("--allow-partial", action="store_true",
                        help="load a folder whose config.json names fewer layers than its "
                             "weights hold, using only those layers (refused by default: "
                             "the answers would be another model's)")


def out_path(path: str, argument: str = "--out") -> str:
    """``path`` unless it is empty (an empty --out would write into the current folder)."""
    if not path.strip():
        raise CommandError(f"{argument} {path!r} is empty; give a folder or file name")
    return path


def progress_line(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def os_reason(error: OSError) -> str:
    """One line for an operating-system error: the path and what went wrong, in words."""
    from minibert.checks import os_error_line

    return os_error_line(error)


@contextlib.contextmanager
def file_access(expected: str) -> Iterator[None]:
    """Turn an operating-system error into one line ending in what the command expected."""
    try:
        yield
    except OSError as error:
        if error.errno is None:
            raise
        raise CommandError(f"{os_reason(error)}; {expected}") from None


def model_folder(path: str, argument: str) -> str:
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
                       f"model.safetensors and vocab.txt (or tokenizer.json; written by "
                       f"pretrain or save_pretrained), or a reference checkpoint: "
                       f"{', '.join(sorted(REFERENCES))}")


def _check_model_files(folder: Path, argument: str) -> None:
    """Refuse a model folder whose files cannot be what they should, naming the file.

    An interrupted pretraining run (a checkpoint, no model yet), a config.json or
    model.safetensors that is a folder, a vocab.txt whose length differs from the model's
    vocab_size (the embedding table's rows: a longer vocabulary gives ids the table lacks,
    a shorter one cannot spell the model's predictions). Anything else is left to the
    loader's own messages.
    """
    from minibert.io.checkpoint import CONFIG_NAME, VOCAB_NAME, WEIGHTS_NAME
    from minibert.io.fileio import open_to_read, read_json_object, running_job
    from minibert.tokenization.tokenizer import load_vocab

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
    for name in (CONFIG_NAME, VOCAB_NAME, "tokenizer.json", "tokenizer_config.json"):
        try:  # /dev/zero, a FIFO: refused here in one line, never read
            open_to_read(folder / name, name).close()
        except ValueError as error:
            raise CommandError(f"{argument}: {error}") from None
        except OSError:
            continue  # missing or unreadable: the loader says which and why
    try:
        vocab_size = read_json_object(folder / CONFIG_NAME, CONFIG_NAME)["vocab_size"]
        tokens = len(load_vocab(folder / VOCAB_NAME))
    except (OSError, ValueError, KeyError, TypeError):
        return  # missing or unreadable: the loader says which and why
    if isinstance(vocab_size, int) and tokens != vocab_size:
        raise CommandError(f"{argument}: {str(folder / VOCAB_NAME)!r} has {tokens:,} tokens "
                           f"but {CONFIG_NAME} says vocab_size {vocab_size:,} (the rows of "
                           f"the embedding table); they must be equal: was vocab.txt "
                           f"replaced by another model's?")


def input_file(path: str, argument: str, expected: str) -> str:
    """``path`` if it is a readable file; otherwise a clear error."""
    target = Path(path)
    if target.is_dir():
        raise CommandError(f"{argument} {path!r} is a folder; expected {expected}")
    if not target.exists():
        raise CommandError(f"{argument} {path!r} does not exist; expected {expected}")
    from minibert.io.fileio import open_to_read

    with file_access(f"{argument} expected {expected}"):
        try:
            with open_to_read(target, argument):  # a device or FIFO is refused, not read
                pass
        except ValueError as error:
            raise CommandError(f"{error}; expected {expected}") from None
    return path


def check_text_arguments(argv: list[str]) -> None:
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


def add_command(subparsers, name: str, run: Callable[..., int],
                summary: str) -> argparse.ArgumentParser:
    """Add the subcommand ``name``: ``summary`` in the list of commands, the docstring of
    ``run`` (the function that carries it out) as its --help description."""
    parser = subparsers.add_parser(name, help=summary, description=run.__doc__)
    parser.set_defaults(handler=run)
    return parser


def print_results(results: list, lines: list[str], as_json: bool) -> int:
    """Print ``results`` as indented JSON under --json, else ``lines`` one by one; the exit
    code 0."""
    if as_json:
        import json

        print(json.dumps(results, indent=2))
    else:
        for line in lines:
            print(line)
    return 0


def add_output_folder(parser) -> None:
    """-o/--out DIR, the folder a training command (pretrain, finetune, distil) writes."""
    parser.add_argument("-o", "--out", required=True, metavar="DIR",
                        help="output folder (created; locked while the run writes into it)")


def add_bounded_int(parser, option: str, default: int, what: str, maximum: int) -> None:
    """An int option whose help says what it counts and its bound, "WHAT, at most MAXIMUM"
    (the command checks the bound with ``bounded``)."""
    parser.add_argument(option, type=int, default=default, help=f"{what}, at most {maximum:,}")


def add_learning_rate(parser, default: float) -> None:
    """--lr, the peak of a training command's learning-rate schedule."""
    parser.add_argument("--lr", type=float, default=default, help="peak learning rate")


def add_training_output_options(parser, metrics: str = "the metrics") -> None:
    """--overwrite and --json, as the training commands (pretrain, finetune, distil) read them."""
    parser.add_argument("--overwrite", action="store_true",
                        help="replace a model already in --out (only the files minibert wrote "
                             "there are removed)")
    parser.add_argument("--json", action="store_true",
                        help=f"print {metrics} as JSON (as in OUT/metrics.json)")


def _rounded(value):
    """A number as a person reads it: 4 significant digits (the JSON files keep them all)."""
    if isinstance(value, float):
        return float(f"{value:.4g}")
    if isinstance(value, dict):
        return {key: _rounded(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_rounded(item) for item in value]
    return value


def print_metrics(metrics: dict, out: str, as_json: bool, metrics_file: str) -> None:
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


def locks_output(run: Callable[..., int]) -> Callable[..., int]:
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
            with file_access("-o must name a file in a folder you can write to"):
                held.enter_context(output_lock(target, "-o"))
            return run(args)
    return locked


def new_output(path: str, overwrite: bool) -> None:
    """Refuse to replace an existing output file without --overwrite."""
    from minibert.io.fileio import writable_destination

    target = Path(path)
    if target.is_dir():
        raise CommandError(f"-o {path!r} is a folder; expected a file name such as "
                           f"{str(target / 'attention.png')!r}")
    with file_access("-o must name a file (or a stream such as /dev/stdout)"):
        if writable_destination(target) is None:
            return  # a stream is written into, nothing is replaced
    if target.exists() and not overwrite:
        raise CommandError(f"-o {path!r} already exists; pass --overwrite to replace it")


def require_bert(folder: str, name: str, command: str, note: str = "") -> None:
    """Refuse a folder of a family that BERT's own classes do not load (ALBERT, DistilBERT,
    ...) for a command written on those classes; ``note`` ends the message."""
    from minibert.family.registry import family_of_folder

    family = family_of_folder(folder)
    if not family.bert_classes:
        raise CommandError(f"{command} needs a BERT folder; {name!r} holds {family.article}"
                           f"{note}")


def require_mlm_head(folder: str, name: str, command: str) -> None:
    """Refuse a BERT folder without trained MLM weights (a classifier, a bare encoder).

    Loading one would draw the head from a seed: confident answers from random weights.
    """
    from minibert.io.checkpoint import checkpoint_summary

    require_bert(folder, name, command)
    heads = checkpoint_summary(folder)["heads"]
    if "cls.predictions" not in heads:
        shown = ", ".join(heads) or "none"
        raise CommandError(f"{command} needs a model with trained MLM weights "
                           f"(cls.predictions); {name!r} has none (its heads: {shown}), "
                           f"e.g. a fine-tuned classifier; use a pretrain folder or tiny-toy")


def layer_list(text: str | None, argument: str) -> tuple[int, ...] | None:
    """"0,2,4" -> (0, 2, 4); a clear error for anything else."""
    if text is None:
        return None
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise CommandError(f"{argument} must be comma-separated layer indices such as 0,2,4, "
                           f"got {text[:60]!r}")
    return tuple(int(part) for part in parts)


def one_line(error: BaseException, options: frozenset = frozenset({"--allow-partial"})
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
    text = os_reason(error) if isinstance(error, OSError) else str(error)
    lines = text.strip().splitlines()
    return " ".join(line.strip() for line in lines) if lines else repr(error)


def command_options(parser, command: str) -> frozenset:
    """Every option string of the subcommand ``command`` ("--model", "-o", ...)."""
    commands = parser._subparsers._group_actions[0].choices if parser._subparsers else {}
    return frozenset(flag for action in getattr(commands.get(command), "_actions", ())
                     for flag in action.option_strings)


def how_stopped(interruption: KeyboardInterrupt) -> str:
    """'interrupted' for Ctrl-C, 'stopped by SIGTERM' (or SIGHUP) for the others."""
    signum = getattr(interruption, "signum", signal.SIGINT)
    return "interrupted" if signum == signal.SIGINT else f"stopped by {signal.Signals(signum).name}"


def exit_status(interruption: KeyboardInterrupt) -> int:
    """128 + the signal's number, as a shell reports a process a signal ended."""
    return 128 + getattr(interruption, "signum", signal.SIGINT)
