"""The grader a course can trust: one mistake costs one task and names its file and line,
slow imports are told from loops, integrity flags, a lab that does not give itself away,
the handout, and the exports (Gradescope's results.json, a class CSV).
"""

import csv
import json
import os
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from minibert.assignment import (
    TASKS,
    check_task,
    create_workspace,
    grade,
    grade_all,
    instructor,
    task_by_name,
)
from minibert.assignment.handout import CELLS, HIDDEN_CHECKS, QUESTIONS, READING
from minibert.assignment.mistakes import BROKEN, MISTAKES, write_class, write_submission

BUGS = instructor.load("bugs_key").BUGS  # the lab's key, from the repository's instructor/

ROOT = Path(__file__).resolve().parents[2]
SEED = 2468


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("course") / "hw", instructor=True, seed=SEED)


def _student(tree: Path, target: Path, **files: str) -> Path:
    """The solutions, marker included, with some files replaced by a student's text."""
    return write_submission(target, tree / "solutions", files)


def _prepend(tree: Path, name: str, line: str) -> str:
    return line + "\n" + (tree / "solutions" / name).read_text()


def test_a_syntax_error_costs_its_own_task_even_when_others_import_the_file(tree, tmp_path):
    """linear.py has a stray ')' on line 4; encoder_block.py and tied_decoder.py import it.
    Only the linear task fails, and the line names linear.py, not the importers."""
    broken = _student(tree, tmp_path / "s", **{
        "linear.py": "import numpy as np\n\n\ndx = (1 + 2))\n",
        "encoder_block.py": _prepend(tree, "encoder_block.py",
                                     "from linear import linear_backward  # noqa: F401"),
        "tied_decoder.py": _prepend(tree, "tied_decoder.py", "import linear  # noqa: F401"),
    })
    report = grade(broken)
    rows = {row.task: row for row in report.rows}
    assert rows["linear"].message.startswith("linear.py line 4: SyntaxError"), rows["linear"]
    assert report.total == 100 - task_by_name("linear").points
    assert all(row.passed for row in report.rows if row.task != "linear")


@pytest.mark.parametrize("task", [t.name for t in TASKS])
def test_a_syntax_error_in_any_file_costs_only_that_task(tree, tmp_path, task):
    """In process, task by task: a stray ')' in one file fails that task with its file and
    line; every other task, graded with the broken file in the folder, still passes."""
    file = task_by_name(task).file
    broken = _student(tree, tmp_path / "s", **{file: "import numpy as np\n\nx = [1, 2))\n"})
    failed = check_task(broken, task)
    assert not failed.passed and failed.message.startswith(f"{file} line 3: SyntaxError")
    others = [t for t in TASKS if t.name != task]
    # every file that could import it does so: the stand-in serves minibert's version
    stem = Path(file).stem
    for other in others[:3]:
        (broken / other.file).write_text(_prepend(tree, other.file, f"import {stem}  # noqa"))
    for other in others[:3]:
        assert check_task(broken, other.name).passed, other.name


def test_a_top_level_name_error_costs_its_own_task(tree, tmp_path):
    broken = _student(tree, tmp_path / "s", **{
        "gelu.py": (tree / "solutions" / "gelu.py").read_text() + "\nundefined_helper()\n",
        "encoder_block.py": _prepend(tree, "encoder_block.py",
                                     "from gelu import gelu_backward  # noqa: F401"),
        "tied_decoder.py": _prepend(tree, "tied_decoder.py",
                                    "from gelu import gelu_backward  # noqa: F401"),
    })
    line = len((tree / "solutions" / "gelu.py").read_text().splitlines()) + 2
    report = grade(broken)
    rows = {row.task: row for row in report.rows}
    assert rows["gelu"].message == (f"gelu.py line {line}: NameError while loading gelu.py: "
                                    f"name 'undefined_helper' is not defined")
    assert report.total == 100 - task_by_name("gelu").points


