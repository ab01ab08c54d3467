"""BertTokenizer: text to input_ids, token_type_ids and attention_mask, and back.

Tokenization runs in two stages, each in its own file: basic tokenization into words
(``basic.py``) and WordPiece into vocabulary pieces (``wordpiece.py``).
This file holds the vocabulary and everything around it: special tokens, pairs, truncation,
padding, offsets, decoding, saving. Behaviour follows HuggingFace transformers' slow Python
``BertTokenizer`` token for token; docs/tokenization.md lists the few deliberate differences.

Dimension legend: B batch, T sequence length.
"""

from __future__ import annotations

import io
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import NamedTuple

import numpy as np

from minibert.checks import check_int, check_str, is_int
from minibert.io.fileio import (
    atomic_write_json,
    atomic_write_text,
    existing_folder,
    read_bounded,
    read_json_object,
)
from minibert.tokenization.basic import BasicTokenizer
from minibert.tokenization.wordpiece import WordpieceTokenizer

__all__ = ["BertTokenizer", "clean_up_tokenization", "load_tokenizer", "load_vocab"]

VOCAB_FILE_NAME = "vocab.txt"
TOKENIZER_CONFIG_NAME = "tokenizer_config.json"
TOKENIZER_FILE_NAME = "tokenizer.json"  # the fast tokenizer's file (transformers 5 saves only it)
MAX_VOCAB_BYTES = 64 * 2**20  # BERT's vocab.txt is 0.2 MB, a 250,000-token one about 4 MB
TRUNCATION_STRATEGIES = ("longest_first", "only_first", "only_second", "do_not_truncate")
PADDING_STRATEGIES = ("longest", "max_length", "do_not_pad")


def load_vocab(vocab_file: str | os.PathLike) -> list[str]:
    """Read a BERT ``vocab.txt``: one token per line, the line number (from 0) is its id.

    Lines end in "\\n", "\\r\\n" or "\\r", as Python's text files read them (and HF's).
    """
    path = Path(vocab_file)
    if not path.is_file():
        raise ValueError(
            f"vocab file {str(vocab_file)!r} does not exist or is not a file; "
            "expected a BERT vocab.txt with one token per line"
        )
    raw = read_bounded(path, "vocab file", MAX_VOCAB_BYTES)
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as error:
        line = raw.count(b"\n", 0, error.start) + 1
        raise ValueError(
            f"vocab file {str(vocab_file)!r} is not UTF-8 text: line {line} holds the byte "
            f"{raw[error.start:error.start + 1]!r}; expected one token per line in UTF-8"
        ) from None
    # The same lines as iterating over a text-mode file: universal newlines.
    return [line.rstrip("\n") for line in io.StringIO(text, newline=None)]


def clean_up_tokenization(text: str) -> str:
    """Undo the spaces that joining tokens put before punctuation and English contractions.

    The same replacements as HF transformers' ``clean_up_tokenization``, so that
    ``"hello , world ! isn ' t"`` decodes to ``"hello, world! isn't"``.
    """
    for spaced, joined in (
        (" .", "."),
        (" ?", "?"),
        (" !", "!"),
        (" ,", ","),
        (" ' ", "'"),
        (" n't", "n't"),
        (" 'm", "'m"),
        (" 's", "'s"),
        (" 've", "'ve"),
        (" 're", "'re"),
    ):
        text = text.replace(spaced, joined)
    return text


class _ChunkPieces(NamedTuple):
    """The WordPiece tokens of one whitespace-free chunk of text, as kept in the cache."""

    tokens: tuple[str, ...]
    ids: tuple[int, ...]
    spans: tuple[tuple[int, int], ...]  # (start, end) of each token in the chunk
    word_numbers: tuple[int, ...]  # which basic word of the chunk each token belongs to
    num_words: int


class _Sequence(NamedTuple):
    """One encoded text before special tokens: parallel lists, one entry per token."""

    ids: list[int]
    offsets: list[tuple[int, int]]
    word_ids: list[int]

    def head(self, length: int) -> _Sequence:
        return _Sequence(self.ids[:length], self.offsets[:length], self.word_ids[:length])


def _special_token_id(attribute: str) -> property:
    """A read-only property: the vocabulary id of the special token named by ``attribute``
    (``unk_token_id`` reads ``unk_token``), as HF's tokenizers have them."""
    return property(lambda tokenizer: tokenizer.vocab[getattr(tokenizer, attribute)],
                    doc=f"The id of ``{attribute}`` in the vocabulary.")


