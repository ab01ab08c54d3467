"""Gradescope's autograder zip: ``setup.sh``, ``run_autograder`` and the hidden tests' folder.

``write_autograder(path, hidden)`` writes the zip a course uploads as its autograder:
``setup.sh`` installs minibert (the wheel put in the zip, or the pinned release of the
distribution ``minibert-numpy``), ``run_autograder`` grades ``/autograder/submission`` (a
folder upload is graded as ``grade-all`` grades a submission: the task files at its top or
in its one subfolder) with the hidden tests and writes ``/autograder/results/results.json``,
the hidden tests' results shown ``after_published`` unless told otherwise. A submission the
grader cannot read still gets a results.json (score 0, the reason).
"""

from __future__ import annotations

import json
import zipfile
from pathlib import Path

from minibert.assignment.workspace import MARKER, read_hidden_seed

__all__ = ["write_autograder", "setup_script", "run_script"]

_SETUP = """#!/usr/bin/env bash
# Gradescope runs this once, when it builds the autograder's image.
set -euo pipefail
cd "$(dirname "$0")"
if ! command -v python3 >/dev/null || ! python3 -m pip --version >/dev/null 2>&1; then
    apt-get update && apt-get install -y python3 python3-pip
fi
if ls ./*.whl >/dev/null 2>&1; then
    python3 -m pip install ./*.whl
else
    python3 -m pip install "minibert-numpy{pin}"
fi
"""

_RUN = """#!/usr/bin/env bash
# Gradescope runs this for each submission. AUTOGRADER_ROOT is for trying it elsewhere.
set -uo pipefail
root="${{AUTOGRADER_ROOT:-/autograder}}"
mkdir -p "$root/results"
python3 -m minibert assignment grade "$root/submission" \\
    --hidden "$root/source/hidden" --gradescope "$root/results/results.json" \\
    --hidden-visibility {visibility} --time-limit {time_limit:g} --jobs 2 \\
    > "$root/results/grading.txt" 2>&1
status=$?
if [ $status -ne 0 ] || [ ! -s "$root/results/results.json" ]; then
    python3 - "$root/results/grading.txt" "$root/results/results.json" <<'EOF'
import json, sys
lines = open(sys.argv[1], encoding="utf-8", errors="replace").read().strip().splitlines()
reason = lines[-1] if lines else "the grader wrote nothing"
json.dump({{"score": 0, "output": "not graded: " + reason, "visibility": "visible"}},
          open(sys.argv[2], "w"))
EOF
fi
exit 0
"""


def setup_script(version: str | None = None) -> str:
    """``setup.sh``: installs minibert (a wheel in the zip, else release ``version``)."""
    return _SETUP.format(pin=f"=={version}" if version else "")


def run_script(hidden_visibility: str = "after_published", time_limit: float = 60.0) -> str:
    """``run_autograder``: grades the submission into results.json."""
    from minibert.assignment.grader import GRADESCOPE_VISIBILITY
    from minibert.assignment.runner import check_limit

    if hidden_visibility not in GRADESCOPE_VISIBILITY:
        raise ValueError(f"hidden_visibility must be one of {list(GRADESCOPE_VISIBILITY)}, "
                         f"got {hidden_visibility!r}")
    return _RUN.format(visibility=hidden_visibility,
                       time_limit=check_limit(time_limit, "time_limit"))


def write_autograder(path, hidden, wheel=None, hidden_visibility: str = "after_published",
                     time_limit: float = 60.0, version: str | None = None) -> Path:
    """Write Gradescope's autograder zip to ``path`` (atomically).

    Inputs: hidden, the instructor's hidden/ folder (its seed goes into the zip); wheel,
    an optional minibert wheel (``make dist``) that setup.sh installs instead of the
    release; hidden_visibility, when students see the hidden tests' results and the
    points; time_limit, seconds of checks per task; version, the release setup.sh pins
    when there is no wheel (``minibert --version``'s).
    """
    from minibert.io.fileio import atomic_open

    seed = read_hidden_seed(hidden)
    run = run_script(hidden_visibility, time_limit)
    if wheel is not None and not (Path(wheel).is_file() and str(wheel).endswith(".whl")):
        raise ValueError(f"wheel {str(wheel)!r} is not a .whl file (make dist writes one)")
    with atomic_open(path, "wb") as handle, zipfile.ZipFile(handle, "w",
                                                            zipfile.ZIP_DEFLATED) as archive:
        for name, text in (("setup.sh", setup_script(version)), ("run_autograder", run)):
            info = zipfile.ZipInfo(name)
            info.external_attr = 0o100755 << 16  # executable
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, text)
        archive.writestr("hidden/cases.json", json.dumps({"seed": seed}) + "\n")
        archive.writestr(f"hidden/{MARKER}", json.dumps({"kind": "hidden", "version": 1}) + "\n")
        if wheel is not None:
            archive.write(wheel, Path(wheel).name)
    return Path(path)
