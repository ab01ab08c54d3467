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

__all__ = ["AMBIGUITY_PROBES", "AMBIGUOUS_WORDS", "FillMaskProbe", "PARAPHRASE_PROBES"]

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


def _probe(text: str, answers: str, deciding_word: str, side: str, sense: str) -> FillMaskProbe:
    return FillMaskProbe(text, frozenset(answers.split("/")), deciding_word, side, sense)


PARAPHRASE_PROBES: tuple[FillMaskProbe, ...] = (
    # bank: money
    _probe("Before noon, Leila deposited two hundred pounds at the [MASK].", "bank",
           "deposited", "before", "bank: money"),
    _probe("On Friday, Hugo paid fifty pounds into his account at the [MASK].", "bank",
           "account", "before", "bank: money"),
    _probe("Rosa asked the [MASK] for a loan to buy a van.", "bank", "loan", "after",
           "bank: money"),
    _probe("The [MASK] lent Samir three hundred dollars for a new roof.", "bank", "lent",
           "after", "bank: money"),
    _probe("Greta withdrew forty dollars from the cash machine outside the [MASK].", "bank",
           "withdrew", "before", "bank: money"),
    _probe("The manager of the [MASK] approved the loan for Kofi.", "bank", "loan", "after",
           "bank: money"),
    # bank: river, and the river decided by the bank
    _probe("Anton sat on the grassy [MASK] of the river with his rod.", "bank", "river",
           "after", "bank: river"),
    _probe("Otters played near the far [MASK] of the river at dawn.", "bank", "river", "after",
           "bank: river"),
    _probe("Lena climbed out and tied her boat to the [MASK] of the river.", "bank", "river",
           "after", "bank: river"),
    _probe("Marco fished from the muddy bank of the [MASK] until dusk.", "river", "bank",
           "before", "bank: river (the masked word is the context)"),
    _probe("Tall willows leaned over the grassy bank of the [MASK].", "river", "bank",
           "before", "bank: river (the masked word is the context)"),
    # bat: animal and sport
    _probe("At dusk, a [MASK] flew out of the dark cave.", "bat", "cave", "after",
           "bat: animal"),
    _probe("A [MASK] hung upside down from the ceiling of the cave.", "bat", "cave",
           "after", "bat: animal"),
    _probe("A [MASK] flew out of the old barn, hunting moths.", "bat", "moths", "after",
           "bat: animal"),
    _probe("Arjun oiled his willow [MASK] before the cricket match.", "bat", "willow",
           "before", "bat: sport"),
    _probe("With one swing of his [MASK], Tariq hit the ball over the boundary.", "bat",
           "ball", "after", "bat: sport"),
    _probe("Vera walked out to the crease with her new [MASK].", "bat", "crease", "before",
           "bat: sport"),
    # bass: low music
    _probe("Milo played [MASK] guitar in the band for years.", "bass", "guitar", "after",
           "bass: low music"),
    _probe("In the choir, Jonas sang the [MASK] part because his voice was low.", "bass",
           "choir", "before", "bass: low music"),
    # spring: water, season, coil
    _probe("Hana filled her bottle with cold water from a [MASK] among the rocks.", "spring",
           "water", "before", "spring: water"),
    _probe("Fresh water bubbled from a [MASK] near the summit.", "spring", "water", "before",
           "spring: water"),
    _probe("Every [MASK], the lambs were born in the barn.", "spring", "lambs", "after",
           "spring: season"),
    _probe("The mechanic replaced the old steel [MASK] in the suspension of the carriage.",
           "spring", "suspension", "after", "spring: coil"),
    # crane: machine and bird
    _probe("At the port, a tall [MASK] swung the containers onto the deck.", "crane",
           "swung", "after", "crane: machine"),
    _probe("The harbour [MASK] lifted the heavy crates onto the ship.", "crane", "lifted",
           "after", "crane: machine"),
    _probe("At the station, a [MASK] lifted the heavy engine onto the rails.", "crane", "lifted",
           "after", "crane: machine"),
    _probe("A grey [MASK] caught a small fish with its long beak.", "crane", "beak", "after",
           "crane: bird"),
    _probe("In the wet meadow, a grey [MASK] waited for frogs.", "crane", "frogs", "after",
           "crane: bird"),
    # note: music and money
    _probe("The singer held the final [MASK] for ten seconds.", "note", "singer", "before",
           "note: music"),
    _probe("Elena could not reach the high [MASK] at the end of the song.", "note/pitch",
           "song", "after", "note: music"),
    _probe("Before lunch, Omar paid a twenty pound [MASK] into his account.", "note", "pound",
           "before", "note: money"),
    # key: keyboard, lock, music
    _probe("The screen came to life when Zara pressed a [MASK] on her keyboard.", "key",
           "keyboard", "after", "key: keyboard"),
    _probe("Felix could not work because the escape [MASK] on his keyboard was stuck.", "key",
           "keyboard", "after", "key: keyboard"),
    _probe("Tessa kept the [MASK] to her safe deposit box in a drawer.", "key", "box", "after",
           "key: lock"),
    _probe("Rosa wrote the song in the [MASK] of G minor.", "key", "song", "before",
           "key: music"),
    # pitch: playing field and sound
    _probe("The players ran out onto the [MASK] just before kickoff.", "pitch/field",
           "players", "before", "pitch: playing field"),
    _probe("The groundsman painted the white lines on the [MASK] before the match.",
           "pitch", "groundsman", "before", "pitch: playing field"),
    _probe("After the final whistle, the players shook hands on the muddy [MASK].", "pitch",
           "players", "before", "pitch: playing field"),
    _probe("Kenji tuned his cello slowly until the [MASK] was perfect.", "pitch", "tuned", "before",
           "pitch: sound"),
    # match: game and fire
    _probe("The [MASK] against the Red Falcons ended two goals to one.", "match", "goals",
           "after", "match: game"),
    _probe("Ida struck a [MASK] and lit the old gas stove.", "match", "lit", "after",
           "match: fire"),
    _probe("Bruno lit the candles on the table with a long [MASK].", "match", "lit", "before",
           "match: fire"),
    # scale, current
    _probe("Dario scraped the [MASK] off the trout with a knife.", "scales", "trout", "after",
           "scale: fish"),
    _probe("Clara weighed the sugar on the kitchen [MASK].", "scale", "weighed", "before",
           "scale: weighing"),
    _probe("The [MASK] was strong near the weir, so Mina moved upstream.", "current", "weir",
           "after", "current: water"),
)
"""Paraphrases of the ambiguity probes, written before the reference checkpoint was last
trained and never tuned to it: new names, new word orders and the other senses of the same
words, in the corpus's vocabulary; none occurs verbatim in the corpus (a test checks)."""