class BertTokenizer:
    """BERT's WordPiece tokenizer over a fixed vocabulary.

    Args:
        vocab: path of a BERT ``vocab.txt`` (one token per line, line k has id k), or the
            tokens themselves in id order.
        do_lower_case: lowercase the text (True for uncased vocabularies).
        strip_accents: drop accents; ``None`` follows ``do_lower_case``.
        tokenize_chinese_chars: make every CJK ideograph a word of its own.
        max_input_chars_per_word: longer words become ``[UNK]`` (100 as HF; Google used 200).
        unk_token, sep_token, pad_token, cls_token, mask_token: the special tokens; each must
            be in the vocabulary.
        additional_special_tokens: more tokens to keep whole in text and to skip in
            ``decode(..., skip_special_tokens=True)``.
        model_max_length: the ``max_length`` used when truncating or padding to max length
            without one (512, BERT's number of positions).
        cache_size: how many distinct chunks of text keep their WordPiece split in memory.

    Example::

        tok = BertTokenizer("vocab.txt")
        tok.tokenize("unbelievably")        # ['un', '##bel', '##ie', '##va', '##bly']
        enc = tok("sentence A", "sentence B", max_length=64, truncation=True,
                  padding="max_length", return_tensors="np")
        enc["input_ids"].shape              # (1, 64); also token_type_ids, attention_mask
    """

    def __init__(
        self,
        vocab: str | os.PathLike | Sequence[str],
        do_lower_case: bool = True,
        *,
        strip_accents: bool | None = None,
        tokenize_chinese_chars: bool = True,
        max_input_chars_per_word: int = 100,
        unk_token: str = "[UNK]",
        sep_token: str = "[SEP]",
        pad_token: str = "[PAD]",
        cls_token: str = "[CLS]",
        mask_token: str = "[MASK]",
        additional_special_tokens: Iterable[str] = (),
        model_max_length: int = 512,
        cache_size: int = 65536,
    ):
        if isinstance(vocab, (str, os.PathLike)):
            tokens = load_vocab(vocab)
            source = str(vocab)

            def where(index):
                return f"vocab file {source!r} line {index + 1}"

        elif isinstance(vocab, Sequence) and not isinstance(vocab, bytes):
            tokens = list(vocab)

            def where(index):
                return f"vocab[{index}]"

        else:
            raise TypeError(
                "vocab must be the path of a vocab.txt or a sequence of tokens, "
                f"got {type(vocab).__name__}"
            )
        self.vocab = _index_tokens(tokens, where)
        self.ids_to_tokens = dict(enumerate(tokens))

        named_specials = {
            "unk_token": unk_token,
            "sep_token": sep_token,
            "pad_token": pad_token,
            "cls_token": cls_token,
            "mask_token": mask_token,
        }
        if isinstance(additional_special_tokens, str):
            raise TypeError(f"additional_special_tokens must be a list of str, got the str "
                            f"{additional_special_tokens!r}")
        additional_special_tokens = list(additional_special_tokens)
        for index, token in enumerate(additional_special_tokens):
            named_specials[f"additional_special_tokens[{index}]"] = token
        for name, token in named_specials.items():
            if not isinstance(token, str) or not token:
                raise TypeError(f"{name} must be a non-empty str, got {token!r}")
        self.unk_token = unk_token
        self.sep_token = sep_token
        self.pad_token = pad_token
        self.cls_token = cls_token
        self.mask_token = mask_token
        self.additional_special_tokens = additional_special_tokens
        # Same order as HF transformers' all_special_tokens.
        self.all_special_tokens = [unk_token, sep_token, pad_token, cls_token, mask_token]
        self.all_special_tokens += [
            token
            for token in self.additional_special_tokens
            if token not in self.all_special_tokens
        ]
        missing = [token for token in self.all_special_tokens if token not in self.vocab]
        if missing:
            origin = f"vocab file {source!r}" if isinstance(vocab, (str, os.PathLike)) else "vocab"
            raise ValueError(
                f"{origin} lacks the special tokens {missing}; a BERT vocabulary must contain "
                f"{self.all_special_tokens}"
            )
        self.all_special_ids = [self.vocab[token] for token in self.all_special_tokens]

        self.model_max_length = check_int("model_max_length", model_max_length, minimum=1)
        self.cache_size = check_int("cache_size", cache_size, minimum=1)
        self.basic_tokenizer = BasicTokenizer(
            do_lower_case=do_lower_case,
            strip_accents=strip_accents,
            tokenize_chinese_chars=tokenize_chinese_chars,
            never_split=self.all_special_tokens,
        )
        self.do_lower_case = self.basic_tokenizer.do_lower_case
        self.strip_accents = self.basic_tokenizer.strip_accents
        self.tokenize_chinese_chars = self.basic_tokenizer.tokenize_chinese_chars
        self.wordpiece_tokenizer = WordpieceTokenizer(
            self.vocab, unk_token=unk_token, max_input_chars_per_word=max_input_chars_per_word
        )
        self._chunk_cache: dict[str, _ChunkPieces] = {}

    # ----------------------------------------------------------------- vocabulary
    @property
    def vocab_size(self) -> int:
        """V, the number of tokens in the vocabulary."""
        return len(self.vocab)

    def __len__(self) -> int:
        return len(self.vocab)

    def get_vocab(self) -> dict[str, int]:
        """A copy of the vocabulary, token -> id."""
        return dict(self.vocab)

    unk_token_id = _special_token_id("unk_token")
    sep_token_id = _special_token_id("sep_token")
    pad_token_id = _special_token_id("pad_token")
    cls_token_id = _special_token_id("cls_token")
    mask_token_id = _special_token_id("mask_token")

    def __repr__(self) -> str:
        return (
            f"BertTokenizer(vocab_size={self.vocab_size}, do_lower_case={self.do_lower_case}, "
            f"strip_accents={self.strip_accents}, "
            f"max_input_chars_per_word={self.wordpiece_tokenizer.max_input_chars_per_word})"
        )

    # ----------------------------------------------------------------- text -> tokens
    def tokenize(self, text: str) -> list[str]:
        """Split ``text`` into WordPiece tokens, without [CLS]/[SEP].

        ``tok.tokenize("Unbelievably, rainforests!")`` gives
        ``['un', '##bel', '##ie', '##va', '##bly', ',', 'rainforest', '##s', '!']`` with BERT's
        uncased vocabulary.
        """
        tokens = []
        for chunk, is_special, _ in self.basic_tokenizer.iter_chunks(text):
            if is_special:
                tokens.append(chunk)
            else:
                tokens.extend(self._chunk_pieces(chunk).tokens)
        return tokens

    def convert_tokens_to_ids(self, tokens: str | Sequence[str]) -> int | list[int]:
        """Token(s) to id(s); a token not in the vocabulary maps to ``unk_token_id``."""
        unk_id = self.unk_token_id
        if isinstance(tokens, str):
            return self.vocab.get(tokens, unk_id)
        ids = []
        for token in tokens:
            if not isinstance(token, str):
                raise TypeError(f"tokens must be str, got {type(token).__name__}: {token!r}")
            ids.append(self.vocab.get(token, unk_id))
        return ids

    def convert_ids_to_tokens(
        self, ids: int | Sequence[int] | np.ndarray, skip_special_tokens: bool = False
    ) -> str | list[str]:
        """Id(s) to token(s). ``ids`` may be an int, a list or a 1-D integer array (T,)."""
        if is_int(ids):
            return self.ids_to_tokens[self._check_id(ids)]
        skipped = set(self.all_special_ids) if skip_special_tokens else ()
        return [
            self.ids_to_tokens[index]
            for index in map(self._check_id, _as_id_sequence(ids))
            if index not in skipped
        ]

    def _check_id(self, token_id) -> int:
        if not is_int(token_id):
            raise TypeError(f"ids must hold integers, got {type(token_id).__name__}: {token_id!r}")
        token_id = int(token_id)
        if not 0 <= token_id < len(self.ids_to_tokens):
            raise IndexError(
                f"ids: token id {token_id} is out of range; allowed 0 <= id < {self.vocab_size}"
            )
        return token_id

    def clear_cache(self) -> None:
        """Forget the cached WordPiece splits (they are rebuilt on demand)."""
        self._chunk_cache.clear()

    def _chunk_pieces(self, chunk: str) -> _ChunkPieces:
        """The WordPiece split of one whitespace-free chunk of cleaned text, cached."""
        cached = self._chunk_cache.get(chunk)
        if cached is not None:
            return cached
        tokens, spans, word_numbers = [], [], []
        words = self.basic_tokenizer.split_chunk(chunk)
        for word_number, word in enumerate(words):
            for piece, start, end in self.wordpiece_tokenizer.split_word(word.text):
                tokens.append(piece)
                spans.append((word.char_starts[start], word.char_ends[end - 1]))
                word_numbers.append(word_number)
        pieces = _ChunkPieces(
            tuple(tokens),
            tuple(self.vocab[token] for token in tokens),
            tuple(spans),
            tuple(word_numbers),
            len(words),
        )
        if len(self._chunk_cache) >= self.cache_size:
            # Forget the oldest entry: dicts keep insertion order.
            del self._chunk_cache[next(iter(self._chunk_cache))]
        self._chunk_cache[chunk] = pieces
        return pieces

    def _encode_text(self, text: str, with_offsets: bool, with_word_ids: bool) -> _Sequence:
        """Ids of one text, with offsets into it and word numbers when asked for."""
        ids: list[int] = []
        offsets: list[tuple[int, int]] = []
        word_ids: list[int] = []
        num_words = 0
        for chunk, is_special, origins in self.basic_tokenizer.iter_chunks(text, with_offsets):
            if is_special:
                ids.append(self.vocab[chunk])
                if with_offsets:
                    offsets.append((origins[0], origins[-1] + 1))
                if with_word_ids:
                    word_ids.append(num_words)
                num_words += 1
                continue
            pieces = self._chunk_pieces(chunk)
            ids.extend(pieces.ids)
            if with_offsets:
                offsets.extend(
                    (origins[start], origins[end - 1] + 1) for start, end in pieces.spans
                )
            if with_word_ids:
                word_ids.extend(num_words + number for number in pieces.word_numbers)
            num_words += pieces.num_words
        return _Sequence(ids, offsets, word_ids)

    # ----------------------------------------------------------------- encoding
    def __call__(
        self,
        text: str | Sequence[str],
        text_pair: str | Sequence[str] | None = None,
        *,
        add_special_tokens: bool = True,
        padding: bool | str = False,
        truncation: bool | str | None = None,
        max_length: int | None = None,
        return_tensors: str | None = None,
        return_token_type_ids: bool = True,
        return_attention_mask: bool = True,
        return_special_tokens_mask: bool = False,
        return_offsets_mapping: bool = False,
        return_word_ids: bool = False,
    ) -> dict:
        """Encode a text, a pair of texts, or a batch of either, for the model.

        Args:
            text: a string, or a list of B strings (a batch).
            text_pair: the second segment: a string, or a list of B strings for a batch.
            add_special_tokens: build ``[CLS] A [SEP]`` / ``[CLS] A [SEP] B [SEP]``.
            padding: ``True`` or ``"longest"`` pads to the longest sequence of the batch,
                ``"max_length"`` to ``max_length``; ``False`` / ``"do_not_pad"`` does not pad.
            truncation: ``True`` or ``"longest_first"`` removes tokens one at a time from the
                end of the longer segment (from ``text_pair`` on a tie); ``"only_first"`` /
                ``"only_second"`` cut one segment only; ``False`` / ``"do_not_truncate"``
                never cut. ``None`` (default) means ``"longest_first"`` when ``max_length``
                is given and ``padding`` is off, as in HF transformers.
            max_length: length after truncation / padding, special tokens included;
                ``model_max_length`` when truncation or max-length padding needs one.
            return_tensors: ``"np"`` for int64 arrays with a batch axis, (B, T); ``None``
                for lists (a flat list for a single text).
            return_special_tokens_mask: add ``special_tokens_mask``, 1 at the added
                [CLS]/[SEP] and padding, 0 at text tokens.
            return_offsets_mapping: add ``offset_mapping``: per token, its ``(start, end)``
                character span in the original text it came from (``text`` or
                ``text_pair``), ``(0, 0)`` for added special tokens and padding; arrays
                (B, T, 2).
            return_word_ids: add ``word_ids``: per token, the number of the word of its
                segment it belongs to (counting from 0 in each segment; a word is what
                basic tokenization yields, so punctuation marks are words of their own),
                ``None`` for added special tokens and padding (-1 in arrays). All pieces of
                a word share its number, so the first piece of each word is where the
                number changes.

        Returns:
            a dict with ``input_ids``, ``token_type_ids``, ``attention_mask`` (B, T) and the
            optional entries asked for.
        """
        is_batch = isinstance(text, (list, tuple))
        texts = _check_texts("text", text, is_batch)
        pairs = None
        if text_pair is not None:
            pairs = _check_texts("text_pair", text_pair, is_batch)
            if len(pairs) != len(texts):
                raise ValueError(
                    f"text_pair must have one entry per text: got {len(pairs)} pairs for "
                    f"{len(texts)} texts"
                )
        padding_strategy = _padding_strategy(padding)
        truncation_strategy = _truncation_strategy(truncation, max_length, padding_strategy)
        if max_length is not None:
            check_int("max_length", max_length, minimum=1)
        elif truncation_strategy != "do_not_truncate" or padding_strategy == "max_length":
            max_length = self.model_max_length
        if return_tensors not in (None, "np"):
            raise ValueError(f"return_tensors must be 'np' or None, got {return_tensors!r}")
        if truncation_strategy == "only_second" and pairs is None:
            raise ValueError("truncation='only_second' needs text_pair, got text_pair=None")
        num_special = (3 if pairs is not None else 2) if add_special_tokens else 0
        if truncation_strategy != "do_not_truncate" and max_length < num_special:
            raise ValueError(
                f"max_length={max_length} leaves no room for the {num_special} special tokens "
                f"every {'pair' if pairs is not None else 'sequence'} needs; "
                f"allowed: max_length >= {num_special}"
            )

        rows = []
        for index, first_text in enumerate(texts):
            first = self._encode_text(first_text, return_offsets_mapping, return_word_ids)
            second = None
            if pairs is not None:
                second = self._encode_text(pairs[index], return_offsets_mapping, return_word_ids)
            if truncation_strategy != "do_not_truncate":
                first, second = _truncate(
                    first, second, max_length - num_special, truncation_strategy
                )
            rows.append(self._build_row(first, second, add_special_tokens))

        if padding_strategy == "longest":
            target_length = max((len(row["input_ids"]) for row in rows), default=0)
        elif padding_strategy == "max_length":
            target_length = max_length
        else:
            target_length = 0
        for row in rows:
            self._pad_row(row, target_length)

        wanted = ["input_ids"]
        wanted += ["token_type_ids"] if return_token_type_ids else []
        wanted += ["attention_mask"] if return_attention_mask else []
        wanted += ["special_tokens_mask"] if return_special_tokens_mask else []
        wanted += ["offset_mapping"] if return_offsets_mapping else []
        wanted += ["word_ids"] if return_word_ids else []
        encoding = {key: [row[key] for row in rows] for key in wanted}
        if return_tensors == "np":
            return {key: _to_array(key, values) for key, values in encoding.items()}
        if not is_batch:
            return {key: values[0] for key, values in encoding.items()}
        return encoding

    def encode(
        self,
        text: str,
        text_pair: str | None = None,
        *,
        add_special_tokens: bool = True,
        truncation: bool | str | None = None,
        max_length: int | None = None,
    ) -> list[int]:
        """The ``input_ids`` of one text (or pair) as a list, e.g. ``[101, 7592, 102]``."""
        check_str("text", text)
        encoding = self(
            text,
            text_pair,
            add_special_tokens=add_special_tokens,
            truncation=truncation,
            max_length=max_length,
            return_token_type_ids=False,
            return_attention_mask=False,
        )
        return encoding["input_ids"]

    def _build_row(self, first: _Sequence, second: _Sequence | None, add_special_tokens):
        """Join one or two segments into a model input, with [CLS]/[SEP] when asked for."""
        segments = [first] if second is None else [first, second]
        row = {key: [] for key in ("input_ids", "token_type_ids", "special_tokens_mask")}
        row.update(offset_mapping=[], word_ids=[], attention_mask=[])
        if add_special_tokens:
            self._append_special(row, self.cls_token_id, token_type=0)
        for token_type, segment in enumerate(segments):
            # HF's slow tokenizer gives both segments type 0 when no special tokens are added.
            token_type = token_type if add_special_tokens else 0
            row["input_ids"] += segment.ids
            row["token_type_ids"] += [token_type] * len(segment.ids)
            row["special_tokens_mask"] += [0] * len(segment.ids)
            row["offset_mapping"] += segment.offsets
            row["word_ids"] += segment.word_ids
            if add_special_tokens:
                self._append_special(row, self.sep_token_id, token_type)
        row["attention_mask"] = [1] * len(row["input_ids"])
        return row

    @staticmethod
    def _append_special(row, token_id, token_type):
        row["input_ids"].append(token_id)
        row["token_type_ids"].append(token_type)
        row["special_tokens_mask"].append(1)
        row["offset_mapping"].append((0, 0))
        row["word_ids"].append(None)

    def _pad_row(self, row, target_length):
        """Pad one row on the right up to ``target_length`` (longer rows stay as they are)."""
        missing = target_length - len(row["input_ids"])
        if missing <= 0:
            return
        row["input_ids"] += [self.pad_token_id] * missing
        row["token_type_ids"] += [0] * missing
        row["attention_mask"] += [0] * missing
        row["special_tokens_mask"] += [1] * missing
        row["offset_mapping"] += [(0, 0)] * missing
        row["word_ids"] += [None] * missing

    # ----------------------------------------------------------------- ids -> text
    def decode(
        self,
        ids: int | Sequence[int] | np.ndarray,
        skip_special_tokens: bool = False,
        clean_up_tokenization_spaces: bool = True,
    ) -> str:
        """Turn ids (T,) back into text: join the tokens, glue ``##`` pieces to their word.

        With ``clean_up_tokenization_spaces`` the spaces before punctuation and inside
        English contractions are removed (see ``clean_up_tokenization``). Lowercasing,
        accents and the original spacing are not recovered.
        """
        tokens = self.convert_ids_to_tokens(ids, skip_special_tokens=skip_special_tokens)
        if isinstance(tokens, str):
            tokens = [tokens]
        text = " ".join(tokens).replace(" ##", "").strip()
        return clean_up_tokenization(text) if clean_up_tokenization_spaces else text

    def batch_decode(self, sequences, skip_special_tokens: bool = False, **kwargs) -> list[str]:
        """``decode`` for each row of a batch, a list of id lists or an array (B, T)."""
        if isinstance(sequences, np.ndarray) and sequences.ndim != 2:
            raise ValueError(f"sequences must be a 2-D array (B, T), got shape {sequences.shape}")
        return [self.decode(row, skip_special_tokens, **kwargs) for row in sequences]

    # ----------------------------------------------------------------- files
    def save_vocabulary(self, directory: str | os.PathLike) -> str:
        """Write ``directory/vocab.txt`` atomically (one token per line, in id order).

        Returns the path of the written file.
        """
        directory = Path(directory)
        if directory.exists() and not directory.is_dir():
            raise ValueError(f"directory {str(directory)!r} exists and is not a directory")
        path = directory / VOCAB_FILE_NAME
        tokens = [self.ids_to_tokens[index] for index in range(self.vocab_size)]
        atomic_write_text(path, "".join(token + "\n" for token in tokens))
        return str(path)

    def save_pretrained(self, directory: str | os.PathLike, *,
                        model_max_length: int | None = None) -> str:
        """Write ``vocab.txt`` and an HF-style ``tokenizer_config.json`` into ``directory``.

        The file holds every setting of the constructor (casing, accents, CJK, special
        tokens, ``max_input_chars_per_word``, ``model_max_length``), so that
        ``BertTokenizer.from_pretrained(directory)`` builds the same tokenizer, and HF
        transformers' ``BertTokenizer.from_pretrained`` one with the same settings.
        ``model_max_length`` writes another limit than the tokenizer's own (a model saved
        beside it that reads fewer positions). Returns the directory.
        """
        if model_max_length is None:
            model_max_length = self.model_max_length
        model_max_length = check_int("model_max_length", model_max_length, minimum=1)
        self.save_vocabulary(directory)
        settings = {
            "tokenizer_class": "BertTokenizer",
            "do_lower_case": self.do_lower_case,
            "strip_accents": self.strip_accents,
            "tokenize_chinese_chars": self.tokenize_chinese_chars,
            "max_input_chars_per_word": self.wordpiece_tokenizer.max_input_chars_per_word,
            "model_max_length": model_max_length,
            **{name: getattr(self, name) for name in _SPECIAL_TOKEN_DEFAULTS},
            "additional_special_tokens": self.additional_special_tokens,
            # HF's defaults, written out so that HF reads exactly what minibert does.
            "do_basic_tokenize": True,
            "never_split": None,
            "clean_up_tokenization_spaces": True,
        }
        atomic_write_json(Path(directory) / TOKENIZER_CONFIG_NAME, settings)
        return str(directory)

    @classmethod
    def from_pretrained(cls, directory: str | os.PathLike, **overrides) -> BertTokenizer:
        """Load ``directory/vocab.txt`` with the settings of its ``tokenizer_config.json``.

        Reads the folders ``save_pretrained`` writes and those of HF transformers (4 and 5:
        special tokens as plain strings or as HF's ``{"content": ...}`` objects, extra
        special tokens under ``additional_special_tokens`` or ``extra_special_tokens``); a
        folder with only ``vocab.txt`` gets the defaults. Keyword arguments override the
        file's settings (e.g. ``do_lower_case=False``). Settings minibert cannot follow
        (``do_basic_tokenize: false``, a ``never_split`` list) raise ValueError rather
        than being ignored.
        """
        directory = existing_folder(directory, "tokenizer folder", VOCAB_FILE_NAME, "directory")
        vocab, read_from = directory / VOCAB_FILE_NAME, {}
        if not vocab.exists() and (directory / TOKENIZER_FILE_NAME).exists():
            # transformers 5 saves tokenizer.json (the fast tokenizer) and no vocab.txt
            vocab, read_from = _wordpiece_of_tokenizer_file(directory / TOKENIZER_FILE_NAME)
        elif not vocab.exists():
            raise FileNotFoundError(
                f"folder {str(directory)!r} has no {VOCAB_FILE_NAME}; write one with "
                f"tokenizer.save_pretrained(folder) or model.save_pretrained(folder, tokenizer) "
                f"(a WordPiece {TOKENIZER_FILE_NAME}, as transformers 5 saves, is read too)")
        settings_file = directory / TOKENIZER_CONFIG_NAME
        if not settings_file.exists():
            return cls(vocab, **{**read_from, **overrides})
        settings = {**read_from, **_settings_from_file(settings_file)}
        try:
            return cls(vocab, **{**settings, **overrides})
        except (TypeError, ValueError) as error:
            kind = TypeError if isinstance(error, TypeError) else ValueError
            raise kind(f"{error} (settings read from {str(settings_file)!r})") from None

    # ----------------------------------------------------------------- training
    @classmethod
    def train(cls, texts: Iterable[str], vocab_size: int = 2000, **kwargs) -> BertTokenizer:
        """Learn a WordPiece vocabulary from ``texts`` and return a tokenizer that uses it.

        See ``minibert.tokenization.trainer.WordPieceTrainer`` for the algorithm and its
        settings (``min_frequency``, ``special_tokens``, and the normalisation:
        ``do_lower_case``, ``strip_accents``, ``tokenize_chinese_chars``,
        ``max_input_chars_per_word``, which the tokenizer then applies too); use it
        directly to inspect the merges. Special tokens come first, so ``[PAD]`` gets id 0.
        Other keyword arguments go to the constructor (e.g. ``model_max_length``).
        """
        from minibert.tokenization.trainer import NORMALIZATION, WordPieceTrainer

        training = {name: kwargs.pop(name) for name in ("min_frequency", "special_tokens")
                    if name in kwargs}
        shared = {name: kwargs[name] for name in NORMALIZATION if name in kwargs}
        trainer = WordPieceTrainer(vocab_size=vocab_size, **training, **shared)
        vocab = trainer.train(texts)
        named = {kwargs.get(name, default) for name, default in _SPECIAL_TOKEN_DEFAULTS.items()}
        kwargs.setdefault("additional_special_tokens",
                          [token for token in trainer.special_tokens if token not in named])
        return cls(vocab, **kwargs)