def test_a_helper_imported_from_another_task_file_is_explained(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{
        "softmax.py": _prepend(tree, "softmax.py", "def my_helper(x):\n    return x\n"),
        "attention.py": _prepend(tree, "attention.py", "from softmax import my_helper  # noqa"),
    })
    result = check_task(student, "attention")
    assert not result.passed
    assert result.message.startswith("attention.py line 1: cannot import name 'my_helper'")
    assert "softmax.py is minibert's version of it (it serves softmax_backward)" in result.message
    assert check_task(student, "softmax").passed


SLOW_IMPORT = "import time\ntime.sleep({seconds})\n"
LOOP = "def make_nsp_pairs(documents, rng):\n    while True:\n        pass\n"


@pytest.mark.slow
def test_a_slow_import_is_not_an_infinite_loop(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{
        "softmax.py": _prepend(tree, "softmax.py", SLOW_IMPORT.format(seconds=3)),
        "dropout.py": _prepend(tree, "dropout.py", SLOW_IMPORT.format(seconds=30)),
        "nsp.py": LOOP,
    })
    report = grade(student, time_limit=2.0, import_limit=10.0, jobs=3)
    rows = {row.task: row for row in report.rows}
    assert rows["softmax"].passed  # 3 s of import, 2 s of checks allowed: not counted
    assert rows["dropout"].message.startswith("loading the task's file took longer than 10 s "
                                              "(the import limit")
    assert rows["nsp"].message.startswith("time limit of 2 s exceeded while the checks ran "
                                          "(an infinite loop?); loading the file took ")
    assert {row.task for row in report.rows if not row.passed} == {"dropout", "nsp"}


def test_a_crash_costs_its_own_task(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{"dropout.py": """
        import os

        def dropout_backward(dout, cache):
            print("leaving")
            os._exit(3)
        """})
    report = grade(student)
    rows = {row.task: row for row in report.rows}
    assert rows["dropout"].message == ("the task's process ended with exit code 3 while the "
                                       "checks ran: leaving")
    assert report.total == 100 - task_by_name("dropout").points


