"""WordPiece: split one word into vocabulary pieces, greedy longest-match-first.

The second of BERT's two tokenization stages (the first is ``tokenization_basic.py``). Start
at the first character and take the longest prefix that is in the vocabulary; continue from
where it ended, now looking for pieces spelled with the ``##`` continuation prefix. If at some
point no piece matches, the whole word becomes ``[UNK]`` (not just the unmatched part), as in
BERT's reference code. Example with BERT's uncased vocabulary::

    "unbelievably" -> ["un", "##bel", "##ie", "##va", "##bly"]
"""

from __future__ import annotations

from collections.abc import Container

__all__ = ["WordpieceTokenizer"]


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
        if isinstance(max_input_chars_per_word, bool) or not isinstance(
            max_input_chars_per_word, int
        ):
            raise TypeError(
                "max_input_chars_per_word must be an int, got "
                f"{type(max_input_chars_per_word).__name__}"
            )
        if max_input_chars_per_word < 1:
            raise ValueError(
                f"max_input_chars_per_word must be >= 1, got {max_input_chars_per_word}"
            )
        self.vocab = vocab
        self.unk_token = unk_token
        self.max_input_chars_per_word = max_input_chars_per_word
        self.continuation_prefix = continuation_prefix
        # No piece is longer than the longest vocabulary entry, so never try longer ones:
        # this turns the quadratic search on long words into a linear one.
        self._longest_piece = max((len(token) for token in vocab), default=0)

    def tokenize(self, word: str) -> list[str]:
        """Split one word (no whitespace) into pieces; ``[unk_token]`` if it cannot be spelled."""
        return [piece for piece, _, _ in self.tokenize_with_spans(word)]

    def tokenize_with_spans(self, word: str) -> list[tuple[str, int, int]]:
        """Like ``tokenize``, but each piece comes with its ``(start, end)`` span in ``word``."""
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