def load_tokenizer(directory: str | os.PathLike) -> BertTokenizer:
    """The BertTokenizer of a model folder: ``BertTokenizer.from_pretrained(directory)``.

    What this adds is the folder check of a *model* folder (a missing folder, or a file
    given instead, is named as a model folder); vocab.txt and tokenizer_config.json are
    read as ``from_pretrained`` reads them, settings and all.
    """
    return BertTokenizer.from_pretrained(existing_folder(directory, "model folder"))


_SPECIAL_TOKEN_DEFAULTS = {
    "unk_token": "[UNK]",
    "sep_token": "[SEP]",
    "pad_token": "[PAD]",
    "cls_token": "[CLS]",
    "mask_token": "[MASK]",
}
# tokenizer_config.json keys that are constructor arguments, passed on as the file has them.
_SETTINGS = ("do_lower_case", "strip_accents", "tokenize_chinese_chars",
             "max_input_chars_per_word", "model_max_length")


def _wordpiece_of_tokenizer_file(path: Path) -> tuple[list[str], dict]:
    """The vocabulary (in id order) and settings of a WordPiece ``tokenizer.json``.

    BERT's fast tokenizer: a WordPiece model with the ``##`` prefix, HF's BertNormalizer and
    BertPreTokenizer. Any other kind (BPE, Unigram, other normalizers) is refused: minibert
    would split text otherwise than the model was trained on.
    """
    where = f"tokenizer file {str(path)!r}"
    data = read_json_object(path, "tokenizer file")
    model = data.get("model")
    kind = model.get("type") if isinstance(model, dict) else None
    if kind != "WordPiece" or not isinstance(model.get("vocab"), dict):
        raise ValueError(f"{where} holds a {kind or 'unknown'} tokenizer; minibert reads BERT's "
                         f"WordPiece vocabulary only (a vocab.txt beside it would be read first)")
    prefix = model.get("continuing_subword_prefix", "##")
    if prefix != "##":
        raise ValueError(f"{where}: continuing_subword_prefix must be '##', got {prefix!r:.40}")
    vocab = model["vocab"]
    ids = list(vocab.values())
    if not all(is_int(value) for value in ids) or sorted(ids) != list(range(len(ids))):
        raise ValueError(f"{where}: the WordPiece vocab must number its {len(ids):,} tokens "
                         f"0..V-1, each id once")
    tokens = sorted(vocab, key=vocab.__getitem__)
    settings = {"unk_token": model.get("unk_token", "[UNK]")}
    if is_int(model.get("max_input_chars_per_word")):
        settings["max_input_chars_per_word"] = model["max_input_chars_per_word"]
    normalizer, pre_tokenizer = data.get("normalizer"), data.get("pre_tokenizer")
    for part, value, wanted in (("normalizer", normalizer, "BertNormalizer"),
                                ("pre_tokenizer", pre_tokenizer, "BertPreTokenizer")):
        if not isinstance(value, dict) or value.get("type") != wanted:
            found = value.get("type") if isinstance(value, dict) else value
            raise ValueError(f"{where}: {part} must be {wanted} (BERT's), got {found!r:.60}")
    if normalizer.get("clean_text") is False:
        raise ValueError(f"{where}: normalizer clean_text must be true (minibert always "
                         f"cleans text), got false")
    settings["do_lower_case"] = normalizer.get("lowercase", True)
    settings["tokenize_chinese_chars"] = normalizer.get("handle_chinese_chars", True)
    if normalizer.get("strip_accents") is not None:
        settings["strip_accents"] = normalizer["strip_accents"]
    return tokens, settings