def test_where_processes_do_not_fork_each_task_is_a_new_python(tree, tmp_path):
    """macOS and Windows: the supervisor starts a new Python per task (here forced on
    Linux), with the same protocol, messages and time limit after loading."""
    student = _student(tree, tmp_path / "s", **{"linear.py": "x = (1))\n", "nsp.py": LOOP})
    jobs = [{"workspace": str(student), "task": task, "hidden_seed": None, "kind": None}
            for task in ("linear", "nsp", "softmax")]
    code = ("import json, sys; import minibert.assignment.runner as r; "
            "r._forks = lambda: False; r._supervise(sys.stdin.buffer.read())")
    request = json.dumps({"jobs": jobs, "time_limit": 3.0, "import_limit": 120.0,
                          "workers": 3})
    done = subprocess.run([sys.executable, "-c", code], input=request, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = {jobs[r["index"]]["task"]: r for r in map(json.loads, done.stdout.splitlines())
               if "started" not in r}
    assert results["linear"]["message"] == "linear.py line 1: SyntaxError: unmatched ')'"
    assert results["nsp"]["message"].startswith("time limit of 3 s exceeded while the checks")
    assert (results["softmax"]["passed"], results["softmax"]["message"]) == (True, "ok")


# -- integrity --------------------------------------------------------------------------------

def test_minibert_s_own_answer_is_flagged_with_file_and_line(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{
        "layernorm.py": "from minibert.functional import layernorm_backward  # noqa: F401\n",
        "embedding.py": """
            from minibert import functional as F

            def embedding_backward(dout, cache):
                return getattr(F, "embedding_" + "backward")(dout, cache)
            """,
        "model_gradcheck.py": _prepend(tree, "model_gradcheck.py",
                                       "from minibert.gradcheck import check_loss  # noqa"),
    })
    report = grade(student)
    rows = {row.task: row for row in report.rows}
    assert report.total == 100  # the lecturer decides, not the grader
    assert rows["layernorm"].flags == [
        "layernorm.py line 1 imports minibert's own layernorm_backward from "
        "minibert.functional (this task's answer)"]
    assert rows["embedding"].flags == [
        "embedding.py line 4 calls minibert's own embedding_backward (this task's answer)"]
    assert any("imports minibert.gradcheck" in f for f in rows["model_gradcheck"].flags)
    table = report.table()
    assert "layernorm           8/8  ok  [flagged]" in table
    assert "flagged for the lecturer (the score stands; the lecturer decides):" in table
    assert [row.task for row in report.rows if row.flags] == ["embedding", "layernorm",
                                                              "model_gradcheck"]


def test_autodiff_is_flagged(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{"softmax.py": _prepend(
        tree, "softmax.py", "def _unused():\n    import torch  # noqa: F401\n")})
    result = check_task(student, "softmax")
    assert result.passed
    assert result.flags == ["softmax.py line 2 imports torch (automatic differentiation; the "
                            "task asks for the gradient by hand)"]


@pytest.mark.slow
def test_an_autodiff_import_hidden_from_the_source_is_flagged(tree, tmp_path):
    pytest.importorskip("torch")
    student = _student(tree, tmp_path / "s", **{"gelu.py": _prepend(
        tree, "gelu.py", "import importlib\nimportlib.import_module('tor' + 'ch')\n")})
    report = grade(student, jobs=1)
    rows = {row.task: row for row in report.rows}
    assert rows["gelu"].passed
    assert rows["gelu"].flags == ["gelu.py: torch was imported while the task ran (automatic "
                                  "differentiation; the task asks for the gradient by hand)"]


def test_the_solutions_and_the_stubs_carry_no_flag(tree):
    for folder in (tree / "solutions", tree / "student"):
        for task in TASKS:
            assert check_task(folder, task.name).flags == [], (folder.name, task.name)


# -- the lab ----------------------------------------------------------------------------------

def test_the_untouched_lab_names_no_bug_and_no_place(tmp_path):
    lab = create_workspace(tmp_path / "lab", lab="bugs", instructor=True)
    report = grade(lab / "student")
    assert [row.task for row in report.rows] == [f"bug {k}" for k in range(1, len(BUGS) + 1)]
    assert all(row.message == "still there" for row in report.rows)
    table = report.table()
    assert f"0 of {len(BUGS)} bugs fixed" in table
    functions = set(re.findall(r"def (\w+)", (lab / "student" / "buggy_bert.py").read_text()))
    for text in (table, (lab / "student" / "README.md").read_text()):
        for bug in BUGS:
            assert bug.name not in text and bug.symptom not in text
        assert not any(name in text for name in functions), text
    notes = (lab / "solutions" / "BUGS.md").read_text()
    assert all(bug.name in notes and bug.symptom in notes for bug in BUGS)
    assert not (lab / "student" / "BUGS.md").exists()


def test_the_doc_help_points_to_holds_no_list_of_the_bugs():
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "--help"],
                          capture_output=True, text=True, timeout=120)
    assert "docs/assignments.md" in done.stdout
    page = (ROOT / "docs" / "assignments.md").read_text()
    for bug in BUGS:
        assert bug.name not in page and bug.symptom not in page
        assert bug.planted.strip().splitlines()[0].strip() not in page


def test_a_fixed_bug_reads_fixed(tmp_path):
    lab = create_workspace(tmp_path / "lab", lab="bugs")
    source = (lab / "buggy_bert.py").read_text()
    (lab / "buggy_bert.py").write_text(source.replace(BUGS[2].planted, BUGS[2].fixed))
    report = grade(lab)
    assert [row.message for row in report.rows] == ["fixed" if k == 2 else "still there"
                                                    for k in range(len(BUGS))]


# -- the handout ------------------------------------------------------------------------------

def _headings(path: Path) -> set[str]:
    return {line.lstrip("#").strip() for line in path.read_text().splitlines()
            if line.startswith("#")}


def _anchor(heading: str) -> str:
    return re.sub(r"[^a-z0-9 -]", "", heading.lower()).replace(" ", "-")


