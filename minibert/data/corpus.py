"""The toy world corpus, and the reader/writer for BERT's pretraining text format.

``ToyCorpus.generate`` is a seeded generator of short documents, each a run of sentences
about one of the topics of ``minibert.data.templates``. Every document introduces a person,
a place and an organisation in its first sentence and mentions them again, so both
pretraining tasks have something to learn:

- next-sentence prediction: a random sentence usually comes from another topic, and even a
  same-topic sentence usually names another person or place;
- masked language modelling: words are predictable from their neighbours, and the words of
  ``minibert.data.probes.AMBIGUOUS_WORDS`` need context on either side to settle their sense.

``write_corpus`` and ``read_corpus`` store any corpus, toy or not, in the file format
Google's ``create_pretraining_data.py`` reads: one sentence per line, a blank line between
documents.
"""

from __future__ import annotations

import functools
import os
import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.checks import check_int, check_str
from minibert.data.room import is_room_sentence
from minibert.data.templates import (
    FEMALE_NAMES,
    MALE_NAMES,
    PERSON_NAMES,
    PLACE_NAMES,
    PRONOUNS,
    SHARED_SLOTS,
    TOPIC_TABLE,
    TOPICS,
    Topic,
)
from minibert.io.fileio import atomic_write_text, read_bounded

__all__ = [
    "MAX_SENTENCES",
    "MIN_SENTENCES",
    "ToyCorpus",
    "count_words",
    "read_corpus",
    "write_corpus",
]

# Shortest and longest document, in sentences (first and last sentence included).
MIN_SENTENCES = 4
MAX_SENTENCES = 12


@functools.cache
def _template_fields(template: str) -> tuple[str, ...]:
    """Return the slot names of a ``str.format`` template, in order of appearance."""
    return tuple(field for _, field, _, _ in string.Formatter().parse(template) if field)


def _pick(rng: np.random.Generator, choices: tuple[str, ...]) -> str:
    """Return one element of ``choices``, uniformly at random."""
    return choices[int(rng.integers(len(choices)))]


def _fill(template: str, entities: dict[str, str], topic: Topic, rng: np.random.Generator) -> str:
    """Fill one template: document entities stay fixed, other slots are drawn fresh."""
    values = {}
    for field in _template_fields(template):
        if field not in values:
            if field in entities:
                values[field] = entities[field]
            else:
                values[field] = _pick(rng, topic.slots.get(field) or SHARED_SLOTS[field])
    sentence = template.format_map(values)
    return sentence[0].upper() + sentence[1:]


def _generate_document(topic: Topic, rng: np.random.Generator) -> list[str]:
    """Write one document: an opening that introduces the entities, a body, a closing."""
    gender = "female" if rng.random() < 0.5 else "male"
    names = FEMALE_NAMES if gender == "female" else MALE_NAMES
    name = _pick(rng, names)
    friend = _pick(rng, PERSON_NAMES)
    while friend == name:
        friend = _pick(rng, PERSON_NAMES)
    entities = {
        "name": name,
        "friend": friend,
        "place": _pick(rng, PLACE_NAMES),
        "org": _pick(rng, topic.organisations),
        "role": _pick(rng, topic.roles),
        **PRONOUNS[gender],
    }
    num_sentences = int(rng.integers(MIN_SENTENCES, MAX_SENTENCES + 1))
    # Body sentences without repetition, so a document does not say the same thing twice.
    body = rng.permutation(len(topic.body))[: num_sentences - 2]
    templates = [_pick(rng, topic.openings), *(topic.body[i] for i in body)]
    templates.append(_pick(rng, topic.closings))
    sentences = [_fill(template, entities, topic, rng) for template in templates]
    # The room sentences (minibert.data.room) are held out of every corpus this writes.
    return [sentence for sentence in sentences if not is_room_sentence(sentence)]


def _generate_documents(num_documents: int, rng: np.random.Generator) -> tuple[list, list]:
    """Return ``num_documents`` documents and their topic names, topics drawn uniformly."""
    documents, topics = [], []
    for _ in range(num_documents):
        topic_name = TOPICS[int(rng.integers(len(TOPICS)))]
        documents.append(_generate_document(TOPIC_TABLE[topic_name], rng))
        topics.append(topic_name)
    return documents, topics


