"""Basic tokenization: BERT's text cleaning, lowercasing, accent stripping and punctuation split.

This is the first of BERT's two tokenization stages; the second, WordPiece, lives in
``wordpiece.py``. It turns raw text into words the way HuggingFace transformers' pure-Python
``BertTokenizer`` does, character for character (tests/parity/ checks it on 1,200 texts):

1. split out special tokens written literally in the text (``"[MASK]"`` stays one word);
2. clean: drop NUL, U+FFFD and every character of Unicode category C (controls Cc, formats
   Cf, surrogates Cs, private use Co, unassigned Cn) except tab, newline and carriage
   return; turn every whitespace character into a space;
3. put spaces around CJK ideographs, so that each becomes a word of its own;
4. split on whitespace and NFC-normalize each chunk;
5. per chunk: lowercase and strip accents (NFD, then drop the combining marks, category Mn);
6. cut every punctuation character out as a word of its own.

The reference ``BasicTokenizer`` of google-research/bert differs in four places: step 2
drops only Cc and Cf there, so private-use and unassigned code points stay inside their
word (which WordPiece then usually makes ``[UNK]``); it has no step 1 (``"[MASK]"`` in the
text becomes ``[``, ``mask``, ``]``) and no step 4 (with accents kept, ``e`` + U+0301 stays
two characters); accents are stripped exactly when lowercasing (no ``strip_accents``).

Every word keeps the characters of the original text it came from, so that encodings can
report offsets into the original string. See docs/tokenization.md.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator, Sequence
from typing import NamedTuple

from minibert.checks import check_bool

__all__ = [
    "BasicTokenizer",
    "Word",
    "is_chinese_char",
    "is_control",
    "is_punctuation",
    "is_whitespace",
]


def is_whitespace(char: str) -> bool:
    """Whether ``char`` is whitespace for BERT: space, tab, newline, CR or category Zs."""
    return char in " \t\n\r" or unicodedata.category(char) == "Zs"


def is_control(char: str) -> bool:
    """Whether ``char`` is dropped as a control character: category C*, but not tab, LF, CR.

    As HF transformers; Google's reference counts only Cc and Cf (see the module docstring).
    """
    # Tab, newline and carriage return are Cc too, but BERT treats them as whitespace.
    return char not in "\t\n\r" and unicodedata.category(char).startswith("C")


def is_punctuation(char: str) -> bool:
    """Whether ``char`` is punctuation: any ASCII non-alphanumeric symbol or category P*."""
    code_point = ord(char)
    # "$", "+", "^", "`", ... are symbols (S*) in Unicode, but BERT splits them off too.
    if 33 <= code_point <= 47 or 58 <= code_point <= 64 or 91 <= code_point <= 96:
        return True
    if 123 <= code_point <= 126:
        return True
    return unicodedata.category(char).startswith("P")


_CJK_RANGES = (
    (0x4E00, 0x9FFF),  # CJK Unified Ideographs
    (0x3400, 0x4DBF),  # Extension A
    (0x20000, 0x2A6DF),  # Extension B
    (0x2A700, 0x2B73F),  # Extension C
    (0x2B740, 0x2B81F),  # Extension D
    (0x2B820, 0x2CEAF),  # Extension E
    (0xF900, 0xFAFF),  # Compatibility Ideographs
    (0x2F800, 0x2FA1F),  # Compatibility Ideographs Supplement
)


def is_chinese_char(char: str) -> bool:
    """Whether ``char`` is a CJK ideograph (the ranges BERT's reference code uses).

    Hiragana, katakana and hangul are not included: those scripts separate words with
    spaces, so BERT treats them like any other letters.
    """
    code_point = ord(char)
    return any(low <= code_point <= high for low, high in _CJK_RANGES)


class Word(NamedTuple):
    """One word of basic tokenization and, per character, where in its chunk it came from.

    ``char_starts[k]:char_ends[k]`` is the span of chunk characters that the word's k-th
    character came from: usually one character (an accent that normalization removed
    belongs to no span), a character and its marks where NFC composed them.
    """

    text: str
    char_starts: Sequence[int]
    char_ends: Sequence[int]


class _CleaningTable(dict):
    """A ``str.translate`` table for cleaning (steps 2 and 3), filled one code point at a time.

    Maps a code point to ``None`` (drop it), ``" "`` (whitespace), ``" 字 "`` (a spaced-out CJK
    ideograph) or the character itself. ``str.translate`` calls ``__missing__`` for code points
    it has not seen yet, so each character is classified once per process.
    """

    def __init__(self, space_out_cjk: bool):
        super().__init__()
        self.space_out_cjk = space_out_cjk

    def __missing__(self, code_point: int) -> str | None:
        char = chr(code_point)
        if code_point == 0 or code_point == 0xFFFD or is_control(char):
            replacement = None
        elif is_whitespace(char):
            replacement = " "
        elif self.space_out_cjk and is_chinese_char(char):
            replacement = f" {char} "
        else:
            replacement = char
        self[code_point] = replacement
        return replacement


_CLEANING_TABLES = {True: _CleaningTable(space_out_cjk=True), False: _CleaningTable(False)}
_PUNCTUATION_CACHE: dict[str, bool] = {}
# ``\S+`` uses the same notion of whitespace as ``str.split()``; after cleaning, only the line
# and paragraph separators U+2028 / U+2029 (categories Zl, Zp) are left besides the space.
_CHUNK_PATTERN = re.compile(r"\S+")
_ASCII_PUNCTUATION = re.compile(r"[!-/:-@\[-`{-~]")


def _is_punctuation_cached(char: str) -> bool:
    result = _PUNCTUATION_CACHE.get(char)
    if result is None:
        result = _PUNCTUATION_CACHE[char] = is_punctuation(char)
    return result


class BasicTokenizer:
    """Split raw text into words the way BERT's reference ``BasicTokenizer`` does.

    Args:
        do_lower_case: lowercase every word (uncased BERT vocabularies).
        strip_accents: drop combining accents. ``None`` follows ``do_lower_case``, as in
            HF transformers; ``False`` keeps accents even when lowercasing.
        tokenize_chinese_chars: make every CJK ideograph a word of its own.
        never_split: special tokens such as ``"[MASK]"``: where they appear literally in the
            text they become one word, neither lowercased nor split at punctuation.
    """

    def __init__(
        self,
        do_lower_case: bool = True,
        strip_accents: bool | None = None,
        tokenize_chinese_chars: bool = True,
        never_split: Iterable[str] = (),
    ):
        self.do_lower_case = check_bool("do_lower_case", do_lower_case)
        self.strip_accents = (None if strip_accents is None
                              else check_bool("strip_accents", strip_accents))
        self.tokenize_chinese_chars = check_bool("tokenize_chinese_chars", tokenize_chinese_chars)
        if isinstance(never_split, str):
            raise TypeError(f"never_split must be a collection of str, got the str "
                            f"{never_split!r}")
        self.never_split = frozenset(never_split)
        for token in self.never_split:
            if not isinstance(token, str) or not token:
                raise TypeError(f"never_split must hold non-empty strings, got {token!r}")
        if self.do_lower_case:
            self._remove_accents = self.strip_accents is not False
        else:
            self._remove_accents = bool(self.strip_accents)
        self._cleaning_table = _CLEANING_TABLES[self.tokenize_chinese_chars]
        # Longest first, so that a special token that starts another one cannot shadow it.
        alternatives = sorted(self.never_split, key=lambda token: (-len(token), token))
        self._special_pattern = (
            re.compile("|".join(re.escape(token) for token in alternatives))
            if alternatives
            else None
        )
        # Most texts contain no "[" at all: checking that first skips the regex search.
        self._special_first_chars = frozenset(token[0] for token in self.never_split)

    def tokenize(self, text: str) -> list[str]:
        """Split ``text`` into words, e.g. ``"Don't!"`` -> ``['don', "'", 't', '!']``."""
        words = []
        for chunk, is_special, _ in self.iter_chunks(text):
            if is_special:
                words.append(chunk)
            else:
                words.extend(word.text for word in self.split_chunk(chunk))
        return words

    def split_special_tokens(self, text: str) -> list[tuple[str, bool, int]]:
        """Cut the special tokens written literally in ``text`` out of it (step 1).

        Returns ``(segment, is_special, start)`` in order, ``start`` being the segment's
        index in ``text``; e.g. ``"a[MASK]b"`` -> ``[("a", False, 0), ("[MASK]", True, 1),
        ("b", False, 7)]``.
        """
        if not isinstance(text, str):
            raise TypeError(f"text must be a str, got {type(text).__name__}: {text!r:.80}")
        if self._special_pattern is None or not any(
            char in text for char in self._special_first_chars
        ):
            return [(text, False, 0)]
        segments = []
        start = 0
        for match in self._special_pattern.finditer(text):
            segments.append((text[start : match.start()], False, start))
            segments.append((match.group(), True, match.start()))
            start = match.end()
        segments.append((text[start:], False, start))
        return segments

    def clean_text(self, text: str) -> str:
        """Drop control characters, map whitespace to spaces, space out CJK (steps 2, 3)."""
        return text.translate(self._cleaning_table)

    def iter_chunks(
        self, text: str, with_origins: bool = False
    ) -> Iterator[tuple[str, bool, Sequence[int] | None]]:
        """Clean ``text`` and yield its whitespace-separated chunks (steps 1 to 3).

        Yields ``(chunk, is_special, origins)``: a literal special token has ``is_special``
        True; ``origins[k]`` is the index in ``text`` of the chunk's k-th character when
        ``with_origins`` is set (else None). Chunks go to ``split_chunk`` for the rest.
        """
        for segment, is_special, start in self.split_special_tokens(text):
            if is_special:
                origins = range(start, start + len(segment)) if with_origins else None
                yield segment, True, origins
                continue
            cleaned = self.clean_text(segment)
            if not with_origins:
                for chunk in cleaned.split():
                    yield chunk, False, None
                continue
            origins = self._cleaned_origins(segment, cleaned, start)
            for match in _CHUNK_PATTERN.finditer(cleaned):
                yield match.group(), False, origins[match.start() : match.end()]

    def _cleaned_origins(self, segment: str, cleaned: str, start: int) -> Sequence[int]:
        """For each character of ``cleaned``, its index in the text ``segment`` starts at."""
        if segment.isascii() and len(cleaned) == len(segment):
            return range(start, start + len(segment))  # nothing was dropped or inserted
        origins = []
        for index, char in enumerate(segment, start):
            replacement = self._cleaning_table[ord(char)]
            if replacement:
                origins.extend([index] * len(replacement))
        return origins

    def split_chunk(self, chunk: str) -> list[Word]:
        """Normalize one whitespace-free chunk and split it at punctuation (steps 4 to 6).

        Returns the chunk's words; each carries, per character, the span of chunk characters
        it came from, so offsets survive lowercasing and accent stripping.
        """
        composed = unicodedata.normalize("NFC", chunk)
        if composed in self.never_split:
            return [Word(composed, [0] * len(composed), [len(chunk)] * len(composed))]
        if chunk.isascii():
            normalized = chunk.lower() if self.do_lower_case else chunk
            char_starts, char_ends = range(len(chunk)), range(1, len(chunk) + 1)
            if not _ASCII_PUNCTUATION.search(chunk):
                return [Word(normalized, char_starts, char_ends)]
        else:
            normalized = self._normalize(composed)
            char_starts, char_ends = self._align(chunk, normalized)
        return self._split_on_punctuation(normalized, char_starts, char_ends)

    def _normalize(self, text: str) -> str:
        """Lowercase and strip accents as configured (step 5)."""
        if self.do_lower_case:
            text = text.lower()
        if self._remove_accents:
            decomposed = unicodedata.normalize("NFD", text)
            text = "".join(char for char in decomposed if unicodedata.category(char) != "Mn")
        return text

    def _align(self, chunk: str, normalized: str) -> tuple[list[int], list[int]]:
        """For each character of ``normalized``, the span of chunk characters it came from.

        Normalizing character by character almost always gives the same string as normalizing
        the whole chunk; then each character comes from one chunk character and offsets match
        HF's fast tokenizer. Otherwise (context-dependent lowercasing such as a word-final
        sigma, characters that NFC composes) fall back to position by position for equal
        lengths, then to composition clusters (a character and the marks after it), and
        finally to the whole chunk.
        """
        pieces = [(index, index + 1, self._normalize(char)) for index, char in enumerate(chunk)]
        char_starts = [start for start, _, piece in pieces for _ in piece]
        if "".join(piece for _, _, piece in pieces) == normalized or (
            len(char_starts) == len(normalized)
        ):
            return char_starts, [start + 1 for start in char_starts]
        pieces = [
            (start, end, self._normalize(unicodedata.normalize("NFC", chunk[start:end])))
            for start, end in _composition_clusters(chunk)
        ]
        if "".join(piece for _, _, piece in pieces) == normalized:
            char_starts = [start for start, _, piece in pieces for _ in piece]
            char_ends = [end for _, end, piece in pieces for _ in piece]
            return char_starts, char_ends
        return [0] * len(normalized), [len(chunk)] * len(normalized)

    def _split_on_punctuation(self, normalized, char_starts, char_ends):
        """Cut punctuation characters out of ``normalized`` as words of their own (step 6)."""
        spans = []
        word_start = None
        for position, char in enumerate(normalized):
            if _is_punctuation_cached(char):
                if word_start is not None:
                    spans.append((word_start, position))
                    word_start = None
                spans.append((position, position + 1))
            elif word_start is None:
                word_start = position
        if word_start is not None:
            spans.append((word_start, len(normalized)))
        return [
            Word(normalized[start:end], char_starts[start:end], char_ends[start:end])
            for start, end in spans
        ]


def _composition_clusters(chunk: str) -> Iterator[tuple[int, int]]:
    """Spans of ``chunk`` that NFC may compose: a character and the marks after it."""
    start = 0
    for index in range(1, len(chunk) + 1):
        if index == len(chunk) or not _continues_cluster(chunk[index]):
            yield start, index
            start = index


def _continues_cluster(char: str) -> bool:
    # Combining marks attach to the character before them; so do Hangul medial vowels and
    # final consonants (U+1160-U+11FF), which NFC composes into a syllable.
    return (
        unicodedata.combining(char) != 0
        or unicodedata.category(char).startswith("M")
        or 0x1160 <= ord(char) <= 0x11FF
    )
