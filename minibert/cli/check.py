"""The command line: gradcheck and info: the gradient checks and what a checkpoint holds."""

from __future__ import annotations

import time

from minibert.cli.common import (
    CommandError,
    add_command,
    bounded,
    file_access,
    model_folder,
    progress_line,
)


def add_gradcheck(subparsers) -> None:
    parser = add_command(subparsers, "gradcheck", _run_gradcheck,
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

    bounded(args.seed, "--seed", minimum=0)
    start = time.perf_counter()
    table, failures = run_all(
        seed=args.seed,
        include_model=not args.no_model,
        progress=lambda name: progress_line(f"checking {name} ..."),
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


def add_info(subparsers) -> None:
    parser = add_command(subparsers, "info", _run_info,
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
    folder = model_folder(args.model or args.folder, argument)
    with file_access(f"{argument} must be a readable model folder"):
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
