"""The instructor's material: the answer key, the bug lab's key, the written answers' rubric.

None of it is in the installed package (the wheel and the sdist leave the repository's
``instructor/`` folder out): a student's install cannot write the solutions. The instructor
works from a clone of the repository, where ``instructor/`` sits beside the package, or
names the folder with the environment variable ``MINIBERT_INSTRUCTOR``. ``load(name)``
imports ``instructor/<name>.py`` under a private module name; ``InstructorMaterialMissing``
says in one line where it was looked for.
"""

from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

__all__ = ["InstructorMaterialMissing", "instructor_folder", "available", "load"]

ENVIRONMENT_VARIABLE = "MINIBERT_INSTRUCTOR"


class InstructorMaterialMissing(ValueError):
    """The instructor's folder (answer key, bug list) is not where it was looked for."""


def instructor_folder() -> Path:
    """The folder of the instructor's material; InstructorMaterialMissing when absent."""
    named = os.environ.get(ENVIRONMENT_VARIABLE)
    folder = Path(named) if named else Path(__file__).resolve().parents[2] / "instructor"
    if not (folder / "solutions.py").is_file():
        where = (f"{ENVIRONMENT_VARIABLE}={named!r}" if named
                 else f"{str(folder)!r} (beside the minibert package)")
        raise InstructorMaterialMissing(
            f"the instructor's material (answer key, bug list) is not installed with minibert; "
            f"looked in {where}: work from a clone of the minibert repository, or set "
            f"{ENVIRONMENT_VARIABLE} to its instructor/ folder")
    return folder


def available() -> bool:
    """True when the instructor's material can be loaded."""
    try:
        instructor_folder()
    except InstructorMaterialMissing:
        return False
    return True


def load(name: str):
    """The module ``instructor/<name>.py`` (``solutions``, ``bugs_key``, ``written``)."""
    path = instructor_folder() / f"{name}.py"
    module_name = f"_minibert_instructor_{name}"
    cached = sys.modules.get(module_name)
    if cached is not None and Path(cached.__file__) == path:
        return cached
    if not path.is_file():
        raise InstructorMaterialMissing(f"the instructor's folder has no {name}.py "
                                        f"({str(path)!r})")
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(module_name, None)
        raise
    return module
