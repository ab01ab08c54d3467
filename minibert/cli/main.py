"""The command line: the parser, and main(): errors as one line, signals, exit codes."""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

from minibert.cli.check import add_gradcheck, add_info
from minibert.cli.common import (
    USER_ERRORS,
    CommandError,
    Parser,
    check_text_arguments,
    command_options,
    exit_status,
    how_stopped,
    one_line,
)
from minibert.cli.embed import add_embed, add_search
from minibert.cli.look import add_attention, add_explore, add_figures, add_fill_mask
from minibert.cli.teach import add_assignment, add_slides
from minibert.cli.train import add_distil, add_finetune, add_pretrain

_COMMANDS: list[Callable] = [add_gradcheck, add_pretrain, add_fill_mask, add_attention,
                             add_figures, add_finetune, add_info, add_distil,
                             add_embed, add_search, add_explore,
                             add_assignment, add_slides]


def build_parser() -> argparse.ArgumentParser:
    from minibert import __version__

    parser = Parser(prog="minibert", description="BERT rebuilt in pure NumPy for teaching.")
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
    elif option not in command_options(parser, command) or option in message:
        return message
    return option + " " + message[found.end(1):].removeprefix("=").lstrip()


def _options_in_place_of_arguments(message: str, args, parser) -> str:
    """A message that speaks of library arguments the user set by an option names the
    option: "needs head=...; got head=None" -> "needs --head; got no --head", and a
    finetune's "num_labels=13" is the label count of --task."""
    import re

    if args.command == "finetune" and getattr(args, "task", None):
        message = re.sub(r"^num_labels=(\d+) disagrees with",
                         lambda found: f"--task {args.task} has {found.group(1)} labels, "
                                       f"which disagrees with", message)
        message = re.sub(r"; pass num_labels=\d+ or start from", "; start from", message)

    def by_option(found):
        name, value = found.group(1), found.group(2)
        option = _option_of(name, parser, args.command)
        if option == name:
            return found.group(0)
        return {"None": f"no {option}", "...": option}.get(value, f"{option} {value}")

    return re.sub(r"(?<![\w.-])([a-z][a-z0-9_]*)=(None|\.\.\.|[^\s;,)]+)", by_option,
                  message)


def _option_of(name: str, parser, command: str) -> str:
    """The option of ``command`` that sets the library argument ``name`` (``--batch-size``
    for batch_size, ``--layers`` for num_layers), or ``name`` when it has none."""
    option = _OPTION_OF_ARGUMENT.get(name, "--" + name.replace("_", "-"))
    return option if option in command_options(parser, command) else name


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
        check_text_arguments(arguments)
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
        print(f"minibert {args.command}: {how_stopped(interruption)}", file=sys.stderr)
        return exit_status(interruption)
    except (CommandError, TrainingDiverged, MemoryError, *USER_ERRORS) as error:
        message = _options_in_place_of_arguments(_option_names(
            one_line(error, command_options(parser, args.command)), parser, args.command),
            args, parser)
        if hasattr(error, "describe"):  # a memory refusal: every setting by its option
            message = error.describe(lambda name: _option_of(name, parser, args.command))
        print(_wrapped(f"minibert {args.command}: error: {message}"), file=sys.stderr)
        return 2
