"""Integrity: each shortcut planted into the solutions is flagged or scores zero for its task;
the solutions and honest work with a renamed variable carry no flag; the grader survives a
task that kills its parent or leaves a process behind; submissions alike are reported."""

import inspect
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from minibert import functional as F
from minibert.assignment import check_task, create_workspace, grade, grade_all
from minibert.assignment.mistakes import write_submission
from minibert.assignment.similarity import fingerprint, similarity, tokens

SEED = 97


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("course") / "hw", instructor=True, seed=SEED)


def _plant(tree: Path, target: Path, files: dict[str, str]) -> Path:
    return write_submission(target, tree / "solutions",
                            {name: textwrap.dedent(text) for name, text in files.items()})


def _renamed_copy_of_layernorm() -> str:
    source = textwrap.dedent(inspect.getsource(F.layernorm_backward))
    for old, new in (("dx_hat", "grad_normed"), ("projection", "proj"), ("width", "h"),
                     ("dweight", "gamma_grad"), ("dbias", "beta_grad")):
        source = source.replace(old, new)
    return "import numpy as np\nfrom minibert.functional import column_sum, row_mean\n\n" + source


# task, file, text, the words of the flag (or None: the task scores zero)
SHORTCUTS = [
    ("linear", "linear.py", """
        import minibert.assignment.task_check as grader
        grader.run_checks = lambda *args, **kwargs: None

        def linear_backward(dout, cache):
            return None
        """, None),
    ("encoder_block", "encoder_block.py", """
        from minibert import flat_layer

        def encoder_block_backward(dout, cache):
            return flat_layer.bert_layer_backward(dout, cache)
        """, "bert_layer_backward"),
    ("encoder_block", "encoder_block.py", """
        import importlib

        def encoder_block_backward(dout, cache):
            library = importlib.import_module("minibert." + "flat" + "_layer")
            return getattr(library, "bert_layer_" + "backward")(dout, cache)
        """, "calls minibert's own bert_layer_backward"),
    ("layernorm", "layernorm.py", """
        import inspect
        from minibert import functional as library

        namespace = dict(vars(library))
        exec(compile(inspect.getsource(library.layernorm_backward), "my_helpers.py", "exec"),
             namespace)
        layernorm_backward = namespace["layernorm_backward"]
        """, "exec/compile"),
    ("layernorm", "layernorm.py", """
        import importlib.util
        from minibert import functional as library

        spec = importlib.util.spec_from_file_location("my_layers", library.__file__)
        mine = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mine)
        layernorm_backward = mine.layernorm_backward
        """, "loads minibert's functional.py as module 'my_layers'"),
    ("softmax", "softmax.py", """
        import threading

        def softmax_backward(dout, cache):
            box = {}

            def work():
                probs = cache.probs
                box["dx"] = probs * (dout - (dout * probs).sum(axis=cache.axis, keepdims=True))

            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
            return box["dx"]
        """, "starts a thread"),
    ("gelu", "gelu.py", """
        from minibert import functional as F

        def gelu_backward(dout, cache):
            h = 1e-6
            plus = F.gelu_forward(cache.x + h, cache.approximate)[0]
            minus = F.gelu_forward(cache.x - h, cache.approximate)[0]
            return dout * (plus - minus) / (2 * h)
        """, "calls minibert's own gelu_forward"),
    ("layernorm", "layernorm.py", _renamed_copy_of_layernorm(),
     "of minibert's layernorm_backward (minibert.functional) is in this file"),
    ("layernorm", "layernorm.py", """
        from minibert import functional

        def layernorm_backward(dout, cache):
            return getattr(functional, "layernorm" + "_backward")(dout, cache)
        """, "calls minibert's own layernorm_backward (this task's answer)"),
]


@pytest.mark.parametrize("task,file,text,said", SHORTCUTS,
                         ids=[f"{s[0]}-{i}" for i, s in enumerate(SHORTCUTS)])
def test_each_shortcut_is_flagged_or_scores_zero(tree, tmp_path, task, file, text, said):
    student = _plant(tree, tmp_path / "s", {file: text})
    result = check_task(student, task, hidden_seed=SEED)
    if said is None:
        assert not result.passed, result
        assert "changed the grader's own" in result.message, result
    else:
        assert any(said in flag for flag in result.flags), result
    other = check_task(student, "dropout")  # another task of the same folder: untouched
    assert other.passed and other.flags == [], other


def test_a_replaced_grader_scores_zero_in_the_grader_s_processes(tree, tmp_path):
    student = _plant(tree, tmp_path / "s", {"linear.py": SHORTCUTS[0][2]})
    rows = {row.task: row for row in grade(student, jobs=2).rows}
    assert rows["linear"].points == 0 and "changed the grader's own" in rows["linear"].message
    assert rows["layernorm"].passed and not rows["layernorm"].flags


