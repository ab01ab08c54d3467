"""The command line: embed and search: sentence vectors."""

from __future__ import annotations

from minibert.cli.common import (
    MAX_SEQ_LENGTH,
    CommandError,
    add_allow_partial,
    add_command,
    bounded,
    finite_output,
    model_folder,
    nonempty_text,
    print_results,
    reading_model,
)


def _add_sentence_model_arguments(parser) -> None:
    """--model and --max-seq-length, as embed and search both read them."""
    parser.add_argument("--model", required=True, metavar="DIR",
                        help="a BERT folder with vocab.txt (e.g. all-MiniLM-L6-v2's, or "
                             "tiny-toy)")
    parser.add_argument("--max-seq-length", type=int, default=None,
                        help=f"tokens per text after truncation, at most {MAX_SEQ_LENGTH} and "
                             f"the model's max_position_embeddings (default: 256, or the "
                             f"model's max_position_embeddings if fewer)")
    add_allow_partial(parser)


def add_embed(subparsers) -> None:
    parser = add_command(subparsers, "embed", _run_embed,
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
        nonempty_text(text, f"TEXT {index}" if len(texts) > 1 else "TEXT")
    bounded(args.max_seq_length, "--max-seq-length", minimum=3, maximum=MAX_SEQ_LENGTH)
    folder = model_folder(args.model, "--model")
    with reading_model(args, folder):
        model, tokenizer = load_sentence_model(folder)
    positions = model.config.max_position_embeddings
    if args.max_seq_length is None:
        args.max_seq_length = min(256, positions)
    elif args.max_seq_length > positions:
        raise CommandError(f"--max-seq-length {args.max_seq_length} is more than the model "
                           f"{args.model!r} reads (max_position_embeddings {positions}); give "
                           f"at most {positions}")
    return model, tokenizer


def _say_unknown(tokenizer, texts: list[str], as_json: bool) -> None:
    """One line naming the words and characters of ``texts`` the vocabulary lacks (on
    stderr under --json, so that stdout stays JSON)."""
    import sys

    from minibert.tokenization.unknown import unknown_words

    line = unknown_words(tokenizer, "\n".join(texts)).line()  # each word named once
    if line:
        print(f"note: {line}", file=sys.stderr if as_json else sys.stdout, flush=True)


def _nothing_known(tokenizer, text: str) -> bool:
    """Whether every token of ``text`` is [UNK]: its vector is then that of any such text
    of its length (an emoji and a Chinese name score +1.0000 against each other)."""
    tokens = tokenizer.tokenize(text)
    return all(token == tokenizer.unk_token for token in tokens)


def _run_embed(args) -> int:
    """Embed each TEXT as all-MiniLM-L6-v2 does (the mean of the last hidden states over the
    real tokens, scaled to length 1) and print the vectors."""
    import json

    from minibert.sentence import sentence_embeddings

    model, tokenizer = _sentence_model(args, args.texts)
    _say_unknown(tokenizer, args.texts, args.json)
    vectors = sentence_embeddings(model, tokenizer, args.texts, max_length=args.max_seq_length)
    finite_output(vectors.ravel(), "the embeddings", args.model)
    if args.json:
        print(json.dumps([{"text": text, "embedding": [round(float(v), 7) for v in vector]}
                          for text, vector in zip(args.texts, vectors, strict=True)]))
        return 0
    for text, vector in zip(args.texts, vectors, strict=True):
        shown = " ".join(f"{v:+.4f}" for v in vector[:6])
        print(f"{text[:40]!r:<44} [{shown} ...] ({vector.size} numbers)")
    return 0


def add_search(subparsers) -> None:
    parser = add_command(subparsers, "search", _run_search,
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

    nonempty_text(args.query, "--query")
    model, tokenizer = _sentence_model(args, args.texts)
    if _nothing_known(tokenizer, args.query):
        raise CommandError(f"--query {args.query[:60]!r} holds no word the model {args.model!r} "
                           f"knows (every token is [UNK]): its vector would be that of any "
                           f"such text, and every score meaningless; write it with words of "
                           f"the model's vocabulary")
    _say_unknown(tokenizer, [args.query, *args.texts], args.json)
    vectors = sentence_embeddings(model, tokenizer, [args.query, *args.texts],
                                  max_length=args.max_seq_length)
    finite_output(vectors.ravel(), "the embeddings", args.model)
    order, scores = rank(vectors[0], vectors[1:])
    # A text the model reads as [UNK] alone gets no score (it would be its [UNK]s' score,
    # whatever it says): listed last, unranked.
    blank = {index for index, text in enumerate(args.texts) if _nothing_known(tokenizer, text)}
    results = [{"rank": place, "score": round(float(score), 6), "text": args.texts[index]}
               for place, (index, score) in enumerate(
                   ((index, score) for index, score in zip(order, scores, strict=True)
                    if index not in blank), 1)]
    results += [{"rank": None, "score": None, "text": args.texts[index],
                 "reason": "every token is [UNK]"} for index in sorted(blank)]
    lines = [f"{result['rank']:>3}  {result['score']:+.4f}  {result['text']}"
             if result["rank"] is not None else
             f"  -   n/a     {result['text']}  (every token is [UNK]: no score)"
             for result in results]
    return print_results(results, lines, args.json)
