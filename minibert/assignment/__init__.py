"""Assignments that grade: BERT's backward passes as a course hands them out.

``create_workspace`` writes a student folder of stubs (one task per file, in teaching
order) with public tests, or the instructor's tree (student/, solutions/, hidden/);
``grade`` grades a folder task by task, each in its own process with a time limit;
``use_implementation`` runs minibert's models on a student's backward passes;
``grade_all`` grades a class folder of submissions into one CSV; ``bugs`` is the
bug-hunting lab. The command line: ``minibert assignment create|grade|grade-all``.
See docs/assignments.md.

The grader and its checks are imported on first use, so that ``import minibert`` (which
exports ``use_implementation``) does not load them.
"""

import importlib

from minibert.assignment.tasks import TASK_NAMES, TASKS, Task, task_by_name
from minibert.assignment.workspace import (
    MARKER,
    NotAWorkspace,
    TaskLoadError,
    create_workspace,
    load_task_functions,
    use_implementation,
)

_LAZY = {"CheckFailed": "checks", "run_checks": "checks", "GradeReport": "grader",
         "GradeRow": "grader", "TaskResult": "grader", "grade": "grader", "grade_all": "grader",
         "grade_task": "grader", "check_task": "grader"}

__all__ = [
    "CheckFailed", "GradeReport", "GradeRow", "MARKER", "NotAWorkspace", "TASKS", "TASK_NAMES",
    "Task", "TaskLoadError", "TaskResult", "check_task", "create_workspace", "grade",
    "grade_all", "grade_task", "load_task_functions", "run_checks", "task_by_name",
    "use_implementation",
]


def __getattr__(name: str):
    if name in _LAZY:
        return getattr(importlib.import_module(f"minibert.assignment.{_LAZY[name]}"), name)
    raise AttributeError(f"module 'minibert.assignment' has no attribute {name!r}")
