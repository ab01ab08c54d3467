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
import re
import string
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from minibert.checks import check_int, check_str
from minibert.data.everyday import SCENE_SLOTS, SCENE_TABLE
from minibert.data.facts import FACTS
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
from minibert.data.words import CHAT, FRAMES, WORD_SLOTS
from minibert.io.fileio import atomic_write_text, read_bounded

__all__ = [
    "WORLDS",
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
# An everyday scene's document also says this many frames of minibert.data.words (at least,
# at most) and this many of its chat sentences, placed among its own body sentences.
FRAMES_PER_SCENE = (2, 5)
CHAT_PER_SCENE = (1, 3)
# ... and this many facts of its own scene and of any scene (minibert.data.facts), each with
# a word of the fact and a frame drawn afresh.
OWN_FACTS_PER_SCENE = (5, 10)
ANY_FACTS_PER_SCENE = (3, 6)
ALL_FACTS = tuple(fact for facts in FACTS.values() for fact in facts)
# In the everyday world a document's topic is a theme with this chance, else a scene (uniform
# within each), so the thirteen themes hold half of the documents beside the sixteen scenes.
THEME_SHARE = 0.5

WORLDS = ("themes", "everyday")
"""The toy worlds: ``"themes"``, the thirteen ambiguity themes alone (the demo's world), and
``"everyday"``, those themes and the sixteen everyday scenes of ``minibert.data.everyday``."""


@functools.cache
def _template_fields(template: str) -> tuple[str, ...]:
    """Return the slot names of a ``str.format`` template, in order of appearance."""
    return tuple(field for _, field, _, _ in string.Formatter().parse(template) if field)


def _pick(rng: np.random.Generator, choices: tuple[str, ...]) -> str:
    """Return one element of ``choices``, uniformly at random."""
    return choices[int(rng.integers(len(choices)))]


_A_BEFORE_VOWEL = re.compile(r"\b([Aa]) ((?!one\b)[aeioAEIO]\w*)")


class _WordCycle:
    """Draw a word list in shuffled passes, so every word comes up equally often."""

    def __init__(self, words: tuple[str, ...], rng: np.random.Generator) -> None:
        self.words, self.rng, self.order = words, rng, []

    def next(self) -> str:
        if not self.order:
            self.order = list(self.rng.permutation(len(self.words)))
        return self.words[self.order.pop()]


def _fill(template: str, entities: dict[str, str], topic: Topic, rng: np.random.Generator,
          cycles: dict[str, _WordCycle] | None = None) -> str:
    """Fill one template: document entities stay fixed, other slots are drawn fresh.

    A slot is looked up in the topic's own slots, then the shared ones. An everyday document
    (``cycles`` given) also finds the scenes' slots and the word lists of
    ``minibert.data.words`` (drawn from their cycles), and draws a slot that comes twice in
    one sentence twice ("the {w_noun} and the {w_noun}" names two things).
    """
    if cycles is not None:
        return _fill_everyday(template, entities, topic, rng, cycles)
    values = {}
    for field in _template_fields(template):
        if field not in values:
            if field in entities:
                values[field] = entities[field]
            else:
                values[field] = _pick(rng, topic.slots.get(field) or SHARED_SLOTS[field])
    sentence = template.format_map(values)
    return sentence[0].upper() + sentence[1:]


def _fill_everyday(template: str, entities: dict[str, str], topic: Topic,
                   rng: np.random.Generator, cycles: dict[str, _WordCycle]) -> str:
    """``_fill`` for an everyday scene: each slot drawn where it stands."""
    parts = []
    for literal, field, _, _ in string.Formatter().parse(template):
        parts.append(literal)
        if not field:
            continue
        if field in entities:
            parts.append(entities[field])
        elif field in cycles:
            parts.append(cycles[field].next())
        else:
            choices = topic.slots.get(field) or SHARED_SLOTS.get(field) or SCENE_SLOTS[field]
            parts.append(_pick(rng, choices))
    # A word drawn after "a" may start with a vowel: "a {w_adj} idea" -> "an old idea".
    sentence = _A_BEFORE_VOWEL.sub(r"\1n \2", "".join(parts))
    return sentence[0].upper() + sentence[1:]


def _generate_document(topic: Topic, rng: np.random.Generator,
                       cycles: dict[str, _WordCycle] | None = None,
                       facts: tuple = ()) -> list[str]:
    """Write one document: an opening that introduces the entities, a body, a closing.

    With ``cycles`` (an everyday scene), frames and chat sentences of ``minibert.data.words``
    and everyday facts (``facts``: the scene's own, ``minibert.data.facts``) join the body at
    random places.
    """
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
    body = [topic.body[i] for i in rng.permutation(len(topic.body))[: num_sentences - 2]]
    if cycles is not None:
        extra = [_pick(rng, FRAMES) for _ in range(int(rng.integers(*FRAMES_PER_SCENE)))]
        extra += [_pick(rng, CHAT) for _ in range(int(rng.integers(*CHAT_PER_SCENE)))]
        chosen = [facts[int(rng.integers(len(facts)))]
                  for _ in range(int(rng.integers(*OWN_FACTS_PER_SCENE)))] if facts else []
        chosen += [ALL_FACTS[int(rng.integers(len(ALL_FACTS)))]
                   for _ in range(int(rng.integers(*ANY_FACTS_PER_SCENE)))]
        extra += [_pick(rng, fact.frames).replace("{x}", _pick(rng, fact.words))
                  for fact in chosen]
        for sentence in extra:
            body.insert(int(rng.integers(len(body) + 1)), sentence)
    templates = [_pick(rng, topic.openings), *body, _pick(rng, topic.closings)]
    sentences = [_fill(template, entities, topic, rng, cycles) for template in templates]
    # The room sentences (minibert.data.room) are held out of every corpus this writes.
    return [sentence for sentence in sentences if not is_room_sentence(sentence)]


def _generate_documents(num_documents: int, rng: np.random.Generator,
                        world: str = "themes") -> tuple[list, list]:
    """Return ``num_documents`` documents and their topic names.

    The themes' world draws its topics uniformly; the everyday world draws a theme with chance
    ``THEME_SHARE``, else a scene, uniformly within each.
    """
    table = TOPIC_TABLE if world == "themes" else {**TOPIC_TABLE, **SCENE_TABLE}
    names = TOPICS if world == "themes" else tuple(table)
    cycles = None
    if world == "everyday":
        cycles = {slot: _WordCycle(words, rng) for slot, words in WORD_SLOTS.items()}
    documents, topics = [], []
    scenes = tuple(SCENE_TABLE)
    for _ in range(num_documents):
        if world == "themes":
            topic_name = names[int(rng.integers(len(names)))]
        elif rng.random() < THEME_SHARE:
            topic_name = TOPICS[int(rng.integers(len(TOPICS)))]
        else:
            topic_name = scenes[int(rng.integers(len(scenes)))]
        topic = table[topic_name]
        everyday = topic_name in SCENE_TABLE
        documents.append(_generate_document(topic, rng, cycles if everyday else None,
                                            FACTS.get(topic_name, ()) if everyday else ()))
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
        cls, num_documents: int = 2600, num_heldout_documents: int = 260, seed: int = 0,
        world: str = "themes",
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
        if world not in WORLDS:
            raise ValueError(f"world must be one of {WORLDS}, got {world!r}")
        train_seed, heldout_seed = np.random.SeedSequence(seed).spawn(2)
        train, train_topics = _generate_documents(num_documents, np.random.default_rng(train_seed),
                                                  world)
        heldout, heldout_topics = _generate_documents(
            num_heldout_documents, np.random.default_rng(heldout_seed), world
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