def _settings_from_file(path: Path) -> dict:
    """The constructor arguments a ``tokenizer_config.json`` (minibert's or HF's) holds.

    Other keys (``tokenizer_class``, ``added_tokens_decoder``, ``name_or_path``...) describe
    nothing the constructor takes and are skipped; null values mean "the default".
    """
    where = f"tokenizer settings {str(path)!r}"
    data = read_json_object(path, "tokenizer settings")
    basic = data.get("do_basic_tokenize")
    if basic is not None and basic is not True:
        raise ValueError(f"{where}: do_basic_tokenize must be true (minibert always runs "
                         f"basic tokenization), got {basic!r}")
    if data.get("never_split"):
        raise ValueError(f"{where}: never_split {data['never_split']!r} is not supported; "
                         f"list such tokens under additional_special_tokens instead")
    # null stands for the default (for strip_accents: follow do_lower_case).
    settings = {key: data[key] for key in _SETTINGS if data.get(key) is not None}
    settings.update({key: _token_text(where, key, data[key])
                     for key in _SPECIAL_TOKEN_DEFAULTS if data.get(key) is not None})
    extra = []
    for key in ("additional_special_tokens", "extra_special_tokens"):
        tokens = data.get(key)
        if tokens is None:
            continue
        # transformers 4 wrote extra_special_tokens as an object of named tokens.
        tokens = list(tokens.values()) if isinstance(tokens, dict) else tokens
        if not isinstance(tokens, list):
            raise ValueError(f"{where}: {key} must be a list of tokens, got "
                             f"{type(tokens).__name__} {tokens!r:.60}")
        extra += [_token_text(where, f"{key}[{index}]", token)
                  for index, token in enumerate(tokens)]
    if extra:
        settings["additional_special_tokens"] = list(dict.fromkeys(extra))
    return settings


