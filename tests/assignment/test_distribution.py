"""What a student installs: the wheel and the sdist built from a clean copy of the repository
carry no answer key, no bug list, no rubric and no hidden seed; the instructor's commands
say in one line that they need the repository."""

import inspect
import json
import os
import shutil
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from minibert.assignment import create_workspace, instructor
from minibert.assignment.instructor import InstructorMaterialMissing

ROOT = Path(__file__).resolve().parents[2]


def _clean_copy(target: Path) -> Path:
    """The repository's files as a fresh clone has them (tracked and new, not ignored)."""
    listed = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                             "--exclude-standard"], cwd=ROOT, capture_output=True, timeout=60)
    if listed.returncode != 0:
        pytest.skip("not a git checkout: no clean copy to build from")
    for name in listed.stdout.decode().split("\0"):
        source = ROOT / name
        if name and source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target / name)
    return target


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> tuple[Path, Path]:
    """(wheel, sdist) built from a clean copy of the repository."""
    source = _clean_copy(tmp_path_factory.mktemp("clone"))
    out = tmp_path_factory.mktemp("dist")
    env = dict(os.environ, PIP_NO_INDEX="1")
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps",
                    "--no-build-isolation", "-w", str(out), str(source)], check=True,
                   timeout=300, env=env, capture_output=True)
    subprocess.run([sys.executable, "-c", "import sys; from setuptools import build_meta; "
                    "build_meta.build_sdist(sys.argv[1])", str(out)], check=True, timeout=300,
                   cwd=source, capture_output=True)
    (wheel,), (sdist,) = out.glob("*.whl"), out.glob("*.tar.gz")
    return wheel, sdist


def _members(wheel: Path, sdist: Path) -> dict[str, bytes]:
    files = {}
    with zipfile.ZipFile(wheel) as archive:
        files.update({f"wheel:{n}": archive.read(n) for n in archive.namelist()})
    with tarfile.open(sdist) as archive:
        for member in archive.getmembers():
            if member.isfile():
                files[f"sdist:{member.name}"] = archive.extractfile(member).read()
    return files


def test_the_distribution_is_minibert_numpy_and_imports_as_minibert(built):
    wheel, sdist = built
    assert wheel.name.startswith("minibert_numpy-") and sdist.name.startswith("minibert_numpy-")
    with zipfile.ZipFile(wheel) as archive:
        tops = {name.split("/")[0] for name in archive.namelist()}
    assert "minibert" in tops and "instructor" not in tops


def test_the_wheel_and_sdist_carry_no_answer_key_bug_list_or_seed(built):
    files = _members(*built)
    names = list(files)
    assert not [n for n in names if "instructor/" in n or n.endswith(
        ("solutions.py", "bugs_key.py", "written.py", "cases.json", "BUGS.md", "RUBRIC.md"))]
    keys = [instructor.load("bugs_key"), instructor.load("solutions"), instructor.load("written")]
    bugs, solutions, written = keys
    symptoms = [bug.symptom for bug in bugs.BUGS]
    names_of_bugs = [bug.name for bug in bugs.BUGS]
    # each answer the library has no pair for, whole (the layer tasks' answers are
    # minibert.functional's pairs, public by design)
    signature_lines = [inspect.getsource(getattr(solutions, name)).split('"""', 2)[-1]
                       for name in ("encoder_block_backward", "tied_mlm_backward",
                                    "check_model_gradients", "adamw_step", "clip_grad_norm",
                                    "mask_tokens", "make_nsp_pairs")]
    model_answer = written.ANSWERS["layers"][0][0][:60]
    for name, data in files.items():
        if not name.endswith((".py", ".md", ".txt", ".json", ".cfg", ".in")):
            continue
        text = data.decode("utf-8", errors="replace")
        for secret in symptoms + names_of_bugs + signature_lines + [model_answer]:
            assert secret not in text, (name, secret)
        if name.endswith(".py"):
            assert "def instructor_notes" not in text and "def fixed_source" not in text, name
            assert "def solution_source" not in text, name


def test_instructor_commands_need_the_repository(tmp_path, monkeypatch):
    monkeypatch.setenv("MINIBERT_INSTRUCTOR", str(tmp_path / "nowhere"))
    with pytest.raises(InstructorMaterialMissing, match="MINIBERT_INSTRUCTOR"):
        create_workspace(tmp_path / "hw", instructor=True)
    assert not (tmp_path / "hw").exists()
    create_workspace(tmp_path / "student")  # the student's workspace needs none of it
    env = dict(os.environ, MINIBERT_INSTRUCTOR=str(tmp_path / "nowhere"))
    done = subprocess.run([sys.executable, "-m", "minibert", "assignment", "create",
                           str(tmp_path / "hw2"), "--instructor"], capture_output=True,
                          text=True, timeout=120, env=env)
    assert done.returncode == 2, done
    assert len(done.stderr.strip().splitlines()) == 1 and "instructor" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_hidden_seed_is_drawn_for_each_course_and_kept_in_the_instructor_tree(tmp_path):
    seeds = set()
    for k in range(3):
        tree = create_workspace(tmp_path / f"c{k}", instructor=True)
        seeds.add(json.loads((tree / "hidden" / "cases.json").read_text())["seed"])
        assert not list((tree / "student").rglob("cases.json"))
        assert (tree / "solutions" / "RUBRIC.md").is_file()
        assert not (tree / "student" / "RUBRIC.md").exists()
    assert len(seeds) == 3
