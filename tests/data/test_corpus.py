"""Tests for the toy world (minibert.data.templates, .probes, .corpus) and BERT's pretraining
text format (minibert.data.corpus)."""

import re

import pytest

from minibert.data.corpus import (
    MAX_SENTENCES,
    MIN_SENTENCES,
    ToyCorpus,
    count_words,
    read_corpus,
    write_corpus,
)
from minibert.data.probes import AMBIGUITY_PROBES, AMBIGUOUS_WORDS, PARAPHRASE_PROBES
from minibert.data.templates import ORGANISATION_NAMES, PERSON_NAMES, PLACE_NAMES, TOPICS


def words_of(sentence: str) -> list[str]:
    """Lowercase words of a sentence, punctuation dropped, possessive 's kept apart."""
    return re.findall(r"[a-z]+", sentence.lower())


@pytest.fixture(scope="module")
def corpus() -> ToyCorpus:
    return ToyCorpus.generate()


@pytest.fixture(scope="module")
def sentence_words(corpus) -> list[list[str]]:
    return [words_of(sentence) for sentence in corpus.sentences()]


@pytest.fixture(scope="module")
def train_text(corpus) -> str:
    return "\n".join(corpus.sentences()).lower()


# ----------------------------------------------------------------------- generation


def test_same_seed_same_text_and_different_seed_different_text():
    first = ToyCorpus.generate(num_documents=200, num_heldout_documents=20, seed=7)
    again = ToyCorpus.generate(num_documents=200, num_heldout_documents=20, seed=7)
    other = ToyCorpus.generate(num_documents=200, num_heldout_documents=20, seed=8)
    assert first.train == again.train and first.heldout == again.heldout
    assert first.train != other.train and first.heldout != other.heldout


def test_heldout_is_its_own_stream():
    # The training text must not change when more held-out documents are asked for.
    small = ToyCorpus.generate(num_documents=50, num_heldout_documents=5, seed=3)
    large = ToyCorpus.generate(num_documents=50, num_heldout_documents=40, seed=3)
    assert small.train == large.train
    assert large.heldout[:5] == small.heldout
    assert not set(map(tuple, small.train)) & set(map(tuple, large.heldout))


def test_default_corpus_is_large_enough_not_to_memorise(corpus):
    assert count_words(corpus.train) >= 200_000
    assert len(corpus.heldout) > 0 and count_words(corpus.heldout) > 10_000


def test_vocabulary_is_modest(corpus):
    distinct = {word for sentence in corpus.sentences() for word in words_of(sentence)}
    assert 1_200 <= len(distinct) <= 3_000


def test_documents_have_the_promised_shape(corpus):
    assert len(corpus.train) == len(corpus.train_topics)
    for document in corpus.train + corpus.heldout:
        assert MIN_SENTENCES <= len(document) <= MAX_SENTENCES
        for sentence in document:
            assert sentence[0].isupper() and sentence[-1] in ".!?"
            assert "\n" not in sentence and "{" not in sentence


def test_at_least_ten_topics_all_used(corpus):
    assert len(TOPICS) >= 10
    assert set(corpus.train_topics) == set(TOPICS)
    # With uniform topics, a random other document shares the topic ~1/len(TOPICS) of the time.
    counts = [corpus.train_topics.count(topic) for topic in TOPICS]
    assert min(counts) > 0.5 * len(corpus.train) / len(TOPICS)


def test_entities_recur_within_a_document(corpus):
    # The protagonist named in the first sentence is named again in the last one.
    not_names = {
        "The",
        "Every",
        "On",
        "In",
        "When",
        "At",
        "That",
        "By",
        "After",
        "Later",
        "Before",
        "Late",
        "Tired",
        "As",
        "A",
        "Everyone",
    }
    for document in corpus.train[:500]:
        opening = set(re.findall(r"\b[A-Z][a-z]+\b", document[0])) - not_names
        closing = set(re.findall(r"\b[A-Z][a-z]+\b", document[-1])) - not_names
        assert opening & closing, document


def test_documents_of_one_topic_differ_in_their_entities(corpus):
    # Same-topic NotNext pairs are detectable because the named people differ.
    by_topic = {}
    for document, topic in zip(corpus.train, corpus.train_topics, strict=True):
        by_topic.setdefault(topic, []).append(document)
    for documents in by_topic.values():
        openings = {document[0] for document in documents}
        assert len(openings) > 0.8 * len(documents)