def _notebook_sections(number: str) -> set[str]:
    path = next((ROOT / "notebooks").glob(f"{number}_*.ipynb"))
    cells = json.loads(path.read_text())["cells"]
    return {line[3:].strip() for cell in cells if cell["cell_type"] == "markdown"
            for line in "".join(cell["source"]).splitlines() if line.startswith("## ")}


def test_every_reading_the_handout_names_exists():
    for docs, notebooks in READING.values():
        for section in docs:
            file, anchor = section.split("#")
            assert anchor in {_anchor(h) for h in _headings(ROOT / "docs" / file)}, section
        for section in notebooks:
            number, rest = section.split(" §", 1)
            index, title = rest.split(" ", 1)
            assert f"{index}. {title}" in _notebook_sections(number), section


def test_every_notebook_cell_the_handout_names_exists():
    for labels in CELLS.values():
        for label in labels:
            path = next((ROOT / "notebooks").glob(f"{label[:2]}_*.ipynb"))
            cells = json.loads(path.read_text())["cells"]
            assert any("".join(c["source"]).startswith(f"# [{label}]") for c in cells
                       if c["cell_type"] == "code"), label


def test_the_readme_is_a_handout(tree):
    readme = (tree / "student" / "README.md").read_text()
    for number, task in enumerate(TASKS, 1):
        assert f"### Task {number}: `{task.function}` in `{task.file}`" in readme
        assert HIDDEN_CHECKS[task.name] in readme
    for title, questions in QUESTIONS.values():
        assert f"## {title}" in readme
        assert all(question in readme for question in questions)
    assert "## What is forbidden" in readme and "## How it is graded" in readme
    assert "docs/assignment_reading.md" in readme and "minibert/functional.py" not in readme
    assert "docs/backprop.md" not in readme  # the library's code is not the reading
    assert "## Submitting" in readme and "Deadline: (your course gives it)" in readme
    answers = (tree / "student" / "answers.md").read_text()
    assert answers.count("### Question") == sum(len(q) for _, q in QUESTIONS.values())


def test_create_pdf_draws_the_handout(tmp_path):
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "create",
                           str(tmp_path / "hw"), "--pdf"], capture_output=True, text=True,
                          timeout=300)
    assert done.returncode == 0, done.stderr
    pdf = (tmp_path / "hw" / "README.pdf").read_bytes()
    assert pdf.startswith(b"%PDF") and pdf.rstrip().endswith(b"%%EOF")
    assert len(re.findall(rb"/Type\s*/Page\b", pdf)) >= 4


# -- exports ----------------------------------------------------------------------------------

def test_gradescope_results_json(tree, tmp_path):
    student = _student(tree, tmp_path / "s", **{
        "softmax.py": MISTAKES[5][2],
        "layernorm.py": "from minibert.functional import layernorm_backward  # noqa: F401\n"})
    out = tmp_path / "results" / "results.json"
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade",
                           str(student), "--hidden", str(tree / "hidden"), "--gradescope",
                           str(out)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    results = json.loads(out.read_text())
    assert "score" not in results  # Gradescope adds the tests up: no total before publishing
    tests = results["tests"]
    assert [t["name"] for t in tests] == [
        f"{t.name} ({t.file}: {t.function}): {part}" for t in TASKS
        for part in ("public tests", "all tests (hidden included)")]
    assert sum(t["score"] for t in tests) == 100 - task_by_name("softmax").points
    public = {t["name"].split()[0]: t for t in tests if t["name"].endswith("public tests")}
    full = {t["name"].split()[0]: t for t in tests if not t["name"].endswith("public tests")}
    assert all(t["visibility"] == "visible" and t["max_score"] == 0 for t in public.values())
    assert all(t["visibility"] == "after_published" for t in full.values())
    assert (full["softmax"]["score"], full["softmax"]["max_score"],
            full["softmax"]["status"]) == (0, 6, "failed")
    assert public["softmax"]["status"] == "failed"
    assert "only the Jacobian's diagonal" in full["softmax"]["output"]
    assert "flagged for the lecturer" in full["layernorm"]["output"]
    assert full["layernorm"]["status"] == "passed"
    assert results["extra_data"]["flags"] and results["visibility"] == "visible"


