"""Learn a WordPiece vocabulary from text by likelihood-scored merges.

WordPiece (Schuster & Nakajima 2012, "Japanese and Korean Voice Search"; used by BERT, Devlin
et al. 2019) builds its vocabulary bottom-up like byte-pair encoding, but chooses merges
differently. Both start from single characters and repeatedly merge one adjacent pair of
pieces into a new piece. BPE merges the most *frequent* pair. WordPiece merges the pair with
the highest

    score(a, b) = count(ab) / (count(a) * count(b)),

the pair whose merge raises the likelihood of the training words the most under a unigram
model of the pieces: a pair that appears together far more often than its parts' own
frequencies predict. The formula is the one of the HuggingFace course's WordPiece chapter;
Google never published its training code.

The steps here:

1. split the texts into words with BERT's basic tokenizer (the same lowercasing, accent
   stripping and punctuation split the tokenizer applies later) and count each distinct word;
2. spell every word in characters, the first as is and the rest with the ``##`` prefix
   (``"fox"`` -> ``f ##o ##x``); the alphabet holds both spellings of every character seen, so
   a new word made of known characters is never ``[UNK]``;
3. count every piece and every adjacent pair of pieces, weighted by word counts;
4. merge the best-scoring pair (ties: the pair seen more often, then the alphabetically
   smaller pair), add the merged piece to the vocabulary, update the counts, repeat until the
   vocabulary holds ``vocab_size`` pieces or no pair is seen ``min_frequency`` times.

Counts are kept per distinct word and updated incrementally: a merge only revisits the words
that contain the merged pair, and a priority queue only re-scores the pairs whose counts
changed. Training a 4,000-piece vocabulary on 200,000 words of text takes seconds.

See docs/tokenization.md for a worked example and the comparison with BPE.
"""

from __future__ import annotations

import heapq
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from typing import NamedTuple

from minibert.checks import check_int, check_str
from minibert.tokenization.basic import BasicTokenizer

__all__ = ["Merge", "WordPieceTrainer"]

CONTINUATION_PREFIX = "##"
# The settings that say how text is split into words before WordPiece: the trainer's and
# the tokenizer's, the same (BertTokenizer.train passes them to both).
NORMALIZATION = ("do_lower_case", "strip_accents", "tokenize_chinese_chars",
                 "max_input_chars_per_word")


class Merge(NamedTuple):
    """One training step: pieces ``left`` and ``right`` became ``merged``.

    ``score`` is count(left right) / (count(left) * count(right)) at the time of the merge and
    ``count`` is count(left right), both weighted by how often each word occurs.
    """

    left: str
    right: str
    merged: str
    score: float
    count: int


