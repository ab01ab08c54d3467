"""Time the lecture plan (docs/lecture_50min.md) slide by slide: run what it runs, count what
it says.

For each segment of the plan's minute-by-minute table:

- **live**: every command the segment runs out of the deck (the ``minibert ...`` commands
  of its "out of the deck" cell) is run here as the lecturer's terminal runs it, a fresh
  process each time, and timed (wall seconds, median and slowest of ``--repeats`` runs).
  ``fill-mask`` is run on every sentence of the checklist's fill-mask table, since the
  room's sentence is one like them. A trip with no command (the notebook, shown with its
  committed outputs) costs only its switch;
- **switch**: each trip out of the deck and back, a stated allowance (``SWITCH_SECONDS``),
  plus the typing of the room's sentence where the trip types one (``TYPING_SECONDS``);
  not measured;
- **spoken**: the words of the segment's "say" notes and the words printed on its deck
  pages (read from the drawn figures), at ``RATE`` words a minute: the slow end of the
  125–150 words a minute that Lucas, *The Art of Public Speaking* (8th ed., 2004, p. 300)
  gives for speakers in the US.

Writes docs/results/lecture_timing.json, which docs/lecture_50min.md's "Timed" table quotes
and tests/project/test_lecture_plan.py checks against the plan as it is now.

Usage: OPENBLAS_NUM_THREADS=1 python benchmarks/lecture_timing.py [--repeats 3]
(about a minute; the commands read the reference checkpoint that ships with minibert).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PLAN = ROOT / "docs" / "lecture_50min.md"
OUT = ROOT / "docs" / "results" / "lecture_timing.json"
RATE = 125             # words a minute, spoken (Lucas 2004, p. 300: 125-150 in the US)
SLOW_RATE = 100        # words a minute: a slow day, for the cuts
SWITCH_SECONDS = 30    # out of the deck and back: find the window, zoom, return to the PDF
TYPING_SECONDS = 20    # the room's sentence, typed (about 60 characters)
COMMAND = re.compile(r"`(minibert [^`]+)`")


def minute_rows(plan: str) -> list[dict]:
    """The plan's minute-by-minute table: one dict per segment."""
    section = plan.split("\n## Minute by minute", 1)[1].split("\n## ", 1)[0]
    rows = []
    for line in section.splitlines():
        if re.match(r"\|\s*\d+–\d+\s*\|", line):
            minutes, pages, trip, say = [c.strip() for c in line.strip().strip("|").split("|")]
            start, end = (int(n) for n in minutes.split("–"))
            first, _, last = re.match(r"slides? (\d+)(–(\d+))?", pages).groups()
            rows.append({"minutes": minutes, "length": end - start,
                         "slides": list(range(int(first), int(last or first) + 1)),
                         "trip": trip, "say": say})
    return rows


def say_words(say: str) -> int:
    return len(say.split())


def fill_mask_sentences(plan: str) -> list[str]:
    return re.findall(r'^\| "([^"]+)" \| \S+ \| (?:works|fails) \|$', plan, re.MULTILINE)


def trip_commands(trip: str, plan: str) -> list[str]:
    """The commands a trip runs, each as a command line; the room's ``"..."`` sentence
    becomes each sentence of the checklist's fill-mask table."""
    commands = []
    for command in COMMAND.findall(trip):
        if command.rstrip().endswith('"..."'):
            stem = command.rstrip()[:-len('"..."')]
            commands += [f"{stem}{shlex.quote(s)}" for s in fill_mask_sentences(plan)]
        else:
            commands.append(command)
    return commands


def page_words(model: str = "tiny-toy") -> dict[int, int]:
    """Words (runs of letters) printed on each page of the deck, as drawn by
    ``minibert slides``: titles, text, labels and legends; numbers on axes are not read."""
    from matplotlib.text import Text

    from minibert.viz.slides import build_slides

    counts = {}
    for number, fig in enumerate(build_slides(model), start=1):
        words = 0
        for text in fig.findobj(Text):
            if text.get_visible():
                words += len(re.findall(r"[A-Za-z][A-Za-z'’-]*", text.get_text()))
        counts[number] = words
    return counts


def run_timed(command: str, repeats: int, workdir: Path) -> list[float]:
    argv = shlex.split(command)
    argv = [sys.executable, "-m", "minibert", *argv[1:]]
    seconds = []
    for _ in range(repeats):
        folder = Path(tempfile.mkdtemp(dir=workdir))  # a file it writes is new each time
        started = time.perf_counter()
        result = subprocess.run(argv, cwd=folder, capture_output=True, text=True, timeout=300)
        seconds.append(time.perf_counter() - started)
        if result.returncode != 0:
            raise SystemExit(f"{command}: exit {result.returncode}: "
                             f"{(result.stderr.strip() or 'no output').splitlines()[-1]}")
    return seconds


def segment_estimate(row: dict, pages: dict[int, int], live_seconds: float,
                     rate: float) -> dict:
    words = say_words(row["say"]) + sum(pages.get(n, 0) for n in row["slides"])
    trip = row["trip"] != "—"
    typed = "fill-mask" in row["trip"] and '"..."' in row["trip"]
    switch = (SWITCH_SECONDS if trip else 0) + (TYPING_SECONDS if typed else 0)
    minutes = words / rate + (live_seconds + switch) / 60
    return {"spoken_words": words, "spoken_minutes": round(words / rate, 2),
            "live_seconds": round(live_seconds, 2), "switch_seconds": switch,
            "minutes": round(minutes, 2)}


MARGIN = 1.5            # each segment allows one and a half times its estimate