def test_gradescope_without_hidden_tests_and_a_folder_upload(tree, tmp_path):
    """An upload of the folder itself (task files one level down, no marker) is graded as
    grade-all grades a submission; without hidden tests every test is visible."""
    upload = tmp_path / "submission"
    _student(tree, upload / "my-homework", **{"softmax.py": MISTAKES[5][2]})
    (upload / "my-homework" / ".minibert-assignment.json").unlink()
    report = grade(upload, jobs=2)
    assert report.total == 100 - task_by_name("softmax").points
    results = report.to_gradescope()
    assert results["score"] == report.total
    assert all(t["visibility"] == "visible" for t in results["tests"])
    assert len(results["tests"]) == len(TASKS)
    with pytest.raises(ValueError, match="hidden_visibility must be one of"):
        report.to_gradescope("soon")


@pytest.mark.slow
def test_grade_all_writes_one_csv_for_a_class(tree, tmp_path):
    """A generated class (two correct, every mistake of the catalogue, every broken file;
    one zipped, one empty) graded into one CSV: each row loses exactly its case's task,
    with the hint's words in its notes."""
    count = 2 + len(MISTAKES) + len(BROKEN)
    cases = dict(write_class(tmp_path / "class", tree / "solutions", count=count))
    zipped = tmp_path / "class" / "student003"
    with zipfile.ZipFile(tmp_path / "class" / "student003.zip", "w") as archive:
        for path in zipped.iterdir():
            archive.write(path, f"hw/{path.name}")
    for path in zipped.iterdir():
        path.unlink()
    zipped.rmdir()
    (tmp_path / "class" / "student099").mkdir()
    out = tmp_path / "grades.csv"
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "grade-all",
                           str(tmp_path / "class"), "--hidden", str(tree / "hidden"), "-o",
                           str(out), "--time-limit", "15"],  # the loop runs it out
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout and f"{count + 1} submissions graded" in done.stdout
    rows = {row["submission"]: row for row in csv.DictReader(out.open())}
    assert rows["student099"]["notes"].startswith("no task files found")
    assert rows["student099"]["max_total"] == "100"  # an empty submission: 0 of 100
    by_case = {c[0]: c for c in MISTAKES + BROKEN}
    for name, case in cases.items():
        row = rows[name]
        if case == "correct":
            assert row["total"] == "100", row
            continue
        _, task, _, said = by_case[case]
        lost = task_by_name(task).points if said != "ok" else 0
        assert int(row["total"]) == 100 - lost, (name, case, row)
        assert int(row["max_total"]) == 100
        if lost:
            assert row[task] == "0" and said in row["notes"], (case, row["notes"])
        else:
            assert row["flags"].startswith(f"{task}: "), (case, row)
    assert "student003" in rows and rows["student003"]["total"] != ""


@pytest.mark.slow
def test_grade_all_refuses_bad_input_in_one_line(tmp_path):
    for argv, words in ((["grade-all", str(tmp_path / "none")], "is not a folder"),
                        (["grade-all", str(tmp_path), "--time-limit", "0"],
                         "--time-limit 0 must be > 0 and at most 86400 seconds"),
                        (["grade-all", str(tmp_path), "--time-limit", "inf"],
                         "--time-limit inf must be > 0 and at most 86400 seconds"),
                        (["grade", str(tmp_path), "--time-limit", "1e300"],
                         "--time-limit 1e+300 must be > 0 and at most 86400 seconds"),
                        (["grade", str(tmp_path), "--import-limit", "inf"],
                         "--import-limit inf must be > 0 and at most 86400 seconds"),
                        (["grade-all", str(tmp_path), "--jobs", "0"], "--jobs 0 must be >= 1"),
                        (["grade-all", str(tmp_path)], "holds no subfolder")):
        done = subprocess.run([sys.executable, "-m", "minibert", "assignment", *argv],
                              capture_output=True, text=True, timeout=120, cwd=tmp_path)
        assert done.returncode == 2, (argv, done.stderr)
        assert len(done.stderr.strip().splitlines()) == 1 and words in done.stderr, done.stderr