class WordPieceTrainer:
    """Learn a WordPiece vocabulary; ``train`` returns it, ``merges`` records every step.

    Args:
        vocab_size: size of the vocabulary to learn, special tokens and alphabet included.
        min_frequency: a pair must occur at least this often (over all words) to be merged.
        special_tokens: tokens put first in the vocabulary, in this order (so ``[PAD]`` gets
            id 0, as in BERT's vocabularies); where they appear literally in the training text
            they are left out of the counts.
        do_lower_case, strip_accents, tokenize_chinese_chars: basic tokenization, as for
            ``BertTokenizer`` (use the same values there).
        max_input_chars_per_word: longer words are not counted (the tokenizer turns them into
            ``[UNK]`` anyway).

    After ``train``: ``vocab`` (list of pieces, id order), ``merges`` (list of ``Merge``),
    ``word_counts`` (dict word -> count) and ``alphabet`` (the initial pieces).
    """

    def __init__(
        self,
        vocab_size: int = 2000,
        min_frequency: int = 2,
        special_tokens: Sequence[str] = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"),
        do_lower_case: bool = True,
        strip_accents: bool | None = None,
        tokenize_chinese_chars: bool = True,
        max_input_chars_per_word: int = 100,
    ):
        vocab_size = check_int("vocab_size", vocab_size, minimum=1)
        min_frequency = check_int("min_frequency", min_frequency, minimum=1)
        max_input_chars_per_word = check_int(
            "max_input_chars_per_word", max_input_chars_per_word, minimum=1)
        if isinstance(special_tokens, str):
            raise TypeError(
                f"special_tokens must be a sequence of str, got the str {special_tokens!r}"
            )
        special_tokens = list(special_tokens)
        for token in special_tokens:
            if (
                not isinstance(token, str)
                or not token
                or token != token.strip()
                or (len(token.split()) != 1)
            ):
                raise ValueError(
                    f"special_tokens must be non-empty str without whitespace, got {token!r}"
                )
        if len(set(special_tokens)) != len(special_tokens):
            raise ValueError(f"special_tokens must be distinct, got {special_tokens}")
        self.vocab_size = vocab_size
        self.min_frequency = min_frequency
        self.special_tokens = special_tokens
        self.max_input_chars_per_word = max_input_chars_per_word
        self.basic_tokenizer = BasicTokenizer(
            do_lower_case=do_lower_case,
            strip_accents=strip_accents,
            tokenize_chinese_chars=tokenize_chinese_chars,
            never_split=special_tokens,
        )
        self.vocab: list[str] = []
        self.merges: list[Merge] = []
        self.word_counts: dict[str, int] = {}
        self.alphabet: list[str] = []

    def count_words(self, texts: Iterable[str]) -> dict[str, int]:
        """Count the words of ``texts`` after basic tokenization (step 1)."""
        if isinstance(texts, str):
            raise TypeError("texts must be an iterable of str, got a single str")
        chunk_counts: Counter[str] = Counter()
        for index, text in enumerate(texts):
            check_str(f"texts[{index}]", text)
            for segment, is_special, _ in self.basic_tokenizer.split_special_tokens(text):
                if not is_special:
                    chunk_counts.update(self.basic_tokenizer.clean_text(segment).split())
        # Normalize each distinct chunk once: far fewer chunks than words in real text.
        word_counts: Counter[str] = Counter()
        never_split = self.basic_tokenizer.never_split
        for chunk, count in chunk_counts.items():
            for word in self.basic_tokenizer.split_chunk(chunk):
                if word.text in never_split or len(word.text) > self.max_input_chars_per_word:
                    continue
                word_counts[word.text] += count
        return dict(sorted(word_counts.items()))

    def train(self, texts: Iterable[str]) -> list[str]:
        """Learn the vocabulary from ``texts`` (an iterable of str); return it in id order."""
        self.word_counts = self.count_words(texts)
        words = [_spell(word) for word in self.word_counts]
        frequencies = list(self.word_counts.values())

        characters = sorted({char for word in self.word_counts for char in word})
        self.alphabet = characters + [CONTINUATION_PREFIX + char for char in characters]
        needed = len(self.special_tokens) + len(self.alphabet)
        if self.vocab_size < needed:
            raise ValueError(
                f"vocab_size={self.vocab_size} is too small: the {len(self.special_tokens)} "
                f"special tokens and the {len(self.alphabet)}-piece alphabet of the texts need "
                f"{needed}; allowed: vocab_size >= {needed}"
            )
        specials = set(self.special_tokens)
        self.vocab = self.special_tokens + [p for p in self.alphabet if p not in specials]
        self.merges = []
        known = set(self.vocab)

        counts = _PairCounts(words, frequencies)
        queue = [counts.queue_entry(pair) for pair in counts.pairs if self._eligible(counts, pair)]
        heapq.heapify(queue)
        while len(self.vocab) < self.vocab_size and queue:
            entry = heapq.heappop(queue)
            pair = (entry[2], entry[3])
            if not self._eligible(counts, pair) or entry != counts.queue_entry(pair):
                continue  # outdated: the pair's counts changed since this entry was queued
            left, right = pair
            merged = left + right[len(CONTINUATION_PREFIX) :]
            self.merges.append(Merge(left, right, merged, -entry[0], counts.pairs[pair]))
            if merged not in known:
                known.add(merged)
                self.vocab.append(merged)
            for changed in counts.merge(pair, merged):
                if self._eligible(counts, changed):
                    heapq.heappush(queue, counts.queue_entry(changed))
        return list(self.vocab)

    def _eligible(self, counts: _PairCounts, pair: tuple[str, str]) -> bool:
        return counts.pairs.get(pair, 0) >= self.min_frequency


def _spell(word: str) -> list[str]:
    """A word as its characters, all but the first with the continuation prefix."""
    return [word[0]] + [CONTINUATION_PREFIX + char for char in word[1:]]