def test_honest_work_with_a_renamed_variable_is_not_flagged(tree, tmp_path):
    files = {}
    for name, old, new in (("layernorm.py", "dx_hat", "d_normed"), ("linear.py", "rows_x", "xs"),
                           ("attention.py", "d_scores", "grad_scores"),
                           ("encoder_block.py", "d_sum", "grad_total"),
                           ("cross_entropy.py", "one_hot", "target")):
        text = (tree / "solutions" / name).read_text()
        assert old in text, name
        files[name] = text.replace(old, new)
    student = _plant(tree, tmp_path / "s", files)
    report = grade(student, jobs=2)
    assert report.total == 100 and report.flags == [], report.table()


def test_the_similarity_ignores_names_comments_and_strings():
    source = textwrap.dedent(inspect.getsource(F.softmax_backward))
    renamed = source.replace("dx", "result").replace("dout", "g") + "\n# a comment\n"
    assert tokens(source) == tokens(renamed)
    assert similarity(fingerprint(source), fingerprint(renamed)) == 1.0
    other = textwrap.dedent(inspect.getsource(F.layernorm_backward))
    assert similarity(fingerprint(source), fingerprint(other)) < 0.5


KILLS_PARENT = """
import os
import signal

os.kill(os.getppid(), signal.SIGKILL)
"""

LEAVES_A_PROCESS = """
import subprocess
import sys

subprocess.Popen([sys.executable, "-c", "import time\\nwhile True: time.sleep(0.01)",
                  "{marker}"], start_new_session=True, stdout=subprocess.DEVNULL,
                 stderr=subprocess.DEVNULL)
"""


def _running(marker: str) -> list[str]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if marker.encode() in (entry / "cmdline").read_bytes():
                    found.append(entry.name)
            except OSError:
                pass
    return found


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_the_grader_survives_a_task_that_kills_it_or_leaves_a_process(tree, tmp_path):
    marker = f"minibert-test-leftover-{os.getpid()}-{time.time_ns()}"
    solutions = tree / "solutions"
    killer = _plant(tree, tmp_path / "class" / "killer", {
        "gelu.py": (solutions / "gelu.py").read_text() + KILLS_PARENT})
    _plant(tree, tmp_path / "class" / "spawner", {
        "softmax.py": (solutions / "softmax.py").read_text()
        + LEAVES_A_PROCESS.replace("{marker}", marker)})
    _plant(tree, tmp_path / "class" / "honest", {})
    graded = {name: report for name, report, _ in
              grade_all(tmp_path / "class", out=tmp_path / "grades.csv", jobs=2)}
    assert (tmp_path / "grades.csv").is_file()
    assert graded["honest"].total == 100 and not graded["honest"].flags
    rows = {row.task: row for row in graded["killer"].rows}
    assert rows["gelu"].points == 0 and "killed" in rows["gelu"].message
    assert graded["killer"].total == 100 - rows["gelu"].max_points
    spawner = {row.task: row for row in graded["spawner"].rows}
    assert any("starts a process" in flag for flag in spawner["softmax"].flags)
    assert _running(marker) == []
    assert killer.is_dir()


# -- a class folder's bad input, Canvas, late work, regrades -----------------------------------

def _zip_bomb(path: Path) -> None:
    """A zip whose one member unpacks to 200 MB of zeros (a few hundred KB on disk)."""
    import zipfile

    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        with archive.open("linear.py", "w", force_zip64=True) as member:
            block = b"\0" * 2**20
            for _ in range(200):
                member.write(block)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="non-UTF-8 file names")
