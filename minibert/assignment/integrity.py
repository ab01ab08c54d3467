"""Integrity flags: a task file that uses minibert's own answer, or automatic differentiation.

A flag does not change the score: the report shows it beside the task, the student sees
why, and the lecturer decides. Two looks, because either alone is easy to get round:

- ``scan_file`` reads the file's source (``ast``): imports of an autodiff library (torch,
  jax, ...), imports or attribute uses of minibert's function for the same task
  (``from minibert.functional import layernorm_backward``, ``F.layernorm_backward``), and
  imports of the minibert module that holds the task's answer (``minibert.gradcheck`` in
  the gradient checker's task, ...).
- ``watch_reference`` wraps minibert's functions for the task while it is graded and
  records a call made from a file of the student's folder (a ``getattr`` with a built-up
  name is still a call); ``autodiff_loaded`` names the autodiff libraries that became
  importable in ``sys.modules`` while the task ran.

Other tasks' functions are allowed: attention may call minibert's ``softmax_backward``.
"""

from __future__ import annotations

import ast
import sys
from contextlib import contextmanager
from pathlib import Path

from minibert.assignment.tasks import EXTRA_FUNCTIONS, Task

__all__ = ["AUTODIFF_LIBRARIES", "scan_file", "watch_reference", "autodiff_loaded"]

# Libraries that differentiate for the student: using one skips what the task teaches.
AUTODIFF_LIBRARIES = ("torch", "jax", "jaxlib", "tensorflow", "autograd", "mxnet", "paddle",
                      "tinygrad", "micrograd", "chainer", "theano", "mlx")

# minibert modules that hold a task's answer beyond its function of the same name.
_ANSWER_MODULES = {
    "model_gradcheck": ("minibert.gradcheck",),
    "adamw": ("minibert.training",),
    "masking": ("minibert.data",),
    "nsp": ("minibert.data",),
}
# Every task: the instructor's answers and the grader's checks.
_ALWAYS_FORBIDDEN = ("minibert.assignment.solutions", "minibert.assignment.checks",
                     "minibert.assignment.instructor", "instructor")
# Names that are the task's answer under another name (classes whose backward is it).
_OTHER_NAMES = {
    "encoder_block": ("BertLayer",),
    "model_gradcheck": ("check_loss", "check_module", "check_function", "numerical_gradient"),
    "adamw": ("AdamW", "adamw_update", "adamw_reference"),
}


def own_names(task: Task) -> tuple[str, ...]:
    """The names that are ``task``'s answer in minibert."""
    return (task.function, *EXTRA_FUNCTIONS.get(task.name, {}), *_OTHER_NAMES.get(task.name, ()))


def _module_of(node: ast.ImportFrom) -> str:
    return ("." * node.level) + (node.module or "")


def scan_file(path: Path, task: Task) -> list[str]:
    """Flags for the source of ``path`` (a student's file of ``task``); [] when clean or
    when the file does not parse (its syntax error is reported by the grader)."""
    try:
        tree = ast.parse(Path(path).read_text(encoding="utf-8", errors="replace"))
    except (SyntaxError, ValueError, OSError):
        return []
    names = set(own_names(task))
    answer_modules = _ANSWER_MODULES.get(task.name, ()) + _ALWAYS_FORBIDDEN
    flags: list[str] = []
    imports_minibert = False

    def flag(line: int, text: str) -> None:
        entry = f"{path.name} line {line} {text}"
        if entry not in flags:
            flags.append(entry)

    def check_module(line: int, module: str) -> None:
        nonlocal imports_minibert
        root = module.split(".")[0]
        if root in AUTODIFF_LIBRARIES:
            flag(line, f"imports {module} (automatic differentiation; the task asks for the "
                       f"gradient by hand)")
        if root == "minibert":
            imports_minibert = True
        for answer in answer_modules:
            if module == answer or module.startswith(answer + "."):
                flag(line, f"imports {module}, which holds minibert's answer to this task")

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                check_module(node.lineno, alias.name)
        elif isinstance(node, ast.ImportFrom):
            module = _module_of(node)
            check_module(node.lineno, module)
            for alias in node.names:
                if module.startswith("minibert") and alias.name in names:
                    flag(node.lineno, f"imports minibert's own {alias.name} from {module} "
                                      f"(this task's answer)")
                if module == "minibert" and alias.name in ("functional", "gradcheck"):
                    imports_minibert = True
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and \
                node.func.id == "__import__" and node.args and \
                isinstance(node.args[0], ast.Constant) and isinstance(node.args[0].value, str):
            check_module(node.lineno, node.args[0].value)
    if imports_minibert:
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr in names:
                flag(node.lineno, f"uses minibert's own {node.attr} (…{node.attr}, this "
                                  f"task's answer)")
            elif isinstance(node, ast.Constant) and node.value in names:
                flag(node.lineno, f"names minibert's own {node.value} in a string (a "
                                  f"getattr of this task's answer?)")
    return flags


@contextmanager
def watch_reference(task: Task, folder: Path, calls: list[str]):
    """While in the block, a call of minibert's function for ``task`` from a file in
    ``folder`` appends one flag to ``calls``. The functions behave as before."""
    from minibert import functional as F

    folder = Path(folder).resolve()
    targets = []
    for name in (task.function, *EXTRA_FUNCTIONS.get(task.name, {})):
        for module in (F,):
            if callable(getattr(module, name, None)):
                targets.append((module, name, getattr(module, name)))
    if task.name == "model_gradcheck":
        import minibert.gradcheck as gradcheck
        targets += [(gradcheck, n, getattr(gradcheck, n)) for n in _OTHER_NAMES["model_gradcheck"]
                    if callable(getattr(gradcheck, n, None))]

    def wrap(name, original):
        def watched(*args, **kwargs):
            caller = sys._getframe(1).f_code.co_filename
            if Path(caller).resolve().parent == folder:
                entry = (f"{Path(caller).name} line {sys._getframe(1).f_lineno} calls "
                         f"minibert's own {name} (this task's answer)")
                if entry not in calls:
                    calls.append(entry)
            return original(*args, **kwargs)
        watched.__wrapped__ = original
        watched.__name__ = getattr(original, "__name__", name)
        watched.__doc__ = getattr(original, "__doc__", None)
        return watched

    try:
        for module, name, original in targets:
            setattr(module, name, wrap(name, original))
        yield calls
    finally:
        for module, name, original in targets:
            setattr(module, name, original)


def autodiff_loaded(before: set[str]) -> list[str]:
    """The autodiff libraries in ``sys.modules`` now that were not in ``before``."""
    return [name for name in AUTODIFF_LIBRARIES if name in sys.modules and name not in before]