def _token_text(where: str, key: str, token) -> str:
    """A special token as written in a settings file: a str, or HF's {"content": str, ...}."""
    if isinstance(token, dict) and isinstance(token.get("content"), str):
        return token["content"]
    if not isinstance(token, str):
        raise ValueError(f"{where}: {key} must be a token (a string, or an object with a "
                         f"string 'content'), got {type(token).__name__} {token!r:.60}")
    return token


def _index_tokens(tokens: list[str], where) -> dict[str, int]:
    """Map each token to its id, refusing repeated tokens and tokens that break the file format."""
    vocab: dict[str, int] = {}
    for index, token in enumerate(tokens):
        if not isinstance(token, str):
            raise TypeError(f"{where(index)} must be a str, got {type(token).__name__}")
        if "\n" in token or "\r" in token:
            raise ValueError(f"{where(index)} contains a line break: {token!r}")
        if token in vocab:
            raise ValueError(
                f"{where(index)} repeats the token {token!r} of {where(vocab[token])}; "
                "every token must appear once"
            )
        vocab[token] = index
    return vocab


def _as_id_sequence(ids):
    if isinstance(ids, np.ndarray):
        if ids.ndim != 1:
            raise ValueError(f"ids must be 1-D (T,), got an array of shape {ids.shape}")
        return ids.tolist()
    if isinstance(ids, (str, bytes)) or not isinstance(ids, Iterable):
        raise TypeError(f"ids must be an int or a sequence of ints, got {type(ids).__name__}")
    return ids