@dataclass
class ToyCorpus:
    """Training and held-out documents of the toy world; each document a list of sentences.

    ``train_topics[i]`` names the topic of ``train[i]`` (likewise for held-out), which tests
    and lectures use; the pretraining pipeline itself only sees the text.
    """

    train: list[list[str]]
    heldout: list[list[str]]
    train_topics: list[str]
    heldout_topics: list[str]
    seed: int

    @classmethod
    def generate(
        cls, num_documents: int = 2600, num_heldout_documents: int = 260, seed: int = 0
    ) -> ToyCorpus:
        """Generate the corpus deterministically from ``seed``.

        The default of 2,600 training documents makes at least 200k words (a test checks
        it), so that a tiny model cannot memorise the text. Held-out documents come from
        their own random stream, so the training text does not depend on how many held-out
        documents are asked for, and vice versa.
        """
        num_documents = check_int("num_documents", num_documents, minimum=1)
        num_heldout_documents = check_int("num_heldout_documents", num_heldout_documents,
                                          minimum=0)
        seed = check_int("seed", seed, minimum=0)
        train_seed, heldout_seed = np.random.SeedSequence(seed).spawn(2)
        train, train_topics = _generate_documents(num_documents, np.random.default_rng(train_seed))
        heldout, heldout_topics = _generate_documents(
            num_heldout_documents, np.random.default_rng(heldout_seed)
        )
        return cls(train, heldout, train_topics, heldout_topics, seed)

    def sentences(self, split: str = "train") -> list[str]:
        """All sentences of one split (``"train"`` or ``"heldout"``), e.g. to learn a vocab."""
        if split not in ("train", "heldout"):
            raise ValueError(f"split must be 'train' or 'heldout', got {split!r}")
        return [sentence for document in getattr(self, split) for sentence in document]


def count_words(documents: list[list[str]]) -> int:
    """Number of whitespace-separated words in ``documents`` (punctuation stays attached)."""
    return sum(len(sentence.split()) for document in documents for sentence in document)


def write_corpus(documents: list[list[str]], path: str | os.PathLike) -> None:
    """Write ``documents`` in BERT's pretraining text format, atomically.

    One sentence per line, one blank line between documents, UTF-8, trailing newline.
    A sentence may not contain a line break or be blank: either would change the document
    structure when the file is read back.
    """
    if not isinstance(documents, (list, tuple)) or not documents:
        raise ValueError(f"documents must be a non-empty list of documents, got {documents!r:.80}")
    blocks = []
    for d, document in enumerate(documents):
        if not isinstance(document, (list, tuple)) or not document:
            raise ValueError(
                f"documents[{d}] must be a non-empty list of sentences, got {document!r:.80}"
            )
        for s, sentence in enumerate(document):
            check_str(f"documents[{d}][{s}]", sentence)
            if not sentence.strip() or "\n" in sentence or "\r" in sentence:
                raise ValueError(
                    f"documents[{d}][{s}] must be one non-blank line, got {sentence!r:.80}"
                )
        blocks.append("\n".join(sentence.strip() for sentence in document))
    atomic_write_text(path, "\n\n".join(blocks) + "\n")


# The largest corpus file read; the memory a run needs for it is checked first
# (TrainingConfig.memory_estimate, about 80 bytes a byte).
MAX_CORPUS_BYTES = 2**34


def read_corpus(path: str | os.PathLike) -> list[list[str]]:
    """Read a UTF-8 text file in BERT's pretraining format into documents of sentences.

    Lines are stripped; one or more blank lines end a document; a leading byte-order mark
    and Windows line ends are accepted. Raises ValueError when the file is not UTF-8 (naming
    the byte offset of the first bad byte) or holds no sentence at all.
    """
    path = Path(path)
    # a regular file only (/dev/zero never ends), read in chunks so that a signal is answered
    data = read_bounded(path, "path", MAX_CORPUS_BYTES)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(
            f"path {str(path)!r} is not valid UTF-8: byte 0x{data[error.start]:02x} at byte "
            f"offset {error.start} ({error.reason}); the corpus must be UTF-8 text"
        ) from None
    text = text.removeprefix("\ufeff")
    documents: list[list[str]] = [[]]
    for line in text.split("\n"):
        line = line.strip()
        if line:
            documents[-1].append(line)
        elif documents[-1]:
            documents.append([])
    documents = [document for document in documents if document]
    if not documents:
        raise ValueError(
            f"path {str(path)!r} holds no sentences; a corpus needs at least one non-blank line"
        )
    return documents