@pytest.mark.slow
def test_grade_all_in_python_returns_reports(tree, tmp_path):
    write_class(tmp_path / "class", tree / "solutions", count=3)
    graded = grade_all(tmp_path / "class", out=tmp_path / "g.csv")
    assert [(name, report.total) for name, report, _ in graded] == [
        ("student001", 100), ("student002", 100),
        ("student003", 100 - task_by_name(MISTAKES[0][1]).points)]


def test_a_folder_that_cannot_be_written_is_named_as_asked(tmp_path, monkeypatch, capsys):
    """The staging folder beside the target is an implementation detail: a refusal names
    the folder the user asked for."""
    import errno
    import tempfile

    from minibert.cli import main

    def refuse(*args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(tmp_path / ".asg.x1y2"))

    monkeypatch.setattr(tempfile, "mkdtemp", refuse)
    assert main(["assignment", "create", str(tmp_path / "asg")]) == 2
    error = capsys.readouterr().err
    assert str(tmp_path / "asg") in error and ".asg." not in error, error


def test_gradescope_autograder_zip_grades_a_folder_upload(tree, tmp_path):
    """The zip's run_autograder, run as Gradescope would (AUTOGRADER_ROOT standing for
    /autograder), grades an upload whose files sit in a subfolder; an upload with no task
    file still gets a results.json, score 0 with the reason."""
    out = tmp_path / "autograder.zip"
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "autograder",
                           "--hidden", str(tree / "hidden"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    root = tmp_path / "autograder"
    with zipfile.ZipFile(out) as archive:
        assert sorted(archive.namelist()) == sorted([
            "setup.sh", "run_autograder", "hidden/cases.json",
            "hidden/.minibert-assignment.json"])
        assert archive.getinfo("run_autograder").external_attr >> 16 & 0o111
        archive.extractall(root / "source")
    assert "minibert-numpy==" in (root / "source" / "setup.sh").read_text()
    _student(tree, root / "submission" / "hw", **{"softmax.py": MISTAKES[5][2]})
    (root / "submission" / "hw" / ".minibert-assignment.json").unlink()
    env = dict(os.environ, AUTOGRADER_ROOT=str(root),
               PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, timeout=600,
                   check=True)
    results = json.loads((root / "results" / "results.json").read_text())
    assert sum(t["score"] for t in results["tests"]) == 100 - task_by_name("softmax").points
    assert {t["visibility"] for t in results["tests"]} == {"visible", "after_published"}
    for path in (root / "submission").rglob("*"):
        if path.is_file():
            path.unlink()
    subprocess.run(["bash", str(root / "source" / "run_autograder")], env=env, timeout=600,
                   check=True)
    results = json.loads((root / "results" / "results.json").read_text())
    assert results["score"] == 0 and results["output"].startswith("not graded: ")


def test_the_handout_s_submission_fields_and_its_reading_page(tmp_path):
    hw = create_workspace(tmp_path / "hw", deadline="2027-01-15 23:59 UTC",
                          submit="upload the folder on Gradescope",
                          late_policy="10% off per day, up to 3 days")
    readme = (hw / "README.md").read_text()
    assert "- Deadline: 2027-01-15 23:59 UTC." in readme
    assert "- How: upload the folder on Gradescope." in readme
    assert "- Late work: 10% off per day, up to 3 days." in readme
    with pytest.raises(ValueError, match="deadline must be one line"):
        create_workspace(tmp_path / "bad", deadline="a\nb")
    import importlib.util

    spec = importlib.util.spec_from_file_location("make_reading",
                                                  ROOT / "docs" / "make_assignment_reading.py")
    maker = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(maker)
    page = (ROOT / "docs" / "assignment_reading.md").read_text(encoding="utf-8")
    assert page == maker.reading(), "rerun docs/make_assignment_reading.py"
    assert "```" not in page and maker.OMITTED in page
    for name in maker.named_sections():
        assert name in maker.sections(page), name
