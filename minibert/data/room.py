"""Room sentences: everyday fill-mask sentences a class suggests, held out of every corpus.

A lecture's live moment is a room calling out a sentence. These are such sentences, written
before the everyday scenes of the toy world were, as a room would say them, each with the
words that a listener would accept for its ``[MASK]``. They measure the reference model
(``benchmarks/room_sentences.py``) and are never trained on or tuned on: the corpus
generator refuses to write any of them with any word in the mask's place
(``is_room_sentence``), and a test reads the whole training corpus to check it.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

__all__ = ["ROOM_SENTENCES", "RoomSentence", "is_room_sentence", "room_sentence_pattern"]


@dataclass(frozen=True)
class RoomSentence:
    """One room sentence: the text with one ``[MASK]``, and the answers that make sense.

    ``sensible`` holds lower-case words; a model's answer counts when its top 3 holds one.
    """

    text: str
    sensible: tuple[str, ...]


def _room(text: str, *sensible: str) -> RoomSentence:
    return RoomSentence(text, tuple(sensible))


ROOM_SENTENCES: tuple[RoomSentence, ...] = (
    _room("I drank a cup of hot [MASK] this morning.", "tea", "coffee", "chocolate", "milk",
          "water", "soup"),
    _room("The [MASK] barked at the postman.", "dog", "dogs", "puppy"),
    _room("She paid for the tickets with her credit [MASK].", "card"),
    _room("It is raining, so take an [MASK].", "umbrella", "overcoat"),
    _room("My brother is two years [MASK] than me.", "older", "younger"),
    _room("We eat breakfast in the [MASK].", "morning", "kitchen", "garden"),
    _room("The children played football in the [MASK].", "park", "garden", "street", "yard",
          "field", "playground", "rain", "snow", "school", "afternoon", "morning", "evening"),
    _room("I brush my [MASK] every night.", "teeth", "hair"),
    _room("The teacher wrote the answer on the [MASK].", "board", "blackboard", "whiteboard",
          "paper", "page", "wall"),
    _room("Can you pass me the [MASK], please?", "salt", "bread", "water", "butter", "book",
          "pen", "ball", "milk", "sugar", "pepper", "cheese", "menu", "plate", "cup", "remote"),
    _room("The cat is sleeping on the [MASK].", "bed", "sofa", "chair", "floor", "table", "mat",
          "roof", "couch", "bench", "grass", "window", "carpet"),
    _room("In winter it is very [MASK].", "cold", "dark", "snowy", "wet", "windy", "icy"),
    _room("We took the [MASK] to the airport.", "bus", "train", "taxi", "car", "road"),
    _room("My mother cooked [MASK] for dinner.", "chicken", "soup", "rice", "pasta", "fish",
          "meat", "potatoes", "eggs", "vegetables", "beans", "pizza", "curry", "stew", "lamb",
          "beef", "something"),
    _room("I am going to the [MASK] to buy some bread.", "shop", "bakery", "market", "store",
          "supermarket", "town", "city", "village", "baker"),
    _room("The sun is shining and the sky is [MASK].", "blue", "clear", "bright"),
    _room("He broke his [MASK] playing football.", "leg", "arm", "nose", "foot", "ankle",
          "wrist", "finger", "hand", "tooth", "knee", "toe", "back", "neck"),
    _room("I read a [MASK] before I go to sleep.", "book", "story", "page", "chapter",
          "magazine", "newspaper", "poem", "letter", "novel"),
    _room("The farmer milked the [MASK].", "cow", "cows", "goat", "goats", "sheep"),
    _room("We went to the [MASK] to see a film.", "cinema", "theatre", "town", "city",
          "movies"),
    _room("She plays the [MASK] in a band.", "guitar", "piano", "drums", "violin", "trumpet",
          "flute", "bass", "saxophone", "drum", "keyboard", "cello"),
    _room("The doctor told me to stay in [MASK] for two days.", "bed", "hospital", "home"),
    _room("My [MASK] is ringing, can you answer it?", "phone", "mobile", "telephone"),
    _room("The train was late, so we [MASK] the meeting.", "missed"),
    _room("Don't forget to lock the [MASK] when you leave.", "door", "doors", "car", "gate",
          "house", "window", "office", "shop", "room"),
    _room("The students did not finish their [MASK].", "homework", "work", "exams", "exam",
          "lunch", "essays", "essay", "test", "tests", "project", "projects", "dinner", "food",
          "meal", "assignments", "books", "lessons", "studies", "breakfast"),
    _room("I feel sick because I ate too much [MASK].", "food", "cake", "chocolate", "candy",
          "sugar", "pizza", "bread", "meat", "fruit", "cheese", "dessert", "pie", "rice"),
    _room("Birds build their [MASK] in the trees.", "nests", "nest", "homes"),
    _room("We climbed to the top of the [MASK].", "hill", "mountain", "tower", "stairs", "tree",
          "building", "hills", "mountains", "cliff", "ladder", "steps", "rock"),
    _room("How much does this [MASK] cost?", "shirt", "book", "bag", "ticket", "car", "one",
          "dress", "coat", "thing", "hat", "phone", "house", "bike", "cake", "meal", "jacket",
          "watch", "room", "box", "bottle", "trip", "table", "chair", "computer"),
    _room("The baby is crying because she is [MASK].", "hungry", "tired", "sad", "sick", "wet",
          "cold", "scared", "ill", "afraid", "alone", "hurt", "upset", "thirsty"),
    _room("Our team won the [MASK] last Saturday.", "game", "match", "cup", "final", "race",
          "league", "championship", "tournament", "title", "trophy"),
    _room("My sister lives in a small [MASK] near the sea.", "house", "town", "village", "flat",
          "cottage", "apartment", "city", "home", "room"),
    _room("It is my birthday, and I am ten years [MASK] today.", "old"),
    _room("There are 12 months in a [MASK].", "year"),
    _room("There are 7 [MASK] in a week.", "days"),
    _room("He washed his hands with soap and [MASK].", "water"),
    _room("Please [MASK] the window, it is cold.", "close", "shut"),
    _room("We are going on [MASK] to Spain next summer.", "holiday", "vacation", "tour",
          "holidays"),
    _room("I put the milk back in the [MASK].", "fridge", "refrigerator", "kitchen", "bottle",
          "cupboard", "jug"),
    _room("The library is full of [MASK].", "books", "students", "people", "children",
          "readers"),
    _room("The painter painted a [MASK] of the sea.", "picture", "painting", "view", "scene",
          "landscape", "portrait"),
    _room("Why are you [MASK] at me?", "looking", "laughing", "shouting", "staring", "smiling",
          "yelling", "angry", "waving", "pointing", "mad", "upset", "cross"),
    _room("I didn't sleep well, so I am very [MASK] today.", "tired", "sleepy"),
    _room("The waiter brought us the [MASK].", "menu", "bill", "food", "drinks", "check",
          "soup", "coffee", "wine", "water", "bread", "order", "meal", "plates", "dessert",
          "tea", "cake"),
    _room("Look! It is [MASK] outside!", "snowing", "raining", "sunny", "dark", "cold", "windy",
          "beautiful", "hot", "warm", "lovely", "bright", "freezing", "light", "wet"),
    _room("We need eggs, flour and [MASK] to bake a cake.", "sugar", "butter", "milk", "water"),
    _room("She wrote a [MASK] to her grandmother.", "letter", "card", "note", "poem",
          "postcard", "message", "email", "story"),
    _room("The bus stops in front of the [MASK].", "school", "station", "house", "church",
          "library", "shop", "bank", "hotel", "hospital", "museum", "park", "office", "store",
          "building", "cinema", "gate", "theatre", "market", "town", "post"),
    _room("My favourite colour is [MASK].", "red", "blue", "green", "yellow", "orange",
          "purple", "pink", "black", "white", "brown", "grey", "gray"),
    _room("The bank is closed on [MASK].", "sunday", "sundays", "saturday", "saturdays",
          "monday", "mondays", "holidays", "weekends", "friday", "fridays", "tuesday",
          "wednesday", "thursday"),
)
"""The room set: 51 everyday sentences, each with one ``[MASK]`` and its sensible answers."""


@functools.cache
def room_sentence_pattern() -> re.Pattern:
    """One regular expression matching any room sentence with any single word for its mask.

    Case and the spaces around punctuation are ignored, so that a generated sentence that
    says a room sentence with a capital letter or another answer is caught too.
    """
    alternatives = []
    for room in ROOM_SENTENCES:
        before, after = room.text.split("[MASK]")
        alternatives.append(_loose(before) + r"[\w'-]+" + _loose(after))
    return re.compile(r"^\s*(?:" + "|".join(alternatives) + r")\s*$", re.IGNORECASE)


def _loose(text: str) -> str:
    """``text`` as a regular expression in which a run of spaces may be any run of spaces."""
    return "".join(r"\s+" if part.isspace() else re.escape(part)
                   for part in re.split(r"(\s+)", text) if part)


def is_room_sentence(sentence: str) -> bool:
    """True when ``sentence`` is one of ``ROOM_SENTENCES`` with some word in its mask."""
    return room_sentence_pattern().match(sentence) is not None