def _check_texts(name: str, value, is_batch: bool) -> list[str]:
    """``value`` as a list of strings; a TypeError that names the argument otherwise."""
    if not is_batch:
        if not isinstance(value, str):
            raise TypeError(
                f"{name} must be a str (or, with a batch, a list of str), "
                f"got {type(value).__name__}: {value!r:.80}"
            )
        return [value]
    if not isinstance(value, (list, tuple)):
        raise TypeError(
            f"{name} must be a list of str for a batch, got {type(value).__name__}: {value!r:.80}"
        )
    for index, item in enumerate(value):
        check_str(f"{name}[{index}]", item)
    return list(value)


def _padding_strategy(padding) -> str:
    if padding is True:
        return "longest"
    if padding is False:
        return "do_not_pad"
    if padding in PADDING_STRATEGIES:
        return padding
    raise ValueError(f"padding must be True, False or one of {PADDING_STRATEGIES}, got {padding!r}")


def _truncation_strategy(truncation, max_length, padding_strategy) -> str:
    if truncation is None:
        # HF's rule: a max_length given without padding asks for truncation.
        if max_length is not None and padding_strategy == "do_not_pad":
            return "longest_first"
        return "do_not_truncate"
    if truncation is True:
        return "longest_first"
    if truncation is False:
        return "do_not_truncate"
    if truncation in TRUNCATION_STRATEGIES:
        return truncation
    raise ValueError(
        f"truncation must be True, False, None or one of {TRUNCATION_STRATEGIES}, "
        f"got {truncation!r}"
    )