def test_bad_input_in_a_class_folder_is_one_row_each_and_nothing_outside_is_read(tree,
                                                                                 tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "linear.py"
    secret.write_text((tree / "solutions" / "linear.py").read_text())
    before = {p.name: p.stat().st_mtime_ns for p in outside.iterdir()}
    klass = tmp_path / "class"
    klass.mkdir()
    _zip_bomb(klass / "bomb.zip")
    (klass / "linked").symlink_to(outside, target_is_directory=True)  # the whole folder
    inside = _plant(tree, klass / "link-inside", {})
    (inside / "linear.py").unlink()
    (inside / "linear.py").symlink_to(secret)  # one file
    big = _plant(tree, klass / "big", {})
    with open(big / "linear.py", "ab") as handle:
        handle.truncate(50 * 2**20)
    (klass / "nothing").mkdir()
    (klass / "nothing" / "notes.txt").write_text("no code")
    odd = os.fsdecode(b"caf\xe9-\xff")  # not UTF-8
    _plant(tree, klass / odd, {})
    out = tmp_path / "grades.csv"
    graded = grade_all(klass, out=out, jobs=2)
    import csv

    rows = {row["submission"]: row for row in csv.DictReader(out.open(encoding="utf-8"))}
    assert len(rows) == len(graded) == 6
    assert rows["bomb"]["notes"] == "bomb.zip holds more than 50 MB"
    assert rows["bomb"]["total"] == "0" and rows["bomb"]["max_total"] == "100"
    assert "symbolic link" in rows["linked"]["notes"] and rows["linked"]["total"] == "0"
    assert "linear.py: a symbolic link, not followed" in rows["link-inside"]["notes"]
    assert rows["link-inside"]["linear"] == "0"
    assert rows["link-inside"]["total"] == str(100 - 5)
    assert "linear.py: 50 MB, more than 5 MB: left out" in rows["big"]["notes"]
    assert rows["big"]["total"] == str(100 - 5)
    assert rows["nothing"]["notes"].startswith("no task files found")
    odd_row = next(name for name in rows if name.startswith("caf"))
    assert rows[odd_row]["total"] == "100" and "\ufffd" in odd_row
    assert {p.name: p.stat().st_mtime_ns for p in outside.iterdir()} == before


def test_canvas_files_late_work_duplicates_and_a_regrade(tree, tmp_path):
    klass = tmp_path / "class"
    klass.mkdir()
    for task_file in ("linear.py", "layernorm.py"):  # Canvas's flat download, one late
        text = (tree / "solutions" / task_file).read_text()
        (klass / f"smithjane_LATE_1234_5678_{task_file[:-3]}-1.py").write_text(text)
    _plant(tree, klass / "alice", {})
    import zipfile

    with zipfile.ZipFile(klass / "alice.zip", "w") as archive:
        for path in (tree / "solutions").glob("*.py"):
            if path.name != "test_public.py":
                archive.write(path, f"hw/{path.name}")
    late = tmp_path / "late.csv"
    late.write_text("submission,days\nalice,2\n")
    out = tmp_path / "grades.csv"
    graded = grade_all(klass, out=out, late_days=late, late_penalty=10, jobs=2)
    names = [name for name, _, _ in graded]
    assert names == ["alice", "alice.zip", "smithjane"]
    import csv

    rows = {row["submission"]: row for row in csv.DictReader(out.open())}
    assert rows["smithjane"]["linear"] == "5" and rows["smithjane"]["layernorm"] == "8"
    assert rows["smithjane"]["late_penalty"] == "10%"  # LATE: one day
    assert rows["alice"]["total"] == "80.0" and rows["alice"]["late_penalty"] == "20%"
    assert rows["alice.zip"]["total"] == "100" and "alike: " in rows["alice.zip"]["notes"]
    # a regrade of one submission replaces its row and keeps the others
    (klass / "alice" / "softmax.py").write_text("def softmax_backward(dout, cache):\n"
                                                "    return dout\n")
    grade_all(klass, out=out, only=["alice"], jobs=2)
    again = {row["submission"]: row for row in csv.DictReader(out.open())}
    assert again["alice"]["softmax"] == "0" and again["alice"]["late_penalty"] == ""
    assert again["smithjane"] == rows["smithjane"] and again["alice.zip"] == rows["alice.zip"]


def test_outputs_that_cannot_be_written_are_refused_before_grading(tree, tmp_path):
    klass = tmp_path / "class"
    _plant(tree, klass / "alice", {})
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    for argv, option in ((["grade-all", str(klass), "-o", str(blocker / "grades.csv")], "-o"),
                         (["grade", str(klass / "alice"), "--gradescope",
                           str(blocker / "results.json")], "--gradescope")):
        started = time.monotonic()
        done = subprocess.run([sys.executable, "-m", "minibert", "assignment", *argv],
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 2, done.stderr
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and option in lines[0] and "[1/1]" not in done.stderr, lines
        assert time.monotonic() - started < 60
    for limit in ("inf", "1e300", "nan"):
        for option in ("--time-limit", "--import-limit"):
            done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade",
                                   str(klass / "alice"), option, limit],
                                  capture_output=True, text=True, timeout=120)
            assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
            assert len(done.stderr.strip().splitlines()) == 1 and option in done.stderr


@pytest.mark.parametrize("patch", [
    "import minibert.assignment.task_check as grader\n"
    "grader.run_checks = grader._verify = lambda *args, **kwargs: None\n",
    "from minibert.assignment import checks\n"
    "checks._close.__code__ = (lambda *args, **kwargs: None).__code__\n",
    "import numpy\nnumpy.allclose = lambda *args, **kwargs: True\n",
])
def test_the_grader_s_own_code_changed_in_any_way_scores_zero(tree, tmp_path, patch):
    student = _plant(tree, tmp_path / "s", {
        "linear.py": patch + "\ndef linear_backward(dout, cache):\n    return None\n"})
    result = check_task(student, "linear")
    assert not result.passed and "changed the grader's own" in result.message, result
    assert check_task(tree / "solutions", "linear").passed  # restored for what follows


def test_every_block_that_runs_the_page_is_watched_for_the_encoder_block():
    """The encoder block's task watches the page's pair and PageLayer.backward, the one
    backward that BERT's, ALBERT's and DistilBERT's blocks run: none overrides it, so a call
    through any of them is seen."""
    from minibert.assignment.integrity import _watched_targets
    from minibert.assignment.tasks import task_by_name
    from minibert.family.albert import AlbertLayer
    from minibert.family.distilbert import DistilBertTransformerBlock
    from minibert.model import BertLayer, PageLayer

    watched = {(owner, name) for owner, name, _ in _watched_targets(task_by_name("encoder_block"))}
    assert (PageLayer, "backward") in watched
    for block in (BertLayer, AlbertLayer, DistilBertTransformerBlock):
        assert issubclass(block, PageLayer), block.__name__
        assert block.backward is PageLayer.backward, f"{block.__name__} overrides the backward"
