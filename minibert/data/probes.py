"""Fill-mask probes: the toy world's words with more than one sense, and test sentences.

Some words of the toy world ("bank", "bat", "pitch", "bass", "spring", "crane", "star",
"key", "match", "note", "scale", "current") mean different things in different topics, and
the word that settles the sense stands sometimes before and sometimes after them, which is
what makes a bidirectional encoder worth having. ``AMBIGUOUS_WORDS`` lists them with the
topics of each sense; ``AMBIGUITY_PROBES`` are fill-mask sentences, none of them in the
corpus, whose answer only that context settles. The generator never reads this module:
the probes are for evaluation, lectures and tests.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["AMBIGUITY_PROBES", "AMBIGUOUS_WORDS", "FillMaskProbe"]

AMBIGUOUS_WORDS: dict[str, dict[str, tuple[str, ...]]] = {
    "bank": {"money": ("banking", "computing"), "river": ("fishing", "sailing")},
    "bat": {"sport": ("cricket",), "animal": ("farming", "mountains")},
    "pitch": {"playing field": ("football", "cricket"), "sound": ("music",)},
    "bass": {"fish": ("fishing",), "low music": ("music",)},
    "spring": {
        "season": ("farming", "banking", "medicine", "mountains"),
        "water": ("mountains", "farming"),
        "coil": ("trains", "astronomy"),
    },
    "crane": {"bird": ("fishing", "farming"), "machine": ("sailing", "trains")},
    "star": {"sky": ("astronomy",), "famous person": ("football", "music")},
    "key": {"music": ("music",), "keyboard or code": ("computing",), "lock": ("banking",)},
    "match": {"game": ("football", "cricket"), "fire": ("cooking",)},
    "note": {"money": ("banking",), "music": ("music",), "writing": ("medicine",)},
    "scale": {"weighing": ("cooking", "medicine"), "music": ("music",), "fish": ("fishing",)},
    "current": {"water": ("fishing", "sailing"), "electric": ("computing",)},
}
"""Words of the toy world with more than one sense: word -> sense -> topics that use it."""


@dataclass(frozen=True)
class FillMaskProbe:
    """A fill-mask test sentence whose answer only context settles.

    ``text`` holds exactly one ``[MASK]``; ``answers`` are the acceptable words;
    ``deciding_word`` is the context word that settles the answer, and ``side`` says whether
    it stands ``"before"`` or ``"after"`` the mask, so a lecture can show that a
    left-to-right model could not use it when it comes after.
    """

    text: str
    answers: frozenset[str]
    deciding_word: str
    side: str
    sense: str


AMBIGUITY_PROBES: tuple[FillMaskProbe, ...] = (
    FillMaskProbe(
        "Before noon, Omar deposited his wages at the [MASK].",
        frozenset({"bank"}), "deposited", "before", "bank: money",
    ),
    FillMaskProbe(
        "The [MASK] lent Nadia enough money to buy a shop.",
        frozenset({"bank"}), "lent", "after", "bank: money",
    ),
    FillMaskProbe(
        "Ines sat on the muddy [MASK] of the river and watched her line.",
        frozenset({"bank"}), "river", "after", "bank: river",
    ),
    FillMaskProbe(
        "Nora moored her boat at the grassy bank of the [MASK] at dusk.",
        frozenset({"river"}), "bank", "before", "bank: river (the masked word is the context)",
    ),
    FillMaskProbe(
        "In a cave near the summit, a [MASK] hung from the rocks.",
        frozenset({"bat"}), "cave", "before", "bat: animal",
    ),
    FillMaskProbe(
        "The old [MASK] cracked when Ravi hit the ball past the boundary.",
        frozenset({"bat"}), "ball", "after", "bat: sport",
    ),
    FillMaskProbe(
        "Clara played the [MASK] guitar in a small band.",
        frozenset({"bass"}), "guitar", "after", "bass: low music",
    ),
    FillMaskProbe(
        "The climbers drank cold water from a [MASK] below the summit.",
        frozenset({"spring"}), "water", "before", "spring: water",
    ),
    FillMaskProbe(
        "In the harbour, a [MASK] lifted the crates onto the ship.",
        frozenset({"crane"}), "lifted", "after", "crane: machine",
    ),
    FillMaskProbe(
        "The singer could not reach the high [MASK] in the last verse.",
        frozenset({"note", "pitch"}), "singer", "before", "note: music",
    ),
    FillMaskProbe(
        "Priya hit a [MASK] on her keyboard to wake the screen.",
        frozenset({"key"}), "keyboard", "after", "key: keyboard",
    ),
    FillMaskProbe(
        "Before kickoff, the players ran onto the wet [MASK].",
        frozenset({"pitch", "field"}), "players", "before", "pitch: playing field",
    ),
)
"""Fill-mask probes for the ambiguous words; none of them occurs verbatim in the corpus."""