def _truncate(first: _Sequence, second: _Sequence | None, budget: int, strategy: str):
    """Cut tokens from the ends of the segments until together they hold ``budget`` tokens."""
    keep_first = len(first.ids)
    keep_second = len(second.ids) if second is not None else 0
    excess = keep_first + keep_second - budget
    if excess <= 0:
        return first, second
    if strategy == "longest_first" and second is not None:
        for _ in range(excess):
            if keep_first > keep_second:
                keep_first -= 1
            else:
                keep_second -= 1
    elif strategy in ("longest_first", "only_first"):
        if excess > keep_first:
            raise ValueError(
                f"truncation='only_first' cannot fit the pair into {budget} tokens (plus "
                f"special tokens): text has {keep_first} tokens but {excess} must go; "
                "use a larger max_length or truncation='longest_first'"
            )
        keep_first -= excess
    else:
        if excess > keep_second:
            raise ValueError(
                f"truncation='only_second' cannot fit the pair into {budget} tokens (plus "
                f"special tokens): text_pair has {keep_second} tokens but {excess} must go; "
                "use a larger max_length or truncation='longest_first'"
            )
        keep_second -= excess
    return first.head(keep_first), (second.head(keep_second) if second is not None else None)


def _to_array(key: str, rows: list) -> np.ndarray:
    """Stack equal-length rows into an int64 array (B, T) or (B, T, 2) for offsets."""
    lengths = {len(row) for row in rows}
    if len(lengths) > 1:
        raise ValueError(
            f"return_tensors='np' needs rows of one length, got {key} lengths "
            f"{sorted(lengths)}; pass padding=True or padding='max_length'"
        )
    if key == "word_ids":
        rows = [[-1 if word is None else word for word in row] for row in rows]
    if not rows or not rows[0]:
        shape = (len(rows), 0, 2) if key == "offset_mapping" else (len(rows), 0)
        return np.zeros(shape, dtype=np.int64)
    return np.array(rows, dtype=np.int64)