def test_each_sense_of_each_ambiguous_word_occurs_in_its_topics(corpus):
    assert "bank" in AMBIGUOUS_WORDS
    assert len([word for word in AMBIGUOUS_WORDS if word != "bank"]) >= 3
    expected = {
        (word, topic)
        for word, senses in AMBIGUOUS_WORDS.items()
        for topics in senses.values()
        for topic in topics
    }
    seen = set()
    for document, topic in zip(corpus.train, corpus.train_topics, strict=True):
        words = {word for sentence in document for word in words_of(sentence)}
        seen |= {(word, topic) for word in AMBIGUOUS_WORDS if word in words or word + "s" in words}
    assert not expected - seen
    assert all(len(senses) >= 2 for senses in AMBIGUOUS_WORDS.values())


@pytest.mark.parametrize(
    "ambiguous, context, side",
    [
        ("bank", "river", "before"),
        ("bank", "river", "after"),
        ("bank", "deposited", "before"),
        ("bank", "lent", "after"),
        ("bat", "cave", "before"),
        ("bat", "cave", "after"),
        ("bat", "ball", "after"),
        ("spring", "water", "before"),
        ("spring", "summit", "after"),
        ("crane", "port", "before"),
        ("crane", "lifted", "after"),
        ("crane", "fish", "after"),
        ("pitch", "players", "before"),
        ("pitch", "voice", "after"),
        ("bass", "guitar", "after"),
        ("bass", "line", "after"),
        ("key", "keyboard", "after"),
        ("star", "telescope", "before"),
        ("match", "lit", "before"),
        ("match", "lit", "after"),
    ],
)
def test_deciding_context_occurs_before_and_after(sentence_words, ambiguous, context, side):
    # Bidirectionality matters because the deciding word sometimes follows the ambiguous one.
    sides = set()
    for words in sentence_words:
        if ambiguous in words and context in words:
            sides.add("before" if words.index(context) < words.index(ambiguous) else "after")
    assert side in sides


def test_probes_use_context_on_both_sides():
    assert {probe.side for probe in AMBIGUITY_PROBES} == {"before", "after"}


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_generation_rejects_bad_arguments(seed):
    with pytest.raises(ValueError, match="num_documents"):
        ToyCorpus.generate(num_documents=0, seed=seed)
    with pytest.raises(TypeError, match="num_documents"):
        ToyCorpus.generate(num_documents=2.5, seed=seed)
    with pytest.raises(ValueError, match="num_heldout_documents"):
        ToyCorpus.generate(num_documents=3, num_heldout_documents=-1, seed=seed)
    with pytest.raises(ValueError, match="seed"):
        ToyCorpus.generate(num_documents=3, seed=-1 - seed)
    with pytest.raises(ValueError, match="split"):
        ToyCorpus.generate(num_documents=3, seed=seed).sentences("test")


# ----------------------------------------------------------------------- probes


def test_probes_are_well_formed():
    assert 8 <= len(AMBIGUITY_PROBES) <= 12
    for probe in AMBIGUITY_PROBES:
        assert probe.text.count("[MASK]") == 1
        assert probe.side in ("before", "after")
        assert probe.answers and all(answer.isalpha() for answer in probe.answers)
        left, right = probe.text.lower().split("[mask]")
        assert probe.deciding_word in words_of(left if probe.side == "before" else right)
    assert any("bank" in probe.answers for probe in AMBIGUITY_PROBES)
    # A probe whose masked word is the context of "bank", not "bank" itself.
    assert any(
        "bank" in words_of(probe.text) and "bank" not in probe.answers for probe in AMBIGUITY_PROBES
    )


def test_probe_answers_occur_in_similar_contexts(sentence_words):
    for probe in AMBIGUITY_PROBES:
        supported = False
        for words in sentence_words:
            if probe.deciding_word not in words:
                continue
            for answer in probe.answers & set(words):
                before = words.index(probe.deciding_word) < words.index(answer)
                if before == (probe.side == "before"):
                    supported = True
        assert supported, probe.text


def test_probes_are_not_verbatim_in_the_corpus(train_text, sentence_words):
    lines = "\n".join(f" {' '.join(words)} " for words in sentence_words)
    for probe in AMBIGUITY_PROBES:
        left, right = probe.text.split("[MASK]")
        for answer in probe.answers:
            filled = probe.text.replace("[MASK]", answer).lower()
            assert filled not in train_text, filled
            # Nor the four words on each side of the mask with the answer between them.
            window = " ".join(words_of(left)[-4:] + [answer] + words_of(right)[:4])
            assert f" {window} " not in lines, window


