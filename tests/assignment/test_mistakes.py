"""Typical student mistakes, each written as a student would: the task it costs, the hint's
words, the score.

Every case is a whole student file from ``minibert.assignment.mistakes.MISTAKES`` (not a
patch of the solutions), so the cases read as what a student hands in and do not depend on
the text of minibert's own backward passes. Each is caught by the public checks alone (what
the student runs); a workspace holding one of them loses exactly its task's points.
"""

from pathlib import Path

import pytest

from minibert.assignment import TASKS, check_task, create_workspace, grade_task, task_by_name
from minibert.assignment.mistakes import MISTAKES, write_submission

SEED = 4321


@pytest.fixture(scope="module")
def tree(tmp_path_factory) -> Path:
    return create_workspace(tmp_path_factory.mktemp("course") / "hw", instructor=True, seed=SEED)


@pytest.mark.parametrize("case,task,source,said", MISTAKES, ids=[c[0] for c in MISTAKES])
def test_public_checks_name_the_mistake(tree, tmp_path, case, task, source, said):
    spec = task_by_name(task)
    student = write_submission(tmp_path / "s", tree / "solutions", {spec.file: source})
    passed, message = grade_task(student, task)  # the public checks alone
    assert not passed
    assert message.startswith(spec.function.split("_step")[0]), message
    assert said in message, message
    assert "\n" not in message


@pytest.mark.slow
def test_a_planted_mistake_costs_exactly_its_task(tree, tmp_path):
    """The whole grader (processes, hidden tests) on one mistake: one task's points lost."""
    from minibert.assignment import grade

    case = MISTAKES[0]
    student = write_submission(tmp_path / "one", tree / "solutions",
                               {task_by_name(case[1]).file: case[2]})
    report = grade(student, hidden=tree / "hidden")
    rows = {row.task: row for row in report.rows}
    assert report.total == 100 - task_by_name(case[1]).points
    assert case[3] in rows[case[1]].message
    assert all(row.passed for row in report.rows if row.task != case[1])


def test_the_solutions_pass_every_case_above(tree):
    """The same checks pass minibert's own answers, with the hidden tests too."""
    for task in sorted({case[1] for case in MISTAKES}):
        assert grade_task(tree / "solutions", task, hidden_seed=SEED) == (True, "ok"), task


def test_every_task_is_in_the_handout_s_hidden_list():
    from minibert.assignment.handout import HIDDEN_CHECKS

    assert set(HIDDEN_CHECKS) == {task.name for task in TASKS}


def test_flags_do_not_change_the_score(tree, tmp_path):
    student = write_submission(tmp_path / "f", tree / "solutions", {"layernorm.py": """
        from minibert.functional import layernorm_backward  # noqa: F401
        """})
    result = check_task(student, "layernorm")
    assert (result.passed, result.message) == (True, "ok")
    assert any("imports minibert's own layernorm_backward" in flag for flag in result.flags)
