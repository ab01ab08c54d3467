"""Labelled toy tasks from the toy world, for fine-tuning: topics, entity tags, questions.

Three tasks, each drawn deterministically from a seed, with disjoint train and test splits:

- ``"classify"``: the topic of one sentence (13 classes, ``TOPICS``), e.g.
  "The bowler took three wickets before lunch." -> cricket.
- ``"tag"``: BIO entity tags of every word of a sentence, with the entities the corpus
  generator puts in its documents: PER (the person and the friend), LOC (the town) and ORG
  (the document's ``{org}`` slot: a bank, a club, a band, a ship, a river, a mountain...,
  and the rival teams of football and cricket). Planets, constellations, weekdays and
  programming languages are capitalized too but are not entities here (tag O).
- ``"qa"``: extractive question answering over a window of three consecutive sentences of a
  document. A question is one of the window's sentences with an entity replaced by a
  question phrase ("Who caught a large pike just after dawn?" -> "Ines"). A third of the
  questions are unanswerable, as in SQuAD 2.0: they come from a sentence of the same
  document that lies outside the window, so they name the right people and places but the
  context does not say.

The documents come from ``ToyCorpus.generate`` with seeds derived from the task's seed, so
the sentences are new draws from the world the pretraining corpus describes (a template
without variable slots gives the same sentence in both). ``encode`` turns a split into
padded NumPy features for a tokenizer: word labels go to the first WordPiece of each word
(``##`` pieces get -100), character spans of answers become token positions through the
offset mapping.

Dimension legend: N examples, T sequence length.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import numpy as np

from minibert.checks import IGNORE_INDEX, check_int
from minibert.data.corpus import ToyCorpus
from minibert.data.templates import ORGANISATION_NAMES, PERSON_NAMES, PLACE_NAMES, TOPICS
from minibert.tokenization.basic import BasicTokenizer

__all__ = [
    "TASKS", "ENTITY_TYPES", "BIO_TAGS", "DEFAULT_MAX_LENGTH",
    "ClassificationExample", "TaggingExample", "QAExample", "TaskData", "Features",
    "make_task", "find_entities", "word_spans", "questions_about", "encode",
]

TASKS = ("classify", "tag", "qa")
ENTITY_TYPES = ("PER", "LOC", "ORG")
BIO_TAGS = ("O", "B-PER", "I-PER", "B-LOC", "I-LOC", "B-ORG", "I-ORG")
# T of the encoded examples; batches are cut to their longest real row, so a generous
# bound costs nothing for the short sentences that make up most of each task.
DEFAULT_MAX_LENGTH = {"classify": 48, "tag": 48, "qa": 128}
QA_WINDOW = 3  # sentences per QA context
UNANSWERABLE_SHARE = 1 / 3  # SQuAD 2.0's training set is about a third unanswerable
_TASK_SALT = {"classify": 11, "tag": 12, "qa": 13}
_QUESTION_WORD = {"LOC": "which town", "ORG": "what"}


@dataclass(frozen=True)
class ClassificationExample:
    """One sentence and its topic (an index into ``TOPICS``)."""

    text: str
    label: int


@dataclass(frozen=True)
class TaggingExample:
    """One sentence, its words (as basic tokenization splits them) and a BIO tag per word."""

    text: str
    words: tuple[str, ...]
    tags: tuple[str, ...]


@dataclass(frozen=True)
class QAExample:
    """A question about a context; ``answer`` is "" and ``answer_start`` -1 when unanswerable."""

    question: str
    context: str
    answer: str
    answer_start: int  # character offset of ``answer`` in ``context``

    @property
    def is_impossible(self) -> bool:
        return self.answer_start < 0


@dataclass(frozen=True)
class TaskData:
    """The train and test splits of one task and the names of its labels."""

    name: str
    train: tuple
    test: tuple
    label_names: tuple[str, ...]  # classify: topics; tag: BIO tags; qa: none
    seed: int


# ----------------------------------------------------------------------------------------
# The entities of the toy world
# ----------------------------------------------------------------------------------------


@cache
def _entity_pattern() -> tuple[re.Pattern, dict[str, str]]:
    """One case-sensitive regex for every entity of the world, and entity -> type."""
    types = {name: "PER" for name in PERSON_NAMES}
    types.update({place: "LOC" for place in PLACE_NAMES})
    for organisations in ORGANISATION_NAMES.values():
        # "the" is not part of an organisation's name, as in CoNLL-2003's annotation.
        for org in organisations:
            types[org.removeprefix("the ")] = "ORG"
    alternatives = sorted(types, key=lambda entity: (-len(entity), entity))  # longest first
    pattern = re.compile(r"\b(?:" + "|".join(map(re.escape, alternatives)) + r")\b")
    return pattern, types


def find_entities(text: str) -> list[tuple[int, int, str]]:
    """Entity mentions of the toy world in ``text``: (start, end, type) character spans."""
    pattern, types = _entity_pattern()
    return [(m.start(), m.end(), types[m.group()]) for m in pattern.finditer(text)]


_WORD_SPLITTER = BasicTokenizer(do_lower_case=False)


def word_spans(text: str) -> list[tuple[int, int]]:
    """Character spans of the words of ``text`` as BERT's basic tokenization splits them.

    These are the words that ``tokenizer(..., return_word_ids=True)`` numbers: punctuation
    marks are words of their own ("Omar's" is "Omar", "'", "s").
    """
    spans = []
    for chunk, _, origins in _WORD_SPLITTER.iter_chunks(text, with_origins=True):
        for word in _WORD_SPLITTER.split_chunk(chunk):
            spans.append((origins[word.char_starts[0]], origins[word.char_ends[-1] - 1] + 1))
    return spans


def _tagging_example(text: str) -> TaggingExample:
    entities = find_entities(text)
    words, tags = [], []
    for start, end in word_spans(text):
        words.append(text[start:end])
        tag = "O"
        for entity_start, entity_end, kind in entities:
            if entity_start <= start < entity_end:
                tag = ("B-" if start == entity_start else "I-") + kind
        tags.append(tag)
    return TaggingExample(text, tuple(words), tuple(tags))


def questions_about(sentence: str) -> list[tuple[str, int, int]]:
    """Echo questions on a sentence: (question, answer start, answer end) in the sentence.

    Each entity mention is replaced by a question phrase: "who" (sentence subject),
    "whom" (elsewhere) or "whose" (before "'s") for a person, "which town" for a place,
    "what" for an organisation (with its "the"). Mentions joined by "and" are skipped:
    "Who and Ravi promised..." is not a question.
    """
    questions = []
    for start, end, kind in find_entities(sentence):
        replace_start, replace_end = start, end
        if kind == "PER":
            if sentence[end:].startswith(" and ") or sentence[:start].endswith(" and "):
                continue
            if sentence[end:].startswith("'s"):
                phrase, replace_end = "whose", end + 2
            else:
                phrase = "who" if start == 0 else "whom"
        else:
            phrase = _QUESTION_WORD[kind]
            if sentence[:start].lower().endswith("the "):
                replace_start = start - len("the ")
        question = sentence[:replace_start] + phrase + sentence[replace_end:]
        question = question.rstrip(" .!") + "?"
        questions.append((question[0].upper() + question[1:], start, end))
    return questions


# ----------------------------------------------------------------------------------------
# Drawing the examples
# ----------------------------------------------------------------------------------------


def _documents(entropy: list[int], count: int) -> tuple[list, list]:
    """The first ``count`` toy documents (and topics) of the random stream named by ``entropy``."""
    corpus_seed = int(np.random.SeedSequence(entropy).generate_state(1)[0])
    corpus = ToyCorpus.generate(count, 0, seed=corpus_seed)
    return corpus.train, corpus.train_topics


def _classification(document, topic, rng) -> ClassificationExample:
    sentence = document[int(rng.integers(len(document)))]
    return ClassificationExample(sentence, TOPICS.index(topic))


def _tagging(document, topic, rng) -> TaggingExample:
    return _tagging_example(document[int(rng.integers(len(document)))])


def _qa(document, topic, rng) -> QAExample | None:
    asked = [i for i, sentence in enumerate(document) if questions_about(sentence)]
    if not asked or len(document) <= QA_WINDOW:
        return None
    index = asked[int(rng.integers(len(asked)))]
    candidates = questions_about(document[index])
    question, answer_start, answer_end = candidates[int(rng.integers(len(candidates)))]
    windows = range(len(document) - QA_WINDOW + 1)
    if rng.random() < UNANSWERABLE_SHARE:
        # A window that asks the same question of another sentence would answer it.
        choices = [w for w in windows if not w <= index < w + QA_WINDOW and question not in
                   {q for s in document[w:w + QA_WINDOW] for q, _, _ in questions_about(s)}]
        if not choices:
            return None
        first = choices[int(rng.integers(len(choices)))]
        return QAExample(question, " ".join(document[first:first + QA_WINDOW]), "", -1)
    choices = [w for w in windows if w <= index < w + QA_WINDOW]
    first = choices[int(rng.integers(len(choices)))]
    window = document[first:first + QA_WINDOW]
    offset = sum(len(sentence) + 1 for sentence in window[: index - first])
    answer = document[index][answer_start:answer_end]
    return QAExample(question, " ".join(window), answer, offset + answer_start)


_DRAW = {"classify": _classification, "tag": _tagging, "qa": _qa}


def _draw(name: str, seed: int, stream: int, count: int, exclude: set) -> list:
    """``count`` examples, at most one per document, none whose text is in ``exclude``.

    The documents and the choices within them come from streams fixed by (seed, stream,
    task), so the first k examples are the same whatever ``count`` is.
    """
    entropy = [seed, stream, _TASK_SALT[name]]
    documents_needed = 2 * count + 50
    while True:
        rng = np.random.default_rng([*entropy, 1])  # choices within the documents
        examples, seen = [], set(exclude)
        for document, topic in zip(*_documents(entropy, documents_needed), strict=True):
            example = _DRAW[name](document, topic, rng)
            if example is None or _key(example) in seen:
                continue
            seen.add(_key(example))
            examples.append(example)
            if len(examples) == count:
                return examples
        documents_needed *= 2


def _key(example):
    if isinstance(example, QAExample):
        return (example.question, example.context)
    return example.text


def make_task(name: str, train_size: int = 200, test_size: int = 500,
              seed: int = 0) -> TaskData:
    """Draw a task's train and test splits deterministically from ``seed``.

    Inputs: name in ``TASKS``; train_size >= 1 and test_size >= 0 examples; seed >= 0.
    The test split depends only on the seed, and the first k training examples are the
    same for every train_size >= k, so learning curves compare nested training sets on
    one test set. No training text appears in the test split.
    """
    if name not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}, got {name!r}")
    train_size = check_int("train_size", train_size, minimum=1)
    test_size = check_int("test_size", test_size, minimum=0)
    seed = check_int("seed", seed, minimum=0)
    test = _draw(name, seed, 1, test_size, set()) if test_size else []
    train = _draw(name, seed, 2, train_size, {_key(example) for example in test})
    label_names = {"classify": TOPICS, "tag": BIO_TAGS, "qa": ()}[name]
    return TaskData(name, tuple(train), tuple(test), tuple(label_names), seed)


# ----------------------------------------------------------------------------------------
# Features for the model
# ----------------------------------------------------------------------------------------


@dataclass
class Features:
    """A split encoded for the model: every array has N rows, padded to T = max_length.

    ``inputs``: input_ids, token_type_ids, attention_mask (N, T). ``targets``: labels (N,)
    for classify, labels (N, T) for tag, start_positions and end_positions (N,) for qa.
    ``extras`` keep what decoding needs: word_ids (N, T) for tag, offset_mapping (N, T, 2)
    and context_mask (N, T) for qa.
    """

    inputs: dict[str, np.ndarray]
    targets: dict[str, np.ndarray]
    extras: dict[str, np.ndarray]
    truncated: int  # examples that lost tokens to max_length

    def __len__(self) -> int:
        return len(self.inputs["input_ids"])

    def batch(self, rows) -> dict[str, np.ndarray]:
        """Model keyword arguments for ``rows``, cut to the longest real sequence among them."""
        rows = np.asarray(rows)
        width = int(self.inputs["attention_mask"][rows].sum(axis=1).max())
        batch = {key: value[rows, :width] for key, value in self.inputs.items()}
        for key, value in self.targets.items():
            batch[key] = value[rows, :width] if value.ndim == 2 else value[rows]
        return batch


def _tokenize(tokenizer, texts, pairs, max_length: int, **options) -> tuple[dict, int]:
    untruncated = tokenizer(texts, pairs, truncation=False)["input_ids"]
    truncated = sum(len(ids) > max_length for ids in untruncated)
    encoding = tokenizer(texts, pairs, truncation="only_second" if pairs else True,
                         max_length=max_length, padding="max_length", return_tensors="np",
                         **options)
    return encoding, truncated


def _first_piece_labels(word_ids: np.ndarray, word_labels: list[list[int]]) -> np.ndarray:
    """Each word's label on its first piece; -100 on ## pieces, special tokens and padding."""
    labels = np.full(word_ids.shape, IGNORE_INDEX, dtype=np.int64)  # (N, T)
    for row, (ids, tags) in enumerate(zip(word_ids, word_labels, strict=True)):
        previous = -1
        for position, word in enumerate(ids):
            if word >= 0 and word != previous:
                labels[row, position] = tags[word]
            previous = word
    return labels


