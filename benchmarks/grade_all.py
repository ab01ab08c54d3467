"""Time ``minibert assignment grade-all`` over a generated class of submissions.

The class is written by ``minibert.assignment.mistakes.write_class`` from a fresh
instructor tree: two correct submissions, then one per typical mistake and per broken file
(a syntax error, a top-level NameError, an infinite loop, a wrong signature, minibert's own
answer), in turn, without workspace markers. It is graded with the hidden tests through
the command line, as a lecturer would, with the similarity report on (every pair of
submissions and the answer key compared; ``--no-similarity`` leaves it out), and the wall
time, the machine's load and the CSV's rows are printed.

    python benchmarks/grade_all.py                       # 30 submissions, --time-limit 10
    python benchmarks/grade_all.py --count 30 --jobs 2

The infinite-loop submission runs for the whole ``--time-limit``, so the figure includes it
once per loop in the class (with 30 submissions: one).
"""

from __future__ import annotations

import argparse
import csv
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--count", type=int, default=30, help="submissions in the class")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2,
                        help="tasks graded at once (default: the CPU count)")
    parser.add_argument("--time-limit", type=float, default=10.0,
                        help="seconds of checks per task")
    parser.add_argument("--no-similarity", action="store_true",
                        help="grade without comparing the submissions' files")
    args = parser.parse_args()

    from minibert.assignment import create_workspace
    from minibert.assignment.mistakes import write_class

    with tempfile.TemporaryDirectory() as scratch:
        tree = create_workspace(Path(scratch) / "course", instructor=True, seed=0)
        cases = dict(write_class(Path(scratch) / "class", tree / "solutions", args.count))
        out = Path(scratch) / "grades.csv"
        load_before = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        started = time.perf_counter()
        subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade-all",
                        str(Path(scratch) / "class"), "--hidden", str(tree / "hidden"),
                        "-o", str(out), "--jobs", str(args.jobs),
                        "--time-limit", str(args.time_limit),
                        *(["--no-similarity"] if args.no_similarity else [])], check=True,
                       stderr=subprocess.DEVNULL)
        wall = time.perf_counter() - started
        load_after = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
        rows = list(csv.DictReader(out.open()))
    print(f"{len(rows)} submissions graded in {wall:.1f} s wall (--jobs {args.jobs}, "
          f"--time-limit {args.time_limit:g} s, {os.cpu_count()} CPUs, BLAS threads 1 per "
          f"task; similarity {'off' if args.no_similarity else 'on'}; load average "
          f"{load_before:.1f} before, {load_after:.1f} after)")
    for row in rows:
        print(f"  {row['submission']}  {row['total']:>3}/{row['max_total'] or '-':<3}  "
              f"{cases.get(row['submission'], '')}")


if __name__ == "__main__":
    main()