def cuts(plan: str) -> dict[str, int]:
    """The named cuts of the plan's "If time runs short" section: {name: minutes saved}."""
    section = plan.split("## If time runs short: the cuts, named", 1)[1].split("\n## ", 1)[0]
    return {name: int(minutes) for name, minutes in
            re.findall(r"\*\*(\w+ cut), (\d+) minutes?\b", section)}


def overrun(segments: list[dict], key: str) -> float:
    """Minutes by which the segments, each allowed MARGIN times its estimate, overrun."""
    return sum(max(0.0, MARGIN * s[key]["minutes"] - s["length"]) for s in segments)


def markdown_table(result: dict) -> str:
    """The plan's "Timed" table, from the figures this script wrote."""
    lines = ["| minutes | slides | words spoken (notes + pages) | live, measured | switching "
             "| estimate | × 1.5 | at 100 words/min × 1.5 |",
             "|---|---|---|---|---|---|---|---|"]
    for segment in result["segments"]:
        estimate, slow = segment["estimate"], segment["estimate_slow"]
        pages = segment["slides"]
        named = f"{pages[0]}" if len(pages) == 1 else f"{pages[0]}–{pages[-1]}"
        lines.append(f"| {segment['minutes']} | {named} | {estimate['spoken_words']} "
                     f"| {estimate['live_seconds']:.1f} s | {estimate['switch_seconds']} s "
                     f"| {estimate['minutes']:.1f} | {MARGIN * estimate['minutes']:.1f} "
                     f"| {MARGIN * slow['minutes']:.1f} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeats", type=int, default=3,
                        help="runs of each command (default 3); the median and the slowest "
                             "are kept")
    parser.add_argument("--out", default=str(OUT), help=f"JSON to write (default {OUT})")
    args = parser.parse_args(argv)
    if args.repeats < 1:
        parser.error(f"--repeats: got {args.repeats}, allowed: 1 or more")
    plan = PLAN.read_text(encoding="utf-8")
    rows = minute_rows(plan)
    load_before = os.getloadavg()
    pages = page_words()
    commands = {}
    with tempfile.TemporaryDirectory(prefix="lecture-timing-") as workdir:
        for row in rows:
            for command in trip_commands(row["trip"], plan):
                if command not in commands:
                    seconds = run_timed(command, args.repeats, Path(workdir))
                    commands[command] = {"median": round(statistics.median(seconds), 3),
                                         "slowest": round(max(seconds), 3),
                                         "runs": len(seconds)}
                    print(f"{commands[command]['median']:6.2f} s median, "
                          f"{commands[command]['slowest']:6.2f} s slowest  {command}")
    segments = []
    for row in rows:
        own = trip_commands(row["trip"], plan)
        # the room's sentence is one fill-mask run: the slowest sentence stands for it
        fill = [commands[c]["slowest"] for c in own if " fill-mask " in c]
        other = [commands[c]["slowest"] for c in own if " fill-mask " not in c]
        live = (max(fill) if fill else 0.0) + sum(other)
        segments.append({"minutes": row["minutes"], "length": row["length"],
                         "slides": row["slides"], "commands": own,
                         "estimate": segment_estimate(row, pages, live, RATE),
                         "estimate_slow": segment_estimate(row, pages, live, SLOW_RATE)})
    load_after = os.getloadavg()
    result = {
        "command": "OPENBLAS_NUM_THREADS=1 python benchmarks/lecture_timing.py "
                   f"--repeats {args.repeats}",
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(),
                    "python": platform.python_version(),
                    "load_average_before": [round(v, 2) for v in load_before],
                    "load_average_after": [round(v, 2) for v in load_after],
                    "threads": os.environ.get("OPENBLAS_NUM_THREADS", "unset")},
        "rate_words_per_minute": RATE, "slow_rate_words_per_minute": SLOW_RATE,
        "rate_source": "Lucas, The Art of Public Speaking, 8th ed. (2004), p. 300: "
                       "125-150 words a minute for speakers in the US",
        "switch_seconds": SWITCH_SECONDS, "typing_seconds": TYPING_SECONDS,
        "page_words": pages, "commands": commands, "segments": segments,
        "total_minutes": round(sum(s["estimate"]["minutes"] for s in segments), 2),
        "total_minutes_slow": round(sum(s["estimate_slow"]["minutes"] for s in segments), 2),
        "margin": MARGIN,
        "overrun_minutes": round(overrun(segments, "estimate"), 2),
        "overrun_minutes_slow": round(overrun(segments, "estimate_slow"), 2),
        "cuts": cuts(plan),
    }
    out = Path(args.out)
    partial = out.with_name(f".{out.name}.partial")
    partial.write_text(json.dumps(result, indent=1, ensure_ascii=False) + "\n",
                       encoding="utf-8")
    partial.replace(out)
    for segment in segments:
        estimate = segment["estimate"]
        print(f"{segment['minutes']:>6} ({segment['length']} min): {estimate['minutes']:5.2f} "
              f"min = {estimate['spoken_words']} words + {estimate['live_seconds']:.1f} s live "
              f"+ {estimate['switch_seconds']} s switching")
    print(markdown_table(result))
    print(f"overrun with the margin: {result['overrun_minutes']:.2f} min at {RATE}, "
          f"{result['overrun_minutes_slow']:.2f} at {SLOW_RATE}; the named cuts save "
          f"{sum(result['cuts'].values())} min")
    print(f"total {result['total_minutes']:.1f} min at {RATE} words a minute, "
          f"{result['total_minutes_slow']:.1f} at {SLOW_RATE}; load {load_before[0]:.2f} "
          f"before, {load_after[0]:.2f} after; wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
