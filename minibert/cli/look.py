"""The command line: fill-mask, attention, figures, explore: what a model predicts, where it
looks.
"""

from __future__ import annotations

from pathlib import Path

from minibert.cli.common import (
    DPI_RANGE,
    MAX_SEQ_LENGTH,
    CommandError,
    add_allow_partial,
    add_command,
    bounded,
    file_access,
    finite_output,
    layer_list,
    locks_output,
    model_folder,
    new_output,
    nonempty_text,
    out_path,
    print_results,
    reading_model,
    require_bert,
    require_mlm_head,
)


def _write_figure(fig, args, what: str) -> int:
    """Save a view's figure to -o at --dpi and say where, with ``what`` it shows."""
    from minibert import viz

    with file_access("-o must name a file in a folder you can write to"):
        path = viz.save_figure(fig, args.out, dpi=args.dpi)
    print(f"wrote {path} ({what})")
    return 0


def _say_unknown(tokenizer, *texts) -> None:
    """Print, in one line, the words and characters of ``texts`` the vocabulary lacks."""
    from minibert.tokenization.unknown import unknown_words

    lines = [unknown_words(tokenizer, text).line() for text in texts if text]
    line = "; ".join(line for line in lines if line)
    if line:
        print(f"note: {line}", flush=True)


def _refuse_lowercase_mask(tokenizer, text: str | None, name: str) -> None:
    """Exit 2 when ``text`` writes the mask token in lower case (``[mask]``), or holds nothing
    the tokenizer reads (control characters only)."""
    from minibert.fill_mask import excerpt
    from minibert.tokenization.unknown import lowercase_mask

    if text and not tokenizer.tokenize(text):
        raise CommandError(f"{name} {excerpt(text)} holds no word the tokenizer reads (control "
                           f"characters are dropped); give a sentence")
    written = lowercase_mask(tokenizer, text) if text else None
    if written is not None:
        raise CommandError(f"{name} holds {written!r}: the tokenizer knows the mask only as "
                           f"{tokenizer.mask_token} in capitals ({written!r} reads as three "
                           f"words); write {tokenizer.mask_token}")


def add_fill_mask(subparsers) -> None:
    parser = add_command(subparsers, "fill-mask", _run_fill_mask,
                         "predict the [MASK] tokens of a text with a pretrained model")
    parser.add_argument("text", help='text with one or more "[MASK]", at most the model\'s '
                                     "max_position_embeddings tokens (128 for pretrain's "
                                     "models) with [CLS] and [SEP]")
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a folder written by pretrain or save_pretrained (with vocab.txt), "
                             "or tiny-toy, the reference checkpoint shipped with minibert")
    parser.add_argument("--top-k", type=int, default=5,
                        help="answers per [MASK], 1 to the model's vocabulary size")
    add_allow_partial(parser)
    parser.add_argument("--json", action="store_true", help="print JSON")


def _run_fill_mask(args) -> int:
    """Print the top-k predictions for every [MASK] in TEXT, in the format of HF's fill-mask
    pipeline (score, token, token_str, sequence)."""
    import warnings

    from minibert.family.registry import family_of_folder
    from minibert.fill_mask import fill_mask
    from minibert.tokenization import load_tokenizer

    nonempty_text(args.text, "TEXT")
    bounded(args.top_k, "--top-k", minimum=1)
    folder = model_folder(args.model, "--model")
    with reading_model(args, folder):
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
    bounded(args.top_k, "--top-k", 1, model.config.vocab_size)  # the answers there are
    _refuse_lowercase_mask(tokenizer, args.text, "TEXT")
    results = fill_mask(model, tokenizer, args.text, top_k=args.top_k)
    per_mask = results if isinstance(results[0], list) else [results]
    finite_output((answer["score"] for answers in per_mask for answer in answers),
                   "its scores", args.model)
    if results.unknown_line:
        import sys

        print(f"note: {results.unknown_line}", file=sys.stderr if args.json else sys.stdout,
              flush=True)
    lines = []
    for index, answers in enumerate(per_mask, 1):
        if len(per_mask) > 1:
            lines.append(f"[MASK] #{index}")
        for answer in answers:
            lines.append(f"  {answer['score']:.4f}  {answer['token_str']:<15} {answer['sequence']}")
    return print_results(results, lines, args.json)


