"""The ``minibert`` command line: one subcommand per job, each with ``--help``.

Bad input ends with a one-line message on stderr and exit status 2, never a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from typing import Callable

__all__ = ["main", "build_parser"]

USER_ERRORS = (
    ValueError,
    TypeError,
    IndexError,
    KeyError,
    FileNotFoundError,
    FileExistsError,
    NotADirectoryError,
    IsADirectoryError,
    UnicodeDecodeError,
)


class CommandError(Exception):
    """A user-facing error: printed as one line, exit status 2."""


def _progress(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


# -- gradcheck -------------------------------------------------------------------------------


def _add_gradcheck(subparsers) -> None:
    parser = subparsers.add_parser(
        "gradcheck",
        help="check every backward pass against finite differences (float64)",
        description="Run the float64 gradient check of every functional pair, every layer, "
        "BERT's blocks and the whole BertForPreTraining, and print one table.",
    )
    parser.add_argument("--seed", type=int, default=0, help="seed of the random inputs")
    parser.add_argument(
        "--no-model", action="store_true", help="skip the whole-model checks (the slowest part)"
    )
    parser.set_defaults(handler=_run_gradcheck)


def _run_gradcheck(args) -> int:
    from minibert.gradcheck_suite import MODEL_TOL, SINGLE_LAYER_TOL, run_all

    start = time.perf_counter()
    table, failures = run_all(
        seed=args.seed,
        include_model=not args.no_model,
        progress=lambda name: _progress(f"checking {name} ..."),
    )
    print(table.to_text(tol=SINGLE_LAYER_TOL))
    print(
        f"\n{len(table)} arrays checked in {time.perf_counter() - start:.1f} s; "
        f"tolerance {SINGLE_LAYER_TOL:g} per layer, {MODEL_TOL:g} for the whole model; "
        f"largest relative error (nonzero gradients) {table.max_rel_error:.2e}"
    )
    if failures:
        print(f"FAILED: {', '.join(failures)}")
        return 1
    print("all gradient checks passed")
    return 0


# -- info ------------------------------------------------------------------------------------


def _add_info(subparsers) -> None:
    parser = subparsers.add_parser(
        "info",
        help="describe a checkpoint folder: config, parameter counts, dtype, heads",
        description="Read a checkpoint folder (config.json + model.safetensors) without "
        "loading its weights, and print its configuration, parameter counts by "
        "module, dtypes and which heads it has.",
    )
    parser.add_argument("model", metavar="DIR", help="checkpoint folder")
    parser.add_argument("--json", action="store_true", help="print the summary as JSON")
    parser.set_defaults(handler=_run_info)


def _run_info(args) -> int:
    import json

    from minibert.checkpoint import checkpoint_summary

    summary = checkpoint_summary(args.model)
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
    ):
        print(f"  {key:<26} {config[key]}")
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


# -- wiring ----------------------------------------------------------------------------------

_COMMANDS: list[Callable] = [_add_gradcheck, _add_info]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="minibert", description="BERT rebuilt in pure NumPy for teaching."
    )
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND")
    for add in _COMMANDS:
        add(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "handler", None):
        parser.print_help()
        return 2
    try:
        return int(args.handler(args) or 0)
    except KeyboardInterrupt:
        print(f"minibert {args.command}: interrupted", file=sys.stderr)
        return 130
    except (CommandError, *USER_ERRORS) as error:
        message = str(error).strip().splitlines()[0] if str(error).strip() else repr(error)
        print(f"minibert {args.command}: error: {message}", file=sys.stderr)
        return 2
