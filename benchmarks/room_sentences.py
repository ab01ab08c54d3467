"""The room sentences on a model: its top 3 for each, whether a sensible word is among them,
and the words of the sentence that its vocabulary lacks.

    python benchmarks/room_sentences.py                  # the shipped tiny-toy
    python benchmarks/room_sentences.py --model DIR      # any folder with an MLM head
    python benchmarks/room_sentences.py --model DIR --json room.json
    python benchmarks/room_sentences.py --set b          # the second set (c, d, e: the others)

The sentences and their sensible answers are ``minibert.data.room.ROOM_SETS``: set ``a``
(``ROOM_SENTENCES``) written before the everyday corpus, set ``b`` (``ROOM_SENTENCES_B``)
written before the world was grown a second time, set ``c`` (``ROOM_SENTENCES_C``) written
after the facts and before any model trained on them, set ``d`` (``ROOM_SENTENCES_D``)
written by an author who had not read the world, before any model ran on it, and set ``e``
(``ROOM_SENTENCES_E``) by such an author before the facts were retold and any model trained on
the retold world; all are held out of every corpus.
Prints one row per sentence, then the score
(sentences with a sensible word in the top 3) and how many misses name an unknown word.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from minibert.data.facts import FACTS  # noqa: E402
from minibert.data.room import ROOM_SENTENCES, ROOM_SETS, word_runs  # noqa: E402
from minibert.fill_mask import fill_mask  # noqa: E402
from minibert.heads import BertForMaskedLM  # noqa: E402
from minibert.io.fileio import atomic_write_text  # noqa: E402
from minibert.reference import REFERENCES, reference_path  # noqa: E402
from minibert.tokenization import load_tokenizer  # noqa: E402

TOP = 3


def room_table(model, tokenizer, sentences=ROOM_SENTENCES) -> list[dict]:
    """One row per room sentence: text, top 3, sensible or not, the unknown-words line."""
    rows = []
    for room in sentences:
        answers = fill_mask(model, tokenizer, room.text, top_k=TOP)
        top = [answer["token_str"] for answer in answers]
        rows.append({"text": room.text, "top": top,
                     "sensible": any(word in room.sensible for word in top),
                     "unknown": answers.unknown_line})
    return rows


def score(rows: list[dict]) -> dict:
    """Sentences answered sensibly, and the misses that name at least one unknown word."""
    misses = [row for row in rows if not row["sensible"]]
    return {"sentences": len(rows), "sensible": len(rows) - len(misses),
            "share": (len(rows) - len(misses)) / len(rows),
            "misses_naming_unknown": sum(bool(row["unknown"]) for row in misses),
            "misses": len(misses)}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="tiny-toy",
                        help="a model folder with an MLM head, or tiny-toy (default)")
    parser.add_argument("--set", default="a", choices=sorted(ROOM_SETS),
                        help="which room set (default a)")
    parser.add_argument("--json", metavar="FILE", help="also write the rows and score as JSON")
    args = parser.parse_args(argv)
    folder = reference_path(args.model) if args.model in REFERENCES else Path(args.model)
    if not (folder / "config.json").is_file():
        print(f"--model {args.model!r}: not a model folder (no config.json)", file=sys.stderr)
        return 2
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the NSP head is not needed
        model = BertForMaskedLM.from_pretrained(folder).eval()
    tokenizer = load_tokenizer(folder)
    rows = room_table(model, tokenizer, ROOM_SETS[args.set])
    width = max(len(row["text"]) for row in rows)
    print(f"{'sentence':<{width}}  {'top 3':<30} ok  unknown words")
    for row in rows:
        print(f"{row['text']:<{width}}  {', '.join(row['top']):<30} "
              f"{'yes' if row['sensible'] else 'no ':<3} {row['unknown']}")
    result = score(rows)
    print(f"\n{args.model}, set {args.set}: {result['sensible']}/{result['sentences']} "
          f"sentences with a sensible word in the top {TOP} ({result['share']:.0%}); "
          f"{result['misses_naming_unknown']} of {result['misses']} misses name an unknown word")
    # A sentence that shares four words in a row with a fact's frame was, in part, seen.
    runs = set().union(*(word_runs(frame) for facts in FACTS.values() for fact in facts
                         for frame in fact.frames))
    near = [row for row in rows if word_runs(row["text"]) & runs]
    if near:
        unseen = score([row for row in rows if row not in near])
        print(f"{len(near)} sentences share four words in a row with a fact of "
              f"minibert.data.facts: {'; '.join(row['text'] for row in near)}\n"
              f"without them: {unseen['sensible']}/{unseen['sentences']} ({unseen['share']:.0%})")
        result["without_near_facts"] = unseen
    if args.json:
        atomic_write_text(args.json, json.dumps({"model": args.model, "set": args.set,
                                                 "score": result, "rows": rows}, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