def add_attention(subparsers) -> None:
    parser = add_command(subparsers, "attention", _run_attention,
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
    add_allow_partial(parser)
    parser.add_argument("--dpi", type=int, default=200,
                        help=f"resolution of a PNG, {DPI_RANGE[0]} to {DPI_RANGE[1]}")
    parser.add_argument("-o", "--out", "--output", default="attention.png", metavar="FILE",
                        help="output file, by default in the current folder; the format "
                             "comes from the extension (.png, .svg, .pdf)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace the output file if it exists")


@locks_output
def _run_attention(args) -> int:
    # The checks that need no model come first, before matplotlib is imported.
    """Run a model on TEXT (and --pair) and draw its attention: one head, one layer's heads,
    the whole model, one token's view, the head average or attention rollout. Layers and
    heads count from 0."""
    out_path(args.out, "-o")
    bounded(args.dpi, "--dpi", *DPI_RANGE)
    bounded(args.max_seq_length, "--max-seq-length", minimum=3, maximum=MAX_SEQ_LENGTH)
    nonempty_text(args.text, "TEXT")
    nonempty_text(args.pair, "--pair")
    new_output(args.out, args.overwrite)

    import warnings

    import numpy as np

    from minibert import viz
    from minibert.family.registry import family_of_folder, forward_inputs
    from minibert.fill_mask import excerpt
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
    folder = model_folder(args.model, "--model")
    with reading_model(args, folder):
        tokenizer = load_tokenizer(folder)
        family = family_of_folder(folder)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # pretraining heads are not needed for attention
            model = family.base_model.from_pretrained(folder, **family.base_model_options)
    _refuse_lowercase_mask(tokenizer, args.text, "TEXT")
    _refuse_lowercase_mask(tokenizer, args.pair, "--pair")
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
    finite_output(np.concatenate([a.ravel() for a in out.attentions]), "its attention",
                   args.model)
    bounded(args.layer, "--layer", 0, len(out.attentions) - 1)
    bounded(args.head, "--head", 0, out.attentions[0].shape[1] - 1)
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
    _say_unknown(tokenizer, args.text, args.pair)
    return _write_figure(fig, args, f"{view} view, {len(tokens)} tokens")


def add_figures(subparsers) -> None:
    parser = add_command(subparsers, "figures", _run_figures,
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


@locks_output
def _run_figures(args) -> int:
    """Draw every figure of a lecture for one model: head, layer, model and rollout views on
    a 'bank' pair, saliency of a fill-mask prediction, the training curves (when the folder
    has history.json) and the board pictures; each as PNG and SVG."""
    out_path(args.out, "-o")
    bounded(args.dpi, "--dpi", *DPI_RANGE)
    formats = tuple(f.strip().lower() for f in args.formats.split(",") if f.strip())
    allowed = ("png", "svg", "pdf")
    if not formats or any(f not in allowed for f in formats):
        raise CommandError(f"--formats must be a comma-separated choice of "
                           f"{', '.join(allowed)}, got {args.formats[:40]!r}")
    from minibert.viz.lecture_set import write_lecture_figures

    folder = model_folder(args.model, "--model")
    with file_access("--model must be a readable model folder"):
        require_mlm_head(folder, args.model, "figures")
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        raise CommandError(f"-o {args.out!r} is a file; expected a folder for the figures")
    existing = sorted(p.name for p in out.glob("*") if p.suffix.lstrip(".") in formats) \
        if out.is_dir() else []
    if existing and not args.overwrite:
        raise CommandError(f"-o {args.out!r} already holds figures ({existing[0]}, ...); pass "
                           f"--overwrite to replace them")
    with file_access("-o must name a folder you can write to"):
        paths = write_lecture_figures(folder, args.out, formats, dpi=args.dpi)
    print(f"wrote {len(paths)} files to {args.out}")
    return 0


def _run_saliency(args) -> int:
    """--view saliency: gradient × input, integrated gradients and rollout for the [MASK]."""
    import warnings

    from minibert import viz
    from minibert.heads import BertForMaskedLM
    from minibert.tokenization import load_tokenizer

    folder = model_folder(args.model, "--model")
    with file_access("--model must be a readable model folder"):
        tokenizer = load_tokenizer(folder)
        require_bert(folder, args.model, "--view saliency", " (the other views work for it)")
        require_mlm_head(folder, args.model, "--view saliency")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the next-sentence head is not needed
            model = BertForMaskedLM.from_pretrained(folder)
    _refuse_lowercase_mask(tokenizer, args.text, "TEXT")
    _refuse_lowercase_mask(tokenizer, args.pair, "--pair")
    _say_unknown(tokenizer, args.text, args.pair)
    fig = viz.fill_mask_saliency_figure(model.eval(), tokenizer, args.text, args.pair,
                                        word=args.token)
    return _write_figure(fig, args, "saliency view")


def add_explore(subparsers) -> None:
    parser = add_command(subparsers, "explore", _run_explore,
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
    add_allow_partial(parser)


@locks_output
def _run_explore(args) -> int:
    """Run a model on TEXT (and PAIR) and write one HTML page that works offline: head view,
    model view with head-job scores, neuron view (q, k, q.k, softmax), backward view
    (gradients of an output with respect to every attention probability), aggregation and,
    with --timeline, the attention snapshots of training. Layers and heads count from 0."""
    from minibert.viz.explorer import explore, load_model

    out_path(args.out, "-o")
    if not args.out.lower().endswith((".html", ".htm")):
        raise CommandError(f"-o {args.out!r}: the page is HTML; give a name ending in .html")
    nonempty_text(args.text, "TEXT")
    nonempty_text(args.pair, "PAIR")
    new_output(args.out, args.overwrite)
    neuron_layers = layer_list(args.neuron_layers, "--neuron-layers")
    folder = model_folder(args.model, "--model")
    with reading_model(args, folder):
        model, tokenizer = load_model(folder)
    _refuse_lowercase_mask(tokenizer, args.text, "TEXT")
    _refuse_lowercase_mask(tokenizer, args.pair, "PAIR")
    length, limit = len(tokenizer(args.text, args.pair)["input_ids"]), \
        model.config.max_position_embeddings
    if length > limit:
        from minibert.fill_mask import excerpt

        what, them = ("TEXT and PAIR are", "them") if args.pair else ("TEXT is", "it")
        raise CommandError(f"{what} {length:,} tokens long ([CLS] and [SEP] included), more "
                           f"than the {limit} the model reads (max_position_embeddings); "
                           f"shorten {them}: got {excerpt(args.text)}")
    _say_unknown(tokenizer, args.text, args.pair)
    page = explore(model, tokenizer, args.text, args.pair, backward=args.backward,
                   timeline=folder if args.timeline else None, neuron_layers=neuron_layers,
                   history=folder)
    with file_access("-o must name a file in a folder you can write to"):
        path = page.save(args.out)
    print(f"wrote {path} ({path.stat().st_size:,} bytes, {len(page.data['tokens'])} tokens; "
          f"open it in a browser)")
    return 0
