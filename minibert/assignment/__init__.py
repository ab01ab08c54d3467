"""Assignments that grade: BERT's backward passes as a course hands them out.

``create_workspace`` writes a student folder of stubs (one task per file, in teaching
order) with public tests, or the instructor's tree (student/, solutions/, hidden/);
``grade`` grades a folder task by task, each in its own process with a time limit;
``use_implementation`` runs minibert's models on a student's backward passes;
``bugs`` is the bug-hunting lab. The command line: ``minibert assignment create|grade``.
See docs/assignments.md.
"""

from minibert.assignment.checks import CheckFailed, run_checks
from minibert.assignment.grader import GradeReport, GradeRow, grade, grade_task
from minibert.assignment.tasks import TASK_NAMES, TASKS, Task, task_by_name
from minibert.assignment.workspace import (
    MARKER,
    NotAWorkspace,
    TaskLoadError,
    create_workspace,
    load_task_functions,
    use_implementation,
)

__all__ = [
    "CheckFailed", "GradeReport", "GradeRow", "MARKER", "NotAWorkspace", "TASKS", "TASK_NAMES",
    "Task", "TaskLoadError", "create_workspace", "grade", "grade_task", "load_task_functions",
    "run_checks", "task_by_name", "use_implementation",
]