class _PairCounts:
    """Piece and adjacent-pair counts over the distinct words, updated merge by merge.

    ``words[i]`` is the current spelling of word i, which occurs ``frequencies[i]`` times.
    ``pieces[p]`` and ``pairs[(a, b)]`` count occurrences weighted by word frequency.
    ``words_with[(a, b)]`` holds the words that contain the pair (and possibly some that no
    longer do: scanning those finds nothing) and ``pairs_with[p]`` the pairs containing the
    piece, so a merge touches only what it changes.
    """

    def __init__(self, words: list[list[str]], frequencies: list[int]):
        self.words = words
        self.frequencies = frequencies
        self.pieces: Counter[str] = Counter()
        self.pairs: Counter[tuple[str, str]] = Counter()
        self.words_with: defaultdict[tuple[str, str], set[int]] = defaultdict(set)
        self.pairs_with: defaultdict[str, set[tuple[str, str]]] = defaultdict(set)
        for index, (word, frequency) in enumerate(zip(words, frequencies, strict=True)):
            for piece in word:
                self.pieces[piece] += frequency
            for pair in _adjacent_pairs(word):
                self._add_pair_count(pair, frequency)
                self.words_with[pair].add(index)

    def score(self, pair: tuple[str, str]) -> float:
        left, right = pair
        return self.pairs[pair] / (self.pieces[left] * self.pieces[right])

    def queue_entry(self, pair: tuple[str, str]) -> tuple[float, int, str, str]:
        """Heap order: highest score first, then highest count, then the smaller pair."""
        return (-self.score(pair), -self.pairs[pair], pair[0], pair[1])

    def merge(self, pair: tuple[str, str], merged: str) -> set[tuple[str, str]]:
        """Merge ``pair`` into ``merged`` in every word; return the pairs whose score changed.

        Only the neighbours of each merged occurrence change: in ``x left right y`` the
        pairs ``(x, left)``, ``(left, right)``, ``(right, y)`` give way to ``(x, merged)`` and
        ``(merged, y)``. Looking at ``x`` in the already merged part of the word keeps
        back-to-back occurrences (``left right left right``) right.
        """
        left, right = pair
        pair_changes: defaultdict[tuple[str, str], int] = defaultdict(int)
        merged_count = 0
        for index in sorted(self.words_with.pop(pair)):
            word, frequency = self.words[index], self.frequencies[index]
            new_word: list[str] = []
            position = 0
            while position < len(word):
                if (
                    word[position] != left
                    or position + 1 == len(word)
                    or word[position + 1] != right
                ):
                    new_word.append(word[position])
                    position += 1
                    continue
                pair_changes[pair] -= frequency
                if new_word:
                    before = new_word[-1]
                    pair_changes[before, left] -= frequency
                    pair_changes[before, merged] += frequency
                    self.words_with[before, merged].add(index)
                if position + 2 < len(word):
                    after = word[position + 2]
                    pair_changes[right, after] -= frequency
                    pair_changes[merged, after] += frequency
                    self.words_with[merged, after].add(index)
                new_word.append(merged)
                merged_count += frequency
                position += 2
            self.words[index] = new_word

        changed: set[tuple[str, str]] = set()
        for changed_pair, change in pair_changes.items():
            if change:
                self._add_pair_count(changed_pair, change)
                changed.add(changed_pair)
        self.pieces[left] -= merged_count
        self.pieces[right] -= merged_count
        self.pieces[merged] += merged_count
        # The score of every pair containing one of these pieces moved with its count.
        for piece in (left, right, merged):
            changed |= self.pairs_with[piece]
        for gone in [p for p in changed if self.pairs[p] == 0]:
            self._forget(gone)
        return {p for p in changed if p in self.pairs}

    def _add_pair_count(self, pair, change):
        self.pairs[pair] += change
        self.pairs_with[pair[0]].add(pair)
        self.pairs_with[pair[1]].add(pair)

    def _forget(self, pair):
        """Drop a pair that no word contains any more."""
        del self.pairs[pair]
        self.words_with.pop(pair, None)
        self.pairs_with[pair[0]].discard(pair)
        self.pairs_with[pair[1]].discard(pair)


def _adjacent_pairs(word: list[str]) -> list[tuple[str, str]]:
    return list(zip(word[:-1], word[1:], strict=True))
