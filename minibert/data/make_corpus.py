"""Write the everyday toy world to a text file: ``python -m minibert.data.make_corpus -o FILE``.

``minibert pretrain --corpus FILE`` trains on it; the reference checkpoint ``tiny-toy`` records
the two commands in its ``command.txt``. See docs/data.md.
"""

from __future__ import annotations


def main(argv: list[str] | None = None) -> int:
    """``python -m minibert.data.make_corpus -o FILE``: write the everyday world's training text.

    The file is in BERT's pretraining format (``minibert pretrain --corpus FILE`` reads it);
    the documents are ``ToyCorpus.generate(..., world="everyday").train``, room sentences
    already left out.
    """
    import argparse

    from minibert.data.corpus import ToyCorpus, count_words, write_corpus

    parser = argparse.ArgumentParser(
        prog="python -m minibert.data.make_corpus",
        description="Write the everyday toy world (the sixteen scenes and the ambiguity "
                    "themes) in BERT's pretraining text format.")
    parser.add_argument("-o", "--out", required=True, help="the text file to write")
    parser.add_argument("--documents", type=int, default=12000,
                        help="documents to generate (default 12000)")
    parser.add_argument("--seed", type=int, default=0, help="generator seed (default 0)")
    args = parser.parse_args(argv)
    try:
        corpus = ToyCorpus.generate(args.documents, 0, seed=args.seed, world="everyday")
        write_corpus(corpus.train, args.out)
    except (ValueError, OSError) as error:
        print(f"error: {error}")
        return 2
    print(f"wrote {len(corpus.train):,} documents ({count_words(corpus.train):,} words) "
          f"to {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