# ----------------------------------------------------------------------- file format


def test_write_then_read_round_trips(tmp_path):
    documents = ToyCorpus.generate(num_documents=30, num_heldout_documents=0, seed=5).train
    path = tmp_path / "corpus.txt"
    write_corpus(documents, path)
    assert read_corpus(path) == documents
    text = path.read_text(encoding="utf-8")
    assert text.count("\n\n") == len(documents) - 1 and text.endswith(".\n")


def test_write_replaces_an_existing_file_whole(tmp_path):
    path = tmp_path / "corpus.txt"
    write_corpus([["A long first sentence."] * 50], path)
    write_corpus([["Short."]], path)
    assert read_corpus(path) == [["Short."]]
    assert [p.name for p in tmp_path.iterdir()] == ["corpus.txt"]


def test_read_accepts_any_blank_lines_crlf_and_bom(tmp_path):
    path = tmp_path / "corpus.txt"
    text = "\ufeff\n\nÉté à Zürich.\r\nSecond line.\r\n\r\n\r\n  \nNext doc.\n\n"
    path.write_bytes(text.encode("utf-8"))
    assert read_corpus(path) == [["Été à Zürich.", "Second line."], ["Next doc."]]


def test_read_rejects_non_utf8_naming_file_and_offset(tmp_path):
    path = tmp_path / "latin1.txt"
    path.write_bytes(b"Good line.\nCaf\xe9 au lait.\n")
    with pytest.raises(ValueError, match=r"latin1\.txt.*offset 14"):
        read_corpus(path)


@pytest.mark.parametrize("content", [b"", b"\n\n  \n", b"\xef\xbb\xbf\r\n"])
def test_read_rejects_an_empty_corpus(tmp_path, content):
    path = tmp_path / "empty.txt"
    path.write_bytes(content)
    with pytest.raises(ValueError, match="no sentences"):
        read_corpus(path)


@pytest.mark.parametrize(
    "documents, error, match",
    [
        ([], ValueError, "documents"),
        ([[]], ValueError, r"documents\[0\]"),
        ([["ok."], ["two\nlines."]], ValueError, r"documents\[1\]\[0\]"),
        ([["ok.", "   "]], ValueError, r"documents\[0\]\[1\]"),
        ([["ok.", 3]], TypeError, r"documents\[0\]\[1\]"),
        ("not a list", ValueError, "documents"),
    ],
)
def test_write_rejects_bad_documents(tmp_path, documents, error, match):
    with pytest.raises(error, match=match):
        write_corpus(documents, tmp_path / "bad.txt")
    assert not (tmp_path / "bad.txt").exists()


def test_entity_name_lists_cover_the_generated_documents():
    corpus = ToyCorpus.generate(60, 0, seed=3)
    for document, topic in zip(corpus.train, corpus.train_topics):
        opening = document[0]
        assert any(name in opening.split() or f"{name}'s" in opening for name in PERSON_NAMES)
        assert any(place in opening for place in PLACE_NAMES) or \
            any(org in " ".join(document) for org in ORGANISATION_NAMES[topic])
    assert set(ORGANISATION_NAMES) == set(TOPICS)
    assert len(set(PERSON_NAMES)) == len(PERSON_NAMES)


def test_paraphrase_probes_are_fair(corpus, sentence_words):
    """At least 40 paraphrases, each answerable from the corpus's words, none copied from it,
    with the deciding word on its side and the other senses of the words tested too."""
    assert len(PARAPHRASE_PROBES) >= 40
    vocabulary = {word for words in sentence_words for word in words}
    sentences = {" ".join(words) for words in sentence_words}
    for probe in PARAPHRASE_PROBES:
        assert probe.text.count("[MASK]") == 1, probe.text
        left, right = probe.text.lower().split("[mask]")
        assert probe.deciding_word in words_of(left if probe.side == "before" else right)
        assert set(words_of(left + right)) | probe.answers <= vocabulary, probe.text
        for answer in probe.answers:
            assert " ".join(words_of(probe.text.replace("[MASK]", answer))) not in sentences
    senses = {}
    for probe in PARAPHRASE_PROBES:
        word, _, sense = probe.sense.partition(": ")
        senses.setdefault(word, set()).add(sense.split(" (")[0])
    for word in ("bank", "bat", "spring", "crane", "note", "key", "pitch", "match"):
        assert len(senses[word]) >= 2, word
    assert not {p.text for p in PARAPHRASE_PROBES} & {p.text for p in AMBIGUITY_PROBES}

