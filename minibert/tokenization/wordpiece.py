"""WordPiece: split words into vocabulary pieces, greedy longest-match-first.

The second of BERT's two tokenization stages (the first is ``basic.py``). Start at the first
character of a word and take the longest prefix that is in the vocabulary; continue from
where it ended, now looking for pieces spelled with the ``##`` continuation prefix. If at some
point no piece matches, the whole word becomes ``[UNK]`` (not just the unmatched part), as in
BERT's reference code. Example with BERT's uncased vocabulary::

    "unbelievably" -> ["un", "##bel", "##ie", "##va", "##bly"]

``tokenize`` takes text and splits it on whitespace first, as the ``WordpieceTokenizer`` of
google-research/bert and of HF transformers do; ``split_word`` is the loop for one word,
which ``BertTokenizer`` calls directly on the words of basic tokenization.
"""

from __future__ import annotations

import re
from collections.abc import Container

from minibert.checks import check_int

__all__ = ["WordpieceTokenizer"]

# The whitespace of ``str.split()``, which the reference code splits on.
_WORD_PATTERN = re.compile(r"\S+")


class WordpieceTokenizer:
    """Greedy longest-match-first WordPiece over a fixed vocabulary.

    Args:
        vocab: the vocabulary pieces (any container of str: a dict token -> id works).
        unk_token: what a word that cannot be spelled with the vocabulary becomes.
        max_input_chars_per_word: longer words become ``unk_token`` without being tried.
            100 as in HF transformers; Google's original code used 200.
        continuation_prefix: marks a piece that continues a word.
    """

    def __init__(
        self,
        vocab: Container[str],
        unk_token: str = "[UNK]",
        max_input_chars_per_word: int = 100,
        continuation_prefix: str = "##",
    ):
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = check_int(
            "max_input_chars_per_word", max_input_chars_per_word, minimum=1)
        self.continuation_prefix = continuation_prefix
        # No piece is longer than the longest vocabulary entry, so never try longer ones:
        # this turns the quadratic search on long words into a linear one.
        self._longest_piece = max((len(token) for token in vocab), default=0)

    def tokenize(self, text: str) -> list[str]:
        """Split whitespace-separated ``text`` into pieces, word by word.

        ``"unwanted running"`` -> ``['un', '##want', '##ed', 'runn', '##ing']`` with the
        reference tests' vocabulary; a word that cannot be spelled is one ``unk_token``.
        """
        return [piece for word in text.split() for piece, _, _ in self.split_word(word)]

    def tokenize_with_spans(self, text: str) -> list[tuple[str, int, int]]:
        """Like ``tokenize``, but each piece comes with its ``(start, end)`` span in ``text``."""
        return [
            (piece, match.start() + start, match.start() + end)
            for match in _WORD_PATTERN.finditer(text)
            for piece, start, end in self.split_word(match.group())
        ]

    def split_word(self, word: str) -> list[tuple[str, int, int]]:
        """The pieces of one word (no whitespace in it), each with its span in ``word``."""
        if len(word) > self.max_input_chars_per_word:
            return [(self.unk_token, 0, len(word))]
        vocab = self.vocab
        pieces = []
        start = 0
        while start < len(word):
            prefix = self.continuation_prefix if start > 0 else ""
            end = min(len(word), start + self._longest_piece)
            while end > start:
                candidate = prefix + word[start:end]
                if candidate in vocab:
                    break
                end -= 1
            else:
                return [(self.unk_token, 0, len(word))]
            pieces.append((candidate, start, end))
            start = end
        return pieces