def _answer_positions(example: QAExample, offsets: np.ndarray, context_mask: np.ndarray):
    """Token positions of the answer's first and last characters; (0, 0) = [CLS] = none."""
    if example.is_impossible:
        return 0, 0
    first, last = example.answer_start, example.answer_start + len(example.answer) - 1
    context = np.nonzero(context_mask)[0]
    starts = [p for p in context if offsets[p, 0] <= first < offsets[p, 1]]
    ends = [p for p in context if offsets[p, 0] <= last < offsets[p, 1]]
    if not starts or not ends:
        return 0, 0  # the answer was truncated away: HF's preprocessing points at [CLS]
    return int(starts[0]), int(ends[0])


def encode(task: TaskData | str, examples, tokenizer, max_length: int | None = None) -> Features:
    """Encode examples of a task for the model (see ``Features``).

    Inputs: task, a TaskData or a task name; examples, a sequence of the task's examples;
    tokenizer, a BertTokenizer; max_length, T (default ``DEFAULT_MAX_LENGTH[task]``).
    """
    name = task.name if isinstance(task, TaskData) else task
    if name not in TASKS:
        raise ValueError(f"task must be one of {list(TASKS)}, got {name!r}")
    max_length = DEFAULT_MAX_LENGTH[name] if max_length is None else max_length
    check_int("max_length", max_length, minimum=8)
    examples = list(examples)
    if not examples:
        raise ValueError("examples must hold at least one example, got none")
    if name == "classify":
        encoding, truncated = _tokenize(tokenizer, [e.text for e in examples], None, max_length)
        labels = np.array([e.label for e in examples], dtype=np.int64)
        return Features(encoding, {"labels": labels}, {}, truncated)
    if name == "tag":
        encoding, truncated = _tokenize(tokenizer, [e.text for e in examples], None, max_length,
                                        return_word_ids=True)
        word_ids = encoding.pop("word_ids")
        tag_ids = [[BIO_TAGS.index(tag) for tag in e.tags] for e in examples]
        labels = _first_piece_labels(word_ids, tag_ids)
        return Features(encoding, {"labels": labels}, {"word_ids": word_ids}, truncated)
    encoding, truncated = _tokenize(tokenizer, [e.question for e in examples],
                                    [e.context for e in examples], max_length,
                                    return_offsets_mapping=True)
    offsets = encoding.pop("offset_mapping")  # (N, T, 2)
    # Context tokens: segment B without the closing [SEP] (special tokens have no span).
    context_mask = (encoding["token_type_ids"] == 1) & (offsets[..., 1] > offsets[..., 0])
    positions = np.array([_answer_positions(e, offsets[i], context_mask[i])
                          for i, e in enumerate(examples)], dtype=np.int64)  # (N, 2)
    targets = {"start_positions": positions[:, 0], "end_positions": positions[:, 1]}
    extras = {"offset_mapping": offsets, "context_mask": context_mask}
    return Features(encoding, targets, extras, truncated)
