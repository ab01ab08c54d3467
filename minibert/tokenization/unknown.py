"""What a vocabulary lacks in a text: the words and characters a model never saw whole.

A word outside the vocabulary does not stop BERT: WordPiece splits it into pieces the model
knows (``sleeping`` -> ``sleep ##ing``) or, when no piece fits, turns it into ``[UNK]``; a
character outside the alphabet (``?``, ``7``, an emoji) becomes ``[UNK]`` on its own. The model
then answers as if it had read something else, so every tool that reads a user's text names
these words first, in one line (``UnknownWords.line``), and the Python functions carry it
in their results (``fill_mask``'s ``unknown_line``, the explorer page's note).

    >>> unknown_words(tokenizer, "I am sleeping 🙂").line()
    'not in the vocabulary as whole words: "sleeping" (pieces sleep ##ing); characters
    read as [UNK]: "🙂"'   (one line)
"""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

__all__ = ["UnknownWord", "UnknownWords", "lowercase_mask", "unknown_words"]

MAX_LISTED = 12  # words a line names before it says "and N more"


@dataclass(frozen=True)
class UnknownWord:
    """One word of the text that is not a whole token of the vocabulary.

    ``text`` is the word as written; ``pieces`` the tokens it became; ``kind`` is
    ``"unknown"`` (the word became ``[UNK]``), ``"pieces"`` (split into known pieces) or
    ``"character"`` (a single character, punctuation, digit or emoji, that became ``[UNK]``).
    """

    text: str
    pieces: tuple[str, ...]
    kind: str


@dataclass(frozen=True)
class UnknownWords:
    """Every word and character of a text that the vocabulary lacks, in order, each once.

    ``removed`` holds the control characters the tokenizer drops before it reads the text.
    Empty (false) when the vocabulary knows every word.
    """

    words: tuple[UnknownWord, ...]
    removed: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.words or self.removed)

    @property
    def unknown(self) -> tuple[UnknownWord, ...]:
        """The words that became ``[UNK]``."""
        return tuple(word for word in self.words if word.kind == "unknown")

    @property
    def split(self) -> tuple[UnknownWord, ...]:
        """The words split into pieces the vocabulary has."""
        return tuple(word for word in self.words if word.kind == "pieces")

    @property
    def characters(self) -> tuple[UnknownWord, ...]:
        """The single characters (punctuation, digits, emoji, ...) that became ``[UNK]``."""
        return tuple(word for word in self.words if word.kind == "character")

    def line(self) -> str:
        """One line for a terminal or a page: what the model does not know, or ``""``."""
        parts = []
        words = [word for word in self.words if word.kind != "character"]
        if words:
            shown = [f'"{word.text}" ([UNK])' if word.kind == "unknown"
                     else f'"{word.text}" (pieces {" ".join(word.pieces)})'
                     for word in words[:MAX_LISTED]]
            more = f" and {len(words) - MAX_LISTED:,} more" if len(words) > MAX_LISTED else ""
            parts.append("not in the vocabulary as whole words: " + ", ".join(shown) + more)
        if self.characters:
            shown = [f'"{word.text}"' for word in self.characters[:MAX_LISTED]]
            more = (f" and {len(self.characters) - MAX_LISTED:,} more"
                    if len(self.characters) > MAX_LISTED else "")
            parts.append("characters read as [UNK]: " + " ".join(shown) + more)
        if self.removed:
            parts.append("control characters dropped: " + " ".join(
                f"U+{ord(char):04X}" for char in self.removed[:MAX_LISTED]))
        return "; ".join(parts)


def unknown_words(tokenizer, text: str) -> UnknownWords:
    """The words and characters of ``text`` that ``tokenizer``'s vocabulary lacks.

    Inputs: a ``BertTokenizer`` (or one with its ``basic_tokenizer`` and
    ``wordpiece_tokenizer``), a text. Special tokens written in the text (``[MASK]``) are
    known by definition. A word counts once, however often it comes.
    """
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    basic, wordpiece = tokenizer.basic_tokenizer, tokenizer.wordpiece_tokenizer
    found: dict[str, UnknownWord] = {}
    for chunk, is_special, origins in basic.iter_chunks(text, with_origins=True):
        if is_special:
            continue
        for word in basic.split_chunk(chunk):
            if word.text in found:
                continue
            pieces = tuple(piece for piece, _, _ in wordpiece.split_word(word.text))
            if len(pieces) == 1 and pieces[0] != tokenizer.unk_token:
                continue
            start = origins[word.char_starts[0]]
            written = text[start:origins[word.char_ends[-1] - 1] + 1]
            if pieces == (tokenizer.unk_token,):
                kind = "character" if len(word.text) == 1 else "unknown"
            else:
                kind = "pieces"
            found[word.text] = UnknownWord(written, pieces, kind)
    removed = tuple(dict.fromkeys(char for char in text if not char.isspace()
                                  and unicodedata.category(char) in ("Cc", "Cf", "Co", "Cn")
                                  and not basic.clean_text(char).strip()))
    return UnknownWords(tuple(found.values()), removed)


def lowercase_mask(tokenizer, text: str) -> str | None:
    """The mask token written in another case (``[mask]``) in ``text``, or None.

    BERT's tokenizer knows ``[MASK]`` only as written; ``[mask]`` is read as three words.
    """
    mask = tokenizer.mask_token
    for match in re.finditer(re.escape(mask), text, re.IGNORECASE):
        if match.group() != mask:
            return match.group()
    return None
